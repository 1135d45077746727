/**
 * A turn after a conflict (docs/postgres.md, "A turn after a conflict"):
 * several engines append to one store by optimistic guards, and a writer
 * that keeps losing to a busier one could lose every time. Its catch-up
 * (a read of what others appended) and its next append take two round
 * trips; a writer that wins only needs one per append, so with work
 * queued it moves the head again before the loser's append arrives, and
 * the loser's commands run out of retries (`ContentionExhausted`, 128 of
 * them in `bench/postgres` at 2 engines × 256 producers, 2026-12-02).
 *
 * So after `turnAfterConflicts` refusals in a row (at the first for a
 * minority writer: one whose own records are under an eighth of those its
 * engine saw lately, a web process inserting now and then beside busy
 * workers, which loses every race), the writer opens a
 * transaction on its session and reads the head row `FOR UPDATE`: the head
 * it reports with the conflict is then final until this transaction ends,
 * the engine catches up to exactly it, and its next append runs inside the
 * same transaction and commits. Other writers' guards wait meanwhile and
 * then find the head moved (a conflict of theirs, and a turn of theirs).
 * The guards still decide what commits: the lock only orders the writers.
 *
 * A turn is let go (ROLLBACK, nothing written) when the engine decided
 * again with nothing to append (`caughtUp`), when the log's compaction
 * needs the session, when the log closes, and at the latest `turnHoldMs`
 * after it was taken.
 */
import * as Effect from "effect/Effect";
import type { Failure, Session } from "../Driver.js";
import type { MalformedRow, MissingRow } from "../PgError.js";
import { batchOf, run, runBatch } from "./session.js";
import { type LogState, wakeWriter } from "./state.js";
import * as Tables from "./tables.js";

/**
 * Whether a transaction refused by the guard now should take a turn: after
 * `turnAfterConflicts` refusals in a row, or at the first for a writer the
 * engine calls a minority one (`Log.minorityWriter`; 0 turns never taken).
 */
export const wanted = (state: LogState): boolean => {
  const after = state.options.turnAfterConflicts;
  if (after === 0) return false;
  return state.minorityWriter || state.conflictsInARow + 1 >= after;
};

/**
 * Takes a turn on `session` (no transaction open on it): BEGIN, then the
 * head read `FOR UPDATE`, in one round trip where the session sends
 * batches. Answers the head, locked until the turn ends; a failure leaves
 * no transaction open.
 */
export const take = (
  state: LogState,
  session: Session,
): Effect.Effect<Tables.Head, Failure | MissingRow | MalformedRow> => {
  const { sql, storeId } = state;
  const batch = batchOf(session, state.options.oneTrip);
  const locked =
    batch !== undefined
      ? Effect.map(
          runBatch(batch, [
            { text: sql.begin, parameters: [] },
            { text: sql.lockHead, parameters: [storeId], columns: lockedColumns },
          ]),
          (results) => results[1]?.rows ?? [],
        )
      : Effect.zipRight(
          run(session, sql.begin),
          Effect.map(run(session, sql.lockHead, [storeId]), (result) => result.rows),
        );
  return Effect.flatMap(locked, (rows) => {
    const head = Tables.head(state.path, rows);
    if (!("lastSequence" in head)) return Effect.fail(head);
    state.turn = { session, since: performance.now(), release: false };
    state.writes.turns += 1;
    return Effect.succeed(head);
  }).pipe(
    // A lost connection has no transaction left to end.
    Effect.tapError((error) =>
      "connection" in error && error.connection ? Effect.void : rollback(state, session),
    ),
  );
};

/** The columns of `lockHead`'s row, in its order. */
const lockedColumns = ["epoch", "last_sequence"];

/** Ends whatever transaction `session` holds, nothing written; never fails. */
const rollback = (state: LogState, session: Session): Effect.Effect<void> =>
  Effect.ignore(run(session, state.sql.rollback));

/**
 * Whether the append about to run on `session` runs inside the turn (its
 * transaction is open there); the turn is used up either way. A turn held
 * on another session (the connection was lost since) ended with it.
 */
export const use = (state: LogState, session: Session): boolean => {
  const turn = state.turn;
  state.turn = undefined;
  return turn !== undefined && turn.session === session;
};

/** Lets the turn go now, if one is held: ROLLBACK on its session (awaited). */
export const release = (state: LogState): Effect.Effect<void> => {
  const turn = state.turn;
  state.turn = undefined;
  return turn === undefined ? Effect.void : rollback(state, turn.session);
};

/**
 * Asks the writer to let the turn go at its next step when nothing is
 * queued: the engine decided again and had nothing to append.
 */
export const letGo = (state: LogState): void => {
  if (state.turn === undefined || state.pending.length > 0) return;
  state.turn.release = true;
  wakeWriter(state);
};

/**
 * The writer's step while it holds a turn and nothing is queued: lets it
 * go when asked to, when the log closes, stops or compacts, or once
 * `turnHoldMs` has passed; else waits until an append is queued (or the
 * hold's end).
 */
export const hold = (state: LogState): Effect.Effect<void> => {
  const turn = state.turn;
  if (turn === undefined) return Effect.void;
  const left = turn.since + state.options.turnHoldMs - performance.now();
  const over = turn.release || state.closing || state.failure !== undefined || left <= 0;
  if (over || state.gate !== undefined) return release(state);
  return Effect.async<void>((resume) => {
    const timer = setTimeout(() => {
      state.wake = undefined;
      resume(Effect.void);
    }, Math.ceil(left));
    state.wake = () => {
      clearTimeout(timer);
      resume(Effect.void);
    };
    return Effect.sync(() => clearTimeout(timer));
  });
};
