/**
 * Read helpers a runtime needs: jobs by state and queue, the next wake-up
 * time, and counts per queue and state. Non-terminal states are served
 * from the state's indexes; terminal ones walk the jobs.
 */
import { isTerminal, type JobState, jobStates } from "./Event.js";
import type { Job } from "./Job.js";
import type { Schedule } from "./Schedule.js";
import { attemptDeadline, type State, stateIndex, zeroCounts } from "./State.js";

/** Job counts by state. */
export type Counts = { readonly [S in JobState]: number };

const toCounts = (counts: ReadonlyArray<number>): Counts => ({
  scheduled: counts[stateIndex.scheduled] ?? 0,
  available: counts[stateIndex.available] ?? 0,
  executing: counts[stateIndex.executing] ?? 0,
  retryable: counts[stateIndex.retryable] ?? 0,
  completed: counts[stateIndex.completed] ?? 0,
  discarded: counts[stateIndex.discarded] ?? 0,
  cancelled: counts[stateIndex.cancelled] ?? 0,
});

/** Counts by state for one queue (zeros for a queue without jobs). O(log q). */
export const countsOf = (state: State, queue: string): Counts =>
  toCounts(state.indexes.counts.get(queue) ?? zeroCounts);

/** How many jobs of `queue` are available (what a claim could start now). O(log q). */
export const availableIn = (state: State, queue: string): number =>
  (state.indexes.counts.get(queue) ?? zeroCounts)[stateIndex.available] ?? 0;

/** Counts by state for every queue that has (or had) jobs, ascending by queue name. */
export const counts = (state: State): ReadonlyMap<string, Counts> => {
  const result = new Map<string, Counts>();
  for (const [queue, queueCounts] of state.indexes.counts.entries()) {
    result.set(queue, toCounts(queueCounts));
  }
  return result;
};

/** Counts by state over all queues. */
export const totals = (state: State): Counts => {
  const sums = [...zeroCounts];
  for (const queueCounts of state.indexes.counts.values()) {
    for (let index = 0; index < jobStates.length; index++) {
      sums[index] = (sums[index] ?? 0) + (queueCounts[index] ?? 0);
    }
  }
  return toCounts(sums);
};

/** Up to `limit` available jobs of `queue` in claim order (what `ClaimJobs` would start). */
export const available = (state: State, queue: string, limit: number): ReadonlyArray<Job> => {
  const jobs: Array<Job> = [];
  if (limit <= 0) return jobs;
  state.indexes.available.get(queue)?.forEachWhile((_, job) => {
    jobs.push(job);
    return jobs.length < limit;
  });
  return jobs;
};

/**
 * How a listing of jobs is asked for (the engine's `jobs`, the server's
 * `GET /v1/jobs`, the client's `jobs`): of one queue and state, at most
 * `limit`, by id within `after` and `before` (both excluded), ascending
 * (the default) or newest first (2026-12-06).
 */
export interface JobFilter {
  readonly queue?: string;
  readonly state?: JobState;
  readonly limit?: number;
  /** Only jobs whose id is greater: where the next page of an ascending listing starts. */
  readonly after?: number;
  /** Only jobs whose id is smaller: where the next page of a descending listing starts. */
  readonly before?: number;
  /** Ascending by id (the default), or descending: newest first. */
  readonly order?: "asc" | "desc";
}

/**
 * The jobs in `jobState` (of `queue` when given), ascending by job id.
 * O(k log k) for non-terminal states from the indexes; terminal states
 * walk every job.
 */
export const jobsIn = (state: State, jobState: JobState, queue?: string): ReadonlyArray<Job> => {
  const matches = (job: Job) =>
    job.state === jobState && (queue === undefined || job.queue === queue);
  const jobs: Array<Job> = [];
  if (isTerminal(jobState)) {
    for (const job of state.jobs.values()) if (matches(job)) jobs.push(job);
    return jobs;
  }
  const collect = (_: null, job: Job) => {
    if (matches(job)) jobs.push(job);
    return true;
  };
  if (jobState === "available") {
    if (queue !== undefined) state.indexes.available.get(queue)?.forEachWhile(collect);
    else for (const index of state.indexes.available.values()) index.forEachWhile(collect);
  } else if (jobState === "executing") {
    state.indexes.executing.forEachWhile(collect);
  } else {
    state.indexes.pending.forEachWhile(collect);
  }
  return jobs.sort((left, right) => left.jobId - right.jobId);
};

/**
 * The next time something becomes due without a command: the earliest
 * scheduled_at of a scheduled or retryable job, next_due_at of an active
 * schedule, or the deadline plus `timeoutGraceMs` of an executing attempt
 * with a `timeout_ms` (EVENTS-V3.md); null when nothing is pending. O(log n).
 */
export const nextWakeAt = (state: State, timeoutGraceMs = 0): number | null => {
  const job = state.indexes.pending.first();
  const schedule = state.indexes.due.first();
  const jobAt = job === undefined ? null : job[0].scheduledAt;
  const scheduleAt = schedule === undefined ? null : schedule[0].nextDueAt;
  const timeoutAt = nextTimeoutAt(state, timeoutGraceMs);
  const first = earlier(jobAt, scheduleAt);
  return earlier(first, timeoutAt);
};

const earlier = (left: number | null, right: number | null): number | null =>
  left === null ? right : right === null ? left : Math.min(left, right);

/**
 * When the earliest executing attempt with a `timeout_ms` outlives it plus
 * `graceMs` (what `TimeoutJobs` would fail then), or null.
 */
export const nextTimeoutAt = (state: State, graceMs: number): number | null => {
  const first = state.indexes.deadlines.first();
  return first === undefined ? null : attemptDeadline(first[0]) + graceMs;
};

/** Active schedules with next_due_at <= now, earliest first (what `Tick` would advance). */
export const dueSchedules = (state: State, now: number): ReadonlyArray<Schedule> => {
  const schedules: Array<Schedule> = [];
  state.indexes.due.forEachWhile((_, schedule) => {
    if (schedule.nextDueAt > now) return false;
    schedules.push(schedule);
    return true;
  });
  return schedules;
};

/** The queue names that have jobs in the state, ascending. */
export const queues = (state: State): ReadonlyArray<string> => [...state.indexes.counts.keys()];
