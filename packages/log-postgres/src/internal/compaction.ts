/**
 * Compaction on the tables, the file store's steps in rows:
 *
 * 1. hold appends (the gate) and wait until nothing is queued or in flight;
 *    the log's last sequence must be the caller's (`CompactionConflict`);
 *    take the store's compaction lease (`lease.ts`; `CompactionBusy` while
 *    another compactor holds it), then read the head: it must still be at
 *    this log's epoch and last sequence (another engine's compaction or
 *    append not yet followed is `CompactionConflict`, before anything is
 *    removed). Every transaction from here on renews the lease first and
 *    writes nothing once it was taken (`CompactionLeaseLost`);
 * 2. remove leftover generations (a crashed compaction's staged one, a
 *    superseded one whose removal failed): records, then the row;
 * 3. stage generation E+1: its row (parent E, first sequence = last + 1,
 *    base record count 0 for now), then its base records as the base is
 *    read, encoded and inserted in slices of at most `statementRowsMax`
 *    records, each its own transaction (the base is streamed: never held
 *    whole, issue 19). Until step 4 commits nothing reads them; an
 *    unencodable event ends the compaction here, its staging removed;
 * 4. switch, in one transaction: set E+1's base record count, and move the
 *    head row from (E, last) to (E+1, last + base) only if it is still at
 *    (E, last), the compare-and-set that also fences any writer still
 *    appending to E. A lost connection is resolved as an append's is: run
 *    it again; the head at (E+1, last + base) means the first run switched;
 * 5. swap the in-memory generation and open the gate;
 * 6. delete E's records and row (a failure is reported in `notRemoved`
 *    and retried by the next compaction: E is no longer current), and
 *    free the lease (it is freed on every other end too, best effort: a
 *    lease left behind runs out after `compactionLeaseMs`).
 */
import type { Event } from "@tay/core";
import { Batch, LogError } from "@tay/shell-node";
import * as Clock from "effect/Clock";
import * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type { Failure, Parameter, Session } from "../Driver.js";
import { Mismatch, type PgLogError } from "../PgError.js";
import * as Lease from "./lease.js";
import * as Rows from "./rows.js";
import { run } from "./session.js";
import { type LogState, whenIdle } from "./state.js";
import * as Turn from "./turn.js";
import * as Tables from "./tables.js";
import { type Laid, layout, readHead, rollbackOnError, withReconnect } from "./writer.js";

/** What a compaction did. */
export interface CompactionReport {
  /** The new generation. */
  readonly epoch: number;
  readonly firstSequence: number;
  readonly baseRecords: number;
  readonly baseBytes: number;
  /** How long appends were held, gate closed to gate open. */
  readonly pauseMs: number;
  /** Leftover and superseded generations whose rows were deleted. */
  readonly removed: ReadonlyArray<number>;
  /** Generations whose rows could not be deleted (the next compaction tries again). */
  readonly notRemoved: ReadonlyArray<number>;
}

/** Rows one DELETE removes at most, so no transaction grows with the history. */
export const deleteRowsMax = 10_000;

/** The last sequence staged under `epoch` (`empty` when none is). */
const stagedThrough = (state: LogState, session: Session, epoch: number, empty: number) =>
  Effect.map(run(session, state.sql.lastRecordOf, [state.storeId, epoch]), (result) => {
    const through = Rows.optionalInteger(Rows.field(result.rows[0], "sequence"));
    return Rows.isRefused(through) || through === null ? empty : through;
  });

/** A compaction under way: its lease and the generation it makes. */
interface Making {
  readonly lease: Lease.Lease;
  readonly epoch: number;
}

/** What the body of a leased transaction answers, and whether it commits. */
interface Verdict<A> {
  readonly value: A;
  readonly commit: boolean;
}

/**
 * `body` in one transaction on `session` that first renews the lease
 * (nothing is written once another compactor took it), committed or rolled
 * back as the body decides.
 */
