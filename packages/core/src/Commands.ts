/**
 * The commands the deciders accept. Each carries the time it is decided at
 * (`now`, ms since the epoch) so deciding never reads a clock; new job ids
 * come from the state (`last_job_id + 1`, ...).
 *
 * Where a command carries a value (job args, a result, a definition's args)
 * it takes a `Value.Input`: plain objects are maps (`{ user_id: 42 }`). The
 * deciders put its canonical form (`Value.canonical`) into their events.
 */
import type * as Backoff from "./Backoff.js";
import type { ScheduleDefinition } from "./Event.js";
import type * as Value from "./Value.js";

/** Priority of a new job when the command leaves it out (0 runs first). */
export const priorityDefault = 0;

/** max_attempts of a new job when the command leaves it out. */
export const maxAttemptsDefault = 20;

/**
 * A job to insert; `scheduledAt` defaults to `now` (available at once).
 * `args` may hold plain objects; the job inserted holds them as maps.
 */
export interface NewJob {
  readonly queue: string;
  readonly worker: string;
  readonly args: Value.Input;
  readonly priority?: number;
  readonly maxAttempts?: number;
  readonly scheduledAt?: number;
}

/** Insert one or more jobs; several are inserted atomically (one mutation). */
export interface InsertJobs {
  readonly _tag: "InsertJobs";
  readonly now: number;
  readonly jobs: ReadonlyArray<NewJob>;
}

/** Start up to `limit` available jobs of `queue` in (priority, scheduled_at, job_id) order. */
export interface ClaimJobs {
  readonly _tag: "ClaimJobs";
  readonly now: number;
  readonly queue: string;
  readonly limit: number;
}

/**
 * Complete an executing job, optionally recording its result in the same
 * mutation. With `attempt`, only that attempt (`StaleAttempt` otherwise).
 */
export interface CompleteJob {
  readonly _tag: "CompleteJob";
  readonly now: number;
  readonly jobId: number;
  /** May hold plain objects; the result recorded holds them as maps. */
  readonly result?: Value.Input;
  readonly attempt?: number;
}

/**
 * Fail an executing job: retried after the backoff while attempts remain
 * (and `discard` is not set), else discarded. With `attempt`, only that
 * attempt (`StaleAttempt` otherwise).
 */
export interface FailJob {
  readonly _tag: "FailJob";
  readonly now: number;
  readonly jobId: number;
  readonly error: string;
  readonly discard?: boolean;
  readonly backoff?: Backoff.Policy;
  readonly attempt?: number;
}

/** Cancel a job that is not terminal. */
export interface CancelJob {
  readonly _tag: "CancelJob";
  readonly now: number;
  readonly jobId: number;
  readonly reason: string | null;
}

/**
 * Fail every executing job attempted before `startedBefore` (orphans of a
 * previous process, or stuck ones), oldest first, up to `limit` records.
 */
export interface RescueJobs {
  readonly _tag: "RescueJobs";
  readonly now: number;
  readonly startedBefore: number;
  readonly error: string;
  readonly limit?: number;
  readonly backoff?: Backoff.Policy;
}

/** Make scheduled and retryable jobs whose scheduled_at <= now available, up to `limit`. */
export interface MakeDueAvailable {
  readonly _tag: "MakeDueAvailable";
  readonly now: number;
  readonly limit?: number;
}

/**
 * A schedule definition as a registration carries it: an
 * `Event.ScheduleDefinition` whose args may hold plain objects (the
 * registered definition holds them as maps).
 */
export interface ScheduleDefinitionInput extends Omit<ScheduleDefinition, "args"> {
  readonly args: Value.Input;
}

/**
 * Register or re-register a schedule. `expectedRevision` is the CAS token:
 * 0 means "must not exist"; absent means unconditional.
 */
export interface RegisterSchedule {
  readonly _tag: "RegisterSchedule";
  readonly now: number;
  readonly scheduleId: string;
  readonly definition: ScheduleDefinitionInput;
  readonly expectedRevision?: number;
}

/** Cancel a schedule, optionally only at `expectedRevision`. */
export interface CancelSchedule {
  readonly _tag: "CancelSchedule";
  readonly now: number;
  readonly scheduleId: string;
  readonly expectedRevision?: number;
}

/** Deliver or skip the occurrence of every due schedule, up to `limit` records. */
export interface Tick {
  readonly _tag: "Tick";
  readonly now: number;
  readonly limit?: number;
}

/** Every command a decider accepts. */
export type Command =
  | InsertJobs
  | ClaimJobs
  | CompleteJob
  | FailJob
  | CancelJob
  | RescueJobs
  | MakeDueAvailable
  | RegisterSchedule
  | CancelSchedule
  | Tick;

/** The name of a command. */
export type CommandTag = Command["_tag"];

type Fields<C extends Command> = Omit<C, "_tag">;

/** Builds an `InsertJobs` command (constructors let call sites read `Commands.claimJobs({ now, queue, limit })`). */
export const insertJobs = (fields: Fields<InsertJobs>): InsertJobs => ({
  _tag: "InsertJobs",
  ...fields,
});
/** Builds a `ClaimJobs` command. */
export const claimJobs = (fields: Fields<ClaimJobs>): ClaimJobs => ({
  _tag: "ClaimJobs",
  ...fields,
});
/** Builds a `CompleteJob` command. */
export const completeJob = (fields: Fields<CompleteJob>): CompleteJob => ({
  _tag: "CompleteJob",
  ...fields,
});
/** Builds a `FailJob` command. */
export const failJob = (fields: Fields<FailJob>): FailJob => ({ _tag: "FailJob", ...fields });
/** Builds a `CancelJob` command. */
export const cancelJob = (fields: Fields<CancelJob>): CancelJob => ({
  _tag: "CancelJob",
  ...fields,
});
/** Builds a `RescueJobs` command. */
export const rescueJobs = (fields: Fields<RescueJobs>): RescueJobs => ({
  _tag: "RescueJobs",
  ...fields,
});
/** Builds a `MakeDueAvailable` command. */
export const makeDueAvailable = (fields: Fields<MakeDueAvailable>): MakeDueAvailable => ({
  _tag: "MakeDueAvailable",
  ...fields,
});
/** Builds a `RegisterSchedule` command. */
export const registerSchedule = (fields: Fields<RegisterSchedule>): RegisterSchedule => ({
  _tag: "RegisterSchedule",
  ...fields,
});
/** Builds a `CancelSchedule` command. */
export const cancelSchedule = (fields: Fields<CancelSchedule>): CancelSchedule => ({
  _tag: "CancelSchedule",
  ...fields,
});
/** Builds a `Tick` command. */
export const tick = (fields: Fields<Tick>): Tick => ({ _tag: "Tick", ...fields });
