/**
 * The one place a job record's fields change. `copy` builds a record with
 * every field in one order (a single hidden class for all jobs keeps the
 * fold's property accesses monomorphic); `applyInPlace` writes the effect of
 * a legal event. `Job.applied` combines them into a new immutable record;
 * the generation builder updates the records it owns in place and copies
 * them once when it publishes a state, so no mutable record ever escapes.
 */
import type {
  JobAvailable,
  JobCancelled,
  JobError,
  JobFinished,
  JobInserted,
  JobInsertedV3,
  JobRedriven,
  JobRetried,
  JobSnapshot,
  JobSnapshotV3,
  JobStarted,
  JobState,
  ResultRecorded,
} from "../Event.js";
import type { Value } from "../Value.js";

// The record's types are declared here, below `Job.ts` (which re-exports
// them, and where users see them), so that both modules import one way.

/** A recorded result: the value of (10,2) and when it was recorded. */
export interface JobResult {
  readonly value: Value;
  readonly at: number;
}

/** A job as the state holds it: every field of EVENTS.md plus its result and schedule. */
export interface Job {
  readonly jobId: number;
  readonly queue: string;
  readonly worker: string;
  readonly args: Value;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly attempt: number;
  readonly state: JobState;
  readonly insertedAt: number;
  readonly scheduledAt: number;
  readonly attemptedAt: number | null;
  readonly finishedAt: number | null;
  /** Failed attempts, ascending by attempt. */
  readonly errors: ReadonlyArray<JobError>;
  /** The (10,2) result of a completed job, or null. */
  readonly result: JobResult | null;
  /** The schedule whose active_job_ids hold this job, or null. */
  readonly scheduleId: string | null;
  /** EVENTS-V3.md's unique key (scoped to the queue), or null. */
  readonly uniqueKey: string | null;
  /** How long after it finishes the job still blocks its key, or null (only while non-terminal). */
  readonly uniquePeriodMs: number | null;
  /** The bound of one attempt, or null. */
  readonly timeoutMs: number | null;
}

/** The events that change an existing job. */
export type JobTransitionEvent =
  | JobAvailable
  | JobStarted
  | JobFinished
  | JobCancelled
  | JobRetried
  | JobRedriven
  | ResultRecorded;

/** A job record its owner may update. */
export type MutableJob = { -readonly [Field in keyof Job]: Job[Field] };

/** The errors of a job that has none (shared). */
export const noErrors: ReadonlyArray<JobError> = [];

/**
 * A record's shape with its times null, made once before any job (2026-12-04,
 * issue 19; docs/core.md, "Times held as shared numbers"). V8 keeps a field
 * that has only ever held numbers as a "double" field, a 16-byte box of its
 * own in every object, and times in ms never fit its small integers: so
 * `insertedAt` and `scheduledAt` cost 32 bytes a job in boxes. Every record
 * is built by a literal with these keys in this order, so all share one
 * hidden class with this object; once a time field of that class has held
 * null, V8 keeps it as a tagged field, which points at a number that many
 * records can share (`sharedTime`). Never read; exported so that no tool
 * drops it as unused, and so that a test can see it was made.
 */
export const timesTaggedShape = {
  jobId: 0,
  queue: "",
  worker: "",
  args: null,
  priority: 0,
  maxAttempts: 0,
  attempt: 0,
  state: "",
  insertedAt: null,
  scheduledAt: null,
  attemptedAt: null,
  finishedAt: null,
  errors: noErrors,
  result: null,
  scheduleId: null,
  uniqueKey: null,
  uniquePeriodMs: null,
  timeoutMs: null,
};

/** Times below this are V8 small integers, kept in the field itself: nothing to share. */
const sharedTimeMin = 2 ** 30;

// The last time handed out. Module state, but of no consequence to any
// result: `sharedTime` returns a number equal to its argument either way.
let lastTime = sharedTimeMin;

/**
 * `time` itself, as the very number the previous call returned when the two
 * are equal: a tagged field then points at the number the previous record's
 * field points at, rather than at a box of its own. Jobs inserted or started
 * in the same millisecond hold one 16-byte number between them. Only for
 * the times an event takes from its `now` (inserted, attempted, finished):
 * they come in order, where a scheduled or retry time in the future would
 * push the current millisecond out of this one-entry memory.
 */
export const sharedTime = (time: number): number => {
  // Small integers and -0 (which would equal 0) are returned as they are.
  if (!(time >= sharedTimeMin)) return time;
  if (time !== lastTime) lastTime = time;
  return lastTime;
};

/**
 * A job's `scheduledAt`, as the very number of its `insertedAt` when the
 * two are the same (-0 is not 0 here): one number for both fields.
 */
const scheduledTime = (scheduledAt: number, insertedAt: number): number =>
  Object.is(scheduledAt, insertedAt) ? insertedAt : scheduledAt;

