/**
 * The state a history folds to: every job, every schedule, `last_job_id`,
 * and the indexes the deciders and queries need.
 *
 * A `State` is immutable and persistent: `evolve` returns a new state that
 * shares all unchanged structure with the old one, and both stay valid.
 * The indexes are derived from the jobs and schedules (they are never
 * compared by `equals`); read them through `Query` rather than directly.
 */
import { jobStates, type JobState } from "./Event.js";
import { type Job, equals as jobEquals } from "./Job.js";
import { FactMap } from "./internal/FactMap.js";
import { IdMap } from "./internal/IdMap.js";
import { compareStrings, SortedMap } from "./internal/SortedMap.js";
import { UniqueIndex } from "./internal/UniqueIndex.js";
import { type QueueState, equals as queueEquals } from "./Queue.js";
import { type Schedule, equals as scheduleEquals } from "./Schedule.js";
import { type Fact, equals as factEquals } from "./Terminal.js";

/** Number of jobs per state, indexed like `Event.jobStates`. */
export type StateCounts = ReadonlyArray<number>;

/**
 * Derived indexes; each is persistent like the state itself. The job and
 * schedule indexes (the `SortedMap<_, null>`s) are keys-only maps
 * (`SortedMap.keysOnly`): their leaves hold no array of `null`s, and they
 * read as maps of `null`s.
 */
export interface Indexes {
  /** Per queue: the available jobs in claim order (priority, scheduled_at, job_id). */
  readonly available: SortedMap<string, SortedMap<Job, null>>;
  /** Scheduled and retryable jobs by (scheduled_at, job_id): the ones to make available. */
  readonly pending: SortedMap<Job, null>;
  /** Executing jobs by (attempted_at, job_id): the ones a rescue looks at. */
  readonly executing: SortedMap<Job, null>;
  /**
   * Executing jobs with a `timeout_ms`, by (attempted_at + timeout_ms,
   * job_id): the attempts a timeout looks at (EVENTS-V3.md).
   */
  readonly deadlines: SortedMap<Job, null>;
  /** Schedules that are not cancelled, by (next_due_at, schedule_id). */
  readonly due: SortedMap<Schedule, null>;
  /** Per queue: job counts by state. */
  readonly counts: SortedMap<string, StateCounts>;
  /**
   * Per (queue, unique key): the ids of the jobs holding the key, ascending
   * (`UniqueIndex.holders`). Only jobs with a unique key are listed.
   */
  readonly unique: UniqueIndex;
  /**
   * Per rate-limited queue: the `at` of its latest starts (at most its
   * limit's count), ascending. Derived from this generation's tail only:
   * compaction does not carry the window (EVENTS-V3.md).
   */
  readonly starts: SortedMap<string, ReadonlyArray<number>>;
  /**
   * Whether the generation folded holds a schema-3 record (EVENTS-V3.md:
   * `status` reports "event schema 3 in use"). Derived, not compared.
   */
  readonly schema3: boolean;
}

/** The folded state. Readonly: every change goes through `evolve`. */
export interface State {
  /** The largest job id ever inserted (0 when none), kept across compaction. */
  readonly lastJobId: number;
  /**
   * Every job held whole, by id: every job of a full state; in a lean
   * state, every job but the completed ones whose facts alone are kept.
   */
  readonly jobs: IdMap<Job>;
  /**
   * Lean states only (empty otherwise): the completed jobs without a unique
   * key, as the facts a rule still needs (`Terminal.Fact`), packed about
   * four bytes a job. Their whole records live in the shell's terminal
   * index (docs/core.md).
   */
  readonly terminal: FactMap;
  /** True when completed jobs leave `jobs` for `terminal` as they complete. */
  readonly lean: boolean;
  /** Every schedule by id. */
  readonly schedules: SortedMap<string, Schedule>;
  /** Every queue whose state is not the default (EVENTS-V3.md), by name. */
  readonly queues: SortedMap<string, QueueState>;
  readonly indexes: Indexes;
}

/**
 * A queue and a unique key joined in one string, the queue's length first,
 * so that no two (queue, key) pairs share one: the generation fold's key
 * for its unique map, and `UniqueIndex.get`'s (the index itself is keyed
 * by a hash of the pair since 2026-12-02).
 */
export const uniqueIndexKey = (queue: string, uniqueKey: string): string =>
  `${queue.length}:${queue}${uniqueKey}`;

/** Claim order: priority (0 first), then scheduled_at, then job_id. */
export const compareClaimOrder = (left: Job, right: Job): number =>
  left.priority - right.priority ||
  left.scheduledAt - right.scheduledAt ||
  left.jobId - right.jobId;

/** Pending order: scheduled_at, then job_id. */
export const comparePendingOrder = (left: Job, right: Job): number =>
  left.scheduledAt - right.scheduledAt || left.jobId - right.jobId;

/** Executing order: attempted_at, then job_id. */
export const compareExecutingOrder = (left: Job, right: Job): number =>
  (left.attemptedAt ?? 0) - (right.attemptedAt ?? 0) || left.jobId - right.jobId;

/** The time an executing job's attempt outlives its `timeout_ms` (Infinity without one). */
export const attemptDeadline = (job: Job): number =>
  job.timeoutMs === null ? Number.POSITIVE_INFINITY : (job.attemptedAt ?? 0) + job.timeoutMs;

