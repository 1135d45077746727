/**
 * Open's recovery: one REPEATABLE READ snapshot of the store's marker, its
 * head row, its current generation and every record of it in sequence
 * order (keyset pages of `pageRecords`), each row checked and its event
 * decoded and folded into the projection as the file store's recovery
 * does, stopping at the first fault with the file store's error kinds
 * (naming epoch and sequence instead of file and offset). Then: no row
 * past the head, the head at the last row, at least the base record count.
 * Nothing is written.
 */
import { decodeEvent, formatStoreId } from "@tay/codec";
import type { Projection } from "@tay/shell-node";
import { Clock, Effect } from "effect";
import type { Failure, Session } from "../Driver.js";
import {
  BudgetExceeded,
  HistoryRejected,
  MalformedRow,
  Mismatch,
  MissingBase,
  type PgOpenError,
  SchemaVersionMismatch,
  StoreNotFound,
  UndecodableEvent,
} from "../PgError.js";
import * as PgSchema from "../PgSchema.js";
import * as Lease from "./lease.js";
import type { Resolved } from "../PgOptions.js";
import * as Rows from "./rows.js";
import { databaseError, run } from "./session.js";
import { diagnostics, type Statements } from "./sql.js";
import * as Tables from "./tables.js";

/** A generation older or newer than the current one, left by compaction. */
export interface OrphanedGeneration {
  readonly epoch: number;
  /** Newer: a compaction that did not switch. Older: one whose removal did not finish. */
  readonly kind: "Staged" | "Superseded";
}

/** What recovery found. */
export interface Recovery<S> {
  readonly state: S;
  readonly storeId: Uint8Array;
  readonly storeIdText: string;
  readonly createdAt: number;
  readonly generation: Tables.GenerationRow;
  readonly lastSequence: number;
  readonly records: number;
  readonly bytes: number;
  readonly orphanedGenerations: ReadonlyArray<OrphanedGeneration>;
  /** The compaction holding the store's lease at open, if one does. */
  readonly compaction: Lease.Held | undefined;
  /** When open read the store (ms since the epoch, this process's clock). */
  readonly openedAt: number;
  readonly synchronousCommit: string;
  readonly openMs: number;
}

interface Where {
  readonly path: string;
  readonly sql: Statements;
  readonly options: Resolved;
}

/**
 * The store's marker: its STORE_ID and creation time, and the compaction
 * holding its lease, read in the same round trip (only the report uses it).
 */
const marker = (where: Where, session: Session) =>
  Effect.gen(function* () {
    const { path, sql, options } = where;
    const found = yield* run(session, sql.storeAndLease, [options.store]);
    const row = found.rows[0];
    if (row === undefined) return yield* new StoreNotFound({ path, store: options.store });
    const refused = (column: string, value: Rows.Refused) =>
      new MalformedRow({
        path,
        table: "tay_store",
        column,
        found: value.found,
        epoch: undefined,
        sequence: undefined,
      });
    const id = Rows.storeId(Rows.field(row, "store_id"));
    if (Rows.isRefused(id)) return yield* refused("store_id", id);
    const createdAt = Rows.integer(Rows.field(row, "created_at"));
    if (Rows.isRefused(createdAt)) return yield* refused("created_at", createdAt);
    return { id, idText: formatStoreId(id), createdAt, compaction: Lease.heldIn(row) };
  });

/** Where the fold stands between pages. */
interface Folding<S> {
  state: S;
  next: number;
  bytes: number;
}

/** Checks, decodes and folds one page of rows; the first fault stops it. */
const foldPage = <S, E>(
  where: Where,
  epoch: number,
  folding: Folding<S>,
  rows: ReadonlyArray<unknown>,
  projection: Projection.Projection<S, E>,
  first: number,
): PgOpenError | HistoryRejected<E> | undefined => {
  const { path } = where;
  for (const row of rows) {
    const sequence = folding.next;
    if (sequence - first >= where.options.historyRecordsMax) {
      return new BudgetExceeded({
        path,
        budget: "historyRecordsMax",
        limit: where.options.historyRecordsMax,
      });
    }
    const checked = Tables.record(path, epoch, sequence, row);
    if (!("bytes" in checked)) return checked;
    const { type, schema, payload } = checked.record;
    const event = decodeEvent(type, schema, payload);
    if (event._tag === "Left") {
      return new UndecodableEvent({ path, epoch, sequence, reason: event.left });
    }
    const applied = projection.apply(folding.state, sequence, event.right);
    if (applied._tag === "Left") {
      return new HistoryRejected<E>({ path, epoch, sequence, reason: applied.left });
    }
    folding.state = applied.right;
    folding.next = sequence + 1;
    folding.bytes += checked.bytes.length;
  }
  return undefined;
};

/** Whether an error is the driver's (any caller's error may pass through recovery). */
const isDriverFailure = (error: unknown): error is Failure =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "DriverFailure";

/**
 * What runs after each page is folded, inside the snapshot: how
 * `PgCopy.read` writes a page out before the next is read. None for open.
 */
export type AfterPage<X> = (() => Effect.Effect<void, X>) | undefined;

/** Every record of the generation up to the head, folded page by page. */
const foldRecords = <S, E, X>(
  where: Where,
  session: Session,
  storeId: string,
  generation: Tables.GenerationRow,
  head: Tables.Head,
  folding: Folding<S>,
  projection: Projection.Projection<S, E>,
  afterPage: AfterPage<X>,
) =>
  Effect.gen(function* () {
    const { sql, options } = where;
    const { epoch, firstSequence } = generation;
    for (;;) {
      const page = yield* run(session, sql.recordsFrom, [
        storeId,
        epoch,
        folding.next,
        head.lastSequence,
        options.pageRecords,
      ]);
      const fault = foldPage(where, epoch, folding, page.rows, projection, firstSequence);
      if (fault !== undefined) return yield* Effect.fail(fault);
      if (afterPage !== undefined) yield* afterPage();
      if (page.rows.length < options.pageRecords) return;
    }
  });

