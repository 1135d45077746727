/**
 * The engine on a real temporary directory: every command decides, appends
 * and applies, rejections append nothing, and what a reopen folds equals
 * what the running engine held. Time comes from TestClock, so due times and
 * backoffs are exact.
 */
import { describe, expect, it } from "@effect/vitest";
import { State } from "@tay/core";
import { Effect, TestClock } from "effect";
import * as Engine from "../src/Engine.js";
import * as Init from "../src/Init.js";
import { dataDirectory, nodeDisk } from "./support/store.js";

const definition = {
  queue: "reports",
  worker: "Report",
  args: null,
  priority: 0,
  maxAttempts: 3,
  everyMs: 60_000,
  cron: null,
  overlap: "skip" as const,
};

const withEngine = <A, E>(
  dir: string,
  body: (engine: Engine.EngineService) => Effect.Effect<A, E>,
  options: Engine.EngineOptions = {},
) => Effect.scoped(Effect.flatMap(Engine.open(dir, options), body));

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

  it.scoped("a rejected command appends nothing", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* withEngine(dir, (engine) =>
        Effect.gen(function* () {
          const before = (yield* engine.store.stats()).lastSequence;
          const rejected = yield* Effect.flip(engine.complete(42));
          expect(rejected._tag).toBe("Rejected");
          const badName = yield* Effect.flip(engine.insert({ queue: "", worker: "W", args: null }));
          expect(badName._tag).toBe("Rejected");
          expect((yield* engine.store.stats()).lastSequence).toBe(before);
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
});
