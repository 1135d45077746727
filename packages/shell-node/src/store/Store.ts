/**
 * The durable store: `open` recovers a store (lock, full validation, fold
 * into the caller's projection, activation of the single writer) and yields
 * a `Store` for the scope: appends with group commit and the durability
 * policy, reads across files and memory, stats, and the compaction
 * primitive. Closing the scope flushes, syncs per policy and releases LOCK.
 */
import type { Event } from "@tay/core";
import { Effect, type Scope, Stream } from "effect";
import * as Chunk from "effect/Chunk";
import * as Option from "effect/Option";
import type { Disk } from "../disk/Disk.js";
import { activate } from "./internal/activation.js";
import { formatStoreId, segmentFileBytesMax } from "./internal/codec.js";
import {
  type CompactionReport,
  type CompactOptions,
  compact as compactGeneration,
} from "./internal/compaction.js";
import * as Lock from "../disk/Lock.js";
import { readFrom as readEntries } from "./internal/reader.js";
import { classifyRoot, validate } from "./internal/recovery.js";
import {
  type StoreState,
  lastAssigned,
  writtenBytes,
  writtenRecords,
} from "./internal/storeState.js";
import * as Writer from "./internal/writer.js";
import * as Layout from "./Layout.js";
import type { Entry, Projection } from "../log/Projection.js";
import { type RecoveryReport, reportOf } from "./Recovery.js";
import * as Stats from "./Stats.js";
import {
  type HistoryRejected,
  InvalidOption,
  LockSessionLost,
  type RecoveryError,
  type StoreError,
} from "./StoreError.js";
import { resolve, type StoreOptionsInput } from "./StoreOptions.js";

export type { CompactionReport, CompactOptions } from "./internal/compaction.js";
export type { Submitted } from "./internal/writer.js";

/** Records per page of `iterFrom`. */
export const iterPageRecords = 1024;

/** The running store: one writer, any number of readers. */
export interface Store {
  readonly path: string;
  /** Printed STORE_ID. */
  readonly storeId: string;
  /**
   * Assigns the next sequences to `events` (one record each; a Mutation is
   * one record) in submit order and queues them for the writer. Returns the
   * sequences and `durable`, which resolves once the batch is written and
   * synced as the durability policy asks. Fails without assigning anything
   * with `UnencodableEvent`, `PendingFull`, `WriterFailed` or `StoreClosed`.
   */
  readonly submit: (
    events: ReadonlyArray<Event.Event>,
  ) => Effect.Effect<Writer.Submitted, StoreError>;
  /** `submit`, then wait for `durable`. Returns the batch's sequences. */
  readonly append: (
    events: ReadonlyArray<Event.Event>,
  ) => Effect.Effect<{ readonly firstSequence: number; readonly lastSequence: number }, StoreError>;
  /** Writes everything submitted so far now (whatever the flush policy) and waits for it. */
  readonly flush: () => Effect.Effect<void, StoreError>;
  /** `flush`, then fdatasync the active segment whatever the durability policy. */
  readonly sync: () => Effect.Effect<void, StoreError>;
  /**
   * Up to `limit` entries from `sequence`, contiguous and in order, from the
   * files and from what is still being written or pending. Below the
   * generation's first sequence: `Compacted`; past the last: empty.
   */
  readonly readFrom: (
    sequence: number,
    limit: number,
  ) => Effect.Effect<ReadonlyArray<Entry>, StoreError>;
  /**
   * Every entry from `sequence` as a stream, page by page; it ends when it
   * has caught up with the last sequence assigned.
   */
  readonly iterFrom: (sequence: number) => Stream.Stream<Entry, StoreError>;
  readonly stats: () => Effect.Effect<Stats.StoreStats>;
  /** The generation's bytes over `storeBytesMax`, clamped to [0, 1]. */
  readonly storePressure: () => Effect.Effect<number>;
  /** `storePressure() > 0.9`. */
  readonly isOverloaded: () => Effect.Effect<boolean>;
  /** Size distribution of the generation's segment files (nearest-rank percentiles). */
  readonly segmentSizeStats: () => Effect.Effect<Stats.SegmentSizeStats>;
  /** The current generation's epoch and first sequence. */
  readonly generation: () => Effect.Effect<{
    readonly epoch: number;
    readonly firstSequence: number;
  }>;
  /**
   * Publishes a new generation whose canonical base is `base` (the engine
   * computes it), switches CURRENT to it and removes the superseded one.
   * Appends pause for the switch; see docs/store.md.
   */
  readonly compact: (
    base: ReadonlyArray<Event.Event>,
    options?: CompactOptions,
  ) => Effect.Effect<CompactionReport, StoreError>;
  /**
   * Flushes, syncs per policy and closes the active segment; the scope still
   * releases LOCK. Idempotent; later writes fail with `StoreClosed`.
   */
  readonly close: () => Effect.Effect<void, StoreError>;
}

