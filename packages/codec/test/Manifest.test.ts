// Proves MANIFEST (`TAYN`) is laid out as FORMAT.md fixes it and refuses
// fields no generation can have; and that epoch directory names round trip.
// It runs the shared fixed-layout suite plus one case per field rule.
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import {
  decodeManifest,
  encodeManifest,
  epochDirectoryName,
  type Manifest,
  manifestBytes,
  parseEpochDirectoryName,
} from "../src/Manifest.js";
import {
  decodeError,
  describeFixedLayout,
  hex,
  reseal,
  storeId,
  testStoreId,
  withU64,
} from "./support/fixedLayout.js";

const manifest: fc.Arbitrary<Manifest> = fc
  .record({
    storeId,
    epoch: fc.oneof(
      fc.integer({ min: 1, max: 100 }),
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    ),
    parentSeed: fc.nat(),
    firstSequence: fc.oneof(
      fc.integer({ min: 1, max: 1000 }),
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    ),
    baseRecordCount: fc.oneof(fc.nat(1000), fc.maxSafeNat()),
    createdAt: fc.maxSafeNat(),
  })
  .map(({ parentSeed, ...fields }) => ({ ...fields, parentEpoch: parentSeed % fields.epoch }));

describeFixedLayout({
  structure: "Manifest",
  magic: "TAYN",
  size: manifestBytes,
  encode: encodeManifest,
  decode: decodeManifest,
  arbitrary: manifest,
  u64Fields: [
    { field: "epoch", offset: 24 },
    { field: "parentEpoch", offset: 32 },
    { field: "firstSequence", offset: 40 },
    { field: "baseRecordCount", offset: 48 },
    { field: "createdAt", offset: 56 },
  ],
  storeIdOffset: 8,
});

const first: Manifest = {
  storeId: testStoreId,
  epoch: 1,
  parentEpoch: 0,
  firstSequence: 1,
  baseRecordCount: 0,
  createdAt: 1_700_000_000_000,
};

describe("MANIFEST", () => {
  const bytes = encodeManifest(first);

  it("lays out the first generation's fields at FORMAT.md's offsets", () => {
    expect(hex(bytes.subarray(0, 64))).toBe(
      `5441594e01000000000102030405060708090a0b0c0d0e0f${"0000000000000001"}${"0000000000000000"}${"0000000000000001"}${"0000000000000000"}0000018bcfe56800`,
    );
    expect(decodeManifest(bytes)).toEqual(E.right(first));
  });

  it.each([
    ["epoch 0", 24, 0n, "epoch", "Zero"],
    ["a parent epoch equal to the epoch", 32, 1n, "parentEpoch", "Inconsistent"],
    ["a parent epoch above the epoch", 32, 7n, "parentEpoch", "Inconsistent"],
    ["first sequence 0", 40, 0n, "firstSequence", "Zero"],
  ])("refuses %s", (_, offset, value, field, reason) => {
    expect(decodeError(decodeManifest, reseal(withU64(bytes, offset, value)))).toEqual({
      _tag: "InvalidField",
      structure: "Manifest",
      field,
      offset,
      reason,
    });
  });

  it("accepts a compacted generation (parent = epoch - 1, base records, later sequence)", () => {
    const next = { ...first, epoch: 2, parentEpoch: 1, firstSequence: 1001, baseRecordCount: 12 };
    expect(decodeManifest(encodeManifest(next))).toEqual(E.right(next));
  });

  it("throws on fields the store could not have made", () => {
    for (const change of [
      { epoch: 0 },
      { parentEpoch: 1 },
      { firstSequence: 0 },
      { baseRecordCount: -1 },
      { createdAt: 2 ** 53 },
    ]) {
      expect(() => encodeManifest({ ...first, ...change })).toThrow(RangeError);
    }
  });
});

describe("epoch directory names", () => {
  it("are 20 zero-padded digits and round trip", () => {
    expect(epochDirectoryName(1)).toBe("00000000000000000001");
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (epoch) => {
        expect(parseEpochDirectoryName(epochDirectoryName(epoch))).toBe(epoch);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    "1",
    "00000000000000000000",
    "0000000000000000001",
    "000000000000000000001",
    "00000000000000000001.tmp",
    "00000000000000000001/",
    "00009007199254740992",
    "",
  ])("refuses %j", (name) => {
    expect(parseEpochDirectoryName(name)).toBeUndefined();
  });

  it("throws for epochs outside 1..2^53-1", () => {
    for (const epoch of [0, -1, 2 ** 53])
      expect(() => epochDirectoryName(epoch)).toThrow(RangeError);
  });
});
