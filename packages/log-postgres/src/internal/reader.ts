/**
 * Reads: what committed from the table (on the reader's own session, so a
 * read never waits behind the writer's transaction), then what is queued
 * or in flight from memory, as the file store reads its files and then its
 * pending records. Every row read is checked as open checks it and its
 * event decoded. A read below the generation's first sequence, or one that
 * a compaction overtook, is `Compacted`.
 */
import { decodeEvent } from "@tay/codec";
import { LogError, type Projection } from "@tay/shell-node";
import * as Chunk from "effect/Chunk";
import * as Effect from "effect/Effect";
import * as Option from "effect/Option";
import * as Stream from "effect/Stream";
import type { Failure, Session } from "../Driver.js";
import { isFailure } from "./writer.js";
import { Mismatch, type PgLogError, UndecodableEvent } from "../PgError.js";
import { close, connect, databaseError, reconnectWait, run } from "./session.js";
import type { LogState } from "./state.js";
import * as Tables from "./tables.js";

/** The reader's session, made on first use and again after its connection dropped. */
export interface ReaderSession {
  session: Session | undefined;
  /** One read at a time: a second would connect a second session. */
  readonly lock: Effect.Semaphore;
  /**
   * Set by the log's close: no read connects any more. A read still running
   * then (an engine's catch-up, forked, that the close does not wait for)
   * would otherwise reconnect after the close ended its session, and the
   * connection left open would keep the process alive.
   */
  closed: boolean;
}

/** A reader with no session yet (connected on its first read). */
export const makeReader: Effect.Effect<ReaderSession> = Effect.map(
  Effect.makeSemaphore(1),
  (lock) => ({ session: undefined, lock, closed: false }),
);

/** Closes the reader for good: its session now, and any read after (or still running) is `StoreClosed`. */
export const closeReader = (reader: ReaderSession): Effect.Effect<void> =>
  Effect.suspend(() => {
    reader.closed = true;
    const session = reader.session;
    reader.session = undefined;
    return session === undefined ? Effect.void : close(session);
  });

/** The reader's session: the open one, or a new one (closed at once if the log closed meanwhile). */
const readerSession = (
  state: LogState,
  reader: ReaderSession,
): Effect.Effect<Session, Failure | LogError.StoreClosed> =>
  Effect.suspend(() => {
    const closed = new LogError.StoreClosed({ path: state.path });
    if (reader.closed) return Effect.fail(closed);
    if (reader.session !== undefined) return Effect.succeed(reader.session);
    // Not interrupted mid-connect: a connection made is either kept or closed.
    return Effect.uninterruptible(
      Effect.flatMap(connect(state.driver), (session) => {
        if (reader.closed) return Effect.zipRight(close(session), Effect.fail(closed));
        reader.session = session;
        return Effect.succeed(session);
      }),
    );
  });

/** The committed row of `sequence`, checked (`Tables.record`) and decoded; or its fault. */
export const entryOfRow = (
  state: LogState,
  epoch: number,
  sequence: number,
  row: unknown,
): Projection.Entry | PgLogError => {
  const checked = Tables.record(state.path, epoch, sequence, row);
  if (!("bytes" in checked)) return checked;
  const { type, schema, payload } = checked.record;
  const event = decodeEvent(type, schema, payload);
  if (event._tag === "Left") {
    return new UndecodableEvent({ path: state.path, epoch, sequence, reason: event.left });
  }
  return { sequence, event: event.right };
};

/** Decodes the committed rows of one page, checked from `from` on. */
const entriesOf = (
  state: LogState,
  epoch: number,
  from: number,
  rows: ReadonlyArray<unknown>,
): Array<Projection.Entry> | PgLogError => {
  const entries: Array<Projection.Entry> = [];
  for (const [index, row] of rows.entries()) {
    const entry = entryOfRow(state, epoch, from + index, row);
    if (!("event" in entry)) return entry;
    entries.push(entry);
  }
  return entries;
};

/**
 * Runs `body` on the reader's session (connected on first use), one at a
 * time. A read is safe to run again, so a lost connection is dropped and
 * the read runs again on a new one, up to `reconnectAttemptsMax` times
 * (waiting `reconnectDelayMs` × n): a terminated backend costs a read a
 * reconnection, not a failure. Refusals fail at once.
 */
