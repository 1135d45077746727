/**
 * The canonical, bounded value encoding of FORMAT.md: the bytes of every
 * event payload.
 *
 * A value is a tag byte and its content (null, false, true, int64, finite
 * float64, UTF-8 string, bytes, list, map with UTF-8 keys in strictly
 * increasing byte order). Encoding always produces the canonical form;
 * decoding accepts only the canonical form, checks every length against the
 * bytes that remain before allocating, and walks nesting with an explicit
 * stack, so hostile input costs at most its own size.
 */
import { Value as CoreValue } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describeDefect, twoToThe32, viewOf } from "./internal/bytes.js";
import { type Utf8ErrorReason, utf8LengthOf, writeUtf8 } from "./internal/utf8.js";
import { decodeValueWithin, valueTags as tags } from "./internal/valueDecode.js";

export type { Utf8ErrorReason } from "./internal/utf8.js";

type Value = CoreValue.Value;

/** Tag bytes of the encoding. */
export const valueTags = tags;

/** Deepest nesting accepted either way: a top-level scalar has depth 1. */
export const valueDepthMax = CoreValue.valueDepthMax;

/** Largest byte length or count a u32 length field carries. */
export const valueLengthMax = 0xffff_ffff;

/** Where in a value an encoding error sits: map keys and list indexes from the root. */
export type ValuePath = ReadonlyArray<string | number>;

/**
 * Why a value cannot be encoded. Every case is reachable from data a user
 * passes in (job args, results), so none of them throws.
 */
export type ValueEncodeError =
  | { readonly _tag: "NonFiniteNumber"; readonly path: ValuePath; readonly found: number }
  | { readonly _tag: "IntegerOutOfRange"; readonly path: ValuePath; readonly found: bigint }
  | {
      readonly _tag: "IllFormedString";
      readonly path: ValuePath;
      /** A map key rather than a string value. */
      readonly inKey: boolean;
      /** UTF-16 index of the lone surrogate. */
      readonly index: number;
    }
  | { readonly _tag: "DepthExceeded"; readonly path: ValuePath; readonly depthMax: number }
  | {
      readonly _tag: "LengthExceeded";
      readonly path: ValuePath;
      readonly length: number;
      readonly lengthMax: number;
    }
  | { readonly _tag: "UnsupportedValue"; readonly path: ValuePath; readonly found: string }
  | { readonly _tag: "Defect"; readonly message: string };

/** The closed set of canonical-form violations (FORMAT.md). */
export type NonCanonicalReason =
  | "KeyOrder"
  | "DuplicateKey"
  | "FloatIsInteger"
  | "NegativeZero"
  | "NonFiniteFloat";

/**
 * Why bytes are not exactly one canonical value. `offset` is relative to the
 * start of the decoded range: the tag, length field or byte that is wrong.
 */
export type ValueDecodeError =
  /** A fixed-size field (tag, integer, float, length) runs past the end. */
  | { readonly _tag: "UnexpectedEnd"; readonly offset: number; readonly needed: number }
  /** A length or count that the remaining bytes cannot hold. */
  | {
      readonly _tag: "LengthBeyondInput";
      readonly offset: number;
      readonly length: number;
      readonly remaining: number;
    }
  | { readonly _tag: "UnknownTag"; readonly offset: number; readonly found: number }
  | { readonly _tag: "DepthExceeded"; readonly offset: number; readonly depthMax: number }
  | { readonly _tag: "InvalidUtf8"; readonly offset: number; readonly reason: Utf8ErrorReason }
  | { readonly _tag: "NonCanonical"; readonly offset: number; readonly reason: NonCanonicalReason }
  | { readonly _tag: "TrailingBytes"; readonly offset: number; readonly count: number }
  /** An unexpected exception inside the decoder: a bug, never a verdict on the bytes. */
  | { readonly _tag: "Defect"; readonly message: string };

// ---------------------------------------------------------------------------
// Encoding

