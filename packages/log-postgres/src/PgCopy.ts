/**
 * A whole generation in and out of PostgreSQL a page at a time, for
 * `tay copy` (memory: one page and the caller's fold, never the history).
 *
 * - `read` folds a store's current generation exactly as `PgLog.open`
 *   does (one REPEATABLE READ snapshot, every row checked and decoded)
 *   and runs the caller's effect after each page, so the caller writes the
 *   page elsewhere before the next is read. Nothing is written here.
 * - `importGeneration` creates a new store whose generation 1 the caller
 *   hands over page by page, in ONE transaction: the store's row, the
 *   records as they come, then the generation and its CURRENT row; the
 *   rows are then read back in the same transaction, checked, decoded and
 *   folded, and the caller's check of that fold must pass before COMMIT.
 *   A failure anywhere (the caller's too), or a crash, rolls everything
 *   back: the store is absent or whole, never part of a history.
 */
import { randomUUID } from "node:crypto";
import { decodeEvent } from "@tay/codec";
import type { Batch, Projection } from "@tay/shell-node";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import type { Driver, Failure, Parameter, Session } from "./Driver.js";
import { redact, storePath } from "./internal/location.js";
import { type AfterPage, recover } from "./internal/recovery.js";
import { close, connect, databaseError, run } from "./internal/session.js";
import { statements } from "./internal/sql.js";
import * as Rows from "./internal/rows.js";
import * as Tables from "./internal/tables.js";
import { layout } from "./internal/writer.js";
import {
  type DatabaseError,
  HistoryRejected,
  InvalidOption,
  InvalidUrl,
  type MalformedRow,
  Mismatch,
  type PgOpenError,
  type SchemaVersionMismatch,
  StoreExists,
  UndecodableEvent,
} from "./PgError.js";
import { type PgReport, reportOf } from "./PgLog.js";
import { type PgLogOptions, resolve, type Resolved } from "./PgOptions.js";
import * as PgSchema from "./PgSchema.js";

/** Record rows per INSERT (two parameters a row, well under the protocol's 65,535). */
const insertRowsMax = 1024;

/** The store `url` and `options` name: where, how to reach it, its statements. */
const locate = (url: string, options: PgLogOptions) =>
  Effect.gen(function* () {
    const redacted = redact(url);
    if (redacted instanceof InvalidUrl) return yield* redacted;
    const resolved = resolve(redacted, options);
    if (resolved instanceof InvalidOption) return yield* resolved;
    return {
      path: storePath(redacted, resolved.schema, resolved.store),
      options: resolved,
      sql: statements(resolved.schema),
      driver: resolved.driver(url),
    };
  });

/** A session for `body`, closed afterwards; a failed connection is `DatabaseError`. */
const onSession = <A, E, R>(
  where: { readonly path: string; readonly driver: Driver },
  operation: string,
  body: (session: Session) => Effect.Effect<A, E, R>,
): Effect.Effect<A, E | DatabaseError, R> =>
  Effect.acquireUseRelease(
    Effect.mapError(connect(where.driver), databaseError(where.path, operation)),
    body,
    close,
  );

/**
 * Folds the store at `url` into `projection` as `PgLog.open` does and
 * runs `afterPage` after each page of `options.pageRecords` rows (and
 * after the last, short or empty, page), inside the snapshot. Returns
 * the projection's state and open's report; fails as open does, or with
 * `afterPage`'s error. Writes nothing.
 */
export const read = <S, E, X, R>(
  url: string,
  options: PgLogOptions,
  projection: Projection.Projection<S, E>,
  afterPage: () => Effect.Effect<void, X, R>,
): Effect.Effect<
  { readonly state: S; readonly report: PgReport },
  PgOpenError | HistoryRejected<E> | X,
  R
> =>
  Effect.gen(function* () {
    const where = yield* locate(url, options);
    const context = yield* Effect.context<R>();
    const hook: AfterPage<X> = () => Effect.provide(afterPage(), context);
    const recovered = yield* onSession(where, "open", (session) =>
      recover(where, session, projection, hook),
    );
    return { state: recovered.state, report: reportOf(where.path, recovered) };
  });

