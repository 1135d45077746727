/**
 * Writing a new generation's segments as its records arrive: sealed
 * segments from ID 1, each filled until it reaches the rotation target (at
 * least one record each, never past the file limit), written in chunks of
 * at most `writeBytesMax`, footed and fsynced when the next one starts or
 * at `seal`; then the header-only active segment after the last record.
 * Compaction writes its base through it in one call, the import of a
 * generation (`Import.ts`) a page at a time, so both lay out the same
 * records in the same bytes and segment boundaries, and a segment header
 * is encoded in one place (`headerOf`).
 *
 * Memory: the records of one chunk (at most `writeBytesMax` bytes) and the
 * segments' sparse indexes; never the generation.
 */
import type { Event } from "@tay/core";
import * as Effect from "effect/Effect";
import { Disk, type DiskError, type FileHandle } from "../../disk/Disk.js";
import { writeAll } from "../../disk/Files.js";
import * as Batch from "../../log/Batch.js";
import type { PendingRecord } from "../../log/Batch.js";
import { UnencodableEvent } from "../../log/LogError.js";
import * as Layout from "../Layout.js";
import type { HardLinksUnsupported, LinkingOperation } from "../StoreError.js";
import { appendOptions, type DurabilityPolicy } from "../StoreOptions.js";
import {
  crc32c,
  encodeRecordInto,
  encodeSegmentFooter,
  encodeSegmentHeader,
  segmentFileBytesMax,
  segmentFooterBytes,
} from "./codec.js";
import { createSegment } from "./segmentCreate.js";
import * as SegmentIndex from "./segmentIndex.js";
import type { SegmentState } from "./storeState.js";

/** A base record with its sequence. */
export interface BaseRecord extends Omit<PendingRecord, "sequence"> {
  readonly sequence: number;
}

/** Where the segments go and how they are cut. */
export interface BaseTarget {
  readonly directory: string;
  readonly epoch: number;
  readonly storeId: Uint8Array;
  readonly rotationTargetBytes: number;
  readonly writeBytesMax: number;
}

/** The header of segment `segmentId` of the store `storeId`, starting at `firstSequence`. */
const headerOf = (segmentId: number, firstSequence: number, storeId: Uint8Array): Uint8Array =>
  encodeSegmentHeader({ segmentId, firstSequence, storeId });

/** The segment being filled: its open file, its state, its running CRC, its unwritten chunk. */
interface Filling {
  readonly handle: FileHandle;
  readonly segment: SegmentState;
  crc: number;
  /** Records noted in the segment but not yet written. */
  readonly chunk: Array<BaseRecord>;
  chunkBytes: number;
  /** Where the chunk goes in the file. */
  written: number;
}

/**
 * The sealed segments of a generation, written as records arrive. One
 * segment file is open at a time; `close` closes it (the caller's
 * finalizer, so a failure midway leaves no descriptor behind).
 */
export class BaseSegments {
  readonly sealed: Array<SegmentState> = [];
  private filling: Filling | undefined = undefined;

  constructor(private readonly target: BaseTarget) {}

  /** The next sequence expected (the last written + 1), or undefined before any record. */
  get nextSequence(): number | undefined {
    const filling = this.filling?.segment ?? this.sealed.at(-1);
    return filling === undefined ? undefined : filling.firstSequence + filling.recordCount;
  }

  /**
   * Appends `records` (contiguous sequences, following the previous ones) to
   * the segments, pulling them one at a time: a lazy iterable is never more
   * than one chunk and one record ahead of the disk.
   */
  write(records: Iterable<BaseRecord>): Effect.Effect<void, DiskError, Disk> {
    return Effect.gen(this, function* () {
      const { rotationTargetBytes, writeBytesMax } = this.target;
      for (const record of records) {
        let filling = this.filling;
        if (
          filling !== undefined &&
          (filling.segment.size >= rotationTargetBytes ||
            filling.segment.size + record.size + segmentFooterBytes > segmentFileBytesMax)
        ) {
          yield* this.sealFilling(filling);
          filling = undefined;
        }
        if (filling === undefined) filling = yield* this.start(record.sequence);
        if (filling.chunk.length > 0 && filling.chunkBytes + record.size > writeBytesMax) {
          yield* this.flushChunk(filling);
        }
        const { segment } = filling;
        SegmentIndex.note(segment.index, segment.recordCount, record.sequence, segment.size);
        segment.recordCount += 1;
        segment.size += record.size;
        filling.chunk.push(record);
        filling.chunkBytes += record.size;
      }
    });
  }

  /** Writes what is pending and seals the last segment; returns every sealed segment. */
  seal(): Effect.Effect<ReadonlyArray<SegmentState>, DiskError, Disk> {
    return Effect.gen(this, function* () {
      if (this.filling !== undefined) yield* this.sealFilling(this.filling);
      return this.sealed;
    });
  }

  /** Closes the open segment file, if any (after a failure; `seal` closes it otherwise). */
  close(): Effect.Effect<void> {
    const filling = this.filling;
    this.filling = undefined;
    return filling === undefined ? Effect.void : Effect.ignore(filling.handle.close());
  }

