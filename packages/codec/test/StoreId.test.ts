// Proves STORE_IDs print as lowercase 8-4-4-4-12 UUIDs and that parsing
// accepts exactly that form, as the inverse of printing. It checks FORMAT.md's
// test STORE_ID, a property over random IDs, and each kind of malformed text.
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { formatStoreId, parseStoreId, storeIdBytes } from "../src/StoreId.js";

const testId = Uint8Array.from({ length: 16 }, (_, index) => index);

describe("formatStoreId", () => {
  it("prints FORMAT.md's test STORE_ID", () => {
    expect(formatStoreId(testId)).toBe("00010203-0405-0607-0809-0a0b0c0d0e0f");
  });

  it("refuses a wrong size as a programmer error", () => {
    expect(() => formatStoreId(new Uint8Array(15))).toThrow(RangeError);
  });
});

describe("parseStoreId", () => {
  it("is the inverse of formatStoreId", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: storeIdBytes, maxLength: storeIdBytes }), (id) => {
        const text = formatStoreId(id);
        expect(text).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(parseStoreId(text)).toEqual(E.right(Uint8Array.from(id)));
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ["", "Length", 0],
    ["00010203-0405-0607-0809-0a0b0c0d0e0", "Length", 0],
    ["00010203-0405-0607-0809-0a0b0c0d0e0f0", "Length", 0],
    ["00010203x0405-0607-0809-0a0b0c0d0e0f", "Hyphen", 8],
    ["000102030405-0607-0809-0a0b0c0d0e0f-", "Hyphen", 8],
    ["00010203-0405-0607-0809-0A0B0C0D0E0F", "HexDigit", 25],
    ["0001020g-0405-0607-0809-0a0b0c0d0e0f", "HexDigit", 7],
    ["00010203-0405-0607-0809-0a0b0c0d0e0 ", "HexDigit", 35],
  ])("refuses %j (%s at %d)", (text, reason, offset) => {
    const parsed = parseStoreId(text);
    expect(E.isLeft(parsed) && parsed.left).toMatchObject({
      _tag: "InvalidStoreId",
      reason,
      offset,
    });
  });

  it("never throws and accepts only what it prints", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        const parsed = parseStoreId(text);
        if (E.isRight(parsed)) expect(formatStoreId(parsed.right)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});