export const onReader = <A, E>(
  state: LogState,
  reader: ReaderSession,
  body: (session: Session) => Effect.Effect<A, E | Failure>,
): Effect.Effect<A, E | Failure | LogError.StoreClosed> =>
  reader.lock.withPermits(1)(
    Effect.gen(function* () {
      for (let attempts = 0; ; attempts++) {
        const result = yield* Effect.either(Effect.flatMap(readerSession(state, reader), body));
        if (result._tag === "Right") return result.right;
        const error = result.left;
        const connection = isFailure(error) && error.connection;
        if (connection && reader.session !== undefined) {
          const session = reader.session;
          reader.session = undefined;
          yield* close(session);
        }
        // The log closed under the read (its close ended the session): no reconnection.
        if (connection && reader.closed) {
          return yield* new LogError.StoreClosed({ path: state.path });
        }
        if (!connection || attempts >= state.options.reconnectAttemptsMax) {
          return yield* Effect.fail(error);
        }
        yield* Effect.sleep(reconnectWait(state.options.reconnectDelayMs, attempts));
      }
    }),
  );

/** Up to `limit` committed rows from `from` to `through`, on the reader's session. */
const committedRows = (
  state: LogState,
  reader: ReaderSession,
  epoch: number,
  from: number,
  through: number,
  limit: number,
) =>
  Effect.map(
    onReader(state, reader, (session) =>
      run(session, state.sql.recordsFrom, [state.storeId, epoch, from, through, limit]),
    ),
    (result) => result.rows,
  );

/**
 * Up to `limit` entries from `sequence`, contiguous and in order: the
 * table's rows up to what committed, then what is queued. Read at one
 * moment's state: a compaction that removes the rows meanwhile makes the
 * read `Compacted`.
 */
export const readFrom = (
  state: LogState,
  reader: ReaderSession,
  sequence: number,
  limit: number,
): Effect.Effect<ReadonlyArray<Projection.Entry>, PgLogError> =>
  Effect.gen(function* () {
    const { epoch, firstSequence, committedLast, path } = state;
    const compacted = () =>
      new LogError.Compacted({ path, sequence, firstAvailable: state.firstSequence });
    if (sequence < firstSequence) return yield* compacted();
    if (limit <= 0) return [];
    // The queued records at this moment: everything past `committedLast`.
    const queued = [...state.inFlight, ...state.pending].flatMap((batch) => batch.records);
    const entries: Array<Projection.Entry> = [];
    if (sequence <= committedLast) {
      const through = Math.min(committedLast, sequence + limit - 1);
      const rows = yield* Effect.mapError(
        committedRows(state, reader, epoch, sequence, through, limit),
        (error) => (isFailure(error) ? databaseError(path, "read")(error) : error),
      );
      const read = entriesOf(state, epoch, sequence, rows);
      if (!Array.isArray(read)) return yield* Effect.fail(read);
      if (read.length < through - sequence + 1) {
        if (state.epoch !== epoch) return yield* compacted();
        return yield* new Mismatch({
          path,
          epoch,
          sequence: sequence + read.length,
          field: "Sequence",
          expected: `a row at sequence ${sequence + read.length}`,
          found: "none",
        });
      }
      entries.push(...read);
    }
    const next = Math.max(sequence, committedLast + 1);
    for (const record of queued) {
      if (entries.length >= limit) break;
      if (record.sequence >= next) entries.push({ sequence: record.sequence, event: record.event });
    }
    return entries;
  });

/** Every entry from `sequence`, a page at a time, until caught up with the last. */
export const iterFrom = (
  state: LogState,
  reader: ReaderSession,
  sequence: number,
): Stream.Stream<Projection.Entry, PgLogError> =>
  Stream.paginateChunkEffect(sequence, (from) =>
    Effect.map(readFrom(state, reader, from, state.options.pageRecords), (entries) => {
      const last = entries[entries.length - 1];
      return [
        Chunk.fromIterable(entries),
        last === undefined ? Option.none() : Option.some(last.sequence + 1),
      ] as const;
    }),
  );

/** `read` on the reader's session, a driver failure told as `DatabaseError` of `operation`. */
export const onReaderOrDatabaseError = <A, E>(
  state: LogState,
  reader: ReaderSession,
  operation: string,
  read: (session: Session) => Effect.Effect<A, E>,
) =>
  Effect.catchIf(onReader(state, reader, read), isFailure, (failure) =>
    Effect.fail(databaseError(state.path, operation)(failure)),
  );
