// `utf8Length` takes native scans for long strings and a loop for short
// ones: both must give the platform's UTF-8 length, and -1 exactly for a
// string with a lone surrogate.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8Length } from "../../src/internal/Fields.js";

const encoder = new TextEncoder();

describe("utf8Length", () => {
  it("is TextEncoder's length for well-formed strings and -1 for the others", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 200 }),
          fc.string({ unit: "grapheme", maxLength: 150 }),
          fc.string({ unit: "grapheme-ascii", minLength: 40, maxLength: 300 }),
        ),
        (text) => {
          expect(utf8Length(text)).toBe(text.isWellFormed() ? encoder.encode(text).length : -1);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("sees a lone surrogate or a non-ASCII unit at any place of a long string", () => {
    for (const at of [0, 48, 49, 200]) {
      const before = "a".repeat(at);
      const after = "b".repeat(60);
      expect(utf8Length(`${before}\udc00${after}`)).toBe(-1);
      expect(utf8Length(`${before}é${after}`)).toBe(at + 2 + 60);
      expect(utf8Length(`${before}😀${after}`)).toBe(at + 4 + 60);
    }
  });
});
