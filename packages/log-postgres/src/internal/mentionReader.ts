/**
 * `readMentioning` on PostgreSQL (`Log.View`; one job's history): the
 * server finds the rows whose record bytes hold a needle
 * (`position(... IN record)`, sql.ts `recordsMentioning`), so only those
 * are sent, checked (`Tables.record`: CRCs, sequence) and decoded. The
 * others stay in the database, kept by its own checks: this read does not
 * vouch for their bytes, as the file store's does for its files (a full
 * read, `readFrom`, checks every row). What is queued in memory is handed
 * over whole, as the file store does (the caller filters).
 *
 * Each statement reads the store's current epoch in the same snapshot as
 * the rows: another epoch means a compaction took the generation away,
 * `Compacted`, never an answer that silently lacks rows.
 */
import { type Log, LogError, type Projection } from "@tay/shell-node";
import * as Effect from "effect/Effect";
import type { PgLogError } from "../PgError.js";
import { isFailure } from "./writer.js";
import { entryOfRow, onReader, type ReaderSession } from "./reader.js";
import { databaseError, run } from "./session.js";
import type { LogState } from "./state.js";
import * as Rows from "./rows.js";

/** The rows' entries, each checked and decoded; or the first fault. */
const entriesOfRows = (
  state: LogState,
  epoch: number,
  rows: ReadonlyArray<unknown>,
): Array<Projection.Entry> | PgLogError => {
  const entries: Array<Projection.Entry> = [];
  for (const row of rows) {
    const key = Rows.integer(Rows.field(row, "sequence"), 1);
    // The row of NULLs an empty answer carries.
    if (Rows.isRefused(key)) continue;
    const entry = entryOfRow(state, epoch, key, row);
    if (!("event" in entry)) return entry;
    entries.push(entry);
  }
  return entries;
};

/**
 * The committed rows from `from` to `through` that hold `first` or
 * `second`, at most a page (`pageRecords`), and the first sequence not
 * looked at.
 */
const committedMentioning = (
  state: LogState,
  reader: ReaderSession,
  epoch: number,
  range: { readonly from: number; readonly through: number },
  first: Uint8Array,
  second: Uint8Array,
): Effect.Effect<Log.Mentioning, PgLogError> =>
  Effect.gen(function* () {
    const { path } = state;
    // A page of rows at most (`pageRecords`): a needle that many rows hold is read in steps.
    const rowsMax = state.options.pageRecords;
    const parameters = [state.storeId, epoch, range.from, range.through, first, second];
    const result = yield* Effect.mapError(
      onReader(state, reader, (session) =>
        run(session, state.sql.recordsMentioning, [...parameters, rowsMax]),
      ),
      (error) => (isFailure(error) ? databaseError(path, "read")(error) : error),
    );
    const current = Rows.integer(Rows.field(result.rows[0], "current_epoch"), 1);
    if (Rows.isRefused(current) || current !== epoch) {
      return yield* new LogError.Compacted({
        path,
        sequence: range.from,
        firstAvailable: state.firstSequence,
      });
    }
    const entries = entriesOfRows(state, epoch, result.rows);
    if (!Array.isArray(entries)) return yield* Effect.fail(entries);
    const last = entries.at(-1);
    const full = result.rows.length >= rowsMax && last !== undefined;
    return { entries, next: full ? last.sequence + 1 : range.through + 1 };
  });

/**
 * The entries among the `limit` from `sequence` whose record holds one of
 * `needles` (two a statement; more are read a pair at a time, merged), and
 * the first sequence not looked at.
 */
export const readMentioning = (
  state: LogState,
  reader: ReaderSession,
  needles: ReadonlyArray<Uint8Array>,
  sequence: number,
  limit: number,
): Effect.Effect<Log.Mentioning, PgLogError> =>
  Effect.gen(function* () {
    const { epoch, firstSequence, committedLast, path } = state;
    if (sequence < firstSequence) {
      return yield* new LogError.Compacted({ path, sequence, firstAvailable: firstSequence });
    }
    if (limit <= 0 || needles.length === 0) return { entries: [], next: sequence };
    const queued = [...state.inFlight, ...state.pending].flatMap((batch) => batch.records);
    const through = Math.min(committedLast, sequence + limit - 1);
    let next = sequence;
    const found = new Map<number, Projection.Entry>();
    if (sequence <= committedLast) {
      next = through + 1;
      for (let pair = 0; pair < needles.length; pair += 2) {
        const first = needles[pair] ?? new Uint8Array(0);
        const second = needles[pair + 1] ?? first;
        const read = yield* committedMentioning(
          state,
          reader,
          epoch,
          { from: sequence, through },
          first,
          second,
        );
        for (const entry of read.entries) found.set(entry.sequence, entry);
        next = Math.min(next, read.next);
      }
    }
    // A pair that stopped early bounds what the others may answer.
    const entries = [...found.values()]
      .filter((entry) => entry.sequence < next)
      .sort((a, b) => a.sequence - b.sequence);
    if (next > committedLast) {
      next = Math.max(next, committedLast + 1);
      for (const record of queued) {
        if (next - sequence >= limit) break;
        if (record.sequence === next) {
          entries.push({ sequence: record.sequence, event: record.event });
          next += 1;
        }
      }
    }
    return { entries, next };
  });
