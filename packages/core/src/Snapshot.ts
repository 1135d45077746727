/**
 * Compaction's canonical base: the records that restore a state, minus the
 * terminal jobs that finished before `now - retentionMs` (and their results).
 *
 * Order (EVENTS.md "Store-v2 records", EVENTS-V3.md "The canonical base"):
 * snapshot parts 0, 1, ... all with the state's last_job_id ((7,3) parts
 * when any kept job has a v3 field set, else (7,1)), then one (10,2) per
 * kept result, then one (13,2) or (13,3) per schedule, then one (24,3) per
 * queue whose state is not the default. `foldGeneration(snapshot(s, o), [])` equals `s` without the
 * dropped jobs. Active jobs are never dropped; every schedule is kept.
 *
 * Jobs come in one order: those the state holds whole, ascending by id,
 * then (a lean state) those it holds as facts, ascending by id.
 *
 * `events` produces the base on demand (issue 19, streaming compaction): it
 * holds one part at a time, never the base or the list of kept jobs, and
 * reads the whole records of fact-only jobs through `TerminalRecords` in
 * up to three passes (is any kept job v3? asked only of a state that uses
 * schema 3; the parts; the results of the jobs whose facts say they have
 * one), so a compaction's memory is bounded by the active jobs and a part,
 * not by the retained history.
 */
import {
  type Event,
  isTerminal,
  type JobSnapshot,
  type JobSnapshotV3,
  resultRecorded,
  snapshotPart,
  snapshotPartV3,
} from "./Event.js";
import * as Job from "./Job.js";
import { eventOverheadBytes, recordBytes } from "./internal/Encoded.js";
import * as Limits from "./Limits.js";
import * as Queue from "./Queue.js";
import * as Schedule from "./Schedule.js";
import { type State, usesSchema3 } from "./State.js";

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

/**
 * The whole records of jobs a lean state holds as facts (the shell's
 * terminal index): given ascending ids, their records in the same order,
 * each read when the iteration reaches it. A record whose id the state
 * holds no fact of is skipped; one it has none of is the reader's to
 * report (the shell's throws its typed error), never a base silently short.
 */
export type TerminalRecords = (jobIds: Iterable<number>) => Iterable<Job.Job>;

/** No records: a full state holds every job whole. */
const noRecords: TerminalRecords = () => [];

/** True when a snapshot at `options` drops this job. */
export const drops = (job: Job.Job, options: Options): boolean =>
  isTerminal(job.state) &&
  job.finishedAt !== null &&
  job.finishedAt < options.now - options.retentionMs;

const jobBytes = (job: JobSnapshot | JobSnapshotV3): number =>
  recordBytes(snapshotPart({ part: 0, lastJobId: 0, jobs: [job] })) - eventOverheadBytes;

/** Ids of the jobs `state` holds as facts, ascending (those with a result only, when asked). */
function* factIds(state: State, withResult: boolean): Generator<number> {
  for (const [jobId, fact] of state.terminal.entries()) {
    if (!withResult || fact.hasResult) yield jobId;
  }
}

/** The jobs a snapshot at `options` keeps, in the base's order (see the module comment). */
function* keptJobs(
  state: State,
  options: Options,
  terminal: TerminalRecords,
  withResult: boolean,
): Generator<Job.Job> {
  for (const job of state.jobs.values()) if (!drops(job, options)) yield job;
  if (state.terminal.size === 0) return;
  for (const job of terminal(factIds(state, withResult))) {
    if (state.terminal.has(job.jobId) && !drops(job, options)) yield job;
  }
}

const usesV3Fields = (jobs: Iterable<Job.Job>): boolean => {
  // Leaving the loop early closes the iterator (and the reader under it).
  for (const job of jobs) if (Job.hasV3Fields(job)) return true;
  return false;
};

/** The snapshot parts of the kept jobs, one at a time (always at least part 0), each of at most `jobsMax`. */
function* parts(
  state: State,
  kept: Iterable<Job.Job>,
  v3: boolean,
  jobsMax: number,
): Generator<Event, void, undefined> {
  let part = 0;
  // One of the two is used: (7,1) members or (7,3) members, never both.
  let jobs: Array<JobSnapshot> = [];
  let jobsV3: Array<JobSnapshotV3> = [];
  let bytes = eventOverheadBytes;
  const cut = (): Event => {
    const fields = { part, lastJobId: state.lastJobId };
    const event = v3
      ? snapshotPartV3({ ...fields, jobs: jobsV3 })
      : snapshotPart({ ...fields, jobs });
    part += 1;
    jobs = [];
    jobsV3 = [];
    bytes = eventOverheadBytes;
    return event;
  };
  for (const job of kept) {
    // Each job's snapshot form made once, sized, then kept (a (7,3) one was made twice).
    const v3Job = v3 ? Job.toSnapshotV3(job) : undefined;
    const snapshotJob = v3Job ?? Job.toSnapshot(job);
    const size = jobBytes(snapshotJob);
    const held = jobs.length + jobsV3.length;
    if (held > 0 && (held >= jobsMax || bytes + size > partBytesTarget)) yield cut();
    if (v3Job !== undefined) jobsV3.push(v3Job);
    else jobs.push(snapshotJob);
    bytes += size;
  }
  if (jobs.length + jobsV3.length > 0 || part === 0) yield cut();
}

/**
 * The canonical base records of `state` at `options`, produced on demand
 * (always at least part 0, so the base is never empty). A single job
 * larger than the part target gets a part of its own. A lean state holds
 * its completed jobs as facts only: `terminal` gives their whole records.
 * `partJobs` (at most `partJobsMax`) bounds the jobs of a part: smaller
 * parts cost less each to encode (a state image written in the background
 * yields between them).
 */
export function* events(
  state: State,
  options: Options,
  terminal: TerminalRecords = noRecords,
  partJobs = partJobsMax,
): Generator<Event, void, undefined> {
  // (7,3) only when a kept job needs it: a store using no v3 feature keeps
  // its base readable by Event v1/v2 readers. A job has a v3 field only if
  // a (1,3) or a (7,3) of this generation made it, and each marks the state
  // as using schema 3: without the mark no job needs looking at, and a lean
  // state's completed jobs are not read from the index twice (2026-12-07:
  // 1,000,000 reads and decodes of a compaction that keeps them, with
  // commands held).
  const v3 = usesSchema3(state) && usesV3Fields(keptJobs(state, options, terminal, false));
  const jobsMax = Math.max(1, Math.min(partJobsMax, Math.floor(partJobs)));
  yield* parts(state, keptJobs(state, options, terminal, false), v3, jobsMax);
  for (const job of keptJobs(state, options, terminal, true)) {
    if (job.result === null) continue;
    yield resultRecorded({ jobId: job.jobId, result: job.result.value, at: job.result.at });
  }
  for (const schedule of state.schedules.values()) yield Schedule.toCheckpoint(schedule);
  for (const queue of state.queues.values()) yield Queue.toEvent(queue);
}

/**
 * `events` as one array (what a small state, a test or `copy-prefix`
 * wants). `terminal` gives the whole records of the jobs a lean state
 * holds as facts, in any order.
 */
export const snapshot = (
  state: State,
  options: Options,
  terminal: Iterable<Job.Job> = [],
): ReadonlyArray<Event> => {
  const whole = new Map<number, Job.Job>();
  for (const job of terminal) whole.set(job.jobId, job);
  const records: TerminalRecords = function* (jobIds) {
    for (const jobId of jobIds) {
      const job = whole.get(jobId);
      if (job !== undefined) yield job;
    }
  };
  return [...events(state, options, records)];
};
