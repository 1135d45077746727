/**
 * Which commands wake a parked waiting claim: each command whose records
 * can let a claim start a job (it frees a slot of a queue's concurrency, or
 * makes a job available) decides the parked claims again in its own batch,
 * so the claim is answered with that batch, with no insert, no tick and no
 * timer after it. Each case parks a claim, issues the one command, and reads
 * the claim's answer once the command's own answer is in. With the timers
 * off, nothing else would ever wake it.
 */
import type { Job } from "@tay/core";
import { describe, expect, it } from "@effect/vitest";
import { Effect, TestClock } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import { timeoutGraceMs } from "../../src/engine/internal/operations.js";
import * as Init from "../../src/store/Init.js";
import { dataDirectory, nodeDisk, scheduleDefinition } from "../support/store.js";

const job = (queue: string) => ({ queue, worker: "W", args: null });

const openEngine = Effect.gen(function* () {
  const dir = yield* dataDirectory;
  yield* Init.init(dir);
  return yield* Engine.open(dir, { timers: false });
});

/** Lets every fiber run until each waits on the clock or on a durable write. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));

/**
 * Parks a claim of one job of `queue` and answers a reader of what it was
 * answered so far. A woken claim is settled with the batch that woke it,
 * before the waking command's caller reads it: `settle` (a macrotask) only
 * lets its promise's reaction run, it waits for no write.
 */
const parkedClaim = (engine: Engine.EngineService, queue: string) =>
  Effect.gen(function* () {
    let answer: ReadonlyArray<Job.Job> | undefined;
    engine.promises.nextJobs([{ queue, limit: 1 }]).then(
      (jobs) => {
        answer = jobs;
      },
      // Closing the engine refuses a claim still parked: the expectation already failed.
      () => {},
    );
    yield* settle;
    expect(answer).toBeUndefined();
    return () => answer;
  });

/**
 * An engine with queue "q" at a concurrency of 1: one job executing (the
 * answer), a second available, and a claim parked behind the full slot.
 */
const fullSlot = (first: { readonly timeoutMs?: number }) =>
  Effect.gen(function* () {
    const engine = yield* openEngine;
    yield* engine.setQueueLimits("q", { concurrency: 1 });
    yield* engine.insert({ ...job("q"), ...first, maxAttempts: 1 });
    const second = yield* engine.insert(job("q"));
    const [executing] = yield* engine.claim("q", 1);
    const claim = yield* parkedClaim(engine, "q");
    return { engine, executing: executing?.jobId ?? 0, second: second.jobId, claim };
  });

/** The job ids a parked claim was answered with (undefined: still parked). */
const startedIds = (claim: () => ReadonlyArray<Job.Job> | undefined) =>
  Effect.map(settle, () => claim()?.map((found) => found.jobId));

describe("a parked claim behind a full concurrency slot starts the next job in the batch", () => {
  it.scoped("of a cancel of the executing job", () =>
    Effect.gen(function* () {
      const { engine, executing, second, claim } = yield* fullSlot({});
      yield* engine.cancel(executing);
      expect(yield* startedIds(claim)).toEqual([second]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("of a failure of the executing attempt", () =>
    Effect.gen(function* () {
      const { engine, executing, second, claim } = yield* fullSlot({});
      yield* engine.fail(executing, "boom");
      expect(yield* startedIds(claim)).toEqual([second]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("of a rescue of the executing attempt", () =>
    Effect.gen(function* () {
      const { engine, second, claim } = yield* fullSlot({});
      yield* TestClock.adjust(1_000);
      expect(yield* engine.rescue(1_000, "stuck")).toBe(1);
      expect(yield* startedIds(claim)).toEqual([second]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("of a tick that times the executing attempt out", () =>
    Effect.gen(function* () {
      const { engine, second, claim } = yield* fullSlot({ timeoutMs: 100 });
      yield* TestClock.adjust(100 + timeoutGraceMs);
      expect((yield* engine.tick()).timedOut).toBe(1);
      expect(yield* startedIds(claim)).toEqual([second]);
    }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("a parked claim on an empty queue starts the job made available in the batch", () => {
  it.scoped("of a redrive of a discarded job", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine;
      const inserted = yield* engine.insert({ ...job("q"), maxAttempts: 1 });
      yield* engine.claim("q", 1);
      expect((yield* engine.fail(inserted.jobId, "boom")).state).toBe("discarded");
      const claim = yield* parkedClaim(engine, "q");
      yield* engine.redrive(inserted.jobId);
      expect(yield* startedIds(claim)).toEqual([inserted.jobId]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("of a tick that delivers a schedule's occurrence", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0);
      const engine = yield* openEngine;
      yield* engine.registerSchedule("every-minute", scheduleDefinition);
      const claim = yield* parkedClaim(engine, scheduleDefinition.queue);
      // The first occurrence is due a minute after the schedule was registered.
      yield* TestClock.setTime(60_000);
      expect((yield* engine.tick()).delivered).toBe(1);
      const [occurrence] = yield* engine.jobs({ queue: scheduleDefinition.queue });
      expect(yield* startedIds(claim)).toEqual([occurrence?.jobId]);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
