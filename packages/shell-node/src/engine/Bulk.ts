/**
 * Commands over many jobs at once, for operators: run again every
 * discarded job of a queue after an outage (`redriveAll`), or cancel what
 * waits in one (`cancelAll`). BullMQ's `retryJobs`, Oban's
 * `retry_all_jobs` and `cancel_all_jobs`, pg-boss's `retry` and `cancel`
 * over ids answer the same need.
 *
 * Each job is one ordinary command (`redrive`, `cancel`) with every check
 * it has, not one record for all: the jobs are chosen from the committed
 * state when the call starts, and a job changed since (run again or
 * cancelled elsewhere, or its unique key taken by another job) is refused
 * on its own and listed with the refusal, while the others go on. The
 * commands are issued a chunk at a time, so the engine decides a chunk in
 * one drain and one write, and the command queue is never filled past
 * its bound by one call (a command refused as `Overloaded` waits for room
 * and is sent again). Not atomic: a failure of the store rejects the call,
 * and the jobs changed before it stay changed, each durable on its own;
 * calling it again finishes the rest (docs/engine.md, "Commands over many
 * jobs", 2026-12-06).
 */
import type { Job } from "@tay/core";
import type * as Log from "../log/Log.js";
import type { PromiseFace } from "./Engine.js";
import { Overloaded } from "./internal/commandQueue.js";
import { Rejected } from "./internal/engineRequest.js";
import type { RedriveOptions } from "./internal/operations.js";
import type { FileLogKind } from "../store/FileLog.js";

/** The states a job is run again from. */
export const endedStates = ["discarded", "cancelled"] as const;
export type EndedState = (typeof endedStates)[number];

/** The states a job is cancelled from: every state but the terminal ones. */
export const activeStates = ["scheduled", "available", "executing", "retryable"] as const;
export type ActiveState = (typeof activeStates)[number];

/** Which jobs: of one queue (default: every queue), in these states, at most `limit`, ascending by id. */
export interface BulkFilter<S extends Job.Job["state"]> {
  readonly queue?: string;
  readonly states?: ReadonlyArray<S>;
  readonly limit?: number;
}

/** A job the call found and its command refused: its id, the refusal's tag and its message. */
export interface BulkRefusal {
  readonly jobId: number;
  readonly reason: string;
  readonly message: string;
}

/** What a call did: the jobs it changed, ascending by id, and the ones refused. */
export interface BulkOutcome {
  readonly jobIds: ReadonlyArray<number>;
  readonly refused: ReadonlyArray<BulkRefusal>;
}

/** What `redriveAll` runs again without `states`: discarded jobs (a cancel was someone's choice). */
export const redriveStatesDefault: ReadonlyArray<EndedState> = ["discarded"];

/** What `cancelAll` cancels without `states`: jobs waiting to run (not those executing). */
export const cancelStatesDefault: ReadonlyArray<ActiveState> = [
  "scheduled",
  "available",
  "retryable",
];

/** Commands issued at once: one drain's worth, well under the command queue's bound. */
const chunkSize = 256;

/** The engine faces the calls need: a promise face, of a file store or any other log. */
type Face<K extends Log.Kind> = Pick<PromiseFace<K>, "jobs" | "redrive" | "cancel" | "room">;

/** The committed jobs `filter` names, ascending by id. */
const chosen = <K extends Log.Kind, S extends Job.Job["state"]>(
  engine: Face<K>,
  filter: BulkFilter<S>,
  states: ReadonlyArray<S>,
): Array<number> => {
  const ids = new Set<number>();
  for (const state of states) {
    const query = filter.queue === undefined ? { state } : { state, queue: filter.queue };
    for (const job of engine.jobs(query)) ids.add(job.jobId);
  }
  const sorted = [...ids].sort((left, right) => left - right);
  return filter.limit === undefined ? sorted : sorted.slice(0, filter.limit);
};

/**
 * Runs `command` for each of `jobIds`, a chunk at a time; a command refused
 * as `Overloaded` (other callers filled the queue) waits for room and is
 * sent again; a `Rejected` one is listed; any other failure rejects.
 */
const each = async <K extends Log.Kind>(
  engine: Face<K>,
  jobIds: ReadonlyArray<number>,
  command: (jobId: number) => Promise<unknown>,
): Promise<BulkOutcome> => {
  const done: Array<number> = [];
  const refused: Array<BulkRefusal> = [];
  // A cursor into `jobIds`, and the ids to send again first: slicing the
  // rest off the list at every chunk copied it each time, quadratic in the
  // jobs (87 s of copying alone for 1,000,000, 2026-12-06).
  let next = 0;
  let again: Array<number> = [];
  while (next < jobIds.length || again.length > 0) {
    let chunk: ReadonlyArray<number>;
    if (again.length > 0) {
      chunk = again;
      again = [];
    } else {
      chunk = jobIds.slice(next, next + chunkSize);
      next += chunk.length;
    }
    await engine.room();
    const settled = await Promise.allSettled(chunk.map(command));
    for (const [index, outcome] of settled.entries()) {
      const jobId = chunk[index] ?? 0;
      if (outcome.status === "fulfilled") done.push(jobId);
      else if (outcome.reason instanceof Overloaded) again.push(jobId);
      else if (outcome.reason instanceof Rejected) {
        const { rejection } = outcome.reason;
        refused.push({ jobId, reason: rejection._tag, message: outcome.reason.message });
      } else throw outcome.reason;
    }
  }
  done.sort((left, right) => left - right);
  return { jobIds: done, refused };
};

/**
 * Runs again every job `filter` names (default: discarded ones, of every
 * queue), each as `redrive` with `options`.
 */
export const redriveAll = <K extends Log.Kind = FileLogKind>(
  engine: Face<K>,
  filter: BulkFilter<EndedState> = {},
  options: RedriveOptions = {},
): Promise<BulkOutcome> =>
  each(engine, chosen(engine, filter, filter.states ?? redriveStatesDefault), (jobId) =>
    engine.redrive(jobId, options),
  );

/**
 * Cancels every job `filter` names (default: those waiting to run, of
 * every queue; executing ones only when asked for, and then their workers'
 * handlers are aborted as for any cancel), each as `cancel` with `reason`.
 */
export const cancelAll = <K extends Log.Kind = FileLogKind>(
  engine: Face<K>,
  filter: BulkFilter<ActiveState> = {},
  reason?: string,
): Promise<BulkOutcome> =>
  each(engine, chosen(engine, filter, filter.states ?? cancelStatesDefault), (jobId) =>
    engine.cancel(jobId, reason),
  );
