/**
 * Record v1 (frozen): the framing of every entry of a segment.
 *
 * A 24-byte header (magic `TAY\0`, version 1, type, flags 0, schema,
 * sequence u64, payload length u32, header CRC of bytes 0..19), the payload,
 * and a record CRC of header bytes 0..19 followed by the payload. Decoding
 * from a byte range yields exactly one of `Record`, `Incomplete` (a torn
 * tail), `Corrupt` with a closed reason, or `BeyondSafeInteger` (a valid
 * record whose sequence this implementation cannot represent).
 */
import { Limits } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { crc32c } from "./Crc32c.js";
import { isIntegerIn, withRoom } from "./internal/bytes.js";
import { crc32cSlicingRange } from "./internal/crc32cSlicing.js";
import { crc32cOfRange } from "./internal/crcTable.js";

/** Size of the record header: fields and header CRC. */
export const recordHeaderBytes = 24;

/** Header plus the trailing record CRC: a record is this plus its payload. */
export const recordOverheadBytes = 28;

/** Largest payload a record may carry (FORMAT.md): core's one limit, re-exported where the framing needs it. */
export const payloadBytesMax = Limits.payloadBytesMax;

/** The only record format version. */
export const recordVersion = 1;

/** Physically valid record types (0 and 255 are reserved). */
export const recordTypeMin = 1;
export const recordTypeMax = 254;

/** Physically valid payload schemas (0 is invalid). */
export const recordSchemaMin = 1;
export const recordSchemaMax = 255;

const magic = [0x54, 0x41, 0x59, 0x00] as const;
const versionOffset = 4;
const typeOffset = 5;
const flagsOffset = 6;
const schemaOffset = 7;
const sequenceOffset = 8;
const lengthOffset = 16;
const headerCrcOffset = 20;

/** The fields of a record. `sequence` is 1..2^53-1; the payload is opaque bytes. */
export interface RecordFields {
  readonly type: number;
  readonly schema: number;
  readonly sequence: number;
  readonly payload: Uint8Array;
}

/** The closed set of reasons a byte range is not a record (FORMAT.md). */
export type CorruptReason =
  | "BadMagic"
  | "UnsupportedVersion"
  | "ReservedType"
  | "ZeroSchema"
  | "NonzeroFlags"
  | "PayloadTooLarge"
  | "HeaderChecksum"
  | "RecordChecksum";

/**
 * What a byte range holds at an offset. Every `offset` is the offset of the
 * record's first byte (where a scanner stands), whatever field is at fault.
 *
 * - `Record`: a valid record of `size` bytes; its payload is a view into the
 *   input, not a copy.
 * - `Incomplete`: the range ends before the record does, and every byte
 *   present agrees with a valid record so far.
 * - `Corrupt`: no valid record has these bytes.
 * - `BeyondSafeInteger`: a valid record whose sequence exceeds 2^53-1, an
 *   implementation limit rather than corruption.
 */
export type DecodedRecord =
  | { readonly _tag: "Record"; readonly record: RecordFields; readonly size: number }
  | { readonly _tag: "Incomplete"; readonly offset: number }
  | { readonly _tag: "Corrupt"; readonly reason: CorruptReason; readonly offset: number }
  | { readonly _tag: "BeyondSafeInteger"; readonly field: "sequence"; readonly offset: number };

/** The record fields an encoder checks. */
export type RecordField = "type" | "schema" | "sequence" | "payload";

/**
 * A field an encoder refuses: `found` is the field's value (the payload's
 * length for `payload`), `allowed` the range it must be in.
 */
export interface RecordEncodeError {
  readonly _tag: "InvalidRecordField";
  readonly field: RecordField;
  readonly found: number;
  readonly allowed: string;
}

/** The complete size of a record whose payload has `payloadLength` bytes. */
export const recordSize = (payloadLength: number): number => recordOverheadBytes + payloadLength;

/**
 * Checks the fields a writer is about to frame: type 1..254, schema 1..255,
 * sequence 1..2^53-1, payload at most `payloadBytesMax` bytes.
 */
