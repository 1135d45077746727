/**
 * Every SQL statement the package sends, and nothing else sends any: the
 * migrations, the reads of open, the guarded append, compaction's staging,
 * switch and removal. Keeping them here lets one checker
 * (`internal/portable.ts`, run by `test/Portable.test.ts`) hold all of them
 * to the portable subset: plain SELECT, INSERT, UPDATE, DELETE and
 * transaction control, no sequences, advisory locks, SKIP LOCKED,
 * LISTEN/NOTIFY, RETURNING or ON CONFLICT, so the same statements run on
 * PostgreSQL and on the PostgreSQL-compatible distributed databases.
 *
 * Statements take the schema (a checked identifier, see `schemaName`) and
 * use numbered parameters for every value, except the append's one-trip
 * script (`appendScript`), whose values are literals (`literal.ts`): the
 * simple query protocol that carries several statements takes no
 * parameters. The checker holds each of its statements to the subset too.
 */

import type { Bound, Parameter } from "../Driver.js";
import * as Literal from "./literal.js";

/** A schema name the statements may quote: lowercase letters, digits, `_`, at most 63 bytes. */
export const schemaName = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema version these statements are written for. */
export const schemaVersion = 3;

/** The schema version that made the inbox table (what an enqueue needs at least). */
export const inboxSince = 2;

/** Parameters per row of `insertRecords` beyond the two shared ones. */
const rowParameters = 2;

