/**
 * The single writer and its group commit. `enqueue` assigns sequences and
 * queues a batch (synchronously, as `Log.append` must); the writer fiber
 * takes every whole batch queued (up to `transactionRecordsMax` records)
 * into one transaction: the guarded UPDATE of the head row, then the
 * records as multi-row INSERTs, then COMMIT. Whatever is appended while a
 * transaction is in flight goes into the next one. Tickets settle in
 * sequence order once COMMIT returned: with `synchronous_commit=on`, once
 * the commit record is on the server's disk.
 *
 * A guard that moves no row is a conflict: another writer moved the head.
 * A lost connection is recovered by reconnecting and running the same
 * transaction again, which is safe because of the guard: the second run
 * either commits (the first never did), or finds the head at or past its
 * last sequence with exactly its records under those sequences (the first
 * did commit: the tickets succeed), or finds other records (a conflict).
 * Only when the server cannot be reached again is the outcome unknown:
 * `ConnectionLost`, and the log stops.
 */
import { encodeRecordInto } from "@tay/codec";
import { LogError, Ticket } from "@tay/shell-node";
import * as Effect from "effect/Effect";
import type { Batch } from "@tay/shell-node";
import type { Failure, Parameter, Result, Session } from "../Driver.js";
import {
  ConnectionLost,
  DatabaseError,
  type MalformedRow,
  type MissingRow,
  type PgLogError,
} from "../PgError.js";
import {
  batchOf,
  close,
  connect,
  reconnectWait,
  retriable,
  run,
  run as runOne,
} from "./session.js";
import { type Append, appendBatch, appendScript, script as joined } from "./sql.js";
import { type LogState, notifyIdle, type Queued, wakeWriter } from "./state.js";
import * as Tables from "./tables.js";
import * as Turn from "./turn.js";

/**
 * Assigns the next sequences to `batch` (after `expected`, which the
 * caller checked is the last assigned), queues it and wakes the writer.
 */
export const enqueue = (
  state: LogState,
  batch: Batch.Batch,
): Ticket.Ticket<PgLogError | LogError.AppendConflict> => {
  const expected = state.assignedLast;
  let sequence = expected;
  for (const record of batch.records) {
    sequence += 1;
    record.sequence = sequence;
  }
  const ticket = Ticket.make<PgLogError | LogError.AppendConflict>(sequence);
  const consumed = batch.consumed ?? [];
  state.pending.push({ records: batch.records, bytes: batch.bytes, expected, ticket, consumed });
  state.pendingBytes += batch.bytes;
  state.assignedLast = sequence;
  wakeWriter(state);
  return ticket;
};

/** A transaction's records laid out as Record v1 bytes, one view per row. */
export interface Laid {
  /** The last sequence before the first record. */
  readonly expected: number;
  readonly last: number;
  readonly sequences: ReadonlyArray<number>;
  readonly rows: ReadonlyArray<Uint8Array>;
  readonly bytes: number;
}

/**
 * Lays out `records` (sequences assigned, contiguous after `expected`) into
 * one buffer: `scratch` when it is large enough (the writer's own, reused by
 * each transaction: see `scratchOf`), else a new one.
 */
export const layout = (
  expected: number,
  records: ReadonlyArray<Batch.PendingRecord>,
  scratch?: Uint8Array,
): Laid => {
  let bytes = 0;
  for (const record of records) bytes += record.size;
  const buffer = scratch !== undefined && scratch.length >= bytes ? scratch : new Uint8Array(bytes);
  const sequences: Array<number> = [];
  const rows: Array<Uint8Array> = [];
  let offset = 0;
  for (const record of records) {
    const size = encodeRecordInto(buffer, offset, record);
    sequences.push(record.sequence);
    rows.push(buffer.subarray(offset, offset + size));
    offset += size;
  }
  return { expected, last: expected + records.length, sequences, rows, bytes };
};

/**
 * The writer's buffer for a transaction of `bytes`: one buffer reused by
 * every transaction instead of one allocated for each (an ArrayBuffer's
 * memory lives outside the heap, and each one costs the collector and the
 * allocator work per append). Safe because the writer runs one transaction
 * at a time and nothing keeps its rows past it: the driver copies them
 * into its message before the transaction's answer, and the next layout
 * comes after that answer. Kept up to `scratchBytesMax`; a larger
 * transaction gets a buffer of its own.
 */
