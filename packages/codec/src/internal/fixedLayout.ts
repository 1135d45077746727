/**
 * The shape shared by the five fixed-size structures of FORMAT.md (STORE-V2,
 * CURRENT, MANIFEST, segment header and footer): a 4-byte magic, version 1,
 * three reserved zero bytes, big-endian fields, and a CRC-32C of everything
 * before it in the last 4 bytes.
 *
 * Decoding checks, in this order: size, magic, version, CRC, reserved bytes;
 * fields are read only after the CRC vouches for them. Magic and version come
 * before the CRC because they say whether the rest is this structure at all.
 */
import * as E from "fp-ts/lib/Either.js";
import { crc32c } from "../Crc32c.js";
import { storeIdBytes } from "../StoreId.js";
import { copyOf, readU64, viewOf, writeU64 } from "./bytes.js";

/** Which fixed-size structure an error concerns. */
export type FixedLayoutStructure =
  | "StoreMarker"
  | "CurrentPointer"
  | "Manifest"
  | "SegmentHeader"
  | "SegmentFooter";

/** The integer fields of the fixed-size structures. */
export type FixedLayoutField =
  | "createdAt"
  | "epoch"
  | "parentEpoch"
  | "firstSequence"
  | "baseRecordCount"
  | "segmentId"
  | "lastSequence"
  | "recordCount";

/**
 * Why a field that decoded is still invalid: `Zero` for a field that must be
 * at least 1 (an epoch, a segment ID, a first sequence, a footer's record
 * count); `Inconsistent` for a field that contradicts another one of the
 * same structure (a footer's last sequence other than first + count - 1, a
 * manifest's parent epoch not below its epoch).
 */
export type InvalidFieldReason = "Zero" | "Inconsistent";

/**
 * Why bytes are not a valid fixed-size structure. Offsets are relative to
 * the start of the structure. In `ChecksumMismatch`, `expected` is the CRC
 * stored in the bytes and `actual` the CRC computed over them.
 */
export type FixedLayoutError =
  | {
      readonly _tag: "WrongSize";
      readonly structure: FixedLayoutStructure;
      readonly expected: number;
      readonly actual: number;
    }
  | {
      readonly _tag: "BadMagic";
      readonly structure: FixedLayoutStructure;
      /** The magic as 8 lowercase hex digits (`5441594d` is `TAYM`). */
      readonly expected: string;
      readonly found: string;
    }
  | {
      readonly _tag: "UnsupportedVersion";
      readonly structure: FixedLayoutStructure;
      readonly found: number;
    }
  | {
      readonly _tag: "NonzeroReserved";
      readonly structure: FixedLayoutStructure;
      readonly offset: number;
    }
  | {
      readonly _tag: "ChecksumMismatch";
      readonly structure: FixedLayoutStructure;
      readonly offset: number;
      readonly expected: number;
      readonly actual: number;
    }
  | {
      readonly _tag: "BeyondSafeInteger";
      readonly structure: FixedLayoutStructure;
      readonly field: FixedLayoutField;
      readonly offset: number;
    }
  | {
      readonly _tag: "InvalidField";
      readonly structure: FixedLayoutStructure;
      readonly field: FixedLayoutField;
      readonly offset: number;
      readonly reason: InvalidFieldReason;
    };

/** A fixed-size structure: its name, magic and size (CRC in the last 4 bytes). */
export interface FixedLayout {
  readonly structure: FixedLayoutStructure;
  readonly magic: string;
  readonly size: number;
}

/** The version every fixed-size structure of FORMAT.md carries. */
export const fixedLayoutVersion = 1;

/** Offsets common to every fixed-size structure. */
export const magicOffset = 0;
export const versionOffset = 4;
export const reservedOffset = 5;
export const reservedBytes = 3;
/** Every structure carries the STORE_ID at offset 8... */
export const storeIdOffset = 8;
/** ...except the segment header and footer, which carry it at 24. */
export const segmentStoreIdOffset = 24;

const hex = (bytes: Uint8Array): string =>
  Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");

const magicHex = (magic: string): string =>
  Array.from(magic, (character) => character.charCodeAt(0).toString(16).padStart(2, "0")).join("");

/**
 * Checks size, magic, version, CRC and reserved bytes; on success, returns a
 * DataView over `bytes` to read the fields from.
 */
