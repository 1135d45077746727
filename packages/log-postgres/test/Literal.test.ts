/**
 * The literals of the append script (`internal/literal.ts`), checked by
 * PostgreSQL's own parser (PGlite): every byte string comes back byte for
 * byte (all 256 byte values, and random ones), every text comes back exact
 * with `standard_conforming_strings` on and off, and no text can end its
 * literal: a script of one SELECT of any text is one statement with one
 * row, whatever quotes, backslashes, semicolons or comment marks it holds.
 */
import type { PGlite } from "@electric-sql/pglite";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as Literal from "../src/internal/literal.js";
import * as Pglite from "./support/pglite.js";

const pglite = Pglite.perFile("literal");
const database = (): PGlite => pglite.database();

/** Texts meant to break out of a literal, beside arbitrary ones. */
const hostile = fc.oneof(
  fc.constantFrom(
    "'",
    "''",
    "\\",
    "\\'",
    "'; DROP TABLE t; --",
    "E'\\x27'",
    "$$",
    "$tag$",
    "/*",
    "*/",
    "--",
    "\\x41",
    "\\u0041",
    "é'☃\\",
  ),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }).map((text) => text.replaceAll("\u0000", "")),
  fc
    .array(fc.constantFrom("'", "\\", ";", "-", "/", "*", "$", "E", "x", "a"), { maxLength: 12 })
    .map((parts) => parts.join("")),
);

/** The one statement `SELECT <literal> AS v; SELECT 'end' AS v` runs, by its results. */
const selectBoth = async (literal: string) =>
  (await database().exec(`SELECT ${literal} AS v;\nSELECT 'end' AS v`)).map(
    (result) => result.rows,
  );

describe("literals of the append script", () => {
  it("bytes: every byte value, and random byte strings, come back exact", async () => {
    const every = Uint8Array.from({ length: 256 }, (_, index) => index);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant(every), fc.uint8Array({ maxLength: 300 })),
        async (bytes) => {
          const [first, end] = await selectBoth(Literal.bytes(bytes));
          expect(first).toHaveLength(1);
          const value: unknown = first?.[0]?.v;
          if (!(value instanceof Uint8Array)) throw new Error(`not bytes: ${String(value)}`);
          expect(Buffer.from(value).equals(Buffer.from(bytes))).toBe(true);
          expect(end).toEqual([{ v: "end" }]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("bytes: a view into a larger buffer (a record's payload) gives its own bytes and no others", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        fc.nat(),
        fc.nat(),
        async (whole, start, length) => {
          const from = start % whole.length;
          const view = whole.subarray(from, from + (length % (whole.length - from + 1)));
          const [first] = await selectBoth(Literal.bytes(view));
          const value: unknown = first?.[0]?.v;
          if (!(value instanceof Uint8Array)) throw new Error(`not bytes: ${String(value)}`);
          expect(Buffer.from(value).equals(Buffer.from(view))).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });

  it.each(["on", "off"])(
    "text: any text without NUL comes back exact, and ends nowhere but its literal (standard_conforming_strings %s)",
    async (setting) => {
      await database().exec(`SET standard_conforming_strings = ${setting}`);
      try {
        await fc.assert(
          fc.asyncProperty(hostile, async (text) => {
            const results = await selectBoth(Literal.text(text));
            // Two statements, as written: nothing the text held started another.
            expect(results).toEqual([[{ v: text }], [{ v: "end" }]]);
          }),
          { numRuns: 300 },
        );
      } finally {
        await database().exec("SET standard_conforming_strings = on");
      }
    },
  );

  it("integers: safe integers in decimal; anything else and NUL in a text are refused", () => {
    expect(Literal.integer(0)).toBe("0");
    expect(Literal.integer(-42)).toBe("-42");
    expect(Literal.integer(Number.MAX_SAFE_INTEGER)).toBe("9007199254740991");
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => Literal.integer(bad)).toThrow(Literal.LiteralRefused);
    }
    expect(() => Literal.text("a\u0000b")).toThrow(Literal.LiteralRefused);
  });
});
