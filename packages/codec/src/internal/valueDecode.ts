/**
 * The value decoder of FORMAT.md's canonical encoding, over a range of a
 * larger array: `Value.decodeValue` runs it over a whole payload, and the
 * event layer's direct decoders (`directEvent.ts`) run it over the `args`
 * or `result` inside a payload they read field by field, with the same
 * checks and the same depth limit counted from the payload's root.
 *
 * It checks every length against the bytes that remain before allocating
 * and walks nesting with an explicit stack, so hostile input costs at most
 * its own size.
 */
import { Value as CoreValue } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import type { NonCanonicalReason, ValueDecodeError } from "../Value.js";
import { compareRanges, copyOf, twoToThe32, viewOf } from "./bytes.js";
import { decodeUtf8 } from "./utf8.js";

type Value = CoreValue.Value;

const valueDepthMax = CoreValue.valueDepthMax;

/** Tag bytes of the encoding (`Value.valueTags`). */
export const valueTags = {
  null: 0x00,
  false: 0x01,
  true: 0x02,
  integer: 0x03,
  float: 0x04,
  string: 0x05,
  bytes: 0x06,
  list: 0x07,
  map: 0x08,
} as const;

/** An open list or map while decoding: what is left to read into it. */
interface Frame {
  readonly list: Value[] | undefined;
  readonly map: Map<string, Value> | undefined;
  remaining: number;
  /** The key of the entry being read, and where its bytes are (for order). */
  key: string;
  keyStart: number;
  keyEnd: number;
}

type Decoded = E.Either<ValueDecodeError, Value>;

const unexpectedEnd = (offset: number, needed: number): Decoded =>
  E.left({ _tag: "UnexpectedEnd", offset, needed });

const beyondInput = (offset: number, length: number, remaining: number): Decoded =>
  E.left({ _tag: "LengthBeyondInput", offset, length, remaining });

const nonCanonical = (offset: number, reason: NonCanonicalReason): Decoded =>
  E.left({ _tag: "NonCanonical", offset, reason });

/** Bytes a map entry takes at least: a 4-byte key length and a 1-byte value. */
const mapEntryBytesMin = 5;

const readU32 = (bytes: Uint8Array, offset: number): number =>
  (((bytes[offset] ?? 0) << 24) |
    ((bytes[offset + 1] ?? 0) << 16) |
    ((bytes[offset + 2] ?? 0) << 8) |
    (bytes[offset + 3] ?? 0)) >>>
  0;

// Eight bytes to read a float or a big integer through, so that decoding
// needs no DataView over its input (creating one costs more than the
// reads of a typical payload). Shared, but it holds nothing between
// statements: `scratchOf` fills it and the very next call reads it, with
// no code of anyone else in between.
const scratch = new Uint8Array(8);
const scratchView = viewOf(scratch);

const scratchOf = (bytes: Uint8Array, offset: number): DataView => {
  for (let index = 0; index < 8; index++) scratch[index] = bytes[offset + index] ?? 0;
  return scratchView;
};

/**
 * Where a read stands in its bytes. The caller's own: `decodeValueWithin`
 * starts at `at` and, when it accepts a value, moves `at` to the index after
 * the value's last byte (a refusal leaves it where it was). Nothing about a
 * call outlives it in this module, so a decode may run inside another.
 */
export interface ValueCursor {
  at: number;
}

/**
 * Decodes one canonical value starting at `cursor.at` in `bytes[..end)`.
 *
 * `enclosingDepth` is the number of containers around the value in the
 * payload it belongs to (0 for a whole payload), so the depth limit counts
 * from the payload's root. With `exact`, the value must fill the range
 * (`TrailingBytes` otherwise); without it, decoding stops after the value,
 * and the cursor says where. Offsets in errors are indexes into `bytes`.
 * Throws only on a bug (the public edge guards it).
 */
