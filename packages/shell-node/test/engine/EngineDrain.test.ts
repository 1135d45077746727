/**
 * A drain is the pure core applied one command at a time. Random commands
 * (inserts of one job and of several, claims, completions, failures,
 * cancellations, half of them refused) are issued in a few turns, each turn
 * one drain. The engine folds a drain's inserts late (after their write is
 * handed to the disk, or when a later command of the drain needs them), so
 * this holds it to the reference it must match: `Decide.decide` then
 * `Evolve.evolveAll`, command by command, from the same state and clock.
 * Answers, refusals, the log and the final state must all be the same,
 * whether each turn waits for the previous one's answers or follows its
 * drain at once. A command that is not an insert may hand out ids too (a
 * tick's occurrence): an insert after it in the same drain, held together
 * at a closed admission, takes the next id.
 */
import { describe, expect, it } from "@effect/vitest";
import { Commands, Decide, type Event, Evolve, type Job, State } from "@tay/core";
import { Deferred, Effect, Fiber, TestClock } from "effect";
import * as fc from "fast-check";
import * as Engine from "../../src/engine/Engine.js";
import type { EngineService } from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import type * as Log from "../../src/log/Log.js";
import * as SharedLog from "../support/sharedLog.js";
import { dataDirectory, nodeDisk, scheduleDefinition } from "../support/store.js";

type Step =
  | { readonly _tag: "insert"; readonly queue: string; readonly priority: number }
  | { readonly _tag: "insertMany"; readonly queue: string; readonly count: number }
  | { readonly _tag: "claim"; readonly queue: string; readonly limit: number }
  | { readonly _tag: "complete"; readonly jobId: number }
  | { readonly _tag: "fail"; readonly jobId: number }
  | { readonly _tag: "cancel"; readonly jobId: number };

const queue = fc.constantFrom("a", "b");
// Ids past the jobs inserted so far are refused (JobNotFound), as are
// transitions a job's state does not allow.
const jobId = fc.integer({ min: 1, max: 24 });
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      _tag: fc.constant("insert" as const),
      queue,
      priority: fc.integer({ min: 0, max: 9 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      _tag: fc.constant("insertMany" as const),
      queue,
      count: fc.integer({ min: 2, max: 4 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("claim" as const),
      queue,
      limit: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("complete" as const), jobId }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("fail" as const), jobId }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("cancel" as const), jobId }) },
);

const now = 1_000_000;

const newJobs = (next: Step & { readonly _tag: "insertMany" }) =>
  Array.from({ length: next.count }, (_, index) => ({
    queue: next.queue,
    worker: "W",
    args: index,
  }));

/** The command the engine builds for a step, at `now`. */
const commandOf = (next: Step): Commands.Command => {
  switch (next._tag) {
    case "insert":
      return Commands.insertJobs({
        now,
        jobs: [{ queue: next.queue, worker: "W", args: null, priority: next.priority }],
      });
    case "insertMany":
      return Commands.insertJobs({ now, jobs: newJobs(next) });
    case "claim":
      return Commands.claimJobs({ now, queue: next.queue, limit: next.limit });
    case "complete":
      return Commands.completeJob({ now, jobId: next.jobId });
    case "fail":
      return Commands.failJob({ now, jobId: next.jobId, error: "boom" });
    case "cancel":
      return Commands.cancelJob({ now, jobId: next.jobId, reason: null });
  }
};

const issue = (engine: EngineService, next: Step): Promise<unknown> => {
  const { promises } = engine;
  switch (next._tag) {
    case "insert":
      return promises.insert({
        queue: next.queue,
        worker: "W",
        args: null,
        priority: next.priority,
      });
    case "insertMany":
      return promises.insertMany(newJobs(next));
    case "claim":
      return promises.claim(next.queue, next.limit);
    case "complete":
      return promises.complete(next.jobId);
    case "fail":
      return promises.fail(next.jobId, "boom");
    case "cancel":
      return promises.cancel(next.jobId);
  }
};

const isJob = (value: unknown): value is Job.Job =>
  typeof value === "object" && value !== null && "jobId" in value && "state" in value;

