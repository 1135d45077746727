/// <reference path="../fast-crc32c.d.ts" />
/**
 * fast-crc32c, kept only if it works here.
 *
 * Its loader `require`s its implementations by a computed name: a bundler
 * cannot follow that, so in a bundle (and in a browser, where its own
 * fallback needs Node's `Buffer`) every implementation fails to load and
 * `calculate` throws. Node, and runtimes that load its Node-API addon,
 * get the SSE4.2 instruction. The probe below decides once, at load.
 */
import fastCrc32c from "fast-crc32c";

/** A CRC-32C function: `(bytes, initial) => crc`, unsigned. */
export type Crc32cFunction = (bytes: Uint8Array, initial: number) => number;

/** FORMAT.md's check input, "123456789", and its CRC-32C. */
const checkInput = Uint8Array.of(0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39);
const checkValue = 0xe306_9283;

/** fast-crc32c's `calculate`, unsigned; throws where none of its implementations loaded. */
export const viaFastCrc32c: Crc32cFunction = (bytes, initial) =>
  // `>>> 0` pins the result (and a caller's `initial`) to unsigned 32 bits
  // whatever the binding returns.
  fastCrc32c.calculate(bytes, initial >>> 0) >>> 0;

/**
 * True when `implementation` gives the check value, continues a previous
 * result, and reads a view with a non-zero byteOffset as its own bytes:
 * what every caller of `crc32c` relies on.
 */
export const behaves = (implementation: Crc32cFunction): boolean => {
  const padded = new Uint8Array(checkInput.length + 3);
  padded.set(checkInput, 2);
  return (
    implementation(checkInput, 0) === checkValue &&
    implementation(checkInput.subarray(4), implementation(checkInput.subarray(0, 4), 0)) ===
      checkValue &&
    implementation(padded.subarray(2, 2 + checkInput.length), 0) === checkValue
  );
};

/**
 * `candidate` when it behaves, `null` otherwise. A candidate that throws
 * counts as absent: fast-crc32c's failure to load surfaces as a throw from
 * `calculate`, caught here once so that `crc32c` itself never throws.
 */
export const ifUsable = (candidate: Crc32cFunction): Crc32cFunction | null => {
  try {
    return behaves(candidate) ? candidate : null;
  } catch {
    return null;
  }
};

/** fast-crc32c's `calculate` when it loaded and behaves here, `null` otherwise. */
export const loadNative = (): Crc32cFunction | null => ifUsable(viaFastCrc32c);