const scratchOf = (state: LogState, bytes: number): Uint8Array | undefined => {
  if (bytes > scratchBytesMax) return undefined;
  if (state.scratch.length < bytes) {
    state.scratch = new Uint8Array(
      Math.min(scratchBytesMax, Math.max(bytes, 2 * state.scratch.length, 4096)),
    );
  }
  return state.scratch;
};

/** The largest buffer the writer keeps between transactions. */
const scratchBytesMax = 1 << 20;

/** What a transaction found. */
export type Outcome =
  | { readonly _tag: "Committed" }
  | { readonly _tag: "Conflict"; readonly head: Tables.Head };

const committed: Outcome = { _tag: "Committed" };

/** Whether an error is the driver's failure (the rest are the log's typed errors). */
export const isFailure = (error: unknown): error is Failure =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "DriverFailure";

/** Whether an error is one of the log's own (not the driver's). */
const isTyped = <E>(error: E | Failure): error is Exclude<E, Failure> => !isFailure(error);

/** The head row, read on `session`. */
export const readHead = (
  state: LogState,
  session: Session,
): Effect.Effect<Tables.Head, Failure | MissingRow | MalformedRow> =>
  Effect.flatMap(run(session, state.sql.current, [state.storeId]), (result) => {
    const head = Tables.head(state.path, result.rows);
    return "lastSequence" in head ? Effect.succeed(head) : Effect.fail(head);
  });

/** Whether the table holds exactly `laid`'s records under its sequences. */
const holds = (state: LogState, session: Session, epoch: number, laid: Laid) =>
  Effect.map(
    run(session, state.sql.recordsBetween, [state.storeId, epoch, laid.expected + 1, laid.last]),
    ({ rows }) =>
      rows.length === laid.rows.length &&
      rows.every((row, index) => {
        const checked = Tables.record(state.path, epoch, laid.expected + 1 + index, row);
        const ours = laid.rows[index];
        return "bytes" in checked && ours !== undefined && sameBytes(checked.bytes, ours);
      }),
  );

const sameBytes = (left: Uint8Array, right: Uint8Array): boolean =>
  left.length === right.length && left.every((byte, index) => byte === right[index]);

/** Rolls back on a refusal (a lost connection has no transaction left to roll back). */
export const rollbackOnError =
  (state: LogState, session: Session) =>
  (error: Failure | PgLogError | MissingRow): Effect.Effect<void> =>
    isFailure(error) && error.connection
      ? Effect.void
      : Effect.ignore(run(session, state.sql.rollback));

/**
 * Deletes the inbox rows `keys` (the group's folded jobs) in the open
 * transaction: whether every one was still there. One missing means another
 * engine folded it first; this transaction must not commit.
 */
const consume = (state: LogState, session: Session, keys: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    let deleted = 0;
    const rowsMax = state.options.statementRowsMax;
    for (let start = 0; start < keys.length; start += rowsMax) {
      const chunk = keys.slice(start, start + rowsMax);
      const result = yield* run(session, state.sql.inboxConsume(chunk.length), [
        state.options.store,
        ...chunk,
      ]);
      deleted += result.affected;
    }
    return deleted === keys.length;
  });

/**
 * What a guard that moved nothing means: a conflict (another writer moved
 * the head, or an inbox row is gone), or, on a run again, this append's
 * own first run, committed before its connection was lost. A first run
 * that `mayTurn` reads the head in a turn (`turn.ts`): the head it reports
 * is then final until the engine's next append.
 */
const refusedGuard = (
  state: LogState,
  session: Session,
  epoch: number,
  laid: Laid,
  run: Pick<Run, "rerun" | "mayTurn">,
) =>
  Effect.gen(function* () {
    const { rerun } = run;
    const turning = !rerun && run.mayTurn;
    const head = turning ? yield* Turn.take(state, session) : yield* readHead(state, session);
    // Another epoch: this log moves onto it first, and the turn's head is of no use.
    if (turning && head.epoch !== epoch) yield* Turn.release(state);
    // Only a run again can find its own first run committed: on a first
    // run, the same bytes under these sequences are another writer's
    // (two engines folding the same inbox rows from the same state).
    const ours =
      rerun &&
      head.epoch === epoch &&
      head.lastSequence >= laid.last &&
      (yield* holds(state, session, epoch, laid));
    return ours ? committed : ({ _tag: "Conflict", head } as const);
  });