/** An encoding error without its path, which is built while it bubbles up. */
type PathlessEncodeError = { readonly path: Array<string | number> } & (
  | { readonly _tag: "NonFiniteNumber"; readonly found: number }
  | { readonly _tag: "IntegerOutOfRange"; readonly found: bigint }
  | { readonly _tag: "IllFormedString"; readonly inKey: boolean; readonly index: number }
  | { readonly _tag: "DepthExceeded"; readonly depthMax: number }
  | { readonly _tag: "LengthExceeded"; readonly length: number; readonly lengthMax: number }
  | { readonly _tag: "UnsupportedValue"; readonly found: string }
);

/** A growable output buffer; one is kept between calls to spare allocations. */
interface Writer {
  bytes: Uint8Array;
  view: DataView;
  position: number;
}

const initialWriterBytes = 1024;
/** A kept buffer larger than this is dropped after use rather than held on to. */
const keptWriterBytesMax = 1 << 20;

const newWriter = (size: number): Writer => {
  const bytes = new Uint8Array(size);
  return { bytes, view: viewOf(bytes), position: 0 };
};

let keptWriter: Writer | undefined = newWriter(initialWriterBytes);

const reserve = (writer: Writer, count: number): void => {
  const needed = writer.position + count;
  if (needed <= writer.bytes.length) return;
  let size = writer.bytes.length * 2;
  while (size < needed) size *= 2;
  const bytes = new Uint8Array(size);
  bytes.set(writer.bytes.subarray(0, writer.position));
  writer.bytes = bytes;
  writer.view = viewOf(bytes);
};

/**
 * Orders strings by code point, which is the order of their UTF-8 bytes.
 * UTF-16 order differs only where a surrogate meets a unit of E000..FFFF, so
 * at the first difference both units are remapped to put surrogates last.
 */
const compareCodePoints = (left: string, right: string): number => {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    let leftUnit = left.charCodeAt(index);
    let rightUnit = right.charCodeAt(index);
    if (leftUnit === rightUnit) continue;
    if (leftUnit >= 0xd800 && rightUnit >= 0xd800) {
      leftUnit = leftUnit >= 0xe000 ? leftUnit - 0x800 : leftUnit + 0x2000;
      rightUnit = rightUnit >= 0xe000 ? rightUnit - 0x800 : rightUnit + 0x2000;
    }
    return leftUnit - rightUnit;
  }
  return left.length - right.length;
};

const writeString = (
  writer: Writer,
  text: string,
  inKey: boolean,
  tag: number | undefined,
): PathlessEncodeError | undefined => {
  const length = utf8LengthOf(text);
  if (length < 0) return { _tag: "IllFormedString", path: [], inKey, index: -length - 1 };
  if (length > valueLengthMax) {
    return { _tag: "LengthExceeded", path: [], length, lengthMax: valueLengthMax };
  }
  reserve(writer, length + 5);
  if (tag !== undefined) writer.bytes[writer.position++] = tag;
  writer.view.setUint32(writer.position, length);
  writeUtf8(text, length, writer.bytes, writer.position + 4);
  writer.position += 4 + length;
  return undefined;
};

const writeNumber = (writer: Writer, value: number): PathlessEncodeError | undefined => {
  reserve(writer, 9);
  const { view, position } = writer;
  if (Number.isSafeInteger(value)) {
    // -0 lands here too and is written as the integer 0.
    const high = Math.floor(value / twoToThe32);
    view.setUint8(position, valueTags.integer);
    view.setInt32(position + 1, high);
    view.setUint32(position + 5, value - high * twoToThe32);
  } else if (Number.isFinite(value)) {
    view.setUint8(position, valueTags.float);
    view.setFloat64(position + 1, value);
  } else {
    return { _tag: "NonFiniteNumber", path: [], found: value };
  }
  writer.position += 9;
  return undefined;
};

