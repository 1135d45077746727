/**
 * The canonical base as compaction computed it before it was streamed
 * (2026-12-02): one array, every kept job listed first. Kept as the oracle
 * of the differential tests of `Snapshot.events`, with one fix: the last
 * (7,3) part of a base of several parts was never flushed (the final
 * flush looked at the (7,1) members only), so a v3 store of more than
 * 4,096 kept jobs lost the jobs of its last part at compaction.
 */
import {
  type Event,
  isTerminal,
  type JobSnapshot,
  type JobSnapshotV3,
  resultRecorded,
  snapshotPart,
  snapshotPartV3,
} from "../../src/Event.js";
import * as Job from "../../src/Job.js";
import { eventOverheadBytes, recordBytes } from "../../src/internal/Encoded.js";
import * as Limits from "../../src/Limits.js";
import * as Queue from "../../src/Queue.js";
import * as Schedule from "../../src/Schedule.js";
import type { State } from "../../src/State.js";

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

const jobBytes = (job: JobSnapshot | JobSnapshotV3): number =>
  recordBytes(snapshotPart({ part: 0, lastJobId: 0, jobs: [job] })) - eventOverheadBytes;

const usesV3Fields = (jobs: ReadonlyArray<Job.Job>, options: Options): boolean => {
  for (const job of jobs) {
    if (Job.hasV3Fields(job) && !drops(job, options)) return true;
  }
  return false;
};

/**
 * The canonical base records of `state` at `options` (always at least part
 * 0, so the base is never empty). A single job larger than the part target
 * gets a part of its own. A lean state holds its completed jobs as facts
 * only: `terminal` gives their whole records (the shell's terminal index),
 * in any order; those a retention keeps are written after the state's own.
 */
export const arraySnapshot = (
  state: State,
  options: Options,
  terminal: Iterable<Job.Job> = [],
): ReadonlyArray<Event> => {
  const all = [...state.jobs.values()];
  for (const job of terminal) if (state.terminal.has(job.jobId)) all.push(job);
  const parts: Array<Event> = [];
  const results: Array<Event> = [];
  // (7,3) only when a kept job needs it: a store using no v3 feature keeps
  // its base readable by Event v1/v2 readers.
  const v3 = usesV3Fields(all, options);
  let jobs: Array<JobSnapshot> = [];
  let jobsV3: Array<JobSnapshotV3> = [];
  let bytes = eventOverheadBytes;
  const flush = () => {
    const fields = { part: parts.length, lastJobId: state.lastJobId };
    parts.push(
      v3 ? snapshotPartV3({ ...fields, jobs: jobsV3 }) : snapshotPart({ ...fields, jobs }),
    );
    jobs = [];
    jobsV3 = [];
    bytes = eventOverheadBytes;
  };
  for (const job of all) {
    if (drops(job, options)) continue;
    const snapshotJob = v3 ? Job.toSnapshotV3(job) : Job.toSnapshot(job);
    const size = jobBytes(snapshotJob);
    const held = jobs.length + jobsV3.length;
    if (held > 0 && (held >= partJobsMax || bytes + size > partBytesTarget)) flush();
    if (v3) jobsV3.push(Job.toSnapshotV3(job));
    else jobs.push(snapshotJob);
    bytes += size;
    if (job.result !== null) {
      results.push(
        resultRecorded({ jobId: job.jobId, result: job.result.value, at: job.result.at }),
      );
    }
  }
  if (jobs.length + jobsV3.length > 0 || parts.length === 0) flush();
  const checkpoints = [...state.schedules.values()].map(Schedule.toCheckpoint);
  const queues = [...state.queues.values()].map(Queue.toEvent);
  return [...parts, ...results, ...checkpoints, ...queues];
};