export const openFixed = (
  layout: FixedLayout,
  bytes: Uint8Array,
): E.Either<FixedLayoutError, DataView> => {
  const { structure, size } = layout;
  if (bytes.length !== size) {
    return E.left({ _tag: "WrongSize", structure, expected: size, actual: bytes.length });
  }
  const expectedMagic = magicHex(layout.magic);
  const foundMagic = hex(bytes.subarray(magicOffset, magicOffset + 4));
  if (foundMagic !== expectedMagic) {
    return E.left({ _tag: "BadMagic", structure, expected: expectedMagic, found: foundMagic });
  }
  const version = bytes[versionOffset] ?? 0;
  if (version !== fixedLayoutVersion) {
    return E.left({ _tag: "UnsupportedVersion", structure, found: version });
  }
  const view = viewOf(bytes);
  const crcOffset = size - 4;
  const stored = view.getUint32(crcOffset);
  const computed = crc32c(bytes.subarray(0, crcOffset));
  if (stored !== computed) {
    return E.left({
      _tag: "ChecksumMismatch",
      structure,
      offset: crcOffset,
      expected: stored,
      actual: computed,
    });
  }
  for (let offset = reservedOffset; offset < reservedOffset + reservedBytes; offset++) {
    if (bytes[offset] !== 0) return E.left({ _tag: "NonzeroReserved", structure, offset });
  }
  return E.right(view);
};

/** Reads a u64 field, refusing one beyond 2^53-1 with `BeyondSafeInteger`. */
export const readField = (
  layout: FixedLayout,
  view: DataView,
  offset: number,
  field: FixedLayoutField,
): E.Either<FixedLayoutError, number> => {
  const value = readU64(view, offset);
  if (value < 0) {
    return E.left({ _tag: "BeyondSafeInteger", structure: layout.structure, field, offset });
  }
  return E.right(value);
};

/** An `InvalidField` error for `layout`. */
export const invalidField = (
  layout: FixedLayout,
  field: FixedLayoutField,
  offset: number,
  reason: InvalidFieldReason,
): FixedLayoutError => ({
  _tag: "InvalidField",
  structure: layout.structure,
  field,
  offset,
  reason,
});

/** A copy of the STORE_ID at `offset`, so it never aliases the input. */
export const readStoreId = (bytes: Uint8Array, offset: number): Uint8Array =>
  copyOf(bytes, offset, offset + storeIdBytes);

/**
 * A programmer error in what an encoder was given: the store builds these
 * structures from its own state, never from user input, so a bad field is a
 * bug and throws.
 */
export const assertEncodable = (condition: boolean, layout: FixedLayout, what: string): void => {
  if (!condition) throw new RangeError(`${layout.structure}: ${what}`);
};

/** True for an integer 0..2^53-1 (a u64 this implementation can write). */
export const isU64 = (value: number): boolean => Number.isSafeInteger(value) && value >= 0;

/** Asserts `storeId` is a STORE_ID (16 bytes). */
export const assertStoreId = (layout: FixedLayout, storeId: Uint8Array): void =>
  assertEncodable(
    storeId instanceof Uint8Array && storeId.length === storeIdBytes,
    layout,
    `STORE_ID must be ${storeIdBytes} bytes`,
  );

/**
 * Starts an encoding: a zeroed buffer with magic and version. Fill the
 * fields, then call `sealFixed`.
 */
export const startFixed = (layout: FixedLayout): { bytes: Uint8Array; view: DataView } => {
  const bytes = new Uint8Array(layout.size);
  for (let index = 0; index < 4; index++)
    bytes[magicOffset + index] = layout.magic.charCodeAt(index);
  bytes[versionOffset] = fixedLayoutVersion;
  return { bytes, view: viewOf(bytes) };
};

/** Writes a u64 field the caller has asserted is safe. */
export const writeField = writeU64;

/** Writes the trailing CRC over every preceding byte and returns the bytes. */
export const sealFixed = (layout: FixedLayout, bytes: Uint8Array, view: DataView): Uint8Array => {
  const crcOffset = layout.size - 4;
  view.setUint32(crcOffset, crc32c(bytes.subarray(0, crcOffset)));
  return bytes;
};
