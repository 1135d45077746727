/**
 * Compaction's canonical base: the records that restore a state, minus the
 * terminal jobs that finished before `now - retentionMs` (and their results).
 *
 * Order (EVENTS.md "Store-v2 records"): snapshot parts 0, 1, ... all with
 * the state's last_job_id, then one (10,2) per kept result, then one (13,2)
 * per schedule. `foldGeneration(snapshot(s, o), [])` equals `s` without the
 * dropped jobs. Active jobs are never dropped; every schedule is kept.
 */
import { type Event, isTerminal, type JobSnapshot, resultRecorded, snapshotPart } from "./Event.js";
import * as Job from "./Job.js";
import { eventOverheadBytes, recordBytes } from "./internal/Encoded.js";
import * as Limits from "./Limits.js";
import * as Schedule from "./Schedule.js";
import type { State } from "./State.js";

/** Jobs per snapshot part at most (parts are also cut by payload size). */
export const partJobsMax = 4096;

/** Payload bytes a part aims to stay under: half the record bound leaves room for estimate slack. */
export const partBytesTarget = Limits.payloadBytesMax / 2;

/** When the snapshot is taken and how long finished jobs are kept. */
export interface Options {
  /** The compaction time (ms). */
  readonly now: number;
  /** Terminal jobs that finished before `now - retentionMs` are dropped. */
  readonly retentionMs: number;
}

/** True when a snapshot at `options` drops this job. */
export const drops = (job: Job.Job, options: Options): boolean =>
  isTerminal(job.state) &&
  job.finishedAt !== null &&
  job.finishedAt < options.now - options.retentionMs;

const jobBytes = (job: JobSnapshot): number =>
  recordBytes(snapshotPart({ part: 0, lastJobId: 0, jobs: [job] })) - eventOverheadBytes;

/**
 * The canonical base records of `state` at `options` (always at least part
 * 0, so the base is never empty). A single job larger than the part target
 * gets a part of its own.
 */
export const snapshot = (state: State, options: Options): ReadonlyArray<Event> => {
  const parts: Array<Event> = [];
  const results: Array<Event> = [];
  let jobs: Array<JobSnapshot> = [];
  let bytes = eventOverheadBytes;
  const flush = () => {
    parts.push(snapshotPart({ part: parts.length, lastJobId: state.lastJobId, jobs }));
    jobs = [];
    bytes = eventOverheadBytes;
  };
  for (const job of state.jobs.values()) {
    if (drops(job, options)) continue;
    const snapshotJob = Job.toSnapshot(job);
    const size = jobBytes(snapshotJob);
    if (jobs.length > 0 && (jobs.length >= partJobsMax || bytes + size > partBytesTarget)) flush();
    jobs.push(snapshotJob);
    bytes += size;
    if (job.result !== null) {
      results.push(
        resultRecorded({ jobId: job.jobId, result: job.result.value, at: job.result.at }),
      );
    }
  }
  if (jobs.length > 0 || parts.length === 0) flush();
  const checkpoints = [...state.schedules.values()].map(Schedule.toCheckpoint);
  return [...parts, ...results, ...checkpoints];
};
