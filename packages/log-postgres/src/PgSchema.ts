/**
 * The tables and their versions: `migrate` brings a schema to this
 * version's migrations (each one transaction, recorded in `tay_schema`),
 * `init` migrates and then creates a store in one transaction (its
 * marker, its first generation and its CURRENT row together, so there is
 * no half-initialized store to refuse later), and `version` reads where a
 * schema stands. Open reads the version in the first statement of its
 * snapshot (`versionIn` decodes it there), and alone only when that
 * statement fails, as it does on a schema whose tables are older.
 */
import { randomUUID } from "node:crypto";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import type { Batch } from "@tay/shell-node";
import type { Failure, Parameter, Session } from "./Driver.js";
import { layout } from "./internal/writer.js";
import { redact, storePath } from "./internal/location.js";
import * as Rows from "./internal/rows.js";
import { close, connect, databaseError, run } from "./internal/session.js";
import { migrations, schemaVersion, statements } from "./internal/sql.js";
import {
  type DatabaseError,
  InvalidOption,
  InvalidUrl,
  MalformedRow,
  SchemaVersionMismatch,
  StoreExists,
} from "./PgError.js";
import { type LocationOptions, resolve } from "./PgOptions.js";

/** The schema version this package writes and reads. */
export const expectedVersion = schemaVersion;

/** The SQLSTATEs of a schema or table that does not exist: a schema at version 0. */
const missingStates: ReadonlySet<string> = new Set(["42P01", "3F000"]);

/**
 * The schema's version: the highest migration recorded, 0 when the schema
 * or its version table does not exist.
 */
export const version = (
  session: Session,
  schema: string,
  path: string,
): Effect.Effect<number, Failure | MalformedRow> =>
  Effect.gen(function* () {
    const result = yield* Effect.either(run(session, statements(schema).schemaVersion));
    if (result._tag === "Left") {
      const { code } = result.left;
      if (code !== undefined && missingStates.has(code)) return 0;
      return yield* Effect.fail(result.left);
    }
    const found = versionIn(path, result.right.rows[0]);
    return found instanceof MalformedRow ? yield* found : found;
  });

/**
 * The schema's version as a row's `version` column holds it (`max(version)`
 * of `tay_schema`: NULL, that is 0, when no migration is recorded), or
 * `MalformedRow` naming what was found.
 */
export const versionIn = (path: string, row: unknown): number | MalformedRow => {
  const found = Rows.optionalInteger(Rows.field(row, "version"));
  if (!Rows.isRefused(found)) return found ?? 0;
  return new MalformedRow({
    path,
    table: "tay_schema",
    column: "version",
    found: found.found,
    epoch: undefined,
    sequence: undefined,
  });
};

/** Applies migration `index + 1` in one transaction, with the row that records it. */
const applyMigration = (session: Session, schema: string, index: number, now: number) =>
  Effect.gen(function* () {
    const sql = statements(schema);
    const steps = migrations(schema)[index] ?? [];
    yield* run(session, sql.begin);
    for (const step of steps) yield* run(session, step);
    yield* run(session, sql.markVersion, [index + 1, now]);
    yield* run(session, sql.commit);
  }).pipe(
    Effect.tapError((failure) =>
      failure.connection ? Effect.void : Effect.ignore(run(session, statements(schema).rollback)),
    ),
  );

/** The options' location, checked: the store's path, schema and name. */
const located = (url: string, options: LocationOptions) =>
  Effect.gen(function* () {
    const redacted = redact(url);
    if (redacted instanceof InvalidUrl) return yield* redacted;
    const resolved = resolve(redacted, options);
    if (resolved instanceof InvalidOption) return yield* resolved;
    return { ...resolved, path: storePath(redacted, resolved.schema, resolved.store) };
  });

/** Brings the schema on `session` to `expectedVersion`; a racing migrator's work counts as done. */
const migrateOn = (session: Session, schema: string, path: string) =>
  Effect.gen(function* () {
    const from = yield* version(session, schema, path);
    if (from > expectedVersion) {
      return yield* new SchemaVersionMismatch({ path, found: from, expected: expectedVersion });
    }
    for (let index = from; index < expectedVersion; index++) {
      const now = yield* Clock.currentTimeMillis;
      const applied = yield* Effect.either(applyMigration(session, schema, index, now));
      if (applied._tag === "Right") continue;
      // Another init may have applied it meanwhile (its CREATE TABLE won the race).
      if ((yield* version(session, schema, path)) <= index) return yield* Effect.fail(applied.left);
    }
    return { from, to: expectedVersion };
  });