/** An answer as comparable data: each job's id, state and attempt. */
const shape = (answer: unknown): unknown => {
  const one = (job: unknown) => (isJob(job) ? [job.jobId, job.state, job.attempt] : job);
  return Array.isArray(answer) ? answer.map(one) : one(answer);
};

/** A refusal as comparable data: `Rejected:<reason>`, or what else it was. */
const refusal = (error: unknown): string => {
  if (typeof error !== "object" || error === null || !("rejection" in error)) return String(error);
  const { rejection } = error;
  return typeof rejection === "object" && rejection !== null && "_tag" in rejection
    ? `Rejected:${String(rejection._tag)}`
    : String(error);
};

/** What the engine should answer and hold: core's deciders and fold, one command at a time. */
const reference = (start: State.State, steps: ReadonlyArray<Step>) => {
  // The engine's state is lean with its terminal index (the default); the
  // answers are read from a full fold beside it (the store starts empty).
  let state = start;
  let full = start.lean ? State.initialState : start;
  const outcomes: Array<unknown> = [];
  const log: Array<unknown> = [];
  for (const next of steps) {
    const decision = Decide.decide(full, commandOf(next));
    if (decision._tag === "Left") {
      outcomes.push(`Rejected:${decision.left._tag}`);
      continue;
    }
    const events = decision.right;
    const folded = Evolve.evolveAll(state, events);
    const foldedFull = Evolve.evolveAll(full, events);
    if (folded._tag === "Left" || foldedFull._tag === "Left")
      throw new Error("the reference refused its own decision");
    state = folded.right;
    full = foldedFull.right;
    log.push(...events);
    // The jobs the command's records name, in order (inserted or started ones).
    const touched: Array<Job.Job | undefined> = [];
    for (const event of events) {
      const members: ReadonlyArray<Event.Event> =
        event._tag === "Mutation" ? event.events : [event];
      for (const member of members) {
        if (member._tag === "JobInserted" || member._tag === "JobStarted") {
          touched.push(State.job(full, member.jobId));
        }
      }
    }
    outcomes.push(
      next._tag === "insertMany" || next._tag === "claim"
        ? shape(touched)
        : shape(next._tag === "insert" ? touched[0] : State.job(full, next.jobId)),
    );
  }
  return { outcomes, log, state };
};

/**
 * How turns follow each other: `awaited`, each turn's answers before the
 * next turn; `chained`, the next turn issued in the microtask right after
 * the previous turn's drain, before any of its writes, syncs or late folds.
 */
type Pace = "awaited" | "chained";

/** Issues `turns` (each turn one drain) as `pace` says; every outcome, in issue order. */
const issueTurns = async (
  engine: EngineService,
  turns: ReadonlyArray<ReadonlyArray<Step>>,
  pace: Pace,
): Promise<Array<unknown>> => {
  const answers: Array<Promise<unknown>> = [];
  if (pace === "awaited") {
    for (const turn of turns) {
      const issued = turn.map((next) => issue(engine, next));
      answers.push(...issued);
      await Promise.allSettled(issued);
    }
  } else {
    const issueFrom = (index: number): void => {
      const turn = turns[index];
      if (turn === undefined) return;
      // The first command schedules this turn's drain; the next turn's
      // microtask is queued after it, so it runs once the drain is done.
      for (const next of turn) {
        const answer = issue(engine, next);
        // Read below, after every turn: a refusal must not count as unhandled meanwhile.
        answer.catch(() => undefined);
        answers.push(answer);
      }
      queueMicrotask(() => issueFrom(index + 1));
    };
    issueFrom(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const settled = await Promise.allSettled(answers);
  return settled.map((result) =>
    result.status === "fulfilled" ? shape(result.value) : refusal(result.reason),
  );
};

/** Runs `turns` on a fresh engine: its state at open, the outcomes, the log and the state. */
const run = (
  turns: ReadonlyArray<ReadonlyArray<Step>>,
  durability: "Maximal" | "Throughput",
  pace: Pace,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* TestClock.setTime(now);
      // Compared with core one command at a time: no tick of its own.
      const engine = yield* Engine.open(dir, { durability, timers: false });
      const start = yield* engine.state();
      const outcomes = yield* Effect.promise(() => issueTurns(engine, turns, pace));
      const log = (yield* engine.log.readFrom(1, 10_000)).map((entry) => entry.event);
      return { start, outcomes, log, state: yield* engine.state() };
    }),
  );

