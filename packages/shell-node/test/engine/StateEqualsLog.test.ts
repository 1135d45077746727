// Proves that the engine's state is the fold of its log: random programs of every engine command
// (inserts whose args and results are odd values such as -0, bigints at and past the int64 edges,
// NaN, nested plain objects with `__proto__` keys, Buffers; claims, completes, fails, cancels,
// schedules, rescues, ticks, compactions, clock moves) run on the fault disk, and the live state
// must deep-equal, value kinds included (`toStrictEqual`: -0 is not 0, 5n is not 5), the state a
// close and reopen folds from the log, and after every step the committed state a reopen would see.
import { describe, expect, it } from "@effect/vitest";
import { State, type Value } from "@tay/core";
import { Effect, TestClock, TestContext } from "effect";
import * as fc from "fast-check";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";

const directory = "/data";

/** Numbers and integers where a codec or a canonical form could change a value's kind. */
const oddNumber = fc.constantFrom<Value.Input>(
  -0,
  0,
  5,
  -1,
  1.5,
  -1e-300,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  2 ** 53,
  -(2 ** 53),
  2 ** 63,
  Number.MIN_VALUE,
);
/** Values no log can hold: a command carrying one is refused and appends nothing. */
const refusedValue = fc.constantFrom<Value.Input>(
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2n ** 63n,
  2n ** 64n,
  -(2n ** 63n) - 1n,
  "\uD800",
);
const oddBigint = fc.constantFrom<Value.Input>(
  5n,
  0n,
  -0n,
  2n ** 53n - 1n,
  2n ** 53n,
  -(2n ** 53n),
  2n ** 63n - 1n,
  -(2n ** 63n),
);
const oddKey = fc.constantFrom("", "__proto__", "constructor", "b", "a", "é", "z\u0000", "🙂");
const oddText = fc.constantFrom("", "x", "\u0000", "é", "🙂");

/** A plain object with `entries` as its own keys (`__proto__` included, as JSON.parse gives it). */
const plainObject = (entries: ReadonlyArray<readonly [string, Value.Input]>): Value.InputObject => {
  const object: Record<string, Value.Input> = {};
  // defineProperty: an assignment to `__proto__` would set the prototype, not a key.
  for (const [key, value] of entries) {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true });
  }
  return object;
};

const input: fc.Arbitrary<Value.Input> = fc.letrec<{ value: Value.Input }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 1, arbitrary: fc.oneof(refusedValue, fc.constant(null)) },
    fc.constant(null),
    fc.boolean(),
    oddNumber,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    oddBigint,
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    oddText,
    fc.string({ maxLength: 8 }),
    fc.uint8Array({ maxLength: 6 }),
    fc.uint8Array({ maxLength: 6 }).map((bytes) => Buffer.from(bytes)),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.array(fc.tuple(oddKey, tie("value")), { maxLength: 3 }).map((entries) => new Map(entries)),
    fc.array(fc.tuple(oddKey, tie("value")), { maxLength: 3 }).map(plainObject),
  ),
})).value;

type Step =
  | { readonly _tag: "Insert"; readonly args: Value.Input; readonly delayMs: number }
  | { readonly _tag: "InsertMany"; readonly args: ReadonlyArray<Value.Input> }
  | { readonly _tag: "Claim"; readonly limit: number }
  | { readonly _tag: "Complete"; readonly pick: number; readonly result?: Value.Input }
  | { readonly _tag: "Fail"; readonly pick: number; readonly discard: boolean }
  | { readonly _tag: "Cancel"; readonly pick: number }
  | { readonly _tag: "Register"; readonly id: string; readonly args: Value.Input }
  | { readonly _tag: "CancelSchedule"; readonly id: string }
  | { readonly _tag: "Rescue" }
  | { readonly _tag: "Tick" }
  | { readonly _tag: "Advance"; readonly ms: number }
  | { readonly _tag: "Compact"; readonly retentionMs: number }
  | { readonly _tag: "Reopen" };

