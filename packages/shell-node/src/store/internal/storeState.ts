/**
 * The running store's mutable state. It is touched only inside `Effect.sync`
 * blocks (or between yields of the one fiber that owns a step), so every
 * transition is atomic on Node's single thread; the writer's turn (`exclusive.ts`) orders
 * the I/O that goes with them.
 */
import * as Deferred from "effect/Deferred";
import type * as Effect from "effect/Effect";
import * as FiberId from "effect/FiberId";
import type { FileHandle } from "../../disk/Disk.js";
import type { PendingRecord } from "../../log/Batch.js";
import type * as Ticket from "../../log/Ticket.js";
import type { StoreError, WriterFailed } from "../StoreError.js";
import type { StoreOptions } from "../StoreOptions.js";
import { type Manifest, segmentFooterBytes } from "./codec.js";
import type { SegmentDigest } from "../../log/Projection.js";
import type { OrphanedGeneration } from "./recovery.js";
import type * as SegmentIndex from "./segmentIndex.js";
import type { WrittenMarks } from "./writtenMarks.js";

/** One segment file of the current generation. */
export interface SegmentState {
  readonly id: number;
  readonly path: string;
  readonly firstSequence: number;
  /** Records written to the file (and visible to reads). */
  recordCount: number;
  /** Bytes written: header, records and, once sealed, the footer. */
  size: number;
  sealed: boolean;
  /**
   * CRC of bytes [0, records end) once sealed (the footer's segment CRC);
   * the active segment's running CRC is `ActiveSegment.crc`. What the
   * state image names the segment by (`segmentDigests`).
   */
  crc: number;
  readonly index: SegmentIndex.SegmentIndex;
}

/** The segment appends go to, its open handle and the running segment CRC. */
export interface ActiveSegment {
  readonly segment: SegmentState;
  readonly handle: FileHandle;
  /** CRC of every byte written so far, the future footer's segment CRC. */
  crc: number;
}

export interface GenerationState {
  readonly epoch: number;
  readonly manifest: Manifest;
  readonly storeId: Uint8Array;
  readonly segments: Array<SegmentState>;
  active: ActiveSegment;
}

export interface StoreState {
  readonly directory: string;
  readonly options: StoreOptions;
  generation: GenerationState;
  /** The sequence the next submitted record gets. */
  nextSequence: number;
  pending: Array<PendingRecord>;
  pendingBytes: number;
  /** Records taken by the write in progress (still served to reads from memory). */
  inFlight: ReadonlyArray<PendingRecord>;
  tickets: Array<Ticket.Ticket<StoreError>>;
  /** Set once a write or sync failed: the writer refuses everything after. */
  failure: WriterFailed | undefined;
  /** Close began: no submit is accepted, the writer drains and stops. */
  closing: boolean;
  /** A compaction is in progress: submits wait on it. */
  gate: Deferred.Deferred<void> | undefined;
  /** `flush()` asked for everything pending to be written now. */
  forced: boolean;
  /** When the last flush finished, ms. */
  lastFlushAt: number;
  /** Generations under `epochs/` other than the current one (removed by the next compaction). */
  orphans: Array<OrphanedGeneration>;
  /** Where the last few writes ended, for a state image of a busy store. */
  readonly marks: WrittenMarks;
}

/** A fresh, not yet completed signal, made synchronously. */
export const makeSignal = <E>(): Deferred.Deferred<void, E> =>
  Deferred.unsafeMake<void, E>(FiberId.none);

/** Completes `deferred` synchronously (a no-op if already done). */
export const settle = <E>(
  deferred: Deferred.Deferred<void, E>,
  outcome: Effect.Effect<void, E>,
): void => {
  Deferred.unsafeDone(deferred, outcome);
};

/** The last sequence assigned (written or pending). */
export const lastAssigned = (state: StoreState): number => state.nextSequence - 1;

/** The last sequence written to a file (durable per policy once its batch resolved). */
export const lastWritten = (state: StoreState): number => {
  const { segment } = state.generation.active;
  return segment.firstSequence + segment.recordCount - 1;
};

/**
 * What each segment of the generation holds as written: its records, where
 * they end and the CRC of every byte before that (the scan at open
 * computes the same three), for the state image to name the bytes it
 * folded (docs/store.md, "The state image").
 */
export const segmentDigests = (state: StoreState): ReadonlyArray<SegmentDigest> =>
  state.generation.segments.map((segment) => ({
    id: segment.id,
    records: segment.recordCount,
    end: segment.sealed ? segment.size - segmentFooterBytes : segment.size,
    crc: segment.sealed ? segment.crc : state.generation.active.crc,
  }));

/** Records written to the generation's files. */
export const writtenRecords = (state: StoreState): number =>
  state.generation.segments.reduce((sum, segment) => sum + segment.recordCount, 0);

/** Bytes of the generation's files as written. */
export const writtenBytes = (state: StoreState): number =>
  state.generation.segments.reduce((sum, segment) => sum + segment.size, 0);
