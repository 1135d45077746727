/**
 * Shared conformance cases for the five fixed-size structures (STORE-V2,
 * CURRENT, MANIFEST, segment header and footer): size, magic, version, CRC,
 * reserved bytes and u64 bounds behave alike, so one suite checks them all.
 */
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { crc32c } from "../../src/Crc32c.js";
import type {
  FixedLayoutError,
  FixedLayoutField,
  FixedLayoutStructure,
} from "../../src/Segment.js";

export const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
export const fromHex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, "hex"));

/** FORMAT.md's test STORE_ID: 00 01 02 ... 0f. */
export const testStoreId = Uint8Array.from({ length: 16 }, (_, index) => index);

export const storeId = fc.uint8Array({ minLength: 16, maxLength: 16 });

/** Rewrites the trailing CRC of a fixed-size structure after a change. */
export const reseal = (bytes: Uint8Array): Uint8Array => {
  const sealed = Uint8Array.from(bytes);
  new DataView(sealed.buffer).setUint32(sealed.length - 4, crc32c(sealed.subarray(0, -4)));
  return sealed;
};

/** A copy of `bytes` with the u64 at `offset` set to `value` (CRC not touched). */
export const withU64 = (bytes: Uint8Array, offset: number, value: bigint): Uint8Array => {
  const changed = Uint8Array.from(bytes);
  new DataView(changed.buffer).setBigUint64(offset, value);
  return changed;
};

export const decodeError = <T>(
  decode: (bytes: Uint8Array) => E.Either<FixedLayoutError, T>,
  bytes: Uint8Array,
): FixedLayoutError | undefined => {
  const result = decode(bytes);
  return E.isLeft(result) ? result.left : undefined;
};

export interface FixedLayoutSuite<T> {
  readonly structure: FixedLayoutStructure;
  readonly magic: string;
  readonly size: number;
  readonly encode: (value: T) => Uint8Array;
  readonly decode: (bytes: Uint8Array) => E.Either<FixedLayoutError, T>;
  readonly arbitrary: fc.Arbitrary<T>;
  readonly u64Fields: ReadonlyArray<{ readonly field: FixedLayoutField; readonly offset: number }>;
  readonly storeIdOffset: number;
}

/** One structure's suite with the sample it checks, encoded. */
interface Fixture<T> {
  readonly suite: FixedLayoutSuite<T>;
  readonly sample: T;
  readonly valid: Uint8Array;
  readonly error: (bytes: Uint8Array) => FixedLayoutError | undefined;
}

