/**
 * Validating one segment file, every byte: header against the file name,
 * the store and the sequence chain; records back to back with contiguous
 * sequences; the footer (when sealed) against the header, the records and
 * the CRC of every byte before it. Records are handed to the caller chunk by
 * chunk, in order, so it can decode and fold them without holding the file.
 *
 * Reads only; never writes, truncates or repairs.
 */
import { Effect } from "effect";
import { DiskError, type FileHandle } from "../Disk.js";
import {
  BeyondSafeInteger,
  CorruptRecord,
  type FileKind,
  IncompleteTail,
  InvalidSegment,
  MalformedFile,
  Mismatch,
} from "../StoreError.js";
import {
  crc32c,
  decodeRecord,
  decodeSegmentFooter,
  decodeSegmentHeader,
  encodeSegmentFooter,
  encodeSegmentHeader,
  type FixedLayoutError,
  formatStoreId,
  type SegmentFooter,
  segmentFileBytesMax,
  segmentFooterBytes,
  segmentHeaderBytes,
} from "./codec.js";
import { readUpTo } from "./files.js";
import { equalBytes } from "./lock.js";
import * as SegmentIndex from "./segmentIndex.js";
import { recordBytesWanted } from "./segmentRead.js";

/** Bytes read per call while scanning (a larger record is read in several). */
export const scanChunkBytes = 4 * 1024 * 1024;

/** What the segment must be, from its name and its place in the chain. */
export interface ScanTarget {
  readonly path: string;
  readonly segmentId: number;
  /** Manifest first sequence for segment 1, else previous last + 1. */
  readonly firstSequence: number;
  readonly storeId: Uint8Array;
  /** The highest-ID segment: the only one that may lack a footer. */
  readonly highest: boolean;
}

/** One physically valid record, where it is, and its still-undecoded payload. */
export interface ScannedRecord {
  readonly sequence: number;
  readonly offset: number;
  readonly type: number;
  readonly schema: number;
  readonly payload: Uint8Array;
}

/** A validated segment. */
export interface ScannedSegment {
  readonly path: string;
  readonly segmentId: number;
  readonly firstSequence: number;
  readonly recordCount: number;
  /** File size in bytes. */
  readonly size: number;
  readonly sealed: boolean;
  /** Where the records end (the footer's offset when sealed, else the size). */
  readonly recordsEnd: number;
  /** CRC of bytes [0, recordsEnd): an active segment's writer continues it. */
  readonly crc: number;
  /** Offset of the last record, or of the header (0) when there is none. */
  readonly lastRecordOffset: number;
  /** CRC of bytes [lastRecordOffset, recordsEnd): what activation re-checks. */
  readonly tailCrc: number;
  readonly index: SegmentIndex.SegmentIndex;
}

export type ScanError =
  | BeyondSafeInteger
  | CorruptRecord
  | IncompleteTail
  | InvalidSegment
  | MalformedFile
  | Mismatch
  | DiskError;

const isStrictPrefix = (bytes: Uint8Array, whole: Uint8Array): boolean =>
  bytes.length < whole.length && equalBytes(bytes, whole.subarray(0, bytes.length));

const errorOffset = (error: FixedLayoutError): number =>
  "offset" in error && typeof error.offset === "number" ? error.offset : 0;

/**
 * The store's error for a fixed-layout structure that does not decode at
 * `base` in `path`: `BeyondSafeInteger` stays distinct, a footer whose record
 * count is 0 is an empty sealed segment, the rest is `MalformedFile`.
 */
export const fixedLayoutFailure = (
  path: string,
  kind: FileKind,
  base: number,
  error: FixedLayoutError,
): BeyondSafeInteger | InvalidSegment | MalformedFile => {
  const offset = base + errorOffset(error);
  if (error._tag === "BeyondSafeInteger") {
    return new BeyondSafeInteger({ path, offset, field: error.field });
  }
  if (error._tag === "InvalidField" && error.field === "recordCount" && error.reason === "Zero") {
    return new InvalidSegment({ path, offset: base, reason: "EmptySealed" });
  }
  return new MalformedFile({ path, kind, offset, reason: error });
};

const earlyEnd = (path: string, position: number): DiskError =>
  new DiskError({
    operation: "read",
    path,
    code: "EIO",
    detail: `file ended before ${position}, inside the size it reported`,
  });

/** Checks the header's identity against the target (STORE_ID first: a foreign file is the likelier story). */
const checkHeader = (target: ScanTarget, bytes: Uint8Array): Effect.Effect<void, ScanError> => {
  const { path } = target;
  const decoded = decodeSegmentHeader(bytes);
  if (decoded._tag === "Left") {
    return Effect.fail(fixedLayoutFailure(path, "SegmentHeader", 0, decoded.left));
  }
  const header = decoded.right;
  if (!equalBytes(header.storeId, target.storeId)) {
    return Effect.fail(
      new Mismatch({
        path,
        offset: 24,
        field: "StoreId",
        expected: formatStoreId(target.storeId),
        found: formatStoreId(header.storeId),
      }),
    );
  }
  if (header.segmentId !== target.segmentId) {
    return Effect.fail(
      new Mismatch({
        path,
        offset: 8,
        field: "SegmentId",
        expected: `${target.segmentId}`,
        found: `${header.segmentId}`,
      }),
    );
  }
  if (header.firstSequence !== target.firstSequence) {
    return Effect.fail(
      new Mismatch({
        path,
        offset: 16,
        field: "FirstSequence",
        expected: `${target.firstSequence}`,
        found: `${header.firstSequence}`,
      }),
    );
  }
  return Effect.void;
};

