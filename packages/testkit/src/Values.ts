/**
 * fast-check arbitraries for payload values in their canonical domain
 * (core's `Value`): every kind, nested, with sizes that reach the bounds of
 * FORMAT.md and EVENTS.md (names of 255 UTF-8 bytes, texts of 65,535, depth
 * 64, int64 extremes) and the keys that break naive code (`__proto__`,
 * `constructor`, the empty string).
 *
 * "Canonical" means what a decoder returns: safe integers as `number`, other
 * int64 as `bigint`, floats that are not safe integers (and never -0), maps
 * as `Map`. Such a value survives encode/decode unchanged.
 */
import { Limits, Value } from "@tay/core";
import fc from "fast-check";

type AnyValue = Value.Value;

const encoder = new TextEncoder();

/** The UTF-8 byte length of a string. */
export const utf8ByteLength = (text: string): number => encoder.encode(text).length;

/** The longest prefix of `text`, in whole code points, of at most `bytesMax` UTF-8 bytes. */
export const truncateUtf8 = (text: string, bytesMax: number): string => {
  let bytes = 0;
  let result = "";
  for (const point of text) {
    const size = utf8ByteLength(point);
    if (bytes + size > bytesMax) break;
    bytes += size;
    result += point;
  }
  return result;
};

/** Keys and names that collide with object machinery in careless code. */
export const trickyNames: ReadonlyArray<string> = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "__defineGetter__",
];

/** Strings of exactly `Limits.nameBytesMax` (255) UTF-8 bytes, in 1-, 2-, 3- and 4-byte characters. */
export const namesAtBound: ReadonlyArray<string> = [
  "n".repeat(255),
  `${"é".repeat(127)}a`,
  "€".repeat(85),
  `${"😀".repeat(63)}abc`,
];

/** Strings of exactly `Limits.textBytesMax` (65,535) UTF-8 bytes. */
export const textsAtBound: ReadonlyArray<string> = [
  "t".repeat(65_535),
  "€".repeat(21_845),
  `${"😀".repeat(16_383)}abc`,
  `${"é".repeat(32_767)}a`,
];

/** Any well-formed string of up to `maxLength` code points, all of Unicode. */
const anyString = (maxLength: number, minLength = 0): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: "binary", minLength, maxLength }),
    fc.string({ unit: "grapheme", minLength, maxLength }),
    fc.string({ unit: "binary-ascii", minLength, maxLength }),
  );

/**
 * A `name` field: 1..255 UTF-8 bytes, often multi-byte, sometimes exactly
 * 255 bytes or one of `trickyNames`.
 */
export const name = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: anyString(24, 1) },
    { weight: 2, arbitrary: fc.constantFrom(...trickyNames) },
    { weight: 1, arbitrary: fc.constantFrom(...namesAtBound, "a") },
    {
      weight: 1,
      arbitrary: anyString(255, 1)
        .map((text) => truncateUtf8(text, Limits.nameBytesMax))
        .filter((text) => text.length > 0),
    },
  );

/**
 * A `text` field: 0..65,535 UTF-8 bytes, including the empty string,
 * multi-byte characters and strings exactly at the bound.
 */
export const text = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: anyString(40) },
    { weight: 1, arbitrary: fc.constantFrom("", ...trickyNames) },
    {
      weight: 1,
      arbitrary: anyString(2_000).map((value) => truncateUtf8(value, Limits.textBytesMax)),
    },
    { weight: 1, arbitrary: fc.constantFrom(...textsAtBound) },
  );

/** A map key: any well-formed string, empty and tricky ones included. */
export const mapKey = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: anyString(12) },
    { weight: 1, arbitrary: fc.constantFrom("", ...trickyNames) },
  );

/** Safe integers, biased to the edges of 32 and 53 bits. */
export const integer = (): fc.Arbitrary<number> =>
  fc.oneof(
    fc.integer(),
    fc.maxSafeInteger(),
    fc.constantFrom(
      0,
      1,
      -1,
      Value.safeIntegerMax,
      -Value.safeIntegerMax,
      2 ** 31,
      -(2 ** 31),
      2 ** 32,
      -(2 ** 32),
    ),
  );

/** Integers outside the safe range but inside int64: a decoder returns these as bigint. */
export const bigInteger = (): fc.Arbitrary<bigint> => {
  const safe = BigInt(Value.safeIntegerMax);
  return fc.oneof(
    fc.bigInt({ min: Value.int64Min, max: -safe - 1n }),
    fc.bigInt({ min: safe + 1n, max: Value.int64Max }),
    fc.constantFrom(Value.int64Min, Value.int64Max, safe + 1n, -safe - 1n),
  );
};