/** The head against the records: none past it, and it at the last. */
const checkEnd = (
  where: Where,
  session: Session,
  storeId: string,
  generation: Tables.GenerationRow,
  head: Tables.Head,
  lastRead: number,
) =>
  Effect.gen(function* () {
    const { path, sql } = where;
    const { epoch } = generation;
    const past = yield* run(session, sql.recordsPast, [storeId, epoch, head.lastSequence]);
    const beyond = Rows.integer(Rows.field(past.rows[0], "sequence"));
    if (past.rows.length > 0 || lastRead !== head.lastSequence) {
      const found = past.rows.length > 0 ? `a record at ${String(beyond)}` : String(lastRead);
      return yield* new Mismatch({
        path,
        epoch,
        sequence: lastRead + 1,
        field: "LastSequence",
        expected: `the head's last sequence ${head.lastSequence}`,
        found: past.rows.length > 0 ? found : `records up to ${found}`,
      });
    }
    const records = head.lastSequence - generation.firstSequence + 1;
    if (records < generation.baseRecordCount) {
      return yield* new MissingBase({
        path,
        epoch,
        baseRecordCount: generation.baseRecordCount,
        records,
      });
    }
  });

/** The generations that are not current, as open reports them. */
const orphans = (where: Where, session: Session, storeId: string, epoch: number) =>
  Effect.map(run(session, where.sql.otherGenerations, [storeId, epoch]), ({ rows }) =>
    rows.flatMap((row): Array<OrphanedGeneration> => {
      const found = Rows.integer(Rows.field(row, "epoch"), 1);
      if (Rows.isRefused(found)) return [];
      return [{ epoch: found, kind: found > epoch ? "Staged" : "Superseded" }];
    }),
  );

/** The snapshot's reads and checks, inside its transaction. */
const recoverIn = <S, E, X>(
  where: Where,
  session: Session,
  projection: Projection.Projection<S, E>,
  afterPage: AfterPage<X>,
) =>
  Effect.gen(function* () {
    const { path, sql } = where;
    const store = yield* marker(where, session);
    const headRows = yield* run(session, sql.current, [store.idText]);
    const head = Tables.head(path, headRows.rows);
    if (!("lastSequence" in head)) return yield* Effect.fail(head);
    const generationRows = yield* run(session, sql.generation, [store.idText, head.epoch]);
    const generation = Tables.generation(path, head.epoch, generationRows.rows);
    if (!("firstSequence" in generation)) return yield* Effect.fail(generation);
    const orphanedGenerations = yield* orphans(where, session, store.idText, head.epoch);
    const folding: Folding<S> = {
      state: projection.start({ storeId: store.id, ...generation }),
      next: generation.firstSequence,
      bytes: 0,
    };
    yield* foldRecords(
      where,
      session,
      store.idText,
      generation,
      head,
      folding,
      projection,
      afterPage,
    );
    yield* checkEnd(where, session, store.idText, generation, head, folding.next - 1);
    return { store, head, generation, folding, orphanedGenerations };
  });

/** The session's synchronous_commit, or "unknown" where the database has no such setting. */
const synchronousCommitOf = (session: Session) =>
  Effect.match(run(session, diagnostics.synchronousCommit), {
    onFailure: () => "unknown",
    onSuccess: ({ rows }) => {
      const value = Rows.text(Rows.field(rows[0], "synchronous_commit"));
      return Rows.isRefused(value) ? "unknown" : value;
    },
  });

/**
 * Recovers the store on `session`: the schema version, then the snapshot.
 * Driver failures become `DatabaseError { operation: "open" }`.
 */
export const recover = <S, E, X = never>(
  where: Where,
  session: Session,
  projection: Projection.Projection<S, E>,
  afterPage?: AfterPage<X>,
): Effect.Effect<Recovery<S>, PgOpenError | HistoryRejected<E> | X> =>
  Effect.gen(function* () {
    const { path, sql } = where;
    const started = yield* Clock.currentTimeMillis;
    const found = yield* PgSchema.version(session, where.options.schema, path);
    if (found !== PgSchema.expectedVersion) {
      return yield* new SchemaVersionMismatch({
        path,
        found,
        expected: PgSchema.expectedVersion,
      });
    }
    yield* run(session, sql.begin);
    const snapshot = yield* Effect.zipRight(
      run(session, sql.snapshot),
      recoverIn(where, session, projection, afterPage),
    ).pipe(
      Effect.tapError((error) =>
        isDriverFailure(error) && error.connection
          ? Effect.void
          : Effect.ignore(run(session, sql.rollback)),
      ),
    );
    yield* run(session, sql.commit);
    const { store, head, generation, folding, orphanedGenerations } = snapshot;
    return {
      state: folding.state,
      storeId: store.id,
      storeIdText: store.idText,
      createdAt: store.createdAt,
      generation,
      lastSequence: head.lastSequence,
      records: head.lastSequence - generation.firstSequence + 1,
      bytes: folding.bytes,
      orphanedGenerations,
      compaction: store.compaction,
      openedAt: started,
      synchronousCommit: yield* synchronousCommitOf(session),
      openMs: (yield* Clock.currentTimeMillis) - started,
    };
  }).pipe(
    Effect.catchIf(isDriverFailure, (failure) =>
      Effect.fail(databaseError(where.path, "open")(failure)),
    ),
  );