/**
 * How many rows each INSERT of a one-trip append carries: `statementRowsMax`
 * each (the rest in the last), or, where the statements are prepared, each a
 * power of two (13 rows: 8, 4, 1), so that a session prepares a handful of
 * INSERT texts instead of one for every group size.
 */
export const chunkSizes = (
  total: number,
  rowsMax: number,
  prepared: boolean,
): ReadonlyArray<number> => {
  const sizes: Array<number> = [];
  for (let left = total; left > 0; ) {
    let size = Math.min(left, rowsMax);
    if (prepared) size = 2 ** Math.floor(Math.log2(size));
    sizes.push(size);
    left -= size;
  }
  return sizes;
};

/** `laid`'s rows in chunks of `sizes`, for the one-trip append. */
const chunksOf = (laid: Laid, sizes: ReadonlyArray<number>) => {
  const chunks: Array<Array<{ sequence: number; bytes: Uint8Array }>> = [];
  let index = 0;
  for (const size of sizes) {
    const chunk: Array<{ sequence: number; bytes: Uint8Array }> = [];
    for (const end = index + size; index < end; index++) {
      const bytes = laid.rows[index];
      const sequence = laid.sequences[index];
      if (bytes !== undefined && sequence !== undefined) chunk.push({ sequence, bytes });
    }
    chunks.push(chunk);
  }
  return chunks;
};

/** How a one-trip append reaches the server: a batch of prepared statements, or one script. */
type OneTrip =
  | {
      readonly _tag: "Batch";
      readonly batch: NonNullable<Session["batch"]>;
    }
  | { readonly _tag: "Script"; readonly script: NonNullable<Session["script"]> };

/** An append's statements, and COMMIT after them inside a turn, whose transaction is already open. */
const ended = <Statement>(
  statements: ReadonlyArray<Statement>,
  commit: Statement,
  locked: boolean,
): ReadonlyArray<Statement> => (locked ? [...statements, commit] : statements);

/**
 * Sends `append` the way `trip` says: one round trip, its results in
 * statement order. The statements are built inside the Effect, so a value
 * no statement can hold (a bug) is a defect of the writer, as before.
 */
const send = (
  state: LogState,
  trip: OneTrip,
  append: Append,
  locked: boolean,
): Effect.Effect<ReadonlyArray<Result>, Failure> =>
  Effect.async<ReadonlyArray<Result>, Failure>((resume) => {
    const { schema } = state.options;
    const { commit } = state.sql;
    const sent =
      trip._tag === "Batch"
        ? trip.batch(ended(appendBatch(schema, append), { text: commit, parameters: [] }, locked))
        : trip.script(joined(ended(appendScript(schema, append), commit, locked)));
    sent.then(
      (results) => resume(isFailure(results) ? Effect.fail(results) : Effect.succeed(results)),
      (error: unknown) => resume(Effect.die(error)),
    );
  });

/**
 * One run of the group's transaction in one round trip: a batch of
 * prepared statements or one script (docs/postgres.md, "One round trip per
 * append"). The guard's row count says whether it committed; a guard that
 * moved nothing made the whole transaction a no-op. Plain code around one
 * asynchronous step: it runs once per append.
 */