/** Finite floats that are not safe integers (so never 0 or -0). */
export const float = (): fc.Arbitrary<number> =>
  fc.oneof(
    fc
      .double({ noNaN: true, noDefaultInfinity: true })
      .filter((value) => !Number.isSafeInteger(value)),
    fc.constantFrom(
      0.5,
      -0.5,
      2 ** 53,
      -(2 ** 53),
      2 ** 63,
      Number.MAX_VALUE,
      -Number.MAX_VALUE,
      Number.MIN_VALUE,
      -Number.MIN_VALUE,
      Number.EPSILON,
    ),
  );

/** Byte strings, sometimes empty. */
export const bytes = (maxLength = 64): fc.Arbitrary<Uint8Array> =>
  fc.uint8Array({ maxLength }).map((array) => Uint8Array.from(array));

/** Options for nested values. */
export interface ValueOptions {
  /** Deepest nesting (a scalar has depth 1); at most `Value.valueDepthMax`. Default 4. */
  readonly maxDepth?: number;
  /** Most items in one list or map. Default 6. */
  readonly maxLength?: number;
}

/** Any scalar: null, booleans, integers, big integers, floats, strings, bytes. */
export const scalar = (): fc.Arbitrary<AnyValue> =>
  fc.oneof(fc.constant(null), fc.boolean(), integer(), bigInteger(), float(), text(), bytes());

const entriesToMap = (entries: ReadonlyArray<readonly [string, AnyValue]>): Value.ValueMap =>
  new Map(entries);

const containersOf = (
  item: fc.Arbitrary<AnyValue>,
  maxLength: number,
): { list: fc.Arbitrary<ReadonlyArray<AnyValue>>; map: fc.Arbitrary<Value.ValueMap> } => ({
  list: fc.array(item, { maxLength }),
  map: fc
    .uniqueArray(fc.tuple(mapKey(), item), { selector: (entry) => entry[0], maxLength })
    .map(entriesToMap),
});

const valueAtDepth = (depth: number, maxLength: number): fc.Arbitrary<AnyValue> => {
  if (depth <= 1) return scalar();
  const { list, map } = containersOf(valueAtDepth(depth - 1, maxLength), maxLength);
  return fc.oneof(
    { weight: 3, arbitrary: scalar() },
    { weight: 1, arbitrary: list },
    { weight: 1, arbitrary: map },
  );
};

/**
 * Any canonical value nested at most `maxDepth` deep.
 *
 * @example fc.assert(fc.property(Values.value(), (v) => roundTrips(v)))
 */
export const value = (options: ValueOptions = {}): fc.Arbitrary<AnyValue> => {
  const maxDepth = Math.min(options.maxDepth ?? 4, Value.valueDepthMax);
  return valueAtDepth(maxDepth, options.maxLength ?? 6);
};

/** A map value (what every event payload is), entries nested per `options`. */
export const valueMap = (options: ValueOptions = {}): fc.Arbitrary<Value.ValueMap> => {
  const maxDepth = Math.min(options.maxDepth ?? 4, Value.valueDepthMax);
  return containersOf(valueAtDepth(maxDepth - 1, options.maxLength ?? 6), options.maxLength ?? 6)
    .map;
};

/** A list value, items nested per `options`. */
export const valueList = (options: ValueOptions = {}): fc.Arbitrary<ReadonlyArray<AnyValue>> => {
  const maxDepth = Math.min(options.maxDepth ?? 4, Value.valueDepthMax);
  return containersOf(valueAtDepth(maxDepth - 1, options.maxLength ?? 6), options.maxLength ?? 6)
    .list;
};

/**
 * A value nested exactly `depth` deep (default `Value.valueDepthMax`, the
 * deepest a codec accepts): a chain of single-item lists and single-entry
 * maps around a scalar.
 */
export const deepValue = (depth: number = Value.valueDepthMax): fc.Arbitrary<AnyValue> =>
  fc
    .tuple(
      fc.array(fc.tuple(fc.boolean(), mapKey()), { minLength: depth - 1, maxLength: depth - 1 }),
      scalar(),
    )
    .map(([wrappers, leaf]) =>
      wrappers.reduce<AnyValue>(
        (inner, [asList, key]) => (asList ? [inner] : new Map([[key, inner]])),
        leaf,
      ),
    );
