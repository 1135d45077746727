/**
 * CRC-32C of a short byte range in plain JavaScript, for record headers.
 *
 * For the 20 bytes of a header, a table loop costs about a third of a call
 * into the native binding plus the `subarray` view it needs (measured on
 * Node 20: 35 ns against 110 ns), and headers are read once per record.
 * Same definition as `crc32c`, so the two continue each other's results.
 */

/** The byte-at-a-time table of the reflected polynomial 0x82F63B78. */
const table = new Int32Array(256);
for (let byte = 0; byte < 256; byte++) {
  let crc = byte;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f6_3b78 : crc >>> 1;
  table[byte] = crc;
}

/**
 * CRC-32C of `bytes[start..end)` as an unsigned 32-bit integer, continuing
 * `initial` (a previous result, 0 for none) as `crc32c` does. Keep ranges short.
 */
export const crc32cOfRange = (
  bytes: Uint8Array,
  start: number,
  end: number,
  initial = 0,
): number => {
  let crc = ~initial;
  for (let index = start; index < end; index++) {
    crc = (table[(crc ^ (bytes[index] ?? 0)) & 0xff] ?? 0) ^ (crc >>> 8);
  }
  return (crc ^ -1) >>> 0;
};