describe("Engine drains", () => {
  it.scoped("a drain answers, logs and folds as core does one command at a time", () =>
    Effect.gen(function* () {
      const turns = fc.array(fc.array(step, { minLength: 1, maxLength: 25 }), {
        minLength: 1,
        maxLength: 4,
      });
      const samples = fc.sample(turns, { numRuns: 30, seed: 20261130 });
      let inserts = 0;
      let refused = 0;
      for (const [index, sample] of samples.entries()) {
        const durability = index % 2 === 0 ? "Maximal" : "Throughput";
        const engine = yield* run(sample, durability, index % 4 < 2 ? "awaited" : "chained");
        const expected = reference(engine.start, sample.flat());
        expect(engine.outcomes).toEqual(expected.outcomes);
        expect(engine.log).toEqual(expected.log);
        expect(State.equals(engine.state, expected.state)).toBe(true);
        inserts += sample.flat().filter((next) => next._tag.startsWith("insert")).length;
        refused += expected.outcomes.filter((outcome) => typeof outcome === "string").length;
      }
      // The samples mix inserts with everything else and with refusals.
      expect(inserts).toBeGreaterThan(150);
      expect(refused).toBeGreaterThan(50);
    }).pipe(Effect.provide(nodeDisk)),
  );
});

/**
 * An engine over an in-memory log whose admission can be closed for the
 * drains after the next one (`holdAfterNextDrain`): the drain that meets
 * it, and every command issued meanwhile, wait in the queue, and `open`
 * lets them go as one drain.
 */
const gatedEngine = Effect.gen(function* () {
  const recovered = yield* SharedLog.open(SharedLog.shared());
  const gate = yield* Deferred.make<void>();
  const held = yield* Deferred.make<void>();
  // Drains let through before the gate closes; undefined: it never closes (or is open again).
  let passing: number | undefined;
  const log: Log.Log<SharedLog.SharedKind> = {
    ...recovered.log,
    admission: () => {
      if (passing === undefined) return recovered.log.admission();
      if (passing > 0) {
        passing -= 1;
        return recovered.log.admission();
      }
      Deferred.unsafeDone(held, Effect.void);
      return { _tag: "Gated" as const, gate };
    },
  };
  const engine = yield* Engine.fromLog(
    { ...recovered, log },
    { timers: false, rescueOnOpen: false },
  );
  return {
    engine,
    holdAfterNextDrain: () => {
      passing = 1;
    },
    /** Resumes once a drain met the closed gate. */
    held: Deferred.await(held),
    open: Effect.zipRight(
      Effect.sync(() => {
        passing = undefined;
      }),
      Deferred.succeed(gate, undefined),
    ),
  };
});

describe("a tick and an insert in one drain", () => {
  it.scoped("the insert takes the id after the job the tick's occurrence inserted", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0);
      const { engine, holdAfterNextDrain, held, open } = yield* gatedEngine;
      const schedule = yield* engine.registerSchedule("every", scheduleDefinition, 0);
      yield* TestClock.setTime(schedule.nextDueAt);
      // The tick's first command (nothing due) passes; its second, delivering the
      // occurrence, meets the closed gate, and the insert issued then joins its drain.
      holdAfterNextDrain();
      const tick = yield* Effect.fork(engine.tick());
      yield* held;
      // Through the promise face: queued before this line returns.
      const insert = engine.promises.insert({ queue: "q", worker: "W", args: 1 });
      yield* open;
      expect((yield* Fiber.join(tick)).delivered).toBe(1);
      // The occurrence's job is 1: the insert, decided after it, is 2 (not 1 again).
      expect((yield* Effect.promise(() => insert)).jobId).toBe(2);
      expect((yield* engine.jobs()).map((job) => [job.jobId, job.queue])).toEqual([
        [1, "reports"],
        [2, "q"],
      ]);
    }),
  );
});