/** Runs `body` on a new session for `operation`, closed afterwards; driver failures become `DatabaseError`. */
const withSession = <A, E>(
  location: { readonly driver: LocationOptions["driver"] & {}; readonly path: string },
  url: string,
  operation: string,
  body: (session: Session) => Effect.Effect<A, E | Failure>,
): Effect.Effect<A, Exclude<E, Failure> | DatabaseError> =>
  Effect.acquireUseRelease(connect(location.driver(url)), body, close).pipe(
    Effect.catchIf(isDriverFailure, (failure) =>
      Effect.fail(databaseError(location.path, operation)(failure)),
    ),
  );

const isDriverFailure = (error: unknown): error is Failure =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "DriverFailure";

/**
 * Brings the schema named in `options` (default "tay") to this version's
 * migrations, creating it if missing. Returns the versions before and
 * after. Fails with `SchemaVersionMismatch` when the schema is newer than
 * this version, `DatabaseError` when a statement or the connection failed
 * (the migration that failed left nothing: each is one transaction).
 */
export const migrate = (
  url: string,
  options: LocationOptions = {},
): Effect.Effect<
  { readonly from: number; readonly to: number },
  InvalidUrl | InvalidOption | SchemaVersionMismatch | MalformedRow | DatabaseError
> =>
  Effect.gen(function* () {
    const location = yield* located(url, options);
    return yield* withSession(location, url, "migrate", (session) =>
      migrateOn(session, location.schema, location.path),
    );
  });

/** Record rows per INSERT while `init` writes a copied generation. */
const copyRowsMax = 1024;

/**
 * Migrates, then creates the store named in `options` (default "default"):
 * its marker (a new STORE_ID, created now), generation 1 (parent 0, first
 * sequence 1, no base) and its CURRENT row (epoch 1, last sequence 0), in
 * one transaction. Returns the store's path and printed STORE_ID. Fails
 * with `StoreExists` when the name is taken (nothing changed), or as
 * `migrate` does.
 *
 * `generation` makes generation 1 start where another store's current
 * generation starts (its first sequence and base record count) and holds
 * its `records` (sequences assigned, from the first sequence on), written
 * in the same transaction: how `tay copy` moves a store with every record
 * under its own sequence. The head is then at the last record.
 */
export const init = (
  url: string,
  options: LocationOptions = {},
  generation: {
    readonly firstSequence: number;
    readonly baseRecordCount: number;
    readonly records: ReadonlyArray<Batch.PendingRecord>;
  } = { firstSequence: 1, baseRecordCount: 0, records: [] },
): Effect.Effect<
  { readonly path: string; readonly storeId: string },
  InvalidUrl | InvalidOption | SchemaVersionMismatch | MalformedRow | StoreExists | DatabaseError
> =>
  Effect.gen(function* () {
    const location = yield* located(url, options);
    const { path, schema, store } = location;
    return yield* withSession(location, url, "init", (session) =>
      Effect.gen(function* () {
        yield* migrateOn(session, schema, path);
        const sql = statements(schema);
        const storeId = randomUUID();
        const now = yield* Clock.currentTimeMillis;
        const existing = yield* run(session, sql.storeByName, [store]);
        if (existing.rows.length > 0) return yield* new StoreExists({ path, store });
        const created = yield* Effect.either(
          Effect.gen(function* () {
            yield* run(session, sql.begin);
            yield* run(session, sql.insertStore, [store, storeId, now]);
            const { firstSequence, baseRecordCount, records } = generation;
            yield* run(session, sql.insertGeneration, [
              storeId,
              1,
              0,
              firstSequence,
              baseRecordCount,
              now,
            ]);
            const laid = layout(firstSequence - 1, records);
            yield* run(session, sql.insertCurrent, [storeId, 1, laid.last]);
            for (let start = 0; start < laid.rows.length; start += copyRowsMax) {
              const count = Math.min(copyRowsMax, laid.rows.length - start);
              const parameters: Array<Parameter> = [storeId, 1];
              for (let index = start; index < start + count; index++) {
                parameters.push(laid.sequences[index] ?? 0, laid.rows[index] ?? null);
              }
              yield* run(session, sql.insertRecords(count), parameters);
            }
            yield* run(session, sql.commit);
          }),
        );
        if (created._tag === "Left") {
          if (!created.left.connection) yield* Effect.ignore(run(session, sql.rollback));
          // A racing init of the same name took it first.
          if (created.left.code === "23505") return yield* new StoreExists({ path, store });
          return yield* Effect.fail(created.left);
        }
        return { path, storeId };
      }),
    );
  });
