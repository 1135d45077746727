/**
 * UTF-8 for the value codec: byte length and well-formedness of JavaScript
 * strings on the way out, validation with a precise offset and decoding on
 * the way in. Short strings take hand-written loops (a TextEncoder or
 * TextDecoder call costs more than the work for a few bytes); long ones go
 * to the platform's encoder and decoder.
 */

/** Why a byte range is not well-formed UTF-8 (Unicode table 3-7). */
export type Utf8ErrorReason =
  | "UnexpectedContinuation"
  | "InvalidByte"
  | "Overlong"
  | "Surrogate"
  | "BeyondUnicode"
  | "MissingContinuation"
  | "Truncated";

/** The first ill-formed byte of a range and why. */
export interface Utf8Failure {
  readonly offset: number;
  readonly reason: Utf8ErrorReason;
}

/**
 * Up to this many bytes, strings are encoded by hand (TextEncoder.encodeInto
 * costs more than the loop below that); and decoded by hand up to the
 * second bound (measured on Node 20: TextDecoder.decode takes about 100 ns
 * whatever the length, a concatenation loop about 6 ns per character).
 */
const shortEncodeBytesMax = 48;
const shortDecodeBytesMax = 12;

const encoder = new TextEncoder();
// `ignoreBOM: true` keeps a leading U+FEFF as data: the default would drop
// it and break the round trip. `fatal` only serves as a fast validity check;
// the precise failure comes from `findUtf8Failure`.
const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The UTF-8 byte length of `text`, or `-(index + 1)` for the UTF-16 index of
 * its first lone surrogate (such a string has no UTF-8 form).
 */
export const utf8LengthOf = (text: string): number => {
  let length = text.length;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) continue;
    if (unit < 0x800) {
      length += 1;
    } else if (unit < 0xd800 || unit > 0xdfff) {
      length += 2;
    } else {
      const next = text.charCodeAt(index + 1);
      // A high surrogate followed by a low one is one code point of 4 bytes
      // (2 units counted already); anything else is a lone surrogate.
      if (unit > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return -(index + 1);
      length += 2;
      index++;
    }
  }
  return length;
};

/**
 * Writes a well-formed `text` whose UTF-8 length the caller knows, at
 * `offset`. The target has room (checked by the caller).
 */
export const writeUtf8 = (
  text: string,
  byteLength: number,
  target: Uint8Array,
  offset: number,
): void => {
  if (byteLength === text.length) {
    // ASCII: one byte per unit.
    for (let index = 0; index < byteLength; index++)
      target[offset + index] = text.charCodeAt(index);
    return;
  }
  if (byteLength > shortEncodeBytesMax) {
    encoder.encodeInto(text, target.subarray(offset, offset + byteLength));
    return;
  }
  let position = offset;
  for (let index = 0; index < text.length; index++) {
    let point = text.charCodeAt(index);
    if (point >= 0xd800 && point <= 0xdbff) {
      // Well-formed by contract: a low surrogate follows.
      point = 0x10000 + ((point - 0xd800) << 10) + (text.charCodeAt(index + 1) - 0xdc00);
      index++;
    }
    if (point < 0x80) {
      target[position++] = point;
    } else if (point < 0x800) {
      target[position++] = 0xc0 | (point >>> 6);
      target[position++] = 0x80 | (point & 0x3f);
    } else if (point < 0x10000) {
      target[position++] = 0xe0 | (point >>> 12);
      target[position++] = 0x80 | ((point >>> 6) & 0x3f);
      target[position++] = 0x80 | (point & 0x3f);
    } else {
      target[position++] = 0xf0 | (point >>> 18);
      target[position++] = 0x80 | ((point >>> 12) & 0x3f);
      target[position++] = 0x80 | ((point >>> 6) & 0x3f);
      target[position++] = 0x80 | (point & 0x3f);
    }
  }
};

/**
 * Writes `text` as UTF-8 at `offset` and returns the byte count, or -1 when
 * it holds a lone surrogate (it has no UTF-8 form; nothing useful is
 * written then). The target must have room for `3 * text.length` bytes
 * from `offset`, the most a UTF-16 unit takes. Long strings skip the
 * separate measuring pass: `isWellFormed` is O(1) on V8's one-byte strings
 * and `encodeInto` copies them natively (200 ASCII characters: ~100 ns
 * against ~800 ns for measuring then writing them by hand).
 */
