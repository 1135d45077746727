// Proves the layout names of FORMAT.md: 20-digit epoch and segment names that parse back exactly,
// refusal of every other spelling, and the paths of marker, pointer, lock, manifest, segments and
// the segment staging file.
// Worked examples of the spec's tree plus a round-trip property.
import { describe, expect, it } from "@effect/vitest";
import * as fc from "fast-check";
import * as Layout from "../../src/store/Layout.js";

describe("Layout", () => {
  it("spells the tree of FORMAT.md", () => {
    expect(Layout.markerPath("/d")).toBe("/d/STORE-V2");
    expect(Layout.currentPath("/d")).toBe("/d/CURRENT");
    expect(Layout.lockPath("/d")).toBe("/d/LOCK");
    expect(Layout.manifestPath("/d", 1)).toBe("/d/epochs/00000000000000000001/MANIFEST");
    expect(Layout.segmentPath("/d", 2, 3)).toBe(
      "/d/epochs/00000000000000000002/segments/00000000000000000003.tay",
    );
    expect(Layout.temporaryPath("/d/CURRENT")).toBe("/d/CURRENT.tmp");
    // The one segment staging file sits in the epoch directory, outside segments/.
    expect(Layout.segmentStagingPath("/d", 2)).toBe("/d/epochs/00000000000000000002/SEGMENT.tmp");
    expect(Layout.parseSegmentName(Layout.segmentStagingName)).toBeUndefined();
  });

  it("parses exactly the names it makes", () => {
    for (const bad of [
      "1.tay",
      "0000000000000000001.tay",
      "00000000000000000001.TAY",
      "00000000000000000000.tay",
      "00000000000000000001.tay.tmp",
      "x",
    ]) {
      expect(Layout.parseSegmentName(bad)).toBeUndefined();
    }
    for (const bad of [
      "1",
      "0000000000000000001",
      "00000000000000000000",
      "0000000000000000000a",
    ]) {
      expect(Layout.parseEpochName(bad)).toBeUndefined();
    }
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (value) => {
        expect(Layout.parseSegmentName(Layout.segmentName(value))).toBe(value);
        expect(Layout.parseEpochName(Layout.epochName(value))).toBe(value);
      }),
      { numRuns: 200 },
    );
  });
});
