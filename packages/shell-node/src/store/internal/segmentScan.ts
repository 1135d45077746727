/**
 * Validating one segment file, every byte: header against the file name,
 * the store and the sequence chain; records back to back with contiguous
 * sequences; the footer (when sealed) against the header, the records and
 * the CRC of every byte before it. Records are handed to the caller in
 * batches, in order, so it can decode and fold them without holding the file.
 *
 * Reads only; never writes, truncates or repairs.
 */
import * as Effect from "effect/Effect";
import type { DiskError, FileHandle } from "../../disk/Disk.js";
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
  decodeSegmentFooter,
  decodeSegmentHeader,
  encodeSegmentFooter,
  encodeSegmentHeader,
  type FixedLayoutError,
  formatStoreId,
  type RecordFrame,
  recordFrame,
  type SegmentFooter,
  segmentFileBytesMax,
  segmentFooterBytes,
  segmentHeaderBytes,
  scanRecordAt,
  scanRecordStructureAt,
} from "./codec.js";
import { readUpTo } from "../../disk/Files.js";
import { equalBytes } from "./bytes.js";
import { type ChunkBuffers, ChunkReader, chunkBuffers, earlyEnd } from "./chunkReader.js";
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

/**
 * Records handed to the caller at a time: the length of a batch's columns.
 * The caller decodes a batch while its bytes (~200 KB) are still in the
 * CPU's cache. (Batches used to be an object and a payload view per
 * record, which young-generation collections copied when they were large.)
 */
export const deliverRecordsMax = 1024;

/**
 * Consecutive valid records of one segment, in order, as columns over the
 * scan's buffer (no object per record): record `i` has sequence
 * `firstSequence + i`, starts at `bytes[starts[i]]` (file offset
 * `bytesStart + starts[i]`), and carries the pair (`types[i]`,
 * `schemas[i]`) and the payload `bytes[payloadStarts[i], payloadEnds[i])`.
 * The columns are longer than `count` and reused by the next batch: the
 * caller reads them during the call and keeps nothing.
 */
export interface ScannedBatch {
  readonly count: number;
  readonly firstSequence: number;
  readonly bytes: Uint8Array;
  /** File offset of `bytes[0]`. */
  readonly bytesStart: number;
  readonly starts: Int32Array;
  readonly types: Uint8Array;
  readonly schemas: Uint8Array;
  readonly payloadStarts: Int32Array;
  readonly payloadEnds: Int32Array;
}

/** A batch being filled: the columns of `ScannedBatch`, allocated once per scan. */
class BatchColumns implements ScannedBatch {
  count = 0;
  firstSequence = 0;
  bytes: Uint8Array = new Uint8Array(0);
  bytesStart = 0;
  readonly starts = new Int32Array(deliverRecordsMax);
  readonly types = new Uint8Array(deliverRecordsMax);
  readonly schemas = new Uint8Array(deliverRecordsMax);
  readonly payloadStarts = new Int32Array(deliverRecordsMax);
  readonly payloadEnds = new Int32Array(deliverRecordsMax);
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
  /**
   * CRC of bytes [0, prefixEnd) when the scan was given a `prefixEnd` no
   * later than `recordsEnd`, else undefined: what a state image that named
   * this segment before it grew is compared with (docs/store.md, "The state
   * image": a prefix of the active segment).
   */
  readonly prefixCrc: number | undefined;
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

/** Why `decodeBuffered` stopped: it needs more bytes (or is done), the batch is full, or a fault. */
type ScanStop = "Exhausted" | "BatchFull" | "Fault";

/** A record the scan refuses, found by `decodeBuffered` at the cursor. */
type ScanFault =
  | { readonly _tag: "Corrupt"; readonly reason: CorruptRecord["reason"] }
  | { readonly _tag: "BeyondSafeInteger"; readonly field: "sequence" }
  | { readonly _tag: "Sequence"; readonly found: number };

/**
 * Where a scan stands. Plain mutable fields, so that the record loop runs
 * in an ordinary function: inside the Effect generator every local lives in
 * the generator's heap context, which made the loop several times slower.
 */
class ScanCursor {
  /** The bytes held, starting at file offset `bufferStart`. */
  buffer: Uint8Array = new Uint8Array(0);
  bufferStart = segmentHeaderBytes;
  /** The next record's offset in `buffer`. */
  cursor = 0;
  /** The sequence the next record must have. */
  expected: number;
  recordCount = 0;
  lastRecordOffset = 0;
  /** Set when `decodeBuffered` returns "Fault": the record at the cursor. */
  fault: ScanFault | undefined = undefined;
  /** Where `scanRecordAt` leaves each record's fields (one per scan). */
  readonly frame: RecordFrame = recordFrame();