const leasedDeciding = <A, E extends PgLogError | Failure>(
  state: LogState,
  session: Session,
  making: Making,
  body: Effect.Effect<Verdict<A>, E>,
) =>
  Effect.gen(function* () {
    yield* run(session, state.sql.begin);
    yield* Lease.renew(state, session, making.lease, making.epoch);
    const verdict = yield* body;
    yield* run(session, verdict.commit ? state.sql.commit : state.sql.rollback);
    return verdict.value;
  }).pipe(Effect.tapError(rollbackOnError(state, session)));

/** `body` in a leased transaction that commits. */
const leased = <A, E extends PgLogError | Failure>(
  state: LogState,
  session: Session,
  making: Making,
  body: Effect.Effect<A, E>,
) =>
  leasedDeciding(
    state,
    session,
    making,
    Effect.map(body, (value) => ({ value, commit: true })),
  );

/** Deletes one generation that is not current: its records in ranges, then its row. */
const removeGeneration = (state: LogState, session: Session, making: Making, epoch: number) =>
  Effect.gen(function* () {
    const { sql, storeId, path } = state;
    const row = yield* run(session, sql.generation, [storeId, epoch]);
    const generation = Tables.generation(path, epoch, row.rows);
    const first = "firstSequence" in generation ? generation.firstSequence : 1;
    // No record (or none readable): nothing to delete but the row.
    const through = yield* stagedThrough(state, session, epoch, Number.NaN);
    for (let from = Math.min(first, through); from <= through; from += deleteRowsMax) {
      const range = [storeId, epoch, from, from + deleteRowsMax - 1];
      yield* leased(state, session, making, run(session, sql.deleteRecords, range));
    }
    yield* leased(state, session, making, run(session, sql.deleteGeneration, [storeId, epoch]));
  });

/** Removes every generation but the current one; returns which went and which stayed. */
const removeOthers = (state: LogState, session: Session, making: Making) =>
  Effect.gen(function* () {
    const found = yield* run(session, state.sql.otherGenerations, [state.storeId, state.epoch]);
    const removed: Array<number> = [];
    const notRemoved: Array<number> = [];
    for (const row of found.rows) {
      const epoch = Rows.integer(Rows.field(row, "epoch"), 1);
      if (Rows.isRefused(epoch)) continue;
      const done = yield* Effect.either(removeGeneration(state, session, making, epoch));
      // Another compactor took the lease: nothing more may be removed.
      if (done._tag === "Left" && done.left._tag === "CompactionLeaseLost") {
        return yield* Effect.fail(done.left);
      }
      (done._tag === "Right" ? removed : notRemoved).push(epoch);
    }
    return { removed, notRemoved };
  });

/** The next at most `count` events of `events` (fewer only at its end). */
const nextSlice = (events: Iterator<Event.Event>, count: number): Array<Event.Event> => {
  const slice: Array<Event.Event> = [];
  while (slice.length < count) {
    const next = events.next();
    if (next.done === true) break;
    slice.push(next.value);
  }
  return slice;
};

/**
 * Inserts one laid-out slice of the base in its own transaction. A lost
 * connection leaves its outcome unknown, and the base cannot be read again
 * (it is streamed): the run again reads how far the staged records go and
 * inserts the slice only if they end just before it.
 */
const insertSlice = (state: LogState, making: Making, laid: Laid) => {
  const { epoch } = making;
  let runs = 0;
  return withReconnect(state, "compact", laid.last, (session) =>
    Effect.gen(function* () {
      runs += 1;
      if (runs > 1) {
        const through = yield* stagedThrough(state, session, epoch, state.assignedLast);
        if (through === laid.last) return;
        if (through !== laid.expected) {
          return yield* new Mismatch({
            path: state.path,
            epoch,
            sequence: undefined,
            field: "StagedSequence",
            expected: `${laid.expected} or ${laid.last}`,
            found: `${through}`,
          });
        }
      }
      const parameters: Array<Parameter> = [state.storeId, epoch];
      for (let index = 0; index < laid.rows.length; index++) {
        parameters.push(laid.sequences[index] ?? 0, laid.rows[index] ?? null);
      }
      const insert = run(session, state.sql.insertRecords(laid.rows.length), parameters);
      yield* leased(state, session, making, insert);
    }),
  );
};

