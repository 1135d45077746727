/**
 * The engine's log on PostgreSQL: `open` recovers a store from its tables
 * (marker, head row, current generation, every record checked byte for
 * byte and folded into the caller's projection) and gives the `Log` the
 * engine runs over (`Engine.fromLog(yield* PgLog.open(url, options,
 * foldProjection))`): group-committed appends under a guarded head row,
 * reads from the table and from what is queued, stats, compaction into a
 * new generation by compare-and-set, flush and close.
 *
 * A record is stored as its whole Record v1 bytes (CRCs included), so a
 * row is exactly what a segment file would hold for it; docs/postgres.md
 * has the schema, what an acknowledgement means, the conflict rule and
 * the portability list.
 *
 * @example
 *   const program = Effect.scoped(Effect.gen(function* () {
 *     yield* PgSchema.init(url);
 *     const engine = yield* Engine.fromLog(yield* PgLog.open(url, {}, foldProjection));
 *     yield* engine.insert({ queue: "mail", worker: "Send", args: null });
 *   }));
 */
import { type Batch, type Log, LogError, type Projection, Ticket } from "@tay/shell-node";
import * as Effect from "effect/Effect";
import * as Fiber from "effect/Fiber";
import type * as Scope from "effect/Scope";
import type { CompactionReport } from "./internal/compaction.js";
import { compact } from "./internal/compaction.js";
import { redact, storePath } from "./internal/location.js";
import { folder, type InboxStats, incomingJobs, stopFolding } from "./internal/inbox.js";
import {
  closeReader,
  iterFrom,
  makeReader,
  type ReaderSession,
  readFrom,
} from "./internal/reader.js";
import { readMentioning } from "./internal/mentionReader.js";
import {
  follower,
  notifyCommitted,
  refresh,
  stopFollowing,
  watchOthers,
} from "./internal/others.js";
import type { Held as CompactionHeld } from "./internal/lease.js";
import { type OrphanedGeneration, type Recovery, recover } from "./internal/recovery.js";
import type { Session } from "./Driver.js";
import { close as closeSession, connect, databaseError } from "./internal/session.js";
import { statements } from "./internal/sql.js";
import { admission, type LogState } from "./internal/state.js";
import { letGo } from "./internal/turn.js";
import { enqueue, guardedWriter } from "./internal/writer.js";
import {
  type HistoryRejected,
  InvalidOption,
  InvalidUrl,
  type PgLogError,
  type PgOpenError,
} from "./PgError.js";
import { type PgLogOptions, resolve } from "./PgOptions.js";

export type { CompactionHeld, CompactionReport, InboxStats, OrphanedGeneration };

/** The read-only view of a PostgreSQL log. */
export interface PgView extends Log.View<PgLogError> {
  /** The schema and the store's name in it. */
  readonly schema: string;
  readonly store: string;
  /**
   * This log's transactions so far: committed, and refused by the guard
   * because another writer moved the head first (several engines, one store).
   */
  readonly writes: () => {
    readonly committed: number;
    readonly conflicted: number;
    /** Turns taken: the head row held for this log's next append after a conflict. */
    readonly turns: number;
  };
  /** The inbox folder's counters (docs/postgres.md, "Enqueue inside your transaction"). */
  readonly inbox: () => InboxStats;
}

/** What open reports. */
export interface PgReport {
  readonly path: string;
  readonly storeId: string;
  readonly createdAt: number;
  readonly epoch: number;
  readonly parentEpoch: number;
  readonly firstSequence: number;
  readonly baseRecordCount: number;
  readonly lastSequence: number;
  readonly records: number;
  readonly bytes: number;
  /** Generations other than the current one (left by compaction; the next one removes them). */
  readonly orphanedGenerations: ReadonlyArray<OrphanedGeneration>;
  /**
   * The compaction holding the store's compaction lease when open read it
   * (its staged generation is among `orphanedGenerations`), if one did.
   */
  readonly compaction: CompactionHeld | undefined;
  /** When open read the store (ms since the epoch): what `compaction.expiresAt` compares with. */
  readonly openedAt: number;
  /** The session's `synchronous_commit`: what an acknowledged append waited for. */
  readonly synchronousCommit: string;
  readonly openMs: number;
}