/** How a producer hands records to `importGeneration`: sequences given, contiguous, in order. */
export interface RecordSink {
  readonly write: (
    records: ReadonlyArray<Batch.PendingRecord>,
  ) => Effect.Effect<void, DatabaseError>;
}

/** Where the imported generation starts and how much of it is the base. */
export interface GenerationStart {
  readonly firstSequence: number;
  readonly baseRecordCount: number;
}

/** What the read-back of an import checks: its fold, then the caller's verdict on it. */
export interface ImportCheck<S, E, V> {
  readonly projection: Projection.Projection<S, E>;
  readonly verify: (state: S, lastSequence: number) => Effect.Effect<void, V>;
}

/** What an import wrote, read back and checked. */
export interface PgImported<S> {
  readonly path: string;
  readonly storeId: string;
  readonly firstSequence: number;
  readonly lastSequence: number;
  readonly baseRecordCount: number;
  readonly records: number;
  readonly bytes: number;
  readonly state: S;
}

/** The records written so far: the first sequence, the next one, the rows' bytes. */
interface Written {
  first: number | undefined;
  next: number | undefined;
  bytes: number;
}

/** Inserts a page of records (contiguous with the previous page) in the open transaction. */
const insertPage =
  (
    session: Session,
    where: { readonly path: string; readonly sql: ReturnType<typeof statements> },
    storeId: string,
    written: Written,
  ) =>
  (records: ReadonlyArray<Batch.PendingRecord>): Effect.Effect<void, DatabaseError> =>
    Effect.gen(function* () {
      const { sql } = where;
      const first = records[0];
      if (first === undefined) return;
      if (written.next !== undefined && first.sequence !== written.next) {
        return yield* Effect.dieMessage(
          `PgCopy: records from ${first.sequence} after ${written.next - 1}`,
        );
      }
      for (const [index, record] of records.entries()) {
        if (record.sequence !== first.sequence + index) {
          return yield* Effect.dieMessage(`PgCopy: a gap in a page at ${record.sequence}`);
        }
      }
      const laid = layout(first.sequence - 1, records);
      for (let start = 0; start < laid.rows.length; start += insertRowsMax) {
        const count = Math.min(insertRowsMax, laid.rows.length - start);
        const parameters: Array<Parameter> = [storeId, 1];
        for (let index = start; index < start + count; index++) {
          parameters.push(laid.sequences[index] ?? 0, laid.rows[index] ?? null);
        }
        yield* run(session, sql.insertRecords(count), parameters);
      }
      written.first ??= first.sequence;
      written.next = first.sequence + records.length;
      written.bytes += laid.bytes;
    }).pipe(Effect.mapError(databaseError(where.path, "init")));

/** Reads the new generation back in pages (same transaction): checked, decoded, folded. */
const foldBack = <S, E>(
  session: Session,
  where: {
    readonly path: string;
    readonly sql: ReturnType<typeof statements>;
    readonly options: Resolved;
  },
  storeId: string,
  generation: GenerationStart & { readonly lastSequence: number },
  projection: Projection.Projection<S, E>,
) =>
  Effect.gen(function* () {
    const { path, sql, options } = where;
    const { firstSequence, baseRecordCount, lastSequence } = generation;
    const id = Rows.storeId(storeId);
    const manifest = {
      storeId: Rows.isRefused(id) ? new Uint8Array(16) : id,
      epoch: 1,
      parentEpoch: 0,
      firstSequence,
      baseRecordCount,
      createdAt: 0,
    };
    let state = projection.start(manifest);
    let next = firstSequence;
    while (next <= lastSequence) {
      const page = yield* run(session, sql.recordsFrom, [
        storeId,
        1,
        next,
        lastSequence,
        options.pageRecords,
      ]);
      if (page.rows.length === 0) break;
      for (const row of page.rows) {
        const checked = Tables.record(path, 1, next, row);
        if (!("bytes" in checked)) return yield* Effect.fail(checked);
        const { type, schema, payload } = checked.record;
        const event = decodeEvent(type, schema, payload);
        if (event._tag === "Left") {
          return yield* new UndecodableEvent({
            path,
            epoch: 1,
            sequence: next,
            reason: event.left,
          });
        }
        const applied = projection.apply(state, next, event.right);
        if (applied._tag === "Left") {
          return yield* new HistoryRejected<E>({
            path,
            epoch: 1,
            sequence: next,
            reason: applied.left,
          });
        }
        state = applied.right;
        next += 1;
      }
    }
    if (next !== lastSequence + 1) {
      return yield* new Mismatch({
        path,
        epoch: 1,
        sequence: next,
        field: "Sequence",
        expected: `a row at sequence ${next}`,
        found: "none",
      });
    }
    return state;
  });

