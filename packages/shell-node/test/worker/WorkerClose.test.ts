/**
 * Closing a worker lets every job it claimed run within the close's timeout: a job whose claim was
 * in flight as the close began runs and completes (and is counted finished), or is aborted and
 * failed as interrupted at the timeout; the end of its scope waits `closeTimeoutMs` and then
 * aborts the rest even though a scope's finalizers run uninterruptibly, and an attempt aborted at
 * close is failed with "interrupted" whatever its handler does once its signal is aborted
 * (returns a value, rejects with the signal's reason, or never settles). The closes run as promises raced against a real
 * timer, so a close that would wait for ever fails the test instead of hanging it; two closes at
 * once share the first one's report; and a disk
 * whose writes finish a turn later holds the claim's batch in flight while the close begins.
 */
import type { Job } from "@tay/core";
import { Deferred, Effect, Fiber } from "effect";
import { describe, expect, it } from "vitest";
import * as Worker from "../../src/worker/Worker.js";
import { engineOnFaultDisk } from "../support/workerHarness.js";

/** Real time a close of 50 ms may take before the test calls it stuck. */
const stuckAfterMs = 3_000;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Runs `effect` as a promise: "ended", or "still closing" after `stuckAfterMs` of real time. */
const endsInTime = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.promise(() =>
    Promise.race([
      Effect.runPromise(effect).then(() => "ended" as const),
      realSleep(stuckAfterMs).then(() => "still closing" as const),
    ]),
  );

/** Handlers that run until aborted, each doing something else once it is. */
const onAbort =
  (running: Deferred.Deferred<void>, then: (signal: AbortSignal) => unknown) =>
  (_job: Worker.WorkerJob<unknown>, { signal }: Worker.HandlerContext) =>
    new Promise((resolve, reject) => {
      Deferred.unsafeDone(running, Effect.void);
      signal.addEventListener(
        "abort",
        () => {
          try {
            resolve(then(signal));
          } catch (error) {
            reject(error);
          }
        },
        { once: true },
      );
    });

const endsOf = (jobs: ReadonlyArray<Job.Job>) =>
  Object.fromEntries(
    jobs.map((job: Job.Job) => [job.worker, [job.state, job.errors.map((error) => error.error)]]),
  );

/** One slot of queue `q` whose handler `Stuck` tells `running` and never settles. */
const stuckOptions = (running: Deferred.Deferred<void>, closeTimeoutMs: number) => ({
  queues: { q: 1 },
  closeTimeoutMs,
  handlers: {
    Stuck: () => {
      Deferred.unsafeDone(running, Effect.void);
      return new Promise(() => {});
    },
  },
});