const transactOnce = (
  state: LogState,
  session: Session,
  trip: OneTrip,
  run: Run,
  locked: boolean,
) => {
  const { epoch, laid, consumed } = run;
  const sizes = chunkSizes(laid.rows.length, state.options.statementRowsMax, trip._tag === "Batch");
  const chunks = chunksOf(laid, sizes);
  const append: Append = {
    storeId: state.storeId,
    epoch,
    expected: laid.expected,
    last: laid.last,
    chunks,
    consumed: consumed.length > 0 ? { store: state.options.store, keys: consumed } : undefined,
    notify: run.notice,
  };
  const sent = Effect.flatMap(
    send(state, trip, append, locked),
    (results): Effect.Effect<Outcome, Failure | PgLogError | MissingRow | MalformedRow> => {
      if (results[0]?.affected !== 1) return refusedGuard(state, session, epoch, laid, run);
      // The guard moved the head, so every INSERT wrote its rows (or the
      // transaction failed whole). Anything else is not a state this log can go on from.
      let inserted = 0;
      for (let index = 1; index <= chunks.length; index++)
        inserted += results[index]?.affected ?? 0;
      if (inserted === laid.rows.length) return Effect.succeed(committed);
      return Effect.fail(
        new DatabaseError({
          path: state.path,
          operation: "append",
          code: undefined,
          detail: `the guard moved the head to ${laid.last} but ${inserted} of ${laid.rows.length} records were inserted`,
        }),
      );
    },
  );
  // A refused statement leaves the turn's transaction open (aborted): end it.
  return locked ? Effect.tapError(sent, rollbackOnError(state, session)) : sent;
};

/** One run of the group's transaction, a statement at a time inside BEGIN and COMMIT. */
const transactSteps = (state: LogState, session: Session, run: Run, locked: boolean) => {
  const { sql, storeId } = state;
  const { epoch, laid, consumed } = run;
  return Effect.gen(function* () {
    // Inside a turn the transaction is already open.
    if (!locked) yield* runOne(session, sql.begin);
    const moved = yield* runOne(session, sql.advanceHead, [
      storeId,
      epoch,
      laid.last,
      laid.expected,
    ]);
    if (moved.affected !== 1) {
      yield* runOne(session, sql.rollback);
      return yield* refusedGuard(state, session, epoch, laid, run);
    }
    const rowsMax = state.options.statementRowsMax;
    for (let start = 0; start < laid.rows.length; start += rowsMax) {
      const count = Math.min(rowsMax, laid.rows.length - start);
      const parameters: Array<Parameter> = [storeId, epoch];
      for (let index = start; index < start + count; index++) {
        parameters.push(laid.sequences[index] ?? 0, laid.rows[index] ?? null);
      }
      yield* runOne(session, sql.insertRecords(count), parameters);
    }
    if (consumed.length > 0 && !(yield* consume(state, session, consumed))) {
      // The head was ours, so the engine's state already holds that fold.
      yield* runOne(session, sql.rollback);
      return { _tag: "Conflict", head: { epoch, lastSequence: laid.expected } } as const;
    }
    yield* runOne(session, sql.commit);
    return committed;
  }).pipe(Effect.tapError(rollbackOnError(state, session)));
};

/** One run of a group's transaction: what it writes, and whether it is a run again. */
interface Run {
  readonly epoch: number;
  readonly laid: Laid;
  readonly consumed: ReadonlyArray<string>;
  readonly rerun: boolean;
  /** The notification the script sends at commit, if the log sends it inline. */
  readonly notice: { readonly channel: string; readonly payload: string } | undefined;
  /** A guard that moves nothing takes a turn (`turn.ts`): the conflicts in a row say so. */
  readonly mayTurn: boolean;
}

/**
 * One run of a group's transaction on `session`: one batch of prepared
 * statements where the driver can, else one script, else a statement at a time.
 */
const transact = (state: LogState, session: Session, run: Run) => {
  const locked = Turn.use(state, session);
  const batch = batchOf(session, state.options.oneTrip);
  if (batch !== undefined)
    return transactOnce(state, session, { _tag: "Batch", batch }, run, locked);
  if (session.script !== undefined) {
    return transactOnce(state, session, { _tag: "Script", script: session.script }, run, locked);
  }
  return transactSteps(state, session, run, locked);
};

/** The writer's session, connecting if it was dropped. */
export const sessionOf = (state: LogState): Effect.Effect<Session, Failure> =>
  state.session === undefined
    ? Effect.tap(connect(state.driver), (session) => {
        state.session = session;
      })
    : Effect.succeed(state.session);

/** Forgets (and closes) a session whose connection is gone. */
export const dropSession = (state: LogState): Effect.Effect<void> => {
  const session = state.session;
  state.session = undefined;
  return session === undefined ? Effect.void : close(session);
};

