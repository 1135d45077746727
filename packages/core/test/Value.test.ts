// Proves the canonical form's own rules (`Value.canonical`): each change the codec would make is
// made, nothing else is copied (a canonical value comes back as the very same
// object, and canonicalizing twice changes nothing), sizes are the encoding's,
// and a refusal's path is written as JavaScript would write it. The codec's
// test/DecidedEvents.test.ts holds the form against the codec's decoder.
import { Value } from "@tay/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const canonical = (value: unknown): Value.Value => {
  const result = Value.canonical(value as Value.Value);
  if (result._tag !== "Canonical") throw new Error(`${result.path}: ${result.detail}`);
  return result.value;
};

const refusal = (value: unknown) => {
  const result = Value.canonical(value as Value.Value);
  if (result._tag !== "Unencodable") throw new Error("accepted");
  return result;
};

/** Values of every kind, canonical or not: -0, bigints, subclasses, keys in any order. */
const anyValue: fc.Arbitrary<Value.Value> = fc.letrec<{ value: Value.Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom<Value.Value>(null, true, -0, 0, 1.5, 2 ** 53, 5n, 2n ** 60n, "", "é"),
    fc.integer(),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    fc.string(),
    fc.uint8Array({ maxLength: 4 }).map((bytes) => (bytes.length % 2 ? Buffer.from(bytes) : bytes)),
    fc.array(tie("value"), { maxLength: 4 }),
    fc
      .uniqueArray(fc.tuple(fc.string({ maxLength: 3 }), tie("value")), {
        selector: (entry) => entry[0],
        maxLength: 4,
      })
      .map((entries) => new Map(entries)),
  ),
})).value;

describe("Value.canonical", () => {
  it("returns a canonical value as the very same object, so canonicalizing twice changes nothing", () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        const once = canonical(value);
        expect(canonical(once)).toBe(once);
      }),
      { numRuns: 1_000 },
    );
  });

  it("measures what the encoding takes: 9 bytes a number, 5 plus the content a string or bytes", () => {
    expect(Value.canonical(null)).toMatchObject({ bytes: 1 });
    expect(Value.canonical(-0)).toMatchObject({ bytes: 9 });
    expect(Value.canonical(5n)).toMatchObject({ bytes: 9 });
    expect(Value.canonical("é")).toMatchObject({ bytes: 7 });
    expect(Value.canonical(Buffer.from([1, 2]))).toMatchObject({ bytes: 7 });
    // A map: 5, then per entry a 4-byte key length, the key and the value.
    expect(Value.canonical(new Map([["ab", [true]]]))).toMatchObject({ bytes: 5 + 4 + 2 + 5 + 1 });
  });

  it("makes each change the codec would make, and only along the way to it", () => {
    expect(Object.is(canonical(-0), 0)).toBe(true);
    expect(canonical(-(2n ** 53n - 1n))).toBe(-(2 ** 53 - 1));
    expect(canonical(2n ** 53n)).toBe(2n ** 53n);
    const kept = new Map([["x", 1]]);
    const changed = canonical([kept, [5n]]);
    expect(changed).toEqual([kept, [5]]);
    expect(Array.isArray(changed) && changed[0]).toBe(kept);
    const sorted = canonical(
      new Map<string, Value.Value>([
        ["b", 1],
        ["a", 2],
      ]),
    );
    expect(Value.isMap(sorted) && [...sorted]).toEqual([
      ["a", 2],
      ["b", 1],
    ]);
  });

  it("writes the path to a refusal as JavaScript would", () => {
    const at = (key: string) => refusal(new Map([[key, [Number.NaN]]])).path;
    expect(at("user")).toBe(".user[0]");
    expect(at("$id_2")).toBe(".$id_2[0]");
    expect(at("1st")).toBe('["1st"][0]');
    expect(at('say "hi"')).toBe('["say \\"hi\\""][0]');
    expect(at("")).toBe('[""][0]');
    expect(at("k".repeat(65))).toBe(`[${JSON.stringify(`${"k".repeat(64)}…`)}][0]`);
    expect(refusal(Number.NaN).path).toBe("");
  });
});
