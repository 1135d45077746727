// Proves the value codec writes and accepts exactly FORMAT.md's canonical
// form, and that no input makes the decoder throw, allocate beyond its input
// or reach its Defect guard. It checks the spec vectors byte for byte, round
// trips and canonical re-encoding over fast-check values, arbitrary and
// mutated bytes, and one hand-made input per refusal.
import { Value } from "@tay/core";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as Values from "../../testkit/src/Values.js";
import {
  decodeValue,
  encodeValue,
  type NonCanonicalReason,
  type ValueDecodeError,
  valueDepthMax,
} from "../src/Value.js";

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const fromHex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, "hex"));

const encoded = (value: Value.Value): Uint8Array => {
  const result = encodeValue(value);
  if (E.isLeft(result)) throw new Error(`unexpected ${JSON.stringify(result.left._tag)}`);
  return result.right;
};

const decodeError = (bytes: Uint8Array): ValueDecodeError | undefined => {
  const result = decodeValue(bytes);
  return E.isLeft(result) ? result.left : undefined;
};

const u32 = (value: number): string => value.toString(16).padStart(8, "0");
const text = (value: string): string => {
  const bytes = new TextEncoder().encode(value);
  return `05${u32(bytes.length)}${hex(bytes)}`;
};
const key = (value: string): string => {
  const bytes = new TextEncoder().encode(value);
  return `${u32(bytes.length)}${hex(bytes)}`;
};
const float = (value: number): string => {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat64(0, value);
  return `04${hex(bytes)}`;
};
const nestedLists = (depth: number): string => `${"0700000001".repeat(depth - 1)}00`;

/** Asserts `bytes` decode, and that re-encoding gives them back (canonical). */
const expectCanonical = (bytes: Uint8Array): Value.Value => {
  const decoded = decodeValue(bytes);
  if (E.isLeft(decoded)) throw new Error(`refused: ${JSON.stringify(decoded.left)}`);
  expect(hex(encoded(decoded.right))).toBe(hex(bytes));
  return decoded.right;
};

const specRecordPayload =
  "08000000080000000461726773000000000b696e7365727465645f6174030000000000000000000000066a6f625f69640300000000000000010000000c6d61785f617474656d707473030000000000000001000000087072696f72697479030000000000000000000000057175657565050000000764656661756c740000000c7363686564756c65645f617403000000000000000000000006776f726b6572050000000157";

describe("FORMAT.md test vectors", () => {
  it('encodes [-0.5, "é", bytes()] byte for byte and decodes it back', () => {
    const vector = "070000000304bfe00000000000000500000002c3a90600000000";
    expect(hex(encoded([-0.5, "é", new Uint8Array()]))).toBe(vector);
    expect(decodeValue(fromHex(vector))).toEqual(E.right([-0.5, "é", new Uint8Array()]));
  });

  it("encodes the record vector's payload map, whatever the insertion order", () => {
    const entries: ReadonlyArray<readonly [string, Value.Value]> = [
      ["job_id", 1],
      ["queue", "default"],
      ["worker", "W"],
      ["args", null],
      ["priority", 0],
      ["max_attempts", 1],
      ["scheduled_at", 0],
      ["inserted_at", 0],
    ];
    expect(hex(encoded(new Map(entries)))).toBe(specRecordPayload);
    expect(hex(encoded(new Map([...entries].reverse())))).toBe(specRecordPayload);
    const decoded = expectCanonical(fromHex(specRecordPayload));
    expect(Value.equals(decoded, new Map(entries))).toBe(true);
  });
});

