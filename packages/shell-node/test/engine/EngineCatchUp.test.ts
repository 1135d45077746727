/**
 * EVENTS-V3.md's catch-up policies through the engine, under TestClock: a
 * schedule due every minute is registered, the engine is closed, the clock
 * moves past many occurrences (a downtime shorter or longer than the
 * window), the engine is opened again and its own timer (nobody calls
 * `tick`) records exactly what the policy says: the (11,2) records read
 * back from the log, in order, and the jobs they delivered. Then the timer
 * goes on with the next occurrence. Each case would fail if the engine
 * delivered nothing after the downtime, burst every missed occurrence
 * where the policy bounds them, or stopped after the first tick of "all".
 */
import { describe, expect, it } from "@effect/vitest";
import type { Event } from "@tay/core";
import { Clock, Effect, TestClock } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import { dataDirectory, nodeDisk } from "../support/store.js";

const minute = 60_000;

/** A few real milliseconds: the timer's fiber and the writer run. */
const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)));

/** Waits until the engine's timer has nothing due at the test's time and all of it is durable. */
const caughtUpWith = (engine: Engine.EngineService) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis;
    for (;;) {
      yield* pause;
      const wake = yield* engine.nextWakeAt();
      if (wake !== null && wake > now) break;
    }
    yield* engine.flush();
    // The last tick's batch is durable: let its answer reach the timer.
    yield* pause;
  });

/** A v3 schedule due every minute from `minute` on, on queue "reports". */
const everyMinute = (
  catchUp: Event.CatchUp,
  catchUpWindowMs: number | null,
  overlap: Event.Overlap = "allow",
) => ({
  queue: "reports",
  worker: "Report",
  args: null,
  priority: 0,
  maxAttempts: 1,
  everyMs: minute,
  cron: null,
  overlap,
  timezone: "UTC",
  catchUp,
  catchUpWindowMs,
});

/** One (11,2) as the test states it: outcome, due time and next due time, in minutes. */
type Advance = readonly ["delivered" | "skipped", number, number];

/** The (11,2) records of the log after `sequence`, in minutes. */
const advancesAfter = (engine: Engine.EngineService, sequence: number) =>
  Effect.gen(function* () {
    const entries = yield* engine.log.readFrom(sequence + 1, 10_000);
    const advances: Array<Advance> = [];
    for (const { event } of entries) {
      const members = event._tag === "Mutation" ? event.events : [event];
      for (const member of members) {
        if (member._tag !== "OccurrenceAdvanced") continue;
        advances.push([member.outcome, member.dueAt / minute, member.nextDueAt / minute]);
      }
    }
    return advances;
  });

/**
 * Registers the schedule at 0, closes the engine, opens it again at
 * `downUntil` minutes with its timer on, and answers the (11,2) records the
 * timer made, the jobs of the queue, and what one more minute delivers.
 */
const downtime = (definition: ReturnType<typeof everyMinute>, downUntil: number) =>
  Effect.gen(function* () {
    const dir = yield* dataDirectory;
    yield* Init.init(dir);
    yield* TestClock.setTime(0);
    const closedAt = yield* Effect.scoped(
      Effect.gen(function* () {
        const engine = yield* Engine.open(dir);
        yield* engine.registerSchedule("s", definition);
        return (yield* engine.log.stats()).lastSequence;
      }),
    );
    yield* TestClock.setTime(downUntil * minute);
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const engine = yield* Engine.open(dir);
        yield* caughtUpWith(engine);
        const caughtUp = yield* advancesAfter(engine, closedAt);
        const jobs = (yield* engine.jobs({ queue: "reports", limit: 10_000 })).length;
        const before = (yield* engine.log.stats()).lastSequence;
        yield* TestClock.adjust(minute);
        yield* caughtUpWith(engine);
        return { caughtUp, jobs, next: yield* advancesAfter(engine, before) };
      }),
    );
  }).pipe(Effect.provide(nodeDisk));

