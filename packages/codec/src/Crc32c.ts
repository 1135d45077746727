/// <reference path="./fast-crc32c.d.ts" />
/**
 * CRC-32C (Castagnoli): the only checksum of the on-disk format.
 *
 * Reflected polynomial 0x82F63B78, init 0xFFFFFFFF, final xor 0xFFFFFFFF, not
 * masked (FORMAT.md). The work is done by `fast-crc32c`, which uses the SSE4.2
 * instruction where the native addon built and a table otherwise.
 */
import fastCrc32c from "fast-crc32c";

/**
 * CRC-32C of `bytes` as an unsigned 32-bit integer.
 *
 * `initial` continues a previous result: `crc32c(b, crc32c(a))` equals the
 * CRC of `a` followed by `b`, which is how a record CRC extends its header
 * CRC and a segment CRC grows record by record. Never fails.
 *
 * @example crc32c(new TextEncoder().encode("123456789")) === 0xe3069283
 */
export const crc32c = (bytes: Uint8Array, initial = 0): number =>
  // `>>> 0` pins the result (and a caller's `initial`) to unsigned 32 bits
  // whatever the binding returns.
  fastCrc32c.calculate(bytes, initial >>> 0) >>> 0;