/** The PostgreSQL log as a `Log.Kind`. */
export interface PgKind extends Log.Kind {
  readonly error: PgLogError;
  readonly report: PgReport;
  readonly compaction: CompactionReport;
  readonly view: PgView;
}

/** The view's reads over the running state. */
const viewOf = (state: LogState, reader: ReaderSession, inbox: () => InboxStats): PgView => ({
  path: state.path,
  storeId: state.storeId,
  schema: state.options.schema,
  store: state.options.store,
  readFrom: (sequence, limit) => readFrom(state, reader, sequence, limit),
  readMentioning: (needles, sequence, limit) =>
    readMentioning(state, reader, needles, sequence, limit),
  iterFrom: (sequence) => iterFrom(state, reader, sequence),
  stats: () =>
    Effect.sync(() => {
      const queued = [...state.inFlight, ...state.pending];
      return {
        records: state.committedLast - state.firstSequence + 1,
        bytes: state.committedBytes,
        firstSequence: state.firstSequence,
        lastSequence: state.assignedLast,
        pendingRecords: queued.reduce((sum, batch) => sum + batch.records.length, 0),
        pendingBytes: state.pendingBytes,
      };
    }),
  generation: () =>
    Effect.sync(() => ({
      epoch: state.epoch,
      firstSequence: state.firstSequence,
      baseRecordCount: state.baseRecordCount,
    })),
  writes: () => ({ ...state.writes }),
  inbox,
});

/** `append`: the conflict check, then the queue (a refused log fails the ticket at once). */
const appendTo =
  (state: LogState) =>
  (
    batch: Batch.Batch,
    expectedLastSequence: number,
  ): Ticket.Ticket<PgLogError | LogError.AppendConflict> | LogError.AppendConflict => {
    const lastSequence = state.assignedLast;
    if (lastSequence !== expectedLastSequence || state.gate !== undefined) {
      return new LogError.AppendConflict({ path: state.path, expectedLastSequence, lastSequence });
    }
    const admitted = admission(state, () => new LogError.StoreClosed({ path: state.path }));
    if (admitted._tag === "Refused") {
      const ticket = Ticket.make<PgLogError | LogError.AppendConflict>(lastSequence);
      Ticket.settle(ticket, admitted.error);
      return ticket;
    }
    return enqueue(state, batch);
  };

/** The options checked and the store located: its path, the driver, the statements. */
const locate = (url: string, options: PgLogOptions) =>
  Effect.gen(function* () {
    const redacted = redact(url);
    if (redacted instanceof InvalidUrl) return yield* redacted;
    const resolved = resolve(redacted, options);
    if (resolved instanceof InvalidOption) return yield* resolved;
    const path = storePath(redacted, resolved.schema, resolved.store);
    return {
      path,
      options: resolved,
      sql: statements(resolved.schema),
      driver: resolved.driver(url),
    };
  });

/** The running log's state right after open recovered the store. */
const initialState = <S>(
  where: Effect.Effect.Success<ReturnType<typeof locate>>,
  recovered: Recovery<S>,
  session: Session,
): LogState => {
  const { generation } = recovered;
  return {
    ...where,
    storeId: recovered.storeIdText,
    epoch: generation.epoch,
    firstSequence: generation.firstSequence,
    baseRecordCount: generation.baseRecordCount,
    committedLast: recovered.lastSequence,
    committedBytes: recovered.bytes,
    uncounted: [],
    assignedLast: recovered.lastSequence,
    pending: [],
    inFlight: [],
    pendingBytes: 0,
    gate: undefined,
    closing: false,
    failure: undefined,
    session,
    scratch: new Uint8Array(0),
    wake: undefined,
    idle: [],
    writes: { committed: 0, conflicted: 0, turns: 0 },
    conflictsInARow: 0,
    minorityWriter: false,
    turn: undefined,
    committed: () => {},
    inlineNotice: undefined,
  };
};