/** Encoding and decoding agree, on every value and on any bytes. */
const itRoundTrips = <T>({ suite, valid }: Fixture<T>): void => {
  const { structure, size, encode, decode } = suite;
  it("round trips, also from a view inside a larger buffer", () => {
    fc.assert(
      fc.property(suite.arbitrary, fc.nat(16), (value, shift) => {
        const bytes = encode(value);
        expect(bytes.length).toBe(size);
        expect(decode(bytes)).toEqual(E.right(value));
        const buffer = new Uint8Array(shift + size + 5);
        buffer.set(bytes, shift);
        expect(decode(buffer.subarray(shift, shift + size))).toEqual(E.right(value));
      }),
      { numRuns: 300 },
    );
  });
  it("starts with its magic and version 1 and ends with the CRC of the rest", () => {
    expect(Buffer.from(valid.subarray(0, 4)).toString("latin1")).toBe(suite.magic);
    expect(valid[4]).toBe(1);
    expect(hex(valid.subarray(5, 8))).toBe("000000");
    expect(new DataView(valid.buffer).getUint32(size - 4)).toBe(crc32c(valid.subarray(0, -4)));
  });
  it("gives any bytes a result, never an exception; accepted ones re-encode exactly", () => {
    const anyBytes = fc.oneof(
      fc.uint8Array({ maxLength: size * 2 }),
      fc.uint8Array({ minLength: size, maxLength: size }),
      fc
        .array(fc.tuple(fc.nat(size - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 4 })
        .chain((changes) =>
          fc.boolean().map((sealAgain) => {
            const bytes = Uint8Array.from(valid);
            for (const [where, byte] of changes) bytes[where] = byte;
            return sealAgain ? reseal(bytes) : bytes;
          }),
        ),
    );
    fc.assert(
      fc.property(anyBytes, (bytes) => {
        const decoded = decode(bytes);
        if (E.isRight(decoded)) expect(hex(encode(decoded.right))).toBe(hex(bytes));
        else expect(decoded.left.structure).toBe(structure);
      }),
      { numRuns: 1000 },
    );
  });
};

/** The frame is checked first: size, then magic and version before the CRC. */
const itRefusesTheFrame = <T>({ suite, valid, error }: Fixture<T>): void => {
  const { structure, size } = suite;
  it("refuses any other size", () => {
    expect(error(valid.subarray(0, size - 1))).toEqual({
      _tag: "WrongSize",
      structure,
      expected: size,
      actual: size - 1,
    });
    const longer = new Uint8Array(size + 1);
    longer.set(valid);
    expect(error(longer)?._tag).toBe("WrongSize");
    expect(error(new Uint8Array())?._tag).toBe("WrongSize");
  });
  it("refuses a wrong magic before looking at the CRC", () => {
    for (let index = 0; index < 4; index++) {
      const bytes = Uint8Array.from(valid);
      bytes[index] = (bytes[index] ?? 0) ^ 0x20;
      const found = error(bytes);
      expect(found).toMatchObject({
        _tag: "BadMagic",
        structure,
        found: hex(bytes.subarray(0, 4)),
      });
      expect(found?._tag === "BadMagic" && found.expected).toBe(hex(valid.subarray(0, 4)));
      expect(error(reseal(bytes))?._tag).toBe("BadMagic");
    }
  });
  it("refuses versions other than 1 before looking at the CRC", () => {
    for (const version of [0, 2, 255]) {
      const bytes = Uint8Array.from(valid);
      bytes[4] = version;
      expect(error(bytes)).toEqual({ _tag: "UnsupportedVersion", structure, found: version });
    }
  });
};

/** Then the CRC, the reserved bytes and each u64 field. */
const itRefusesTheContent = <T>({ suite, valid, error }: Fixture<T>): void => {
  const { structure, size } = suite;
  it("refuses every single-bit flip past the version with ChecksumMismatch", () => {
    const stored = new DataView(valid.buffer).getUint32(size - 4);
    for (let bit = 5 * 8; bit < size * 8; bit++) {
      const bytes = Uint8Array.from(valid);
      bytes[bit >>> 3] = (bytes[bit >>> 3] ?? 0) ^ (0x80 >>> (bit & 7));
      const found = error(bytes);
      expect(found).toMatchObject({ _tag: "ChecksumMismatch", structure, offset: size - 4 });
      if (found?._tag !== "ChecksumMismatch") continue;
      expect(found.actual).toBe(crc32c(bytes.subarray(0, -4)));
      expect(found.expected).toBe(new DataView(bytes.buffer).getUint32(size - 4));
      expect(found.expected === stored || found.actual === stored).toBe(true);
    }
  });
  it("refuses nonzero reserved bytes once the CRC vouches for them", () => {
    for (const offset of [5, 6, 7]) {
      const bytes = Uint8Array.from(valid);
      bytes[offset] = 1;
      expect(error(reseal(bytes))).toEqual({ _tag: "NonzeroReserved", structure, offset });
      // Under a stale CRC it is the CRC that fails.
      expect(error(bytes)?._tag).toBe("ChecksumMismatch");
    }
  });
  it("refuses each u64 field beyond 2^53-1 as BeyondSafeInteger", () => {
    for (const { field, offset } of suite.u64Fields) {
      for (const value of [2n ** 53n, 2n ** 64n - 1n]) {
        expect(error(reseal(withU64(valid, offset, value)))).toEqual({
          _tag: "BeyondSafeInteger",
          structure,
          field,
          offset,
        });
      }
    }
  });
};

/** The STORE_ID: a copy when decoded, 16 bytes when encoded. */
const itCopiesTheStoreId = <T>({ suite, sample, valid }: Fixture<T>): void => {
  const { encode, decode } = suite;
  it("returns a STORE_ID that does not alias the input", () => {
    const bytes = Uint8Array.from(valid);
    const decoded = decode(bytes);
    bytes[suite.storeIdOffset] = (bytes[suite.storeIdOffset] ?? 0) ^ 0xff;
    expect(decoded).toEqual(E.right(sample));
  });
  it("throws on a STORE_ID that is not 16 bytes (a programmer error)", () => {
    expect(() => encode({ ...sample, storeId: new Uint8Array(15) })).toThrow(RangeError);
  });
};

/** The checks every fixed-size structure passes. */
export const describeFixedLayout = <T>(suite: FixedLayoutSuite<T>): void => {
  const sample = fc.sample(suite.arbitrary, { numRuns: 1, seed: 42 })[0];
  if (sample === undefined) throw new Error("no sample");
  const fixture: Fixture<T> = {
    suite,
    sample,
    valid: suite.encode(sample),
    error: (bytes) => decodeError(suite.decode, bytes),
  };
  describe(`${suite.structure}: shared layout`, () => {
    itRoundTrips(fixture);
    itRefusesTheFrame(fixture);
    itRefusesTheContent(fixture);
    itCopiesTheStoreId(fixture);
  });
};
