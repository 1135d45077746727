// The engine's one timer does not spin when a tick moves nothing although something is due: it
// waits `stuckRetryMs` before it ticks again; a tick that only timed jobs out moved something, and
// the timer looks again at once; a poke that does not bring the wake time earlier does not wake
// it (every commit pokes it). Driven by TestClock, with the ticks counted as the
// clock moves. A wake time further off than a JavaScript timer takes (a monthly cron) is reached
// by sleeping at most `timerMaxMs` at once: Effect's live clock never ends a longer sleep. And a
// host suspend, which moves the wall clock but not a sleep, makes a due time late by at most
// `wallCheckMs`.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Fiber, TestClock } from "effect";
import {
  stuckRetryMs,
  Timers,
  timerMaxMs,
  wallCheckMs,
} from "../../../src/engine/internal/timers.js";
import { boundedClock, suspendableClock } from "../../support/boundedClock.js";

const nothingMoved = { madeAvailable: 0, timedOut: 0, delivered: 0, skipped: 0 };

describe("the engine's timer", () => {
  it.effect("waits stuckRetryMs after a tick that moved nothing although something was due", () =>
    Effect.gen(function* () {
      let ticks = 0;
      // Always due (time 0), and every tick moves nothing: a bug the timer must not spin on.
      const timers = new Timers(() => 0);
      const tick = Effect.sync(() => {
        ticks += 1;
        return nothingMoved;
      });
      const running = yield* Effect.fork(timers.run(tick));
      for (let turn = 0; turn < 10; turn++) yield* Effect.yieldNow();
      expect(ticks).toBe(1);
      yield* TestClock.adjust(stuckRetryMs);
      for (let turn = 0; turn < 10; turn++) yield* Effect.yieldNow();
      expect(ticks).toBe(2);
      yield* Fiber.interrupt(running);
    }),
  );

  it.effect("ticks again at once after a tick that only timed jobs out", () =>
    Effect.gen(function* () {
      let ticks = 0;
      // Due, and the first tick times a job out (and moves nothing else): progress, not a stuck
      // tick, so the next due time is looked at once, not stuckRetryMs later.
      const timers = new Timers(() => 0);
      const tick = Effect.sync(() => {
        ticks += 1;
        return ticks === 1 ? { ...nothingMoved, timedOut: 1 } : nothingMoved;
      });
      const running = yield* Effect.fork(timers.run(tick));
      for (let turn = 0; turn < 10; turn++) yield* Effect.yieldNow();
      expect(ticks).toBe(2);
      yield* Fiber.interrupt(running);
    }),
  );

  it.effect("is not woken by a poke that leaves its wake time where it was", () =>
    Effect.gen(function* () {
      let reads = 0;
      // Due in a minute; every commit pokes the timer, and most move nothing earlier.
      const timers = new Timers(() => {
        reads += 1;
        return 60_000;
      });
      const running = yield* Effect.fork(timers.run(Effect.succeed(nothingMoved)));
      for (let turn = 0; turn < 10; turn++) yield* Effect.yieldNow();
      const asleep = reads;
      for (let poke = 0; poke < 5; poke++) {
        timers.poke();
        for (let turn = 0; turn < 10; turn++) yield* Effect.yieldNow();
      }
      // Each poke reads the wake time once to compare it; the sleeping timer never looked again.
      expect(reads).toBe(asleep + 5);
      yield* Fiber.interrupt(running);
    }),
  );

  it.effect("reaches a wake time further off than a timer takes, in sleeps of timerMaxMs", () =>
    Effect.gen(function* () {
      let ticks = 0;
      const dueAt = 40 * 86_400_000;
      // No wall-clock look: forty days of one-minute sleeps would take TestClock minutes.
      const timers = new Timers(
        () => (ticks === 0 ? dueAt : null),
        () => null,
        Number.POSITIVE_INFINITY,
      );
      const tick = Effect.sync(() => {
        ticks += 1;
        return { ...nothingMoved, madeAvailable: 1 };
      });
      const clock = yield* boundedClock;
      const running = yield* Effect.fork(Effect.withClock(timers.run(tick), clock));
      yield* TestClock.adjust(timerMaxMs);
      expect(ticks).toBe(0);
      yield* TestClock.adjust(dueAt - timerMaxMs - 1);
      expect(ticks).toBe(0);
      yield* TestClock.adjust(1);
      expect(ticks).toBe(1);
      yield* Fiber.interrupt(running);
    }),
  );

  it.effect("ticks at most wallCheckMs after a due time a host suspend jumped over", () =>
    Effect.gen(function* () {
      let ticks = 0;
      const dueAt = 3_600_000;
      const timers = new Timers(() => (ticks === 0 ? dueAt : null));
      const tick = Effect.sync(() => {
        ticks += 1;
        return { ...nothingMoved, madeAvailable: 1 };
      });
      const { clock, suspend } = yield* suspendableClock;
      const running = yield* Effect.fork(Effect.withClock(timers.run(tick), clock));
      yield* TestClock.adjust(600_000);
      // The host sleeps for 50 minutes: the job is due when it wakes, 10 minutes into a sleep.
      suspend(3_000_000);
      yield* TestClock.adjust(wallCheckMs - 1);
      expect(ticks).toBe(0);
      yield* TestClock.adjust(1);
      expect(ticks).toBe(1);
      yield* Fiber.interrupt(running);
    }),
  );
});
