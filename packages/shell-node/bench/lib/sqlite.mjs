// A job table in SQLite through better-sqlite3 12, the way a small queue on
// SQLite is usually built: WAL journal, one row per job, an index for the
// claim, and the usual claim query (UPDATE ... WHERE id = (SELECT ... LIMIT 1)
// RETURNING). `synchronous=FULL` syncs the WAL at every commit (durable like
// Tay's `Maximal`); `NORMAL` syncs it only at checkpoints (like `Segment`).
// better-sqlite3 is synchronous: concurrent callers in one process take
// turns, and every commit is its own WAL append and sync (no group commit).
import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { directoryBytes } from "./common.mjs";

export const sqliteSettings = ["FULL", "NORMAL"];

const schema = `
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY,
  queue TEXT NOT NULL,
  worker TEXT NOT NULL,
  args TEXT NOT NULL,
  state TEXT NOT NULL,
  priority INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  run_at INTEGER NOT NULL,
  inserted_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER
);
CREATE INDEX IF NOT EXISTS jobs_claim ON jobs (queue, state, priority, run_at);
`;

/** The database file of a job table in `directory`. */
export const sqlitePath = (directory) => join(directory, "jobs.db");

/**
 * Opens (creating if needed) the job table in `directory` with
 * `synchronous` = "FULL" | "NORMAL". Returns the driver the workloads use.
 */
export const openSqlite = (directory, synchronous) => {
  const fresh = !existsSync(sqlitePath(directory));
  const db = new Database(sqlitePath(directory));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  if (fresh) db.exec(schema);
  const insertStatement = db.prepare(
    `INSERT INTO jobs (queue, worker, args, state, priority, attempt, max_attempts, run_at, inserted_at)
     VALUES (?, ?, ?, 'available', 0, 0, 20, ?, ?)`,
  );
  const claimStatement = db.prepare(
    `UPDATE jobs SET state = 'executing', attempt = attempt + 1, started_at = ?
     WHERE id = (SELECT id FROM jobs WHERE state = 'available' AND queue = ?
                 ORDER BY priority, run_at LIMIT 1)
     RETURNING id, args`,
  );
  const completeStatement = db.prepare(
    `UPDATE jobs SET state = 'completed', finished_at = ? WHERE id = ? AND state = 'executing'`,
  );
  const countStatement = db.prepare("SELECT count(*) AS n FROM jobs");
  const countInStatement = db.prepare("SELECT count(*) AS n FROM jobs WHERE state = ?");
  const insertOne = (queue, args) => {
    const at = Date.now();
    return insertStatement.run(queue, "W", args, at, at).lastInsertRowid;
  };
  const insertBatch = db.transaction((queue, argsList) => {
    const at = Date.now();
    for (const args of argsList) insertStatement.run(queue, "W", args, at, at);
  });
  const completeBatch = db.transaction((ids) => {
    const at = Date.now();
    for (const id of ids) completeStatement.run(at, id);
  });
  return {
    system: "SQLite",
    setting: `WAL, synchronous=${synchronous}`,
    db,
    /** One job, one transaction (autocommit); resolves with its row id. */
    insert: async (queue, args) => insertOne(queue, args),
    /** The id of the job an `insert` resolved with (its row id, as `claim` gives it). */
    idOfInserted: (rowId) => Number(rowId),
    /** Many jobs in one transaction. */
    insertMany: async (queue, argsList) => insertBatch(queue, argsList),
    /** One job, or undefined when none is available. */
    claim: async (queue) => {
      const row = claimStatement.get(Date.now(), queue);
      return row === undefined ? undefined : { id: row.id, args: row.args };
    },
    complete: async (job) => {
      const changed = completeStatement.run(Date.now(), job.id).changes;
      if (changed !== 1) throw new Error(`SQLite: job ${job.id} was not executing`);
    },
    /** Completes many executing jobs in one transaction (used to build data sets). */
    completeMany: (ids) => completeBatch(ids),
    count: async () => countStatement.get().n,
    countIn: async (state) => countInStatement.get(state).n,
    /** Compaction for SQLite: checkpoint the WAL into the database, then VACUUM. */
    compact: async () => {
      db.pragma("wal_checkpoint(TRUNCATE)");
      db.exec("VACUUM");
      db.pragma("wal_checkpoint(TRUNCATE)");
    },
    bytesOnDisk: () => directoryBytes(directory),
    close: async () => db.close(),
  };
};
