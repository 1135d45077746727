/**
 * The durable store: `open` recovers a store (lock, full validation, fold
 * into the caller's projection, activation of the single writer) and yields
 * a `Store` for the scope: appends with group commit and the durability
 * policy, reads across files and memory, stats, and the compaction
 * primitive. Closing the scope flushes, syncs per policy and releases LOCK.
 */
import type { Event } from "@tay/core";
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import * as Stream from "effect/Stream";
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
import { readFrom as readEntries, readMentioning } from "./internal/reader.js";
import type { InlineRecord } from "./internal/inlineWrite.js";
import { classifyRoot, validateOnTrust } from "./internal/recovery.js";
import {
  type StoreState,
  lastAssigned,
  lastWritten,
  segmentDigests,
  writtenBytes,
  writtenRecords,
} from "./internal/storeState.js";
import type { SegmentDigest } from "../log/Projection.js";
import * as Writer from "./internal/writer.js";
import * as Layout from "./Layout.js";
import type * as Log from "../log/Log.js";
import { AppendConflict } from "../log/LogError.js";
import type { Projection } from "../log/Projection.js";
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

/**
 * What the file store offers to read, for everyone: the file log's view
 * (`Log.View` and the file-specific measures). Nothing here appends.
 */
export interface StoreView extends Log.View<StoreError> {
  /**
   * `Log.View.readMentioning`, with the bytes it reads at a time
   * (`mentionChunkBytes` unless given: tests choose a few, so that needles
   * are cut between chunks).
   */
  readonly readMentioning: (
    needles: ReadonlyArray<Uint8Array>,
    sequence: number,
    limit: number,
    chunkBytes?: number,
  ) => Effect.Effect<Log.Mentioning, StoreError>;
  readonly stats: () => Effect.Effect<Stats.StoreStats>;
  /** The generation's bytes over `storeBytesMax`, clamped to [0, 1]. */
  readonly storePressure: () => Effect.Effect<number>;
  /** `storePressure() > 0.9`. */
  readonly isOverloaded: () => Effect.Effect<boolean>;
  /** Size distribution of the generation's segment files (nearest-rank percentiles). */
  readonly segmentSizeStats: () => Effect.Effect<Stats.SegmentSizeStats>;
  /**
   * Each segment's records, records end and CRC as they were when the
   * records through `lastSequence` were written, and no record after them:
   * what a state image of the fold through `lastSequence` names the bytes
   * it folded by (docs/store.md, "The state image"). Undefined when that
   * instant is not known (the store is not idle at `lastSequence` and no
   * write of the last few ended there: "Checkpoints under load"), or once
   * the writer failed (the files may then hold bytes no fold saw).
   */
  readonly digests: (lastSequence: number) => Effect.Effect<Digests | undefined>;
}

/** The generation's segments as written, through `lastSequence`. */
export interface Digests {
  readonly lastSequence: number;
  readonly segments: ReadonlyArray<SegmentDigest>;
}

/**
 * The running store, raw: one writer, any number of readers. Its `submit`
 * and `append` take any events, checked by nothing but the codec: only the
 * store's own tests and tools that write histories on purpose (the
 * benchmarks' history builder, `copy-prefix`) use it. It is not part of
 * the package's public API; programs append through the engine, whose
 * records its deciders produce.
 */
export interface Store extends StoreView {
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
   * Publishes a new generation whose canonical base is `base` (the engine
   * computes it), switches CURRENT to it and removes the superseded one.
   * Appends pause for the switch; see docs/store.md.
   */
  readonly compact: (
    base: Iterable<Event.Event>,
    options?: CompactOptions,
  ) => Effect.Effect<CompactionReport, StoreError>;
  /**
   * Flushes, syncs per policy and closes the active segment; the scope still
   * releases LOCK. Idempotent; later writes fail with `StoreClosed`.
   */
  readonly close: () => Effect.Effect<void, StoreError>;
}

/** The file store as a log: what the engine runs over. */
export interface FileLogKind extends Log.Kind {
  readonly error: StoreError;
  readonly report: RecoveryReport;
  readonly compaction: CompactionReport;
  readonly view: StoreView;
}

/**
 * What `open` yields: the raw store, the same store as a log, the
 * projection's state, the recovery report.
 */
export interface Recovered<S> extends Log.Recovered<S, FileLogKind> {
  readonly store: Store;
}

const statsOf = (state: StoreState, inline: InlineRecord): Stats.StoreStats => ({
  segments: state.generation.segments.length,
  records: writtenRecords(state),
  bytes: writtenBytes(state),
  firstSequence: state.generation.manifest.firstSequence,
  lastSequence: lastAssigned(state),
  pendingRecords: state.pending.length + state.inFlight.length,
  pendingBytes: state.pendingBytes + state.inFlight.reduce((sum, record) => sum + record.size, 0),
  inlineWrites: { writes: inline.writes, slow: inline.slow, slowestMs: inline.slowestMs },
});

