/**
 * Open's recovery: one REPEATABLE READ snapshot of the schema's version,
 * the store's marker, its head row and its generations (one statement,
 * `opening`), then every record of the current generation in sequence
 * order (keyset pages of `pageRecords`), each row checked and its event
 * decoded and folded into the projection as the file store's recovery
 * does, stopping at the first fault with the file store's error kinds
 * (naming epoch and sequence instead of file and offset). Then: no row
 * past the head, the head at the last row, at least the base record count.
 * Nothing is written.
 */
import { decodeEvent, formatStoreId } from "@tay/codec";
import type { Projection } from "@tay/shell-node";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
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

/** The store's marker row, checked, and the compaction holding its lease. */
interface Marker {
  readonly id: Uint8Array;
  readonly idText: string;
  readonly createdAt: number;
  readonly compaction: Lease.Held | undefined;
}

/** The marker's columns of open's first row (`StoreNotFound` when no marker matched). */
const markerIn = (where: Where, row: unknown): Marker | StoreNotFound | MalformedRow => {
  const { path, options } = where;
  const refused = (column: string, value: Rows.Refused) =>
    new MalformedRow({
      path,
      table: "tay_store",
      column,
      found: value.found,
      epoch: undefined,
      sequence: undefined,
    });
  const rawId = Rows.field(row, "store_id");
  // NOT NULL in its table: NULL only when the LEFT JOIN found no marker.
  if (rawId === null || rawId === undefined) {
    return new StoreNotFound({ path, store: options.store });
  }
  const id = Rows.storeId(rawId);
  if (Rows.isRefused(id)) return refused("store_id", id);
  const createdAt = Rows.integer(Rows.field(row, "created_at"));
  if (Rows.isRefused(createdAt)) return refused("created_at", createdAt);
  return { id, idText: formatStoreId(id), createdAt, compaction: Lease.heldIn(row) };
};

/** The generations that are not current, as open reports them (one per row of the first read). */
const othersIn = (rows: ReadonlyArray<unknown>, epoch: number): Array<OrphanedGeneration> =>
  rows.flatMap((row): Array<OrphanedGeneration> => {
    const found = Rows.integer(Rows.field(row, "other_epoch"), 1);
    if (Rows.isRefused(found)) return [];
    return [{ epoch: found, kind: found > epoch ? "Staged" : "Superseded" }];
  });

/**
 * The statement of open's first read failed (not the connection): on a
 * schema at another version its tables may not be this version's, so open
 * reads the version alone before it blames the database.
 */
class OpeningRefused {
  readonly _tag = "OpeningRefused";
  constructor(readonly failure: Failure) {}
}

const isOpeningRefused = (error: unknown): error is OpeningRefused =>
  error instanceof OpeningRefused;

const headColumns = ["epoch", "last_sequence"];
const generationColumns = [
  "epoch",
  "parent_epoch",
  "first_sequence",
  "base_record_count",
  "created_at",
];

/**
 * Open's first read, checked in the order it stands on: the schema's
 * version (`SchemaVersionMismatch`), the marker (`StoreNotFound`), the
 * head (`MissingRow tay_current`), the current generation (`MissingRow
 * tay_generation`), each field decoded (`MalformedRow`); then the others.
 */
const opening = (where: Where, session: Session) =>
  Effect.gen(function* () {
    const { path, sql, options } = where;
    const found = yield* Effect.mapError(run(session, sql.opening, [options.store]), (failure) =>
      failure.connection ? failure : new OpeningRefused(failure),
    );
    const row = found.rows[0];
    const version = PgSchema.versionIn(path, row);
    if (version instanceof MalformedRow) return yield* version;
    if (version !== PgSchema.expectedVersion) {
      return yield* new SchemaVersionMismatch({
        path,
        found: version,
        expected: PgSchema.expectedVersion,
      });
    }
    const store = markerIn(where, row);
    if (!("idText" in store)) return yield* Effect.fail(store);
    const head = Tables.head(path, Rows.joined(row, "current_", "store_id", headColumns));
    if (!("lastSequence" in head)) return yield* Effect.fail(head);
    const generation = Tables.generation(
      path,
      head.epoch,
      Rows.joined(row, "generation_", "store_id", generationColumns),
    );
    if (!("firstSequence" in generation)) return yield* Effect.fail(generation);
    return { store, head, generation, orphanedGenerations: othersIn(found.rows, head.epoch) };
  });

/**
 * After a refused first read (and its rollback): `SchemaVersionMismatch`
 * when the schema is at another version, else the database's refusal.
 */
const refusedOpening = (where: Where, session: Session, refused: OpeningRefused) =>
  Effect.gen(function* () {
    const { path, options } = where;
    const found = yield* PgSchema.version(session, options.schema, path);
    if (found !== PgSchema.expectedVersion) {
      return yield* new SchemaVersionMismatch({ path, found, expected: PgSchema.expectedVersion });
    }
    return yield* Effect.fail(refused.failure);
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

/** The snapshot's reads and checks, inside its transaction. */
const recoverIn = <S, E, X>(
  where: Where,
  session: Session,
  projection: Projection.Projection<S, E>,
  afterPage: AfterPage<X>,
) =>
  Effect.gen(function* () {
    const { store, head, generation, orphanedGenerations } = yield* opening(where, session);
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
 * Recovers the store on `session` in one snapshot, whose first read checks
 * the schema version with the marker, the head and the generations (a
 * schema at another version is `SchemaVersionMismatch`, even where its
 * tables refuse that read). Driver failures become
 * `DatabaseError { operation: "open" }`.
 */
export const recover = <S, E, X = never>(
  where: Where,
  session: Session,
  projection: Projection.Projection<S, E>,
  afterPage?: AfterPage<X>,
): Effect.Effect<Recovery<S>, PgOpenError | HistoryRejected<E> | X> =>
  Effect.gen(function* () {
    const { sql } = where;
    const started = yield* Clock.currentTimeMillis;
    yield* run(session, sql.beginSnapshot);
    const snapshot = yield* recoverIn(where, session, projection, afterPage).pipe(
      Effect.tapError((error) =>
        isDriverFailure(error) && error.connection
          ? Effect.void
          : Effect.ignore(run(session, sql.rollback)),
      ),
      Effect.catchIf(isOpeningRefused, (refused) => refusedOpening(where, session, refused)),
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
