/**
 * What a refused append brings back (docs/postgres.md, "A conflict
 * answered with the others' records", 2026-12-05). Once a log has met
 * another writer, its append batch ends with one more SELECT (`sql.ts`
 * `others`): when the guard moved nothing, the head and the records others
 * appended after this append's expected last sequence, up to a page; when
 * it committed, no row. The writer then has the conflict's head without
 * reading it, and the engine's catch-up folds those records without
 * reading them (`refresh` counts their bytes from them, `readFrom` serves
 * them): a conflict costs no round trip beyond the append run again,
 * where it cost three (the writer's read of the head, the catch-up's reads
 * of the head and of the records).
 *
 * The rows come as text (the batch asks for no description of them):
 * integers as decimals, the record as bytea's hex output. Anything else,
 * or records that do not follow `expected` one by one, is not used: the
 * reads then run as before.
 */
import type { Brought, LogState } from "./state.js";
import * as Tables from "./tables.js";

/** Records a refused append brings back: a page, as the reader reads one. */
export const limit = (state: LogState): number => state.options.pageRecords;

/** Whether this log's appends bring back the others' records: once it has met another writer. */
export const wanted = (state: LogState): boolean => state.writes.conflicted > 0;

/** A bytea in PostgreSQL's hex output (`\x0a1b...`), or undefined. */
const hexBytes = (value: unknown): Uint8Array | undefined => {
  if (typeof value !== "string" || !/^\\x(?:[0-9a-f]{2})*$/.test(value)) return undefined;
  return Uint8Array.from(Buffer.from(value.slice(2), "hex"));
};

/** A decimal column, or undefined. */
const decimal = (value: unknown): number | undefined => {
  if (typeof value !== "string" || !/^(0|[1-9][0-9]{0,15})$/.test(value)) return undefined;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
};

/**
 * The head and records in `rows` (the `others` statement's answer to an
 * append of `epoch` that expected `expected`), or undefined when there is
 * none or they are not what that statement gives.
 */
export const fromRows = (
  state: LogState,
  epoch: number,
  expected: number,
  rows: ReadonlyArray<unknown>,
): Brought | undefined => {
  const head = Tables.head(state.path, rows);
  if (!("lastSequence" in head) || head.epoch !== epoch || head.lastSequence <= expected) {
    return undefined;
  }
  const records: Array<{ sequence: number; record: Uint8Array }> = [];
  let bytes = 0;
  for (const row of rows) {
    if (typeof row !== "object" || row === null) return undefined;
    const sequence = "sequence" in row ? decimal(row.sequence) : undefined;
    const record = "record" in row ? hexBytes(row.record) : undefined;
    if (sequence !== expected + 1 + records.length || record === undefined) return undefined;
    records.push({ sequence, record });
    bytes += record.length;
  }
  if (records.length === 0) return undefined;
  return { epoch, first: expected + 1, head, rows: records, bytes, counted: false };
};

/**
 * The brought rows from `sequence` through `through` of `epoch`, when they
 * hold all of them; else undefined (read the table).
 */
export const rowsFor = (
  state: LogState,
  epoch: number,
  sequence: number,
  through: number,
): ReadonlyArray<unknown> | undefined => {
  const brought = state.brought;
  if (brought === undefined || brought.epoch !== epoch) return undefined;
  const last = brought.first + brought.rows.length - 1;
  if (sequence < brought.first || through > last) return undefined;
  return brought.rows.slice(sequence - brought.first, through - brought.first + 1);
};
