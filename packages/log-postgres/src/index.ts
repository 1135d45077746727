/**
 * @tay/log-postgres — Tay's log on PostgreSQL: the second implementation
 * of the shell's `Log` (the file store is the first), so the same engine
 * runs over tables instead of segment files.
 *
 * - `PgSchema`: versioned migrations, `init` of a store;
 * - `PgLog`: `open` (recovery into a projection) and the running log;
 * - `Inbox`: `enqueueInTransaction`, jobs written in the application's own transaction;
 * - `PgCopy`: a whole generation read out, or imported, a page at a time (`tay copy`);
 * - `PgOptions`, `PgError`: its options and its errors;
 * - `Driver`: the database client boundary (node-postgres by default).
 */
export * as Driver from "./Driver.js";
export * as Inbox from "./Inbox.js";
export * as PgCopy from "./PgCopy.js";
export * as PgError from "./PgError.js";
export * as PgLog from "./PgLog.js";
export * as PgOptions from "./PgOptions.js";
export * as PgSchema from "./PgSchema.js";