  constructor(firstSequence: number) {
    this.expected = firstSequence;
  }
}

/**
 * Validates the complete records the buffer holds from the cursor on, in
 * order, adding each to `batch` and noting it in `index`, until the buffer
 * (or the records) end, the batch holds `deliverRecordsMax`, or a record is
 * refused (left at the cursor, described in `scan.fault`). Allocates
 * nothing for a valid record: its fields go through one reused frame into
 * the batch's columns.
 */
const decodeBuffered = (
  scan: ScanCursor,
  recordsEnd: number,
  batch: BatchColumns,
  index: SegmentIndex.SegmentIndex,
  recordCrcs: boolean,
): ScanStop => {
  const { buffer, bufferStart, frame } = scan;
  // Without: the segment's CRC, checked at its end, vouches for the records (`sealedOnTrust`).
  const scanAt = recordCrcs ? scanRecordAt : scanRecordStructureAt;
  let cursor = scan.cursor;
  let expected = scan.expected;
  let recordCount = scan.recordCount;
  let lastRecordOffset = scan.lastRecordOffset;
  let count = batch.count;
  if (count === 0) {
    batch.firstSequence = expected;
    batch.bytes = buffer;
    batch.bytesStart = bufferStart;
  }
  let stop: ScanStop = "Exhausted";
  while (bufferStart + cursor < recordsEnd && cursor < buffer.length) {
    if (count >= deliverRecordsMax) {
      stop = "BatchFull";
      break;
    }
    const scanned = scanAt(buffer, cursor, frame);
    if (typeof scanned !== "number") {
      if (scanned._tag === "Incomplete") break;
      scan.fault =
        scanned._tag === "Corrupt"
          ? { _tag: "Corrupt", reason: scanned.reason }
          : { _tag: "BeyondSafeInteger", field: scanned.field };
      stop = "Fault";
      break;
    }
    if (frame.sequence !== expected) {
      scan.fault = { _tag: "Sequence", found: frame.sequence };
      stop = "Fault";
      break;
    }
    const offset = bufferStart + cursor;
    batch.starts[count] = cursor;
    batch.types[count] = frame.type;
    batch.schemas[count] = frame.schema;
    batch.payloadStarts[count] = frame.payloadStart;
    batch.payloadEnds[count] = frame.payloadEnd;
    count += 1;
    SegmentIndex.note(index, recordCount, expected, offset);
    lastRecordOffset = offset;
    recordCount += 1;
    expected += 1;
    cursor += scanned;
  }
  batch.count = count;
  scan.cursor = cursor;
  scan.expected = expected;
  scan.recordCount = recordCount;
  scan.lastRecordOffset = lastRecordOffset;
  return stop;
};

/**
 * The header, read and checked against `target`; a highest segment shorter
 * than a header whose bytes agree with the one it must have is a torn
 * creation (`IncompleteTail` at offset 0). Returns the header's bytes.
 */
const readHeader = (handle: FileHandle, size: number, target: ScanTarget) =>
  Effect.gen(function* () {
    const { path } = target;
    if (size > segmentFileBytesMax) {
      return yield* new InvalidSegment({ path, offset: segmentFileBytesMax, reason: "TooLarge" });
    }
    if (size < segmentHeaderBytes) {
      const bytes = yield* readUpTo(handle, 0, size);
      const expected = encodeSegmentHeader({
        segmentId: target.segmentId,
        firstSequence: target.firstSequence,
        storeId: target.storeId,
      });
      if (target.highest && isStrictPrefix(bytes, expected)) {
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
    return headerBytes;
  });

/** Where a segment's records end, and its footer when it is sealed. */
interface Ending {
  readonly footer: SegmentFooter | undefined;
  /** Why the last 64 bytes of the highest segment are no footer (the record scan judges them). */
  readonly footerError: FixedLayoutError | undefined;
  readonly footerOffset: number;
  readonly recordsEnd: number;
}

/**
 * A footer is recognised by decoding; for the highest segment a
 * non-footer tail means "active", and the record scan judges it.
 */
const readEnding = (handle: FileHandle, size: number, target: ScanTarget) =>
  Effect.gen(function* () {
    const { path } = target;
    const footerOffset = size - segmentFooterBytes;
    const open: Ending = {
      footer: undefined,
      footerError: undefined,
      footerOffset,
      recordsEnd: size,
    };
    if (size < segmentHeaderBytes + segmentFooterBytes) {
      if (!target.highest) {
        return yield* new InvalidSegment({ path, offset: size, reason: "MissingFooter" });
      }
      return open;
    }
    const decoded = decodeSegmentFooter(yield* readUpTo(handle, footerOffset, segmentFooterBytes));
    if (decoded._tag === "Right") {
      return { ...open, footer: decoded.right, recordsEnd: footerOffset };
    }
    if (target.highest) return { ...open, footerError: decoded.left };
    if (decoded.left._tag === "BadMagic") {
      return yield* new InvalidSegment({ path, offset: footerOffset, reason: "MissingFooter" });
    }
    return yield* fixedLayoutFailure(path, "SegmentFooter", footerOffset, decoded.left);
  });

/** One segment's record scan: the buffer, the running CRC, the batch on its way to the caller. */
class RecordScan<X, R> {
  readonly scan: ScanCursor;
  // CRC of bytes [0, scan.bufferStart).
  crcBeforeBuffer: number;
  readonly index = SegmentIndex.empty();
  private readonly batch = new BatchColumns();
  /** The file's chunks, the next read while this one is decoded. */
  private readonly chunks: ChunkReader;
  /** CRC of bytes [0, prefixEnd), once the scan has passed it. */
  prefixCrc: number | undefined = undefined;

  constructor(
    private readonly handle: FileHandle,
    private readonly size: number,
    private readonly target: ScanTarget,
    readonly ending: Ending,
    headerBytes: Uint8Array,
    private readonly onRecords: (batch: ScannedBatch) => Effect.Effect<void, X, R>,
    buffers: ChunkBuffers,
    /** Check each record's CRCs (false: a sealed segment on trust, see `scanSegment`). */
    private readonly recordCrcs: boolean,
    /** Where to note the running CRC (`prefixCrc`), if anywhere. */
    private readonly prefixEnd: number | undefined,
  ) {
    this.scan = new ScanCursor(target.firstSequence);
    this.crcBeforeBuffer = crc32c(headerBytes);
    this.chunks = new ChunkReader(buffers, handle, size, scanChunkBytes, (position) =>
      earlyEnd(target.path, position),
    );
  }

  /** Hands the records decoded so far to the caller. */
  readonly deliver = Effect.suspend(() => {
    const { batch } = this;
    if (batch.count === 0) return Effect.void;
    // The columns are reused: the batch is emptied once the caller is done.
    return Effect.ensuring(
      this.onRecords(batch),
      Effect.sync(() => {
        batch.count = 0;
      }),
    );
  });

  /** Decodes what the buffer holds, reading chunk after chunk, to the records' end. */
  run(): Effect.Effect<void, ScanError | X, R> {
    // A chunk read ahead and not needed (a fault, the caller's refusal) is
    // waited for: no read of this handle outlives the scan.
    return Effect.ensuring(this.chunkByChunk(), this.chunks.settle());
  }

  private chunkByChunk(): Effect.Effect<void, ScanError | X, R> {
    return Effect.gen(this, function* () {
      const { scan, ending } = this;
      for (;;) {
        const stop = decodeBuffered(
          scan,
          ending.recordsEnd,
          this.batch,
          this.index,
          this.recordCrcs,
        );
        if (stop === "BatchFull") {
          yield* this.deliver;
          continue;
        }
        const offset = scan.bufferStart + scan.cursor;
        yield* this.deliver;
        if (stop === "Fault" && scan.fault !== undefined) {
          return yield* this.refusal(scan.fault, offset);
        }
        if (offset === ending.recordsEnd) return;
        if (scan.bufferStart + scan.buffer.length >= ending.recordsEnd) {
          // The bytes end inside a record whose present bytes are all plausible.
          return yield* ending.footer !== undefined
            ? new InvalidSegment({ path: this.target.path, offset, reason: "RecordsOverrunFooter" })
            : new IncompleteTail({
                path: this.target.path,
                offset,
                sequence: scan.expected,
                part: "Record",
              });
        }
        yield* this.nextChunk(offset);
      }
    });
  }

  /**
   * Takes the next chunk, from the first byte not yet decoded: the start of
   * a record the buffer holds only part of is carried into it (or read
   * again) rather than every chunk being copied behind it. Those bytes were
   * neither hashed nor delivered yet; the segment CRC covers the bytes as
   * decoded.
   */
  private nextChunk(offset: number) {
    return Effect.gen(this, function* () {
      const { scan } = this;
      const held = scan.buffer.length - scan.cursor;
      const wanted = Math.max(scanChunkBytes, held + recordBytesWanted(scan.buffer, scan.cursor));
      const length = Math.min(wanted, this.ending.recordsEnd - offset);
      // Hashed before the read: a reused buffer is overwritten by it.
      this.notePrefix();
      const crc = crc32c(scan.buffer.subarray(0, scan.cursor), this.crcBeforeBuffer);
      const carried = scan.buffer.subarray(scan.cursor);
      const chunk = yield* this.chunks.next(offset, carried, length, this.ending.recordsEnd);
      this.crcBeforeBuffer = crc;
      scan.bufferStart = offset;
      scan.cursor = 0;
      scan.buffer = chunk;
    });
  }

  /**
   * Notes the CRC of bytes [0, prefixEnd) when the hashed part of the
   * buffer, [bufferStart, bufferStart + cursor), reaches it: called before
   * the buffer is replaced and once the scan has ended.
   */
  notePrefix(): void {
    const { prefixEnd, scan } = this;
    if (prefixEnd === undefined || this.prefixCrc !== undefined) return;
    const within = prefixEnd - scan.bufferStart;
    if (within < 0 || within > scan.cursor) return;
    this.prefixCrc = crc32c(scan.buffer.subarray(0, within), this.crcBeforeBuffer);
  }

  /** The error for the record refused at `offset`. */
  private refusal(fault: ScanFault, offset: number): Effect.Effect<never, ScanError> {
    const { path } = this.target;
    const sequence = this.scan.expected;
    switch (fault._tag) {
      case "Corrupt":
        return this.ending.footer === undefined
          ? this.activeFault(offset, fault.reason)
          : Effect.fail(new CorruptRecord({ path, offset, sequence, reason: fault.reason }));
      case "BeyondSafeInteger":
        return Effect.fail(new BeyondSafeInteger({ path, offset: offset + 8, field: fault.field }));
      case "Sequence":
        return Effect.fail(
          new Mismatch({
            path,
            offset: offset + 8,
            field: "Sequence",
            expected: `${sequence}`,
            found: `${fault.found}`,
          }),
        );
      default: {
        const unknown: never = fault;
        return unknown;
      }
    }
  }

  /**
   * The fault at `offset` in the active segment: a torn footer (the rest of
   * the file is a strict prefix of the footer these records call for), a
   * whole but broken footer, or a corrupt record.
   */
  private activeFault(offset: number, reason: CorruptRecord["reason"]) {
    return Effect.gen(this, function* () {
      const { scan, target } = this;
      const { path } = target;
      const restLength = this.size - offset;
      if (scan.recordCount > 0 && restLength <= segmentFooterBytes) {
        const rest = yield* readUpTo(this.handle, offset, restLength);
        if (isStrictPrefix(rest, this.footerNow())) {
          return yield* new IncompleteTail({
            path,
            offset,
            sequence: scan.expected,
            part: "Footer",
          });
        }
        const { footerError } = this.ending;
        if (restLength === segmentFooterBytes && footerError !== undefined) {
          return yield* fixedLayoutFailure(path, "SegmentFooter", offset, footerError);
        }
      }
      return yield* new CorruptRecord({ path, offset, sequence: scan.expected, reason });
    });
  }

  /** The footer that would seal the segment after the records decoded so far. */
  private footerNow(): Uint8Array {
    const { scan, target } = this;
    return encodeSegmentFooter({
      segmentId: target.segmentId,
      firstSequence: target.firstSequence,
      storeId: target.storeId,
      lastSequence: scan.expected - 1,
      recordCount: scan.recordCount,
      segmentCrc: crc32c(scan.buffer.subarray(0, scan.cursor), this.crcBeforeBuffer),
    });
  }
}

/**
 * Scans the segment open as `handle` (of `size` bytes) against `target`,
 * calling `onRecords` with its records in order, at most
 * `deliverRecordsMax` at a time (records already accepted are delivered
 * before a later fault is reported, so the caller's earliest error wins).
 * A batch's columns and bytes are the scan's own, reused for the next
 * batch: the caller decodes the payloads in place during the call and keeps
 * nothing of the batch. Fails with the first fault found; never writes.
 */
export const scanSegment = <X, R>(
  handle: FileHandle,
  size: number,
  target: ScanTarget,
  onRecords: (batch: ScannedBatch) => Effect.Effect<void, X, R>,
  /** The read buffers, shared by the segments one open scans in turn. */
  buffers: ChunkBuffers = chunkBuffers(),
  /**
   * A sealed segment's records are delivered without their own CRCs
   * checked: only the segment CRC its footer holds, checked at the end as
   * always, vouches for them, so the caller must keep nothing of the scan
   * unless it succeeds, and scan again with this off to learn which record
   * a failure was (docs/store.md, "Record CRCs at open"). Open's choice.
   */
  sealedOnTrust = false,
  /**
   * An offset at which to note the CRC of the bytes before it
   * (`ScannedSegment.prefixCrc`): where a state image says the segment's
   * records ended when it was written.
   */
  prefixEnd?: number,
): Effect.Effect<ScannedSegment, ScanError | X, R> =>
  Effect.gen(function* () {
    const { path } = target;
    const headerBytes = yield* readHeader(handle, size, target);
    const ending = yield* readEnding(handle, size, target);
    const recordCrcs = !(sealedOnTrust && ending.footer !== undefined);
    const records = new RecordScan(
      handle,
      size,
      target,
      ending,
      headerBytes,
      onRecords,
      buffers,
      recordCrcs,
      prefixEnd,
    );
    yield* records.run();
    records.notePrefix();
    const { buffer, bufferStart, cursor, recordCount, lastRecordOffset } = records.scan;
    const crc = crc32c(buffer.subarray(0, cursor), records.crcBeforeBuffer);
    // The last record is still in the buffer: the scan only moves past a
    // record's bytes when it reads more, and it stopped reading.
    const tailCrc =
      recordCount === 0
        ? crc32c(headerBytes)
        : crc32c(buffer.subarray(lastRecordOffset - bufferStart, cursor));
    const { footer, footerOffset } = ending;
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
      sealed: footer !== undefined,
      recordsEnd: ending.recordsEnd,
      crc,
      lastRecordOffset: recordCount === 0 ? 0 : lastRecordOffset,
      tailCrc,
      prefixCrc: records.prefixCrc,
      index: records.index,
    };
  });
