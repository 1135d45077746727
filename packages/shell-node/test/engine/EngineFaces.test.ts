/**
 * The engine's two faces are one engine: the same random command sequence,
 * issued one command at a time through the Effect face on one store and
 * through the promise face on another (same clock), gives the same answers
 * or the same refusals, the same log and the same state.
 */
import { describe, expect, it } from "@effect/vitest";
import { State } from "@tay/core";
import { Effect, Either, TestClock } from "effect";
import * as fc from "fast-check";
import type { EngineService } from "../../src/engine/Engine.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import { dataDirectory, nodeDisk, scheduleDefinition } from "../support/store.js";

type Step =
  | { readonly _tag: "insert"; readonly queue: string; readonly args: number }
  | { readonly _tag: "claim"; readonly queue: string; readonly limit: number }
  | { readonly _tag: "complete"; readonly jobId: number }
  | { readonly _tag: "fail"; readonly jobId: number; readonly discard: boolean }
  | { readonly _tag: "cancel"; readonly jobId: number }
  | { readonly _tag: "schedule"; readonly revision: number }
  | { readonly _tag: "tick"; readonly advanceMs: number };

const queue = fc.constantFrom("a", "b");
const jobId = fc.integer({ min: 1, max: 6 });
// Weighted so that most jobs get inserted, claimed and then finished one way or another.
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ _tag: fc.constant("insert" as const), queue, args: fc.integer() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("claim" as const),
      queue,
      limit: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("complete" as const), jobId }) },
  {
    weight: 2,
    arbitrary: fc.record({ _tag: fc.constant("fail" as const), jobId, discard: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("cancel" as const), jobId }) },
  {
    weight: 1,
    arbitrary: fc.record({
      _tag: fc.constant("schedule" as const),
      revision: fc.integer({ min: 0, max: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      _tag: fc.constant("tick" as const),
      advanceMs: fc.integer({ min: 0, max: 120_000 }),
    }),
  },
);

/** What a command answered, in a form both faces can be compared by. */
type Outcome = Either.Either<unknown, string>;

const viaEffect = (engine: EngineService, next: Step): Effect.Effect<unknown, { _tag: string }> => {
  switch (next._tag) {
    case "insert":
      return engine.insert({ queue: next.queue, worker: "W", args: next.args });
    case "claim":
      return engine.claim(next.queue, next.limit);
    case "complete":
      return engine.complete(next.jobId, next.jobId);
    case "fail":
      return engine.fail(next.jobId, "boom", { discard: next.discard });
    case "cancel":
      return engine.cancel(next.jobId, "no");
    case "schedule":
      return engine.registerSchedule("s", scheduleDefinition, next.revision);
    case "tick":
      return engine.tick();
  }
};

const viaPromise = (engine: EngineService, next: Step): Promise<unknown> => {
  const { promises } = engine;
  switch (next._tag) {
    case "insert":
      return promises.insert({ queue: next.queue, worker: "W", args: next.args });
    case "claim":
      return promises.claim(next.queue, next.limit);
    case "complete":
      return promises.complete(next.jobId, next.jobId);
    case "fail":
      return promises.fail(next.jobId, "boom", { discard: next.discard });
    case "cancel":
      return promises.cancel(next.jobId, "no");
    case "schedule":
      return promises.registerSchedule("s", scheduleDefinition, next.revision);
    case "tick":
      return promises.tick();
  }
};

/** A refusal's kind: its tag, and the decider's reason for a `Rejected`. */
const kindOf = (error: unknown): string => {
  if (typeof error !== "object" || error === null || !("_tag" in error)) return String(error);
  const rejection = "rejection" in error ? error.rejection : undefined;
  const reason =
    typeof rejection === "object" && rejection !== null && "_tag" in rejection
      ? `:${String(rejection._tag)}`
      : "";
  return `${String(error._tag)}${reason}`;
};

/** Runs `steps` through one face on a fresh store: the outcomes, the log's events and the state. */
const run = (steps: ReadonlyArray<Step>, face: "effect" | "promise") =>
  Effect.scoped(
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      yield* TestClock.setTime(1_000_000);
      // The steps tick themselves: a timer of its own would tick at other moments.
      const engine = yield* Engine.open(dir, { durability: "Throughput", timers: false });
      const outcomes: Array<Outcome> = [];
      for (const next of steps) {
        if (next._tag === "tick") yield* TestClock.adjust(next.advanceMs);
        const outcome =
          face === "effect"
            ? yield* Effect.either(viaEffect(engine, next))
            : yield* Effect.promise(() =>
                viaPromise(engine, next).then(
                  (value): Outcome => Either.right(value),
                  (error: unknown): Outcome => Either.left(kindOf(error)),
                ),
              );
        outcomes.push(Either.mapLeft(outcome, kindOf));
      }
      const log = (yield* engine.log.readFrom(1, 10_000)).map((entry) => entry.event);
      return { outcomes, log, state: yield* engine.state() };
    }),
  );

describe("Engine faces", () => {
  it.scoped("the Effect face and the promise face answer, log and fold alike", () =>
    Effect.gen(function* () {
      const samples = fc.sample(fc.array(step, { minLength: 30, maxLength: 60 }), {
        numRuns: 25,
        seed: 20261130,
      });
      // With this seed: ~280 inserts, ~220 claims, ~35 each of completes,
      // fails and cancels that succeed, and every kind of refusal.
      for (const steps of samples) {
        const byEffect = yield* run(steps, "effect");
        const byPromise = yield* run(steps, "promise");
        expect(byPromise.outcomes).toEqual(byEffect.outcomes);
        expect(byPromise.log).toEqual(byEffect.log);
        expect(State.equals(byPromise.state, byEffect.state)).toBe(true);
      }
    }).pipe(Effect.provide(nodeDisk)),
  );
});
