/**
 * What a lean state keeps of a terminal job that left memory
 * (docs/core.md, "Memory bounded by active jobs"): a completed job without
 * a unique key is held as a `Fact`, the three things a rule or a decider
 * still asks about it. Every other job, terminal or not, stays whole.
 *
 * - `queue`: the per-queue counts (`Query.countsOf`) count it.
 * - `attempt`: `StaleAttempt` names the attempt a late worker lost to.
 * - `hasResult`: (10,2) is refused on a completed job that already has one.
 *
 * That it exists and is completed is what its presence says: a (1,1) with
 * its id is a `DuplicateJob`, every transition but (10,2) is an
 * `IllegalTransition` from `completed`, and a schedule naming it is a
 * `MembershipConflict` with `terminal: true` (a completed job is in no
 * schedule's active set).
 *
 * A state holds each fact packed into one 32-bit integer in typed-array
 * pages (`internal/FactMap.ts`, about 4 bytes a job); a `Fact` is what a
 * lookup decodes.
 */
import type { ResultRecorded } from "./Event.js";
import type { Job } from "./Job.js";

/**
 * The whole records of jobs that left a lean state's memory, each as it was
 * when handed over, and the (10,2) events of jobs handed over before: what
 * the shell's terminal index is written from (`Generation.takeLeft`,
 * `Evolve.leaving`).
 */
export interface Left {
  readonly jobs: ReadonlyArray<Job>;
  readonly results: ReadonlyArray<ResultRecorded>;
}

/** The facts a lean state keeps of a completed job without a unique key. */
export interface Fact {
  readonly queue: string;
  readonly attempt: number;
  /** Whether its (10,2) result was recorded. */
  readonly hasResult: boolean;
}

/**
 * True when a lean state keeps only the facts of this job: it is completed
 * (no event but (10,2) may follow) and holds no unique key (whose period
 * rule reads `finished_at`). Discarded and cancelled jobs stay whole, since
 * a (20,3) redrive brings back every field.
 */
export const leavesMemory = (job: Job): boolean =>
  job.state === "completed" && job.uniqueKey === null;

/** The facts of a job that leaves memory. */
export const factOf = (job: Job): Fact => ({
  queue: job.queue,
  attempt: job.attempt,
  hasResult: job.result !== null,
});

/** Structural equality of two facts. */
export const equals = (left: Fact, right: Fact): boolean =>
  left.queue === right.queue &&
  left.attempt === right.attempt &&
  left.hasResult === right.hasResult;