describe("round trip", () => {
  it("decode(encode(v)) equals v for canonical values, and re-encodes identically", () => {
    fc.assert(
      fc.property(Values.value(), (value) => {
        const bytes = encoded(value);
        const decoded = decodeValue(bytes);
        expect(E.isRight(decoded)).toBe(true);
        if (E.isRight(decoded)) {
          expect(Value.equals(decoded.right, value)).toBe(true);
          expect(Value.kindOf(decoded.right)).toBe(Value.kindOf(value));
          expect(hex(encoded(decoded.right))).toBe(hex(bytes));
        }
      }),
      { numRuns: 400 },
    );
  });

  it("round trips values nested exactly 64 deep", () => {
    fc.assert(
      fc.property(Values.deepValue(valueDepthMax), (value) => {
        const decoded = decodeValue(encoded(value));
        expect(E.isRight(decoded) && Value.equals(decoded.right, value)).toBe(true);
      }),
      { numRuns: 50 },
    );
  });

  it("round trips names and texts at their byte bounds", () => {
    for (const value of [...Values.namesAtBound, ...Values.textsAtBound]) {
      expect(decodeValue(encoded(value))).toEqual(E.right(value));
    }
  });

  it("keeps __proto__ and friends as ordinary map keys", () => {
    const value = new Map<string, Value.Value>(Values.trickyNames.map((name) => [name, name]));
    const decoded = decodeValue(encoded(value));
    expect(E.isRight(decoded) && Value.equals(decoded.right, value)).toBe(true);
    const map = E.isRight(decoded) ? decoded.right : null;
    expect(map instanceof Map && map.get("__proto__")).toBe("__proto__");
  });

  it("keeps a leading byte order mark in long and short strings", () => {
    for (const value of ["\ufeff", `\ufeff${"x".repeat(100)}`]) {
      expect(decodeValue(encoded(value))).toEqual(E.right(value));
    }
  });

  it("orders keys by UTF-8 bytes, not UTF-16 units", () => {
    // U+FFFF is EF BF BF; U+1F600 is F0 9F 98 80 but D83D DE00 in UTF-16.
    const bytes = encoded(
      new Map([
        ["😀", 1],
        ["\uffff", 2],
        ["a", 3],
        ["", 4],
      ]),
    );
    expect(hex(bytes)).toBe(
      `0800000004${key("")}${hex(encoded(4))}${key("a")}${hex(encoded(3))}${key("\uffff")}${hex(encoded(2))}${key("😀")}${hex(encoded(1))}`,
    );
    expectCanonical(bytes);
  });

  it("orders keys around the surrogate range by UTF-8 bytes, whatever the insertion order", () => {
    // UTF-16 puts U+10000.. (D800..DBFF units) before U+E000..U+FFFF; UTF-8 puts them after.
    const byUtf8 = (left: string, right: string) =>
      Buffer.compare(Buffer.from(left, "utf8"), Buffer.from(right, "utf8"));
    const permutations = (items: ReadonlyArray<string>): string[][] =>
      items.length <= 1
        ? [[...items]]
        : items.flatMap((item, index) =>
            permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [
              item,
              ...rest,
            ]),
          );
    const sets = [
      ["\ue000", "\u{10000}"],
      ["\ud7ff", "\ue000", "\uffff", "\u{10000}", "\u{10ffff}"],
    ];
    for (const keys of sets) {
      const sorted = [...keys].sort(byUtf8);
      const expected = `08${u32(keys.length)}${sorted.map((name) => `${key(name)}00`).join("")}`;
      for (const order of permutations(keys)) {
        const bytes = encoded(new Map(order.map((name) => [name, null])));
        expect(hex(bytes), order.join(",")).toBe(expected);
        expectCanonical(bytes);
      }
    }
  });

  it("writes -0 as the integer 0 and a safe-range bigint as the same integer", () => {
    expect(hex(encoded(-0))).toBe("030000000000000000");
    expect(hex(encoded(5n))).toBe(hex(encoded(5)));
    expect(decodeValue(encoded(5n))).toEqual(E.right(5));
    expect(decodeValue(encoded(-(2n ** 53n)))).toEqual(E.right(-(2n ** 53n)));
    expect(decodeValue(encoded(-(2 ** 53 - 1)))).toEqual(E.right(-(2 ** 53 - 1)));
    expect(decodeValue(encoded(2 ** 53))).toEqual(E.right(2 ** 53));
    expect(hex(encoded(2 ** 53))).toBe(float(2 ** 53));
  });

  it("decodes a view with a non-zero byteOffset exactly as its own bytes", () => {
    fc.assert(
      fc.property(
        Values.value({ maxDepth: 3 }),
        fc.uint8Array({ maxLength: 16 }),
        fc.uint8Array({ maxLength: 16 }),
        (value, before, after) => {
          const bytes = encoded(value);
          const buffer = new Uint8Array(before.length + bytes.length + after.length);
          buffer.set(before);
          buffer.set(bytes, before.length);
          buffer.set(after, before.length + bytes.length);
          const view = buffer.subarray(before.length, before.length + bytes.length);
          const decoded = decodeValue(view);
          expect(E.isRight(decoded) && Value.equals(decoded.right, value)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("returns byte strings that do not alias the input", () => {
    const bytes = encoded(Uint8Array.of(1, 2, 3));
    const decoded = decodeValue(bytes);
    bytes[5] = 9;
    expect(decoded).toEqual(E.right(Uint8Array.of(1, 2, 3)));
  });
});

describe("any bytes", () => {
  const isDefect = (bytes: Uint8Array) => decodeError(bytes)?._tag === "Defect";

  it("give a result, never an exception or a Defect, and re-encode if accepted", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const decoded = decodeValue(bytes);
        expect(E.isLeft(decoded) && decoded.left._tag === "Defect").toBe(false);
        if (E.isRight(decoded)) expect(hex(encoded(decoded.right))).toBe(hex(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it("that start like a value, too (a valid tag and small lengths)", () => {
    const token = fc.oneof(
      fc.constantFrom(0, 1, 2, 3, 4, 5, 6, 7, 8).map((tag) => [tag]),
      fc.nat(6).map((length) => [0, 0, 0, length]),
      fc.uint8Array({ maxLength: 4 }).map((array) => Array.from(array)),
      fc.constantFrom([0xc3, 0xa9], [0xed, 0xa0, 0x80], [0xc0, 0x80], [0xf0, 0x9f, 0x98, 0x80]),
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 24 }), (tokens) => {
        const bytes = Uint8Array.from(tokens.flat());
        const decoded = decodeValue(bytes);
        expect(E.isLeft(decoded) && decoded.left._tag === "Defect").toBe(false);
        if (E.isRight(decoded)) expect(hex(encoded(decoded.right))).toBe(hex(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it("mutated from a valid encoding: refused, or accepted only in canonical form", () => {
    fc.assert(
      fc.property(
        Values.value({ maxDepth: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(2)), {
          minLength: 1,
          maxLength: 4,
        }),
        (value, mutations) => {
          let bytes = Array.from(encoded(value));
          for (const [where, byte, kind] of mutations) {
            const at = bytes.length === 0 ? 0 : where % bytes.length;
            if (kind === 0) bytes[at] = byte;
            else if (kind === 1) bytes.splice(at, 0, byte);
            else bytes.splice(at, 1);
          }
          const mutated = Uint8Array.from(bytes);
          const decoded = decodeValue(mutated);
          expect(E.isLeft(decoded) && decoded.left._tag === "Defect").toBe(false);
          if (E.isRight(decoded)) expect(hex(encoded(decoded.right))).toBe(hex(mutated));
          bytes = [];
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("inside a larger buffer at any offset behave as their own bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat(), (buffer, start) => {
        const from = start % buffer.length;
        const view = buffer.subarray(from);
        expect(decodeValue(view)).toEqual(decodeValue(Uint8Array.from(view)));
        expect(isDefect(view)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe("refusals", () => {
  const refused = (bytes: string) => decodeError(fromHex(bytes));

  it.each<[string, string, NonCanonicalReason, number]>([
    ["keys out of order", `0800000002${key("b")}00${key("a")}00`, "KeyOrder", 11],
    ["a duplicate key", `0800000002${key("a")}00${key("a")}00`, "DuplicateKey", 11],
    ["a prefix key after its extension", `0800000002${key("ab")}00${key("a")}00`, "KeyOrder", 12],
    ["a float that is an integer", float(1), "FloatIsInteger", 0],
    ["a float 0.0", float(0), "FloatIsInteger", 0],
    ["a float 2^53-1", float(2 ** 53 - 1), "FloatIsInteger", 0],
    ["a float -(2^53-1)", float(-(2 ** 53 - 1)), "FloatIsInteger", 0],
    ["a float -0.0", float(-0), "NegativeZero", 0],
    ["a float NaN", float(Number.NaN), "NonFiniteFloat", 0],
    ["a float NaN with another payload", "047ff8000000000001", "NonFiniteFloat", 0],
    ["a float +Infinity", float(Number.POSITIVE_INFINITY), "NonFiniteFloat", 0],
    ["a float -Infinity", float(Number.NEGATIVE_INFINITY), "NonFiniteFloat", 0],
    [
      "a nested non-canonical float",
      `0700000002 00 ${float(3)}`.replace(/ /g, ""),
      "FloatIsInteger",
      6,
    ],
  ])("refuses %s as NonCanonical", (_, bytes, reason, offset) => {
    expect(refused(bytes)).toEqual({ _tag: "NonCanonical", reason, offset });
  });

  it("accepts the floats just outside the integer rule", () => {
    for (const value of [2 ** 53, -(2 ** 53), 0.5, Number.MIN_VALUE, Number.MAX_VALUE]) {
      expect(decodeValue(fromHex(float(value)))).toEqual(E.right(value));
    }
  });

  it("refuses trailing bytes", () => {
    expect(refused("0000")).toEqual({ _tag: "TrailingBytes", offset: 1, count: 1 });
    expect(refused(`${text("a")}ffff`)).toEqual({ _tag: "TrailingBytes", offset: 6, count: 2 });
  });

  it("accepts depth 64 and refuses depth 65 at the offending value", () => {
    expect(decodeValue(fromHex(nestedLists(64)))).toEqual(E.right(expect.anything()));
    expect(refused(nestedLists(65))).toEqual({
      _tag: "DepthExceeded",
      offset: 64 * 5,
      depthMax: 64,
    });
    // Empty containers count as a level too.
    expect(E.isRight(decodeValue(fromHex(`${"0700000001".repeat(63)}0700000000`)))).toBe(true);
    expect(refused(`${"0700000001".repeat(64)}0800000000`)?._tag).toBe("DepthExceeded");
  });

  // Speed is the benchmark's business (no timed assertions in tests): a
  // decoder that recursed or allocated per claimed level would overflow the
  // stack or fail with a Defect here, not refuse at the 65th level.
  it("refuses a megabyte of nesting at the 65th level, without recursion", () => {
    const bytes = new Uint8Array(1 << 20);
    for (let offset = 0; offset + 5 <= bytes.length; offset += 5)
      bytes.set([7, 0, 0, 0, 1], offset);
    expect(decodeError(bytes)).toMatchObject({ _tag: "DepthExceeded", offset: 64 * 5 });
  });

  it.each([
    ["an overlong 2-byte form", "c080", 5, "Overlong"],
    ["an overlong 3-byte form", "e08080", 5, "Overlong"],
    ["an overlong 4-byte form", "f0808080", 5, "Overlong"],
    ["a high surrogate", "eda080", 5, "Surrogate"],
    ["a low surrogate", "edbfbf", 5, "Surrogate"],
    ["a sequence cut by the string's end", "e282", 5, "Truncated"],
    ["a 4-byte sequence cut short", "61f09f98", 6, "Truncated"],
    ["a lone continuation byte", "6180", 6, "UnexpectedContinuation"],
    ["a missing continuation", "c341", 6, "MissingContinuation"],
    ["a code point beyond U+10FFFF", "f4908080", 5, "BeyondUnicode"],
    ["a byte that never occurs", "ff", 5, "InvalidByte"],
    ["an overlong 2-byte form led by c1", "c1bf", 5, "Overlong"],
    // Forms at the top of their second byte's range are well formed: the fault is after them.
    ["a bad byte after U+07FF", "dfbfff", 7, "InvalidByte"],
    ["a bad byte after U+D7FF", "ed9fbfff", 8, "InvalidByte"],
    ["a bad byte after U+10FFFF", "f48fbfbfff", 9, "InvalidByte"],
  ])("refuses %s in a string", (_, content, offset, reason) => {
    const bytes = `05${u32(content.length / 2)}${content}`;
    expect(refused(bytes)).toEqual({ _tag: "InvalidUtf8", offset, reason });
  });

  it("refuses ill-formed UTF-8 in long strings and in keys, at the right offset", () => {
    const long = `${"61".repeat(100)}eda080`;
    expect(refused(`05${u32(long.length / 2)}${long}`)).toEqual({
      _tag: "InvalidUtf8",
      offset: 105,
      reason: "Surrogate",
    });
    expect(refused(`080000000100000002c08000`)).toEqual({
      _tag: "InvalidUtf8",
      offset: 9,
      reason: "Overlong",
    });
  });

  it("agrees with the platform's fatal UTF-8 decoder on arbitrary string content", () => {
    const platform = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    const content = fc.oneof(
      fc.uint8Array({ maxLength: 12 }),
      // 13..16 bytes: the platform decoder behind the short-string cache.
      fc.uint8Array({ minLength: 13, maxLength: 16 }),
      fc.string({ unit: "binary", maxLength: 6 }).map((text) => new TextEncoder().encode(text)),
      fc.uint8Array({ minLength: 40, maxLength: 120 }),
      fc
        .array(
          fc.constantFrom(
            [0x61],
            [0xc3, 0xa9],
            [0xe2, 0x82, 0xac],
            [0xf0, 0x9f, 0x98, 0x80],
            [0x80],
            [0xed, 0xa0],
            [0xf4, 0x90],
          ),
          { maxLength: 40 },
        )
        .map((parts) => Uint8Array.from(parts.flat())),
    );
    fc.assert(
      fc.property(content, (bytes) => {
        let expected: string | undefined;
        try {
          expected = platform.decode(bytes);
        } catch {
          expected = undefined;
        }
        const framed = fromHex(`05${u32(bytes.length)}${hex(bytes)}`);
        // Twice: the second time a short string may come from the cache.
        for (const decoded of [decodeValue(framed), decodeValue(framed)]) {
          if (expected === undefined)
            expect(E.isLeft(decoded) && decoded.left._tag).toBe("InvalidUtf8");
          else expect(decoded).toEqual(E.right(expected));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ["a list", "07ffffffff", 0, 0xffff_ffff, 0],
    ["a list one item short", "070000000200", 0, 2, 1],
    ["a map (5 bytes per entry)", "080000000100000000", 0, 1, 4],
    ["a map of two entries", "08000000020000000000000000", 0, 2, 8],
    ["a string", "05ffffffff41", 0, 0xffff_ffff, 1],
    ["bytes", "0600000002ff", 0, 2, 1],
    ["a key", "0800000001ffffffff0000000000", 5, 0xffff_ffff, 5],
    ["a key one byte", "08000000010000000261", 5, 2, 1],
  ])(
    "refuses %s longer than the input, before allocating",
    (_, bytes, offset, length, remaining) => {
      expect(refused(bytes)).toEqual({ _tag: "LengthBeyondInput", offset, length, remaining });
    },
  );

  // An attempt to allocate 4 billion slots would throw (a Defect result)
  // or exhaust memory; the refusal names the claim before any allocation.
  it("refuses a 4-billion-item claim before allocating", () => {
    expect(decodeError(fromHex("07ffffffff"))?._tag).toBe("LengthBeyondInput");
    expect(decodeError(fromHex("08ffffffff00000000"))?._tag).toBe("LengthBeyondInput");
  });

  it.each([
    ["no bytes", "", 0, 1],
    ["a cut integer", "030000", 0, 9],
    ["a cut float", "04bfe0", 0, 9],
    ["a cut length", "050000", 0, 5],
    // One byte short of each header: the last byte missing, not only the middle.
    ["a string length one byte short", "05000000", 0, 5],
    ["a bytes length one byte short", "06000000", 0, 5],
    ["a list count one byte short", "07000000", 0, 5],
    ["a map count one byte short", "08000000", 0, 5],
    ["an integer one byte short", "0300000000000000", 0, 9],
    ["a float one byte short", "04bfe00000000000", 0, 9],
    ["a list whose item is cut", "070000000107", 5, 5],
    ["a map entry missing its value", "08000000010000000161", 10, 1],
    ["a cut key length", `080000000200000000${text("aaa")}000000`, 17, 4],
  ])("refuses %s as UnexpectedEnd", (_, bytes, offset, needed) => {
    expect(refused(bytes)).toEqual({ _tag: "UnexpectedEnd", offset, needed });
  });

  it("refuses unknown tags", () => {
    expect(refused("09")).toEqual({ _tag: "UnknownTag", offset: 0, found: 9 });
    expect(refused("0700000001ff")).toEqual({ _tag: "UnknownTag", offset: 5, found: 255 });
  });
});

describe("encoding refusals", () => {
  const encodeError = (value: unknown) => {
    // Deliberately outside the type: the encoder must also stand up to
    // untyped callers.
    const result = encodeValue(value as Value.Value);
    return E.isLeft(result) ? result.left : undefined;
  };

  it("refuses non-finite numbers with their path", () => {
    expect(encodeError(new Map([["a", [1, Number.NaN]]]))).toEqual({
      _tag: "NonFiniteNumber",
      path: ["a", 1],
      found: Number.NaN,
    });
    expect(encodeError(Number.POSITIVE_INFINITY)?._tag).toBe("NonFiniteNumber");
    expect(encodeError(Number.NEGATIVE_INFINITY)?._tag).toBe("NonFiniteNumber");
  });

  it("refuses bigints outside int64 and accepts its ends", () => {
    expect(encodeError(2n ** 63n)).toEqual({
      _tag: "IntegerOutOfRange",
      path: [],
      found: 2n ** 63n,
    });
    expect(encodeError(-(2n ** 63n) - 1n)?._tag).toBe("IntegerOutOfRange");
    expect(hex(encoded(Value.int64Min))).toBe("038000000000000000");
    expect(hex(encoded(Value.int64Max))).toBe("037fffffffffffffff");
  });

  it("refuses lone surrogates in strings and keys", () => {
    expect(encodeError(["ok", "a\ud800b"])).toEqual({
      _tag: "IllFormedString",
      path: [1],
      inKey: false,
      index: 1,
    });
    expect(encodeError("\udc00")?._tag).toBe("IllFormedString");
    expect(encodeError(`x\ud83d`)?._tag).toBe("IllFormedString");
    expect(encodeError(new Map([["z\udfff", 1]]))).toEqual({
      _tag: "IllFormedString",
      path: ["z\udfff"],
      inKey: true,
      index: 1,
    });
    expect(
      encodeError(
        new Map([
          ["a", 1],
          ["\ud800", 2],
        ]),
      )?._tag,
    ).toBe("IllFormedString");
  });

  it("refuses nesting deeper than 64, cycles included", () => {
    let deep: Value.Value = null;
    for (let level = 1; level < 65; level++) deep = [deep];
    expect(E.isRight(encodeValue(deep))).toBe(false);
    expect(encodeError(deep)).toEqual({
      _tag: "DepthExceeded",
      path: Array.from({ length: 64 }, () => 0),
      depthMax: 64,
    });
    const cycle: unknown[] = [];
    cycle.push(cycle);
    expect(encodeError(cycle)?._tag).toBe("DepthExceeded");
  });

  it("refuses what is not a value at run time", () => {
    expect(encodeError([undefined])).toEqual({
      _tag: "UnsupportedValue",
      path: [0],
      found: "undefined",
    });
    expect(encodeError(new Date(0))).toEqual({ _tag: "UnsupportedValue", path: [], found: "Date" });
    expect(encodeError({ a: 1 })?._tag).toBe("UnsupportedValue");
    expect(encodeError(new Map([[1, 1]]))?._tag).toBe("UnsupportedValue");
    expect(encodeError(() => 1)?._tag).toBe("UnsupportedValue");
    expect(encodeError(new Array(2))?._tag).toBe("UnsupportedValue");
  });

  // The encoder reuses one buffer whose size (1 KiB doubled up to 1 MiB) depends on what
  // it encoded before: over every such size, each kind is placed to end at its last byte
  // and one byte past it (where the buffer must grow).
  it("encodes each kind ending at, or one byte past, the end of its reused buffer", () => {
    const items: ReadonlyArray<Value.Value> = [
      "",
      "abc",
      0,
      1.5,
      -(2n ** 60n),
      new Uint8Array(0),
      Uint8Array.of(1, 2, 3),
      [],
      new Map(),
      true,
      null,
    ];
    for (let size = 1024; size <= 1 << 20; size *= 2) {
      for (const item of items) {
        for (const past of [0, 1]) {
          // A list header (5), a bytes header (5) and `filler` bytes, then the item.
          const filler = size + past - 10 - encoded(item).length;
          const bytes = encoded([new Uint8Array(filler), item]);
          expect(bytes.length).toBe(size + past);
          // The item only: a deep comparison of a megabyte of filler is slow.
          const decoded = decodeValue(bytes.subarray(10 + filler));
          expect(decoded, `${size}`).toEqual(E.right(item));
        }
      }
    }
  });

  it("encodes many values in a row without mixing their bytes", () => {
    const first = encoded("x".repeat(5000));
    const second = encoded(1);
    expect(first.length).toBe(5005);
    expect(hex(second)).toBe("030000000000000001");
  });
});

describe("the testkit's value arbitraries (which feed the properties above)", () => {
  const bytesOf = (text: string) => new TextEncoder().encode(text).length;

  it("make names of 1..255 UTF-8 bytes and texts of 0..65,535, bounds included", () => {
    const names = fc.sample(Values.name(), { numRuns: 500, seed: 7 });
    const texts = fc.sample(Values.text(), { numRuns: 500, seed: 7 });
    for (const name of names) expect(bytesOf(name)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...names.map(bytesOf))).toBe(255);
    expect(Math.max(...texts.map(bytesOf))).toBe(65_535);
    expect(texts).toContain("");
    expect(names.some((name) => bytesOf(name) > name.length)).toBe(true);
    expect(names).toContain("__proto__");
  });

  it("make only canonical values: re-decoding gives the same kind and value", () => {
    for (const value of fc.sample(Values.scalar(), { numRuns: 300, seed: 11 })) {
      if (typeof value === "number") {
        expect(Object.is(value, -0)).toBe(false);
        expect(Number.isFinite(value)).toBe(true);
      }
      if (typeof value === "bigint") expect(Number.isSafeInteger(Number(value))).toBe(false);
    }
  });

  it("make values nested exactly as deep as asked", () => {
    const depthOf = (value: Value.Value): number =>
      Value.isMap(value)
        ? 1 + Math.max(0, ...Array.from(value.values(), depthOf))
        : Array.isArray(value)
          ? 1 + Math.max(0, ...value.map(depthOf))
          : 1;
    for (const value of fc.sample(Values.deepValue(64), { numRuns: 20, seed: 3 })) {
      expect(depthOf(value)).toBe(64);
    }
  });
});