  private start(firstSequence: number) {
    return Effect.gen(this, function* () {
      const { directory, epoch, storeId } = this.target;
      const id = this.sealed.length + 1;
      const path = Layout.segmentPath(directory, epoch, id);
      const header = headerOf(id, firstSequence, storeId);
      const handle = yield* (yield* Disk).open(path, "createExclusive");
      const filling: Filling = {
        handle,
        segment: {
          id,
          path,
          firstSequence,
          recordCount: 0,
          size: header.length,
          sealed: false,
          crc: 0,
          index: SegmentIndex.empty(),
        },
        crc: crc32c(header),
        chunk: [],
        chunkBytes: 0,
        written: header.length,
      };
      this.filling = filling;
      yield* writeAll(handle, 0, header);
      return filling;
    });
  }

  private flushChunk(filling: Filling) {
    return Effect.gen(function* () {
      const buffer = new Uint8Array(filling.chunkBytes);
      let offset = 0;
      for (const record of filling.chunk) offset += encodeRecordInto(buffer, offset, record);
      yield* writeAll(filling.handle, filling.written, buffer);
      filling.crc = crc32c(buffer, filling.crc);
      filling.written += buffer.length;
      filling.chunk.length = 0;
      filling.chunkBytes = 0;
    });
  }

  private sealFilling(filling: Filling) {
    return Effect.gen(this, function* () {
      yield* this.flushChunk(filling);
      const { segment, handle } = filling;
      const footer = encodeSegmentFooter({
        segmentId: segment.id,
        firstSequence: segment.firstSequence,
        storeId: this.target.storeId,
        lastSequence: segment.firstSequence + segment.recordCount - 1,
        recordCount: segment.recordCount,
        segmentCrc: filling.crc,
      });
      yield* writeAll(handle, filling.written, footer);
      yield* handle.sync();
      this.filling = undefined;
      yield* Effect.ignore(handle.close());
      segment.size += segmentFooterBytes;
      segment.sealed = true;
      segment.crc = filling.crc;
      this.sealed.push(segment);
    });
  }
}

/**
 * Writes `records` as sealed segments from ID 1 (see the module comment),
 * every file fsynced (the caller fsyncs `segments/`). Returns the segment
 * states.
 */
export const writeBaseSegments = (
  target: BaseTarget,
  records: ReadonlyArray<BaseRecord>,
): Effect.Effect<ReadonlyArray<SegmentState>, DiskError, Disk> =>
  Effect.acquireUseRelease(
    Effect.sync(() => new BaseSegments(target)),
    (segments) => Effect.zipRight(segments.write(records), segments.seal()),
    (segments) => segments.close(),
  );

/** The sealed segments of a base written from its events, and how many records they hold. */
export interface WrittenBase {
  readonly segments: ReadonlyArray<SegmentState>;
  readonly recordCount: number;
}

/**
 * Writes the base `events` as sealed segments from ID 1, numbered from
 * `firstSequence`, encoding each as the segments take it (compaction,
 * issue 19: the base is produced on demand and never held whole). An
 * event that does not encode stops the write with `UnencodableEvent` (the
 * files written so far are the caller's to drop). Whatever ends the write,
 * the events' iterator is closed, so its producer's `finally` runs.
 */
export const writeBaseEvents = (
  target: BaseTarget,
  firstSequence: number,
  events: Iterable<Event.Event>,
): Effect.Effect<WrittenBase, DiskError | UnencodableEvent, Disk> =>
  Effect.suspend(() => {
    const iterator = events[Symbol.iterator]();
    const stopped: { error: UnencodableEvent | undefined } = { error: undefined };
    let count = 0;
    function* records(): Generator<BaseRecord> {
      for (let pulled = iterator.next(); pulled.done !== true; pulled = iterator.next()) {
        const record = Batch.encodeOne(pulled.value, count);
        if (record instanceof UnencodableEvent) {
          stopped.error = record;
          return;
        }
        yield { ...record, sequence: firstSequence + count };
        count += 1;
      }
    }
    return Effect.acquireUseRelease(
      Effect.sync(() => new BaseSegments(target)),
      (segments) =>
        Effect.gen(function* () {
          yield* segments.write(records());
          if (stopped.error !== undefined) return yield* stopped.error;
          return { segments: yield* segments.seal(), recordCount: count };
        }),
      (segments) =>
        Effect.zipRight(
          segments.close(),
          Effect.sync(() => iterator.return?.()),
        ),
    );
  });

/** The header-only active segment after the sealed ones: created whole, open for appends. */
export interface ActiveSegment {
  readonly segment: SegmentState;
  readonly handle: FileHandle;
  /** The CRC of its header: the running segment CRC its writer continues. */
  readonly crc: number;
}

/**
 * Creates the active segment `id` of the target's generation, empty,
 * starting at `firstSequence` (after the last sealed record): staged,
 * synced and linked into place (`createSegment`), which syncs `segments/`
 * and so makes the sealed files' entries durable too.
 */
export const createActiveSegment = (
  target: Pick<BaseTarget, "directory" | "epoch" | "storeId">,
  id: number,
  firstSequence: number,
  durability: DurabilityPolicy,
  operation: LinkingOperation,
): Effect.Effect<ActiveSegment, DiskError | HardLinksUnsupported, Disk> =>
  Effect.gen(function* () {
    const { directory, epoch, storeId } = target;
    const header = headerOf(id, firstSequence, storeId);
    const handle = yield* createSegment({
      directory,
      epoch,
      id,
      header,
      sync: true,
      append: appendOptions(durability),
      operation,
    });
    return {
      segment: {
        id,
        path: Layout.segmentPath(directory, epoch, id),
        firstSequence,
        recordCount: 0,
        size: header.length,
        sealed: false,
        crc: 0,
        index: SegmentIndex.empty(),
      },
      handle,
      crc: crc32c(header),
    };
  });
