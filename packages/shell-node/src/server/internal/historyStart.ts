/**
 * Where one job's history can start past a generation's base (2026-12-07,
 * docs/server.md "A job's history"): at the record that inserted the job,
 * since no record before it concerns the job, and job ids rise with the
 * sequence past the base (core `JobHistory.insertedIds`). Found by a binary
 * search that reads a few records at each step, so the history's scan
 * skips the records before the job: over PostgreSQL, where the scan is a
 * statement over every row of the generation (about 2 s at 3,000,000
 * rows), a recent job's history reads only the rows after its insert.
 */
import { JobHistory } from "@tay/core";
import * as Effect from "effect/Effect";
import type * as Log from "../../log/Log.js";
import type { Entry } from "../../log/Projection.js";

/**
 * Records read at each step of the search: the first insert among them
 * decides it. A live queue's log has runs of claims and completions between
 * its inserts (a worker's batch of a hundred completions is a hundred
 * records); a step that finds none goes on below it (see `historyStart`).
 */
export const probeRecords = 1024;

/** The search stops once the range is this short: reading it costs less than more steps. */
export const narrowEnoughRecords = 4096;

/**
 * A sequence in `from..through + 1` at or before the record that inserted
 * `jobId`, when that record is in the range (which must hold no record of
 * the base): the record itself where the search narrowed down to it,
 * otherwise the bottom of the range the search stopped at (never past the
 * record: the bottom moves only past an insert of lower ids, wherever the
 * top goes). `from` for a job inserted before the range; for one inserted
 * after it, or never, some sequence of the range. Errors as the log's
 * `readFrom`.
 */
export const historyStart = <E>(
  log: Pick<Log.View<E>, "readFrom">,
  jobId: number,
  from: number,
  through: number,
  narrowEnough: number = narrowEnoughRecords,
): Effect.Effect<number, E> =>
  Effect.gen(function* () {
    // The record inserting the job, if it is in the range, is in low..high.
    let low = from;
    let high = through;
    while (high - low >= narrowEnough) {
      const middle = low + Math.floor((high - low) / 2);
      const page = yield* log.readFrom(middle, probeRecords);
      const found = firstInsert(page, high);
      if (found === undefined || found.ids.first > jobId) {
        // Inserted before the first insert at or after the middle: before the middle. With
        // no insert near the middle the job's is below it, or past the records read; below
        // is searched: `low` moves only past inserts of lower ids, all before the job's, so
        // whatever is found there is still at or before it (2026-12-07: a step with no
        // insert stopped the search, and a log of bulk inserts, then their claims and
        // completions, was read whole for most jobs).
        high = middle - 1;
      } else if (found.ids.last < jobId) {
        low = found.sequence + 1;
      } else {
        return found.sequence;
      }
    }
    return low;
  });

/** The first entry of `entries` at or below `through` that inserts jobs, and their ids. */
const firstInsert = (
  entries: ReadonlyArray<Entry>,
  through: number,
): { readonly sequence: number; readonly ids: JobHistory.InsertedIds } | undefined => {
  for (const { sequence, event } of entries) {
    if (sequence > through) return undefined;
    const ids = JobHistory.insertedIds(event);
    if (ids !== undefined) return { sequence, ids };
  }
  return undefined;
};