/**
 * Writes `value` at nesting `depth`. Recursion is safe here: depth is
 * checked against `valueDepthMax` before descending, so a cyclic or
 * absurdly deep value stops at 64 frames.
 */
const writeValue = (
  writer: Writer,
  value: Value,
  depth: number,
): PathlessEncodeError | undefined => {
  if (depth > valueDepthMax) return { _tag: "DepthExceeded", path: [], depthMax: valueDepthMax };
  switch (typeof value) {
    case "number":
      return writeNumber(writer, value);
    case "string":
      return writeString(writer, value, false, valueTags.string);
    case "boolean":
      reserve(writer, 1);
      writer.bytes[writer.position++] = value ? valueTags.true : valueTags.false;
      return undefined;
    case "bigint":
      if (value < CoreValue.int64Min || value > CoreValue.int64Max) {
        return { _tag: "IntegerOutOfRange", path: [], found: value };
      }
      // A bigint in the safe range is the same integer on the wire (and
      // decodes as a number): see docs/codec.md, "bigint normalisation".
      reserve(writer, 9);
      writer.view.setUint8(writer.position, valueTags.integer);
      writer.view.setBigInt64(writer.position + 1, value);
      writer.position += 9;
      return undefined;
    case "object":
      if (value === null) {
        reserve(writer, 1);
        writer.bytes[writer.position++] = valueTags.null;
        return undefined;
      }
      if (value instanceof Uint8Array) return writeBytes(writer, value);
      if (Array.isArray(value)) return writeList(writer, value, depth);
      if (value instanceof Map) return writeMap(writer, value, depth);
      return { _tag: "UnsupportedValue", path: [], found: describeObject(value) };
    default:
      return { _tag: "UnsupportedValue", path: [], found: typeof value };
  }
};

const describeObject = (value: object): string =>
  Object.getPrototypeOf(value)?.constructor?.name ?? "object";

const writeBytes = (writer: Writer, value: Uint8Array): PathlessEncodeError | undefined => {
  if (value.length > valueLengthMax) {
    return { _tag: "LengthExceeded", path: [], length: value.length, lengthMax: valueLengthMax };
  }
  reserve(writer, value.length + 5);
  writer.bytes[writer.position] = valueTags.bytes;
  writer.view.setUint32(writer.position + 1, value.length);
  writer.bytes.set(value, writer.position + 5);
  writer.position += 5 + value.length;
  return undefined;
};

const writeList = (
  writer: Writer,
  list: ReadonlyArray<Value>,
  depth: number,
): PathlessEncodeError | undefined => {
  if (list.length > valueLengthMax) {
    return { _tag: "LengthExceeded", path: [], length: list.length, lengthMax: valueLengthMax };
  }
  reserve(writer, 5);
  writer.bytes[writer.position] = valueTags.list;
  writer.view.setUint32(writer.position + 1, list.length);
  writer.position += 5;
  for (let index = 0; index < list.length; index++) {
    const item = list[index];
    // `undefined` (or a hole in a sparse array) is not a value: refuse it
    // rather than guess.
    if (item === undefined) return { _tag: "UnsupportedValue", path: [index], found: "undefined" };
    const error = writeValue(writer, item, depth + 1);
    if (error !== undefined) {
      error.path.push(index);
      return error;
    }
  }
  return undefined;
};

