/**
 * The worker's queue of deadlines, beside what Deadlines.test.ts checks: an
 * attempt whose end is being recorded is not aborted at its deadline (its
 * handler settled and the end stands; its signal must not turn aborted after
 * it), and past a thousand deadlines at once the queue's cut (it drops what
 * has passed) keeps every deadline still to come.
 */
import { describe, expect, it } from "@effect/vitest";
import { Effect, Fiber, TestClock } from "effect";
import { Attempt } from "../../src/worker/internal/attempt.js";
import { Deadlines } from "../../src/worker/internal/deadlines.js";
import { insertedJob as job } from "../support/job.js";

describe("Deadlines' queue", () => {
  it.effect("leave an attempt whose end is being recorded alone at its deadline", () =>
    Effect.gen(function* () {
      const clock = yield* Effect.clock;
      const deadlines = new Deadlines(100, () => clock.unsafeCurrentTimeMillis());
      const attempt = new Attempt(job());
      deadlines.add(attempt);
      const running = yield* Effect.fork(deadlines.run);
      // Its handler settled and its end is being recorded: the end stands, its signal stays.
      attempt.finishing = true;
      yield* TestClock.adjust(100);
      expect(attempt.reason).toBeUndefined();
      expect(attempt.signal.aborted).toBe(false);
      yield* Fiber.interrupt(running);
    }),
  );

  it.effect("abort every attempt when more than a thousand deadlines pass at once", () =>
    Effect.gen(function* () {
      const clock = yield* Effect.clock;
      const deadlines = new Deadlines(100, () => clock.unsafeCurrentTimeMillis());
      // Past 1024 passed, the queue is cut to the deadlines still to come: none may be lost.
      const attempts = Array.from({ length: 2_000 }, () => new Attempt(job()));
      for (const attempt of attempts) deadlines.add(attempt);
      const running = yield* Effect.fork(deadlines.run);
      yield* TestClock.adjust(100);
      const timedOut = attempts.filter((attempt) => attempt.reason === "timeout").length;
      expect(timedOut).toBe(attempts.length);
      yield* Fiber.interrupt(running);
    }),
  );
});
