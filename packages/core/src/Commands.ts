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
import type { CatchUp, RateLimit, ScheduleDefinition } from "./Event.js";
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
  /**
   * EVENTS-V3.md: while a job of the same queue with this key is not
   * terminal (or finished within `uniquePeriodMs`), the insert appends
   * nothing and answers that job, marked as a duplicate.
   */
  readonly uniqueKey?: string;
  readonly uniquePeriodMs?: number;
  /** The bound of one attempt, in ms (EVENTS-V3.md). */
  readonly timeoutMs?: number;
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
  /**
   * EVENTS-V3.md: the zone the cron is read in (an IANA zone, or "UTC").
   * With any of these three fields the registration is a (13,3), its
   * missing ones defaulting to "UTC", "once" and null; without them, a (13,2).
   */
  readonly timezone?: string;
  readonly catchUp?: CatchUp;
  readonly catchUpWindowMs?: number | null;
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

/**
 * Run a discarded or cancelled job again (EVENTS-V3.md (20,3)), keeping its
 * attempt and errors. `maxAttempts` must exceed the job's attempt; absent,
 * it is the job's max_attempts, or attempt + 1 when that is used up.
 */
export interface RedriveJob {
  readonly _tag: "RedriveJob";
  readonly now: number;
  readonly jobId: number;
  readonly maxAttempts?: number;
  readonly reason: string | null;
}

/**
 * Set a queue's state (EVENTS-V3.md (24,3)): each field given replaces the
 * queue's current one, each left out is kept (null removes a limit).
 */
export interface SetQueueState {
  readonly _tag: "SetQueueState";
  readonly now: number;
  readonly queue: string;
  readonly paused?: boolean;
  readonly concurrency?: number | null;
  readonly rateLimit?: RateLimit | null;
}

/**
 * Fail, with error "timeout", every executing job with a `timeout_ms` whose
 * attempt started at or before `now - timeout_ms - graceMs` (EVENTS-V3.md),
 * by the usual retry rules; at most `limit` records.
 */
export interface TimeoutJobs {
  readonly _tag: "TimeoutJobs";
  readonly now: number;
  readonly graceMs: number;
  readonly limit?: number;
  readonly backoff?: Backoff.Policy;
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
  | Tick
  | RedriveJob
  | SetQueueState
  | TimeoutJobs;

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
/** Builds a `RedriveJob` command. */
export const redriveJob = (fields: Fields<RedriveJob>): RedriveJob => ({
  _tag: "RedriveJob",
  ...fields,
});
/** Builds a `SetQueueState` command. */
export const setQueueState = (fields: Fields<SetQueueState>): SetQueueState => ({
  _tag: "SetQueueState",
  ...fields,
});
/** Builds a `TimeoutJobs` command. */
export const timeoutJobs = (fields: Fields<TimeoutJobs>): TimeoutJobs => ({
  _tag: "TimeoutJobs",
  ...fields,
});
