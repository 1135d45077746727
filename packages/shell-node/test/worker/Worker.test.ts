/**
 * The worker runtime on a real store: handlers see plain args and their return value completes
 * the job, a throw fails the attempt and it is retried after the worker's backoff, a job whose
 * worker has no handler fails naming it, a result that is not a value (or too large to record)
 * fails the attempt with the reason and the path to it, a timeout aborts the handler's signal and fails the
 * attempt, a cancel aborts a running handler, concurrency per queue and in all is never passed,
 * and close waits for handlers, then interrupts the rest, leaving no job executing.
 */
import { describe, expect, it } from "@effect/vitest";
import { type Job, Limits, Query } from "@tay/core";
import { Deferred, Effect, Fiber } from "effect";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Init from "../../src/store/Init.js";
import * as Worker from "../../src/worker/Worker.js";
import { holdingSyncs } from "../support/heldSyncs.js";
import { dataDirectory, nodeDisk } from "../support/store.js";

const openEngine = (options: Engine.EngineOptions = {}) =>
  Effect.gen(function* () {
    const dir = yield* dataDirectory;
    yield* Init.init(dir);
    return yield* Engine.open(dir, options);
  });

/** The engine's committed jobs by id, whole (completed ones from its terminal index). */
type Jobs = ReadonlyMap<number, Job.Job>;

const jobsOf = (engine: Engine.EngineService): Effect.Effect<Jobs> =>
  Effect.map(engine.jobs(), (jobs) => new Map(jobs.map((job) => [job.jobId, job])));

/** Waits (real time, at most 10 s) until `done` holds of the engine's committed jobs. */
const until = (engine: Engine.EngineService, done: (jobs: Jobs) => boolean): Effect.Effect<Jobs> =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 1_000; tries++) {
      const jobs = yield* jobsOf(engine);
      if (done(jobs)) return jobs;
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)));
    }
    const last = yield* engine.counts();
    return yield* Effect.dieMessage(
      `the condition never held: ${JSON.stringify(Object.fromEntries(last))}`,
    );
  });

/** Each committed batch's job records from now on, as "Started 3" and "Finished 2". */
const batchesOf = (engine: Engine.EngineService) =>
  Effect.gen(function* () {
    const batches: Array<ReadonlyArray<string>> = [];
    const unwatch = engine.watch((records) => {
      const tags: Array<string> = [];
      for (const { event } of records) {
        for (const member of event._tag === "Mutation" ? event.events : [event]) {
          if (member._tag === "JobStarted") tags.push(`Started ${member.jobId}`);
          if (member._tag === "JobFinished") tags.push(`Finished ${member.jobId}`);
        }
      }
      if (tags.length > 0) batches.push(tags);
    });
    yield* Effect.addFinalizer(() => Effect.sync(unwatch));
    return batches;
  });

/** Waits (real time, at most 10 s) until `done()` holds. */
const untilTrue = (done: () => boolean): Effect.Effect<void> =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 1_000 && !done(); tries++) {
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)));
    }
    if (!done()) return yield* Effect.dieMessage("the condition never held");
  });

/** The job a worker event is about ("-" for `Halted` and `ClaimFailed`, which name none). */
const jobIdOf = (event: Worker.WorkerEvent): number | "-" =>
  "job" in event ? event.job.jobId : "-";

const statesOf = (jobs: Jobs): Array<Job.Job["state"]> =>
  [...jobs.values()].map((job) => job.state);