/**
 * Runs `body` on the writer's session, reconnecting and running it again
 * after a lost connection or a transient refusal, up to
 * `reconnectAttemptsMax` times. `body` must be safe to run again whatever
 * the earlier run did (guarded statements). Gives up with
 * `ConnectionLost` (connection) or `DatabaseError` (a refusal). A run that
 * succeeds costs one step around `body` (it runs for every append).
 */
export const withReconnect = <A, E>(
  state: LogState,
  operation: string,
  lastSequence: number | undefined,
  body: (session: Session) => Effect.Effect<A, E | Failure>,
): Effect.Effect<A, Exclude<E, Failure> | ConnectionLost | DatabaseError> => {
  // `lost`: the first lost connection of this operation; from then on its outcome is unknown.
  const attempt = (
    attempts: number,
    lost: Failure | undefined,
  ): Effect.Effect<A, Exclude<E, Failure> | ConnectionLost | DatabaseError> =>
    Effect.catchAll(Effect.flatMap(sessionOf(state), body), (error) => {
      if (isTyped(error)) return Effect.fail(error);
      // Not one of the log's errors: the driver's (the guards are complements).
      if (!isFailure(error)) return Effect.die(error);
      const lostNow = error.connection ? (lost ?? error) : lost;
      const dropped = error.connection ? dropSession(state) : Effect.void;
      if (!retriable(error) || attempts >= state.options.reconnectAttemptsMax) {
        return Effect.zipRight(
          dropped,
          Effect.fail(givingUp(state, operation, lastSequence, attempts, error, lostNow)),
        );
      }
      return Effect.zipRight(
        dropped,
        Effect.zipRight(
          Effect.sleep(reconnectWait(state.options.reconnectDelayMs, attempts)),
          Effect.suspend(() => attempt(attempts + 1, lostNow)),
        ),
      );
    });
  return attempt(0, undefined);
};

/**
 * The error an operation gives up with. A refusal after a lost connection
 * (a reconnection refused: the database not accepting connections, a bad
 * password) still leaves the first run's outcome unknown: never "nothing
 * committed".
 */
const givingUp = (
  state: LogState,
  operation: string,
  lastSequence: number | undefined,
  attempts: number,
  error: Failure,
  lost: Failure | undefined,
): ConnectionLost | DatabaseError => {
  const { path } = state;
  if (lost === undefined) {
    return new DatabaseError({ path, operation, code: error.code, detail: error.detail });
  }
  const detail = error === lost ? lost.detail : `${lost.detail}; then ${error.detail}`;
  return new ConnectionLost({ path, operation, lastSequence, attempts, detail });
};

/** Takes whole batches from the queue, up to `transactionRecordsMax` records (at least one batch). */
const take = (state: LogState): Array<Queued> => {
  const group: Array<Queued> = [];
  let records = 0;
  for (;;) {
    const next = state.pending[0];
    if (next === undefined) break;
    if (group.length > 0 && records + next.records.length > state.options.transactionRecordsMax) {
      break;
    }
    state.pending.shift();
    group.push(next);
    records += next.records.length;
  }
  state.inFlight = group;
  return group;
};

/**
 * Settles every ticket, each with its outcome, even when a waiter throws (a
 * bug of the waiter's): the first throw goes on once all are settled.
 */
const settleEach = <E>(
  tickets: ReadonlyArray<Ticket.Ticket<E>>,
  outcome: (index: number) => E | undefined,
): void => {
  let thrown: { readonly error: unknown } | undefined;
  for (const [index, ticket] of tickets.entries()) {
    try {
      Ticket.settle(ticket, outcome(index));
    } catch (error) {
      thrown ??= { error };
    }
  }
  if (thrown !== undefined) throw thrown.error;
};

/** Fails every queued and in-flight append: they all follow the one that failed. */
const failAll = (state: LogState, failure: (queued: Queued) => PgLogError): void => {
  const all = [...state.inFlight, ...state.pending];
  state.inFlight = [];
  state.pending = [];
  state.pendingBytes = 0;
  state.assignedLast = state.committedLast;
  settleEach(
    all.map((queued) => queued.ticket),
    (index) => {
      const queued = all[index];
      return queued === undefined ? undefined : failure(queued);
    },
  );
};