/**
 * Opens the store at `url` (options name the schema and the store) for
 * the scope, folding its current generation into `projection`, and starts
 * its writer. Fails with the first fault found (`SchemaVersionMismatch`,
 * `StoreNotFound`, `CorruptRecord`, `Mismatch`, `UndecodableEvent`,
 * `HistoryRejected`, `MissingBase`, ... each naming epoch and sequence),
 * or `DatabaseError` when the server cannot be reached; nothing is
 * written. Closing the scope drains what is queued and closes the
 * connections.
 */
export const open = <S, E>(
  url: string,
  options: PgLogOptions,
  projection: Projection.Projection<S, E>,
): Effect.Effect<Log.Recovered<S, PgKind>, PgOpenError | HistoryRejected<E>, Scope.Scope> =>
  Effect.gen(function* () {
    const where = yield* locate(url, options);
    const session = yield* Effect.acquireRelease(
      Effect.mapError(connect(where.driver), databaseError(where.path, "open")),
      (opened) => closeSession(opened),
    );
    const recovered = yield* recover(where, session, projection);
    const state = initialState(where, recovered, session);
    const follow = follower(state);
    state.committed = notifyCommitted(state, follow);
    const reader = yield* makeReader;
    const fold = folder();
    const writerFiber = yield* Effect.forkScoped(guardedWriter(state));
    const close = () =>
      Effect.gen(function* () {
        state.closing = true;
        const wake = state.wake;
        state.wake = undefined;
        wake?.();
        yield* Fiber.await(writerFiber);
        stopFollowing(follow);
        stopFolding(fold);
        // A reconnection may have replaced the session acquired above.
        if (state.session !== undefined && state.session !== session) {
          yield* closeSession(state.session);
        }
        yield* closeReader(reader);
        if (state.failure !== undefined) return yield* Effect.fail(state.failure);
      });
    yield* Effect.addFinalizer(() => Effect.ignore(close()));
    const log: Log.Log<PgKind> = {
      view: viewOf(state, reader, () => ({ ...fold.counts })),
      lastSequence: () => state.assignedLast,
      admission: () => admission(state, () => new LogError.StoreClosed({ path: state.path })),
      overBudget: (queuedBytes, bytes) => {
        const pendingBytes = state.pendingBytes + queuedBytes;
        const limit = state.options.pendingBytesMax;
        return pendingBytes + bytes > limit && pendingBytes > 0
          ? new LogError.PendingFull({ path: state.path, pendingBytes, limit })
          : undefined;
      },
      append: appendTo(state),
      compact: (base, expectedLastSequence) => compact(state, base, expectedLastSequence),
      refresh: () => refresh(state, reader),
      caughtUp: () => letGo(state),
      minorityWriter: (minority) => {
        state.minorityWriter = minority;
      },
      watchOthers: watchOthers(state, follow),
      ...(state.options.inbox ? { incoming: incomingJobs(state, fold) } : {}),
      flush: () => {
        const last = state.pending.at(-1) ?? state.inFlight.at(-1);
        return last === undefined ? Effect.void : Ticket.wait(last.ticket);
      },
      close,
    };
    return { log, state: recovered.state, report: reportOf(state.path, recovered) };
  });

/** The report of an open (and of `PgCopy`'s read of a store), from its recovery. */
export const reportOf = <S>(path: string, recovered: Recovery<S>): PgReport => ({
  path,
  storeId: recovered.storeIdText,
  createdAt: recovered.createdAt,
  epoch: recovered.generation.epoch,
  parentEpoch: recovered.generation.parentEpoch,
  firstSequence: recovered.generation.firstSequence,
  baseRecordCount: recovered.generation.baseRecordCount,
  lastSequence: recovered.lastSequence,
  records: recovered.records,
  bytes: recovered.bytes,
  orphanedGenerations: recovered.orphanedGenerations,
  compaction: recovered.compaction,
  openedAt: recovered.openedAt,
  synchronousCommit: recovered.synchronousCommit,
  openMs: recovered.openMs,
});
