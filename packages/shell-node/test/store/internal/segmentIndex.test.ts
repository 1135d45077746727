// Proves the sparse segment index keeps every stride-th record and that seek returns the last
// indexed record at or before a sequence. A model check against a linear scan over random sizes.
import { describe, expect, it } from "@effect/vitest";
import * as fc from "fast-check";
import * as SegmentIndex from "../../../src/store/internal/segmentIndex.js";

describe("SegmentIndex", () => {
  it("seeks to the greatest indexed sequence at or before the target", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 3000 }),
        (records, first, probe) => {
          const index = SegmentIndex.empty();
          for (let ordinal = 0; ordinal < records; ordinal++) {
            SegmentIndex.note(index, ordinal, first + ordinal, 44 + ordinal * 10);
          }
          const target = first + probe;
          const found = SegmentIndex.seek(index, target);
          const candidates = index.sequences.filter((sequence) => sequence <= target);
          const expected = candidates[candidates.length - 1];
          if (expected === undefined) {
            expect(found).toBeUndefined();
          } else {
            expect(found).toEqual({ sequence: expected, offset: 44 + (expected - first) * 10 });
            // Within the segment's records, a read skips fewer than one stride.
            if (target < first + records) {
              expect(target - expected).toBeLessThan(SegmentIndex.strideRecords);
            }
          }
          expect(index.sequences.length).toBe(Math.ceil(records / SegmentIndex.strideRecords));
        },
      ),
      { numRuns: 200 },
    );
  });
});
