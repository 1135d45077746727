/**
 * The worker's timeouts: a job's own timeout further off than a JavaScript
 * timer takes (2^31 - 1 ms) still aborts its attempt at its deadline, and
 * not before. Effect's live clock never ends a longer sleep, which the
 * bounded clock reproduces over TestClock. And a host suspend, which moves
 * the wall clock but not a sleep, makes an abort late by at most a minute.
 */
import { describe, expect, it } from "@effect/vitest";
import { Effect, Fiber, TestClock } from "effect";
import { Attempt } from "../../src/worker/internal/attempt.js";
import { Deadlines, wallCheckMs } from "../../src/worker/internal/deadlines.js";
import { boundedClock, suspendableClock } from "../support/boundedClock.js";
import { insertedJob as job } from "../support/job.js";

describe("Deadlines", () => {
  it.effect(
    "abort an attempt whose timeout is further off than a timer takes, at its deadline",
    () =>
      Effect.gen(function* () {
        const clock = yield* boundedClock;
        // No wall-clock look: thirty days of one-minute sleeps would take TestClock minutes.
        const deadlines = new Deadlines(
          undefined,
          () => clock.unsafeCurrentTimeMillis(),
          Number.POSITIVE_INFINITY,
        );
        const timeoutMs = 30 * 86_400_000;
        const attempt = new Attempt(job());
        deadlines.add(attempt, timeoutMs);
        const running = yield* Effect.fork(Effect.withClock(deadlines.run, clock));
        yield* TestClock.adjust(timeoutMs - 1);
        expect(attempt.reason).toBeUndefined();
        yield* TestClock.adjust(1);
        expect(attempt.reason).toBe("timeout");
        yield* Fiber.interrupt(running);
      }),
  );

  it.effect("abort an attempt at most a minute after a deadline a host suspend jumped over", () =>
    Effect.gen(function* () {
      const { clock, suspend } = yield* suspendableClock;
      const deadlines = new Deadlines(600_000, () => clock.unsafeCurrentTimeMillis());
      const attempt = new Attempt(job());
      deadlines.add(attempt);
      const running = yield* Effect.fork(Effect.withClock(deadlines.run, clock));
      yield* TestClock.adjust(120_000);
      // The host sleeps for 20 minutes: the deadline has passed when it wakes, 2 minutes into a sleep.
      suspend(1_200_000);
      yield* TestClock.adjust(wallCheckMs - 1);
      expect(attempt.reason).toBeUndefined();
      yield* TestClock.adjust(1);
      expect(attempt.reason).toBe("timeout");
      yield* Fiber.interrupt(running);
    }),
  );
});