/** What an import can fail with, besides the producer's and the check's own errors. */
export type ImportError =
  | InvalidUrl
  | InvalidOption
  | SchemaVersionMismatch
  | MalformedRow
  | StoreExists
  | DatabaseError
  | PgOpenError;

/**
 * Creates the store `options` name (default "default" in schema "tay",
 * migrated first) with generation 1 holding what `produce` writes through
 * the sink, then read back, folded into `check.projection` and judged by
 * `check.verify`, all in one transaction (see the module comment).
 * `produce` returns where the generation starts; its records must begin
 * there, contiguous. Fails with `StoreExists` before `produce` runs when
 * the name is taken (or at the end when a racing init took it), with the
 * producer's or the check's error, or as `PgSchema.init` does; every
 * failure leaves nothing.
 */
export const importGeneration = <S, E, V, X, R>(
  url: string,
  options: PgLogOptions,
  produce: (sink: RecordSink) => Effect.Effect<GenerationStart, X, R>,
  check: ImportCheck<S, E, V>,
): Effect.Effect<PgImported<S>, ImportError | HistoryRejected<E> | X | V, R> =>
  Effect.gen(function* () {
    const where = yield* locate(url, options);
    const { path, sql } = where;
    const store = where.options.store;
    yield* PgSchema.migrate(url, options);
    return yield* onSession(where, "init", (session) =>
      Effect.gen(function* () {
        const existing = yield* run(session, sql.storeByName, [store]);
        if (existing.rows.length > 0) return yield* new StoreExists({ path, store });
        const storeId = randomUUID();
        const now = yield* Clock.currentTimeMillis;
        const written: Written = { first: undefined, next: undefined, bytes: 0 };
        yield* run(session, sql.begin);
        const imported = yield* Effect.gen(function* () {
          yield* run(session, sql.insertStore, [store, storeId, now]);
          const start = yield* produce({ write: insertPage(session, where, storeId, written) });
          const { firstSequence, baseRecordCount } = start;
          if (written.first !== undefined && written.first !== firstSequence) {
            return yield* Effect.dieMessage(
              `PgCopy: records from ${written.first}, the generation from ${firstSequence}`,
            );
          }
          const lastSequence = (written.next ?? firstSequence) - 1;
          yield* run(session, sql.insertGeneration, [
            storeId,
            1,
            0,
            firstSequence,
            baseRecordCount,
            now,
          ]);
          yield* run(session, sql.insertCurrent, [storeId, 1, lastSequence]);
          const generation = { firstSequence, baseRecordCount, lastSequence };
          const state = yield* foldBack(session, where, storeId, generation, check.projection);
          yield* check.verify(state, lastSequence);
          yield* run(session, sql.commit);
          return {
            path,
            storeId,
            ...generation,
            records: lastSequence - firstSequence + 1,
            bytes: written.bytes,
            state,
          };
        }).pipe(
          Effect.tapErrorCause(() => Effect.ignore(run(session, sql.rollback))),
          Effect.catchIf(
            isDriverFailure,
            (failure): Effect.Effect<never, StoreExists | DatabaseError> =>
              // A racing init of the same name took it first.
              failure.code === "23505"
                ? Effect.fail(new StoreExists({ path, store }))
                : Effect.fail(databaseError(path, "init")(failure)),
          ),
        );
        return imported;
      }).pipe(
        Effect.catchIf(isDriverFailure, (failure) =>
          Effect.fail(databaseError(path, "init")(failure)),
        ),
      ),
    );
  });

const isDriverFailure = (error: unknown): error is Failure =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "DriverFailure";
