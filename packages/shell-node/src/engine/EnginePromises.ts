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
import { Effect, Exit, type Layer, Scope } from "effect";
import type { Disk } from "../disk/Disk.js";
import * as Engine from "./Engine.js";
import type { EngineOptions, EngineReport, FailOptions, JobFilter, TickReport } from "./Engine.js";
import * as NodeDisk from "../disk/NodeDisk.js";
import type { CompactionReport } from "../store/Store.js";
import { runToPromise } from "./internal/runToPromise.js";

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

/** How `open` opens: the engine's options, and the disk (Node's by default). */
export interface OpenOptions extends EngineOptions {
  /** The file-system service; a test passes the testkit's `FaultDisk` layer. */
  readonly disk?: Layer.Layer<Disk>;
}

/** An engine opened outside Effect: its promise face, its report, and `close`. */
export interface OpenedEngine extends EnginePromises {
  readonly report: EngineReport;
  /** The Effect face of the same engine, for callers that mix both. */
  readonly engine: Engine.EngineService;
  /**
   * Drains what is pending, closes the store and releases the lock. Safe to
   * call twice. Commands issued after it reject with `StoreClosed`.
   */
  readonly close: () => Promise<void>;
}

/**
 * Opens the engine on the store in `directory` for a program not written
 * with Effect: what `Engine.open` does in a scope, with a promise that
 * rejects with the same typed errors (`Locked`, `IncompleteTail`,
 * `StoreNotFound`, ...: tagged `Error`s, told apart by `_tag`).
 */
export const open = async (directory: string, options: OpenOptions = {}): Promise<OpenedEngine> => {
  const { disk = NodeDisk.layer, ...engineOptions } = options;
  const scope = Effect.runSync(Scope.make());
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void));
  try {
    const engine = await runToPromise(
      Effect.provide(Scope.extend(Engine.open(directory, engineOptions), scope), disk),
    );
    return { ...engine.promises, report: engine.report, engine, close };
  } catch (error) {
    // What the open acquired (the lock, the store) is released before the refusal.
    await close();
    throw error;
  }
};
