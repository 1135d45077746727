/**
 * The payload value model shared by events and the codec.
 *
 * A value is what the canonical payload encoding of FORMAT.md can carry:
 * null, booleans, numbers, big integers, strings, byte strings, lists and
 * string-keyed maps. Maps are `ReadonlyMap` rather than objects so that keys
 * such as `__proto__` stay inert data.
 *
 * Canonical domain: an integer of magnitude <= 2^53-1 is a `number`; an
 * integer outside that range (but inside int64) is a `bigint`; a `number`
 * that is not a safe integer is a finite float. `-0` is the integer 0.
 * Decoding also gives map keys in UTF-8 byte order and plain arrays, maps
 * and `Uint8Array`s; the deciders put values into events in exactly that
 * form (`internal/Canonical.ts`), so the state equals its log.
 */
export type Value =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | ReadonlyArray<Value>
  | ValueMap;

/** A map value: keys are UTF-8 strings, compared by their UTF-8 bytes. */
export type ValueMap = ReadonlyMap<string, Value>;

/** Largest integer a `number` carries exactly (2^53-1). */
export const safeIntegerMax = Number.MAX_SAFE_INTEGER;

/** Smallest and largest int64, the range of the integer tag. */
export const int64Min = -(2n ** 63n);
export const int64Max = 2n ** 63n - 1n;

/** Deepest nesting the codec accepts: a scalar at top level has depth 1. */
export const valueDepthMax = 64;

/** The kind of a value, for error messages and dispatch. */
export type ValueKind =
  | "null"
  | "boolean"
  | "integer"
  | "float"
  | "string"
  | "bytes"
  | "list"
  | "map";

/** Classifies a value by the tag it encodes to. */
export const kindOf = (value: Value): ValueKind => {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return "boolean";
    case "bigint":
      return "integer";
    case "number":
      return Number.isSafeInteger(value) || Object.is(value, -0) ? "integer" : "float";
    case "string":
      return "string";
    default:
      if (value instanceof Uint8Array) return "bytes";
      if (isMap(value)) return "map";
      return "list";
  }
};

/** True for a list value. */
export const isList = (value: Value): value is ReadonlyArray<Value> => Array.isArray(value);

/** True for a map value. */
export const isMap = (value: Value): value is ValueMap => value instanceof Map;

/** Builds a map value from entries; a convenience for literals in tests and deciders. */
export const map = (entries: Iterable<readonly [string, Value]>): ValueMap => new Map(entries);

const compareBytes = (left: Uint8Array, right: Uint8Array): number => {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
};

const utf8 = new TextEncoder();

/**
 * Orders map keys by their UTF-8 bytes, the canonical order of FORMAT.md.
 * (JavaScript's default string order compares UTF-16 units, which differs for
 * characters outside the Basic Multilingual Plane.)
 */
export const compareKeys = (left: string, right: string): number =>
  compareBytes(utf8.encode(left), utf8.encode(right));

/**
 * Structural equality of two values: maps compare as sets of entries, bytes
 * by content, numbers with `Object.is` except that `-0` equals `0` (both are
 * the integer 0 on the wire).
 */
export const equals = (left: Value, right: Value): boolean => {
  if (left === right) return true;
  if (left === null || right === null) return false;
  if (typeof left === "number" && typeof right === "number") {
    return (left === 0 && right === 0) || Object.is(left, right);
  }
  if (typeof left !== "object" || typeof right !== "object") return false;
  if (left instanceof Uint8Array) {
    return right instanceof Uint8Array && compareBytes(left, right) === 0;
  }
  if (isMap(left)) {
    if (!isMap(right) || left.size !== right.size) return false;
    for (const [key, item] of left) {
      if (!right.has(key)) return false;
      const other: Value = right.get(key) ?? null;
      if (!equals(item, other)) return false;
    }
    return true;
  }
  if (!isList(left) || !isList(right) || left.length !== right.length) return false;
  return left.every((item, index) => equals(item, right[index] ?? null));
};
