// Proves the seed's statistics: nearest-rank percentiles pick an actual value at rank
// clamp(ceil(p/100 * n), 1, n), every field is 0 with no segments, and pressure is clamped to
// [0, 1] with the overload threshold strictly above 0.9. Worked examples plus fast-check properties.
import { describe, expect, it } from "@effect/vitest";
import * as fc from "fast-check";
import * as Stats from "../../src/store/Stats.js";

describe("segmentSizeStats", () => {
  it("is all zeros without segments, and min = p50 = p90 = max with one", () => {
    expect(Stats.segmentSizeStats([])).toEqual({
      count: 0,
      min: 0,
      max: 0,
      mean: 0,
      p50: 0,
      p90: 0,
    });
    expect(Stats.segmentSizeStats([7])).toEqual({
      count: 1,
      min: 7,
      max: 7,
      mean: 7,
      p50: 7,
      p90: 7,
    });
  });

  it("uses nearest rank on the sorted sizes", () => {
    // n = 10: p50 at rank 5, p90 at rank 9.
    const sizes = [100, 10, 90, 20, 80, 30, 70, 40, 60, 50];
    expect(Stats.segmentSizeStats(sizes)).toEqual({
      count: 10,
      min: 10,
      max: 100,
      mean: 55,
      p50: 50,
      p90: 90,
    });
    // n = 3: p50 at rank ceil(1.5) = 2, p90 at rank ceil(2.7) = 3.
    expect(Stats.segmentSizeStats([3, 1, 2])).toMatchObject({ p50: 2, p90: 3 });
  });

  it("always returns actual sizes in order min <= p50 <= p90 <= max", () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 1 << 30 }), { minLength: 1, maxLength: 50 }), (sizes) => {
        const stats = Stats.segmentSizeStats(sizes);
        expect(sizes).toContain(stats.p50);
        expect(sizes).toContain(stats.p90);
        expect(stats.min).toBeLessThanOrEqual(stats.p50);
        expect(stats.p50).toBeLessThanOrEqual(stats.p90);
        expect(stats.p90).toBeLessThanOrEqual(stats.max);
      }),
      { numRuns: 200 },
    );
  });
});

describe("pressure", () => {
  it("is bytes over capacity clamped to [0, 1]; overloaded strictly above 0.9", () => {
    expect(Stats.pressure(0, 100)).toBe(0);
    expect(Stats.pressure(50, 100)).toBe(0.5);
    expect(Stats.pressure(500, 100)).toBe(1);
    expect(Stats.pressure(1, 0)).toBe(1);
    expect(Stats.isOverloaded(0.9)).toBe(false);
    expect(Stats.isOverloaded(0.9001)).toBe(true);
  });
});
