// A rate-limited queue's start list: whatever the order of the times (a
// clock may go back), appending by copy or in place keeps exactly the last
// `count` times in log order, and counting the times after a threshold
// agrees with a plain scan; the time from which the window has room is
// exactly the first time at which a scan counts fewer than `count`.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countAfter, pushStart, roomAt, withStart } from "../../src/internal/Starts.js";

const naiveCount = (times: ReadonlyArray<number>, threshold: number) =>
  times.filter((at) => at > threshold).length;

// Mostly ascending times, sometimes a step back.
const steps = fc.array(fc.integer({ min: -3, max: 20 }), { maxLength: 80 });

describe("Starts", () => {
  it("keeps the last `count` times and counts like a scan, by copy or in place (property)", () => {
    fc.assert(
      fc.property(
        steps,
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.boolean(), { maxLength: 80 }),
        fc.integer({ min: -5, max: 400 }),
        (deltas, count, inPlace, threshold) => {
          let model: Array<number> = [];
          let list: ReadonlyArray<number> | undefined;
          let owned: Array<number> | undefined;
          let at = 0;
          deltas.forEach((delta, index) => {
            at += delta;
            model = [...model, at].slice(-count);
            if (owned !== undefined && list === owned && inPlace[index] === true) {
              pushStart(owned, at, count);
            } else {
              const before = list === undefined ? undefined : [...list];
              owned = withStart(list, at, count);
              // The list it was derived from is unchanged.
              if (list !== undefined) expect([...list]).toEqual(before);
              list = owned;
            }
            expect([...(list ?? [])]).toEqual(model);
            expect(countAfter(list ?? [], threshold)).toBe(naiveCount(model, threshold));
            expect(countAfter(list ?? [], at - 5)).toBe(naiveCount(model, at - 5));
          });
        },
      ),
    );
  });

  it("has room in the window (t - perMs, t] from roomAt on, and never before (property)", () => {
    fc.assert(
      fc.property(
        steps,
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: -60, max: 500 }),
        (deltas, count, perMs, t) => {
          let list: ReadonlyArray<number> | undefined;
          let at = 0;
          for (const delta of deltas) {
            at += delta;
            list = withStart(list, at, count);
          }
          const times = list ?? [];
          const from = roomAt(times, count, perMs);
          const room = naiveCount(times, t - perMs) < count;
          expect(t >= from).toBe(room);
          // The exact moment, when there is not always room: room at it, none a millisecond before.
          if (Number.isFinite(from)) {
            expect(naiveCount(times, from - perMs)).toBeLessThan(count);
            expect(naiveCount(times, from - 1 - perMs)).toBe(count);
          }
        },
      ),
    );
  });

  it("counts a list whose times go back by scanning it", () => {
    const list = withStart(withStart(withStart(undefined, 10, 5), 2, 5), 11, 5);
    expect([...list]).toEqual([10, 2, 11]);
    // A binary search over [10, 2, 11] would answer 1 for threshold 5.
    expect(countAfter(list, 5)).toBe(2);
    expect(countAfter([10, 2, 11], 5)).toBe(2);
  });
});