export const checkRecord = (record: RecordFields): E.Either<RecordEncodeError, RecordFields> => {
  const refuse = (field: RecordField, found: number, allowed: string) =>
    E.left<RecordEncodeError, RecordFields>({ _tag: "InvalidRecordField", field, found, allowed });
  if (!isIntegerIn(record.type, recordTypeMin, recordTypeMax)) {
    return refuse("type", record.type, `${recordTypeMin}..${recordTypeMax}`);
  }
  if (!isIntegerIn(record.schema, recordSchemaMin, recordSchemaMax)) {
    return refuse("schema", record.schema, `${recordSchemaMin}..${recordSchemaMax}`);
  }
  if (!Number.isSafeInteger(record.sequence) || record.sequence < 1) {
    return refuse("sequence", record.sequence, "1..2^53-1");
  }
  if (record.payload.length > payloadBytesMax) {
    return refuse("payload", record.payload.length, `0..${payloadBytesMax} bytes`);
  }
  return E.right(record);
};

const writeU32 = (target: Uint8Array, offset: number, value: number): void => {
  target[offset] = value >>> 24;
  target[offset + 1] = (value >>> 16) & 0xff;
  target[offset + 2] = (value >>> 8) & 0xff;
  target[offset + 3] = value & 0xff;
};

const readU32 = (bytes: Uint8Array, offset: number): number =>
  (((bytes[offset] ?? 0) << 24) |
    ((bytes[offset + 1] ?? 0) << 16) |
    ((bytes[offset + 2] ?? 0) << 8) |
    (bytes[offset + 3] ?? 0)) >>>
  0;

const writeFramed = (target: Uint8Array, offset: number, record: RecordFields): number => {
  const length = record.payload.length;
  for (let index = 0; index < 4; index++) target[offset + index] = magic[index] ?? 0;
  target[offset + versionOffset] = recordVersion;
  target[offset + typeOffset] = record.type;
  target[offset + flagsOffset] = 0;
  target[offset + schemaOffset] = record.schema;
  writeU32(target, offset + sequenceOffset, Math.floor(record.sequence / 4_294_967_296));
  writeU32(target, offset + sequenceOffset + 4, record.sequence >>> 0);
  writeU32(target, offset + lengthOffset, length);
  const headerCrc = crc32cOfRange(target, offset, offset + headerCrcOffset);
  writeU32(target, offset + headerCrcOffset, headerCrc);
  target.set(record.payload, offset + recordHeaderBytes);
  // The record CRC covers header bytes 0..19 and then the payload, so it
  // continues from the header CRC.
  writeU32(target, offset + recordHeaderBytes + length, crc32c(record.payload, headerCrc));
  return recordOverheadBytes + length;
};

/**
 * Frames a record into a new buffer of `recordSize(payload.length)` bytes.
 * Returns `InvalidRecordField` (see `checkRecord`) instead of writing an
 * invalid record.
 */
export const encodeRecord = (record: RecordFields): E.Either<RecordEncodeError, Uint8Array> => {
  const checked = checkRecord(record);
  if (E.isLeft(checked)) return checked;
  const target = new Uint8Array(recordSize(record.payload.length));
  writeFramed(target, 0, record);
  return E.right(target);
};

/**
 * Frames a record into `target` at `offset` and returns the bytes written,
 * so a group commit can lay a batch into one buffer without copies.
 *
 * The caller has already checked the record (`checkRecord`, or it built the
 * fields itself) and the room: an invalid record, or a target too short, is
 * a programmer error and throws a `RangeError` before anything is written.
 */
export const encodeRecordInto = (
  target: Uint8Array,
  offset: number,
  record: RecordFields,
): number => {
  const checked = checkRecord(record);
  if (E.isLeft(checked)) {
    const { field, found, allowed } = checked.left;
    throw new RangeError(`record ${field} ${found} is outside ${allowed}`);
  }
  const size = recordSize(record.payload.length);
  if (!Number.isInteger(offset) || offset < 0 || offset + size > target.length) {
    throw new RangeError(`a record of ${size} bytes does not fit at ${offset} of ${target.length}`);
  }
  return writeFramed(target, offset, record);
};

/**
 * Records framed one after another into a buffer its owner keeps and
 * reuses (`appendRecord`, `Event.appendEventRecord`): `bytes[0, length)`
 * holds them; the buffer grows as they need, and the owner empties it by
 * setting `length` to 0. What a terminal index's entries are laid into
 * without a buffer per batch: a fresh buffer is zeroed memory the kernel
 * maps in a page at a time on first touch, about 1 µs per 400 bytes on
 * this VM, more than framing them.
 */
export interface RecordBuffer {
  bytes: Uint8Array;
  length: number;
}

/** An empty record buffer of `bytes` bytes to begin with. */
export const recordBuffer = (bytes = 64 * 1024): RecordBuffer => ({
  bytes: new Uint8Array(bytes),
  length: 0,
});

