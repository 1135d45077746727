/**
 * Types for `fast-crc32c` 2.0.0, a CommonJS package without its own types.
 * Its `module.exports` is an object with one function, so an ES module sees
 * it as the default export.
 */
declare module "fast-crc32c" {
  interface FastCrc32c {
    /**
     * CRC-32C of `data`; `initial` is a previous result to continue from.
     * Accepts Uint8Array views with a non-zero byteOffset as they are.
     */
    calculate(data: Uint8Array | string, initial?: number): number;
  }
  const fastCrc32c: FastCrc32c;
  export = fastCrc32c;
}