/** The statements of one schema. */
export const statements = (schema: string) => {
  const table = (name: string) => `"${schema}".${name}`;
  const store = table("tay_store");
  const generation = table("tay_generation");
  const current = table("tay_current");
  const record = table("tay_record");
  const version = table("tay_schema");
  const inbox = table("tay_inbox");
  const lease = table("tay_compaction");
  return {
    begin: "BEGIN",
    commit: "COMMIT",
    rollback: "ROLLBACK",
    /**
     * Open's single snapshot of the head, the generation and its records,
     * begun by one statement (2026-12-05: `BEGIN` then `SET TRANSACTION`
     * were two round trips). The form PostgreSQL, CockroachDB and
     * YugabyteDB each document.
     */
    beginSnapshot: "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    schemaVersion: `SELECT max(version) AS version FROM ${version}`,
    markVersion: `INSERT INTO ${version} (version, applied_at) VALUES ($1, $2)`,
    storeByName: `SELECT store_id, created_at FROM ${store} WHERE name = $1`,
    /**
     * Open's first read, in its snapshot (docs/postgres.md, "Open"): the
     * schema's version, the store's marker with its compaction lease, its
     * CURRENT, the current generation's row and the other generations'
     * epochs, one round trip instead of five. One row per other generation
     * (one row when there is none): the version's aggregate always makes a
     * row, and every join is LEFT, so a missing marker, head or generation
     * leaves its columns NULL (its key, NOT NULL in its table, says which)
     * and open names what is missing. A schema at another version may lack
     * these tables: the statement then fails and open reads the version alone.
     */
    opening: `SELECT v.version, s.store_id, s.created_at, l.holder, l.label, l.expires_at, c.store_id AS current_store_id, c.epoch AS current_epoch, c.last_sequence AS current_last_sequence, g.store_id AS generation_store_id, g.epoch AS generation_epoch, g.parent_epoch AS generation_parent_epoch, g.first_sequence AS generation_first_sequence, g.base_record_count AS generation_base_record_count, g.created_at AS generation_created_at, o.epoch AS other_epoch FROM (SELECT max(version) AS version FROM ${version}) v LEFT JOIN ${store} s ON s.name = $1 LEFT JOIN ${lease} l ON l.store_id = s.store_id LEFT JOIN ${current} c ON c.store_id = s.store_id LEFT JOIN ${generation} g ON g.store_id = c.store_id AND g.epoch = c.epoch LEFT JOIN ${generation} o ON o.store_id = c.store_id AND o.epoch <> c.epoch ORDER BY o.epoch`,
    insertStore: `INSERT INTO ${store} (name, store_id, created_at) VALUES ($1, $2, $3)`,
    current: `SELECT epoch, last_sequence FROM ${current} WHERE store_id = $1`,
    /**
     * The head, read and locked for the rest of the transaction (the
     * writer's turn, docs/postgres.md "A turn after a conflict"): another
     * writer's guard waits until this transaction ends. The only row lock
     * the log takes, and not a rule of the log: the guards decide what
     * commits whether or not it is held.
     */
    lockHead: `SELECT epoch, last_sequence FROM ${current} WHERE store_id = $1 FOR UPDATE`,
    /** The head, and the bytes of its generation's records from `$2` on (`refresh`: one snapshot). */
    currentWithBytes: `SELECT c.epoch, c.last_sequence, (SELECT coalesce(sum(octet_length(r.record)), 0) FROM ${record} r WHERE r.store_id = c.store_id AND r.epoch = c.epoch AND r.sequence >= $2) AS bytes FROM ${current} c WHERE c.store_id = $1`,
    insertCurrent: `INSERT INTO ${current} (store_id, epoch, last_sequence) VALUES ($1, $2, $3)`,
    generation: `SELECT epoch, parent_epoch, first_sequence, base_record_count, created_at FROM ${generation} WHERE store_id = $1 AND epoch = $2`,
    otherGenerations: `SELECT epoch FROM ${generation} WHERE store_id = $1 AND epoch <> $2 ORDER BY epoch`,
    insertGeneration: `INSERT INTO ${generation} (store_id, epoch, parent_epoch, first_sequence, base_record_count, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
    deleteGeneration: `DELETE FROM ${generation} WHERE store_id = $1 AND epoch = $2`,
    /** A page of records in sequence order, from a sequence on (keyset paging). */
    recordsFrom: `SELECT sequence, record FROM ${record} WHERE store_id = $1 AND epoch = $2 AND sequence >= $3 AND sequence <= $4 ORDER BY sequence LIMIT $5`,
    recordsBetween: `SELECT sequence, record FROM ${record} WHERE store_id = $1 AND epoch = $2 AND sequence >= $3 AND sequence <= $4 ORDER BY sequence`,
    /**
     * The records from `$3` to `$4` whose bytes hold `$5` or `$6`, at most
     * `$7`, found by the server (`readMentioning`: one job's history), each
     * row with the store's current epoch; one row of NULLs but that epoch
     * when none is found. In one statement, so in one snapshot: an epoch
     * other than `$2` says a compaction removed (or will remove) the rows,
     * which an empty answer alone would hide. `position` on bytes is in
     * PostgreSQL, CockroachDB and YugabyteDB.
     */
    recordsMentioning: `SELECT c.epoch AS current_epoch, r.sequence, r.record FROM ${current} c LEFT JOIN ${record} r ON r.store_id = c.store_id AND r.epoch = $2 AND r.sequence >= $3 AND r.sequence <= $4 AND (position(CAST($5 AS BYTEA) IN r.record) > 0 OR position(CAST($6 AS BYTEA) IN r.record) > 0) WHERE c.store_id = $1 ORDER BY r.sequence LIMIT $7`,
    /** Rows of the generation past its head: there must be none. */
    recordsPast: `SELECT sequence FROM ${record} WHERE store_id = $1 AND epoch = $2 AND sequence > $3 ORDER BY sequence LIMIT 1`,
    lastRecordOf: `SELECT max(sequence) AS sequence FROM ${record} WHERE store_id = $1 AND epoch = $2`,
    /** The bytes of a run of records (`stats().bytes` of other writers' records). */
    bytesBetween: `SELECT coalesce(sum(octet_length(record)), 0) AS bytes FROM ${record} WHERE store_id = $1 AND epoch = $2 AND sequence >= $3 AND sequence <= $4`,
    /**
     * The append's guard: moves the head from the expected last sequence to
     * the batch's last, in the transaction that inserts the batch. No row
     * changed means the head moved (another writer) or the epoch did (a
     * compaction): a conflict, and the transaction is rolled back.
     */
    advanceHead: `UPDATE ${current} SET last_sequence = $3 WHERE store_id = $1 AND epoch = $2 AND last_sequence = $4`,
    /** Compaction's compare-and-set of CURRENT: epoch and head move together. */
    switchGeneration: `UPDATE ${current} SET epoch = $3, last_sequence = $4 WHERE store_id = $1 AND epoch = $2 AND last_sequence = $5`,
    /** The staged generation's base record count, known once its base has been streamed (set in the switch's transaction). */
    countGeneration: `UPDATE ${generation} SET base_record_count = $3 WHERE store_id = $1 AND epoch = $2`,
    deleteRecords: `DELETE FROM ${record} WHERE store_id = $1 AND epoch = $2 AND sequence >= $3 AND sequence <= $4`,
    /**
     * The compaction lease (docs/postgres.md, "Two compactions at once"):
     * one row per store, made by the first compaction. Taken only when free
     * or run out (`$5` the taker's clock); every compaction transaction
     * renews it first and goes on only if its row changed, so a compactor
     * whose lease was taken writes nothing more.
     */
    leaseTake: `UPDATE ${lease} SET holder = $2, label = $3, expires_at = $4 WHERE store_id = $1 AND (holder IS NULL OR expires_at < $5)`,
    leaseInsert: `INSERT INTO ${lease} (store_id, holder, label, expires_at) VALUES ($1, $2, $3, $4)`,
    leaseRead: `SELECT holder, label, expires_at FROM ${lease} WHERE store_id = $1`,
    leaseRenew: `UPDATE ${lease} SET expires_at = $3 WHERE store_id = $1 AND holder = $2`,
    leaseRelease: `UPDATE ${lease} SET holder = NULL, label = NULL, expires_at = 0 WHERE store_id = $1 AND holder = $2`,
    /**
     * The inbox (docs/postgres.md, "Enqueue inside your transaction"): one
     * row per enqueue call, written by the application's own transaction.
     */
    inboxInsert: `INSERT INTO ${inbox} (store, id, enqueued_at, event_type, event_schema, payload) VALUES ($1, $2, $3, $4, $5, $6)`,
    /** The oldest rows still waiting (not refused), in key order: what the next fold takes. */
    inboxPage: `SELECT id, enqueued_at, event_type, event_schema, payload FROM ${inbox} WHERE store = $1 AND refusal IS NULL ORDER BY id LIMIT $2`,
    /** Marks a row the deciders refused at fold time: kept, with why, and never offered again. */
    inboxRefuse: `UPDATE ${inbox} SET refusal = $3 WHERE store = $1 AND id = $2 AND refusal IS NULL`,
    /** Rows waiting and refused: the inbox's backlog. */
    inboxCounts: `SELECT count(refusal) AS refused, count(id) AS rows FROM ${inbox} WHERE store = $1`,
    /**
     * Takes `rows` folded rows out of the inbox, in the transaction that
     * appends their records: fewer rows deleted than named means another
     * engine folded some first, and the transaction is rolled back.
     */
    inboxConsume: (rows: number): string => {
      const keys: Array<string> = [];
      for (let row = 0; row < rows; row++) keys.push(`$${row + 2}`);
      return `DELETE FROM ${inbox} WHERE store = $1 AND id IN (${keys.join(", ")})`;
    },
    /** A multi-row INSERT of `rows` records: `$1` store, `$2` epoch, then sequence and bytes per row. */
    insertRecords: (rows: number): string => {
      const values: Array<string> = [];
      for (let row = 0; row < rows; row++) {
        const first = 3 + row * rowParameters;
        values.push(`($1, $2, $${first}, $${first + 1})`);
      }
      return `INSERT INTO ${record} (store_id, epoch, sequence, record) VALUES ${values.join(", ")}`;
    },
  };
};

/** The statements of a schema. */
export type Statements = ReturnType<typeof statements>;

/** What one append writes: the head's move, its records by chunk, the inbox rows it folds. */
export interface Append {
  /** The STORE_ID as its UUID text. */
  readonly storeId: string;
  readonly epoch: number;
  /** The head the guard expects, and where it moves it. */
  readonly expected: number;
  readonly last: number;
  /** The records, one INSERT per chunk, in sequence order from `expected + 1`. */
  readonly chunks: ReadonlyArray<
    ReadonlyArray<{ readonly sequence: number; readonly bytes: Uint8Array }>
  >;
  /** The inbox rows the records fold (`Batch.consumed`): the store's name and the rows' keys. */
  readonly consumed?: { readonly store: string; readonly keys: ReadonlyArray<string> } | undefined;
  /** A notification sent at commit (PostgreSQL only: see `notifications`). */
  readonly notify?: { readonly channel: string; readonly payload: string } | undefined;
}

/**
 * The value the guard writes into the head row for the rest of its own
 * transaction: 2^62 + the batch's last sequence. No committed head ever
 * holds it (sequences stay below 2^53, and the script's last statement
 * replaces it before the commit), and no other session sees it
 * (uncommitted), so "the head holds the marker" is true in this
 * transaction exactly when its own guard moved the head.
 */
export const marker = (last: number): string =>
  (markerBase + BigInt(Literal.integer(last))).toString();

/** 2^62, computed once rather than on every append. */
const markerBase = 2n ** 62n;

/**
 * The append as one text of statements for the simple query protocol:
 * one implicit transaction, one round trip, one commit (docs/postgres.md,
 * "One round trip per append"). Values are literals (`literal.ts`).
 *
 * 1. the guard: the head moves from `expected` to the marker only if it is
 *    at `expected` in this epoch (and, folding inbox rows, only if every
 *    one of them is still there); its row count is the conflict check;
 * 2. the records, each INSERT only if the head holds the marker;
 * 3. the inbox rows deleted, only if the head holds the marker;
 * 4. the head from the marker to `last`;
 * 5. the notification, if asked (delivered at commit).
 *
 * A guard that moved nothing makes every later statement a no-op: the
 * script commits nothing, and the writer reads the head to learn why.
 */
export const appendScript = (schema: string, append: Append): ReadonlyArray<string> => {
  const table = (name: string) => `"${schema}".${name}`;
  const current = table("tay_current");
  const record = table("tay_record");
  const inbox = table("tay_inbox");
  const store = Literal.text(append.storeId);
  const epoch = Literal.integer(append.epoch);
  const held = marker(append.last);
  const head = `store_id = ${store} AND epoch = ${epoch}`;
  const ours = `EXISTS (SELECT 1 FROM ${current} WHERE ${head} AND last_sequence = ${held})`;
  const consumed = append.consumed;
  const keys = consumed?.keys.map(Literal.text).join(", ") ?? "";
  const rows = `store = ${Literal.text(consumed?.store ?? "")} AND id IN (${keys})`;
  const allThere =
    consumed === undefined || consumed.keys.length === 0
      ? ""
      : ` AND (SELECT count(id) FROM ${inbox} WHERE ${rows}) = ${Literal.integer(consumed.keys.length)}`;
  const texts = [
    `UPDATE ${current} SET last_sequence = ${held} WHERE ${head} AND last_sequence = ${Literal.integer(append.expected)}${allThere}`,
  ];
  for (const chunk of append.chunks) {
    const values = chunk
      .map((row) => `(${Literal.integer(row.sequence)}, ${Literal.bytes(row.bytes)})`)
      .join(", ");
    texts.push(
      `INSERT INTO ${record} (store_id, epoch, sequence, record) SELECT CAST(${store} AS UUID), ${epoch}, v.sequence, v.record FROM (VALUES ${values}) AS v (sequence, record) WHERE ${ours}`,
    );
  }
  if (allThere !== "") texts.push(`DELETE FROM ${inbox} WHERE ${rows} AND ${ours}`);
  texts.push(
    `UPDATE ${current} SET last_sequence = ${Literal.integer(append.last)} WHERE ${head} AND last_sequence = ${held}`,
  );
  const notify = append.notify;
  if (notify !== undefined) {
    // Only once the head is at `last` (a guard that moved nothing tells no one).
    texts.push(
      `SELECT pg_notify(${Literal.text(notify.channel)}, ${Literal.text(notify.payload)}) FROM ${current} WHERE ${head} AND last_sequence = ${Literal.integer(append.last)}`,
    );
  }
  return texts;
};

/** `$from, $from+1, ...`: `count` numbered parameters. */
const numbered = (from: number, count: number): string =>
  Array.from({ length: count }, (_, index) => `$${from + index}`).join(", ");

/** INSERT texts kept per schema: the sizes a batch uses (powers of two up to `statementRowsMax`). */
const insertTextsMax = 64;

/**
 * The batch's texts for one schema, built once: an append only binds
 * values, and its texts are the same string objects each time (the
 * session's prepared-statement map then finds them without hashing a new
 * string). INSERT texts by row count, at most `insertTextsMax` of them.
 */
interface BatchTexts {
  readonly schema: string;
  /** `statements(schema).advanceHead`: the guard and the last move of the head. */
  readonly moveHead: string;
  /** "The head holds the marker": $1 store id, $2 epoch, $3 the marker. */
  readonly ours: string;
  readonly notify: string;
  readonly inserts: Map<number, string>;
}

const batchTextsOf = (schema: string): BatchTexts => {
  const current = `"${schema}".tay_current`;
  return {
    schema,
    moveHead: `UPDATE ${current} SET last_sequence = $3 WHERE store_id = $1 AND epoch = $2 AND last_sequence = $4`,
    ours: `EXISTS (SELECT 1 FROM ${current} WHERE store_id = $1 AND epoch = $2 AND last_sequence = $3)`,
    notify: `SELECT pg_notify($4, $5) FROM ${current} WHERE store_id = $1 AND epoch = $2 AND last_sequence = $3`,
    inserts: new Map(),
  };
};

/** The last schema's texts: a process appends to one schema as a rule (another rebuilds them). */
let lastTexts: BatchTexts | undefined;

const textsFor = (schema: string): BatchTexts => {
  if (lastTexts?.schema !== schema) lastTexts = batchTextsOf(schema);
  return lastTexts;
};

/** The INSERT of `rows` records after the head's three parameters (see `appendBatch`). */
const insertText = (texts: BatchTexts, rows: number): string => {
  const known = texts.inserts.get(rows);
  if (known !== undefined) return known;
  const values = Array.from(
    { length: rows },
    (_, index) => `(CAST($${4 + 2 * index} AS BIGINT), CAST($${5 + 2 * index} AS BYTEA))`,
  );
  const text = `INSERT INTO "${texts.schema}".tay_record (store_id, epoch, sequence, record) SELECT CAST($1 AS UUID), CAST($2 AS BIGINT), v.sequence, v.record FROM (VALUES ${values.join(", ")}) AS v (sequence, record) WHERE ${texts.ours}`;
  if (texts.inserts.size < insertTextsMax) texts.inserts.set(rows, text);
  return text;
};

/**
 * The append as one batch of prepared statements with parameters
 * (`Session.batch`: the extended query protocol, one Sync): the same five
 * steps, guards and marker as `appendScript`, each text the same whatever
 * the values, so a session parses and plans it once. The marker, above
 * 2^53, goes as its decimal text (a BIGINT parameter).
 */
export const appendBatch = (schema: string, append: Append): ReadonlyArray<Bound> => {
  const texts = textsFor(schema);
  const { storeId, epoch } = append;
  const held = marker(append.last);
  const keys = append.consumed?.keys ?? [];
  const bound: Array<Bound> = [
    keys.length === 0
      ? { text: texts.moveHead, parameters: [storeId, epoch, held, append.expected] }
      : inboxGuard(schema, texts, append, held, keys),
  ];
  for (const chunk of append.chunks) {
    // $1 store id, $2 epoch, $3 the marker, then sequence and bytes per row.
    const parameters: Array<Parameter> = [storeId, epoch, held];
    for (const row of chunk) parameters.push(row.sequence, row.bytes);
    bound.push({ text: insertText(texts, chunk.length), parameters });
  }
  if (keys.length > 0) {
    bound.push({
      text: `DELETE FROM "${schema}".tay_inbox WHERE store = $4 AND id IN (${numbered(5, keys.length)}) AND ${texts.ours}`,
      parameters: [storeId, epoch, held, append.consumed?.store ?? "", ...keys],
    });
  }
  bound.push({ text: texts.moveHead, parameters: [storeId, epoch, append.last, held] });
  const notify = append.notify;
  if (notify !== undefined) {
    // Only once the head is at `last` (a guard that moved nothing tells no one).
    bound.push({
      text: texts.notify,
      parameters: [storeId, epoch, append.last, notify.channel, notify.payload],
    });
  }
  return bound;
};

/** The guard of an append that folds inbox rows: the head's move, and every row still there. */
const inboxGuard = (
  schema: string,
  texts: BatchTexts,
  append: Append,
  held: string,
  keys: ReadonlyArray<string>,
): Bound => ({
  // Numbered after the head's four: the inbox rows' count must be all of them.
  text: `${texts.moveHead} AND (SELECT count(id) FROM "${schema}".tay_inbox WHERE store = $5 AND id IN (${numbered(6, keys.length)})) = $${6 + keys.length}`,
  parameters: [
    append.storeId,
    append.epoch,
    held,
    append.expected,
    append.consumed?.store ?? "",
    ...keys,
    keys.length,
  ],
});

/** Statements as one text for the simple query protocol (the only place statements are joined). */
export const script = (texts: ReadonlyArray<string>): string => texts.join(";\n");

/**
 * The migrations, in order: migration `n` takes the schema from version
 * `n - 1` to `n`. Each runs in one transaction with the row that records
 * it, so a schema is at a version or not. Never edit one that shipped: add
 * the next.
 */
export const migrations = (schema: string): ReadonlyArray<ReadonlyArray<string>> => {
  const table = (name: string) => `"${schema}".${name}`;
  return [
    [
      `CREATE SCHEMA IF NOT EXISTS "${schema}"`,
      `CREATE TABLE ${table("tay_schema")} (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`,
      `CREATE TABLE ${table("tay_store")} (name TEXT PRIMARY KEY, store_id UUID NOT NULL UNIQUE, created_at BIGINT NOT NULL CHECK (created_at >= 0))`,
      `CREATE TABLE ${table("tay_generation")} (store_id UUID NOT NULL REFERENCES ${table("tay_store")} (store_id), epoch BIGINT NOT NULL CHECK (epoch >= 1), parent_epoch BIGINT NOT NULL CHECK (parent_epoch >= 0 AND parent_epoch < epoch), first_sequence BIGINT NOT NULL CHECK (first_sequence >= 1), base_record_count BIGINT NOT NULL CHECK (base_record_count >= 0), created_at BIGINT NOT NULL CHECK (created_at >= 0), PRIMARY KEY (store_id, epoch))`,
      `CREATE TABLE ${table("tay_current")} (store_id UUID PRIMARY KEY REFERENCES ${table("tay_store")} (store_id), epoch BIGINT NOT NULL, last_sequence BIGINT NOT NULL CHECK (last_sequence >= 0), FOREIGN KEY (store_id, epoch) REFERENCES ${table("tay_generation")} (store_id, epoch))`,
      `CREATE TABLE ${table("tay_record")} (store_id UUID NOT NULL, epoch BIGINT NOT NULL, sequence BIGINT NOT NULL CHECK (sequence >= 1), record BYTEA NOT NULL, PRIMARY KEY (store_id, epoch, sequence))`,
    ],
    // 2 (2026-12-02): the inbox, written by applications' own transactions.
    [
      `CREATE TABLE ${table("tay_inbox")} (store TEXT NOT NULL REFERENCES ${table("tay_store")} (name), id UUID NOT NULL, enqueued_at BIGINT NOT NULL CHECK (enqueued_at >= 0), event_type INTEGER NOT NULL CHECK (event_type >= 0), event_schema INTEGER NOT NULL CHECK (event_schema >= 0), payload BYTEA NOT NULL, refusal TEXT, PRIMARY KEY (store, id))`,
    ],
    // 3 (2026-12-03): the compaction lease, one row per store (a free lease has no holder).
    [
      `CREATE TABLE ${table("tay_compaction")} (store_id UUID PRIMARY KEY REFERENCES ${table("tay_store")} (store_id), holder UUID, label TEXT, expires_at BIGINT NOT NULL CHECK (expires_at >= 0))`,
    ],
  ];
};

/**
 * Statements outside the portable subset, each PostgreSQL-only and each
 * optional: a database that refuses one loses only what it reports.
 */
export const diagnostics = {
  /** What an acknowledgement means on this session (reported by open). */
  synchronousCommit: "SHOW synchronous_commit",
};

/**
 * Wake-ups across engines (docs/postgres.md, "Wake-ups across engines"):
 * PostgreSQL only and optional, outside the log path. A database that
 * refuses LISTEN gets the head polled instead; one that refuses
 * `pg_notify` is simply not told (its listeners poll).
 */
export const notifications = {
  /** The channel is `channel(storeId)`: an identifier made of hex digits, never a value. */
  listen: (channel: string): string => `LISTEN ${channel}`,
  notify: "SELECT pg_notify($1, $2)",
  /**
   * `tay_inbox`'s row and its notification in one statement (one round trip
   * of the application's transaction instead of two): the FROM holds one
   * row, so the INSERT writes exactly one row, and the notification, when
   * there is one, goes out with the transaction's commit.
   *
   * Only into an inbox with no row waiting (2026-12-07): a transaction that
   * notifies takes a database-wide lock at its commit and holds it through
   * the WAL flush, so notifying commits never share a flush, and the inbox
   * ran at 0.5x pg-boss at 16 producers (docs/postgres.md, "Notify only an
   * empty inbox"). A row that finds another waiting relies on the folder
   * that takes that one, which looks for open writers of the inbox before
   * it sleeps (`inboxWriters`). The row's table lock is taken before the
   * statement's snapshot, so a folder that settled the row seen here finds
   * this transaction open, or committed and its row readable.
   *
   * The look reads the store's newest row alone, backwards on the primary
   * key (2026-12-07, later): "any unrefused row" (`EXISTS ... AND refusal
   * IS NULL`) was planned as a bitmap scan over every waiting row's index
   * entry while the table had no statistics, 8 ms an enqueue with 100,000
   * rows waiting. A newest row that is refused notifies even when older
   * rows wait: one notification more, never one less.
   */
  inboxInsertNotify: (schema: string): string =>
    `INSERT INTO "${schema}".tay_inbox (store, id, enqueued_at, event_type, event_schema, payload) SELECT $1, $2, $3, $4, $5, $6 FROM (SELECT CASE WHEN (SELECT refusal IS NULL FROM "${schema}".tay_inbox WHERE store = $1 ORDER BY store DESC, id DESC LIMIT 1) THEN NULL ELSE pg_notify($7, $8) END) AS notified`,
  /**
   * Whether another session holds a writer's lock on the inbox table: an
   * open transaction that inserted a row (maybe without a notification),
   * or that deletes or marks rows. PostgreSQL only, like LISTEN.
   */
  inboxWriters: (schema: string): string =>
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'relation' AND relation = to_regclass('"${schema}".tay_inbox') AND mode = 'RowExclusiveLock' AND granted AND pid <> pg_backend_pid()) AS writing`,
};

/**
 * The inbox's channel, one per database: an enqueue notifies it with
 * `SCHEMA.STORE` from inside the application's transaction, so the
 * notification is delivered when (and only if) that transaction commits.
 */
export const inboxChannel = "tay_inbox";

/** The store's notification channel: `tay_` and its STORE_ID's 32 hex digits. */
export const channel = (storeId: string): string =>
  `tay_${storeId.replace(/[^0-9a-f]/gi, "").toLowerCase()}`;

/** An append of `rows` records in chunks of two, folding `keys` inbox rows: for the checker. */
const sample = (rows: number, keys: number): Append => {
  const records = Array.from({ length: rows }, (_, index) => ({
    sequence: 8 + index,
    bytes: Uint8Array.of(index, 0x27, 0x3b, 0x5c),
  }));
  const chunks = [];
  for (let start = 0; start < rows; start += 2) chunks.push(records.slice(start, start + 2));
  return {
    storeId: "6f9619ff-8b86-d011-b42d-00c04fc964ff",
    epoch: 1,
    expected: 7,
    last: 7 + rows,
    chunks,
    consumed: {
      store: "default",
      keys: Array.from(
        { length: keys },
        (_, index) => `0190a5e2-0000-7000-8000-00000000000${index}`,
      ),
    },
  };
};

/** The append script of `sample(rows, keys)`: for the checker. */
export const sampleAppend = (schema: string, rows: number, keys: number): ReadonlyArray<string> =>
  appendScript(schema, sample(rows, keys));

/** The texts of the append batch of `sample(rows, keys)`: for the checker. */
export const sampleBatch = (schema: string, rows: number, keys: number): ReadonlyArray<string> =>
  appendBatch(schema, sample(rows, keys)).map((statement) => statement.text);

/** Every statement of the log path, for the portability checker: the builders at a few sizes. */
export const everyStatement = (schema: string): ReadonlyArray<string> => {
  const all = statements(schema);
  const texts: Array<string> = [];
  for (const value of Object.values(all)) {
    if (typeof value === "string") texts.push(value);
    else for (const rows of [1, 2, 3]) texts.push(value(rows));
  }
  const appends = [
    sampleAppend(schema, 1, 0),
    sampleAppend(schema, 3, 2),
    sampleBatch(schema, 1, 0),
    sampleBatch(schema, 3, 2),
  ].flat();
  return [...texts, ...appends, ...migrations(schema).flat()];
};
