/**
 * A running attempt's progress (BullMQ's `updateProgress`): a value its
 * handler reports while the job executes, for whoever watches it. It is
 * not an event: EVENTS.md and EVENTS-V3.md have none for it, and a record
 * per report would grow the log with what loses its meaning once the
 * attempt ends. The engine holds the latest report of each executing
 * attempt in memory (docs/core.md, "Progress"); this module is the rule
 * for accepting one and for when one still counts.
 */
import * as Either from "fp-ts/lib/Either.js";
import * as Fields from "./internal/Fields.js";
import { ruleJob } from "./internal/Store.js";
import type { Job } from "./Job.js";
import * as Limits from "./Limits.js";
import type { Rejection } from "./Rejection.js";
import type { State } from "./State.js";
import * as Value from "./Value.js";

/** The latest report of one attempt. */
export interface Progress {
  readonly jobId: number;
  readonly attempt: number;
  /** In canonical form, as a result would be kept. */
  readonly value: Value.Value;
  /** When it was reported (the reporter's engine's clock). */
  readonly at: number;
  /** Its encoded size: what holding it costs, bounded by `progressBytesMax`. */
  readonly bytes: number;
}

/**
 * The largest progress value, encoded: 64 KiB. The engine holds one per
 * executing attempt, so the bound is what keeps its memory tied to the
 * jobs running (a page of a log's tail fits; a file does not).
 */
export const progressBytesMax = 65_536;

/** What a handler reports. */
export interface Report {
  readonly jobId: number;
  readonly attempt: number;
  readonly value: unknown;
  readonly at: number;
}

const invalid = (field: string, detail: string): Rejection => ({
  _tag: "InvalidField",
  field,
  detail,
});

/**
 * The report as held, or why it is refused: `StaleAttempt` when the job is
 * not executing `attempt` (the attempt ended, or another began), as a
 * late `complete` is; `InvalidField` naming the path inside `progress`
 * that is not a value; `TooLarge` past `progressBytesMax`.
 */
export const report = (state: State, input: Report): Either.Either<Rejection, Progress> => {
  if (!Fields.isTime(input.at)) return Either.left(invalid("at", "must be an integer time"));
  if (!Fields.isIntegerIn(input.attempt, 1, Limits.maxAttemptsMax)) {
    return Either.left(invalid("attempt", `must be an integer 1..${Limits.maxAttemptsMax}`));
  }
  const job = Fields.isId(input.jobId) ? ruleJob(state, input.jobId) : undefined;
  if (job === undefined) return Either.left({ _tag: "JobNotFound", jobId: input.jobId });
  if (!isRunning(job, input.attempt)) {
    return Either.left({
      _tag: "StaleAttempt",
      jobId: input.jobId,
      attempt: input.attempt,
      currentAttempt: job.attempt,
      state: job.state,
    });
  }
  const value = checkValue(input.value);
  if (Either.isLeft(value)) return value;
  return Either.right({
    jobId: job.jobId,
    attempt: input.attempt,
    value: value.right.value,
    at: input.at,
    bytes: value.right.bytes,
  });
};

/**
 * A progress value in canonical form with its encoded size, or why it is
 * refused whatever the attempt (`InvalidField` naming the path inside
 * `progress`, `TooLarge`): what a remote worker checks before it sends.
 */
export const checkValue = (value: unknown): Either.Either<Rejection, Value.Canonical> => {
  const canonical = Value.canonical(value, Value.resultDepthMax);
  if (canonical._tag === "Unencodable") {
    return Either.left(invalid(`progress${canonical.path}`, canonical.detail));
  }
  return canonical.bytes > progressBytesMax
    ? Either.left({ _tag: "TooLarge", bytes: canonical.bytes, limit: progressBytesMax })
    : Either.right(canonical);
};

/** Whether `progress` is still its job's: the job executes the attempt it was reported for. */
export const isCurrent = (state: State, progress: Progress): boolean => {
  const job = ruleJob(state, progress.jobId);
  return job !== undefined && isRunning(job, progress.attempt);
};

const isRunning = (job: Job, attempt: number): boolean =>
  job.state === "executing" && job.attempt === attempt;
