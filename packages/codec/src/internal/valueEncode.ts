/**
 * The writer of the canonical value encoding (FORMAT.md): a growable buffer
 * and the functions that write each kind of value into it. `Value.ts`'s
 * `encodeValue` drives it for whole values; `directEncode.ts` writes event
 * payloads around it and hands it `args` and `result`, so both produce the
 * same bytes for the same value.
 */
import { Value as CoreValue } from "@tay/core";
import { twoToThe32, viewOf, withRoom } from "./bytes.js";
import { utf8LengthOf, writeUtf8Measured } from "./utf8.js";
import { valueTags } from "./valueDecode.js";

type Value = CoreValue.Value;

const valueDepthMax = CoreValue.valueDepthMax;

/** Largest byte length or count a u32 length field carries. */
export const valueLengthMax = 0xffff_ffff;

/** An encoding error without its path, which is built while it bubbles up. */
export type PathlessEncodeError = { readonly path: Array<string | number> } & (
  | { readonly _tag: "NonFiniteNumber"; readonly found: number }
  | { readonly _tag: "IntegerOutOfRange"; readonly found: bigint }
  | { readonly _tag: "IllFormedString"; readonly inKey: boolean; readonly index: number }
  | { readonly _tag: "DepthExceeded"; readonly depthMax: number }
  | { readonly _tag: "LengthExceeded"; readonly length: number; readonly lengthMax: number }
  | { readonly _tag: "UnsupportedValue"; readonly found: string }
);

/** A growable output buffer; callers keep one between calls to spare allocations. */
export interface Writer {
  bytes: Uint8Array;
  view: DataView;
  position: number;
}

/** The size of a fresh writer's buffer. */
export const initialWriterBytes = 1024;
/** A kept buffer larger than this is dropped after use rather than held on to. */
export const keptWriterBytesMax = 1 << 20;

/** A writer with a buffer of `size` bytes, at position 0. */
export const newWriter = (size: number): Writer => {
  const bytes = new Uint8Array(size);
  return { bytes, view: viewOf(bytes), position: 0 };
};

/** Grows the writer's buffer so that `count` more bytes fit after its position. */
export const reserve = (writer: Writer, count: number): void => {
  const needed = writer.position + count;
  if (needed <= writer.bytes.length) return;
  writer.bytes = withRoom(writer.bytes, writer.position, needed, 0);
  writer.view = viewOf(writer.bytes);
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
  // Room for the longest form: the length is known once the text is written.
  reserve(writer, 5 + 3 * text.length);
  const tagBytes = tag === undefined ? 0 : 1;
  const start = writer.position + tagBytes + 4;
  const length = writeUtf8Measured(text, writer.bytes, start);
  if (length < 0) {
    return { _tag: "IllFormedString", path: [], inKey, index: -utf8LengthOf(text) - 1 };
  }
  if (length > valueLengthMax) {
    return { _tag: "LengthExceeded", path: [], length, lengthMax: valueLengthMax };
  }
  if (tag !== undefined) writer.bytes[writer.position] = tag;
  writer.view.setUint32(start - 4, length);
  writer.position = start + length;
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
export const writeValue = (
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
