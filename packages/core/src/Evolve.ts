/**
 * The fold: `evolve` applies one record to a persistent state, `fold` and
 * `foldGeneration` fold whole histories. All are total: for any sequence of
 * events they return a state or a typed `HistoryError`, and never throw.
 *
 * `evolve` follows live-tail rules: a mutation applies all or nothing, and a
 * snapshot part is out of place. It costs O(log n) per event and leaves the
 * given state untouched, so callers may keep old states.
 */
import * as Either from "fp-ts/lib/Either.js";
import { type DomainEvent, type Event, isSnapshotPart, type ResultRecorded } from "./Event.js";
import * as Job from "./Job.js";
import * as Terminal from "./Terminal.js";
import * as Generation from "./Generation.js";
import { type HistoryError, type HistoryReason, historyError } from "./HistoryError.js";
import { applyTailRecord, insertRefusal } from "./internal/Apply.js";
import { Edit } from "./internal/Edit.js";
import { Draft } from "./internal/Store.js";
import type { State } from "./State.js";

/**
 * Applies one record (a domain event or a mutation) to `state`: the new
 * state, or `Left(HistoryError)` at index 0 with the old state unchanged.
 *
 * @example
 * Evolve.evolve(State.initialState, Event.jobInserted({ jobId: 1, ... })); // Right(state)
 */
export const evolve = (state: State, event: Event): Either.Either<HistoryError, State> =>
  evolveAt(state, event, 0, undefined);

/** `evolve` with the position to report in a refusal (`index`, record `sequence`). */
export const evolveAt = (
  state: State,
  event: Event,
  index: number,
  sequence: number | undefined,
): Either.Either<HistoryError, State> => {
  const draft = new Draft(state);
  const refusal = applyTailRecord(draft, event);
  if (refusal === undefined) return Either.right(draft.toState());
  return Either.left(
    historyError({
      index,
      sequence,
      event,
      memberIndex: refusal.memberIndex,
      reason: refusal.reason,
    }),
  );
};

/**
 * What `checkInserts` found: the record is accepted (with the last_job_id
 * after it), refused (the `HistoryError` at index 0), or not made of
 * inserts only, so that its fate depends on more of the state.
 */
export type InsertsCheck =
  | { readonly _tag: "Accepted"; readonly lastJobId: number }
  | { readonly _tag: "Refused"; readonly error: HistoryError }
  | { readonly _tag: "DependsOnState" };

const dependsOnState: InsertsCheck = { _tag: "DependsOnState" };

const refusedAt = (
  event: Event,
  memberIndex: number | null,
  reason: HistoryReason,
): InsertsCheck => ({
  _tag: "Refused",
  error: historyError({ index: 0, sequence: undefined, event, memberIndex, reason }),
});

/**
 * Whether `evolve` accepts a record that only inserts jobs (a (1,1), or a
 * mutation of (1,1)s) on a state whose last_job_id is `lastJobId`. Such a
 * record depends on the state through last_job_id alone: `evolve` accepts
 * it on every state with that last_job_id exactly when this says
 * `Accepted`, and returns a state whose last_job_id is the one given here.
 * So a runtime may check inserts, write them, and fold them later (the
 * engine folds them while their write is in flight). A refusal gives the
 * reason `evolve` would, except for an id at or below `lastJobId`:
 * `JobIdNotIncreasing` here, `DuplicateJob` from `evolve` when the state
 * holds that job. Any other record: `DependsOnState`.
 */
export const checkInserts = (lastJobId: number, record: Event): InsertsCheck => {
  if (record._tag === "JobInserted") {
    const reason = insertRefusal(lastJobId, record);
    return reason === undefined
      ? { _tag: "Accepted", lastJobId: record.jobId }
      : refusedAt(record, null, reason);
  }
  if (record._tag !== "Mutation") return dependsOnState;
  const { events } = record;
  // An empty mutation is refused whatever the state: leave it to `evolve`.
  if (events.length === 0) return dependsOnState;
  for (const member of events) {
    if (member._tag !== "JobInserted") return dependsOnState;
  }
  let last = lastJobId;
  for (let index = 0; index < events.length; index++) {
    const member = events[index];
    if (member === undefined || member._tag !== "JobInserted") return dependsOnState;
    const reason = insertRefusal(last, member);
    if (reason !== undefined) return refusedAt(record, index, reason);
    last = member.jobId;
  }
  return { _tag: "Accepted", lastJobId: last };
};

/** Applies records in order with `evolve`; stops at the first refusal (indexes count from 0). */
export const evolveAll = (
  state: State,
  events: Iterable<Event>,
): Either.Either<HistoryError, State> => {
  let current = state;
  let index = 0;
  for (const event of events) {
    const next = evolveAt(current, event, index, undefined);
    if (Either.isLeft(next)) return next;
    current = next.right;
    index++;
  }
  return Either.right(current);
};

/**
 * Several `evolveAll` calls in a row whose intermediate states are not kept
 * (a runtime deciding a batch of commands): see `batch`.
 */
export interface Batch {
  /**
   * Applies records in order to the state of the previous call (the
   * batch's start state at first): the new state, or the first refusal
   * (indexes count from 0). The state returned is valid until the next
   * call: that call updates in place the structure this batch created. A
   * refusal leaves the batch holding part of the refused record, so the
   * batch must be dropped after it.
   */
  readonly evolveAll: (events: Iterable<Event>) => Either.Either<HistoryError, State>;
}

