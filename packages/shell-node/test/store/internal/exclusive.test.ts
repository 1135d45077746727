// Proves the writer's turn (`Exclusive`): at most one holder at a time, turns in arrival order,
// and no turn lost whatever ends a holder or a waiter (success, failure, interruption while
// waiting or while holding, interruption racing the hand-over). A property over random
// schedules of fibers that hold for a random number of yields, some failing, some interrupted
// after a random number of yields, some taking the turn as the writer's direct path does
// (`tryTake`, then `handOver`, skipping their work when it is held); after each schedule the
// turn is free at once.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Exit, Fiber } from "effect";
import fc from "fast-check";
import { Exclusive } from "../../../src/store/internal/exclusive.js";

interface Task {
  /** Yields before asking for the turn. */
  readonly before: number;
  /** Yields while holding it. */
  readonly hold: number;
  readonly fails: boolean;
  /** Interrupted this many yields after it started, if at all. */
  readonly interruptAfter: number | undefined;
  /** Takes the turn with `tryTake` (no fiber waits), as the writer's direct path does. */
  readonly direct: boolean;
}

const task = fc.record({
  before: fc.nat({ max: 3 }),
  hold: fc.nat({ max: 4 }),
  fails: fc.boolean(),
  interruptAfter: fc.option(fc.nat({ max: 8 }), { nil: undefined }),
  direct: fc.boolean(),
});

const yields = (count: number) => Effect.repeatN(Effect.yieldNow(), Math.max(0, count - 1));

const run = (tasks: ReadonlyArray<Task>) =>
  Effect.gen(function* () {
    const exclusive = new Exclusive();
    let holders = 0;
    let most = 0;
    // The direct path is no fiber: nothing interrupts it once it holds the turn.
    const direct = (each: Task) =>
      Effect.uninterruptible(
        Effect.suspend(() => {
          if (!exclusive.tryTake()) return Effect.void;
          holders += 1;
          most = Math.max(most, holders);
          return Effect.ensuring(
            each.hold === 0 ? Effect.void : yields(each.hold),
            Effect.sync(() => {
              holders -= 1;
              exclusive.handOver();
            }),
          );
        }),
      );
    const fibers = yield* Effect.forEach(tasks, (each) =>
      Effect.fork(
        Effect.zipRight(
          each.before === 0 ? Effect.void : yields(each.before),
          each.direct
            ? direct(each)
            : exclusive.holding(
                Effect.gen(function* () {
                  holders += 1;
                  most = Math.max(most, holders);
                  yield* Effect.ensuring(
                    each.hold === 0 ? Effect.void : yields(each.hold),
                    Effect.sync(() => {
                      holders -= 1;
                    }),
                  );
                  if (each.fails) return yield* Effect.fail("failed on purpose");
                }),
              ),
        ),
      ),
    );
    yield* Effect.forEach(
      tasks.map((each, index) => [each, fibers[index]] as const),
      ([each, fiber]) =>
        each.interruptAfter === undefined || fiber === undefined
          ? Effect.void
          : Effect.fork(Effect.zipRight(yields(each.interruptAfter), Fiber.interrupt(fiber))),
    );
    yield* Effect.forEach(fibers, (fiber) => Fiber.await(fiber));
    // Free at once: a turn that was lost would leave this waiting for ever (it runs synchronously).
    const after = Effect.runSyncExit(exclusive.holding(Effect.succeed("free")));
    return { most, holders, after };
  });

describe("Exclusive", () => {
  it.effect("one holder at a time, and free at the end, over random schedules", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(task, { minLength: 1, maxLength: 8 }), async (tasks) => {
          const { most, holders, after } = await Effect.runPromise(run(tasks));
          expect(most).toBeLessThanOrEqual(1);
          expect(holders).toBe(0);
          expect(Exit.isSuccess(after) ? after.value : after).toBe("free");
        }),
        { numRuns: 300 },
      ),
    ),
  );

  it.effect("hands turns over in arrival order", () =>
    Effect.gen(function* () {
      const exclusive = new Exclusive();
      const order: Array<number> = [];
      const fibers = yield* Effect.forEach([0, 1, 2, 3], (index) =>
        Effect.fork(
          exclusive.holding(
            Effect.zipRight(
              Effect.yieldNow(),
              Effect.sync(() => {
                order.push(index);
              }),
            ),
          ),
        ),
      );
      yield* Effect.forEach(fibers, (fiber) => Fiber.join(fiber));
      expect(order).toEqual([0, 1, 2, 3]);
    }),
  );
});
