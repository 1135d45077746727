/**
 * A job cancelled and redriven in one batch while its handler runs: the
 * worker's parked claim takes its next attempt in that same batch, before
 * the first attempt's end is done with. The worker still tracks the new
 * attempt (the first one's end removes only its own), so a close aborts it
 * at the timeout and fails it as interrupted, instead of waiting for ever
 * for a handler it no longer knows of. The close runs as a promise raced
 * against a real timer, so a close that would wait for ever fails the test;
 * the worker runs in a scope of its own, closed only once its close ended
 * (else the scope's end would wait for that close for ever).
 */
import { Deferred, Effect, Exit, Fiber, Scope } from "effect";
import { describe, expect, it } from "vitest";
import * as Worker from "../../src/worker/Worker.js";
import { engineOnFaultDisk } from "../support/workerHarness.js";

/** Real time a close of 50 ms may take before the test calls it stuck. */
const stuckAfterMs = 3_000;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

describe("a job redriven as its attempt is cancelled", () => {
  it("keeps its new attempt tracked, so a close aborts it", async () => {
    const program = Effect.gen(function* () {
      const { engine } = yield* engineOnFaultDisk();
      const started: Array<number> = [];
      const firstRunning = yield* Deferred.make<void>();
      const workerScope = yield* Scope.make();
      const worker = yield* Scope.extend(
        Worker.run(engine, {
          queues: { q: 2 },
          handlers: {
            // Never settles, whatever its signal says: only the worker's abort ends its attempt.
            Hang: (job) => {
              started.push(job.attempt);
              Deferred.unsafeDone(firstRunning, Effect.void);
              return new Promise(() => {});
            },
          },
        }),
        workerScope,
      );
      const job = yield* Effect.promise(() =>
        engine.promises.insert({ queue: "q", worker: "Hang", args: null }),
      );
      yield* Deferred.await(firstRunning);
      // One batch: the cancel ends attempt 1, the redrive makes the job available, and the
      // worker's parked claim (one slot free) starts attempt 2.
      const cancelled = engine.promises.cancel(job.jobId);
      const redriven = engine.promises.redrive(job.jobId);
      yield* Effect.promise(() => Promise.all([cancelled, redriven]));
      for (let turn = 0; turn < 100 && started.length < 2; turn++) {
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));
      }
      expect(started).toEqual([1, 2]);
      const closing = yield* Effect.fork(worker.close({ timeoutMs: 50 }));
      const outcome = yield* Effect.promise(() =>
        Promise.race([
          Effect.runPromise(Fiber.join(closing)).then(() => "ended" as const),
          realSleep(stuckAfterMs).then(() => "still closing" as const),
        ]),
      );
      expect(outcome).toBe("ended");
      expect(yield* Fiber.join(closing)).toEqual({ finished: 0, interrupted: 1 });
      yield* Scope.close(workerScope, Exit.void);
    });
    await Effect.runPromise(Effect.scoped(program));
  });
});
