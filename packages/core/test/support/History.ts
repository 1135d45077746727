/**
 * Decided histories for property tests: random command plans decided and
 * folded on a full and a lean state side by side (every decision and every
 * fold the same), and corrupted copies of such histories.
 */
import { Decide, Event, Evolve, type HistoryError, Job, Query, State, Terminal } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { expect } from "vitest";
import { type Plan, stepV3 } from "./Plans.js";

/** Fails unless `lean` holds what `full` holds, completed jobs as facts. */
export const expectLeanOf = (lean: State.State, full: State.State): void => {
  expect(lean.lean).toBe(true);
  expect(lean.lastJobId).toBe(full.lastJobId);
  expect(State.jobCount(lean)).toBe(State.jobCount(full));
  for (const job of State.jobs(full)) {
    if (Terminal.leavesMemory(job)) {
      expect(State.job(lean, job.jobId)).toBeUndefined();
      expect(State.fact(lean, job.jobId)).toEqual(Terminal.factOf(job));
    } else {
      const held = State.job(lean, job.jobId);
      expect(held !== undefined && Job.equals(held, job)).toBe(true);
      expect(State.fact(lean, job.jobId)).toBeUndefined();
    }
  }
  expect([...State.schedules(lean)]).toEqual([...State.schedules(full)]);
  expect([...lean.queues.entries()]).toEqual([...full.queues.entries()]);
  expect(Query.counts(lean)).toEqual(Query.counts(full));
  expect(Query.nextWakeAt(lean, 5)).toBe(Query.nextWakeAt(full, 5));
  expect([...lean.indexes.unique.entries()]).toEqual([...full.indexes.unique.entries()]);
  for (const jobState of Event.jobStates) {
    if (Event.isTerminal(jobState) && jobState === "completed") continue;
    const ids = (state: State.State) => Query.jobsIn(state, jobState).map((job) => job.jobId);
    expect(ids(lean)).toEqual(ids(full));
  }
};

/** Fails unless the lean fold's verdict is the full fold's (the lean state the full one's). */
export const sameVerdict = (
  lean: Either.Either<HistoryError.HistoryError, State.State>,
  full: Either.Either<HistoryError.HistoryError, State.State>,
): void => {
  if (Either.isLeft(full)) {
    expect(Either.isLeft(lean) && lean.left).toEqual(full.left);
  } else {
    expect(Either.isRight(lean)).toBe(true);
    if (Either.isRight(lean)) expectLeanOf(lean.right, full.right);
  }
};

/** The same records as an iterable that is no array. */
export function* generated(records: ReadonlyArray<Event.Event>): Generator<Event.Event> {
  yield* records;
}

/** A plan and the time that passes before it. */
export interface Step {
  readonly plan: Plan;
  readonly elapsedMs: number;
}

/** Decided records, the full and lean states after them, and what the lean commits let go of. */
export interface DecidedHistory {
  readonly records: ReadonlyArray<Event.Event>;
  readonly full: State.State;
  readonly lean: State.State;
  /** The whole records of the jobs the lean state holds as facts (those let go of here). */
  readonly leftBehind: ReadonlyMap<number, Job.Job>;
  /** The time of the last step. */
  readonly now: number;
}

/** Where `decide` starts: the initial states at 1_000 unless given. */
export interface DecideFrom {
  readonly full: State.State;
  readonly lean: State.State;
  readonly now: number;
}

const initially: DecideFrom = {
  full: State.initialState,
  lean: State.leanInitialState,
  now: 1_000,
};

/** Decides `steps` on a full and a lean state side by side; the records the full state decided. */
export const decide = (
  steps: ReadonlyArray<Step>,
  from: DecideFrom = initially,
): DecidedHistory => {
  let { full, lean, now } = from;
  const records: Array<Event.Event> = [];
  // What each commit let go of (`Evolve.leaving`), later results applied.
  const leftBehind = new Map<number, Job.Job>();
  for (const { plan, elapsedMs } of steps) {
    now += elapsedMs;
    const world = {
      jobs: [...State.jobs(full)].map(({ jobId, state }) => ({ jobId, state })),
      schedules: [...State.schedules(full)],
    };
    const command = plan(world, now);
    const fromFull = Decide.decide(full, command);
    const fromLean = Decide.decide(lean, command);
    expect(fromLean).toEqual(fromFull);
    if (Either.isLeft(fromFull)) continue;
    const nextFull = Evolve.evolveAll(full, fromFull.right);
    const nextLean = Evolve.evolveAll(lean, fromFull.right);
    sameVerdict(nextLean, nextFull);
    if (Either.isLeft(nextFull) || Either.isLeft(nextLean)) continue;
    const left = Evolve.leaving(lean, fromFull.right);
    // A list of one event takes a path without maps; a generator the general one.
    expect(Evolve.leaving(lean, generated(fromFull.right))).toEqual(left);
    for (const job of left.jobs) leftBehind.set(job.jobId, job);
    for (const result of left.results) {
      const job = leftBehind.get(result.jobId);
      if (job !== undefined) leftBehind.set(result.jobId, Job.applied(job, result));
    }
    full = nextFull.right;
    lean = nextLean.right;
    records.push(...fromFull.right);
  }
  return { records, full, lean, leftBehind, now };
};

/** A history of decided records, the two states stepped side by side. */
export const decidedHistory: fc.Arbitrary<DecidedHistory> = fc
  .array(stepV3, { maxLength: 60, size: "max" })
  .map((steps) => decide(steps));

const otherJobId = (event: Event.Event, knob: number): Event.Event => {
  if (!("jobId" in event)) return event;
  return { ...event, jobId: Math.max(1, event.jobId + (knob % 5) - 2) };
};

/**
 * One record dropped, repeated, swapped with the next, aimed at a
 * neighbouring job, or (for a mutation) followed by a repeat of one of its
 * members as a record of its own.
 */
export const corrupt = (
  records: ReadonlyArray<Event.Event>,
  kind: number,
  position: number,
  knob: number,
): ReadonlyArray<Event.Event> => {
  if (records.length === 0) return records;
  const at = position % records.length;
  const record = records[at];
  if (record === undefined) return records;
  switch (kind) {
    case 0:
      return records.filter((_, index) => index !== at);
    case 1:
      return records.flatMap((old, index) => (index === at ? [old, old] : [old]));
    case 2: {
      const swapped = [...records];
      const next = swapped[at + 1];
      if (next === undefined) return records;
      swapped[at] = next;
      swapped[at + 1] = record;
      return swapped;
    }
    case 3:
      return records.map((old, index) => (index === at ? otherJobId(old, knob) : old));
    default: {
      if (record._tag !== "Mutation") return records;
      const member = record.events[knob % record.events.length];
      if (member === undefined) return records;
      return records.flatMap((old, index) => (index === at ? [old, member] : [old]));
    }
  }
};