/** What `open` yields: the store, the projection's state, the recovery report. */
export interface Recovered<S> {
  readonly store: Store;
  readonly state: S;
  readonly report: RecoveryReport;
}

const statsOf = (state: StoreState): Stats.StoreStats => ({
  segments: state.generation.segments.length,
  records: writtenRecords(state),
  bytes: writtenBytes(state),
  firstSequence: state.generation.manifest.firstSequence,
  lastSequence: lastAssigned(state),
  pendingRecords: state.pending.length + state.inFlight.length,
  pendingBytes: state.pendingBytes + state.inFlight.reduce((sum, record) => sum + record.size, 0),
});

/**
 * Opens the store in `directory` for the scope, folding its history into
 * `projection`.
 *
 * Checks (before locking) that the directory holds a Store-v2 root, takes
 * LOCK (`Locked` with the holder's description if held), describes this
 * session in it, validates everything (see `Recovery.inspect`), re-checks
 * the lock session and the active segment, then activates the writer.
 * Fails with the first fault; nothing but LOCK is written before
 * activation, and activation only ever creates the next segment when the
 * highest is sealed (or there is none).
 */
export const open = <S, E>(
  directory: string,
  options: StoreOptionsInput,
  projection: Projection<S, E>,
): Effect.Effect<Recovered<S>, RecoveryError | HistoryRejected<E>, Disk | Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = resolve(options, segmentFileBytesMax);
    if (resolved._tag === "Left") {
      const { option, value } = resolved.left;
      return yield* new InvalidOption({ path: directory, option, value });
    }
    yield* classifyRoot(directory);
    const lock = yield* Lock.acquire(Layout.lockPath(directory));
    const validated = yield* validate(directory, resolved.right.budgets, projection);
    if (!(yield* Lock.stillOurs(lock))) {
      return yield* new LockSessionLost({ path: lock.path, session: lock.holder.session });
    }
    const { writer, flusherFiber } = yield* Effect.acquireRelease(
      activate(validated, resolved.right),
      ({ writer, flusherFiber }) => Effect.ignore(Writer.close(writer, flusherFiber)),
    );
    const compactions = yield* Effect.makeSemaphore(1);
    const context = yield* Effect.context<Disk>();
    const withDisk = <A, X>(effect: Effect.Effect<A, X, Disk>): Effect.Effect<A, X> =>
      Effect.provide(effect, context);
    const { state } = writer;
    const readFrom = (sequence: number, limit: number) =>
      withDisk(readEntries(state, sequence, limit));
    const store: Store = {
      path: directory,
      storeId: formatStoreId(validated.marker.storeId),
      submit: (events) => Writer.submit(writer, events),
      append: (events) =>
        Effect.gen(function* () {
          const submitted = yield* Writer.submit(writer, events);
          yield* submitted.durable;
          return { firstSequence: submitted.firstSequence, lastSequence: submitted.lastSequence };
        }),
      flush: () => Writer.flush(writer),
      sync: () => withDisk(Writer.syncNow(writer)),
      readFrom,
      iterFrom: (sequence) =>
        Stream.paginateChunkEffect(sequence, (from) =>
          Effect.map(readFrom(from, iterPageRecords), (entries) => {
            const last = entries[entries.length - 1];
            return [
              Chunk.fromIterable(entries),
              last === undefined ? Option.none() : Option.some(last.sequence + 1),
            ] as const;
          }),
        ),
      stats: () => Effect.sync(() => statsOf(state)),
      storePressure: () =>
        Effect.sync(() => Stats.pressure(writtenBytes(state), state.options.storeBytesMax)),
      isOverloaded: () =>
        Effect.sync(() =>
          Stats.isOverloaded(Stats.pressure(writtenBytes(state), state.options.storeBytesMax)),
        ),
      segmentSizeStats: () =>
        Effect.sync(() =>
          Stats.segmentSizeStats(state.generation.segments.map((segment) => segment.size)),
        ),
      generation: () =>
        Effect.sync(() => ({
          epoch: state.generation.epoch,
          firstSequence: state.generation.manifest.firstSequence,
        })),
      compact: (base, compactOptions = {}) =>
        withDisk(compactGeneration(writer, compactions, base, compactOptions)),
      close: () => withDisk(Writer.close(writer, flusherFiber)),
    };
    // The engine submits decided batches through the writer directly.
    Writer.register(store, writer);
    return { store, state: validated.state, report: reportOf(validated) };
  });
