// A lean state keeps the packed facts of thousands of completed jobs, over
// many pages, far-apart ids and several queues, exactly as the full state
// holds those jobs: the generation fold, `evolve` one record at a time and
// a batch all give the same facts and counts, and every state published
// before a later completion or result still answers as it did. Each planted
// packing bug (a wrong attempt, a lost result bit, two queues sharing an
// index, a page written in place though published) fails this test.
import { Event, Evolve, Query, State, Terminal } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";

interface Plan {
  /** Ids skipped before this job (a large gap puts it on a far page). */
  readonly gap: number;
  readonly queue: number;
  /** Attempts that fail and are retried before the last one. */
  readonly retries: number;
  /** What happens last: completed (with a result or not), still executing, or discarded. */
  readonly end: "completed" | "result" | "executing" | "discarded";
}

const plan: fc.Arbitrary<Plan> = fc.record({
  gap: fc.oneof(
    { weight: 30, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }) },
  ),
  queue: fc.nat({ max: 4 }),
  retries: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.nat({ max: 3 })),
  end: fc.constantFrom("completed", "result", "executing", "discarded"),
});

const queues = ["default", "mail", "reports", "q", "zz"];

/** The records of the plans, job after job; the ids given out. */
const historyOf = (plans: ReadonlyArray<Plan>): Array<Event.Event> => {
  const records: Array<Event.Event> = [];
  let jobId = 0;
  let at = 1_000;
  for (const { gap, queue, retries, end } of plans) {
    jobId += 1 + gap;
    records.push(
      Event.jobInserted({
        jobId,
        queue: queues[queue] ?? "default",
        worker: "w",
        args: null,
        priority: 0,
        maxAttempts: 10,
        scheduledAt: at,
        insertedAt: at,
      }),
    );
    for (let attempt = 1; attempt <= retries + 1; attempt++) {
      if (attempt > 1) records.push(Event.jobAvailable({ jobId, at: ++at }));
      records.push(Event.jobStarted({ jobId, attempt, at: ++at }));
      if (attempt <= retries) {
        records.push(Event.jobRetried({ jobId, at: ++at, retryAt: at, error: "e" }));
      }
    }
    if (end === "executing") continue;
    const outcome = end === "discarded" ? "discarded" : "completed";
    const error = outcome === "discarded" ? "gave up" : null;
    records.push(Event.jobFinished({ jobId, outcome, error, at: ++at }));
    if (end === "result") records.push(Event.resultRecorded({ jobId, result: jobId, at }));
  }
  return records;
};

/** Fails unless `lean` holds every completed job of `full` as its facts, the rest whole. */
const expectFactsOf = (lean: State.State, full: State.State): void => {
  expect(State.jobCount(lean)).toBe(State.jobCount(full));
  let facts = 0;
  for (const job of State.jobs(full)) {
    if (Terminal.leavesMemory(job)) {
      facts++;
      expect(State.fact(lean, job.jobId)).toEqual(Terminal.factOf(job));
      expect(State.hasJob(lean, job.jobId)).toBe(true);
    } else {
      expect(State.fact(lean, job.jobId)).toBeUndefined();
    }
  }
  expect(lean.terminal.size).toBe(facts);
  expect(Query.counts(lean)).toEqual(Query.counts(full));
};

const folded = (result: Either.Either<unknown, State.State>): State.State => {
  if (Either.isLeft(result)) throw new Error(`refused: ${JSON.stringify(result.left)}`);
  return result.right;
};

/** What the executing jobs' completions and the missing results add on top of `records`. */
const laterRecords = (full: State.State): Array<Event.Event> => {
  const later: Array<Event.Event> = [];
  for (const job of State.jobs(full)) {
    const at = (job.attemptedAt ?? 0) + 1_000_000;
    if (job.state === "executing") {
      later.push(Event.jobFinished({ jobId: job.jobId, outcome: "completed", error: null, at }));
    }
    if (job.state === "completed" && job.result === null && job.jobId % 2 === 0) {
      later.push(Event.resultRecorded({ jobId: job.jobId, result: null, at }));
    }
  }
  return later;
};

describe("a lean state's packed facts", () => {
  it("fold, evolve and batch alike over many pages, and stay persistent", () => {
    fc.assert(
      fc.property(fc.array(plan, { minLength: 500, maxLength: 1_500 }), (plans) => {
        const records = historyOf(plans);
        const full = folded(Evolve.fold(records));
        const generation = folded(Evolve.fold(records, { lean: true }));
        const evolved = folded(Evolve.evolveAll(State.leanInitialState, records));
        expectFactsOf(generation, full);
        expectFactsOf(evolved, full);
        expect(State.equals(generation, evolved)).toBe(true);

        // Later completions and results on top of each published state,
        // one record at a time and as one batch.
        const later = laterRecords(full);
        const fullAfter = folded(Evolve.evolveAll(full, later));
        const oneByOne = folded(Evolve.evolveAll(generation, later));
        const batch = Evolve.batch(evolved);
        let batched = evolved;
        for (const record of later) batched = folded(batch.evolveAll([record]));
        expectFactsOf(oneByOne, fullAfter);
        expectFactsOf(batched, fullAfter);
        // The states published before are unchanged.
        expectFactsOf(generation, full);
        expectFactsOf(evolved, full);
      }),
      { numRuns: 12 },
    );
  });
});