const stepTags: ReadonlyArray<Step["_tag"]> = [
  "Insert",
  "InsertMany",
  "Claim",
  "Complete",
  "Fail",
  "Cancel",
  "Register",
  "CancelSchedule",
  "Rescue",
  "Tick",
  "Advance",
  "Compact",
];

const scheduleId = fc.constantFrom("s1", "s2");
const pick = fc.nat({ max: 40 });

// Weighted so that claims find jobs and completes and fails find them executing.
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("Insert" as const),
      args: input,
      delayMs: fc.constantFrom(0, 0, 500, 5_000),
    }),
  },
  fc.record({ _tag: fc.constant("InsertMany" as const), args: fc.array(input, { maxLength: 3 }) }),
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("Claim" as const),
      limit: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record(
      { _tag: fc.constant("Complete" as const), pick, result: input },
      { requiredKeys: ["_tag", "pick"] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({ _tag: fc.constant("Fail" as const), pick, discard: fc.boolean() }),
  },
  fc.record({ _tag: fc.constant("Cancel" as const), pick }),
  fc.record({ _tag: fc.constant("Register" as const), id: scheduleId, args: input }),
  fc.record({ _tag: fc.constant("CancelSchedule" as const), id: scheduleId }),
  fc.constant({ _tag: "Rescue" as const }),
  fc.constant({ _tag: "Tick" as const }),
  fc.record({ _tag: fc.constant("Advance" as const), ms: fc.constantFrom(1, 700, 1_000, 61_000) }),
  fc.record({ _tag: fc.constant("Compact" as const), retentionMs: fc.constantFrom(0, 10_000) }),
  fc.constant({ _tag: "Reopen" as const }),
);

/** A job id among those inserted so far (or one past them: a command on a missing job). */
const jobIdOf = (engine: Engine.EngineService, picked: number) =>
  Effect.map(engine.state(), (state) => (picked % (state.lastJobId + 1)) + 1);

/** Mostly an executing job (what a complete or fail is for), else any id. */
const executingJobIdOf = (engine: Engine.EngineService, picked: number) =>
  Effect.flatMap(engine.jobs({ state: "executing" }), (executing) => {
    const chosen = executing[picked % Math.max(1, executing.length + 1)];
    return chosen === undefined ? jobIdOf(engine, picked) : Effect.succeed(chosen.jobId);
  });

const run = (engine: Engine.EngineService, current: Step): Effect.Effect<unknown, unknown> => {
  const job = (args: Value.Input, scheduledAt?: number) => ({
    queue: "q",
    worker: "W",
    args,
    maxAttempts: 2,
    ...(scheduledAt === undefined ? {} : { scheduledAt }),
  });
  switch (current._tag) {
    case "Insert":
      return Effect.flatMap(TestClockNow, (now) =>
        engine.insert(job(current.args, current.delayMs === 0 ? undefined : now + current.delayMs)),
      );
    case "InsertMany":
      return engine.insertMany(current.args.map((args) => job(args)));
    case "Claim":
      return engine.claim("q", current.limit);
    case "Complete":
      return Effect.flatMap(executingJobIdOf(engine, current.pick), (jobId) =>
        engine.complete(jobId, current.result),
      );
    case "Fail":
      return Effect.flatMap(executingJobIdOf(engine, current.pick), (jobId) =>
        engine.fail(jobId, "failed", { discard: current.discard }),
      );
    case "Cancel":
      return Effect.flatMap(jobIdOf(engine, current.pick), (jobId) =>
        engine.cancel(jobId, "cancelled"),
      );
    case "Register":
      return engine.registerSchedule(current.id, {
        queue: "q",
        worker: "S",
        args: current.args,
        priority: 0,
        maxAttempts: 1,
        everyMs: 60_000,
        cron: null,
        overlap: "allow",
      });
    case "CancelSchedule":
      return engine.cancelSchedule(current.id);
    case "Rescue":
      return Effect.flatMap(TestClockNow, (now) => engine.rescue(now, "rescued"));
    case "Tick":
      return engine.tick();
    case "Advance":
      return TestClock.adjust(current.ms);
    case "Compact":
      return engine.compact(current.retentionMs);
    case "Reopen":
      return Effect.void;
    default: {
      const unknownStep: never = current;
      return unknownStep;
    }
  }
};

