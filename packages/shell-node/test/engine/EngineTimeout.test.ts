/**
 * EVENTS-V3.md's per-job timeout, on the engine's side: an attempt still
 * executing at `started.at + timeout_ms + timeoutGraceMs` is failed with
 * error "timeout" by the usual retry rules, on a tick or by the engine's
 * own timer, even though no worker reports anything. Under TestClock; it
 * would fail if the engine never timed attempts out, did so before the
 * grace, or touched jobs with no timeout.
 */
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import { TestClock } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import { timeoutGraceMs } from "../../src/engine/internal/operations.js";
import * as Init from "../../src/store/Init.js";
import { dataDirectory, nodeDisk } from "../support/store.js";

const openEngine = (options: Engine.EngineOptions = {}) =>
  Effect.gen(function* () {
    const dir = yield* dataDirectory;
    yield* Init.init(dir);
    return yield* Engine.open(dir, options);
  });

/** Lets every fiber run until each waits on the clock or on a durable write. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));

/**
 * Reads the job until `done` holds, letting fibers and durable writes run
 * between reads, for at most 5 s of real time: a loaded machine may take
 * longer than one settle for the timer's write, and a bound keeps a broken
 * engine from hanging the test (the caller's expectation then fails).
 */
const settledJob = (
  engine: Engine.EngineService,
  jobId: number,
  done: (state: string) => boolean,
) =>
  Effect.gen(function* () {
    for (let reads = 0; reads < 250; reads += 1) {
      const job = yield* engine.job(jobId);
      if (job !== null && job !== undefined && done(job.state)) return job;
      yield* settle;
    }
    return yield* engine.job(jobId);
  });

describe("timeouts", () => {
  it.scoped("a tick fails an attempt that outlived timeout_ms plus the grace", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_000);
      const engine = yield* openEngine({ timers: false });
      const timed = yield* engine.insert({ queue: "q", worker: "W", args: null, timeoutMs: 100 });
      const plain = yield* engine.insert({ queue: "q", worker: "W", args: null });
      yield* engine.claim("q", 2);
      yield* TestClock.adjust(100 + timeoutGraceMs - 1);
      expect((yield* engine.tick()).timedOut).toBe(0);
      yield* TestClock.adjust(1);
      expect((yield* engine.tick()).timedOut).toBe(1);
      const failed = yield* engine.job(timed.jobId);
      expect(failed).toMatchObject({
        state: "retryable",
        errors: [{ attempt: 1, error: "timeout" }],
      });
      expect((yield* engine.job(plain.jobId))?.state).toBe("executing");
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("the engine's timer times an attempt out with no tick called", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0);
      const engine = yield* openEngine();
      const timed = yield* engine.insert({
        queue: "q",
        worker: "W",
        args: null,
        timeoutMs: 50,
        maxAttempts: 1,
      });
      yield* engine.claim("q", 1);
      yield* settle;
      yield* TestClock.adjust(50 + timeoutGraceMs);
      expect(
        yield* settledJob(engine, timed.jobId, (state) => state === "discarded"),
      ).toMatchObject({
        state: "discarded",
        errors: [{ error: "timeout" }],
      });
    }).pipe(Effect.provide(nodeDisk)),
  );
});