/**
 * Starts a batch on `state`. Every call returns what `evolveAll` would
 * (the same state, field for field), but the nodes of the persistent maps
 * that an earlier call of the same batch created are updated in place
 * rather than copied again, so a batch of n commands copies each changed
 * path about once instead of n times. `state` itself, and every state
 * obtained outside the batch, is never changed. Keep only the last state.
 *
 * @example
 * const run = Evolve.batch(state);
 * const first = run.evolveAll(eventsOfFirstCommand); // read it now...
 * const last = run.evolveAll(eventsOfSecondCommand); // ...first may have changed; keep last
 */
export const batch = (state: State): Batch => {
  const draft = new Draft(state, new Edit());
  return {
    evolveAll: (events) => {
      let index = 0;
      for (const event of events) {
        const refusal = applyTailRecord(draft, event);
        if (refusal !== undefined) {
          return Either.left(
            historyError({
              index,
              sequence: undefined,
              event,
              memberIndex: refusal.memberIndex,
              reason: refusal.reason,
            }),
          );
        }
        index++;
      }
      return Either.right(draft.toState());
    },
  };
};

/**
 * Folds a history without a canonical base (a first generation): the
 * state, or the first refusal with the record's index.
 */
export const fold = (
  events: Iterable<Event>,
  options: Generation.Options = {},
): Either.Either<HistoryError, State> => foldGeneration([], events, options);

/**
 * Folds a generation: `base` is its canonical base (parts in order, then
 * results, then checkpoints) and `tail` its live tail. Indexes in errors
 * count base records first.
 */
export const foldGeneration = (
  base: ReadonlyArray<Event>,
  tail: Iterable<Event>,
  options: Generation.Options = {},
): Either.Either<HistoryError, State> => {
  const builder = Generation.start(base.length, options);
  for (const event of base) {
    const applied = Generation.apply(builder, undefined, event);
    if (Either.isLeft(applied)) return applied;
  }
  for (const event of tail) {
    const applied = Generation.apply(builder, undefined, event);
    if (Either.isLeft(applied)) return applied;
  }
  return Generation.finish(builder);
};

const isJobTransition = (event: DomainEvent): event is Job.JobTransitionEvent =>
  event._tag === "JobAvailable" ||
  event._tag === "JobStarted" ||
  event._tag === "JobFinished" ||
  event._tag === "JobCancelled" ||
  event._tag === "JobRetried" ||
  event._tag === "JobRedriven" ||
  event._tag === "ResultRecorded";

/** Nothing let go of (shared: a `Left` is never changed). */
const nothingLeft: Terminal.Left = { jobs: [], results: [] };

/** `leaving` for records of one domain event. */
const leavingOne = (before: State, event: DomainEvent): Terminal.Left => {
  if (!isJobTransition(event)) return nothingLeft;
  const job = before.jobs.get(event.jobId);
  if (job === undefined) {
    return event._tag === "ResultRecorded" && before.terminal.has(event.jobId)
      ? { jobs: [], results: [event] }
      : nothingLeft;
  }
  const next = Job.applied(job, event);
  return Terminal.leavesMemory(next) ? { jobs: [next], results: [] } : nothingLeft;
};

/**
 * What committing `records` on the lean state `before` lets go of: the
 * whole records of the jobs that leave memory (as they are after the
 * records) and the (10,2) events of jobs `before` already holds as facts;
 * nothing for a full state. The records must be ones `evolve` accepts on
 * `before` (a runtime calls it on what it committed); it does not check them.
 */
export const leaving = (before: State, records: Iterable<Event>): Terminal.Left => {
  if (!before.lean) return nothingLeft;
  // One event (a claim's start, a completion): no event of the same
  // records can see its job first, so no maps are needed. Runtimes call
  // this once or twice a commit, and the maps were most of its cost.
  const only = Array.isArray(records) && records.length === 1 ? records[0] : undefined;
  if (only !== undefined && only._tag !== "Mutation" && !isSnapshotPart(only)) {
    return leavingOne(before, only);
  }
  const jobs: Array<Job.Job> = [];
  const results: Array<ResultRecorded> = [];
  const touched = new Map<number, Job.Job>();
  const handedOver = new Map<number, number>();
  const step = (event: DomainEvent): void => {
    if (event._tag === "JobInserted" || event._tag === "JobInsertedV3") {
      touched.set(event.jobId, Job.fromInserted(event));
      return;
    }
    if (!isJobTransition(event)) return;
    const at = handedOver.get(event.jobId);
    const whole = at === undefined ? undefined : jobs[at];
    if (at !== undefined && whole !== undefined) {
      jobs[at] = Job.applied(whole, event);
      return;
    }
    const job = touched.get(event.jobId) ?? before.jobs.get(event.jobId);
    if (job === undefined) {
      if (event._tag === "ResultRecorded" && before.terminal.has(event.jobId)) results.push(event);
      return;
    }
    const next = Job.applied(job, event);
    touched.set(next.jobId, next);
    if (Terminal.leavesMemory(next)) {
      handedOver.set(next.jobId, jobs.length);
      jobs.push(next);
    }
  };
  for (const record of records) {
    if (record._tag === "Mutation") for (const member of record.events) step(member);
    else if (!isSnapshotPart(record)) step(record);
  }
  return { jobs, results };
};