describe("Worker.run", () => {
  it.scopedLive("completes with the handler's value, plain args in, plain result out", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const seen: Array<unknown> = [];
      yield* Worker.run<Engine.FileLogKind, { Greet: { readonly name: string } }>(engine, {
        queues: { mail: 2 },
        handlers: {
          Greet: (job) => {
            seen.push(job.args);
            // An own key named __proto__ (as JSON.parse makes one) stays data.
            return JSON.parse(`{"greeting": "hello ${job.args.name}", "__proto__": "inert"}`);
          },
        },
      });
      const job = yield* engine.insert({
        queue: "mail",
        worker: "Greet",
        args: new Map([["name", "ada"]]),
      });
      const state = yield* until(engine, (current) =>
        statesOf(current).every((found) => found === "completed"),
      );
      expect(seen).toEqual([{ name: "ada" }]);
      const result = state.get(job.jobId)?.result?.value;
      expect(result).toEqual(
        new Map([
          ["greeting", "hello ada"],
          ["__proto__", "inert"],
        ]),
      );
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "retries a failing attempt after the backoff, then discards; names a missing handler",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine();
        const events: Array<string> = [];
        yield* Worker.run(engine, {
          queues: { q: 1 },
          backoff: { baseMs: 1, factor: 1, capMs: 1 },
          handlers: {
            Flaky: () => {
              throw new Error("flaky");
            },
          },
          onEvent: (event) => events.push(event._tag),
        });
        const flaky = yield* engine.insert({
          queue: "q",
          worker: "Flaky",
          args: null,
          maxAttempts: 3,
        });
        const orphan = yield* engine.insert({
          queue: "q",
          worker: "Nobody",
          args: null,
          maxAttempts: 1,
        });
        const state = yield* until(
          engine,
          (current) => statesOf(current).filter((found) => found === "discarded").length === 2,
        );
        expect(state.get(flaky.jobId)?.errors.map((error) => error.error)).toEqual([
          "flaky",
          "flaky",
          "flaky",
        ]);
        expect(state.get(orphan.jobId)?.errors[0]?.error).toBe(
          'no handler for worker "Nobody" (queue "q")',
        );
        expect(events.filter((tag) => tag === "Retried")).toHaveLength(2);
        expect(events.filter((tag) => tag === "Discarded")).toHaveLength(2);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "discards a job at once when its handler throws Discard, whatever attempts remain",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine();
        const events: Array<string> = [];
        yield* Worker.run(engine, {
          queues: { q: 1 },
          backoff: { baseMs: 1, factor: 1, capMs: 1 },
          handlers: {
            Hopeless: () => {
              throw new Worker.Discard("no such address");
            },
            // A rejection with it discards too.
            Later: async () => Promise.reject(new Worker.Discard("")),
          },
          onEvent: (event) => events.push(event._tag),
        });
        const hopeless = yield* engine.insert({ queue: "q", worker: "Hopeless", args: null });
        const later = yield* engine.insert({ queue: "q", worker: "Later", args: null });
        const state = yield* until(
          engine,
          (current) => statesOf(current).filter((found) => found === "discarded").length === 2,
        );
        expect(state.get(hopeless.jobId)).toMatchObject({ attempt: 1, maxAttempts: 20 });
        expect(state.get(hopeless.jobId)?.errors.map((error) => error.error)).toEqual([
          "no such address",
        ]);
        // An empty message is the error's name.
        expect(state.get(later.jobId)?.errors.map((error) => error.error)).toEqual(["Discard"]);
        expect(events.filter((tag) => tag === "Retried")).toEqual([]);
        expect(events.filter((tag) => tag === "Discarded")).toHaveLength(2);
        // Run again, it is an ordinary job: its next Discard discards it again.
        yield* engine.redrive(hopeless.jobId);
        const again = yield* until(
          engine,
          (current) =>
            current.get(hopeless.jobId)?.attempt === 2 &&
            current.get(hopeless.jobId)?.state === "discarded",
        );
        expect(again.get(hopeless.jobId)?.errors).toHaveLength(2);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "fails an attempt whose result is not a value, or too large to record, with the reason",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine();
        const events: Array<string> = [];
        yield* Worker.run(engine, {
          queues: { q: 2 },
          handlers: {
            // What core refuses, named down to the part at fault.
            Function: () => ({ user: { name: "ada", id: () => 1 } }),
            When: () => [{ at: new Date(0) }],
            // A value, but more than one record holds: the engine refuses the completion.
            Huge: () => "x".repeat(Limits.payloadBytesMax),
          },
          onEvent: (event) => events.push(event._tag),
        });
        const jobs = yield* engine.insertMany(
          ["Function", "When", "Huge"].map((worker) => ({
            queue: "q",
            worker,
            args: null,
            maxAttempts: 1,
          })),
        );
        const state = yield* until(engine, (current) =>
          statesOf(current).every((found) => found === "discarded"),
        );
        const errors = jobs.map((job) => state.get(job.jobId)?.errors[0]?.error);
        expect(errors[0]).toBe("result.user.id: a function is not a value");
        expect(errors[1]).toBe(
          "result[0].at: an object of class Date is not a value (pass its getTime() or toISOString())",
        );
        expect(errors[2]).toMatch(
          /^result: the completion would be a record of \d+ bytes, over 16777216$/,
        );
        expect(events.filter((tag) => tag === "Discarded")).toHaveLength(3);
        expect(events).not.toContain("Unrecorded");
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("aborts a handler at its timeout and fails the attempt with timeout", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const aborted = yield* Deferred.make<string>();
      yield* Worker.run(engine, {
        queues: { q: 1 },
        timeoutMs: 50,
        handlers: {
          Slow: (_job, { signal }) =>
            new Promise((resolve) => {
              signal.addEventListener("abort", () => {
                Deferred.unsafeDone(aborted, Effect.succeed(String(signal.reason)));
                resolve("too late");
              });
            }),
        },
      });
      const job = yield* engine.insert({ queue: "q", worker: "Slow", args: null, maxAttempts: 1 });
      const state = yield* until(engine, (current) => statesOf(current)[0] === "discarded");
      expect(state.get(job.jobId)?.errors[0]?.error).toBe("timeout");
      expect(yield* Deferred.await(aborted)).toContain("timeout");
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "aborts a handler at its job's own timeoutMs (EVENTS-V3.md), with no worker timeout",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine();
        const aborted = yield* Deferred.make<string>();
        yield* Worker.run(engine, {
          queues: { q: 1 },
          handlers: {
            Slow: (_job, { signal }) =>
              new Promise((resolve) => {
                signal.addEventListener("abort", () => {
                  Deferred.unsafeDone(aborted, Effect.succeed(String(signal.reason)));
                  resolve("too late");
                });
              }),
          },
        });
        const job = yield* engine.insert({
          queue: "q",
          worker: "Slow",
          args: null,
          maxAttempts: 1,
          timeoutMs: 50,
        });
        const state = yield* until(engine, (current) => statesOf(current)[0] === "discarded");
        expect(state.get(job.jobId)?.errors[0]?.error).toBe("timeout");
        expect(yield* Deferred.await(aborted)).toContain("timeout");
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "aborts a job's own shorter timeout at its time, behind a longer deadline started before it",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine();
        const running = yield* Deferred.make<void>();
        const release = yield* Deferred.make<string>();
        // Why the short handler was aborted: the worker's own deadline says
        // "timeout"; the engine's fallback, 5 s past the deadline, "ended".
        let heard = "not aborted";
        yield* Worker.run(engine, {
          queues: { q: 2 },
          timeoutMs: 600_000,
          handlers: {
            Long: () => {
              Deferred.unsafeDone(running, Effect.void);
              return Effect.runPromise(Deferred.await(release));
            },
            Short: (_job, { signal }) =>
              new Promise((resolve) =>
                signal.addEventListener("abort", () => {
                  heard = signal.reason instanceof Error ? signal.reason.message : "no error";
                  resolve("late");
                }),
              ),
          },
        });
        yield* engine.insert({ queue: "q", worker: "Long", args: null });
        yield* Deferred.await(running);
        const short = yield* engine.insert({
          queue: "q",
          worker: "Short",
          args: null,
          maxAttempts: 1,
          timeoutMs: 50,
        });
        const state = yield* until(
          engine,
          (current) => current.get(short.jobId)?.state === "discarded",
        );
        expect(state.get(short.jobId)?.errors[0]?.error).toBe("timeout");
        expect(heard).toBe("the attempt was aborted: timeout");
        yield* Deferred.succeed(release, "done");
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("aborts a running handler whose job is cancelled; its late result is refused", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const running = yield* Deferred.make<void>();
      const abortedWith = yield* Deferred.make<unknown>();
      const events: Array<string> = [];
      yield* Worker.run(engine, {
        queues: { q: 1 },
        handlers: {
          Long: (_job, { signal }) =>
            new Promise((resolve) => {
              Deferred.unsafeDone(running, Effect.void);
              signal.addEventListener("abort", () => {
                Deferred.unsafeDone(abortedWith, Effect.succeed(signal.reason));
                resolve("ignored");
              });
            }),
        },
        onEvent: (event) => events.push(event._tag),
      });
      const job = yield* engine.insert({ queue: "q", worker: "Long", args: null });
      yield* Deferred.await(running);
      yield* engine.cancel(job.jobId, "no longer wanted");
      yield* until(engine, () => events.includes("Stale"));
      expect((yield* engine.job(job.jobId))?.state).toBe("cancelled");
      expect(String(yield* Deferred.await(abortedWith))).toContain("ended");
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "lets a handler's timer fire while its other lane works a backlog of instant jobs under Throughput",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine({ durability: "Throughput" });
        const backlog = 5_000;
        let instant = 0;
        let instantAtTimer: number | undefined;
        yield* engine.insert({ queue: "q", worker: "Slow", args: null });
        for (let at = 0; at < backlog; at += 1_000) {
          yield* engine.insertMany(
            Array.from({ length: 1_000 }, () => ({ queue: "q", worker: "Instant", args: null })),
          );
        }
        // Throughput's writes answer at once: without a bound on their chain, the instant lane
        // ran command after command in microtasks and no timer fired until the backlog was done.
        yield* Worker.run(engine, {
          queues: { q: 2 },
          handlers: {
            Slow: async () => {
              await new Promise((resolve) => setTimeout(resolve, 1));
              instantAtTimer = instant;
            },
            Instant: () => {
              instant += 1;
            },
          },
        });
        yield* until(engine, (state) => statesOf(state).every((found) => found === "completed"));
        expect(instant).toBe(backlog);
        expect(instantAtTimer).toBeLessThan(backlog);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("runs every job of a rate-limited queue, each start as the window lets it", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      yield* engine.setQueueLimits("q", { rateLimit: { count: 2, perMs: 100 } });
      yield* Worker.run(engine, { queues: { q: 4 }, handlers: { W: async () => undefined } });
      yield* engine.insertMany(
        Array.from({ length: 6 }, () => ({ queue: "q", worker: "W", args: null })),
      );
      // Only the window passing lets the last four start: no command comes to wake the worker's claim.
      const done = yield* until(engine, (state) =>
        statesOf(state).every((found) => found === "completed"),
      );
      const starts = [...done.values()].map((job) => job.attemptedAt ?? 0).sort((a, b) => a - b);
      expect(starts).toHaveLength(6);
      // Never more than two starts in any 100 ms.
      for (let index = 2; index < starts.length; index++) {
        expect((starts[index] ?? 0) - (starts[index - 2] ?? 0)).toBeGreaterThanOrEqual(100);
      }
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("never runs more handlers than a queue's or the worker's concurrency", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      let running = 0;
      let most = 0;
      const mostPerQueue = new Map<string, number>();
      const runningPerQueue = new Map<string, number>();
      const handler = async (job: Worker.WorkerJob<unknown>) => {
        running += 1;
        runningPerQueue.set(job.queue, (runningPerQueue.get(job.queue) ?? 0) + 1);
        most = Math.max(most, running);
        mostPerQueue.set(
          job.queue,
          Math.max(mostPerQueue.get(job.queue) ?? 0, runningPerQueue.get(job.queue) ?? 0),
        );
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        runningPerQueue.set(job.queue, (runningPerQueue.get(job.queue) ?? 0) - 1);
      };
      yield* Worker.run(engine, {
        queues: { a: 3, b: 2 },
        concurrency: 4,
        handlers: { W: handler },
      });
      yield* engine.insertMany(
        Array.from({ length: 40 }, (_, index) => ({
          queue: index % 2 === 0 ? "a" : "b",
          worker: "W",
          args: index,
        })),
      );
      yield* until(engine, (state) => statesOf(state).every((found) => found === "completed"));
      expect(most).toBe(4);
      expect(mostPerQueue.get("a")).toBeLessThanOrEqual(3);
      expect(mostPerQueue.get("b")).toBeLessThanOrEqual(2);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "claims the next job in the batch that records the last one's end, and starts it after that end is told",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine();
        const jobs = 8;
        yield* engine.insertMany(
          Array.from({ length: jobs }, (_, index) => ({ queue: "q", worker: "W", args: index })),
        );
        const batches = yield* batchesOf(engine);
        const told: Array<string> = [];
        yield* Worker.run(engine, {
          queues: { q: 1 },
          handlers: { W: async (job) => void told.push(`handler ${job.jobId}`) },
          onEvent: (event) => told.push(`${event._tag} ${jobIdOf(event)}`),
        });
        yield* until(engine, (state) => statesOf(state).every((found) => found === "completed"));
        // One write per job with one handler at a time: the end of job n and the start of n + 1.
        expect(batches).toEqual([
          ["Started 1"],
          ...Array.from({ length: jobs - 1 }, (_, index) => [
            `Finished ${index + 1}`,
            `Started ${index + 2}`,
          ]),
          [`Finished ${jobs}`],
        ]);
        // Still one handler at a time: a job claimed in that batch starts once the end is told.
        expect(told).toEqual(
          Array.from({ length: jobs }, (_, index) => [
            `Started ${index + 1}`,
            `handler ${index + 1}`,
            `Completed ${index + 1}`,
          ]).flat(),
        );
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "claims room freed while a decided claim's write is on its way in the batch of the end that freed it",
    () =>
      Effect.gen(function* () {
        const disk = holdingSyncs();
        const engine = yield* openEngine().pipe(Effect.provide(disk.layer));
        yield* engine.insertMany(
          Array.from({ length: 4 }, (_, index) => ({ queue: "q", worker: "W", args: index })),
        );
        const batches = yield* batchesOf(engine);
        let finishFirst: () => void = () => undefined;
        const firstFinished = new Promise<void>((resolve) => {
          finishFirst = resolve;
        });
        yield* Worker.run(engine, {
          queues: { q: 2 },
          handlers: {
            W: async (job) => {
              if (job.jobId === 1) await firstFinished;
              // Job 2's end and the claim of job 3 riding it: that batch is written, not durable.
              if (job.jobId === 2) disk.hold();
            },
          },
        });
        yield* untilTrue(() => disk.state.waiting === 1);
        // Job 1 ends while the claim of job 3 is decided and on its way: its room is claimed at
        // once, beside its end, not one write later once that claim is answered.
        finishFirst();
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)));
        disk.release();
        yield* until(engine, (state) => statesOf(state).every((found) => found === "completed"));
        expect(batches.slice(0, 3)).toEqual([
          ["Started 1", "Started 2"],
          ["Finished 2", "Started 3"],
          ["Finished 1", "Started 4"],
        ]);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it("tells Halted once when the engine refuses its claim (its log failed), and claims no more", async () => {
    const disk = FaultDisk.make();
    disk.seedDirectory("/data");
    const layer = FaultDisk.layer(disk);
    await Effect.runPromise(Effect.provide(Init.init("/data"), layer));
    const opened = await EnginePromises.open("/data", { disk: layer });
    const events: Array<Worker.WorkerEvent> = [];
    const worker = await Worker.start(opened, {
      queues: { q: 2 },
      handlers: { W: () => "done" },
      onEvent: (event) => events.push(event),
    });
    // The worker's claim is parked; the insert's write fails, and the log with it.
    disk.inject(FaultDisk.fail("sync", "EIO", { path: /\.tay$/ }));
    await expect(opened.insert({ queue: "q", worker: "W", args: 1 })).rejects.toMatchObject({
      _tag: "WriterFailed",
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events.map((event) => event._tag)).toEqual(["Halted"]);
    const [halted] = events;
    expect(halted?._tag === "Halted" && halted.cause).toMatchObject({ _tag: "WriterFailed" });
    expect(halted?._tag === "Halted" && halted.error).toMatch(/^WriterFailed/);
    expect(await worker.close()).toEqual({ finished: 0, interrupted: 0 });
    expect(events).toHaveLength(1);
    await opened.close();
  });

  it.scopedLive(
    "starts a job claimed beside a refused completion only once that attempt's failure is told",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine();
        // The first completion is refused (too large): its attempt needs a second command, a fail,
        // in a later batch than the claim that rode the refused completion.
        yield* engine.insertMany([
          { queue: "q", worker: "Huge", args: null, maxAttempts: 1 },
          { queue: "q", worker: "Small", args: null },
        ]);
        const told: Array<string> = [];
        yield* Worker.run(engine, {
          queues: { q: 1 },
          handlers: {
            Huge: async () => "x".repeat(Limits.payloadBytesMax),
            Small: async () => "ok",
          },
          onEvent: (event) => told.push(`${event._tag} ${jobIdOf(event)}`),
        });
        yield* until(engine, (state) =>
          statesOf(state).every((found) => found === "completed" || found === "discarded"),
        );
        expect(told).toEqual(["Started 1", "Discarded 1", "Started 2", "Completed 2"]);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("closes: waits for handlers, interrupts the rest, leaves nothing executing", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const quickDone: Array<(value: unknown) => void> = [];
      const worker = yield* Worker.run(engine, {
        queues: { q: 4 },
        handlers: {
          Quick: () => new Promise((resolve) => quickDone.push(resolve)),
          Stuck: () => new Promise(() => {}),
        },
      });
      yield* engine.insertMany([
        { queue: "q", worker: "Quick", args: null },
        { queue: "q", worker: "Stuck", args: null },
      ]);
      yield* until(engine, (state) => statesOf(state).every((found) => found === "executing"));
      const closing = yield* Effect.fork(worker.close({ timeoutMs: 200 }));
      // Quick finishes while the worker closes; Stuck never does.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));
      for (const resolve of quickDone) resolve("done");
      const report = yield* Fiber.join(closing);
      expect(report).toEqual({ finished: 1, interrupted: 1 });
      const state = yield* jobsOf(engine);
      expect(statesOf(state).sort()).toEqual(["completed", "retryable"]);
      const stuck = [...state.values()].find((job) => job.worker === "Stuck");
      expect(stuck?.errors[0]?.error).toBe("interrupted");
      // Closed: it claims nothing more.
      yield* engine.insert({ queue: "q", worker: "Quick", args: null });
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)));
      expect(Query.countsOf(yield* engine.state(), "q").available).toBe(1);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.effect("refuses options out of range before it starts", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const refused = yield* Effect.flip(Worker.run(engine, { queues: { q: 0 }, handlers: {} }));
      expect(refused.message).toContain("queues.q must be an integer of at least 1");
      const cases: ReadonlyArray<readonly [Worker.WorkerOptions<unknown>, string]> = [
        [{ queues: {}, handlers: {} }, "queues must be at least one queue"],
        [{ queues: { q: 1 }, concurrency: 0, handlers: {} }, "concurrency must be an integer"],
        [{ queues: { q: 1 }, timeoutMs: 0, handlers: {} }, "timeoutMs must be an integer"],
        [{ queues: { q: 1 }, timeoutMs: 1.5, handlers: {} }, "timeoutMs must be an integer"],
        [{ queues: { q: 1 }, closeTimeoutMs: 0, handlers: {} }, "closeTimeoutMs must be"],
      ];
      for (const [options, message] of cases) {
        const error = yield* Effect.flip(Worker.run(engine, options));
        expect([error._tag, error.message]).toEqual([
          "InvalidWorkerOption",
          expect.stringContaining(message),
        ]);
      }
    }).pipe(Effect.scoped, Effect.provide(nodeDisk)),
  );
});
