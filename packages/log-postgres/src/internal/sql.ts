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
 * use numbered parameters for every value.
 */

/** A schema name the statements may quote: lowercase letters, digits, `_`, at most 63 bytes. */
export const schemaName = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema version these statements are written for. */
export const schemaVersion = 2;

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
  return {
    begin: "BEGIN",
    commit: "COMMIT",
    rollback: "ROLLBACK",
    /** Open's single snapshot of the head, the generation and its records. */
    snapshot: "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    schemaVersion: `SELECT max(version) AS version FROM ${version}`,
    markVersion: `INSERT INTO ${version} (version, applied_at) VALUES ($1, $2)`,
    storeByName: `SELECT store_id, created_at FROM ${store} WHERE name = $1`,
    insertStore: `INSERT INTO ${store} (name, store_id, created_at) VALUES ($1, $2, $3)`,
    current: `SELECT epoch, last_sequence FROM ${current} WHERE store_id = $1`,
    insertCurrent: `INSERT INTO ${current} (store_id, epoch, last_sequence) VALUES ($1, $2, $3)`,
    generation: `SELECT epoch, parent_epoch, first_sequence, base_record_count, created_at FROM ${generation} WHERE store_id = $1 AND epoch = $2`,
    otherGenerations: `SELECT epoch FROM ${generation} WHERE store_id = $1 AND epoch <> $2 ORDER BY epoch`,
    insertGeneration: `INSERT INTO ${generation} (store_id, epoch, parent_epoch, first_sequence, base_record_count, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
    deleteGeneration: `DELETE FROM ${generation} WHERE store_id = $1 AND epoch = $2`,
    /** A page of records in sequence order, from a sequence on (keyset paging). */
    recordsFrom: `SELECT sequence, record FROM ${record} WHERE store_id = $1 AND epoch = $2 AND sequence >= $3 AND sequence <= $4 ORDER BY sequence LIMIT $5`,
    recordsBetween: `SELECT sequence, record FROM ${record} WHERE store_id = $1 AND epoch = $2 AND sequence >= $3 AND sequence <= $4 ORDER BY sequence`,
    /** Rows of the generation past its head: there must be none. */
    recordsPast: `SELECT sequence FROM ${record} WHERE store_id = $1 AND epoch = $2 AND sequence > $3 ORDER BY sequence LIMIT 1`,
    lastRecordOf: `SELECT max(sequence) AS sequence FROM ${record} WHERE store_id = $1 AND epoch = $2`,
    /**
     * The append's guard: moves the head from the expected last sequence to
     * the batch's last, in the transaction that inserts the batch. No row
     * changed means the head moved (another writer) or the epoch did (a
     * compaction): a conflict, and the transaction is rolled back.
     */
    advanceHead: `UPDATE ${current} SET last_sequence = $3 WHERE store_id = $1 AND epoch = $2 AND last_sequence = $4`,
    /** Compaction's compare-and-set of CURRENT: epoch and head move together. */
    switchGeneration: `UPDATE ${current} SET epoch = $3, last_sequence = $4 WHERE store_id = $1 AND epoch = $2 AND last_sequence = $5`,
    deleteRecords: `DELETE FROM ${record} WHERE store_id = $1 AND epoch = $2 AND sequence >= $3 AND sequence <= $4`,
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

/** Every statement of the log path, for the portability checker: the builders at a few sizes. */
export const everyStatement = (schema: string): ReadonlyArray<string> => {
  const all = statements(schema);
  const texts: Array<string> = [];
  for (const value of Object.values(all)) {
    if (typeof value === "string") texts.push(value);
    else for (const rows of [1, 2, 3]) texts.push(value(rows));
  }
  return [...texts, ...migrations(schema).flat()];
};
