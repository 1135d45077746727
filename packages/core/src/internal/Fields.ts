/**
 * Field-kind checks shared by the fold and the deciders (EVENTS.md "Field
 * kinds"). They are cheap on the common path: a string's UTF-8 length is
 * only computed when its UTF-16 length cannot decide the bound alone.
 */
import * as Limits from "../Limits.js";

/** An `id`: integer 1..2^53-1. */
export const isId = (value: number): boolean =>
  Number.isSafeInteger(value) && value >= Limits.idMin;

/** A `time`: integer 0..2^53-1 (ms). */
export const isTime = (value: number): boolean =>
  Number.isSafeInteger(value) && value >= Limits.timeMin;

/** The number as the encoding carries it: `-0` is the integer 0, every other number itself. */
export const canonicalNumber = (value: number): number => (value === 0 ? 0 : value);

/** An integer in [min, max]. */
export const isIntegerIn = (value: number, min: number, max: number): boolean =>
  Number.isSafeInteger(value) && value >= min && value <= max;

/** Up to this many units, the loop below is cheaper than the native scans. */
const shortTextUnitsMax = 48;
const nonAscii = /[\u0080-\uffff]/;
/**
 * From this many units, encoding into a scratch buffer counts the bytes
 * faster than the regular expression scans for a non-ASCII unit: 55 against
 * 121 ns for a 195-unit JSON text, 65 against 216 at 495; below ~100 units
 * the scan wins (2026-12-06, Node 20). Every job's args pass here once.
 */
const encodeUnitsMin = 100;
const utf8 = new TextEncoder();
/** Written by `encodeInto` only to count; never read. */
const scratch = new Uint8Array(16 * 1024);
/** A well-formed unit takes at most 3 bytes: strings up to this fit the scratch whole. */
const encodeUnitsMax = scratch.length / 3;

/**
 * UTF-8 byte length of a well-formed string, or -1 when it holds a lone
 * surrogate (which no UTF-8 encoder can represent faithfully).
 */
export const utf8Length = (text: string): number => {
  // Long strings (args, errors) are usually ASCII: two native scans
  // (isWellFormed is O(1) on V8's one-byte strings) instead of a loop that
  // costs ~1.7 ns per unit.
  if (text.length > shortTextUnitsMax) {
    if (!text.isWellFormed()) return -1;
    // Well formed, so `encodeInto` replaces nothing and its count is exact.
    if (text.length >= encodeUnitsMin && text.length <= encodeUnitsMax) {
      return utf8.encodeInto(text, scratch).written;
    }
    if (!nonAscii.test(text)) return text.length;
  }
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return -1;
      bytes += 4;
      index++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return -1;
    else bytes += 3;
  }
  return bytes;
};

/** True when `text` is well formed and its UTF-8 length is within [min, max]. */
export const hasUtf8LengthIn = (text: string, min: number, max: number): boolean => {
  // Callers bound the UTF-16 length first (a unit is at least one byte),
  // so this scan is short; it also rejects lone surrogates.
  const bytes = utf8Length(text);
  return bytes >= min && bytes <= max;
};

/** A `name`: 1..255 UTF-8 bytes, well formed (what the codec can encode). */
export const isName = (text: string): boolean =>
  typeof text === "string" &&
  text.length >= 1 &&
  text.length <= Limits.nameBytesMax &&
  hasUtf8LengthIn(text, Limits.nameBytesMin, Limits.nameBytesMax);

// A UTF-16 unit is at most 3 UTF-8 bytes: strings this short fit any bound
// without a scan.
const nameUnitsSafe = Math.floor(Limits.nameBytesMax / 3);
const textUnitsSafe = Math.floor(Limits.textBytesMax / 3);

/**
 * The fold's check of a `name`: its byte length only, scanning just the
 * rare long strings. The codec has already refused malformed UTF-8 in
 * decoded records; the deciders use the full `isName`.
 */
export const isNameKind = (text: string): boolean =>
  typeof text === "string" && text.length >= 1 && (text.length <= nameUnitsSafe || isName(text));

/** The fold's check of a `text` (see `isNameKind`). */
export const isTextKind = (text: string): boolean =>
  typeof text === "string" && (text.length <= textUnitsSafe || isText(text));

/** The fold's check of a `text|null`. */
export const isTextKindOrNull = (text: string | null): boolean => text === null || isTextKind(text);

/** A `text`: 0..65,535 UTF-8 bytes. */
export const isText = (text: string): boolean =>
  typeof text === "string" &&
  text.length <= Limits.textBytesMax &&
  hasUtf8LengthIn(text, 0, Limits.textBytesMax);

/** A `text|null`. */
export const isTextOrNull = (text: string | null): boolean => text === null || isText(text);

/** A `time|null`. */
export const isTimeOrNull = (value: number | null): boolean => value === null || isTime(value);