const TestClockNow = Effect.clockWith((clock) => clock.currentTimeMillis);

/** The state as plain data: every job and schedule, every value with its kind. */
const dataOf = (state: State.State) => ({
  lastJobId: state.lastJobId,
  jobs: [...State.jobs(state)],
  schedules: [...State.schedules(state)],
});

const openEngine = Engine.open(directory, { timers: false, rescueOnOpen: false });

/** Commands accepted per kind over every run: the programs must reach each command. */
const accepted = new Map<Step["_tag"], number>();

/** Runs `steps`, reopening where asked; answers how many commands were refused. */
const program = (steps: ReadonlyArray<Step>) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(1_700_000_000_000);
    yield* Init.init(directory);
    let refused = 0;
    let index = 0;
    while (index < steps.length) {
      // One engine per run of steps up to a reopen; the reopen must read what it held.
      const held = yield* Effect.scoped(
        Effect.gen(function* () {
          const engine = yield* openEngine;
          for (; index < steps.length; index += 1) {
            const current = steps[index];
            if (current === undefined) break;
            if (current._tag === "Reopen") {
              index += 1;
              break;
            }
            const outcome = yield* Effect.either(run(engine, current));
            if (outcome._tag === "Left") refused += 1;
            else accepted.set(current._tag, (accepted.get(current._tag) ?? 0) + 1);
          }
          return dataOf(yield* engine.state());
        }),
      );
      const reopened = yield* Effect.scoped(Effect.flatMap(openEngine, (engine) => engine.state()));
      expect(dataOf(reopened)).toStrictEqual(held);
    }
    return refused;
  }).pipe(Effect.provide(FaultDisk.layer(FaultDisk.make())));

describe("the engine's state equals its log", () => {
  it.effect("odd values keep their kind through a reopen", () =>
    Effect.gen(function* () {
      const steps: ReadonlyArray<Step> = [
        { _tag: "Insert", args: -0, delayMs: 0 },
        { _tag: "Insert", args: 5n, delayMs: 0 },
        {
          _tag: "Insert",
          args: plainObject([
            ["__proto__", [-0, 2n ** 63n - 1n]],
            ["n", 1.5],
          ]),
          delayMs: 0,
        },
        { _tag: "Insert", args: Buffer.from([1, 2]), delayMs: 0 },
        { _tag: "Claim", limit: 3 },
        {
          _tag: "Complete",
          pick: 0,
          result: new Map<string, Value.Input>([
            ["b", -0n],
            ["a", -0],
          ]),
        },
        { _tag: "Register", id: "s1", args: -(2n ** 53n) },
      ];
      expect(yield* program(steps)).toBe(0);
    }),
  );

  it.effect("random programs of every command: the live state deep-equals the reopened one", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 8, maxLength: 40, size: "medium" }), (steps) =>
          Effect.runPromise(
            Effect.asVoid(program(steps).pipe(Effect.provide(TestContext.TestContext))),
          ),
        ),
        { numRuns: Number(process.env.TAY_STATE_LOG_RUNS ?? 100) },
      ),
    ).pipe(
      Effect.tap(() => {
        console.log(
          `state equals its log: commands accepted per kind ${JSON.stringify(Object.fromEntries(accepted))}`,
        );
        for (const tag of stepTags) expect(accepted.get(tag) ?? 0).toBeGreaterThan(0);
      }),
    ),
  );
});
