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
import { describeDefect } from "./internal/bytes.js";
import { decodeValueWithin, valueTags as tags } from "./internal/valueDecode.js";
import {
  initialWriterBytes,
  keptWriterBytesMax,
  newWriter,
  type PathlessEncodeError,
  valueLengthMax as lengthMax,
  type Writer,
  writeValue,
} from "./internal/valueEncode.js";
import type { ValueDecodeError, ValueEncodeError } from "./internal/valueErrors.js";

export type { Utf8ErrorReason } from "./internal/utf8.js";
export type {
  NonCanonicalReason,
  ValueDecodeError,
  ValueEncodeError,
  ValuePath,
} from "./internal/valueErrors.js";

type Value = CoreValue.Value;

/** Tag bytes of the encoding. */
export const valueTags = tags;

/** Deepest nesting accepted either way: a top-level scalar has depth 1. */
export const valueDepthMax = CoreValue.valueDepthMax;

/** Largest byte length or count a u32 length field carries. */
export const valueLengthMax = lengthMax;

// ---------------------------------------------------------------------------
// Encoding (the writer itself is internal/valueEncode.ts)

/** One writer is kept between calls to spare allocations. */
let keptWriter: Writer | undefined = newWriter(initialWriterBytes);

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
    return decodeValueWithin(bytes, { at: 0 }, bytes.length, 0, true);
  } catch (cause) {
    return E.left({ _tag: "Defect", message: describeDefect(cause) });
  }
};
