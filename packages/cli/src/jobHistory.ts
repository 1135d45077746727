/**
 * One job's history: the records of the current generation that concern
 * it (core's `JobHistory`: name it, or list it as a schedule's member),
 * each with the events of a mutation that do, a snapshot part narrowed to
 * the job.
 *
 * At rest (`historyAtRest`) an inspection finds them without decoding the
 * rest: the projection names the job's mention and a checkpoint's list key
 * (codec `JobMention`), so the scan validates every record but decodes
 * only those holding one (`Projection.needles`, 2026-12-07). `tay job` on
 * the 1,000,000-job store took 4.5 s folding and decoding every record.
 */
import { JobMention } from "@tay/codec";
import { type Job, JobHistory } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import {
  type Disk,
  type Projection,
  Recovery,
  type StoreError,
  type TerminalIndex,
} from "@tay/shell-node";
import { jobAt, withAtRest } from "./atRest.js";
import { type InspectError, retryTransient } from "./inspect.js";
import { oneJob } from "./listingFold.js";

/** One history entry of a job: a record (or one event of a mutation) that concerns it. */
export type HistoryEntry = JobHistory.HistoryEntry;

/** The entries of one record that concern `jobId` (core's `JobHistory`, as the server's route). */
export const historyEntries = (
  entry: Projection.Entry,
  jobId: number,
): ReadonlyArray<HistoryEntry> => JobHistory.entriesOf(entry.sequence, entry.event, jobId);

/** A collector of history entries for a fold's tap, reset when the fold starts over. */
export const historyTap = (jobId: number) => {
  const history: Array<HistoryEntry> = [];
  const tap = {
    onStart: () => {
      history.length = 0;
    },
    onRecord: (entry: Projection.Entry) => {
      history.push(...historyEntries(entry, jobId));
    },
  };
  return { history, tap };
};

/** What an inspection for one job's history found, and the generation it read. */
export interface HistoryRead {
  readonly entries: ReadonlyArray<HistoryEntry>;
  readonly epoch: number;
  readonly lastSequence: number;
}

/**
 * The records about `jobId` in the store in `directory`, at rest (retried
 * while a live writer's torn tail or removed file makes it start over).
 */
export const historyAtRest = (
  directory: string,
  jobId: number,
): Effect.Effect<
  HistoryRead,
  StoreError.RecoveryError | StoreError.HistoryRejected<never>,
  Disk.Disk
> => {
  // The same collector as a tapped fold's, fed only the records with a needle.
  const { history, tap } = historyTap(jobId);
  const projection: Projection.Projection<null, never> = {
    start: () => {
      tap.onStart();
      return null;
    },
    apply: (state, sequence, event) => {
      tap.onRecord({ sequence, event });
      return Either.right(state);
    },
    needles: JobMention.historyNeedles(jobId),
  };
  return retryTransient(Recovery.inspect(directory, {}, projection, undefined, "onTrust")).pipe(
    Effect.map(({ report }) => ({
      entries: history,
      epoch: report.epoch,
      lastSequence: report.lastSequence,
    })),
  );
};

/** What reading a job and its history at rest can fail with. */
export type JobReadError =
  | InspectError
  | TerminalIndex.TerminalIndexError
  | StoreError.HistoryRejected<never>;

/** A job and its history, as `tay job` shows them. */
export interface JobAndHistory {
  readonly found: Job.Job | undefined;
  readonly history: ReadonlyArray<HistoryEntry>;
}

/**
 * A directory's job at rest in two reads: the job as the lean state and the
 * terminal index hold it (the state image spares the fold), then its
 * history, read decoding only the records that mention it
 * (`historyAtRest`). Undefined when the two read different generations (a
 * compaction in between) or the second a shorter log: the caller then folds
 * once with a tap (`jobFolded`), which cannot disagree with itself.
 */
export const jobAtRest = (
  directory: string,
  jobId: number,
  readHistory: typeof historyAtRest = historyAtRest,
): Effect.Effect<JobAndHistory | undefined, JobReadError, Disk.Disk> =>
  Effect.gen(function* () {
    const { found, report } = yield* withAtRest(
      directory,
      true,
      (atRest) =>
        Either.map(jobAt(atRest, jobId), (job) => ({ found: job, report: atRest.report })),
      undefined,
      oneJob(jobId),
    );
    if (found === undefined) return { found, history: [] } satisfies JobAndHistory;
    const read = yield* readHistory(directory, jobId);
    if (read.epoch !== report.epoch || read.lastSequence < report.lastSequence) return undefined;
    // Records appended after the job was read are left out: the two answer the same sequence.
    const history = read.entries.filter((entry) => entry.sequence <= report.lastSequence);
    return { found, history } satisfies JobAndHistory;
  });

/** A directory's job and its history from one fold with a tap (every record decoded). */
export const jobFolded = (
  directory: string,
  jobId: number,
): Effect.Effect<JobAndHistory, JobReadError, Disk.Disk> =>
  Effect.gen(function* () {
    const { history, tap } = historyTap(jobId);
    const found = yield* withAtRest(
      directory,
      true,
      (atRest) => jobAt(atRest, jobId),
      tap,
      oneJob(jobId),
    );
    return { found, history } satisfies JobAndHistory;
  });