/** The record an insertion creates: `scheduled` when scheduled_at > inserted_at, else `available`. */
export const inserted = (event: JobInserted | JobInsertedV3): MutableJob => {
  const insertedAt = sharedTime(event.insertedAt);
  return {
    jobId: event.jobId,
    queue: event.queue,
    worker: event.worker,
    args: event.args,
    priority: event.priority,
    maxAttempts: event.maxAttempts,
    attempt: 0,
    state: event.scheduledAt > insertedAt ? "scheduled" : "available",
    insertedAt,
    scheduledAt: scheduledTime(event.scheduledAt, insertedAt),
    attemptedAt: null,
    finishedAt: null,
    errors: noErrors,
    result: null,
    scheduleId: null,
    uniqueKey: event._tag === "JobInsertedV3" ? event.uniqueKey : null,
    uniquePeriodMs: event._tag === "JobInsertedV3" ? event.uniquePeriodMs : null,
    timeoutMs: event._tag === "JobInsertedV3" ? event.timeoutMs : null,
  };
};

/**
 * The record a snapshot part restores (result and schedule come from later
 * base records). Its times are shared as `inserted` shares them (2026-12-04:
 * a state restored from an image held ~25 bytes a job more than the fold
 * of the same jobs' inserts, a number of its own per time field).
 */
export const restored = (snapshot: JobSnapshot | JobSnapshotV3): MutableJob => {
  const insertedAt = sharedTime(snapshot.insertedAt);
  return {
    jobId: snapshot.jobId,
    queue: snapshot.queue,
    worker: snapshot.worker,
    args: snapshot.args,
    priority: snapshot.priority,
    maxAttempts: snapshot.maxAttempts,
    attempt: snapshot.attempt,
    state: snapshot.state,
    insertedAt,
    scheduledAt: scheduledTime(snapshot.scheduledAt, insertedAt),
    attemptedAt: snapshot.attemptedAt === null ? null : sharedTime(snapshot.attemptedAt),
    finishedAt: snapshot.finishedAt === null ? null : sharedTime(snapshot.finishedAt),
    errors: snapshot.errors.length === 0 ? noErrors : snapshot.errors,
    result: null,
    scheduleId: null,
    uniqueKey: "uniqueKey" in snapshot ? snapshot.uniqueKey : null,
    uniquePeriodMs: "uniquePeriodMs" in snapshot ? snapshot.uniquePeriodMs : null,
    timeoutMs: "timeoutMs" in snapshot ? snapshot.timeoutMs : null,
  };
};

/** A fresh record with the same fields. */
export const copy = (job: Job): MutableJob => ({
  jobId: job.jobId,
  queue: job.queue,
  worker: job.worker,
  args: job.args,
  priority: job.priority,
  maxAttempts: job.maxAttempts,
  attempt: job.attempt,
  state: job.state,
  insertedAt: job.insertedAt,
  scheduledAt: job.scheduledAt,
  attemptedAt: job.attemptedAt,
  finishedAt: job.finishedAt,
  errors: job.errors,
  result: job.result,
  scheduleId: job.scheduleId,
  uniqueKey: job.uniqueKey,
  uniquePeriodMs: job.uniquePeriodMs,
  timeoutMs: job.timeoutMs,
});

/**
 * Writes the effect of a legal event (EVENTS.md "effect" column). Arrays
 * and result objects are replaced, never mutated, since copies share them.
 */
export const applyInPlace = (job: MutableJob, event: JobTransitionEvent): void => {
  switch (event._tag) {
    case "JobAvailable":
      job.state = "available";
      return;
    case "JobStarted":
      job.state = "executing";
      job.attempt = event.attempt;
      job.attemptedAt = sharedTime(event.at);
      return;
    case "JobFinished":
      job.state = event.outcome;
      job.finishedAt = sharedTime(event.at);
      if (event.error !== null) {
        job.errors = [...job.errors, { attempt: job.attempt, at: event.at, error: event.error }];
      }
      job.scheduleId = null;
      return;
    case "JobCancelled":
      job.state = "cancelled";
      job.finishedAt = sharedTime(event.at);
      job.scheduleId = null;
      return;
    case "JobRetried":
      job.state = "retryable";
      job.scheduledAt = event.retryAt;
      job.errors = [...job.errors, { attempt: job.attempt, at: event.at, error: event.error }];
      return;
    case "ResultRecorded":
      job.result = { value: event.result, at: event.at };
      return;
    case "JobRedriven":
      // Attempt and errors are kept; schedule membership is not restored.
      job.state = "available";
      job.scheduledAt = sharedTime(event.at);
      job.finishedAt = null;
      job.maxAttempts = event.maxAttempts;
      return;
    default:
      return;
  }
};
