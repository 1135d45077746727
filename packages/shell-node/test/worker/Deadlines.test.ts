/**
 * The worker's timeouts: a job's own timeout further off than a JavaScript
 * timer takes (2^31 - 1 ms) still aborts its attempt at its deadline, and
 * not before. Effect's live clock never ends a longer sleep, which the
 * bounded clock reproduces over TestClock.
 */
import { describe, expect, it } from "@effect/vitest";
import { Effect, Fiber, TestClock } from "effect";
import { Attempt } from "../../src/worker/internal/attempt.js";
import { Deadlines } from "../../src/worker/internal/deadlines.js";
import { boundedClock } from "../support/boundedClock.js";
import { insertedJob as job } from "../support/job.js";

describe("Deadlines", () => {
  it.effect(
    "abort an attempt whose timeout is further off than a timer takes, at its deadline",
    () =>
      Effect.gen(function* () {
        const clock = yield* boundedClock;
        const deadlines = new Deadlines(undefined, () => clock.unsafeCurrentTimeMillis());
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
});
