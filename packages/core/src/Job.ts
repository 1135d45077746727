/**
 * The job record of the state and its legal transitions (EVENTS.md "Jobs").
 *
 * A `Job` is immutable: a transition returns a new record. The step
 * functions here check only what the job itself decides (its state, attempt
 * and times); ids, membership and ordering across records are the fold's.
 */
import * as Either from "fp-ts/lib/Either.js";
import {
  isTerminal,
  type JobAvailable,
  type JobCancelled,
  type JobError,
  type JobFinished,
  type JobInserted,
  type JobInsertedV3,
  type JobRedriven,
  type JobRetried,
  type JobSnapshot,
  type JobSnapshotV3,
  type JobStarted,
  type ResultRecorded,
} from "./Event.js";
import type { HistoryReason, InvalidSnapshotJob, LastJobIdConflict } from "./HistoryError.js";
import * as Fields from "./internal/Fields.js";
import {
  applyInPlace,
  copy,
  inserted,
  type Job,
  type JobResult,
  type JobTransitionEvent,
  restored,
} from "./internal/JobRecord.js";
import { tagName } from "./internal/Tag.js";
import * as Limits from "./Limits.js";
import * as Value from "./Value.js";

export type { Job, JobResult, JobTransitionEvent } from "./internal/JobRecord.js";

/** The job an insertion creates: `scheduled` when scheduled_at > inserted_at, else `available`. */
export const fromInserted = (event: JobInserted | JobInsertedV3): Job => inserted(event);

/** The job a snapshot part restores (its result and schedule come from later base records). */
export const fromSnapshot = (snapshot: JobSnapshot | JobSnapshotV3): Job => restored(snapshot);

/** True when the job uses a schema-3 field: only a (7,3) snapshot part can carry it. */
export const hasV3Fields = (job: Job): boolean =>
  job.uniqueKey !== null || job.uniquePeriodMs !== null || job.timeoutMs !== null;

/** The (7,3) snapshot-part form of a job. */
export const toSnapshotV3 = (job: Job): JobSnapshotV3 => ({
  ...toSnapshot(job),
  uniqueKey: job.uniqueKey,
  uniquePeriodMs: job.uniquePeriodMs,
  timeoutMs: job.timeoutMs,
});

/** The snapshot-part form of a job (without result and schedule). */
export const toSnapshot = (job: Job): JobSnapshot => ({
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
});

/** Sets the schedule membership back-pointer (kept in step with active_job_ids by the fold). */
export const withSchedule = (job: Job, scheduleId: string | null): Job => {
  const next = copy(job);
  next.scheduleId = scheduleId;
  return next;
};

const invalid = (jobId: number, field: string): InvalidSnapshotJob => ({
  _tag: "InvalidSnapshotJob",
  jobId,
  field,
});

const checkErrors = (snapshot: JobSnapshot): boolean => {
  let previous = 0;
  for (const error of snapshot.errors) {
    if (!Fields.isIntegerIn(error.attempt, previous + 1, snapshot.attempt)) return false;
    if (!Fields.isTime(error.at) || !Fields.isTextKind(error.error)) return false;
    previous = error.attempt;
  }
  return true;
};

// The shape each state can have in a legal history: a base restores only
// jobs that some history of the tables could have produced.
const stateField = (snapshot: JobSnapshot): string | undefined => {
  const { state, attempt, maxAttempts } = snapshot;
  if ((snapshot.finishedAt !== null) !== isTerminal(state)) return "finished_at";
  if ((snapshot.attemptedAt !== null) !== attempt > 0) return "attempted_at";
  switch (state) {
    case "scheduled":
      return attempt === 0 && snapshot.scheduledAt > snapshot.insertedAt ? undefined : "state";
    case "available":
      return attempt < maxAttempts ? undefined : "attempt";
    case "retryable":
      return attempt >= 1 && attempt < maxAttempts ? undefined : "attempt";
    case "executing":
    case "completed":
    case "discarded":
      return attempt >= 1 ? undefined : "attempt";
    case "cancelled":
      return undefined;
    default:
      return "state";
  }
};

const v3Field = (snapshot: JobSnapshot | JobSnapshotV3): string | undefined => {
  if (!("uniqueKey" in snapshot)) return undefined;
  if (snapshot.uniqueKey !== null && !Fields.isNameKind(snapshot.uniqueKey)) return "unique_key";
  if (snapshot.uniquePeriodMs !== null && !Fields.isId(snapshot.uniquePeriodMs)) {
    return "unique_period_ms";
  }
  if (snapshot.timeoutMs !== null && !Fields.isId(snapshot.timeoutMs)) return "timeout_ms";
  return undefined;
};

