/**
 * Small big-endian helpers shared by every layout of the codec. Callers
 * check bounds first: these read and write without checking.
 */

/** 2^32, to combine the two halves of a u64. */
export const twoToThe32 = 4_294_967_296;

/** A DataView over exactly the bytes of `bytes`, honouring its byteOffset. */
export const viewOf = (bytes: Uint8Array): DataView =>
  new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * Reads the u64 at `offset` as a number, or returns -1 when it exceeds
 * 2^53-1 (FORMAT.md's `BeyondSafeInteger`; the caller names the field).
 */
export const readU64 = (view: DataView, offset: number): number => {
  const high = view.getUint32(offset);
  const low = view.getUint32(offset + 4);
  // 2^53-1 is high 0x1fffff with any low half.
  if (high > 0x1f_ffff) return -1;
  return high * twoToThe32 + low;
};

/** Writes a safe non-negative integer as a big-endian u64 at `offset`. */
export const writeU64 = (view: DataView, offset: number, value: number): void => {
  view.setUint32(offset, Math.floor(value / twoToThe32));
  view.setUint32(offset + 4, value >>> 0);
};

/** Lexicographic byte order of two ranges of the same or different arrays. */
export const compareRanges = (
  left: Uint8Array,
  leftStart: number,
  leftEnd: number,
  right: Uint8Array,
  rightStart: number,
  rightEnd: number,
): number => {
  const leftLength = leftEnd - leftStart;
  const rightLength = rightEnd - rightStart;
  const length = Math.min(leftLength, rightLength);
  for (let index = 0; index < length; index++) {
    const difference = (left[leftStart + index] ?? 0) - (right[rightStart + index] ?? 0);
    if (difference !== 0) return difference;
  }
  return leftLength - rightLength;
};

/** True when `value` is an integer in `minimum..maximum`. */
export const isIntegerIn = (value: number, minimum: number, maximum: number): boolean =>
  Number.isInteger(value) && value >= minimum && value <= maximum;

/** A short message for an unexpected exception, for `Defect` results. */
export const describeDefect = (cause: unknown): string =>
  cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);

/**
 * A fresh copy of `bytes[start..end)`. (`slice` would do, except that a
 * Node `Buffer` overrides it to return a view.)
 */
export const copyOf = (bytes: Uint8Array, start: number, end: number): Uint8Array => {
  const copy = new Uint8Array(end - start);
  copy.set(bytes.subarray(start, end));
  return copy;
};

/**
 * `bytes` with room for `needed` bytes: itself when it has it, else a copy
 * of its first `used` bytes in a buffer doubled (from at least `minimum`
 * bytes) until it fits. Both growing buffers of the codec, a value
 * writer's and a record buffer's, grow this way.
 */
export const withRoom = (
  bytes: Uint8Array,
  used: number,
  needed: number,
  minimum: number,
): Uint8Array => {
  if (needed <= bytes.length) return bytes;
  let size = Math.max(bytes.length * 2, minimum, 1);
  while (size < needed) size *= 2;
  const grown = new Uint8Array(size);
  grown.set(bytes.subarray(0, used));
  return grown;
};