/** The store's reads, from its running state. */
const viewOf = (
  directory: string,
  storeId: string,
  state: StoreState,
  inline: InlineRecord,
  withDisk: <A, X>(effect: Effect.Effect<A, X, Disk>) => Effect.Effect<A, X>,
): StoreView => {
  const readFrom = (sequence: number, limit: number) =>
    withDisk(readEntries(state, sequence, limit));
  const pressure = () => Stats.pressure(writtenBytes(state), state.options.storeBytesMax);
  return {
    path: directory,
    storeId,
    readFrom,
    readMentioning: (needles, sequence, limit, chunkBytes) =>
      withDisk(readMentioning(state, sequence, limit, needles, chunkBytes)),
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
    stats: () => Effect.sync(() => statsOf(state, inline)),
    storePressure: () => Effect.sync(pressure),
    isOverloaded: () => Effect.sync(() => Stats.isOverloaded(pressure())),
    segmentSizeStats: () =>
      Effect.sync(() =>
        Stats.segmentSizeStats(state.generation.segments.map((segment) => segment.size)),
      ),
    digests: (lastSequence) => Effect.sync(() => digestsAt(state, lastSequence)),
    generation: () =>
      Effect.sync(() => ({
        epoch: state.generation.epoch,
        firstSequence: state.generation.manifest.firstSequence,
        baseRecordCount: state.generation.manifest.baseRecordCount,
      })),
  };
};

/**
 * The store as a log for the engine: appends of prepared batches after an
 * expected last sequence, through the writer's synchronous path.
 */
const logOf = (writer: Writer.Writer, view: StoreView, store: Store): Log.Log<FileLogKind> => {
  const { state } = writer;
  return {
    view,
    lastSequence: () => lastAssigned(state),
    admission: () => Writer.admission(state),
    overBudget: (queuedBytes, bytes) => Writer.overBudget(state, queuedBytes, bytes),
    append: (batch, expectedLastSequence) => {
      const lastSequence = lastAssigned(state);
      // One writer holds the lock, so a conflict here is a caller that lost
      // track of the log (a bug), refused all the same before any byte moves.
      if (lastSequence !== expectedLastSequence) {
        return new AppendConflict({ path: state.directory, expectedLastSequence, lastSequence });
      }
      return Writer.enqueue(writer, batch.records, batch.bytes);
    },
    compact: (base, expectedLastSequence) => store.compact(base, { expectedLastSequence }),
    flush: store.flush,
    close: store.close,
  };
};

/** Checks the options, the root and the lock, validates, and activates the writer. */
const activated = <S, E>(
  directory: string,
  options: StoreOptionsInput,
  projection: Projection<S, E>,
) =>
  Effect.gen(function* () {
    const resolved = resolve(options, segmentFileBytesMax);
    if (resolved._tag === "Left") {
      const { option, value } = resolved.left;
      return yield* new InvalidOption({ path: directory, option, value });
    }
    yield* classifyRoot(directory);
    const lock = yield* Lock.acquire(Layout.lockPath(directory));
    const validated = yield* validateOnTrust(directory, resolved.right.budgets, projection);
    if (!(yield* Lock.stillOurs(lock))) {
      return yield* new LockSessionLost({ path: lock.path, session: lock.holder.session });
    }
    const { writer, flusherFiber } = yield* Effect.acquireRelease(
      activate(validated, resolved.right),
      ({ writer, flusherFiber }) => Effect.ignore(Writer.close(writer, flusherFiber)),
    );
    return { validated, writer, flusherFiber };
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
    const { validated, writer, flusherFiber } = yield* activated(directory, options, projection);
    const compactions = yield* Effect.makeSemaphore(1);
    const context = yield* Effect.context<Disk>();
    const withDisk = <A, X>(effect: Effect.Effect<A, X, Disk>): Effect.Effect<A, X> =>
      Effect.provide(effect, context);
    const view = viewOf(
      directory,
      formatStoreId(validated.marker.storeId),
      writer.state,
      writer.inline,
      withDisk,
    );
    const store: Store = {
      ...view,
      submit: (events) => Writer.submit(writer, events),
      append: (events) =>
        Effect.gen(function* () {
          const submitted = yield* Writer.submit(writer, events);
          yield* submitted.durable;
          return { firstSequence: submitted.firstSequence, lastSequence: submitted.lastSequence };
        }),
      flush: () => Writer.flush(writer),
      sync: () => withDisk(Writer.syncNow(writer)),
      compact: (base, compactOptions = {}) =>
        withDisk(compactGeneration(writer, compactions, base, compactOptions)),
      close: () => withDisk(Writer.close(writer, flusherFiber)),
    };
    return {
      store,
      log: logOf(writer, view, store),
      state: validated.state,
      report: reportOf(validated),
    };
  });

/** `StoreView.digests`: the store idle at `lastSequence`, or a recent write's mark. */
const digestsAt = (state: StoreState, lastSequence: number): Digests | undefined => {
  if (state.failure !== undefined) return undefined;
  const idle = state.pending.length === 0 && state.inFlight.length === 0;
  if (idle && lastWritten(state) === lastSequence) {
    return { lastSequence, segments: segmentDigests(state) };
  }
  const segments = state.marks.digestsAt(state.generation, lastSequence);
  return segments === undefined ? undefined : { lastSequence, segments };
};