/**
 * Checks a snapshot job against the field kinds and the shapes a legal
 * history produces; returns the reason to refuse it, or undefined.
 */
export const checkSnapshot = (
  snapshot: JobSnapshot | JobSnapshotV3,
  lastJobId: number,
): InvalidSnapshotJob | LastJobIdConflict | undefined => {
  const extra = v3Field(snapshot);
  if (extra !== undefined) return invalid(snapshot.jobId, extra);
  return checkSnapshotV1(snapshot, lastJobId);
};

const checkSnapshotV1 = (
  snapshot: JobSnapshot,
  lastJobId: number,
): InvalidSnapshotJob | LastJobIdConflict | undefined => {
  const jobId = snapshot.jobId;
  if (!Fields.isId(jobId)) return invalid(jobId, "job_id");
  if (jobId > lastJobId) return { _tag: "LastJobIdConflict", expected: lastJobId, actual: jobId };
  if (!Fields.isNameKind(snapshot.queue)) return invalid(jobId, "queue");
  if (!Fields.isNameKind(snapshot.worker)) return invalid(jobId, "worker");
  if (!Fields.isIntegerIn(snapshot.priority, Limits.priorityMin, Limits.priorityMax)) {
    return invalid(jobId, "priority");
  }
  if (!Fields.isIntegerIn(snapshot.maxAttempts, Limits.maxAttemptsMin, Limits.maxAttemptsMax)) {
    return invalid(jobId, "max_attempts");
  }
  if (!Fields.isIntegerIn(snapshot.attempt, 0, snapshot.maxAttempts))
    return invalid(jobId, "attempt");
  if (!Fields.isTime(snapshot.insertedAt)) return invalid(jobId, "inserted_at");
  if (!Fields.isTime(snapshot.scheduledAt)) return invalid(jobId, "scheduled_at");
  if (!Fields.isTimeOrNull(snapshot.attemptedAt)) return invalid(jobId, "attempted_at");
  if (!Fields.isTimeOrNull(snapshot.finishedAt)) return invalid(jobId, "finished_at");
  if (!checkErrors(snapshot)) return invalid(jobId, "errors");
  const field = stateField(snapshot);
  return field === undefined ? undefined : invalid(jobId, field);
};

const illegal = (job: Job, event: JobTransitionEvent): HistoryReason => ({
  _tag: "IllegalTransition",
  jobId: job.jobId,
  from: job.state,
  event: event._tag,
});

/** (2,1): scheduled or retryable, at >= scheduled_at. */
const checkAvailable = (job: Job, event: JobAvailable): HistoryReason | undefined => {
  if (job.state !== "scheduled" && job.state !== "retryable") return illegal(job, event);
  if (event.at < job.scheduledAt) {
    return { _tag: "NotDue", jobId: job.jobId, scheduledAt: job.scheduledAt, at: event.at };
  }
  return undefined;
};

/** (3,1): available, attempt = previous + 1 <= max_attempts. */
const checkStarted = (job: Job, event: JobStarted): HistoryReason | undefined => {
  if (job.state !== "available") return illegal(job, event);
  if (event.attempt !== job.attempt + 1) {
    return {
      _tag: "AttemptMismatch",
      jobId: job.jobId,
      expected: job.attempt + 1,
      actual: event.attempt,
    };
  }
  if (event.attempt > job.maxAttempts) {
    return {
      _tag: "AttemptsExhausted",
      jobId: job.jobId,
      attempt: event.attempt,
      maxAttempts: job.maxAttempts,
    };
  }
  return undefined;
};

/** (4,1): executing; error null iff completed. */
const checkFinished = (job: Job, event: JobFinished): HistoryReason | undefined => {
  if (job.state !== "executing") return illegal(job, event);
  if ((event.outcome === "completed") !== (event.error === null)) {
    return {
      _tag: "OutcomeErrorMismatch",
      jobId: job.jobId,
      outcome: event.outcome,
      error: event.error,
    };
  }
  return undefined;
};

/** (5,1): not terminal. */
const checkCancelled = (job: Job, event: JobCancelled): HistoryReason | undefined =>
  isTerminal(job.state) ? illegal(job, event) : undefined;

/** (6,1): executing, attempt < max_attempts, retry_at >= at. */
const checkRetried = (job: Job, event: JobRetried): HistoryReason | undefined => {
  if (job.state !== "executing") return illegal(job, event);
  if (job.attempt >= job.maxAttempts) {
    return {
      _tag: "AttemptsExhausted",
      jobId: job.jobId,
      attempt: job.attempt,
      maxAttempts: job.maxAttempts,
    };
  }
  if (event.retryAt < event.at) {
    return { _tag: "RetryBeforeFailure", jobId: job.jobId, at: event.at, retryAt: event.retryAt };
  }
  return undefined;
};