export const decodeValueWithin = (
  bytes: Uint8Array,
  cursor: ValueCursor,
  end: number,
  enclosingDepth: number,
  exact: boolean,
): Decoded => {
  const stack: Frame[] = [];
  // The innermost open container (the top of `stack`), kept at hand.
  let top: Frame | undefined;
  let position = cursor.at;
  const depthMax = valueDepthMax - enclosingDepth;
  for (;;) {
    if (top !== undefined && top.map !== undefined) {
      // A map entry starts with its key: u32 length and UTF-8, no tag.
      if (end - position < 4) return unexpectedEnd(position, 4);
      const keyLength = readU32(bytes, position);
      const keyStart = position + 4;
      if (keyLength > end - keyStart) return beyondInput(position, keyLength, end - keyStart);
      const keyEnd = keyStart + keyLength;
      if (top.keyEnd >= 0) {
        const order = compareRanges(bytes, top.keyStart, top.keyEnd, bytes, keyStart, keyEnd);
        if (order === 0) return nonCanonical(position, "DuplicateKey");
        if (order > 0) return nonCanonical(position, "KeyOrder");
      }
      const key = decodeUtf8(bytes, keyStart, keyEnd);
      if (typeof key !== "string") {
        return E.left({ _tag: "InvalidUtf8", offset: key.offset, reason: key.reason });
      }
      top.key = key;
      top.keyStart = keyStart;
      top.keyEnd = keyEnd;
      position = keyEnd;
    }
    if (position >= end) return unexpectedEnd(position, 1);
    if (stack.length >= depthMax) {
      return E.left({ _tag: "DepthExceeded", offset: position, depthMax: valueDepthMax });
    }
    const offset = position;
    let value: Value;
    switch (bytes[position]) {
      case valueTags.null:
        value = null;
        position += 1;
        break;
      case valueTags.false:
        value = false;
        position += 1;
        break;
      case valueTags.true:
        value = true;
        position += 1;
        break;
      case valueTags.integer: {
        if (end - position < 9) return unexpectedEnd(position, 9);
        const high = readU32(bytes, position + 1) | 0;
        const low = readU32(bytes, position + 5);
        // Safe integers are -(2^53-1)..2^53-1: high in -2^21..2^21-1,
        // except -2^53 itself (high -2^21, low 0).
        value =
          high >= -0x20_0000 && high < 0x20_0000 && (high !== -0x20_0000 || low !== 0)
            ? high * twoToThe32 + low
            : scratchOf(bytes, position + 1).getBigInt64(0);
        position += 9;
        break;
      }
      case valueTags.float: {
        if (end - position < 9) return unexpectedEnd(position, 9);
        const float = scratchOf(bytes, position + 1).getFloat64(0);
        if (!Number.isFinite(float)) return nonCanonical(position, "NonFiniteFloat");
        if (Object.is(float, -0)) return nonCanonical(position, "NegativeZero");
        if (Number.isSafeInteger(float)) return nonCanonical(position, "FloatIsInteger");
        value = float;
        position += 9;
        break;
      }
      case valueTags.string: {
        if (end - position < 5) return unexpectedEnd(position, 5);
        const length = readU32(bytes, position + 1);
        const start = position + 5;
        if (length > end - start) return beyondInput(position, length, end - start);
        const text = decodeUtf8(bytes, start, start + length);
        if (typeof text !== "string") {
          return E.left({ _tag: "InvalidUtf8", offset: text.offset, reason: text.reason });
        }
        value = text;
        position = start + length;
        break;
      }
      case valueTags.bytes: {
        if (end - position < 5) return unexpectedEnd(position, 5);
        const length = readU32(bytes, position + 1);
        const start = position + 5;
        if (length > end - start) return beyondInput(position, length, end - start);
        // A copy: a decoded value must not alias (or pin) the input buffer.
        value = copyOf(bytes, start, start + length);
        position = start + length;
        break;
      }
      case valueTags.list: {
        if (end - position < 5) return unexpectedEnd(position, 5);
        const count = readU32(bytes, position + 1);
        const remaining = end - position - 5;
        // Every item takes at least one byte.
        if (count > remaining) return beyondInput(position, count, remaining);
        position += 5;
        const list: Value[] = [];
        if (count > 0) {
          top = { list, map: undefined, remaining: count, key: "", keyStart: 0, keyEnd: -1 };
          stack.push(top);
          continue;
        }
        value = list;
        break;
      }
      case valueTags.map: {
        if (end - position < 5) return unexpectedEnd(position, 5);
        const count = readU32(bytes, position + 1);
        const remaining = end - position - 5;
        if (count * mapEntryBytesMin > remaining) return beyondInput(position, count, remaining);
        position += 5;
        const map = new Map<string, Value>();
        if (count > 0) {
          top = { list: undefined, map, remaining: count, key: "", keyStart: 0, keyEnd: -1 };
          stack.push(top);
          continue;
        }
        value = map;
        break;
      }
      default:
        return E.left({ _tag: "UnknownTag", offset, found: bytes[position] ?? 0 });
    }
    // Hand the finished value to its container; close every container it
    // completes, which hands that container up in turn.
    for (;;) {
      const frame = top;
      if (frame === undefined) {
        if (exact && position < end) {
          return E.left({ _tag: "TrailingBytes", offset: position, count: end - position });
        }
        cursor.at = position;
        return E.right(value);
      }
      if (frame.map !== undefined) frame.map.set(frame.key, value);
      else frame.list?.push(value);
      frame.remaining -= 1;
      if (frame.remaining > 0) break;
      stack.pop();
      top = stack[stack.length - 1];
      value = frame.map ?? frame.list ?? null;
    }
  }
};