/** Settles a transaction's appends by its outcome, in sequence order. */
const settle = (
  state: LogState,
  group: ReadonlyArray<Queued>,
  laid: Laid,
  outcome: Outcome | PgLogError,
  notice: unknown,
): void => {
  if (outcome._tag === "Committed") {
    state.writes.committed += 1;
    state.conflictsInARow = 0;
    state.inFlight = [];
    state.committedLast = laid.last;
    state.committedBytes += laid.bytes;
    state.pendingBytes -= laid.bytes;
    state.committed(laid.last, notice !== undefined);
    settleEach(
      group.map((queued) => queued.ticket),
      () => undefined,
    );
    return;
  }
  if (outcome._tag === "Conflict") {
    state.writes.conflicted += 1;
    state.conflictsInARow += 1;
    const { head } = outcome;
    const conflict = (expectedLastSequence: number) =>
      new LogError.AppendConflict({
        path: state.path,
        expectedLastSequence,
        lastSequence: head.lastSequence,
        // A turn taken (`turn.ts`): the engine is to catch up at once.
        ...(state.turn === undefined ? {} : { held: true }),
      });
    // Another writer's records are the log's now. Another epoch (another
    // writer compacted): this log's generation is gone, and `refresh`
    // moves the log onto the new one (the engine's catch-up folds it again).
    if (head.epoch === state.epoch && head.lastSequence > state.committedLast) {
      // Their bytes are read by the next `refresh` (the engine's catch-up).
      state.uncounted.push({ first: state.committedLast + 1, last: head.lastSequence });
      state.committedLast = head.lastSequence;
    }
    failAll(state, (queued) => conflict(queued.expected));
    return;
  }
  state.failure = outcome;
  failAll(state, () => outcome);
};

/**
 * The writer, guarded: a defect (a bug: a throwing ticket waiter, a value
 * no literal can hold) stops the log with `DatabaseError` naming it and
 * fails every queued append, instead of ending the writer's fiber in
 * silence, which left every append after it waiting forever.
 */
export const guardedWriter = (state: LogState): Effect.Effect<void> =>
  Effect.catchAllDefect(writer(state), (defect) =>
    Effect.sync(() => {
      const failure = new DatabaseError({
        path: state.path,
        operation: "append",
        code: undefined,
        detail: `the writer stopped on a defect: ${defect instanceof Error ? defect.message : String(defect)}`,
      });
      state.failure ??= failure;
      // The waiters were told even if one throws again; the log has stopped either way.
      try {
        failAll(state, () => failure);
      } catch {
        // Already reported as the log's failure.
      }
      notifyIdle(state);
    }),
  );

/** The writer: one transaction at a time until the log closes or stops. */
export const writer = (state: LogState): Effect.Effect<void> =>
  Effect.gen(function* () {
    for (;;) {
      if (state.pending.length === 0) {
        notifyIdle(state);
        if (state.turn !== undefined) {
          yield* Turn.hold(state);
          continue;
        }
        if (state.closing || state.failure !== undefined) return;
        yield* Effect.async<void>((resume) => {
          state.wake = () => resume(Effect.void);
        });
        continue;
      }
      const group = take(state);
      const first = group[0];
      if (first === undefined) continue;
      // A group of one append (the usual case with one producer) is laid out as it came.
      const records =
        group.length === 1 ? first.records : group.flatMap((queued) => queued.records);
      let bytes = 0;
      for (const record of records) bytes += record.size;
      const laid = layout(first.expected, records, scratchOf(state, bytes));
      const epoch = state.epoch;
      const consumed =
        group.length === 1 ? first.consumed : group.flatMap((queued) => queued.consumed);
      const notice = state.inlineNotice?.(laid.last);
      const mayTurn = Turn.wanted(state);
      let runs = 0;
      const outcome = yield* Effect.either(
        withReconnect(state, "append", laid.last, (session) =>
          transact(state, session, { epoch, laid, consumed, rerun: runs++ > 0, notice, mayTurn }),
        ),
      );
      settle(state, group, laid, outcome._tag === "Right" ? outcome.right : outcome.left, notice);
    }
  });
