// `utf8Length` takes native scans for long strings and a loop for short
// ones: both must give the platform's UTF-8 length, and -1 exactly for a
// string with a lone surrogate. The name and text checks, the deciders' and
// the fold's, accept exactly the byte bounds of EVENTS.md and nothing past them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isName, isNameKind, isText, isTextKind, utf8Length } from "../../src/internal/Fields.js";

const encoder = new TextEncoder();

describe("utf8Length", () => {
  it("is TextEncoder's length for well-formed strings and -1 for the others", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 200 }),
          fc.string({ unit: "grapheme", maxLength: 150 }),
          fc.string({ unit: "grapheme-ascii", minLength: 40, maxLength: 300 }),
          // Both sides of the counts by encoding (100..5461 units) and of the scan past them.
          fc.string({ unit: "grapheme", minLength: 90, maxLength: 400 }),
          fc.string({ unit: "grapheme", minLength: 5400, maxLength: 5600 }),
        ),
        (text) => {
          expect(utf8Length(text)).toBe(text.isWellFormed() ? encoder.encode(text).length : -1);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("sees a lone surrogate or a non-ASCII unit at any place of a long string", () => {
    for (const at of [0, 48, 49, 200, 5350, 5500]) {
      const before = "a".repeat(at);
      const after = "b".repeat(60);
      expect(utf8Length(`${before}\udc00${after}`)).toBe(-1);
      expect(utf8Length(`${before}é${after}`)).toBe(at + 2 + 60);
      expect(utf8Length(`${before}😀${after}`)).toBe(at + 4 + 60);
    }
    // 3-byte units at the edge of what is counted by encoding into 16 KiB (5,461 units).
    for (const units of [5460, 5461, 5462, 8000])
      expect(utf8Length("€".repeat(units))).toBe(units * 3);
  });
});

describe("the name and text bounds", () => {
  // Each string with its UTF-8 length: ASCII, 2-byte and 3-byte units.
  const sized = (unit: string, count: number): readonly [string, number] => {
    const text = unit.repeat(count);
    return [text, utf8Length(text)];
  };

  it("a name is 1..255 bytes, by the deciders' check and the fold's", () => {
    const names = [
      sized("a", 1),
      sized("a", 255),
      sized("a", 256),
      sized("é", 127),
      sized("é", 128),
      sized("€", 85),
      sized("€", 86),
      sized("€", 127),
    ];
    for (const [text, bytes] of names) {
      expect(isName(text)).toBe(bytes <= 255);
      expect(isNameKind(text)).toBe(bytes <= 255);
    }
    expect(isName("")).toBe(false);
    expect(isNameKind("")).toBe(false);
  });

  it("a text is 0..65,535 bytes, by the deciders' check and the fold's", () => {
    const texts = [
      sized("a", 0),
      sized("a", 65_535),
      sized("a", 65_536),
      sized("€", 21_845),
      sized("€", 21_846),
    ];
    for (const [text, bytes] of texts) {
      expect(isText(text)).toBe(bytes <= 65_535);
      expect(isTextKind(text)).toBe(bytes <= 65_535);
    }
  });
});
