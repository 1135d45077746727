/**
 * Compaction on the tables, the file store's steps in rows:
 *
 * 1. encode the base (an unencodable event fails before anything pauses);
 * 2. hold appends (the gate) and wait until nothing is queued or in flight;
 *    the log's last sequence must be the caller's (`CompactionConflict`);
 * 3. remove leftover generations (a crashed compaction's staged one, a
 *    superseded one whose removal failed): records, then the row;
 * 4. stage generation E+1: its row (parent E, first sequence = last + 1,
 *    base record count), then its base records, in transactions of at most
 *    `statementRowsMax` records. Until step 5 commits nothing reads them;
 * 5. switch: one UPDATE moves the head row from (E, last) to
 *    (E+1, last + base) only if it is still at (E, last), the compare-and-set
 *    that also fences any writer still appending to E. A lost connection is
 *    resolved as an append's is: run it again; the head at (E+1, last +
 *    base) means the first run switched;
 * 6. swap the in-memory generation and open the gate;
 * 7. delete E's records and row (a failure is reported in `notRemoved`
 *    and retried by the next compaction: E is no longer current).
 */
import type { Event } from "@tay/core";
import { Batch, LogError } from "@tay/shell-node";
import { Clock, Deferred, Effect, Either } from "effect";
import type { Parameter, Session } from "../Driver.js";
import type { PgLogError } from "../PgError.js";
import * as Rows from "./rows.js";
import { run } from "./session.js";
import { type LogState, whenIdle } from "./state.js";
import * as Tables from "./tables.js";
import { layout, readHead, rollbackOnError, withReconnect } from "./writer.js";

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

/** Deletes one generation that is not current: its records in ranges, then its row. */
const removeGeneration = (state: LogState, session: Session, epoch: number) =>
  Effect.gen(function* () {
    const { sql, storeId, path } = state;
    const row = yield* run(session, sql.generation, [storeId, epoch]);
    const generation = Tables.generation(path, epoch, row.rows);
    const first = "firstSequence" in generation ? generation.firstSequence : 1;
    const last = yield* run(session, sql.lastRecordOf, [storeId, epoch]);
    const through = Rows.optionalInteger(Rows.field(last.rows[0], "sequence"));
    if (!Rows.isRefused(through) && through !== null) {
      for (let from = Math.min(first, through); from <= through; from += deleteRowsMax) {
        yield* run(session, sql.deleteRecords, [storeId, epoch, from, from + deleteRowsMax - 1]);
      }
    }
    yield* run(session, sql.deleteGeneration, [storeId, epoch]);
  });

/** Removes every generation but the current one; returns which went and which stayed. */
const removeOthers = (state: LogState, session: Session) =>
  Effect.gen(function* () {
    const found = yield* run(session, state.sql.otherGenerations, [state.storeId, state.epoch]);
    const removed: Array<number> = [];
    const notRemoved: Array<number> = [];
    for (const row of found.rows) {
      const epoch = Rows.integer(Rows.field(row, "epoch"), 1);
      if (Rows.isRefused(epoch)) continue;
      const done = yield* Effect.either(removeGeneration(state, session, epoch));
      (done._tag === "Right" ? removed : notRemoved).push(epoch);
    }
    return { removed, notRemoved };
  });

/**
 * Stages generation `epoch`: its row, then its base records, each INSERT
 * its own transaction (nothing reads them before the switch), after
 * removing whatever an earlier, interrupted run staged.
 */
const stage = (state: LogState, session: Session, epoch: number, base: Batch.Batch, now: number) =>
  Effect.gen(function* () {
    const { sql, storeId } = state;
    const expected = state.assignedLast;
    // A run cut short by a lost connection left part of it: start over.
    yield* removeGeneration(state, session, epoch);
    yield* run(session, sql.insertGeneration, [
      storeId,
      epoch,
      state.epoch,
      expected + 1,
      base.records.length,
      now,
    ]);
    let sequence = expected;
    for (const record of base.records) {
      sequence += 1;
      record.sequence = sequence;
    }
    const laid = layout(expected, base.records);
    const rowsMax = state.options.statementRowsMax;
    for (let start = 0; start < laid.rows.length; start += rowsMax) {
      const count = Math.min(rowsMax, laid.rows.length - start);
      const parameters: Array<Parameter> = [storeId, epoch];
      for (let index = start; index < start + count; index++) {
        parameters.push(laid.sequences[index] ?? 0, laid.rows[index] ?? null);
      }
      yield* run(session, sql.insertRecords(count), parameters);
    }
    return laid;
  });

