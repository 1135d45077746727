// Proves that the range form of the value decoder, which the direct event
// decoders use for `args` and `result`, reads a value inside a larger array
// exactly as `decodeValue` reads it alone: same value, same refusals with
// offsets into the array, the end where the value ends, and the depth limit
// counted from the enclosing payload's root. It places arbitrary and damaged
// encodings between random bytes and compares.
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as Values from "../../../testkit/src/Values.js";
import { decodeValueWithin } from "../../src/internal/valueDecode.js";
import { decodeValue, encodeValue, valueDepthMax } from "../../src/Value.js";

const encoded = (value: Parameters<typeof encodeValue>[0]): Uint8Array => {
  const result = encodeValue(value);
  if (E.isLeft(result)) throw new Error(result.left._tag);
  return result.right;
};

const between = (before: Uint8Array, middle: Uint8Array, after: Uint8Array): Uint8Array => {
  const bytes = new Uint8Array(before.length + middle.length + after.length);
  bytes.set(before, 0);
  bytes.set(middle, before.length);
  bytes.set(after, before.length + middle.length);
  return bytes;
};

describe("decodeValueWithin", () => {
  it("reads a value among other bytes as decodeValue reads it alone, and says where it ends", () => {
    fc.assert(
      fc.property(
        Values.value(),
        fc.uint8Array({ maxLength: 16 }),
        fc.uint8Array({ maxLength: 16 }),
        (value, before, after) => {
          const alone = encoded(value);
          const bytes = between(before, alone, after);
          const end = before.length + alone.length;
          const cursor = { at: before.length };
          const loose = decodeValueWithin(bytes, cursor, bytes.length, 0, false);
          expect(loose).toEqual(decodeValue(alone));
          expect(cursor.at).toBe(end);
          const exact = { at: before.length };
          expect(decodeValueWithin(bytes, exact, end, 0, true)).toEqual(decodeValue(alone));
          expect(exact.at).toBe(end);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("refuses what decodeValue refuses, with offsets into the whole array", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 40 }),
        fc.uint8Array({ maxLength: 8 }),
        (range, before) => {
          const bytes = between(before, range, new Uint8Array(0));
          const cursor = { at: before.length };
          const within = decodeValueWithin(bytes, cursor, bytes.length, 0, true);
          const alone = decodeValue(range);
          // A refusal leaves the cursor where it was; an acceptance moves it to the end.
          expect(cursor.at).toBe(E.isRight(within) ? bytes.length : before.length);
          expect(E.isRight(within)).toBe(E.isRight(alone));
          if (E.isLeft(within) && E.isLeft(alone)) {
            const shift = (error: typeof alone.left) =>
              "offset" in error ? { ...error, offset: error.offset + before.length } : error;
            expect(within.left).toEqual(shift(alone.left));
          }
          if (E.isRight(within) && E.isRight(alone)) expect(within.right).toEqual(alone.right);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reads no byte past the range's end, even one that would complete a UTF-8 sequence", () => {
    // A one-byte string (c3) cut by the range's end, then a9 (which would make it "é").
    const bytes = Uint8Array.from([0x05, 0, 0, 0, 1, 0xc3, 0xa9]);
    expect(decodeValueWithin(bytes, { at: 0 }, 6, 0, true)).toEqual(
      E.left({ _tag: "InvalidUtf8", offset: 5, reason: "Truncated" }),
    );
    // The same cut in a map's key.
    const keyed = Uint8Array.from([0x08, 0, 0, 0, 1, 0, 0, 0, 1, 0xc3, 0xa9, 0x00]);
    expect(decodeValueWithin(keyed, { at: 0 }, 10, 0, true)).toEqual(
      E.left({ _tag: "InvalidUtf8", offset: 9, reason: "Truncated" }),
    );
  });

  it("counts depth from the enclosing payload's root", () => {
    const deepest = encoded(
      fc.sample(Values.deepValue(valueDepthMax - 2), { numRuns: 1, seed: 7 })[0] ?? null,
    );
    // Two containers around it: the value's top is at depth 3, its deepest at 64.
    expect(E.isRight(decodeValueWithin(deepest, { at: 0 }, deepest.length, 2, true))).toBe(true);
    const refused = decodeValueWithin(deepest, { at: 0 }, deepest.length, 3, true);
    expect(E.isLeft(refused) && refused.left).toMatchObject({
      _tag: "DepthExceeded",
      depthMax: valueDepthMax,
    });
  });
});