/** Grows `buffer` (doubling, its records kept) so that `count` more bytes fit after its length. */
const reserveIn = (buffer: RecordBuffer, count: number): void => {
  buffer.bytes = withRoom(buffer.bytes, buffer.length, buffer.length + count, 1024);
};

/**
 * Copies `bytes` (whole records, framed already: a copy of checked ones)
 * to the end of `buffer`, grown as `appendRecord` grows it: where they
 * start. Never throws.
 */
export const appendBytes = (buffer: RecordBuffer, bytes: Uint8Array): number => {
  reserveIn(buffer, bytes.length);
  const at = buffer.length;
  buffer.bytes.set(bytes, at);
  buffer.length += bytes.length;
  return at;
};

/**
 * Frames `record` at the end of `buffer`: where it starts, or the field
 * `checkRecord` refuses (then nothing is appended). Never throws.
 */
export const appendRecord = (
  buffer: RecordBuffer,
  record: RecordFields,
): E.Either<RecordEncodeError, number> => {
  const checked = checkRecord(record);
  if (E.isLeft(checked)) return checked;
  reserveIn(buffer, recordSize(record.payload.length));
  const at = buffer.length;
  buffer.length += writeFramed(buffer.bytes, at, record);
  return E.right(at);
};

const corrupt = (reason: CorruptReason, offset: number): RecordFault => ({
  _tag: "Corrupt",
  reason,
  offset,
});

/**
 * Judges the fields of a header without its CRC: those present in
 * `bytes[offset..offset+available)`, in header order. Used for a header cut
 * short (where every present byte must agree with some valid record) and,
 * once the header CRC matched, for a complete one.
 */
const checkHeaderFields = (
  bytes: Uint8Array,
  offset: number,
  available: number,
): CorruptReason | undefined => {
  if (available > typeOffset) {
    const type = bytes[offset + typeOffset] ?? 0;
    if (type < recordTypeMin || type > recordTypeMax) return "ReservedType";
  }
  if (available > flagsOffset && bytes[offset + flagsOffset] !== 0) return "NonzeroFlags";
  if (available > schemaOffset && bytes[offset + schemaOffset] === 0) return "ZeroSchema";
  if (available > lengthOffset) {
    // The smallest length these present bytes allow: missing ones as zero.
    let smallest = 0;
    for (let index = 0; index < 4; index++) {
      const present = lengthOffset + index < available;
      smallest = smallest * 256 + (present ? (bytes[offset + lengthOffset + index] ?? 0) : 0);
    }
    if (smallest > payloadBytesMax) return "PayloadTooLarge";
  }
  return undefined;
};

/**
 * Where `scanRecordAt` writes the fields of the record it accepts: one
 * object the caller keeps and reuses, so that validating a segment record
 * by record allocates nothing per record. The payload is
 * `bytes[payloadStart, payloadEnd)` of the range scanned.
 */
export interface RecordFrame {
  type: number;
  schema: number;
  sequence: number;
  payloadStart: number;
  payloadEnd: number;
}

/** A fresh frame for `scanRecordAt`. */
export const recordFrame = (): RecordFrame => ({
  type: 0,
  schema: 0,
  sequence: 0,
  payloadStart: 0,
  payloadEnd: 0,
});

/** What a byte range holds at an offset when it is not a whole valid record. */
export type RecordFault = Exclude<DecodedRecord, { readonly _tag: "Record" }>;

/** Payloads up to this many bytes are hashed in JavaScript, not natively (the break-even measured, docs/codec.md). */
export const shortPayloadBytesMax = 128;

// The record CRC continues the header's over the payload. A call into the
// native CRC needs a view (an allocation) and costs a fixed ~130 ns, so
// short payloads (a claim's (3,1) is 59 bytes, a completion's (4,1) 74) are
// hashed in JavaScript: 128 since 2026-12-02, when a whole open measured
// ~7% less CPU with the (4,1)s here than at 64 (docs/codec.md).
const payloadCrc = (bytes: Uint8Array, start: number, end: number, headerCrc: number): number =>
  end - start <= shortPayloadBytesMax
    ? crc32cSlicingRange(bytes, start, end, headerCrc)
    : crc32c(bytes.subarray(start, end), headerCrc);

