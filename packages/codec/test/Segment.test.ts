// Proves segment headers and footers match FORMAT.md byte for byte and that
// their decoders refuse every invalid field with a typed error, never an
// exception; and that segment file names round trip. It uses the spec's
// header vector, the shared fixed-layout suite, and one case per rule.
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import {
  decodeSegmentFooter,
  decodeSegmentHeader,
  encodeSegmentFooter,
  encodeSegmentHeader,
  parseSegmentFileName,
  type SegmentFooter,
  segmentFileName,
  segmentFooterBytes,
  segmentHeaderBytes,
} from "../src/Segment.js";
import {
  decodeError,
  describeFixedLayout,
  fromHex,
  hex,
  reseal,
  storeId,
  testStoreId,
  withU64,
} from "./support/fixedLayout.js";

const positive = fc.oneof(
  fc.integer({ min: 1, max: 1000 }),
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
);

const header = fc.record({ segmentId: positive, firstSequence: positive, storeId });

const footer: fc.Arbitrary<SegmentFooter> = fc
  .record({
    segmentId: positive,
    firstSequence: fc.integer({ min: 1, max: 2 ** 40 }),
    recordCount: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 2 ** 40 })),
    storeId,
    segmentCrc: fc.integer({ min: 0, max: 0xffff_ffff }),
  })
  .map((fields) => ({ ...fields, lastSequence: fields.firstSequence + fields.recordCount - 1 }));

describeFixedLayout({
  structure: "SegmentHeader",
  magic: "TAYS",
  size: segmentHeaderBytes,
  encode: encodeSegmentHeader,
  decode: decodeSegmentHeader,
  arbitrary: header,
  u64Fields: [
    { field: "segmentId", offset: 8 },
    { field: "firstSequence", offset: 16 },
  ],
  storeIdOffset: 24,
});

describeFixedLayout({
  structure: "SegmentFooter",
  magic: "TAYF",
  size: segmentFooterBytes,
  encode: encodeSegmentFooter,
  decode: decodeSegmentFooter,
  arbitrary: footer,
  u64Fields: [
    { field: "segmentId", offset: 8 },
    { field: "firstSequence", offset: 16 },
    { field: "lastSequence", offset: 40 },
    { field: "recordCount", offset: 48 },
  ],
  storeIdOffset: 24,
});

const headerVector =
  "544159530100000000000000000000010000000000000001000102030405060708090a0b0c0d0e0fac6a89d0";

describe("segment header", () => {
  it("matches FORMAT.md's vector (ID 1, first sequence 1)", () => {
    const bytes = encodeSegmentHeader({ segmentId: 1, firstSequence: 1, storeId: testStoreId });
    expect(hex(bytes)).toBe(headerVector);
    expect(decodeSegmentHeader(fromHex(headerVector))).toEqual(
      E.right({ segmentId: 1, firstSequence: 1, storeId: testStoreId }),
    );
  });

  it("refuses segment ID 0 and first sequence 0", () => {
    const valid = fromHex(headerVector);
    expect(decodeError(decodeSegmentHeader, reseal(withU64(valid, 8, 0n)))).toEqual({
      _tag: "InvalidField",
      structure: "SegmentHeader",
      field: "segmentId",
      offset: 8,
      reason: "Zero",
    });
    expect(decodeError(decodeSegmentHeader, reseal(withU64(valid, 16, 0n)))).toMatchObject({
      _tag: "InvalidField",
      field: "firstSequence",
      reason: "Zero",
    });
  });

  it("accepts the largest safe values", () => {
    const largest = Number.MAX_SAFE_INTEGER;
    const bytes = encodeSegmentHeader({
      segmentId: largest,
      firstSequence: largest,
      storeId: testStoreId,
    });
    expect(hex(bytes.subarray(8, 24))).toBe("001fffffffffffff001fffffffffffff");
    expect(E.isRight(decodeSegmentHeader(bytes))).toBe(true);
  });

  it("throws on fields the store could not have made", () => {
    for (const fields of [
      { segmentId: 0, firstSequence: 1 },
      { segmentId: 1, firstSequence: 0 },
      { segmentId: 2 ** 53, firstSequence: 1 },
      { segmentId: 1.5, firstSequence: 1 },
    ]) {
      expect(() => encodeSegmentHeader({ ...fields, storeId: testStoreId })).toThrow(RangeError);
    }
  });
});