/** What staging wrote: the base's records and bytes. */
interface Staged {
  readonly records: number;
  readonly bytes: number;
}

/**
 * Streams the base into generation `epoch`: slices of at most
 * `statementRowsMax` events, each encoded, given the sequences after the
 * slice before it and inserted, so no more than one slice is held.
 */
const stageRecords = (state: LogState, making: Making, events: Iterator<Event.Event>) =>
  Effect.gen(function* () {
    const first = state.assignedLast;
    let last = first;
    let bytes = 0;
    for (;;) {
      const slice = nextSlice(events, state.options.statementRowsMax);
      if (slice.length === 0) return { records: last - first, bytes } satisfies Staged;
      const prepared = Batch.prepare(slice);
      if (Either.isLeft(prepared)) return yield* Effect.fail(prepared.left);
      let sequence = last;
      for (const record of prepared.right.records) {
        sequence += 1;
        record.sequence = sequence;
      }
      const laid = layout(last, prepared.right.records);
      yield* insertSlice(state, making, laid);
      last = laid.last;
      bytes += laid.bytes;
    }
  });

/**
 * Stages generation `epoch`: its row (base record count 0 until the switch
 * sets it: the base is streamed, its count known only at its end), after
 * removing whatever an earlier, interrupted run staged, then its base.
 * A failure removes what it staged (best effort: the next compaction
 * removes an orphan left behind, and open reports it).
 */
const stage = (state: LogState, making: Making, events: Iterator<Event.Event>, now: number) =>
  Effect.gen(function* () {
    const { sql, storeId } = state;
    const { epoch } = making;
    const row = [storeId, epoch, state.epoch, state.assignedLast + 1, 0, now];
    yield* withReconnect(state, "compact", undefined, (session) =>
      Effect.gen(function* () {
        // A run cut short by a lost connection left part of it: start over.
        yield* removeGeneration(state, session, making, epoch);
        yield* leased(state, session, making, run(session, sql.insertGeneration, row));
      }),
    );
    return yield* stageRecords(state, making, events);
  }).pipe(
    // Any end but success (a refusal, the base's producer throwing, an
    // interruption); with the lease lost the removal writes nothing either.
    Effect.onError(() =>
      Effect.ignore(
        withReconnect(state, "compact", undefined, (session) =>
          removeGeneration(state, session, making, making.epoch),
        ),
      ),
    ),
  );

/** The compare-and-set of CURRENT; `false` when the head is neither where it was nor where it goes. */
const switchTo = (state: LogState, session: Session, making: Making, last: number) =>
  leasedDeciding(
    state,
    session,
    making,
    Effect.gen(function* () {
      const { sql, storeId } = state;
      const { epoch } = making;
      const expected = state.assignedLast;
      yield* run(session, sql.countGeneration, [storeId, epoch, last - expected]);
      const moved = yield* run(session, sql.switchGeneration, [
        storeId,
        state.epoch,
        epoch,
        last,
        expected,
      ]);
      if (moved.affected === 1) return { value: true, commit: true };
      // Moved nothing: a run again whose first run switched, or another writer.
      const head = yield* readHead(state, session);
      return { value: head.epoch === epoch && head.lastSequence === last, commit: false };
    }),
  );

/**
 * Takes the lease, then reads the head: it must be where this log stands.
 * A log that has not followed another engine's compaction (or append) yet
 * would otherwise remove the current generation as a leftover.
 */
