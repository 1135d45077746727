// The engine's one timer does not spin when a tick moves nothing although something is due: it
// waits `stuckRetryMs` before it ticks again. Driven by TestClock, with the ticks counted as the
// clock moves. A wake time further off than a JavaScript timer takes (a monthly cron) is reached
// by sleeping at most `sleepMaxMs` at once: Effect's live clock never ends a longer sleep.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Fiber, TestClock } from "effect";
import { sleepMaxMs, stuckRetryMs, Timers } from "../../../src/engine/internal/timers.js";
import { boundedClock } from "../../support/boundedClock.js";

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

  it.effect("reaches a wake time further off than a timer takes, in sleeps of sleepMaxMs", () =>
    Effect.gen(function* () {
      let ticks = 0;
      const dueAt = 40 * 86_400_000;
      const timers = new Timers(() => (ticks === 0 ? dueAt : null));
      const tick = Effect.sync(() => {
        ticks += 1;
        return { ...nothingMoved, madeAvailable: 1 };
      });
      const clock = yield* boundedClock;
      const running = yield* Effect.fork(Effect.withClock(timers.run(tick), clock));
      yield* TestClock.adjust(sleepMaxMs);
      expect(ticks).toBe(0);
      yield* TestClock.adjust(dueAt - sleepMaxMs - 1);
      expect(ticks).toBe(0);
      yield* TestClock.adjust(1);
      expect(ticks).toBe(1);
      yield* Fiber.interrupt(running);
    }),
  );
});
