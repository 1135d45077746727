// A listing's lean fold without an index (`listingFold.ts`) keeps, of the completed jobs that
// leave the lean state, exactly the records the listing can print: on random histories
// (completions in any order, results recorded later, other jobs discarded or left active) and
// random filters, its kept records are the whole fold's first `limit` completed jobs the filter
// wants, in the listing's order, whole (late results added), whatever the hand-over interval.
import { Event, Generation, type Job, State } from "@tay/core";
import { Effect, Either } from "effect";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  everyId,
  type Filter,
  factIds,
  foldForJob,
  foldForListing,
  ListingFold,
} from "../src/listingFold.js";
import { type Projection, StateProjection } from "@tay/shell-node";

const manifest = {
  storeId: Uint8Array.from({ length: 16 }, (_, at) => at + 1),
  epoch: 1,
  parentEpoch: 0,
  firstSequence: 1,
  baseRecordCount: 0,
  createdAt: 0,
};

type Fate = "completed" | "discarded" | "executing" | "available";

interface Planned {
  readonly queue: string;
  readonly fate: Fate;
  /** A (10,2) of its own after the completion. */
  readonly lateResult: boolean;
}

const planned: fc.Arbitrary<Planned> = fc.record({
  queue: fc.constantFrom("a", "b"),
  fate: fc.constantFrom<Fate>("completed", "completed", "discarded", "executing", "available"),
  lateResult: fc.boolean(),
});

/** Inserts, then the jobs' ends in the order `order` gives, then the late results. */
const historyOf = (jobs: ReadonlyArray<Planned>, order: ReadonlyArray<number>) => {
  const events: Array<Event.Event> = [];
  for (const [at, job] of jobs.entries()) {
    events.push(
      Event.jobInserted({
        jobId: at + 1,
        queue: job.queue,
        worker: "W",
        args: at,
        priority: 0,
        maxAttempts: 1,
        scheduledAt: 0,
        insertedAt: 0,
      }),
    );
  }
  const late: Array<Event.Event> = [];
  for (const at of order) {
    const job = jobs[at];
    const jobId = at + 1;
    if (job === undefined || job.fate === "available") continue;
    events.push(Event.jobStarted({ jobId, at: 1, attempt: 1 }));
    if (job.fate === "executing") continue;
    events.push(
      Event.jobFinished({
        jobId,
        at: 2,
        outcome: job.fate,
        error: job.fate === "discarded" ? "boom" : null,
      }),
    );
    if (job.fate === "completed" && job.lateResult) {
      late.push(Event.resultRecorded({ jobId, result: `r${jobId}`, at: 3 }));
    }
  }
  return [...events, ...late];
};

/** Folds `events` through `projection` from nothing; the builder at the end. */
const folded = <S>(
  projection: Projection.Projection<S, unknown>,
  events: ReadonlyArray<Event.Event>,
): S => {
  let state = projection.start(manifest);
  for (const [at, event] of events.entries()) {
    const applied = projection.apply(state, at + 1, event);
    if (Either.isLeft(applied))
      throw new Error(`the history does not fold: ${JSON.stringify(applied.left)}`);
    state = applied.right;
  }
  return state;
};

/** The whole fold of `events`. */
const wholeOf = (events: ReadonlyArray<Event.Event>): State.State => {
  const builder = Generation.start(0);
  for (const [at, event] of events.entries()) {
    if (Generation.apply(builder, at + 1, event)._tag === "Left") throw new Error("does not fold");
  }
  const state = Generation.finish(builder);
  if (state._tag === "Left") throw new Error("does not finish");
  return state.right;
};

/** What the listing can print of the completed jobs, from the whole fold: the reference. */
const expectedKept = (whole: State.State, filter: Filter): Array<Job.Job> => {
  const jobs = [...State.jobsFrom(whole, 0)].filter(
    (job) =>
      job.state === "completed" &&
      (filter.state === undefined || filter.state === "completed") &&
      job.jobId >= filter.first &&
      job.jobId <= filter.last &&
      (filter.queue === undefined || job.queue === filter.queue),
  );
  if (filter.descending) jobs.reverse();
  return jobs.slice(0, filter.limit);
};

const filterOf = (lastJobId: number): fc.Arbitrary<Filter> =>
  fc
    .record({
      queue: fc.constantFrom(undefined, "a", "b"),
      state: fc.constantFrom<Event.JobState | undefined>(undefined, "completed", "available"),
      limit: fc.constantFrom(0, 1, 2, 5, Number.MAX_SAFE_INTEGER),
      descending: fc.boolean(),
      bounds: fc.option(fc.tuple(fc.nat(lastJobId + 1), fc.nat(lastJobId + 1)), { nil: undefined }),
    })
    .map(({ bounds, ...rest }) => ({
      ...rest,
      ...(bounds === undefined
        ? everyId
        : { first: Math.min(...bounds), last: Math.max(...bounds) }),
    }));

