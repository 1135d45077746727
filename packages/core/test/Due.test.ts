// Due times: the first occurrence of a registration and the following one
// after an occurrence, for intervals (a fixed grid, missed points coalesced)
// and cron; definitions without exactly one recurrence are refused.
import { Due, type Event } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { definition } from "./support/Given.js";

const recurrence = (overrides: Partial<Event.ScheduleDefinition>): Due.Recurrence => {
  const result = Due.recurrence(definition(overrides));
  if (Either.isLeft(result)) throw new Error(result.left);
  return result.right;
};

describe("recurrence", () => {
  it.each([
    ["both", { everyMs: 5, cron: "* * * * *" }],
    ["neither", { everyMs: null, cron: null }],
    ["a float interval", { everyMs: 1.5 }],
    ["a bad cron", { everyMs: null, cron: "x" }],
  ])("refuses %s", (_, overrides) => {
    expect(Either.isLeft(Due.recurrence(definition(overrides)))).toBe(true);
  });
});

describe("intervals", () => {
  const every = recurrence({ everyMs: 1_000 });

  it("first: now + every_ms", () => {
    expect(Due.first(every, 5_500)).toBe(6_500);
  });

  it("following: the next grid point after the occurrence", () => {
    expect(Due.following(every, 6_500, 6_500)).toBe(7_500);
  });

  it("following: missed points are coalesced into the first one after now", () => {
    expect(Due.following(every, 6_500, 9_800)).toBe(10_500);
    expect(Due.following(every, 6_500, 10_500)).toBe(11_500);
  });

  it("atOrAfter: the occurrence itself at or before it, else the first grid point at or after", () => {
    expect(Due.atOrAfter(every, 6_500, 6_000)).toBe(6_500);
    expect(Due.atOrAfter(every, 6_500, 6_500)).toBe(6_500);
    expect(Due.atOrAfter(every, 6_500, 6_501)).toBe(7_500);
    expect(Due.atOrAfter(every, 6_500, 7_500)).toBe(7_500);
  });

  it("beyond the time range: null", () => {
    expect(Due.first(every, Number.MAX_SAFE_INTEGER - 10)).toBeNull();
    expect(Due.following(every, Number.MAX_SAFE_INTEGER - 10, 0)).toBeNull();
  });

  it("following is on the grid, after both times, and at most one step after now (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        (everyMs, dueAt, now) => {
          const next = Due.following(recurrence({ everyMs }), dueAt, now);
          if (next === null) throw new Error("no next");
          expect(next > dueAt && next > now).toBe(true);
          expect((next - dueAt) % everyMs).toBe(0);
          expect(next - Math.max(dueAt, now)).toBeLessThanOrEqual(everyMs);
        },
      ),
    );
  });
});

describe("cron", () => {
  const hourly = recurrence({ everyMs: null, cron: "0 * * * *" });

  it("first: the next matching minute after now", () => {
    expect(Due.first(hourly, 3_600_000)).toBe(7_200_000);
  });

  it("following: after both the occurrence and now", () => {
    expect(Due.following(hourly, 3_600_000, 3_600_000)).toBe(7_200_000);
    expect(Due.following(hourly, 3_600_000, 5 * 3_600_000 + 1)).toBe(6 * 3_600_000);
  });
});
