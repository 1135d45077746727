/**
 * Why a decider refuses a command: a closed, tagged set of plain values.
 * A rejection means nothing was decided (no event to append).
 */
import type { CommandTag } from "./Commands.js";
import type { JobState } from "./Event.js";

/** The command names a job the state does not have (never inserted, or compacted away). */
export interface JobNotFound {
  readonly _tag: "JobNotFound";
  readonly jobId: number;
}

/** The job's state does not allow the command (for example completing a job that is not executing). */
export interface InvalidTransition {
  readonly _tag: "InvalidTransition";
  readonly jobId: number;
  readonly from: JobState;
  readonly command: CommandTag;
}

/** The command names a schedule the state does not have. */
export interface ScheduleNotFound {
  readonly _tag: "ScheduleNotFound";
  readonly scheduleId: string;
}

/** The schedule is already cancelled. */
export interface ScheduleAlreadyCancelled {
  readonly _tag: "ScheduleAlreadyCancelled";
  readonly scheduleId: string;
}

/** The CAS token did not match: `actual` is the current revision, 0 when the schedule does not exist. */
export interface RevisionMismatch {
  readonly _tag: "RevisionMismatch";
  readonly scheduleId: string;
  readonly expected: number;
  readonly actual: number;
}

/** A definition without exactly one of every_ms and cron, with a bad cron, or with no future occurrence. */
export interface InvalidDefinition {
  readonly _tag: "InvalidDefinition";
  readonly scheduleId: string;
  readonly detail: string;
}

/** A field the codec or the tables would refuse (name bytes, priority, a non-encodable value, ...). */
export interface InvalidField {
  readonly _tag: "InvalidField";
  readonly field: string;
  readonly detail: string;
}

/** A record whose payload could exceed the record bound. */
export interface TooLarge {
  readonly _tag: "TooLarge";
  readonly bytes: number;
  readonly limit: number;
}

/** Job ids would pass 2^53-1. */
export interface IdsExhausted {
  readonly _tag: "IdsExhausted";
  readonly lastJobId: number;
  readonly requested: number;
}

/**
 * A `complete` or `fail` for an attempt that is no longer the job's
 * current one (the job was rescued, timed out, retried and claimed again,
 * cancelled, or already finished): a late worker can never end a job twice.
 */
export interface StaleAttempt {
  readonly _tag: "StaleAttempt";
  readonly jobId: number;
  /** The attempt the command ends. */
  readonly attempt: number;
  /** The job's attempt now, and its state. */
  readonly currentAttempt: number;
  readonly state: JobState;
}

/**
 * A redrive of a job whose unique key another non-terminal job of its queue
 * holds now (EVENTS-V3.md): the job cannot run again until that one ends.
 */
export interface UniqueKeyTaken {
  readonly _tag: "UniqueKeyTaken";
  readonly jobId: number;
  readonly queue: string;
  readonly uniqueKey: string;
  readonly heldBy: number;
}

/** Every reason a decider refuses a command. */
export type Rejection =
  | JobNotFound
  | InvalidTransition
  | ScheduleNotFound
  | ScheduleAlreadyCancelled
  | RevisionMismatch
  | InvalidDefinition
  | InvalidField
  | TooLarge
  | IdsExhausted
  | StaleAttempt
  | UniqueKeyTaken;

/** The name of a rejection. */
export type RejectionTag = Rejection["_tag"];