const claim = (state: LogState, making: Making, expectedLastSequence: number) =>
  withReconnect(state, "compact", undefined, (session) =>
    Effect.gen(function* () {
      yield* Lease.take(state, session, making.lease);
      const head = yield* readHead(state, session);
      // The caller's sequence, not the state's: a concurrent `refresh` may have moved that.
      const here = head.epoch === state.epoch && head.lastSequence === expectedLastSequence;
      if (here && state.assignedLast === expectedLastSequence) return;
      return yield* new LogError.CompactionConflict({
        path: state.path,
        expectedLastSequence,
        lastSequence: head.lastSequence,
      });
    }),
  );

/** Steps 2 to 5 under the gate: returns what was staged and what was removed. */
const publish = (
  state: LogState,
  events: Iterator<Event.Event>,
  expectedLastSequence: number,
  lease: Lease.Lease,
) =>
  Effect.gen(function* () {
    yield* whenIdle(state);
    // The compaction's statements run on the writer's session: no turn may hold it.
    yield* Turn.release(state);
    if (state.failure !== undefined) return yield* Effect.fail(state.failure);
    const { path } = state;
    if (expectedLastSequence !== state.assignedLast) {
      return yield* new LogError.CompactionConflict({
        path,
        expectedLastSequence,
        lastSequence: state.assignedLast,
      });
    }
    const making: Making = { lease, epoch: state.epoch + 1 };
    yield* claim(state, making, expectedLastSequence);
    const now = yield* Clock.currentTimeMillis;
    const leftovers = yield* withReconnect(state, "compact", undefined, (session) =>
      removeOthers(state, session, making),
    );
    const staged = yield* stage(state, making, events, now);
    const last = state.assignedLast + staged.records;
    const switched = yield* withReconnect(state, "compact", last, (session) =>
      switchTo(state, session, making, last),
    );
    if (!switched) {
      return yield* new LogError.CompactionConflict({
        path,
        expectedLastSequence,
        lastSequence: state.assignedLast,
      });
    }
    const previous = state.epoch;
    state.epoch = making.epoch;
    state.firstSequence = expectedLastSequence + 1;
    state.baseRecordCount = staged.records;
    state.committedLast = last;
    state.assignedLast = last;
    state.committedBytes = staged.bytes;
    state.uncounted = [];
    return { staged, previous, leftovers, making };
  });

/** Compacts as the module says; see `Log.compact`. */
export const compact = (
  state: LogState,
  events: Iterable<Event.Event>,
  expectedLastSequence: number,
): Effect.Effect<CompactionReport, PgLogError> => {
  const lease = Lease.token();
  return Effect.gen(function* () {
    const gate = yield* Deferred.make<void>();
    const started = yield* Clock.currentTimeMillis;
    state.gate = gate;
    const iterator = events[Symbol.iterator]();
    const published = yield* publish(state, iterator, expectedLastSequence, lease).pipe(
      Effect.ensuring(
        Effect.suspend(() => {
          // A base left part-read (a failure) is closed, so its producer's cleanup runs.
          iterator.return?.();
          state.gate = undefined;
          return Deferred.succeed(gate, undefined);
        }),
      ),
    );
    const pauseMs = (yield* Clock.currentTimeMillis) - started;
    const { previous, leftovers, staged, making } = published;
    const removal = yield* Effect.either(
      withReconnect(state, "compact", undefined, (session) =>
        removeGeneration(state, session, making, previous),
      ),
    );
    return {
      epoch: state.epoch,
      firstSequence: state.firstSequence,
      baseRecords: staged.records,
      baseBytes: staged.bytes,
      pauseMs,
      removed: removal._tag === "Right" ? [...leftovers.removed, previous] : leftovers.removed,
      notRemoved:
        removal._tag === "Right" ? leftovers.notRemoved : [...leftovers.notRemoved, previous],
    };
  }).pipe(
    // Freed on every end (a lease not ours, or no row, is left as it is).
    Effect.ensuring(
      Effect.ignore(
        withReconnect(state, "compact", undefined, (session) =>
          Lease.release(state, session, lease),
        ),
      ),
    ),
  );
};