/** Deadline order: attempted_at + timeout_ms, then job_id. */
export const compareDeadlineOrder = (left: Job, right: Job): number =>
  attemptDeadline(left) - attemptDeadline(right) || left.jobId - right.jobId;

/** Due order: next_due_at, then schedule_id. */
export const compareDueOrder = (left: Schedule, right: Schedule): number =>
  left.nextDueAt - right.nextDueAt || compareStrings(left.scheduleId, right.scheduleId);

/** The index of each job state in `StateCounts`. */
export const stateIndex: { readonly [S in JobState]: number } = {
  scheduled: 0,
  available: 1,
  executing: 2,
  retryable: 3,
  completed: 4,
  discarded: 5,
  cancelled: 6,
};

/** Zero jobs in every state. */
export const zeroCounts: StateCounts = jobStates.map(() => 0);

/** The state of the empty history. */
export const initialState: State = {
  lastJobId: 0,
  jobs: IdMap.empty(),
  terminal: FactMap.empty(),
  lean: false,
  schedules: SortedMap.empty(compareStrings),
  queues: SortedMap.empty(compareStrings),
  indexes: {
    available: SortedMap.empty(compareStrings),
    pending: SortedMap.keysOnly(comparePendingOrder),
    executing: SortedMap.keysOnly(compareExecutingOrder),
    deadlines: SortedMap.keysOnly(compareDeadlineOrder),
    due: SortedMap.keysOnly(compareDueOrder),
    counts: SortedMap.empty(compareStrings),
    unique: UniqueIndex.empty(),
    starts: SortedMap.empty(compareStrings),
    schema3: false,
  },
};

/**
 * The lean state of the empty history: folding into it keeps completed jobs
 * without a unique key as facts only (docs/core.md, "Memory bounded by
 * active jobs"). Every history it refuses, the full state refuses alike.
 */
export const leanInitialState: State = { ...initialState, lean: true };

/** True when the folded generation holds a schema-3 record (EVENTS-V3.md). */
export const usesSchema3 = (state: State): boolean => state.indexes.schema3;

/** The state of a queue (undefined for the default: unpaused, no limits). */
export const queue = (state: State, name: string): QueueState | undefined => state.queues.get(name);

/**
 * The job with this id held whole, or undefined (in a lean state, a
 * completed job whose facts alone are held is undefined here: see `fact`).
 */
export const job = (state: State, jobId: number): Job | undefined => state.jobs.get(jobId);

/** The facts a lean state keeps of this completed job, or undefined. */
export const fact = (state: State, jobId: number): Fact | undefined => state.terminal.get(jobId);

/** True when the state holds the job, whole or as facts. */
export const hasJob = (state: State, jobId: number): boolean =>
  state.jobs.has(jobId) || state.terminal.has(jobId);

/** The schedule with this id, or undefined. */
export const schedule = (state: State, scheduleId: string): Schedule | undefined =>
  state.schedules.get(scheduleId);

/** Every job held whole, ascending by id. */
export const jobs = (state: State): IterableIterator<Job> => state.jobs.values();

/** The jobs held whole with ids `last` and below, descending by id (what lies above is passed over). */
export function* jobsDownFrom(state: State, last: number): IterableIterator<Job> {
  for (const [, job] of state.jobs.entriesDownFrom(last)) yield job;
}

/** The jobs held whole with ids `first` and above, ascending by id (what lies below is passed over). */
export function* jobsFrom(state: State, first: number): IterableIterator<Job> {
  for (const [, job] of state.jobs.entriesFrom(first)) yield job;
}

/** Every schedule, ascending by id (UTF-16 order). */
export const schedules = (state: State): IterableIterator<Schedule> => state.schedules.values();

/**
 * Number of jobs held, whole or as facts (terminal ones included until
 * compaction drops them).
 */
export const jobCount = (state: State): number => state.jobs.size + state.terminal.size;

interface Entries<V> {
  readonly size: number;
  values(): IterableIterator<V>;
}

const sameEntries = <V>(
  left: Entries<V>,
  right: Entries<V>,
  equal: (left: V, right: V) => boolean,
): boolean => {
  if (left.size !== right.size) return false;
  const others = right.values();
  for (const value of left.values()) {
    const other = others.next();
    if (other.done === true || !equal(value, other.value)) return false;
  }
  return true;
};

interface IdEntries<V> {
  readonly size: number;
  entries(): IterableIterator<readonly [number, V]>;
}

const sameIdEntries = <V>(
  left: IdEntries<V>,
  right: IdEntries<V>,
  equal: (left: V, right: V) => boolean,
): boolean => {
  if (left.size !== right.size) return false;
  const others = right.entries();
  for (const [id, value] of left.entries()) {
    const other = others.next();
    if (other.done === true || other.value[0] !== id || !equal(value, other.value[1])) return false;
  }
  return true;
};

/**
 * Equality of what a history determines: last_job_id, every job, fact and
 * schedule field by field (indexes are derived and not compared). A lean
 * state equals only a lean state.
 */
export const equals = (left: State, right: State): boolean =>
  left === right ||
  (left.lastJobId === right.lastJobId &&
    left.lean === right.lean &&
    sameEntries(left.jobs, right.jobs, jobEquals) &&
    sameIdEntries(left.terminal, right.terminal, factEquals) &&
    sameEntries(left.schedules, right.schedules, scheduleEquals) &&
    sameEntries(left.queues, right.queues, queueEquals));
