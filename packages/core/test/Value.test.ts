// Proves the canonical form's own rules (`Value.canonical`): each change the
// codec would make is made, nothing else is copied (a canonical value comes
// back as the very same object, and canonicalizing twice changes nothing),
// plain objects become maps without a write to any object, sizes are the
// encoding's, and a refusal's path is written as JavaScript would write it.
// The codec's test/DecidedEvents.test.ts holds the form against its decoder.
import { Value } from "@tay/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const canonical = (value: unknown): Value.Value => {
  const result = Value.canonical(value);
  if (result._tag !== "Canonical") throw new Error(`${result.path}: ${result.detail}`);
  return result.value;
};

const refusal = (value: unknown) => {
  const result = Value.canonical(value);
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

  it("keeps an integer of the int64 range at both ends, and refuses one past either", () => {
    expect(canonical(-(2n ** 63n))).toBe(-(2n ** 63n));
    expect(canonical(2n ** 63n - 1n)).toBe(2n ** 63n - 1n);
    expect(refusal(-(2n ** 63n) - 1n)._tag).toBe("Unencodable");
    expect(refusal(2n ** 63n)._tag).toBe("Unencodable");
  });

  it("makes each change the codec would make, and only along the way to it", () => {
    expect(Object.is(canonical(-0), 0)).toBe(true);
    expect(canonical(-(2n ** 53n - 1n))).toBe(-(2 ** 53 - 1));
    expect(canonical(2n ** 53n - 1n)).toBe(2 ** 53 - 1);
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

/** Freezes `value` and everything inside it, so that any write into it throws. */
const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze(Reflect.get(value, key));
  }
  return value;
};

describe("Value.canonical of a plain object", () => {
  it("is a Map of its own enumerable string keys, in UTF-8 byte order", () => {
    // Object.keys puts integer-like keys first, ascending as numbers ("9"
    // before "10"); UTF-16 order puts U+1F600 (a surrogate pair) before U+FFFD.
    const map = canonical({ b: 1, 10: 2, 9: 3, "\uFFFD": 4, "\u{1F600}": 5, a: { z: 1, y: 2 } });
    expect(Value.isMap(map) && [...map.keys()]).toEqual([
      "10",
      "9",
      "a",
      "b",
      "\uFFFD",
      "\u{1F600}",
    ]);
    const inner = Value.isMap(map) ? (map.get("a") ?? null) : null;
    expect(Value.isMap(inner) && [...inner]).toEqual([
      ["y", 2],
      ["z", 1],
    ]);
    expect(Object.getPrototypeOf(map)).toBe(Map.prototype);
  });

  it("keeps __proto__, constructor and hasOwnProperty as ordinary keys with their values", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1}');
    const defined = {};
    Object.defineProperty(defined, "__proto__", { value: [1], enumerable: true });
    const bare: { [key: string]: unknown } = Object.create(null);
    Object.defineProperty(bare, "hasOwnProperty", { value: "h", enumerable: true });
    Object.defineProperty(bare, "__proto__", { value: null, enumerable: true });
    const map = canonical(deepFreeze({ parsed, defined, bare }));
    expect(map).toEqual(
      new Map<string, Value.Value>([
        [
          "bare",
          new Map<string, Value.Value>([
            ["__proto__", null],
            ["hasOwnProperty", "h"],
          ]),
        ],
        ["defined", new Map([["__proto__", [1]]])],
        [
          "parsed",
          new Map<string, Value.Value>([
            ["__proto__", new Map([["polluted", true]])],
            ["constructor", 1],
          ]),
        ],
      ]),
    );
    // Nothing was written anywhere: the input was frozen (a write would have
    // thrown) and no prototype gained a key.
    expect(Reflect.get({}, "polluted")).toBeUndefined();
    expect(Object.keys(Object.prototype)).toEqual([]);
  });

  it("leaves out symbol keys and non-enumerable keys, as JSON.stringify does", () => {
    const object = { kept: 1, [Symbol("s")]: 2 };
    Object.defineProperty(object, "hidden", { value: 3, enumerable: false });
    expect(canonical(object)).toEqual(new Map([["kept", 1]]));
  });

  it("reads a getter once, and refuses one that throws at its key", () => {
    let reads = 0;
    const counted = {
      get at() {
        reads++;
        return 5;
      },
    };
    expect(canonical(counted)).toEqual(new Map([["at", 5]]));
    expect(reads).toBe(1);
    const throwing = {
      user: {
        get id(): number {
          throw new Error("no id");
        },
      },
    };
    expect(refusal(throwing)).toEqual({
      _tag: "Unencodable",
      path: ".user.id",
      detail: "reading it threw (no id)",
    });
  });

  it("is the same Map as the equal Map input gives, and measures the same size", () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        // The same data with every map written as a plain object.
        const asObject = (item: Value.Value): unknown =>
          Value.isMap(item)
            ? Object.fromEntries([...item].map(([key, member]) => [key, asObject(member)]))
            : Array.isArray(item)
              ? item.map(asObject)
              : item;
        const fromMap = Value.canonical(value);
        const fromObject = Value.canonical(asObject(value));
        expect(fromObject).toEqual(fromMap);
        if (fromObject._tag === "Canonical" && fromMap._tag === "Canonical") {
          expect(Value.equals(fromObject.value, fromMap.value)).toBe(true);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it("refuses, rather than throws, when reading a value throws elsewhere (a proxy's trap)", () => {
    const trap = new Proxy(
      {},
      {
        getPrototypeOf: () => {
          throw new Error("trap");
        },
      },
    );
    expect(refusal(new Map([["a", trap]]))).toEqual({
      _tag: "Unencodable",
      path: "",
      detail: "reading it threw (trap)",
    });
  });

  it("names the class of an object that is not a value, with a hint for a Date", () => {
    expect(refusal({ at: new Date(0) })).toEqual({
      _tag: "Unencodable",
      path: ".at",
      detail: "an object of class Date is not a value (pass its getTime() or toISOString())",
    });
    expect(refusal([new Set()]).detail).toBe("an object of class Set is not a value");
    expect(refusal(Object.create(Object.create(null))).detail).toBe(
      "an object with a prototype other than Object is not a value",
    );
  });

  it("refuses a cyclic plain object as too deep", () => {
    const cycle: { [key: string]: unknown } = {};
    cycle.self = cycle;
    expect(refusal(cycle)).toEqual({
      _tag: "Unencodable",
      path: ".self".repeat(64),
      detail: "a value nested deeper than 64 levels is not encodable",
    });
  });
});
