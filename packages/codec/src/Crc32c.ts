/**
 * CRC-32C (Castagnoli): the only checksum of the on-disk format.
 *
 * Reflected polynomial 0x82F63B78, init 0xFFFFFFFF, final xor 0xFFFFFFFF, not
 * masked (FORMAT.md). The fast path is `fast-crc32c` (the SSE4.2 instruction
 * where its native addon built); where it cannot load (a browser, a bundle,
 * a runtime that refuses the addon) a slicing-by-8 table in plain
 * JavaScript computes the same values. The choice is made once, at load,
 * and `crc32cImplementation` says which.
 */
import { type Crc32cFunction, loadNative } from "./internal/crc32cNative.js";
import { crc32cSlicing } from "./internal/crc32cSlicing.js";

const native = loadNative();

/**
 * Which implementation `crc32c` uses here: `native` (fast-crc32c) or
 * `portable` (slicing-by-8 in JavaScript). Both give the same results.
 */
export const crc32cImplementation: "native" | "portable" = native === null ? "portable" : "native";

const chosen: Crc32cFunction = native ?? crc32cSlicing;

/**
 * CRC-32C of `bytes` as an unsigned 32-bit integer.
 *
 * `initial` continues a previous result: `crc32c(b, crc32c(a))` equals the
 * CRC of `a` followed by `b`, which is how a record CRC extends its header
 * CRC and a segment CRC grows record by record. Never fails.
 *
 * @example crc32c(new TextEncoder().encode("123456789")) === 0xe3069283
 */
export const crc32c = (bytes: Uint8Array, initial = 0): number => chosen(bytes, initial >>> 0);
