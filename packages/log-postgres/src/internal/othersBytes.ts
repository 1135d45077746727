/**
 * The bytes of other writers' records in `stats().bytes` (docs/postgres.md,
 * "A log's byte count beside other writers"). The log notes the runs of
 * others' records it moves past in `uncounted`; `refresh` reads their size
 * with the head, in the same statement (one round trip, as before), when
 * they run without a gap up to the last sequence the log knows, which is
 * the usual case: an append refused, then the engine's catch-up. Runs with
 * a gap (this log appended between them) are read one aggregate each.
 *
 * Runs are taken out of `uncounted` before they are read, so two refreshes
 * at once never count one twice, and put back when the read fails or its
 * answer cannot be trusted (this log committed during the read: its own
 * records might be in the sum); a move to another generation drops them
 * (the move counts the new generation whole).
 */
import * as Effect from "effect/Effect";
import type { PgLogError } from "../PgError.js";
import { onReaderOrDatabaseError, type ReaderSession } from "./reader.js";
import { run } from "./session.js";
import type { LogState } from "./state.js";
import * as Tables from "./tables.js";

/** A run of records: its first and last sequence. */
export interface Run {
  readonly first: number;
  readonly last: number;
}

/** Runs taken out of `uncounted` for one refresh, and what the log knew then. */
export interface Taken {
  readonly epoch: number;
  /** The log's last committed sequence when they were taken. */
  readonly last: number;
  readonly runs: ReadonlyArray<Run>;
  /** The first sequence the refresh's sum counts from. */
  readonly from: number;
}

/** The head row and the bytes of its generation's records from `Taken.from` on. */
export interface HeadAndBytes {
  readonly head: Tables.Head;
  readonly bytes: number;
}

/** True when `runs` follow each other without a gap and end at `last`. */
const gapless = (runs: ReadonlyArray<Run>, last: number): boolean => {
  for (let index = 1; index < runs.length; index++) {
    if ((runs[index - 1]?.last ?? 0) + 1 !== runs[index]?.first) return false;
  }
  return runs.length === 0 || runs.at(-1)?.last === last;
};

/** The bytes of the records `run` of `epoch`, read on the reader's session. */
const bytesOf = (state: LogState, reader: ReaderSession, epoch: number, records: Run) =>
  Effect.gen(function* () {
    const found = yield* onReaderOrDatabaseError(state, reader, "refresh", (session) =>
      run(session, state.sql.bytesBetween, [state.storeId, epoch, records.first, records.last]),
    );
    const bytes = Tables.byteCount(state.path, epoch, found.rows);
    return typeof bytes === "number" ? bytes : yield* Effect.fail(bytes);
  });

/** `taken`'s runs back in `uncounted`, unless the log moved to another generation. */
export const putBack = (state: LogState, taken: Pick<Taken, "epoch" | "runs">): void => {
  if (state.epoch === taken.epoch) state.uncounted.unshift(...taken.runs);
};

/** Counts every run in `uncounted` now, one aggregate each. */
export const count = (state: LogState, reader: ReaderSession): Effect.Effect<void, PgLogError> => {
  const taken = { epoch: state.epoch, runs: state.uncounted };
  state.uncounted = [];
  return Effect.gen(function* () {
    let bytes = 0;
    for (const records of taken.runs) bytes += yield* bytesOf(state, reader, taken.epoch, records);
    if (state.epoch === taken.epoch) state.committedBytes += bytes;
  }).pipe(Effect.tapError(() => Effect.sync(() => putBack(state, taken))));
};

/** Takes the runs a refresh counts with the head (counting runs with a gap first). */
export const take = (state: LogState, reader: ReaderSession): Effect.Effect<Taken, PgLogError> =>
  Effect.gen(function* () {
    if (!gapless(state.uncounted, state.committedLast)) yield* count(state, reader);
    const runs = state.uncounted;
    state.uncounted = [];
    const from = runs[0]?.first ?? state.committedLast + 1;
    return { epoch: state.epoch, last: state.committedLast, runs, from };
  });

/** The head, and the bytes of its generation's records from `taken.from` on, in one statement. */
export const headNow = (
  state: LogState,
  reader: ReaderSession,
  taken: Taken,
): Effect.Effect<HeadAndBytes, PgLogError> =>
  Effect.gen(function* () {
    const found = yield* onReaderOrDatabaseError(state, reader, "refresh", (session) =>
      run(session, state.sql.currentWithBytes, [state.storeId, taken.from]),
    );
    const head = Tables.head(state.path, found.rows);
    if (!("lastSequence" in head)) return yield* Effect.fail(head);
    const bytes = Tables.byteCount(state.path, head.epoch, found.rows);
    return typeof bytes === "number" ? { head, bytes } : yield* Effect.fail(bytes);
  }).pipe(Effect.tapError(() => Effect.sync(() => putBack(state, taken))));

/**
 * Takes a head of the log's own generation: the bytes read are counted when
 * nothing changed since the runs were taken (they are then exactly the
 * others' records from `taken.from` to the head); else the runs go back,
 * and the records past the log's last sequence become a run of their own.
 */
export const settle = (state: LogState, taken: Taken, read: HeadAndBytes): void => {
  const { head } = read;
  const counted = state.epoch === taken.epoch && state.committedLast === taken.last;
  if (counted) state.committedBytes += read.bytes;
  else putBack(state, taken);
  if (head.lastSequence > state.committedLast) {
    if (!counted) state.uncounted.push({ first: state.committedLast + 1, last: head.lastSequence });
    state.committedLast = head.lastSequence;
    state.assignedLast = head.lastSequence;
  }
};
