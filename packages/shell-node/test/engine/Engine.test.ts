/**
 * The engine on a real temporary directory: every command decides, appends
 * and applies, rejections append nothing, and what a reopen folds equals
 * what the running engine held. Time comes from TestClock, so due times and
 * backoffs are exact. The batching suite holds syncs open on a wrapped disk
 * (and fails them on the fault disk) to prove that concurrent commands share
 * one submission, are answered only once it is durable, and fail together.
 */
import { describe, expect, it } from "@effect/vitest";
import { State } from "@tay/core";
import { Deferred, Effect, Fiber, Ref, TestClock } from "effect";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import type { DiskService, FileHandle } from "../../src/disk/Disk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import {
  counting,
  dataDirectory,
  diskLayer,
  nodeDisk,
  scheduleDefinition as definition,
} from "../support/store.js";

const withEngine = <A, E>(
  dir: string,
  body: (engine: Engine.EngineService) => Effect.Effect<A, E>,
  options: Engine.EngineOptions = {},
) =>
  // These tests drive every tick themselves (test/engine/Timers.test.ts covers the timers).
  Effect.scoped(Effect.flatMap(Engine.open(dir, { timers: false, ...options }), body));

describe("Engine", () => {
  it.scoped("inserts, claims in priority order, completes with a result, and survives reopen", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* TestClock.setTime(1_000);
      const held = yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          const low = yield* engine.insert({ queue: "q", worker: "W", args: "low", priority: 5 });
          const high = yield* engine.insert({ queue: "q", worker: "W", args: "high", priority: 1 });
          expect([low.jobId, high.jobId]).toEqual([1, 2]);
          const [claimed] = yield* engine.claim("q", 1);
          expect(claimed?.jobId).toBe(2);
          expect(claimed?.state).toBe("executing");
          const done = yield* engine.complete(2, new Map([["ok", true]]));
          expect(done.state).toBe("completed");
          expect(done.result?.value).toEqual(new Map([["ok", true]]));
          return yield* engine.state();
        }),
      );
      const reopened = yield* withEngine(dir, (engine) => engine.state());
      expect(State.equals(reopened, held)).toBe(true);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("the promise face reads the clock the engine was opened with", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* TestClock.setTime(5_000);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          const job = yield* Effect.promise(() =>
            engine.promises.insert({ queue: "q", worker: "W", args: null }),
          );
          expect(job.insertedAt).toBe(5_000);
          yield* TestClock.adjust("1 second");
          const [claimed] = yield* Effect.promise(() => engine.promises.claim("q"));
          expect(claimed?.attemptedAt).toBe(6_000);
        }),
      );
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("a rejected command appends nothing", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          const before = (yield* engine.log.stats()).lastSequence;
          const rejected = yield* Effect.flip(engine.complete(42));
          expect(rejected._tag).toBe("Rejected");
          const badName = yield* Effect.flip(engine.insert({ queue: "", worker: "W", args: null }));
          expect(badName._tag).toBe("Rejected");
          expect((yield* engine.log.stats()).lastSequence).toBe(before);
        }),
      );
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("failures retry with backoff, then discard when attempts are spent", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* TestClock.setTime(10_000);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          yield* engine.insert({ queue: "q", worker: "W", args: null, maxAttempts: 2 });
          yield* engine.claim("q");
          const retried = yield* engine.fail(1, "boom");
          expect(retried.state).toBe("retryable");
          expect(retried.scheduledAt).toBeGreaterThan(10_000);
          expect(yield* engine.claim("q")).toEqual([]);
          yield* TestClock.setTime(retried.scheduledAt);
          expect((yield* engine.tick()).madeAvailable).toBe(1);
          const [again] = yield* engine.claim("q");
          expect(again?.attempt).toBe(2);
          const discarded = yield* engine.fail(1, "boom again");
          expect(discarded.state).toBe("discarded");
          expect(discarded.errors.map((error) => error.error)).toEqual(["boom", "boom again"]);
        }),
      );
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("schedules deliver due occurrences, skip while one is active, and honour CAS", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* TestClock.setTime(0);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          const registered = yield* engine.registerSchedule("nightly", definition, 0);
          expect(registered.revision).toBe(1);
          const conflict = yield* Effect.flip(engine.registerSchedule("nightly", definition, 0));
          expect(conflict._tag === "Rejected" && conflict.rejection._tag).toBe("RevisionMismatch");
          yield* TestClock.setTime(registered.nextDueAt);
          expect((yield* engine.tick()).delivered).toBe(1);
          yield* TestClock.setTime(registered.nextDueAt + 60_000);
          expect((yield* engine.tick()).skipped).toBe(1);
          const schedule = yield* engine.schedule("nightly");
          expect(schedule?.activeJobIds.length).toBe(1);
          const cancelled = yield* engine.cancelSchedule("nightly", schedule?.revision);
          expect(cancelled.cancelledAt).not.toBeNull();
        }),
      );
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("jobs executing when the process stopped are rescued at open", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* TestClock.setTime(5_000);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          yield* engine.insert({ queue: "q", worker: "W", args: null, maxAttempts: 3 });
          yield* engine.claim("q");
        }),
      );
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          expect(engine.report.rescued).toBe(1);
          const job = yield* engine.job(1);
          expect(job?.state).toBe("retryable");
          expect(job?.errors[0]?.error).toBe(Engine.orphanError);
        }),
      );
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("concurrent claims never take the same job", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          yield* engine.insertMany(
            Array.from({ length: 50 }, (_, index) => ({ queue: "q", worker: "W", args: index })),
          );
          const claims = yield* Effect.all(
            Array.from({ length: 20 }, () => engine.claim("q", 3)),
            { concurrency: "unbounded" },
          );
          const ids = claims.flat().map((job) => job.jobId);
          expect(ids.length).toBe(50);
          expect(new Set(ids).size).toBe(50);
        }),
      );
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped(
    "compaction drops old terminal jobs, keeps active ones, and reopens to the same state",
    () =>
      Effect.gen(function* () {
        const dir = yield* dataDirectory;
        yield* Init.init(dir);
        yield* TestClock.setTime(1_000);
        const held = yield* withEngine(dir, (engine) =>
          Effect.gen(function* () {
            yield* engine.insertMany([
              { queue: "q", worker: "W", args: 1 },
              { queue: "q", worker: "W", args: 2 },
            ]);
            yield* engine.claim("q");
            yield* engine.complete(1);
            yield* TestClock.setTime(100_000);
            const report = yield* engine.compact(1_000);
            expect(report.epoch).toBe(2);
            expect(yield* engine.job(1)).toBeUndefined();
            expect((yield* engine.job(2))?.state).toBe("available");
            yield* engine.insert({ queue: "q", worker: "W", args: 3 });
            return yield* engine.state();
          }),
        );
        const reopened = yield* withEngine(dir, (engine) => engine.state());
        expect(State.equals(reopened, held)).toBe(true);
        expect(reopened.lastJobId).toBe(3);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped(
    "a job that failed 300 times with 65 KiB errors is compacted, and reopens to the same state",
    () =>
      Effect.gen(function* () {
        const dir = yield* dataDirectory;
        yield* Init.init(dir);
        const error = "e".repeat(65_535);
        const held = yield* withEngine(
          dir,
          (engine) =>
            Effect.gen(function* () {
              yield* engine.insert({ queue: "q", worker: "W", args: null, maxAttempts: 1000 });
              for (let attempt = 1; attempt <= 300; attempt++) {
                yield* TestClock.adjust("2 hours");
                yield* engine.tick();
                yield* engine.claim("q");
                yield* engine.fail(1, error);
              }
              const failed = yield* engine.job(1);
              // 300 errors of 65,535 bytes would be 19.7 MB: later ones are cut.
              expect(failed?.errors).toHaveLength(300);
              expect(failed?.errors[0]?.error).toBe(error);
              expect(failed?.errors[299]?.error.length).toBeLessThan(64);
              const report = yield* engine.compact(0);
              expect(report.epoch).toBe(2);
              return yield* engine.state();
            }),
          { durability: "Throughput" },
        );
        const reopened = yield* withEngine(dir, (engine) => engine.state());
        expect(State.equals(reopened, held)).toBe(true);
      }).pipe(Effect.provide(nodeDisk)),
  );
});

/** NodeDisk whose segment syncs wait, while `held` is set, until it is released. */
const holdingSyncs = () => {
  const held = { gate: undefined as Deferred.Deferred<void> | undefined, waiting: 0 };
  const inner = NodeDisk.make;
  const wrap = (handle: FileHandle): FileHandle => ({
    ...handle,
    sync: () =>
      Effect.suspend(() => {
        const gate = held.gate;
        if (gate === undefined || !handle.path.endsWith(".tay")) return handle.sync();
        held.waiting += 1;
        return Effect.zipRight(Deferred.await(gate), handle.sync());
      }),
  });
  const service: DiskService = {
    ...inner,
    // Options are dropped on purpose: without O_DSYNC every batch has a
    // separate sync, which is what this wrapper holds or counts.
    open: (file, mode) => Effect.map(inner.open(file, mode), wrap),
    create: (file, bytes) => Effect.map(inner.create(file, bytes), wrap),
  };
  return { held, service };
};

const sequenceJobIds = (engine: Engine.EngineService) =>
  Effect.map(engine.log.readFrom(1, 1000), (entries) =>
    entries.map((entry) => (entry.event._tag === "JobInserted" ? entry.event.jobId : -1)),
  );

describe("Engine batching", () => {
  it.scopedLive("concurrent commands share submissions; sequences follow submit order", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      const { service, counts } = counting(NodeDisk.make, 5);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          const before = { ...counts };
          const jobs = yield* Effect.all(
            Array.from({ length: 64 }, (_, index) =>
              engine.insert({ queue: "q", worker: "W", args: index }),
            ),
            { concurrency: "unbounded" },
          );
          // Submit order is the order the fibers started: ids and sequences follow it.
          expect(jobs.map((job) => job.jobId)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
          expect(jobs.map((job) => job.args)).toEqual(Array.from({ length: 64 }, (_, i) => i));
          expect(yield* sequenceJobIds(engine)).toEqual(jobs.map((job) => job.jobId));
          // One drain decides all 64 at once: one write, one sync.
          expect(counts.writes - before.writes).toBe(1);
          expect(counts.syncs - before.syncs).toBe(1);
        }),
      ).pipe(Effect.provide(diskLayer(service)));
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a rejected command fails alone inside a batch and appends nothing", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          const [first, rejected, second, claimed, doubleClaim] = yield* Effect.all(
            [
              Effect.either(engine.insert({ queue: "q", worker: "W", args: "a" })),
              Effect.either(engine.complete(99)),
              Effect.either(engine.insert({ queue: "q", worker: "W", args: "b" })),
              Effect.either(engine.claim("q", 2)),
              Effect.either(engine.claim("q", 2)),
            ],
            { concurrency: "unbounded" },
          );
          expect(first._tag === "Right" && first.right.jobId).toBe(1);
          expect(rejected._tag === "Left" && rejected.left._tag).toBe("Rejected");
          expect(second._tag === "Right" && second.right.jobId).toBe(2);
          // The first claim decides against both inserts of the same batch;
          // the second finds nothing left.
          expect(claimed._tag === "Right" && claimed.right.map((job) => job.jobId)).toEqual([1, 2]);
          expect(doubleClaim._tag === "Right" && doubleClaim.right).toEqual([]);
          // Each command's answer is its own state: the inserts saw their jobs available.
          expect(first._tag === "Right" && first.right.state).toBe("available");
          const entries = yield* engine.log.readFrom(1, 100);
          expect(entries.map((entry) => [entry.sequence, entry.event._tag])).toEqual([
            [1, "JobInserted"],
            [2, "JobInserted"],
            [3, "JobStarted"],
            [4, "JobStarted"],
          ]);
        }),
      );
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("answers and queries wait for durability; decisions do not", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      const { held, service } = holdingSyncs();
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          const gate = yield* Deferred.make<void>();
          held.gate = gate;
          const answered = yield* Ref.make(false);
          const insert = yield* Effect.fork(
            Effect.tap(engine.insert({ queue: "q", worker: "W", args: null }), () =>
              Ref.set(answered, true),
            ),
          );
          while (held.waiting === 0) yield* Effect.sleep("1 millis");
          // Written, not yet synced: the caller waits and queries show nothing.
          expect(yield* Ref.get(answered)).toBe(false);
          expect(yield* engine.job(1)).toBeUndefined();
          expect((yield* engine.counts()).size).toBe(0);
          // A claim decides against the decided state: it takes the job at
          // once, in the next batch, and waits for that batch.
          const claim = yield* Effect.fork(engine.claim("q"));
          held.gate = undefined;
          yield* Deferred.succeed(gate, undefined);
          const inserted = yield* Fiber.join(insert);
          expect(inserted.jobId).toBe(1);
          const [claimed] = yield* Fiber.join(claim);
          expect(claimed?.jobId).toBe(1);
          expect((yield* engine.job(1))?.state).toBe("executing");
        }),
      ).pipe(Effect.provide(diskLayer(service)));
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("a failed sync fails every command of the batch, and the engine refuses after", () =>
    Effect.gen(function* () {
      const disk = FaultDisk.make();
      disk.seedDirectory("/data");
      yield* Effect.gen(function* () {
        yield* Init.init("/data");
        yield* withEngine("/data", (engine) =>
          Effect.gen(function* () {
            yield* engine.insert({ queue: "q", worker: "W", args: 0 });
            disk.inject(FaultDisk.fail("sync", "EIO", { path: /\.tay$/ }));
            const outcomes = yield* Effect.all(
              Array.from({ length: 8 }, (_, index) =>
                Effect.flip(engine.insert({ queue: "q", worker: "W", args: index + 1 })),
              ),
              { concurrency: "unbounded" },
            );
            for (const failure of outcomes) expect(failure._tag).toBe("WriterFailed");
            disk.clearFaults();
            const later = yield* Effect.flip(engine.claim("q"));
            expect(later._tag).toBe("WriterFailed");
            // Queries still show only what was durable.
            expect((yield* engine.jobs()).map((job) => job.jobId)).toEqual([1]);
          }),
        );
      }).pipe(Effect.provide(FaultDisk.layer(disk)));
    }),
  );

  it.scopedLive("commands issued during a compaction wait for it and land after the base", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      const held = yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          yield* engine.insertMany(
            Array.from({ length: 20 }, (_, index) => ({ queue: "q", worker: "W", args: index })),
          );
          const [, inserted] = yield* Effect.all(
            [
              engine.compact(1_000),
              Effect.all(
                Array.from({ length: 10 }, (_, index) =>
                  engine.insert({ queue: "q", worker: "W", args: 100 + index }),
                ),
                { concurrency: "unbounded" },
              ),
            ],
            { concurrency: "unbounded" },
          );
          expect(inserted.map((job) => job.jobId)).toEqual(
            Array.from({ length: 10 }, (_, index) => 21 + index),
          );
          expect((yield* engine.jobs()).length).toBe(30);
          return yield* engine.state();
        }),
      );
      const reopened = yield* withEngine(dir, (engine) => engine.state());
      expect(State.equals(reopened, held)).toBe(true);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("an interrupted caller's command is decided anyway, at most once", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          const fiber = yield* Effect.fork(engine.insert({ queue: "q", worker: "W", args: null }));
          yield* Fiber.interrupt(fiber);
          yield* engine.flush();
          const jobs = yield* engine.jobs();
          expect(jobs.length).toBeLessThanOrEqual(1);
          const next = yield* engine.insert({ queue: "q", worker: "W", args: null });
          expect(next.jobId).toBe(jobs.length + 1);
        }),
      );
    }).pipe(Effect.provide(nodeDisk)),
  );
});
