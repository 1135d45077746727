// The UTF-8 writer's two paths (a loop for short strings, the platform's
// encoder for long ones) against the platform's own answer: same bytes,
// same length, and -1 exactly when the string holds a lone surrogate,
// around the threshold between the paths and far beyond it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8LengthOf, writeUtf8Measured } from "../../src/internal/utf8.js";

const encoder = new TextEncoder();

/** Lone surrogates included: `binary` units cover the whole UTF-16 range. */
const anyText = fc.string({ unit: "binary", maxLength: 200 });
const asciiText = fc.string({
  unit: fc.integer({ min: 0, max: 0x7f }).map((code) => String.fromCharCode(code)),
  minLength: 40,
  maxLength: 300,
});

const written = (text: string) => {
  const target = new Uint8Array(8 + 3 * text.length).fill(0xaa);
  const length = writeUtf8Measured(text, target, 8);
  return { length, bytes: target.subarray(8, 8 + Math.max(0, length)), target };
};

describe("writeUtf8Measured", () => {
  it("writes what TextEncoder writes for every well-formed string, and says -1 for the rest", () => {
    fc.assert(
      fc.property(
        fc.oneof(anyText, asciiText, fc.string({ unit: "grapheme", maxLength: 120 })),
        (text) => {
          const { length, bytes } = written(text);
          if (!text.isWellFormed()) {
            expect(length).toBe(-1);
            return;
          }
          const expected = encoder.encode(text);
          expect(length).toBe(expected.length);
          expect(bytes).toEqual(expected);
          expect(utf8LengthOf(text)).toBe(expected.length);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("measures and writes the code points at the bounds of each width", () => {
    const bounds = [0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xffff, 0x10000, 0x10ffff];
    for (const point of bounds) {
      for (const text of [String.fromCodePoint(point), `a${String.fromCodePoint(point)}z`]) {
        const expected = encoder.encode(text);
        expect(utf8LengthOf(text), point.toString(16)).toBe(expected.length);
        const { length, bytes } = written(text);
        expect(length, point.toString(16)).toBe(expected.length);
        expect(bytes, point.toString(16)).toEqual(expected);
      }
    }
  });

  it("finds a lone surrogate anywhere in a long string", () => {
    for (const at of [0, 47, 48, 49, 150, 299]) {
      const text = `${"a".repeat(at)}\ud800${"b".repeat(299 - at)}`;
      expect(written(text).length).toBe(-1);
      expect(utf8LengthOf(text)).toBe(-(at + 1));
    }
  });

  it("writes nothing before the offset and at most the UTF-8 length after it", () => {
    const text = `é${"x".repeat(100)}€😀`;
    const { length, target } = written(text);
    expect(length).toBe(encoder.encode(text).length);
    expect([...target.subarray(0, 8)]).toEqual(new Array(8).fill(0xaa));
    expect(target.subarray(8 + length).every((byte) => byte === 0xaa)).toBe(true);
  });
});