export const writeUtf8Measured = (text: string, target: Uint8Array, offset: number): number => {
  if (text.length <= shortEncodeBytesMax) {
    const length = utf8LengthOf(text);
    if (length >= 0) writeUtf8(text, length, target, offset);
    return length < 0 ? -1 : length;
  }
  if (!text.isWellFormed()) return -1;
  return encoder.encodeInto(text, target.subarray(offset, offset + 3 * text.length)).written;
};

const isContinuation = (byte: number): boolean => (byte & 0xc0) === 0x80;

/**
 * The first ill-formed sequence in `bytes[start..end)`, or undefined when the
 * range is well-formed UTF-8. Offsets are indexes into `bytes`.
 */
export const findUtf8Failure = (
  bytes: Uint8Array,
  start: number,
  end: number,
): Utf8Failure | undefined => {
  let position = start;
  while (position < end) {
    const lead = bytes[position] ?? 0;
    if (lead < 0x80) {
      position++;
      continue;
    }
    let needed: number;
    // Bounds for the second byte, narrower than 80..BF after E0, ED, F0, F4.
    let secondMin = 0x80;
    let secondMax = 0xbf;
    let secondReason: Utf8ErrorReason = "MissingContinuation";
    if (lead < 0xc0) return { offset: position, reason: "UnexpectedContinuation" };
    if (lead < 0xc2) return { offset: position, reason: "Overlong" };
    if (lead < 0xe0) {
      needed = 1;
    } else if (lead < 0xf0) {
      needed = 2;
      if (lead === 0xe0) {
        secondMin = 0xa0;
        secondReason = "Overlong";
      } else if (lead === 0xed) {
        secondMax = 0x9f;
        secondReason = "Surrogate";
      }
    } else if (lead < 0xf5) {
      needed = 3;
      if (lead === 0xf0) {
        secondMin = 0x90;
        secondReason = "Overlong";
      } else if (lead === 0xf4) {
        secondMax = 0x8f;
        secondReason = "BeyondUnicode";
      }
    } else if (lead < 0xf8) {
      return { offset: position, reason: "BeyondUnicode" };
    } else {
      return { offset: position, reason: "InvalidByte" };
    }
    for (let index = 1; index <= needed; index++) {
      if (position + index >= end) return { offset: position, reason: "Truncated" };
      const byte = bytes[position + index] ?? 0;
      if (!isContinuation(byte)) return { offset: position + index, reason: "MissingContinuation" };
      if (index === 1 && (byte < secondMin || byte > secondMax)) {
        return { offset: position, reason: secondReason };
      }
    }
    position += needed + 1;
  }
  return undefined;
};

/** UTF-16 units per `String.fromCharCode` call: far below engines' argument limits. */
const unitsPerChunk = 4096;
const units: number[] = [];

/**
 * Decodes `bytes[start..end)` by hand, or returns undefined at the first
 * ill-formed sequence. Collects UTF-16 units in the shared `units` array
 * (the codec is synchronous, so nothing else uses it meanwhile).
 */
const decodeByHand = (bytes: Uint8Array, start: number, end: number): string | undefined => {
  let text = "";
  let count = 0;
  let position = start;
  while (position < end) {
    if (count >= unitsPerChunk) {
      text += unitsToString(count);
      count = 0;
    }
    const lead = bytes[position] ?? 0;
    if (lead < 0x80) {
      units[count++] = lead;
      position++;
      continue;
    }
    let point: number;
    let size: number;
    let minimum: number;
    if (lead >= 0xc2 && lead < 0xe0) {
      size = 2;
      point = lead & 0x1f;
      minimum = 0x80;
    } else if (lead >= 0xe0 && lead < 0xf0) {
      size = 3;
      point = lead & 0x0f;
      minimum = 0x800;
    } else if (lead >= 0xf0 && lead < 0xf5) {
      size = 4;
      point = lead & 0x07;
      minimum = 0x10000;
    } else {
      return undefined;
    }
    if (position + size > end) return undefined;
    for (let index = 1; index < size; index++) {
      const byte = bytes[position + index] ?? 0;
      if (!isContinuation(byte)) return undefined;
      point = (point << 6) | (byte & 0x3f);
    }
    if (point < minimum || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) {
      return undefined;
    }
    if (point >= 0x10000) {
      point -= 0x10000;
      units[count++] = 0xd800 | (point >>> 10);
      units[count++] = 0xdc00 | (point & 0x3ff);
    } else {
      units[count++] = point;
    }
    position += size;
  }
  return text + unitsToString(count);
};

