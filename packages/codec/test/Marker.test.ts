// Proves STORE-V2 (`TAYM`) is laid out as FORMAT.md fixes it and decodes
// only from exactly such bytes. It runs the shared fixed-layout suite and
// checks a literal encoding and the bounds of created_at.
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { decodeStoreMarker, encodeStoreMarker, storeMarkerBytes } from "../src/Marker.js";
import { describeFixedLayout, hex, storeId, testStoreId } from "./support/fixedLayout.js";

describeFixedLayout({
  structure: "StoreMarker",
  magic: "TAYM",
  size: storeMarkerBytes,
  encode: encodeStoreMarker,
  decode: decodeStoreMarker,
  arbitrary: fc.record({ storeId, createdAt: fc.oneof(fc.nat(), fc.maxSafeNat()) }),
  u64Fields: [{ field: "createdAt", offset: 24 }],
  storeIdOffset: 8,
});

describe("STORE-V2", () => {
  it("lays out magic, version, reserved, STORE_ID, created_at and CRC", () => {
    const bytes = encodeStoreMarker({ storeId: testStoreId, createdAt: 1_700_000_000_000 });
    expect(hex(bytes.subarray(0, 32))).toBe(
      "5441594d01000000000102030405060708090a0b0c0d0e0f0000018bcfe56800",
    );
    expect(decodeStoreMarker(bytes)).toEqual(
      E.right({ storeId: testStoreId, createdAt: 1_700_000_000_000 }),
    );
  });

  it("accepts created_at 0 and 2^53-1 and throws on what the store could not have made", () => {
    for (const createdAt of [0, Number.MAX_SAFE_INTEGER]) {
      const bytes = encodeStoreMarker({ storeId: testStoreId, createdAt });
      expect(decodeStoreMarker(bytes)).toEqual(E.right({ storeId: testStoreId, createdAt }));
    }
    for (const createdAt of [-1, 2 ** 53, 0.5]) {
      expect(() => encodeStoreMarker({ storeId: testStoreId, createdAt })).toThrow(RangeError);
    }
  });
});
