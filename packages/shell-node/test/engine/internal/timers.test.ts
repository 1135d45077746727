// The engine's one timer does not spin when a tick moves nothing although something is due: it
// waits `stuckRetryMs` before it ticks again. Driven by TestClock, with the ticks counted as the
// clock moves.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Fiber, TestClock } from "effect";
import { Timers, stuckRetryMs } from "../../../src/engine/internal/timers.js";

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
});
