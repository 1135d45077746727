/**
 * Enqueue inside your own transaction: jobs written atomically with the
 * application's rows, without its transaction touching the log's head row.
 * `enqueueInTransaction(client, jobs)` runs on the application's own `pg`
 * client, inside the transaction it has open: it decides the jobs with the
 * engine's insert decider (bad args are refused before anything is
 * written), writes one row to the store's inbox and, when no other row of
 * the store is waiting, notifies the inbox channel, in one statement (a row
 * behind another is found by the engine that folds that one). Both take
 * effect when the application commits, and neither if it rolls back. A running engine then folds the row into the log: the
 * jobs get their ids and enter the log, and the row is deleted, in one
 * transaction (docs/postgres.md, "Enqueue inside your transaction").
 *
 * @example
 *   // inside the application's transaction, beside its own INSERT of the order:
 *   await Inbox.enqueueInTransaction(client, { queue: "mail", worker: "Receipt", args: { order: id } });
 *   // once it commits, the job exists, exactly once; if it rolls back, never
 */
import type { Commands } from "@tay/core";
import { Described } from "@tay/shell-node";
import * as Data from "effect/Data";
import { encodeJobs, nextKey } from "./internal/inboxRow.js";
import { inboxChannel, inboxSince, notifications, statements } from "./internal/sql.js";
import { DatabaseError, InvalidOption, StoreNotFound } from "./PgError.js";
import { resolve } from "./PgOptions.js";

/** What `enqueueInTransaction` needs of a client: `pg.Client` and `pg.PoolClient` have it. */
export interface Queryable {
  readonly query: (text: string, values: Array<unknown>) => Promise<unknown>;
}

/** Where to enqueue, and how. */
export interface EnqueueOptions {
  /** The schema of Tay's tables. Default "tay". */
  readonly schema?: string;
  /** The store. Default "default". */
  readonly store?: string;
  /** The enqueue time, ms since the epoch (the jobs' insertion time and default run time). Default now. */
  readonly now?: number;
  /**
   * Notify the inbox channel in the same transaction (delivered at
   * commit) when no other row of the store is waiting: engines fold at
   * once instead of at their next poll. Default true; PostgreSQL only (turn
   * it off where `pg_notify` is refused).
   */
  readonly notify?: boolean;
}

/** What an enqueue wrote: its row's key and how many jobs it holds. */
export interface Enqueued {
  readonly key: string;
  readonly jobs: number;
}

/** The engine's insert decider refused a job: nothing was written. */
export class InboxRefused extends Data.TaggedError("InboxRefused")<{
  readonly path: string;
  /** The field path, `jobs[0].args` ... */
  readonly field: string;
  readonly reason: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "InboxRefused",
      this.path,
      `${this.field}: ${this.reason}; nothing was enqueued`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The schema has no inbox (missing, or older than version 2): nothing was written. */
export class InboxMissing extends Data.TaggedError("InboxMissing")<{
  readonly path: string;
  readonly code: string;
}> {
  get description(): Described.Description {
    return Described.advise(
      Described.describe(
        "InboxMissing",
        this.path,
        `no inbox table (${this.code}): the schema is missing or older than version ${inboxSince}; nothing was enqueued`,
      ),
      "PgSchema.migrate (or tay init URL) brings the schema up to date",
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Everything `enqueueInTransaction` rejects with. */
export type InboxError =
  | InvalidOption
  | InboxRefused
  | InboxMissing
  | StoreNotFound
  | DatabaseError;

/** The SQLSTATE of what a client threw, if it has one. */
const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined;

/** A failed statement of the application's client as the helper's error. */
const failed = (path: string, store: string, error: unknown): InboxError => {
  const code = codeOf(error);
  if (code === "42P01" || code === "3F000") return new InboxMissing({ path, code });
  if (code === "23503") return new StoreNotFound({ path, store });
  const detail = error instanceof Error ? error.message : String(error);
  return new DatabaseError({ path, operation: "enqueue", code, detail });
};

/** The options' schema and store, checked as `PgLog.open` checks them. */
const located = (options: EnqueueOptions) => {
  const resolved = resolve("", options);
  if (resolved instanceof InvalidOption) return resolved;
  const { schema, store } = resolved;
  return { schema, store, path: `#${schema}.${store}` };
};

/**
 * Enqueues `jobs` (one job or several, inserted together as one mutation)
 * in the transaction open on `client`: decides them as the engine would
 * (rejecting with `InboxRefused`, naming the field, before anything is
 * written), inserts one inbox row, and notifies the inbox channel when no
 * other row is waiting. The jobs exist once the transaction commits and
 * never if it rolls back; a running engine folds them into the log, in
 * order, exactly once.
 *
 * Rejects with `InvalidOption` (schema or store name), `InboxRefused`,
 * `InboxMissing` (a schema older than version 2: migrate it),
 * `StoreNotFound` or `DatabaseError`. A statement the server refused has
 * aborted the application's transaction, as any failed statement does: roll
 * it back.
 */
export const enqueueInTransaction = async (
  client: Queryable,
  jobs: Commands.NewJob | ReadonlyArray<Commands.NewJob>,
  options: EnqueueOptions = {},
): Promise<Enqueued> => {
  const where = located(options);
  if (where instanceof InvalidOption) throw where;
  const { schema, store, path } = where;
  const now = options.now ?? Date.now();
  const list: ReadonlyArray<Commands.NewJob> = isJobList(jobs) ? jobs : [jobs];
  const encoded = encodeJobs(now, list);
  if (!("payload" in encoded)) throw new InboxRefused({ path, ...encoded });
  const key = nextKey(now);
  const { type, schema: pairSchema, payload } = encoded;
  try {
    const row = [store, key, now, type, pairSchema, payload];
    // With its notification: one statement, one round trip of the application's transaction.
    if (options.notify === false) await client.query(statements(schema).inboxInsert, row);
    else {
      await client.query(notifications.inboxInsertNotify(schema), [
        ...row,
        inboxChannel,
        `${schema}.${store}`,
      ]);
    }
  } catch (error) {
    throw failed(path, store, error);
  }
  return { key, jobs: encoded.jobs };
};

const isJobList = (
  jobs: Commands.NewJob | ReadonlyArray<Commands.NewJob>,
): jobs is ReadonlyArray<Commands.NewJob> => Array.isArray(jobs);
