// A lean state (completed jobs kept as their facts only) decides and folds
// exactly as the full state does: random command plans, schema 3 included,
// run side by side through the deciders and `evolve` on a full and a lean
// state, and every decision, every record's fold and every query answer is
// the same, the lean state holding what the full one holds minus the
// completed jobs' records. Corrupted copies of the decided histories (a
// record dropped, repeated, swapped or re-aimed at another job) get the same
// verdict from both folds, through `Generation` and through `evolve`.
import {
  Decide,
  Event,
  Evolve,
  Generation,
  type HistoryError,
  Job,
  Query,
  Snapshot,
  State,
  Terminal,
} from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { stepV3 } from "./support/Plans.js";
import { arraySnapshot } from "./support/SnapshotArray.js";

/** Fails unless `lean` holds what `full` holds, completed jobs as facts. */
const expectLeanOf = (lean: State.State, full: State.State): void => {
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

const sameVerdict = (
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
function* generated(records: ReadonlyArray<Event.Event>): Generator<Event.Event> {
  yield* records;
}

/** A history of decided records, the two states stepped side by side. */
const decidedHistory = fc.array(stepV3, { maxLength: 60, size: "max" }).map((steps) => {
  let full = State.initialState;
  let lean = State.leanInitialState;
  let now = 1_000;
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
  return { records, full, lean, leftBehind };
});

const otherJobId = (event: Event.Event, knob: number): Event.Event => {
  if (!("jobId" in event)) return event;
  return { ...event, jobId: Math.max(1, event.jobId + (knob % 5) - 2) };
};

/**
 * One record dropped, repeated, swapped with the next, aimed at a
 * neighbouring job, or (for a mutation) followed by a repeat of one of its
 * members as a record of its own.
 */
const corrupt = (
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

describe("what a commit lets go of", () => {
  it("is a result recorded alone for a job the lean state holds as facts, by either path", () => {
    const events = [
      Event.jobInserted({
        jobId: 1,
        queue: "q",
        worker: "w",
        args: null,
        priority: 0,
        maxAttempts: 1,
        scheduledAt: 0,
        insertedAt: 0,
      }),
      Event.jobStarted({ jobId: 1, attempt: 1, at: 1 }),
      Event.jobFinished({ jobId: 1, outcome: "completed", error: null, at: 2 }),
    ];
    const lean = Evolve.evolveAll(State.leanInitialState, events);
    expect(Either.isRight(lean)).toBe(true);
    if (Either.isLeft(lean)) return;
    const recorded = Event.resultRecorded({ jobId: 1, result: "r", at: 3 });
    expect(Evolve.leaving(lean.right, [recorded])).toEqual({ jobs: [], results: [recorded] });
    expect(Evolve.leaving(lean.right, generated([recorded]))).toEqual({
      jobs: [],
      results: [recorded],
    });
    // Before the finish, the one-event path hands over the completed job.
    const executing = Evolve.evolveAll(State.leanInitialState, events.slice(0, 2));
    if (Either.isLeft(executing)) throw new Error("refused");
    const finished = events[2];
    if (finished === undefined) throw new Error("no finish");
    expect(Evolve.leaving(executing.right, [finished]).jobs.map((job) => job.state)).toEqual([
      "completed",
    ]);
  });
});

describe("a lean state against the full state", () => {
  it("decides alike, folds alike and answers alike after every step", () => {
    fc.assert(
      fc.property(decidedHistory, ({ records, full, lean, leftBehind }) => {
        expectLeanOf(lean, full);
        // What the commits let go of is every record the lean state holds as facts.
        expect([...leftBehind.values()].sort((a, b) => a.jobId - b.jobId)).toEqual(
          [...State.jobs(full)].filter(Terminal.leavesMemory),
        );
        // The generation fold of the whole history gives the same lean state.
        const folded = Evolve.fold(records, { lean: true });
        expect(Either.isRight(folded) && State.equals(folded.right, lean)).toBe(true);
        // So does a canonical base of it (snapshot parts restore completed jobs).
        const base = Snapshot.snapshot(full, { now: 1_000, retentionMs: 1e12 });
        sameVerdict(
          Evolve.foldGeneration(base, [], { lean: true }),
          Evolve.foldGeneration(base, []),
        );
      }),
      { numRuns: 100 },
    );
  });

  it("streams the base the array snapshot gave, from the lean state and its records (differential)", () => {
    fc.assert(
      fc.property(
        decidedHistory,
        fc.integer({ min: 0, max: 5_000 }),
        ({ full, lean, leftBehind }, retentionMs) => {
          const options = { now: 1_000 + retentionMs, retentionMs: retentionMs % 2_000 };
          const asked: Array<ReadonlyArray<number>> = [];
          const records: Snapshot.TerminalRecords = (jobIds) => {
            const ids = [...jobIds];
            asked.push(ids);
            return ids.flatMap((jobId) => leftBehind.get(jobId) ?? []);
          };
          const whole = [...leftBehind.values()].sort((a, b) => a.jobId - b.jobId);
          const streamed = [...Snapshot.events(lean, options, records)];
          expect(streamed).toEqual(arraySnapshot(lean, options, whole));
          expect([...Snapshot.events(full, options)]).toEqual(arraySnapshot(full, options));
          // The results pass reads only the jobs whose facts say they have one.
          const withResult = [...lean.terminal.entries()].filter(([, fact]) => fact.hasResult);
          if (asked.length > 0) expect(asked.at(-1)).toEqual(withResult.map(([jobId]) => jobId));
        },
      ),
      { numRuns: 150 },
    );
  });

  it("gives every corrupted history the full fold's verdict, by both folds", () => {
    fc.assert(
      fc.property(
        decidedHistory,
        fc.nat({ max: 4 }),
        fc.nat(),
        fc.nat({ max: 100 }),
        ({ records }, kind, position, knob) => {
          const corrupted = corrupt(records, kind, position, knob);
          sameVerdict(Evolve.fold(corrupted, { lean: true }), Evolve.fold(corrupted));
          sameVerdict(
            Evolve.evolveAll(State.leanInitialState, corrupted),
            Evolve.evolveAll(State.initialState, corrupted),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it("hands over, in pieces, exactly the whole records that left memory", () => {
    const handedOver = (
      generation: ReadonlyArray<Event.Event>,
      baseRecordCount: number,
      every: number,
    ): ReadonlyArray<Job.Job> => {
      const builder = Generation.start(baseRecordCount, { lean: true, collectLeft: true });
      const whole = new Map<number, Job.Job>();
      const take = () => {
        const left = Generation.takeLeft(builder);
        for (const job of left.jobs) whole.set(job.jobId, job);
        for (const result of left.results) {
          const job = whole.get(result.jobId);
          if (job !== undefined) whole.set(job.jobId, Job.applied(job, result));
        }
      };
      for (const [index, record] of generation.entries()) {
        expect(Either.isRight(Generation.apply(builder, index + 1, record))).toBe(true);
        if (index % (every + 1) === 0) take();
      }
      take();
      expect(Either.isRight(Generation.finish(builder))).toBe(true);
      return [...whole.values()].sort((left, right) => left.jobId - right.jobId);
    };
    fc.assert(
      fc.property(decidedHistory, fc.nat({ max: 7 }), ({ records, full }, every) => {
        const expected = [...State.jobs(full)].filter(Terminal.leavesMemory);
        expect(handedOver(records, 0, every)).toEqual(expected);
        // A canonical base restores completed jobs, and hands them over too.
        const base = Snapshot.snapshot(full, { now: 1_000, retentionMs: 1e12 });
        expect(handedOver(base, base.length, every)).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it("keeps a completed job as its facts, and refuses a second result", () => {
    const inserted = Event.jobInserted({
      jobId: 1,
      queue: "q",
      worker: "w",
      args: null,
      priority: 0,
      maxAttempts: 3,
      scheduledAt: 0,
      insertedAt: 0,
    });
    const records: ReadonlyArray<Event.Event> = [
      inserted,
      Event.jobStarted({ jobId: 1, attempt: 1, at: 1 }),
      Event.jobFinished({ jobId: 1, outcome: "completed", error: null, at: 2 }),
      Event.resultRecorded({ jobId: 1, result: 7, at: 2 }),
    ];
    const folded = Evolve.fold(records, { lean: true });
    expect(Either.isRight(folded) && State.fact(folded.right, 1)).toEqual({
      queue: "q",
      attempt: 1,
      hasResult: true,
    });
    const again = Evolve.fold([...records, records[3] ?? inserted], { lean: true });
    expect(Either.isLeft(again) && again.left.reason).toEqual({
      _tag: "ResultAlreadyRecorded",
      jobId: 1,
    });
  });
});
