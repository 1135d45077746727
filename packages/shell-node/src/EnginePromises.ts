/**
 * The engine's promise face, for applications not written with Effect.
 *
 * Every command behaves exactly as its Effect twin on `EngineService` (same
 * queue, same drain, same durability wait) but is answered by settling a
 * promise instead of resuming a fiber: no fiber, runtime or scope is made
 * per command, which is most of what `Effect.runPromise(engine.insert(..))`
 * costs on a busy queue. A promise rejects with the typed error its Effect
 * twin fails with (`Rejected`, `WriterFailed`, `PendingFull`, ...: tagged
 * `Error`s, told apart by `_tag`), and with the defect itself on a bug.
 * Reads are synchronous: they read the committed state in memory.
 */
import type { Commands, Event, Job, Query, Schedule, State, Value } from "@tay/core";
import { Cause, Effect, Exit, Option } from "effect";
import type { FailOptions, JobFilter, TickReport } from "./Engine.js";
import type { CompactionReport } from "./Store.js";

export interface EnginePromises {
  /** Inserts one job; resolves with it as inserted, once durable. */
  readonly insert: (job: Commands.NewJob) => Promise<Job.Job>;
  /** Inserts several jobs atomically (one mutation). */
  readonly insertMany: (jobs: ReadonlyArray<Commands.NewJob>) => Promise<ReadonlyArray<Job.Job>>;
  /** Starts up to `limit` (default 1) available jobs of `queue` in claim order; may be none. */
  readonly claim: (queue: string, limit?: number) => Promise<ReadonlyArray<Job.Job>>;
  /** Completes an executing job, recording `result` with it when given. */
  readonly complete: (jobId: number, result?: Value.Value) => Promise<Job.Job>;
  /** Fails an executing job: retried after the backoff, or discarded. */
  readonly fail: (jobId: number, error: string, options?: FailOptions) => Promise<Job.Job>;
  /** Cancels a job that is not terminal. */
  readonly cancel: (jobId: number, reason?: string) => Promise<Job.Job>;
  /** Registers or re-registers a schedule; `expectedRevision` 0 means "must be new". */
  readonly registerSchedule: (
    scheduleId: string,
    definition: Event.ScheduleDefinition,
    expectedRevision?: number,
  ) => Promise<Schedule.Schedule>;
  /** Cancels a schedule (optionally only at `expectedRevision`). */
  readonly cancelSchedule: (
    scheduleId: string,
    expectedRevision?: number,
  ) => Promise<Schedule.Schedule>;
  /** Makes due jobs available and delivers or skips due schedule occurrences. */
  readonly tick: () => Promise<TickReport>;
  /** Fails every job executing since before `startedBefore`; resolves with how many. */
  readonly rescue: (startedBefore: number, error: string) => Promise<number>;
  /** Writes a new generation without terminal jobs finished before now - retentionMs. */
  readonly compact: (retentionMs: number) => Promise<CompactionReport>;
  /** The committed state (only durable batches). */
  readonly state: () => State.State;
  readonly job: (jobId: number) => Job.Job | undefined;
  readonly jobs: (filter?: JobFilter) => ReadonlyArray<Job.Job>;
  readonly schedule: (scheduleId: string) => Schedule.Schedule | undefined;
  readonly schedules: () => ReadonlyArray<Schedule.Schedule>;
  readonly counts: () => ReadonlyMap<string, Query.Counts>;
  /** The earliest time a `tick` has work to do, or null. */
  readonly nextWakeAt: () => number | null;
}

/**
 * Runs `effect` as a promise that rejects with its typed failure itself
 * (not wrapped in a `FiberFailure`, as `Effect.runPromise` does), or with
 * the squashed cause of a defect or an interruption.
 */
export const runToPromise = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromiseExit(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value;
    const failure = Cause.failureOption(exit.cause);
    throw Option.isSome(failure) ? failure.value : Cause.squash(exit.cause);
  });