/** Checks a sealed segment's footer against its header, its records and its bytes. */
const checkFooter = (
  target: ScanTarget,
  footer: SegmentFooter,
  offset: number,
  recordCount: number,
  crc: number,
): Effect.Effect<void, ScanError> => {
  const mismatch = (field: Mismatch["field"], at: number, expected: string, found: string) =>
    Effect.fail(new Mismatch({ path: target.path, offset: offset + at, field, expected, found }));
  if (footer.segmentId !== target.segmentId) {
    return mismatch("SegmentId", 8, `${target.segmentId}`, `${footer.segmentId}`);
  }
  if (footer.firstSequence !== target.firstSequence) {
    return mismatch("FirstSequence", 16, `${target.firstSequence}`, `${footer.firstSequence}`);
  }
  if (!equalBytes(footer.storeId, target.storeId)) {
    return mismatch("StoreId", 24, formatStoreId(target.storeId), formatStoreId(footer.storeId));
  }
  if (footer.recordCount !== recordCount) {
    return mismatch("RecordCount", 48, `${recordCount}`, `${footer.recordCount}`);
  }
  if (footer.segmentCrc !== crc) {
    return mismatch("SegmentChecksum", 56, `${crc}`, `${footer.segmentCrc}`);
  }
  return Effect.void;
};

/**
 * Scans the segment open as `handle` (of `size` bytes) against `target`,
 * calling `onRecords` with each chunk's records in order (records already
 * accepted are delivered before a later fault is reported, so the caller's
 * earliest error wins). Fails with the first fault found; never writes.
 */
