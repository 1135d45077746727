// Proves CURRENT (`TAYC`) matches FORMAT.md's vector byte for byte and
// refuses epoch 0. It runs the shared fixed-layout suite and checks the
// vector and the epoch bounds.
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { currentPointerBytes, decodeCurrentPointer, encodeCurrentPointer } from "../src/Current.js";
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

describeFixedLayout({
  structure: "CurrentPointer",
  magic: "TAYC",
  size: currentPointerBytes,
  encode: encodeCurrentPointer,
  decode: decodeCurrentPointer,
  arbitrary: fc.record({
    storeId,
    epoch: fc.oneof(
      fc.integer({ min: 1, max: 100 }),
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    ),
  }),
  u64Fields: [{ field: "epoch", offset: 24 }],
  storeIdOffset: 8,
});

const vector = "5441594301000000000102030405060708090a0b0c0d0e0f00000000000000017e613694";

describe("CURRENT", () => {
  it("matches FORMAT.md's vector for epoch 1", () => {
    expect(hex(encodeCurrentPointer({ storeId: testStoreId, epoch: 1 }))).toBe(vector);
    expect(decodeCurrentPointer(fromHex(vector))).toEqual(
      E.right({ storeId: testStoreId, epoch: 1 }),
    );
  });

  it("refuses epoch 0", () => {
    expect(decodeError(decodeCurrentPointer, reseal(withU64(fromHex(vector), 24, 0n)))).toEqual({
      _tag: "InvalidField",
      structure: "CurrentPointer",
      field: "epoch",
      offset: 24,
      reason: "Zero",
    });
    expect(() => encodeCurrentPointer({ storeId: testStoreId, epoch: 0 })).toThrow(RangeError);
    expect(() => encodeCurrentPointer({ storeId: testStoreId, epoch: 2 ** 53 })).toThrow(
      RangeError,
    );
  });
});
