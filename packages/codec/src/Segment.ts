/**
 * Segment files: the 44-byte `TAYS` header at offset 0, records back to
 * back, and, once sealed, the 64-byte `TAYF` footer. Also the file names
 * (`00000000000000000001.tay`).
 *
 * This module decodes the header and footer on their own; the rules that tie
 * them to the file name, to each other, to the records and to the marker are
 * the reader's (shell) business, since they need more than these bytes.
 */
import * as E from "fp-ts/lib/Either.js";
import {
  assertEncodable,
  assertStoreId,
  type FixedLayout,
  type FixedLayoutError,
  invalidField,
  isU64,
  openFixed,
  readField,
  readStoreId,
  sealFixed,
  segmentStoreIdOffset,
  startFixed,
  writeField,
} from "./internal/fixedLayout.js";
import { fileNameDigits, formatDecimalName, parseDecimalName } from "./internal/decimalName.js";

export type {
  FixedLayoutError,
  FixedLayoutField,
  FixedLayoutStructure,
  InvalidFieldReason,
} from "./internal/fixedLayout.js";

/** Size of a segment header. An active empty segment is exactly this. */
export const segmentHeaderBytes = 44;

/** Size of a sealed segment's footer. */
export const segmentFooterBytes = 64;

/** Largest segment file (FORMAT.md), header and footer included. */
export const segmentFileBytesMax = 1_073_741_824;

/** What a segment header says: its ID (= file name), first sequence and store. */
export interface SegmentHeader {
  readonly segmentId: number;
  readonly firstSequence: number;
  readonly storeId: Uint8Array;
}

/**
 * What a sealed segment's footer says: the header's three fields again, the
 * last sequence, the record count (>= 1, `last = first + count - 1`) and the
 * CRC of every byte of the file before the footer.
 */
export interface SegmentFooter {
  readonly segmentId: number;
  readonly firstSequence: number;
  readonly storeId: Uint8Array;
  readonly lastSequence: number;
  readonly recordCount: number;
  readonly segmentCrc: number;
}

const headerLayout: FixedLayout = {
  structure: "SegmentHeader",
  magic: "TAYS",
  size: segmentHeaderBytes,
};
const footerLayout: FixedLayout = {
  structure: "SegmentFooter",
  magic: "TAYF",
  size: segmentFooterBytes,
};

const segmentIdOffset = 8;
const firstSequenceOffset = 16;
const lastSequenceOffset = 40;
const recordCountOffset = 48;
const segmentCrcOffset = 56;

const assertSegmentFields = (
  layout: FixedLayout,
  fields: { readonly segmentId: number; readonly firstSequence: number; storeId: Uint8Array },
): void => {
  assertEncodable(
    isU64(fields.segmentId) && fields.segmentId >= 1,
    layout,
    "segment ID must be 1..2^53-1",
  );
  assertEncodable(
    isU64(fields.firstSequence) && fields.firstSequence >= 1,
    layout,
    "first sequence must be 1..2^53-1",
  );
  assertStoreId(layout, fields.storeId);
};

/**
 * Encodes a segment header. The store builds headers from its own state, so
 * a segment ID or first sequence outside 1..2^53-1, or a STORE_ID that is
 * not 16 bytes, is a programmer error and throws a `RangeError`.
 */
export const encodeSegmentHeader = (header: SegmentHeader): Uint8Array => {
  assertSegmentFields(headerLayout, header);
  const { bytes, view } = startFixed(headerLayout);
  writeField(view, segmentIdOffset, header.segmentId);
  writeField(view, firstSequenceOffset, header.firstSequence);
  bytes.set(header.storeId, segmentStoreIdOffset);
  return sealFixed(headerLayout, bytes, view);
};

/**
 * Decodes the 44 bytes of a segment header (pass exactly those: any other
 * size is `WrongSize`). Checks magic, version, CRC, reserved bytes, then
 * the fields: a segment ID or first sequence of 0 is `InvalidField`, one
 * beyond 2^53-1 `BeyondSafeInteger`. Never throws.
 */
export const decodeSegmentHeader = (
  bytes: Uint8Array,
): E.Either<FixedLayoutError, SegmentHeader> => {
  const opened = openFixed(headerLayout, bytes);
  if (E.isLeft(opened)) return opened;
  const view = opened.right;
  const segmentId = readField(headerLayout, view, segmentIdOffset, "segmentId");
  if (E.isLeft(segmentId)) return segmentId;
  const firstSequence = readField(headerLayout, view, firstSequenceOffset, "firstSequence");
  if (E.isLeft(firstSequence)) return firstSequence;
  if (segmentId.right === 0) {
    return E.left(invalidField(headerLayout, "segmentId", segmentIdOffset, "Zero"));
  }
  if (firstSequence.right === 0) {
    return E.left(invalidField(headerLayout, "firstSequence", firstSequenceOffset, "Zero"));
  }
  return E.right({
    segmentId: segmentId.right,
    firstSequence: firstSequence.right,
    storeId: readStoreId(bytes, segmentStoreIdOffset),
  });
};