/** (20,3): discarded or cancelled; the new max_attempts above the attempt. */
const checkRedriven = (job: Job, event: JobRedriven): HistoryReason | undefined => {
  if (job.state !== "discarded" && job.state !== "cancelled") return illegal(job, event);
  if (event.maxAttempts <= job.attempt) {
    return {
      _tag: "AttemptsExhausted",
      jobId: job.jobId,
      attempt: job.attempt,
      maxAttempts: event.maxAttempts,
    };
  }
  return undefined;
};

/** (10,2): completed, no result yet. */
const checkResult = (job: Job, event: ResultRecorded): HistoryReason | undefined => {
  if (job.state !== "completed") return illegal(job, event);
  if (job.result !== null) return { _tag: "ResultAlreadyRecorded", jobId: job.jobId };
  return undefined;
};

/**
 * Checks a job event against the job's table row: the reason the table
 * refuses it, or undefined when it is legal.
 */
export const check = (job: Job, event: JobTransitionEvent): HistoryReason | undefined => {
  switch (event._tag) {
    case "JobAvailable":
      return checkAvailable(job, event);
    case "JobStarted":
      return checkStarted(job, event);
    case "JobFinished":
      return checkFinished(job, event);
    case "JobCancelled":
      return checkCancelled(job, event);
    case "JobRetried":
      return checkRetried(job, event);
    case "ResultRecorded":
      return checkResult(job, event);
    case "JobRedriven":
      return checkRedriven(job, event);
    default:
      return absurd(event);
  }
};

const absurd = (event: never): HistoryReason => ({ _tag: "UnknownEvent", found: tagName(event) });

/**
 * The job after a legal event (the caller has checked it): a new record;
 * a member reaching a terminal state also loses its schedule.
 */
export const applied = (job: Job, event: JobTransitionEvent): Job => {
  const next = copy(job);
  applyInPlace(next, event);
  return next;
};

/** Checks, then applies: the job after the event, or the reason it is refused. */
export const step = (job: Job, event: JobTransitionEvent): Job | HistoryReason =>
  check(job, event) ?? applied(job, event);

/** True when a step result is a refusal rather than a job. */
export const isRefusal = (result: Job | HistoryReason): result is HistoryReason => "_tag" in result;

/**
 * Applies one job event to a job: `Right(job)` after the transition, or
 * `Left(reason)` when the tables of EVENTS.md do not allow it.
 */
export const transition = (
  job: Job,
  event: JobTransitionEvent,
): Either.Either<HistoryReason, Job> => {
  const refusal = check(job, event);
  return refusal === undefined ? Either.right(applied(job, event)) : Either.left(refusal);
};

/** True when the job is in `completed`, `discarded` or `cancelled`. */
export const isFinal = (job: Job): boolean => isTerminal(job.state);

const errorsEqual = (left: ReadonlyArray<JobError>, right: ReadonlyArray<JobError>): boolean =>
  left.length === right.length &&
  left.every((error, index) => {
    const other = right[index];
    return (
      other !== undefined &&
      error.attempt === other.attempt &&
      error.at === other.at &&
      error.error === other.error
    );
  });

const resultsEqual = (left: JobResult | null, right: JobResult | null): boolean =>
  left === null || right === null
    ? left === right
    : left.at === right.at && Value.equals(left.value, right.value);

/** Structural equality of two jobs (values by `Value.equals`). */
export const equals = (left: Job, right: Job): boolean =>
  left === right ||
  (left.jobId === right.jobId &&
    left.queue === right.queue &&
    left.worker === right.worker &&
    left.priority === right.priority &&
    left.maxAttempts === right.maxAttempts &&
    left.attempt === right.attempt &&
    left.state === right.state &&
    left.insertedAt === right.insertedAt &&
    left.scheduledAt === right.scheduledAt &&
    left.attemptedAt === right.attemptedAt &&
    left.finishedAt === right.finishedAt &&
    left.scheduleId === right.scheduleId &&
    left.uniqueKey === right.uniqueKey &&
    left.uniquePeriodMs === right.uniquePeriodMs &&
    left.timeoutMs === right.timeoutMs &&
    errorsEqual(left.errors, right.errors) &&
    resultsEqual(left.result, right.result) &&
    Value.equals(left.args, right.args));
