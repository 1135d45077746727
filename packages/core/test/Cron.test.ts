// Five-field UTC cron: parsing accepts the documented grammar and refuses
// everything else with the field named; `next` agrees with a brute-force
// minute-by-minute scan that uses `Date` (an independent calendar).
import { Cron } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";

const parsed = (expression: string): Cron.Cron => {
  const result = Cron.parse(expression);
  if (Either.isLeft(result)) throw new Error(`${result.left.field}: ${result.left.detail}`);
  return result.right;
};

const at = (iso: string) => Date.parse(iso);

describe("parse", () => {
  it.each([
    "* * * * *",
    "*/15 9-17 * * MON-FRI",
    "0 0 1,15 * *",
    "5/10 * * jan,JUL sun",
    "0 12 * * 7",
    "  0   0  *  *  0-6/2 ",
    "59 23 31 12 6",
  ])("accepts %s", (expression) => {
    expect(Either.isRight(Cron.parse(expression))).toBe(true);
  });

  it.each([
    ["", "expression"],
    ["* * * *", "expression"],
    ["* * * * * *", "expression"],
    ["60 * * * *", "minute"],
    ["* 24 * * *", "hour"],
    ["* * 0 * *", "day-of-month"],
    ["* * 32 * *", "day-of-month"],
    ["* * * 13 *", "month"],
    ["* * * * 8", "day-of-week"],
    ["*/0 * * * *", "minute"],
    ["5-1 * * * *", "minute"],
    ["1,,2 * * * *", "minute"],
    ["? * * * *", "minute"],
    ["* * L * *", "day-of-month"],
    ["* * * foo *", "month"],
    ["1-2-3 * * * *", "minute"],
    ["*/2/3 * * * *", "minute"],
    ["@hourly", "expression"],
  ])("refuses %j (%s)", (expression, field) => {
    const result = Cron.parse(expression);
    expect(Either.isLeft(result) && result.left.field).toBe(field);
  });

  it("refuses an expression longer than the limit", () => {
    expect(Either.isLeft(Cron.parse(`${"1,".repeat(600)}1 * * * *`))).toBe(true);
  });

  it("runs N/STEP from N to the field's maximum", () => {
    const minutes = parsed("5/20 * * * *").minutes;
    expect(minutes.flatMap((set, minute) => (set ? [minute] : []))).toEqual([5, 25, 45]);
  });

  it("folds day-of-week 7 into Sunday", () => {
    expect(parsed("* * * * 7").daysOfWeek[0]).toBe(true);
  });
});

describe("next", () => {
  it.each([
    ["0 0 * * *", "2026-11-30T05:00:00Z", "2026-12-01T00:00:00Z"],
    ["0 0 * * *", "2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z"],
    ["*/15 * * * *", "2026-11-30T05:07:30Z", "2026-11-30T05:15:00Z"],
    ["30 2 * * *", "1970-01-01T00:00:00Z", "1970-01-01T02:30:00Z"],
    ["0 0 29 2 *", "2025-03-01T00:00:00Z", "2028-02-29T00:00:00Z"],
    ["0 0 29 2 *", "2096-03-01T00:00:00Z", "2104-02-29T00:00:00Z"],
    ["0 9 * * MON-FRI", "2026-11-28T10:00:00Z", "2026-11-30T09:00:00Z"],
    // Both day fields restricted: either matches (1st of month OR Monday).
    ["0 0 1 * MON", "2026-11-24T00:00:00Z", "2026-11-30T00:00:00Z"],
    ["0 0 1 * MON", "2026-11-30T00:00:00Z", "2026-12-01T00:00:00Z"],
    // Day of month starts with *: both must match (odd days that are Mondays).
    ["0 0 */2 * MON", "2026-11-24T00:00:00Z", "2026-12-07T00:00:00Z"],
    ["59 23 31 12 *", "2026-01-01T00:00:00Z", "2026-12-31T23:59:00Z"],
  ])("%s after %s is %s", (expression, after, expected) => {
    expect(Cron.next(parsed(expression), at(after))).toBe(at(expected));
  });

  it("never matching: null", () => {
    expect(Cron.next(parsed("0 0 30 2 *"), 0)).toBeNull();
    expect(Cron.next(parsed("0 0 31 4 *"), 0)).toBeNull();
  });

  it("nothing after the largest time: null", () => {
    expect(Cron.next(parsed("* * * * *"), Number.MAX_SAFE_INTEGER - 1)).toBeNull();
  });

  // Brute force with Date: every minute after `after`, up to a horizon.
  const bruteForce = (cron: Cron.Cron, after: number, horizonMinutes: number): number | null => {
    const start = Math.floor(after / 60_000) * 60_000 + 60_000;
    for (let minute = 0; minute < horizonMinutes; minute++) {
      const time = start + minute * 60_000;
      const date = new Date(time);
      const dayOfMonth = cron.daysOfMonth[date.getUTCDate()] === true;
      const dayOfWeek = cron.daysOfWeek[date.getUTCDay()] === true;
      const day =
        cron.dayOfMonthStar || cron.dayOfWeekStar
          ? dayOfMonth && dayOfWeek
          : dayOfMonth || dayOfWeek;
      if (
        cron.minutes[date.getUTCMinutes()] === true &&
        cron.hours[date.getUTCHours()] === true &&
        cron.months[date.getUTCMonth() + 1] === true &&
        day
      ) {
        return time;
      }
    }
    return null;
  };

  const item = (min: number, max: number) =>
    fc.oneof(
      fc.constant("*"),
      fc.integer({ min, max }).map(String),
      fc
        .tuple(fc.integer({ min, max }), fc.integer({ min, max }))
        .map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
      fc
        .tuple(fc.integer({ min, max }), fc.integer({ min: 1, max: 9 }))
        .map(([a, s]) => `${a}/${s}`),
      fc.integer({ min: 1, max: 12 }).map((step) => `*/${step}`),
    );
  const field = (min: number, max: number) =>
    fc.array(item(min, max), { minLength: 1, maxLength: 3 }).map((items) => items.join(","));
  const expression = fc
    .tuple(field(0, 59), field(0, 23), field(1, 31), field(1, 12), field(0, 7))
    .map((fields) => fields.join(" "));

  it("agrees with a minute-by-minute scan (property)", () => {
    const horizon = 40 * 24 * 60;
    fc.assert(
      fc.property(expression, fc.integer({ min: 0, max: 4_102_444_800_000 }), (text, after) => {
        const cron = parsed(text);
        const expected = bruteForce(cron, after, horizon);
        const actual = Cron.next(cron, after);
        if (expected !== null) expect(actual).toBe(expected);
        else expect(actual === null || actual >= after + horizon * 60_000).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});

describe("civil dates", () => {
  it("agree with Date in both directions (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000_000 }), (days) => {
        const date = new Date(days * 86_400_000);
        const civil = Cron.civilFromDays(days);
        if (days * 86_400_000 <= 8.64e15) {
          expect(civil).toEqual({
            year: date.getUTCFullYear(),
            month: date.getUTCMonth() + 1,
            day: date.getUTCDate(),
          });
        }
        expect(Cron.daysFromCivil(civil.year, civil.month, civil.day)).toBe(days);
      }),
    );
  });
});