const unitsToString = (count: number): string => {
  units.length = count;
  return String.fromCharCode.apply(null, units);
};

/**
 * Decoded short strings by their bytes: payloads repeat the same keys
 * (`job_id`, `queue`, ...) and names over and over, and a cached string
 * costs no allocation and comes with its hash computed, which makes the
 * `Map.set` that follows cheaper too. A slot holds the last string whose
 * bytes hashed to it; a hit is confirmed by comparing the bytes, so the
 * cache never changes a result.
 */
const cacheSlots = 4096;
const cachedBytesMax = 16;
// Slot `i` holds its bytes at `i * cachedBytesMax` and their count in
// `cachedLengths[i]` (0: empty; the empty string never reaches the cache).
// One preallocated array: a miss must not allocate.
const cachedBytes = new Uint8Array(cacheSlots * cachedBytesMax);
const cachedLengths = new Uint8Array(cacheSlots);
const cachedTexts: string[] = new Array(cacheSlots).fill("");

const decodeShort = (bytes: Uint8Array, start: number, end: number): string | Utf8Failure => {
  // Concatenating ASCII characters beats any call for a few bytes (and V8
  // keeps strings under 13 characters flat).
  let text = "";
  for (let index = start; index < end; index++) {
    const byte = bytes[index] ?? 0;
    if (byte >= 0x80) return decodeByHand(bytes, start, end) ?? failureAt(bytes, start, end);
    text += String.fromCharCode(byte);
  }
  return text;
};

const decodeCached = (bytes: Uint8Array, start: number, end: number): string | Utf8Failure => {
  const length = end - start;
  // FNV-1a over the bytes.
  let hash = 0x811c_9dc5 ^ length;
  for (let index = start; index < end; index++) {
    hash = Math.imul(hash ^ (bytes[index] ?? 0), 0x0100_0193);
  }
  const slot = (hash ^ (hash >>> 16)) & (cacheSlots - 1);
  const base = slot * cachedBytesMax;
  if (cachedLengths[slot] === length) {
    let same = true;
    for (let index = 0; index < length; index++) {
      if (cachedBytes[base + index] !== bytes[start + index]) {
        same = false;
        break;
      }
    }
    if (same) return cachedTexts[slot] ?? "";
  }
  const text =
    length <= shortDecodeBytesMax ? decodeShort(bytes, start, end) : decodeLong(bytes, start, end);
  if (typeof text === "string") {
    for (let index = 0; index < length; index++)
      cachedBytes[base + index] = bytes[start + index] ?? 0;
    cachedLengths[slot] = length;
    cachedTexts[slot] = text;
  }
  return text;
};

const decodeLong = (bytes: Uint8Array, start: number, end: number): string | Utf8Failure => {
  let text: string | undefined;
  try {
    text = fatalDecoder.decode(bytes.subarray(start, end));
  } catch {
    // Ill-formed, or a view the platform decoder refuses: the hand decoder
    // below tells the two apart.
    text = undefined;
  }
  return text ?? decodeByHand(bytes, start, end) ?? failureAt(bytes, start, end);
};

/**
 * Decodes a range that must be well-formed UTF-8: the string, or the first
 * failure. Never throws.
 */
export const decodeUtf8 = (bytes: Uint8Array, start: number, end: number): string | Utf8Failure => {
  const length = end - start;
  if (length === 0) return "";
  if (length <= cachedBytesMax) return decodeCached(bytes, start, end);
  return decodeLong(bytes, start, end);
};

const failureAt = (bytes: Uint8Array, start: number, end: number): Utf8Failure =>
  // The hand decoder and `findUtf8Failure` implement the same table, so a
  // failure exists here; the fallback keeps the function total.
  findUtf8Failure(bytes, start, end) ?? { offset: start, reason: "InvalidByte" };