/**
 * Encodes a sealed segment's footer. Like the header, its fields come from
 * the store's own state: a record count of 0, a last sequence other than
 * first + count - 1, a value outside its range or a STORE_ID that is not 16
 * bytes is a programmer error and throws a `RangeError`.
 */
export const encodeSegmentFooter = (footer: SegmentFooter): Uint8Array => {
  assertSegmentFields(footerLayout, footer);
  assertEncodable(
    isU64(footer.recordCount) && footer.recordCount >= 1,
    footerLayout,
    "record count must be 1..2^53-1",
  );
  assertEncodable(
    isU64(footer.lastSequence) &&
      footer.lastSequence - footer.firstSequence === footer.recordCount - 1,
    footerLayout,
    "last sequence must be first sequence + record count - 1",
  );
  assertEncodable(
    Number.isInteger(footer.segmentCrc) &&
      footer.segmentCrc >= 0 &&
      footer.segmentCrc <= 0xffff_ffff,
    footerLayout,
    "segment CRC must be an unsigned 32-bit integer",
  );
  const { bytes, view } = startFixed(footerLayout);
  writeField(view, segmentIdOffset, footer.segmentId);
  writeField(view, firstSequenceOffset, footer.firstSequence);
  bytes.set(footer.storeId, segmentStoreIdOffset);
  writeField(view, lastSequenceOffset, footer.lastSequence);
  writeField(view, recordCountOffset, footer.recordCount);
  view.setUint32(segmentCrcOffset, footer.segmentCrc);
  return sealFixed(footerLayout, bytes, view);
};

/**
 * Decodes the 64 bytes of a footer (exactly those: the last 64 of a sealed
 * segment). Checks magic, version, CRC, reserved bytes, then every u64
 * field for 2^53-1 (`BeyondSafeInteger`), then: segment ID, first sequence
 * and record count at least 1, and `last = first + count - 1`
 * (`InvalidField`). The segment CRC is returned, not checked: it covers the
 * rest of the file. Never throws.
 */
export const decodeSegmentFooter = (
  bytes: Uint8Array,
): E.Either<FixedLayoutError, SegmentFooter> => {
  const opened = openFixed(footerLayout, bytes);
  if (E.isLeft(opened)) return opened;
  const view = opened.right;
  const segmentId = readField(footerLayout, view, segmentIdOffset, "segmentId");
  if (E.isLeft(segmentId)) return segmentId;
  const firstSequence = readField(footerLayout, view, firstSequenceOffset, "firstSequence");
  if (E.isLeft(firstSequence)) return firstSequence;
  const lastSequence = readField(footerLayout, view, lastSequenceOffset, "lastSequence");
  if (E.isLeft(lastSequence)) return lastSequence;
  const recordCount = readField(footerLayout, view, recordCountOffset, "recordCount");
  if (E.isLeft(recordCount)) return recordCount;
  if (segmentId.right === 0) {
    return E.left(invalidField(footerLayout, "segmentId", segmentIdOffset, "Zero"));
  }
  if (firstSequence.right === 0) {
    return E.left(invalidField(footerLayout, "firstSequence", firstSequenceOffset, "Zero"));
  }
  if (recordCount.right === 0) {
    return E.left(invalidField(footerLayout, "recordCount", recordCountOffset, "Zero"));
  }
  // Both differences are exact: every operand is a safe integer.
  if (lastSequence.right - firstSequence.right !== recordCount.right - 1) {
    return E.left(invalidField(footerLayout, "lastSequence", lastSequenceOffset, "Inconsistent"));
  }
  return E.right({
    segmentId: segmentId.right,
    firstSequence: firstSequence.right,
    storeId: readStoreId(bytes, segmentStoreIdOffset),
    lastSequence: lastSequence.right,
    recordCount: recordCount.right,
    segmentCrc: view.getUint32(segmentCrcOffset),
  });
};

const segmentFileNamePattern = /^[0-9]{20}\.tay$/;

/**
 * The file name of segment `segmentId`: 20 zero-padded digits and `.tay`.
 * Throws a `RangeError` for an ID outside 1..2^53-1 (a programmer error).
 *
 * @example segmentFileName(1) === "00000000000000000001.tay"
 */
export const segmentFileName = (segmentId: number): string =>
  `${formatDecimalName(segmentId, "segment ID")}.tay`;

/**
 * The segment ID a file name denotes, or undefined when the name is not
 * exactly 20 decimal digits and `.tay`, or denotes 0 or an ID beyond 2^53-1
 * (a directory reader reports all of these as an unexpected entry).
 */
export const parseSegmentFileName = (name: string): number | undefined =>
  segmentFileNamePattern.test(name) ? parseDecimalName(name.slice(0, fileNameDigits)) : undefined;