/**
 * `decodeRecord`'s verdict on the record at `offset`, without allocating
 * for a valid one: its size in bytes (a positive number), with its fields
 * written into `frame`; or the fault (`Incomplete`, `Corrupt`,
 * `BeyondSafeInteger`), as `decodeRecord` returns it. `frame` is written
 * only for a valid record. Same checks in the same order as `decodeRecord`
 * (which is this plus the record object); never throws for any content.
 *
 * `offset` must be an integer in 0..bytes.length: anything else is a
 * programmer error and throws a `RangeError`.
 */
export const scanRecordAt = (
  bytes: Uint8Array,
  offset: number,
  frame: RecordFrame,
): number | RecordFault => scanFramed(bytes, offset, frame, "every");

/**
 * `scanRecordAt` without the record CRC: every check but the one over the
 * payload (magic, version, header CRC, fields, length, whether the whole
 * record is present, the sequence). For a reader that will check each
 * payload when it reads it (the terminal index notes where its entries are
 * at open and decodes an entry, record CRC first, only on a lookup): the
 * header CRC still vouches for the length, so the walk from one record to
 * the next is as sure as `scanRecordAt`'s. Never accept a log segment's
 * records with this.
 */
export const scanRecordHeaderAt = (
  bytes: Uint8Array,
  offset: number,
  frame: RecordFrame,
): number | RecordFault => scanFramed(bytes, offset, frame, "header");

/**
 * `scanRecordAt` without either CRC: the structure only (magic, version,
 * fields, length, whether the whole record is present, the sequence). Only
 * for bytes another CRC vouches for before anything read from them is
 * kept: a sealed segment's records at open, whose footer's segment CRC
 * over every byte before the footer is checked at the segment's end, and
 * whose open is done again with every record's CRCs when anything fails
 * (docs/store.md, "Record CRCs at open"). A record the writer hashed
 * wrongly but covered consistently is accepted.
 */
export const scanRecordStructureAt = (
  bytes: Uint8Array,
  offset: number,
  frame: RecordFrame,
): number | RecordFault => scanFramed(bytes, offset, frame, "none");

/** Which CRCs a scan checks: both, the header's only, or neither (vouched for elsewhere). */
type CrcChecks = "every" | "header" | "none";

const scanFramed = (
  bytes: Uint8Array,
  offset: number,
  frame: RecordFrame,
  checks: CrcChecks,
): number | RecordFault => {
  if (!Number.isInteger(offset) || offset < 0 || offset > bytes.length) {
    throw new RangeError(`record offset ${offset} is outside 0..${bytes.length}`);
  }
  const size = wholeRecordSize(bytes, offset, frame, checks);
  return size > 0 ? size : judgedRecord(bytes, offset, frame, checks);
};

/**
 * The size of the valid record at `offset`, its fields written into
 * `frame`; 0 for anything else, which `judgedRecord` then judges. Every
 * check of `judgedRecord` is made here too, only without telling which
 * failed and in no set order: a record this accepts that one accepts with
 * the same fields, so the verdict on valid records (all of an open's) is
 * the same, reached with fewer reads and no branch per field kept for a
 * torn header (2026-12-05: a sealed segment's walk at open, 10 ms → 6 ms a
 * 64 MB segment of 350,000 records).
 */
const wholeRecordSize = (
  bytes: Uint8Array,
  offset: number,
  frame: RecordFrame,
  checks: CrcChecks,
): number => {
  const available = bytes.length - offset;
  if (available < recordHeaderBytes) return 0;
  if (
    bytes[offset] !== magic[0] ||
    bytes[offset + 1] !== magic[1] ||
    bytes[offset + 2] !== magic[2] ||
    bytes[offset + 3] !== magic[3] ||
    bytes[offset + versionOffset] !== recordVersion ||
    bytes[offset + flagsOffset] !== 0
  ) {
    return 0;
  }
  const type = bytes[offset + typeOffset] ?? 0;
  const schema = bytes[offset + schemaOffset] ?? 0;
  const length = readU32(bytes, offset + lengthOffset);
  const size = recordOverheadBytes + length;
  const sequenceHigh = readU32(bytes, offset + sequenceOffset);
  if (
    type < recordTypeMin ||
    type > recordTypeMax ||
    schema === 0 ||
    length > payloadBytesMax ||
    available < size ||
    // 2^53-1 has 0x1fffff in its high 32 bits.
    sequenceHigh > 0x1f_ffff
  ) {
    return 0;
  }
  const payloadStart = offset + recordHeaderBytes;
  const payloadEnd = payloadStart + length;
  if (checks !== "none") {
    const headerCrc = readU32(bytes, offset + headerCrcOffset);
    if (crc32cOfRange(bytes, offset, offset + headerCrcOffset) !== headerCrc) return 0;
    if (
      checks === "every" &&
      payloadCrc(bytes, payloadStart, payloadEnd, headerCrc) !== readU32(bytes, payloadEnd)
    ) {
      return 0;
    }
  }
  frame.type = type;
  frame.schema = schema;
  frame.sequence = sequenceHigh * 4_294_967_296 + readU32(bytes, offset + sequenceOffset + 4);
  frame.payloadStart = payloadStart;
  frame.payloadEnd = payloadEnd;
  return size;
};