export const scanSegment = <X, R>(
  handle: FileHandle,
  size: number,
  target: ScanTarget,
  onRecords: (records: ReadonlyArray<ScannedRecord>) => Effect.Effect<void, X, R>,
): Effect.Effect<ScannedSegment, ScanError | X, R> =>
  Effect.gen(function* () {
    const { path } = target;
    if (size > segmentFileBytesMax) {
      return yield* new InvalidSegment({ path, offset: segmentFileBytesMax, reason: "TooLarge" });
    }
    const expectedHeader = encodeSegmentHeader({
      segmentId: target.segmentId,
      firstSequence: target.firstSequence,
      storeId: target.storeId,
    });
    if (size < segmentHeaderBytes) {
      const bytes = yield* readUpTo(handle, 0, size);
      if (target.highest && isStrictPrefix(bytes, expectedHeader)) {
        return yield* new IncompleteTail({
          path,
          offset: 0,
          sequence: target.firstSequence,
          part: "Header",
        });
      }
      yield* checkHeader(target, bytes);
    }
    const headerBytes = yield* readUpTo(handle, 0, segmentHeaderBytes);
    if (headerBytes.length < segmentHeaderBytes) return yield* earlyEnd(path, segmentHeaderBytes);
    yield* checkHeader(target, headerBytes);

    // A footer is recognised by decoding; for the highest segment a
    // non-footer tail means "active", and the record scan judges it.
    let footer: SegmentFooter | undefined;
    let footerError: FixedLayoutError | undefined;
    const footerOffset = size - segmentFooterBytes;
    if (size >= segmentHeaderBytes + segmentFooterBytes) {
      const footerBytes = yield* readUpTo(handle, footerOffset, segmentFooterBytes);
      const decoded = decodeSegmentFooter(footerBytes);
      if (decoded._tag === "Right") {
        footer = decoded.right;
      } else if (!target.highest) {
        if (decoded.left._tag === "BadMagic") {
          return yield* new InvalidSegment({ path, offset: footerOffset, reason: "MissingFooter" });
        }
        return yield* fixedLayoutFailure(path, "SegmentFooter", footerOffset, decoded.left);
      } else {
        footerError = decoded.left;
      }
    } else if (!target.highest) {
      return yield* new InvalidSegment({ path, offset: size, reason: "MissingFooter" });
    }
    const sealed = footer !== undefined;
    const recordsEnd = sealed ? footerOffset : size;

    let buffer: Uint8Array = new Uint8Array(0);
    let bufferStart = segmentHeaderBytes;
    let cursor = 0;
    // CRC of bytes [0, bufferStart).
    let crcBeforeBuffer = crc32c(headerBytes);
    let expected = target.firstSequence;
    let recordCount = 0;
    let lastRecordOffset = 0;
    const index = SegmentIndex.empty();
    let batch: Array<ScannedRecord> = [];

    const deliver = Effect.suspend(() => {
      if (batch.length === 0) return Effect.void;
      const records = batch;
      batch = [];
      return onRecords(records);
    });

    /**
     * The fault at `offset` in the active segment: a torn footer (the rest of
     * the file is a strict prefix of the footer these records call for), a
     * whole but broken footer, or a corrupt record.
     */
    const activeFault = (offset: number, reason: CorruptRecord["reason"]) =>
      Effect.gen(function* () {
        const restLength = size - offset;
        if (recordCount > 0 && restLength <= segmentFooterBytes) {
          const rest = yield* readUpTo(handle, offset, restLength);
          const expectedFooter = encodeSegmentFooter({
            segmentId: target.segmentId,
            firstSequence: target.firstSequence,
            storeId: target.storeId,
            lastSequence: expected - 1,
            recordCount,
            segmentCrc: crc32c(buffer.subarray(0, cursor), crcBeforeBuffer),
          });
          if (isStrictPrefix(rest, expectedFooter)) {
            return yield* new IncompleteTail({ path, offset, sequence: expected, part: "Footer" });
          }
          if (restLength === segmentFooterBytes && footerError !== undefined) {
            return yield* fixedLayoutFailure(path, "SegmentFooter", offset, footerError);
          }
        }
        return yield* new CorruptRecord({ path, offset, sequence: expected, reason });
      });

    for (;;) {
      // Decode every complete record the buffer holds.
      while (bufferStart + cursor < recordsEnd && cursor < buffer.length) {
        const offset = bufferStart + cursor;
        const decoded = decodeRecord(buffer, cursor);
        if (decoded._tag === "Incomplete") break;
        if (decoded._tag === "Corrupt") {
          yield* deliver;
          if (!sealed) return yield* activeFault(offset, decoded.reason);
          return yield* new CorruptRecord({
            path,
            offset,
            sequence: expected,
            reason: decoded.reason,
          });
        }
        if (decoded._tag === "BeyondSafeInteger") {
          yield* deliver;
          return yield* new BeyondSafeInteger({ path, offset: offset + 8, field: decoded.field });
        }
        const { record } = decoded;
        if (record.sequence !== expected) {
          yield* deliver;
          return yield* new Mismatch({
            path,
            offset: offset + 8,
            field: "Sequence",
            expected: `${expected}`,
            found: `${record.sequence}`,
          });
        }
        batch.push({
          sequence: record.sequence,
          offset,
          type: record.type,
          schema: record.schema,
          payload: record.payload,
        });
        SegmentIndex.note(index, recordCount, record.sequence, offset);
        lastRecordOffset = offset;
        recordCount += 1;
        expected += 1;
        cursor += decoded.size;
      }
      if (bufferStart + cursor === recordsEnd) break;
      const readPosition = bufferStart + buffer.length;
      if (readPosition >= recordsEnd) {
        // The bytes end inside a record whose present bytes are all plausible.
        yield* deliver;
        const offset = bufferStart + cursor;
        if (sealed) {
          return yield* new InvalidSegment({ path, offset, reason: "RecordsOverrunFooter" });
        }
        return yield* new IncompleteTail({ path, offset, sequence: expected, part: "Record" });
      }
      yield* deliver;
      const wanted = Math.max(scanChunkBytes, recordBytesWanted(buffer, cursor));
      const length = Math.min(wanted, recordsEnd - readPosition);
      const chunk = yield* readUpTo(handle, readPosition, length);
      if (chunk.length < length) return yield* earlyEnd(path, readPosition + length);
      const rest = buffer.subarray(cursor);
      crcBeforeBuffer = crc32c(buffer.subarray(0, cursor), crcBeforeBuffer);
      bufferStart += cursor;
      cursor = 0;
      if (rest.length === 0) {
        buffer = chunk;
      } else {
        const joined = new Uint8Array(rest.length + chunk.length);
        joined.set(rest, 0);
        joined.set(chunk, rest.length);
        buffer = joined;
      }
    }
    yield* deliver;
    const crc = crc32c(buffer.subarray(0, cursor), crcBeforeBuffer);
    // The last record is still in the buffer: the scan only moves past a
    // record's bytes when it reads more, and it stopped reading.
    const tailCrc =
      recordCount === 0
        ? crc32c(headerBytes)
        : crc32c(buffer.subarray(lastRecordOffset - bufferStart, cursor));
    if (footer !== undefined) {
      if (recordCount === 0) {
        return yield* new InvalidSegment({ path, offset: footerOffset, reason: "EmptySealed" });
      }
      yield* checkFooter(target, footer, footerOffset, recordCount, crc);
    }
    return {
      path,
      segmentId: target.segmentId,
      firstSequence: target.firstSequence,
      recordCount,
      size,
      sealed,
      recordsEnd,
      crc,
      lastRecordOffset: recordCount === 0 ? 0 : lastRecordOffset,
      tailCrc,
      index,
    };
  });
