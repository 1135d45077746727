// Proves crc32c is CRC-32C as FORMAT.md defines it: the check value, the
// continuation property that record and segment CRCs rely on, and views
// with a non-zero byteOffset. It compares against a bitwise reference
// implementation over random inputs and slices of larger buffers.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { crc32c } from "../src/Crc32c.js";
import { crc32cOfRange } from "../src/internal/crcTable.js";

/** Bit-at-a-time CRC-32C, straight from the definition. */
const reference = (bytes: Uint8Array): number => {
  let crc = 0xffff_ffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f6_3b78 : crc >>> 1;
  }
  return (crc ^ 0xffff_ffff) >>> 0;
};

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

describe("crc32c", () => {
  it("has FORMAT.md's check value", () => {
    expect(crc32c(ascii("123456789"))).toBe(0xe306_9283);
    expect(reference(ascii("123456789"))).toBe(0xe306_9283);
  });

  it("is 0 for no bytes and returns the initial value unchanged for no bytes", () => {
    expect(crc32c(new Uint8Array())).toBe(0);
    expect(crc32c(new Uint8Array(), 0xdead_beef)).toBe(0xdead_beef);
  });

  it("agrees with the bitwise definition and is unsigned", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const crc = crc32c(bytes);
        expect(crc).toBe(reference(bytes));
        expect(crc).toBeGreaterThanOrEqual(0);
        expect(crc).toBeLessThanOrEqual(0xffff_ffff);
      }),
      { numRuns: 500 },
    );
  });

  it("continues a previous result: crc(b, crc(a)) = crc(a ++ b)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 200 }), (a, b) => {
        const joined = new Uint8Array(a.length + b.length);
        joined.set(a);
        joined.set(b, a.length);
        expect(crc32c(b, crc32c(a))).toBe(crc32c(joined));
      }),
      { numRuns: 500 },
    );
  });

  it("reads exactly the bytes of a view with a non-zero byteOffset", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.nat(),
        fc.nat(),
        (buffer, start, length) => {
          const from = start % buffer.length;
          const to = from + (length % (buffer.length - from + 1));
          const view = buffer.subarray(from, to);
          expect(crc32c(view)).toBe(reference(Uint8Array.from(view)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("agrees with the table loop that record headers use, which it continues", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const start = a % (bytes.length + 1);
        const end = start + (b % (bytes.length - start + 1));
        const header = crc32cOfRange(bytes, start, end);
        expect(header).toBe(crc32c(bytes.subarray(start, end)));
        expect(crc32c(bytes.subarray(end), header)).toBe(crc32c(bytes.subarray(start)));
        // The table loop continues a CRC too, its own or crc32c's.
        expect(crc32cOfRange(bytes, end, bytes.length, header)).toBe(
          reference(bytes.subarray(start)),
        );
      }),
      { numRuns: 500 },
    );
  });
});
