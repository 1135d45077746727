/**
 * The write commands on a store another process serves: when opening the
 * store is refused with `Locked` and LOCK names the holder's server
 * socket, `insert`, `schedule`, `cancel`, `retry`, `cancel-schedule`, `pause`,
 * `resume`, `limit`, `retry-all` and `cancel-all` go through
 * that server (`@tay/client`) instead of failing. The answer is the same
 * job or schedule the engine would have printed; a refusal is the
 * server's line (`ServedFailure`, exit 1). `compact` goes through it the
 * same way: the holder compacts its own store.
 */
import { Client, type Wire } from "@tay/client";
import type { Bulk } from "@tay/shell-node";
import type { Commands, Job, Queue, Schedule } from "@tay/core";
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import { ServedFailure, WaitFailed } from "./CliError.js";
import type { Failure } from "./describe.js";

/** A job as an insert answers it: `duplicate` when its unique key named an existing job. */
export type InsertedJob = Client.InsertedJob;

/** A queue's limits as `tay limit` sets them: a limit left out is kept, null removes it. */
export type QueueLimits = Client.QueueLimits;

/** What the write commands ask of a store: the engine's Effect face has it. */
export interface Writer {
  readonly insert: (job: Commands.NewJob) => Effect.Effect<InsertedJob, Failure>;
  readonly registerSchedule: (
    scheduleId: string,
    definition: Commands.ScheduleDefinitionInput,
    expectedRevision?: number,
  ) => Effect.Effect<Schedule.Schedule, Failure>;
  readonly cancel: (jobId: number, reason?: string) => Effect.Effect<Job.Job, Failure>;
  readonly cancelSchedule: (
    scheduleId: string,
    expectedRevision?: number,
  ) => Effect.Effect<Schedule.Schedule, Failure>;
  readonly redrive: (
    jobId: number,
    options: { readonly maxAttempts?: number; readonly reason?: string },
  ) => Effect.Effect<Job.Job, Failure>;
  readonly redriveAll: (
    filter: Bulk.BulkFilter<Bulk.EndedState>,
    options: { readonly maxAttempts?: number; readonly reason?: string },
  ) => Effect.Effect<Bulk.BulkOutcome, Failure>;
  readonly cancelAll: (
    filter: Bulk.BulkFilter<Bulk.ActiveState>,
    reason?: string,
  ) => Effect.Effect<Bulk.BulkOutcome, Failure>;
  /**
   * Waits for a job's end; absent where nothing else can run it (an engine
   * this process opened over a directory holds its lock: no worker runs).
   */
  readonly whenEnded: ((jobId: number) => Effect.Effect<Job.Job, Failure>) | undefined;
  readonly pauseQueue: (queue: string) => Effect.Effect<Queue.QueueState | undefined, Failure>;
  readonly resumeQueue: (queue: string) => Effect.Effect<Queue.QueueState | undefined, Failure>;
  readonly setQueueLimits: (
    queue: string,
    limits: QueueLimits,
  ) => Effect.Effect<Queue.QueueState | undefined, Failure>;
}

/** A failure of a call through the server on `socket`: its tag as the reason, its line. */
export const failureOf = (socket: string) => (error: unknown) => {
  const reason =
    typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Defect";
  const detail = error instanceof Error ? error.message : String(error);
  return new ServedFailure({ reason, socket, detail });
};

/** A client of the server on `socket`, closed with the scope. */
export const clientOf = (socket: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => Promise.resolve(new Client.Client({ socket })),
      catch: failureOf(socket),
    }),
    (opened) => Effect.promise(() => opened.close()),
  );

/** Compacts the store the server on `socket` holds: what it did, and the jobs kept and dropped. */
export const servedCompaction = (
  socket: string,
  retentionMs: number,
): Effect.Effect<Wire.Compaction, Failure, Scope.Scope> =>
  Effect.flatMap(clientOf(socket), (client) =>
    Effect.tryPromise({ try: () => client.compact(retentionMs), catch: failureOf(socket) }),
  );

/** The writer of the server on `socket`, for the scope. */
export const servedWriter = (socket: string): Effect.Effect<Writer, Failure, Scope.Scope> =>
  Effect.gen(function* () {
    const fail = failureOf(socket);
    const client = yield* clientOf(socket);
    const call = <A>(run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: fail });
    return {
      insert: (job) => call(() => client.insert(job)),
      registerSchedule: (scheduleId, definition, expectedRevision) =>
        call(() => client.registerSchedule(scheduleId, definition, expectedRevision)),
      cancel: (jobId, reason) => call(() => client.cancel(jobId, reason)),
      cancelSchedule: (scheduleId, expectedRevision) =>
        call(() => client.cancelSchedule(scheduleId, expectedRevision)),
      redrive: (jobId, options) => call(() => client.redrive(jobId, options)),
      whenEnded: (jobId) =>
        Effect.tryPromise({
          try: () => client.whenEnded(jobId),
          catch: (cause) => new WaitFailed({ path: socket, jobId, cause }),
        }),
      redriveAll: (filter, options) => call(() => client.redriveAll(filter, options)),
      cancelAll: (filter, reason) => call(() => client.cancelAll(filter, reason)),
      pauseQueue: (queue) => call(() => client.pauseQueue(queue)),
      resumeQueue: (queue) => call(() => client.resumeQueue(queue)),
      setQueueLimits: (queue, limits) => call(() => client.setQueueLimits(queue, limits)),
    };
  });
