/**
 * Other writers of the same store (several engines, one store): learning
 * how far they appended. `refresh` waits until this log's own appends have
 * settled, reads the head row on the reader's session, and, when the head
 * is further on in the same generation, takes it as the log's last
 * sequence: the records between are the others', committed, and the view
 * reads them from the table. A head in another epoch (another writer
 * compacted) is left alone: the next append conflicts and stops the log.
 */
import { Effect } from "effect";
import type { PgLogError } from "../PgError.js";
import type * as Tables from "./tables.js";
import { onReader, type ReaderSession } from "./reader.js";
import { databaseError } from "./session.js";
import { type LogState, whenIdle } from "./state.js";
import { isFailure, readHead } from "./writer.js";

/** The head row now, read on the reader's session; a driver failure is `DatabaseError`. */
export const headNow = (
  state: LogState,
  reader: ReaderSession,
  operation: string,
): Effect.Effect<Tables.Head, PgLogError> =>
  Effect.catchIf(
    onReader(state, reader, (session) => readHead(state, session)),
    isFailure,
    (failure) => Effect.fail(databaseError(state.path, operation)(failure)),
  );

/** Moves the log's last sequence up to the head others reached (see the module's comment). */
export const refresh = (state: LogState, reader: ReaderSession): Effect.Effect<void, PgLogError> =>
  Effect.gen(function* () {
    yield* whenIdle(state);
    const head = yield* headNow(state, reader, "refresh");
    const idle = state.pending.length === 0 && state.inFlight.length === 0;
    if (idle && head.epoch === state.epoch && head.lastSequence > state.committedLast) {
      state.committedLast = head.lastSequence;
      state.assignedLast = head.lastSequence;
    }
  });