describe("segment footer", () => {
  const valid: SegmentFooter = {
    segmentId: 3,
    firstSequence: 10,
    storeId: testStoreId,
    lastSequence: 14,
    recordCount: 5,
    segmentCrc: 0xdead_beef,
  };
  const bytes = encodeSegmentFooter(valid);

  it("lays out its fields at FORMAT.md's offsets", () => {
    expect(hex(bytes)).toBe(
      `5441594601000000${"0000000000000003"}${"000000000000000a"}000102030405060708090a0b0c0d0e0f${"000000000000000e"}${"0000000000000005"}deadbeef${hex(bytes.subarray(60))}`,
    );
    expect(decodeSegmentFooter(bytes)).toEqual(E.right(valid));
  });

  it.each([
    ["segment ID 0", 8, 0n, "segmentId", "Zero"],
    ["first sequence 0", 16, 0n, "firstSequence", "Zero"],
    ["record count 0", 48, 0n, "recordCount", "Zero"],
    ["last sequence below first + count - 1", 40, 13n, "lastSequence", "Inconsistent"],
    ["last sequence above first + count - 1", 40, 15n, "lastSequence", "Inconsistent"],
  ])("refuses %s", (_, offset, value, field, reason) => {
    expect(decodeError(decodeSegmentFooter, reseal(withU64(bytes, offset, value)))).toEqual({
      _tag: "InvalidField",
      structure: "SegmentFooter",
      field,
      offset,
      reason,
    });
  });

  it("refuses a last sequence whose first + count - 1 would pass 2^53-1", () => {
    const near = reseal(withU64(withU64(bytes, 16, 2n ** 53n - 2n), 48, 5n));
    expect(decodeError(decodeSegmentFooter, near)).toMatchObject({
      field: "lastSequence",
      reason: "Inconsistent",
    });
  });

  it("throws on fields the store could not have made", () => {
    for (const change of [
      { recordCount: 0, lastSequence: 9 },
      { lastSequence: 15 },
      { segmentCrc: -1 },
      { segmentCrc: 2 ** 32 },
      { segmentId: 0 },
    ]) {
      expect(() => encodeSegmentFooter({ ...valid, ...change })).toThrow(RangeError);
    }
  });
});

describe("segment file names", () => {
  it("are 20 zero-padded digits and .tay", () => {
    expect(segmentFileName(1)).toBe("00000000000000000001.tay");
    expect(segmentFileName(Number.MAX_SAFE_INTEGER)).toBe("00009007199254740991.tay");
  });

  it("round trip", () => {
    fc.assert(
      fc.property(positive, (id) => {
        expect(parseSegmentFileName(segmentFileName(id))).toBe(id);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    "1.tay",
    "0000000000000000001.tay",
    "000000000000000000001.tay",
    "00000000000000000000.tay",
    "00000000000000000001.TAY",
    "00000000000000000001.tay.tmp",
    "00000000000000000001.tay\n",
    " 0000000000000000001.tay",
    "0000000000000000000a.tay",
    "0000000000000000001١.tay",
    "00000000000000000001",
    "00009007199254740992.tay",
    "99999999999999999999.tay",
    "",
  ])("refuses %j", (name) => {
    expect(parseSegmentFileName(name)).toBeUndefined();
  });

  it("throws for IDs outside 1..2^53-1", () => {
    for (const id of [0, -1, 1.5, 2 ** 53, Number.NaN])
      expect(() => segmentFileName(id)).toThrow(RangeError);
  });
});