describe("catch-up through the engine's timer after a downtime", () => {
  it.scoped('"once": one (11,2) for all the missed occurrences, then every minute', () =>
    Effect.gen(function* () {
      const { caughtUp, jobs, next } = yield* downtime(everyMinute("once", null), 30.5);
      expect(caughtUp).toEqual([["delivered", 1, 31]]);
      expect(jobs).toBe(1);
      expect(next).toEqual([["delivered", 31, 32]]);
    }),
  );

  it.scoped('"skip", down longer than its window: the old ones skipped, the recent as once', () =>
    Effect.gen(function* () {
      const { caughtUp, jobs, next } = yield* downtime(everyMinute("skip", 5 * minute), 30.5);
      // Old: due before 25.5 (1..25); recent: 26..30.
      expect(caughtUp).toEqual([
        ["skipped", 1, 26],
        ["delivered", 26, 31],
      ]);
      expect(jobs).toBe(1);
      expect(next).toEqual([["delivered", 31, 32]]);
    }),
  );

  it.scoped('"skip", down shorter than its window: as "once"', () =>
    Effect.gen(function* () {
      const { caughtUp, jobs } = yield* downtime(everyMinute("skip", 5 * minute), 3.5);
      expect(caughtUp).toEqual([["delivered", 1, 4]]);
      expect(jobs).toBe(1);
    }),
  );

  it.scoped('"skip" with no window: 60 s, so only the last minute runs', () =>
    Effect.gen(function* () {
      const { caughtUp } = yield* downtime(everyMinute("skip", null), 30.5);
      expect(caughtUp).toEqual([
        ["skipped", 1, 30],
        ["delivered", 30, 31],
      ]);
    }),
  );

  it.scoped('"all", down longer than its window: the old ones skipped, each recent one run', () =>
    Effect.gen(function* () {
      const { caughtUp, jobs, next } = yield* downtime(everyMinute("all", 3 * minute), 30.5);
      // Old: due before 27.5 (1..27); recent: 28, 29, 30.
      expect(caughtUp).toEqual([
        ["skipped", 1, 28],
        ["delivered", 28, 29],
        ["delivered", 29, 30],
        ["delivered", 30, 31],
      ]);
      expect(jobs).toBe(3);
      expect(next).toEqual([["delivered", 31, 32]]);
    }),
  );

  it.scoped('"all", down shorter than its window: every missed occurrence, oldest first', () =>
    Effect.gen(function* () {
      const { caughtUp, jobs } = yield* downtime(everyMinute("all", 10 * minute), 3.5);
      expect(caughtUp).toEqual([
        ["delivered", 1, 2],
        ["delivered", 2, 3],
        ["delivered", 3, 4],
      ]);
      expect(jobs).toBe(3);
    }),
  );

  it.scoped('"all" with overlap skip: the first delivered, the others skipped while it runs', () =>
    Effect.gen(function* () {
      const { caughtUp, jobs } = yield* downtime(everyMinute("all", null, "skip"), 3.5);
      expect(caughtUp).toEqual([
        ["delivered", 1, 2],
        ["skipped", 2, 3],
        ["skipped", 3, 4],
      ]);
      expect(jobs).toBe(1);
    }),
  );

  it.scoped(
    '"all" with no window, down 1,500 minutes: every occurrence, over more than one tick',
    () =>
      Effect.gen(function* () {
        const { caughtUp, jobs, next } = yield* downtime(everyMinute("all", null), 1_500.5);
        expect(caughtUp).toHaveLength(1_500);
        expect(caughtUp.every(([outcome]) => outcome === "delivered")).toBe(true);
        expect(caughtUp[0]).toEqual(["delivered", 1, 2]);
        expect(caughtUp.at(-1)).toEqual(["delivered", 1_500, 1_501]);
        expect(jobs).toBe(1_500);
        expect(next).toEqual([["delivered", 1_501, 1_502]]);
      }),
  );

  it.scoped('"all" bounds a tick to 1,000 occurrences; the next tick goes on', () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* TestClock.setTime(0);
      const engine = yield* Engine.open(dir, { timers: false });
      yield* engine.registerSchedule("s", everyMinute("all", null));
      yield* TestClock.setTime(1_500.5 * minute);
      expect((yield* engine.tick()).delivered).toBe(1_000);
      expect((yield* engine.tick()).delivered).toBe(500);
      expect((yield* engine.tick()).delivered).toBe(0);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