const scenario = fc.array(planned, { minLength: 1, maxLength: 40 }).chain((jobs) =>
  fc.record({
    jobs: fc.constant(jobs),
    order: fc.shuffledSubarray(
      jobs.map((_, at) => at),
      { minLength: jobs.length, maxLength: jobs.length },
    ),
    filter: filterOf(jobs.length),
    everyRecords: fc.constantFrom(1, 3, 100),
  }),
);

describe("a listing's lean fold", () => {
  it("keeps exactly the completed jobs the listing can print, whole, in any hand-over interval", () => {
    fc.assert(
      fc.property(scenario, ({ jobs, order, filter, everyRecords }) => {
        const events = historyOf(jobs, order);
        const listing = new ListingFold(filter, everyRecords);
        const builder = folded(listing.projection, events);
        const kept = listing.kept();
        const expected = expectedKept(wholeOf(events), filter);
        expect([...kept.keys()].sort((a, b) => a - b)).toEqual(
          expected.map((job) => job.jobId).sort((a, b) => a - b),
        );
        for (const job of expected) expect(kept.get(job.jobId)).toEqual(job);
        // What the listing reaches of the lean state's facts is all kept.
        const lean = Generation.finish(builder);
        if (lean._tag === "Left") return expect.unreachable("the lean fold finishes");
        const reached = [...factIds(lean.right, filter)].slice(0, filter.limit);
        expect(reached.every((jobId) => kept.has(jobId))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("starts afresh when a pass starts again", () => {
    const events = historyOf([{ queue: "a", fate: "completed", lateResult: true }], [0]);
    const listing = new ListingFold({
      ...everyId,
      queue: undefined,
      state: undefined,
      limit: 5,
      descending: false,
    });
    folded(listing.projection, events);
    expect([...listing.kept().keys()]).toEqual([1]);
    listing.projection.start(manifest);
    expect(listing.kept().size).toBe(0);
  });

  it("folds whole only when a fact the listing reaches has no record kept", async () => {
    const jobs: Array<Planned> = [
      { queue: "a", fate: "completed", lateResult: true },
      { queue: "b", fate: "completed", lateResult: false },
      { queue: "a", fate: "available", lateResult: false },
    ];
    const events = historyOf(jobs, [1, 0, 2]);
    const passes: Array<string> = [];
    // `lossy`: the lean pass folds without handing jobs over, as a core that kept no record would.
    const fold =
      (lossy: boolean) => (projection: Projection.Projection<Generation.Builder, unknown>) =>
        Effect.sync(() => {
          const whole = projection === StateProjection.foldProjection;
          passes.push(whole ? "whole" : "lean");
          const used = lossy && !whole ? StateProjection.leanFoldProjection : projection;
          const state = Generation.finish(folded(used, events));
          if (state._tag === "Left") throw new Error("does not finish");
          return { state: state.right };
        });
    const every = { ...everyId, queue: undefined, state: undefined, descending: false };
    const lean = await Effect.runPromise(foldForListing({ ...every, limit: 5 }, fold(false)));
    expect(lean.lean).toBe(true);
    expect([...lean.kept.keys()].sort()).toEqual([1, 2]);
    expect(lean.kept.get(1)?.result).toEqual({ value: "r1", at: 3 });
    expect(passes).toEqual(["lean"]);
    expect((await Effect.runPromise(foldForJob(2, fold(false)))).kept?.jobId).toBe(2);
    passes.length = 0;
    // Job 3 is no fact and job 1's queue is not b: nothing reached is missing.
    expect((await Effect.runPromise(foldForJob(3, fold(true)))).lean).toBe(true);
    const queueB = { ...every, queue: "b", state: "available" as const, limit: 5 };
    expect((await Effect.runPromise(foldForListing(queueB, fold(true)))).lean).toBe(true);
    expect(passes).toEqual(["lean", "lean"]);
    passes.length = 0;
    const missing = await Effect.runPromise(foldForListing({ ...every, limit: 1 }, fold(true)));
    expect(missing.lean).toBe(false);
    expect(missing.kept.size).toBe(0);
    expect(State.job(missing.folded.state, 1)?.state).toBe("completed");
    expect(passes).toEqual(["lean", "whole"]);
  });
});