const writeMap = (
  writer: Writer,
  map: CoreValue.ValueMap,
  depth: number,
): PathlessEncodeError | undefined => {
  if (map.size > valueLengthMax) {
    return { _tag: "LengthExceeded", path: [], length: map.size, lengthMax: valueLengthMax };
  }
  const keys: string[] = [];
  let sorted = true;
  let previous = "";
  for (const key of map.keys()) {
    if (typeof key !== "string") {
      return { _tag: "UnsupportedValue", path: [], found: `${typeof key} key` };
    }
    if (sorted && keys.length > 0 && compareCodePoints(previous, key) >= 0) sorted = false;
    keys.push(key);
    previous = key;
  }
  if (!sorted) {
    // Keys are validated before sorting: the order is only meaningful for
    // well-formed strings.
    for (const key of keys) {
      const length = utf8LengthOf(key);
      if (length < 0)
        return { _tag: "IllFormedString", path: [key], inKey: true, index: -length - 1 };
    }
    // The built-in sort (UTF-16 order, no callback) is much faster, and
    // agrees with UTF-8 order except where a surrogate pair meets a
    // character of U+E000..U+FFFF: check, and sort again properly if so.
    keys.sort();
    for (let index = 1; index < keys.length; index++) {
      if (compareCodePoints(keys[index - 1] ?? "", keys[index] ?? "") > 0) {
        keys.sort(compareCodePoints);
        break;
      }
    }
  }
  reserve(writer, 5);
  writer.bytes[writer.position] = valueTags.map;
  writer.view.setUint32(writer.position + 1, keys.length);
  writer.position += 5;
  for (const key of keys) {
    const keyError = writeString(writer, key, true, undefined);
    if (keyError !== undefined) {
      keyError.path.push(key);
      return keyError;
    }
    const item = map.get(key);
    const error =
      item === undefined
        ? { _tag: "UnsupportedValue" as const, path: [], found: "undefined" }
        : writeValue(writer, item, depth + 1);
    if (error !== undefined) {
      error.path.push(key);
      return error;
    }
  }
  return undefined;
};

const withPath = (error: PathlessEncodeError): ValueEncodeError => ({
  ...error,
  // Segments were pushed innermost first while the error bubbled up.
  path: error.path.slice().reverse(),
});

/**
 * Encodes a value in its canonical form: map entries sorted by the UTF-8
 * bytes of their keys, safe integers (and -0) as integers, other finite
 * numbers as floats, bigints as integers.
 *
 * Fails, without throwing, on a non-finite number, a bigint outside int64, a
 * string or key with a lone surrogate, nesting deeper than
 * `valueDepthMax` (which also stops cyclic input), a length beyond u32, or
 * anything that is not a `Value` at run time.
 *
 * @example encodeValue([-0.5, "é", new Uint8Array()])
 *   // Right(07 00000003 04 bfe0000000000000 05 00000002 c3a9 06 00000000)
 */
export const encodeValue = (value: Value): E.Either<ValueEncodeError, Uint8Array> => {
  // A value whose iterator re-enters the encoder gets a fresh buffer.
  const writer = keptWriter ?? newWriter(initialWriterBytes);
  keptWriter = undefined;
  writer.position = 0;
  try {
    const error = writeValue(writer, value, 1);
    if (error !== undefined) return E.left(withPath(error));
    return E.right(writer.bytes.slice(0, writer.position));
  } catch (cause) {
    return E.left({ _tag: "Defect", message: describeDefect(cause) });
  } finally {
    if (writer.bytes.length <= keptWriterBytesMax) keptWriter = writer;
  }
};

// ---------------------------------------------------------------------------
// Decoding

/**
 * Decodes exactly one canonical value from `bytes` (all of it: trailing
 * bytes are refused). Integers outside the safe range become `bigint`, maps
 * become `Map` (so `__proto__` is an ordinary key), byte strings are copies.
 *
 * Never throws: malformed, non-canonical or oversized input is a
 * `ValueDecodeError` whose offset is relative to `bytes`; an unexpected
 * exception would be a `Defect` (a bug).
 *
 * @example decodeValue(Uint8Array.of(0x07, 0, 0, 0, 1, 0x00)) // Right([null])
 */
export const decodeValue = (bytes: Uint8Array): E.Either<ValueDecodeError, Value> => {
  try {
    return decodeValueWithin(bytes, 0, bytes.length, 0, true);
  } catch (cause) {
    return E.left({ _tag: "Defect", message: describeDefect(cause) });
  }
};