/** The compare-and-set of CURRENT; `false` when the head is neither where it was nor where it goes. */
const switchTo = (state: LogState, session: Session, epoch: number, last: number) =>
  Effect.gen(function* () {
    const { sql, storeId } = state;
    const expected = state.assignedLast;
    yield* run(session, sql.begin);
    const moved = yield* run(session, sql.switchGeneration, [
      storeId,
      state.epoch,
      epoch,
      last,
      expected,
    ]);
    if (moved.affected === 1) {
      yield* run(session, sql.commit);
      return true;
    }
    const head = yield* readHead(state, session);
    yield* run(session, sql.rollback);
    return head.epoch === epoch && head.lastSequence === last;
  }).pipe(Effect.tapError(rollbackOnError(state, session)));

/** Steps 3 to 6 under the gate: returns the new generation's layout and what was removed. */
const publish = (state: LogState, base: Batch.Batch, expectedLastSequence: number) =>
  Effect.gen(function* () {
    yield* whenIdle(state);
    if (state.failure !== undefined) return yield* Effect.fail(state.failure);
    const { path } = state;
    if (expectedLastSequence !== state.assignedLast) {
      return yield* new LogError.CompactionConflict({
        path,
        expectedLastSequence,
        lastSequence: state.assignedLast,
      });
    }
    const now = yield* Clock.currentTimeMillis;
    const epoch = state.epoch + 1;
    const last = state.assignedLast + base.records.length;
    const leftovers = yield* withReconnect(state, "compact", undefined, (session) =>
      removeOthers(state, session),
    );
    const laid = yield* withReconnect(state, "compact", undefined, (session) =>
      stage(state, session, epoch, base, now),
    );
    const switched = yield* withReconnect(state, "compact", last, (session) =>
      switchTo(state, session, epoch, last),
    );
    if (!switched) {
      return yield* new LogError.CompactionConflict({
        path,
        expectedLastSequence,
        lastSequence: state.assignedLast,
      });
    }
    const previous = state.epoch;
    state.epoch = epoch;
    state.firstSequence = expectedLastSequence + 1;
    state.baseRecordCount = base.records.length;
    state.committedLast = last;
    state.assignedLast = last;
    state.committedBytes = laid.bytes;
    return { laid, previous, leftovers };
  });

/** Compacts as the module says; see `Log.compact`. */
export const compact = (
  state: LogState,
  events: Iterable<Event.Event>,
  expectedLastSequence: number,
): Effect.Effect<CompactionReport, PgLogError> =>
  Effect.gen(function* () {
    // The generation's row names its base record count before its records: this log
    // takes the base whole (the file store streams it, docs/store.md).
    const prepared = Batch.prepare(Array.from(events));
    if (Either.isLeft(prepared)) return yield* Effect.fail(prepared.left);
    const base = prepared.right;
    const gate = yield* Deferred.make<void>();
    const started = yield* Clock.currentTimeMillis;
    state.gate = gate;
    const published = yield* publish(state, base, expectedLastSequence).pipe(
      Effect.ensuring(
        Effect.suspend(() => {
          state.gate = undefined;
          return Deferred.succeed(gate, undefined);
        }),
      ),
    );
    const pauseMs = (yield* Clock.currentTimeMillis) - started;
    const { previous, leftovers, laid } = published;
    const removal = yield* Effect.either(
      withReconnect(state, "compact", undefined, (session) =>
        removeGeneration(state, session, previous),
      ),
    );
    return {
      epoch: state.epoch,
      firstSequence: state.firstSequence,
      baseRecords: base.records.length,
      baseBytes: laid.bytes,
      pauseMs,
      removed: removal._tag === "Right" ? [...leftovers.removed, previous] : leftovers.removed,
      notRemoved:
        removal._tag === "Right" ? leftovers.notRemoved : [...leftovers.notRemoved, previous],
    };
  });