/**
 * The verdict on the record at `offset`, each check in the order
 * `decodeRecord` documents, so that a fault is the first one found there:
 * a valid record's size (its fields in `frame`), or the fault.
 */
const judgedRecord = (
  bytes: Uint8Array,
  offset: number,
  frame: RecordFrame,
  checks: CrcChecks,
): number | RecordFault => {
  const available = bytes.length - offset;
  for (let index = 0; index < 4 && index < available; index++) {
    if (bytes[offset + index] !== magic[index]) return corrupt("BadMagic", offset);
  }
  if (available > versionOffset && bytes[offset + versionOffset] !== recordVersion) {
    return corrupt("UnsupportedVersion", offset);
  }
  if (available < recordHeaderBytes) {
    const reason = checkHeaderFields(bytes, offset, available);
    return reason === undefined ? { _tag: "Incomplete", offset } : corrupt(reason, offset);
  }
  if (checks !== "none") {
    const headerCrc = crc32cOfRange(bytes, offset, offset + headerCrcOffset);
    if (headerCrc !== readU32(bytes, offset + headerCrcOffset)) {
      return corrupt("HeaderChecksum", offset);
    }
  }
  const fieldReason = checkHeaderFields(bytes, offset, recordHeaderBytes);
  if (fieldReason !== undefined) return corrupt(fieldReason, offset);
  const length = readU32(bytes, offset + lengthOffset);
  const size = recordOverheadBytes + length;
  if (available < size) return { _tag: "Incomplete", offset };
  const payloadStart = offset + recordHeaderBytes;
  const payloadEnd = payloadStart + length;
  if (
    checks === "every" &&
    payloadCrc(bytes, payloadStart, payloadEnd, readU32(bytes, offset + headerCrcOffset)) !==
      readU32(bytes, payloadEnd)
  ) {
    return corrupt("RecordChecksum", offset);
  }
  const sequenceHigh = readU32(bytes, offset + sequenceOffset);
  // 2^53-1 has 0x1fffff in its high 32 bits.
  if (sequenceHigh > 0x1f_ffff) return { _tag: "BeyondSafeInteger", field: "sequence", offset };
  frame.type = bytes[offset + typeOffset] ?? 0;
  frame.schema = bytes[offset + schemaOffset] ?? 0;
  frame.sequence = sequenceHigh * 4_294_967_296 + readU32(bytes, offset + sequenceOffset + 4);
  frame.payloadStart = payloadStart;
  frame.payloadEnd = payloadEnd;
  return size;
};

/**
 * Decodes the record that starts at `offset` in `bytes` (the range runs to
 * the end of `bytes`). Never throws for any content.
 *
 * Checks, in order: magic, version; then, if the whole header is present,
 * header CRC, type, flags, schema, payload length (a header cut short has
 * its present fields checked in the same order and is otherwise
 * `Incomplete`); then `Incomplete` if the payload or record CRC is cut
 * short; then the record CRC; then whether the sequence fits 2^53-1. A
 * sequence of 0 is physically valid here and left to the segment's
 * contiguity rule (docs/codec.md).
 *
 * `offset` must be an integer in 0..bytes.length (a position the caller
 * computed): anything else is a programmer error and throws a `RangeError`.
 */
export const decodeRecord = (bytes: Uint8Array, offset: number): DecodedRecord => {
  const frame = recordFrame();
  const scanned = scanRecordAt(bytes, offset, frame);
  if (typeof scanned !== "number") return scanned;
  return {
    _tag: "Record",
    record: {
      type: frame.type,
      schema: frame.schema,
      sequence: frame.sequence,
      payload: bytes.subarray(frame.payloadStart, frame.payloadEnd),
    },
    size: scanned,
  };
};