describe("closing a worker", () => {
  it("runs a job whose claim was in flight as it closes, and waits for it", async () => {
    const program = Effect.gen(function* () {
      // The claim's batch is then still being written when the close begins.
      const { engine } = yield* engineOnFaultDisk({ writesOnNextTurn: true });
      const order: Array<string> = [];
      const worker = yield* Worker.run(engine, {
        queues: { q: 1 },
        handlers: { Quick: (job) => void order.push(`handler ${job.jobId}`) },
        onEvent: (event) => order.push(event._tag),
      });
      // The worker's claim is parked; the insert's drain starts the job for it.
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));
      const inserting = engine.promises.insert({
        queue: "q",
        worker: "Quick",
        args: null,
        maxAttempts: 2,
      });
      yield* Effect.yieldNow();
      order.push("close");
      const closing = yield* Effect.fork(worker.close({ timeoutMs: 50 }));
      expect(yield* endsInTime(Fiber.join(closing))).toBe("ended");
      expect(yield* Fiber.join(closing)).toEqual({ finished: 1, interrupted: 0 });
      yield* Effect.promise(() => inserting);
      // Claimed after the close began (its claim in flight), it ran and completed.
      expect(order).toEqual(["close", "Started", "handler 1", "Completed"]);
      expect(endsOf(yield* engine.jobs())).toEqual({ Quick: ["completed", []] });
      expect(worker.running()).toBe(0);
    });
    await Effect.runPromise(Effect.scoped(program));
  });

  it("interrupts a job claimed as it closes once the close's timeout passes", async () => {
    const program = Effect.gen(function* () {
      const { engine } = yield* engineOnFaultDisk({ writesOnNextTurn: true });
      const running = yield* Deferred.make<void>();
      const events: Array<string> = [];
      const worker = yield* Worker.run(engine, {
        queues: { q: 1 },
        handlers: { Stuck: onAbort(running, () => undefined) },
        onEvent: (event) => events.push(event._tag),
      });
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));
      const inserting = engine.promises.insert({
        queue: "q",
        worker: "Stuck",
        args: null,
        maxAttempts: 2,
      });
      yield* Effect.yieldNow();
      const closing = yield* Effect.fork(worker.close({ timeoutMs: 50 }));
      expect(yield* endsInTime(Fiber.join(closing))).toBe("ended");
      expect(yield* Fiber.join(closing)).toEqual({ finished: 0, interrupted: 1 });
      yield* Effect.promise(() => inserting);
      // Its handler was called (it ran), then aborted at the timeout.
      expect(yield* Deferred.isDone(running)).toBe(true);
      expect(events).toEqual(["Started", "Retried"]);
      expect(endsOf(yield* engine.jobs())).toEqual({ Stuck: ["retryable", ["interrupted"]] });
    });
    await Effect.runPromise(Effect.scoped(program));
  });

  it("at the end of its scope, waits closeTimeoutMs, then interrupts a handler that never settles", async () => {
    const program = Effect.gen(function* () {
      const { engine } = yield* engineOnFaultDisk();
      const running = yield* Deferred.make<void>();
      const workerScope = Effect.scoped(
        Effect.gen(function* () {
          yield* Worker.run(engine, stuckOptions(running, 50));
          yield* engine.insert({ queue: "q", worker: "Stuck", args: null, maxAttempts: 2 });
          yield* Deferred.await(running);
        }),
      );
      expect(yield* endsInTime(workerScope)).toBe("ended");
      expect(endsOf(yield* engine.jobs())).toEqual({ Stuck: ["retryable", ["interrupted"]] });
    });
    await Effect.runPromise(Effect.scoped(program));
  });

  it("takes a close's own timeoutMs over the worker's closeTimeoutMs", async () => {
    const program = Effect.gen(function* () {
      const { engine } = yield* engineOnFaultDisk();
      const running = yield* Deferred.make<void>();
      const worker = yield* Worker.run(engine, stuckOptions(running, 10_000));
      yield* engine.insert({ queue: "q", worker: "Stuck", args: null, maxAttempts: 2 });
      yield* Deferred.await(running);
      expect(yield* endsInTime(worker.close({ timeoutMs: 50 }))).toBe("ended");
      expect(yield* worker.close()).toEqual({ finished: 0, interrupted: 1 });
      expect(endsOf(yield* engine.jobs())).toEqual({ Stuck: ["retryable", ["interrupted"]] });
    });
    await Effect.runPromise(Effect.scoped(program));
  });

  it("fails an aborted attempt as interrupted, whatever its handler does once aborted", async () => {
    const program = Effect.gen(function* () {
      const { engine } = yield* engineOnFaultDisk();
      const returning = yield* Deferred.make<void>();
      const rejecting = yield* Deferred.make<void>();
      const events: Array<string> = [];
      const worker = yield* Worker.run(engine, {
        queues: { q: 2 },
        handlers: {
          Returns: onAbort(returning, () => "partial result"),
          Rejects: onAbort(rejecting, (signal) => {
            throw signal.reason;
          }),
        },
        onEvent: (event) => events.push(`${event._tag} ${"job" in event ? event.job.worker : "-"}`),
      });
      yield* engine.insertMany([
        { queue: "q", worker: "Returns", args: null, maxAttempts: 2 },
        { queue: "q", worker: "Rejects", args: null, maxAttempts: 2 },
      ]);
      yield* Deferred.await(returning);
      yield* Deferred.await(rejecting);
      expect(yield* endsInTime(worker.close({ timeoutMs: 50 }))).toBe("ended");
      expect(endsOf(yield* engine.jobs())).toEqual({
        Returns: ["retryable", ["interrupted"]],
        Rejects: ["retryable", ["interrupted"]],
      });
      expect(events.filter((event) => !event.startsWith("Started")).sort()).toEqual([
        "Retried Rejects",
        "Retried Returns",
      ]);
    });
    await Effect.runPromise(Effect.scoped(program));
  });

  it("answers two concurrent closes with the one report of a single close", async () => {
    const program = Effect.gen(function* () {
      const { engine } = yield* engineOnFaultDisk();
      const running = yield* Deferred.make<void>();
      const release = yield* Deferred.make<void>();
      const worker = yield* Worker.run(engine, {
        queues: { q: 1 },
        handlers: {
          Slow: () => {
            Deferred.unsafeDone(running, Effect.void);
            return Effect.runPromise(Deferred.await(release));
          },
        },
      });
      yield* engine.insert({ queue: "q", worker: "Slow", args: null, maxAttempts: 2 });
      yield* Deferred.await(running);
      // The first waits for the running handler; the second, with a shorter timeout, must not
      // start a close of its own (it would interrupt the handler and report another outcome).
      const first = yield* Effect.fork(worker.close({ timeoutMs: 2_000 }));
      const second = yield* Effect.fork(worker.close({ timeoutMs: 1 }));
      yield* Effect.promise(() => realSleep(50));
      yield* Deferred.succeed(release, undefined);
      const reports = [yield* Fiber.join(first), yield* Fiber.join(second)];
      expect(reports).toEqual([
        { finished: 1, interrupted: 0 },
        { finished: 1, interrupted: 0 },
      ]);
      expect(endsOf(yield* engine.jobs())).toEqual({ Slow: ["completed", []] });
    });
    await Effect.runPromise(Effect.scoped(program));
  });
});
