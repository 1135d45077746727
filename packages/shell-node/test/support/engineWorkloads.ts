/**
 * Engine workloads for the crash and fault explorations: programs of every
 * engine command at fixed times (inserts, waiting claims, completes with
 * results, fails, cancels, schedules registered, re-registered and
 * cancelled, rescues, ticks, compactions, closes and reopens that rescue
 * orphans), their pure replay with core alone, and the engine run that
 * acknowledges what a caller was told is durable. Deterministic clock and
 * ids, no timers, so every rerun performs the same disk operations.
 */
import { Commands, Decide, type Event, Evolve, Snapshot, State, type Value } from "@tay/core";
import { Clock, Effect } from "effect";
import * as E from "fp-ts/lib/Either.js";
import type * as Crash from "../../src/disk/Crash.js";
import * as Entropy from "../../src/disk/Entropy.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import { tickIssues } from "../../src/engine/internal/operations.js";
import * as Init from "../../src/store/Init.js";

export const directory = "/data";
export const t0 = 1_700_000_000_000;
const second = 1000;

/** A time `seconds` after t0. */
export const at = (seconds: number): number => t0 + seconds * second;

/** One engine call of a workload, with the time it runs at. */
export type Step =
  | { readonly _tag: "Insert"; readonly now: number; readonly jobs: ReadonlyArray<Commands.NewJob> }
  | { readonly _tag: "Claim"; readonly now: number; readonly queue: string; readonly limit: number }
  | {
      readonly _tag: "NextJobs";
      readonly now: number;
      readonly queue: string;
      readonly limit: number;
    }
  | {
      readonly _tag: "Complete";
      readonly now: number;
      readonly jobId: number;
      readonly result?: Value.Value;
    }
  | { readonly _tag: "Fail"; readonly now: number; readonly jobId: number; readonly error: string }
  | {
      readonly _tag: "Cancel";
      readonly now: number;
      readonly jobId: number;
      readonly reason: string;
    }
  | {
      readonly _tag: "Register";
      readonly now: number;
      readonly scheduleId: string;
      readonly definition: Event.ScheduleDefinition;
    }
  | { readonly _tag: "CancelSchedule"; readonly now: number; readonly scheduleId: string }
  | { readonly _tag: "Rescue"; readonly now: number; readonly startedBefore: number }
  | { readonly _tag: "Tick"; readonly now: number }
  | { readonly _tag: "Compact"; readonly now: number; readonly retentionMs: number }
  /** Closes the engine and opens it again (which rescues the jobs left executing). */
  | { readonly _tag: "Reopen"; readonly now: number };

/** A named program and the options its engine runs under. */
export interface Workload {
  readonly name: string;
  readonly steps: ReadonlyArray<Step>;
  readonly options: Engine.EngineOptions;
}

/** A new job on queue "default". */
export const job = (
  worker: string,
  args: Value.Value = null,
  scheduledAt?: number,
): Commands.NewJob => ({
  queue: "default",
  worker,
  args,
  maxAttempts: 3,
  ...(scheduledAt === undefined ? {} : { scheduledAt }),
});

/** A schedule definition on queue "default". */
export const schedule = (
  worker: string,
  recurrence: { readonly everyMs: number } | { readonly cron: string },
): Event.ScheduleDefinition => ({
  queue: "default",
  worker,
  args: new Map<string, Value.Value>([["source", worker]]),
  priority: 1,
  maxAttempts: 2,
  everyMs: "everyMs" in recurrence ? recurrence.everyMs : null,
  cron: "cron" in recurrence ? recurrence.cron : null,
  overlap: "allow",
});

/**
 * The core commands an engine call decides, in order (a tick is the engine's own `tickIssues`,
 * each its own batch; a reopen a rescue).
 */
const commandsOf = (step: Step, state: State.State): ReadonlyArray<Commands.Command> => {
  const { now } = step;
  switch (step._tag) {
    case "Insert":
      return [Commands.insertJobs({ now, jobs: step.jobs })];
    case "Claim":
    case "NextJobs":
      return [Commands.claimJobs({ now, queue: step.queue, limit: step.limit })];
    case "Complete":
      return [
        step.result === undefined
          ? Commands.completeJob({ now, jobId: step.jobId })
          : Commands.completeJob({ now, jobId: step.jobId, result: step.result }),
      ];
    case "Fail":
      return [Commands.failJob({ now, jobId: step.jobId, error: step.error })];
    case "Cancel":
      return [Commands.cancelJob({ now, jobId: step.jobId, reason: step.reason })];
    case "Register":
      return [
        Commands.registerSchedule({
          now,
          scheduleId: step.scheduleId,
          definition: step.definition,
        }),
      ];
    case "CancelSchedule":
      return [Commands.cancelSchedule({ now, scheduleId: step.scheduleId })];
    case "Rescue":
      return [
        Commands.rescueJobs({ now, startedBefore: step.startedBefore, error: "stuck worker" }),
      ];
    case "Tick":
      return tickIssues(now).map((issue) => issue.command);
    case "Reopen":
      // Engine.open rescues orphans only when some job is executing.
      return [...State.jobs(state)].some((held) => held.state === "executing")
        ? [
            Commands.rescueJobs({
              now,
              startedBefore: Number.MAX_SAFE_INTEGER,
              error: Engine.orphanError,
            }),
          ]
        : [];
    case "Compact":
      return [];
    default: {
      const unknownStep: never = step;
      return unknownStep;
    }
  }
};

const orThrow = <A>(either: E.Either<unknown, A>, what: string): A => {
  if (E.isLeft(either)) throw new Error(`${what}: ${JSON.stringify(either.left)}`);
  return either.right;
};

/**
 * The pure replay, with core alone: `states[k]` folds the first k decided
 * transitions (accepted commands, or compactions); `after[i]` is how many
 * transitions step i completes. A refused command is no transition.
 * `partials` are the states inside a command of several records, after
 * each of its records but the last: what a crash may leave of it when it
 * was not acknowledged.
 * `leanStates[k]` is the same fold into a lean state (docs/core.md): what
 * an engine with its terminal index (the default) holds.
 */
export interface Replay {
  readonly states: ReadonlyArray<State.State>;
  readonly leanStates: ReadonlyArray<State.State>;
  readonly after: ReadonlyArray<number>;
  /** Commands the deciders refused (the engine refuses them too). */
  readonly refused: number;
  /** States inside a command of several records; `transition` is the command's. */
  readonly partials: ReadonlyArray<{
    readonly transition: number;
    readonly state: State.State;
    readonly lean: State.State;
  }>;
}

export const replay = (steps: ReadonlyArray<Step>): Replay => {
  const states: Array<State.State> = [State.initialState];
  const leanStates: Array<State.State> = [State.leanInitialState];
  const after: Array<number> = [];
  const partials: Array<Replay["partials"][number]> = [];
  let refused = 0;
  const last = () => states[states.length - 1] ?? State.initialState;
  const lastLean = () => leanStates[leanStates.length - 1] ?? State.leanInitialState;
  for (const step of steps) {
    if (step._tag === "Compact") {
      const base = Snapshot.snapshot(last(), { now: step.now, retentionMs: step.retentionMs });
      states.push(orThrow(Evolve.foldGeneration(base, []), "the snapshot folds"));
      leanStates.push(orThrow(Evolve.foldGeneration(base, [], { lean: true }), "it folds lean"));
    } else {
      for (const command of commandsOf(step, last())) {
        const events = Decide.decide(last(), command);
        if (E.isLeft(events)) {
          refused += 1;
          continue;
        }
        // A command of several records (a claim of several jobs, one (3,1)
        // each) is one batch, and a crash may keep a prefix of an
        // unacknowledged batch cut at a record's end (found by the full
        // exploration once checkpoints moved the writes): its states after
        // each record but the last, noted apart.
        for (let count = 1; count < events.right.length; count++) {
          const records = events.right.slice(0, count);
          partials.push({
            transition: states.length,
            state: orThrow(Evolve.evolveAll(last(), records), `${command._tag} folds in part`),
            lean: orThrow(Evolve.evolveAll(lastLean(), records), "it folds lean in part"),
          });
        }
        states.push(orThrow(Evolve.evolveAll(last(), events.right), `${command._tag} folds`));
        leanStates.push(orThrow(Evolve.evolveAll(lastLean(), events.right), "it folds lean"));
      }
    }
    after.push(states.length - 1);
  }
  return { states, leanStates, after, refused, partials };
};

/** The replay's states of the kind `state` is (lean, as an engine with its index holds, or full). */
export const statesLike = (expected: Replay, state: State.State): ReadonlyArray<State.State> =>
  state.lean ? expected.leanStates : expected.states;

/** What a workload acknowledges: init, a compaction begun, or steps durable up to a point. */
export type Label =
  | { readonly _tag: "Initialized" }
  | { readonly _tag: "Compacting" }
  /** Steps durable through `transitions` of the replay, through `lastSequence`. */
  | { readonly _tag: "Done"; readonly transitions: number; readonly lastSequence: number };

/** Runs one step on `engine` (a reopen is the caller's). */
export const runStep = (
  engine: Engine.EngineService,
  step: Step,
): Effect.Effect<void, Engine.EngineError | Engine.InvalidArgument> => {
  switch (step._tag) {
    case "Insert":
      return Effect.asVoid(engine.insertMany(step.jobs));
    case "Claim":
      return Effect.asVoid(engine.claim(step.queue, step.limit));
    case "NextJobs":
      return Effect.asVoid(engine.nextJobs([{ queue: step.queue, limit: step.limit }]));
    case "Complete":
      return Effect.asVoid(engine.complete(step.jobId, step.result));
    case "Fail":
      return Effect.asVoid(engine.fail(step.jobId, step.error));
    case "Cancel":
      return Effect.asVoid(engine.cancel(step.jobId, step.reason));
    case "Register":
      return Effect.asVoid(engine.registerSchedule(step.scheduleId, step.definition));
    case "CancelSchedule":
      return Effect.asVoid(engine.cancelSchedule(step.scheduleId));
    case "Rescue":
      return Effect.asVoid(engine.rescue(step.startedBefore, "stuck worker"));
    case "Tick":
      return Effect.asVoid(engine.tick());
    case "Compact":
      return Effect.asVoid(engine.compact(step.retentionMs));
    case "Reopen":
      return Effect.void;
    default: {
      const unknownStep: never = step;
      return unknownStep;
    }
  }
};

/** The time every clock read returns: each step sets it, so the engine decides at `step.now`. */
const time = { now: t0 };
const liveClock = Clock.make();
const steppedClock: Clock.Clock = {
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => time.now,
  currentTimeMillis: Effect.sync(() => time.now),
  unsafeCurrentTimeNanos: () => BigInt(time.now) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(time.now) * 1_000_000n),
  sleep: (duration) => liveClock.sleep(duration),
};

/** Sets the time every clock read of `deterministic` returns. */
export const setTime = (now: number) =>
  Effect.sync(() => {
    time.now = now;
  });

/** Deterministic time and ids, so every rerun performs the same operations. */
export const deterministic = <A, X, R>(effect: Effect.Effect<A, X, R>) =>
  effect.pipe(
    Effect.provideService(Entropy.Entropy, Entropy.seeded(7)),
    Effect.withClock(steppedClock),
  );

/** Runs one engine's share of the steps, from `start` up to a reopen; answers where it stopped. */
const runEngine = (
  workload: Workload,
  expected: Replay,
  start: number,
  acknowledge: (label: Label) => Effect.Effect<void>,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const maximal = (workload.options.durability ?? "Maximal") === "Maximal";
      // Checkpoints every few records: their writes are cut points too.
      const engine = yield* Engine.open(directory, {
        ...workload.options,
        timers: false,
        checkpointRecords: 6,
      });
      const done = (index: number) =>
        Effect.gen(function* () {
          const transitions = expected.after[index] ?? 0;
          // The uncut engine must agree with the replay after every step.
          const held = yield* engine.state();
          const wanted = statesLike(expected, held)[transitions] ?? State.initialState;
          if (!State.equals(held, wanted)) {
            return yield* Effect.dieMessage(
              `${workload.name}: engine and replay differ at ${index}`,
            );
          }
          const { lastSequence } = yield* engine.log.stats();
          return { _tag: "Done" as const, transitions, lastSequence };
        });
      if (start > 0 && maximal) yield* acknowledge(yield* done(start - 1));
      for (let index = start; index < workload.steps.length; index += 1) {
        const step = workload.steps[index];
        if (step === undefined) break;
        yield* setTime(step.now);
        if (step._tag === "Reopen") {
          // Under Segment or Throughput only a close makes the steps before it durable.
          const label = yield* done(index - 1);
          yield* engine.close();
          if (!maximal) yield* acknowledge(label);
          return index + 1;
        }
        if (step._tag === "Compact" && maximal) {
          // flush fails if the writer stopped: then the cut is inside the compaction's I/O.
          // (Under Segment the old generation's tail is not durable: a cut in the compaction
          // may find it torn.)
          yield* engine.flush();
          yield* acknowledge({ _tag: "Compacting" });
        }
        yield* Effect.catchTag(runStep(engine, step), "Rejected", () => Effect.void);
        if (maximal) yield* acknowledge(yield* done(index));
      }
      const label = yield* done(workload.steps.length - 1);
      yield* engine.close();
      if (!maximal) yield* acknowledge(label);
      return workload.steps.length;
    }),
  );

/**
 * The crash harness's workload: init, then the steps on engines opened in
 * turn (a reopen closes one and opens the next), acknowledging each step
 * once durable (under Maximal at once, otherwise at the close).
 */
export const crashWorkload =
  (workload: Workload, expected: Replay = replay(workload.steps)): Crash.Workload<Label> =>
  (disk, acknowledge) =>
    deterministic(
      Effect.gen(function* () {
        yield* setTime(t0);
        yield* Init.init(directory);
        yield* acknowledge({ _tag: "Initialized" });
        let next = 0;
        while (next < workload.steps.length) {
          next = yield* runEngine(workload, expected, next, acknowledge);
        }
      }).pipe(Effect.provide(FaultDisk.layer(disk))),
    );

/** The last `Done` acknowledged (none: the empty prefix). */
export const lastDone = (acknowledged: ReadonlyArray<Label>) =>
  acknowledged.reduce(
    (done, label) =>
      label._tag === "Done"
        ? { transitions: label.transitions, lastSequence: label.lastSequence }
        : done,
    { transitions: 0, lastSequence: 0 },
  );

/** Whether `state` is the fold of a prefix of the replay holding the first `transitions`. */
export const isDecidedPrefix = (
  expected: Replay,
  state: State.State,
  transitions: number,
): boolean =>
  statesLike(expected, state).some(
    (candidate, index) => index >= transitions && State.equals(state, candidate),
  ) ||
  // Part of a command not acknowledged (its transition past `transitions`).
  expected.partials.some(
    (partial) =>
      partial.transition > transitions &&
      State.equals(state, state.lean ? partial.lean : partial.state),
  );

const everyMinute = schedule("heartbeat", { everyMs: 60 * second });

/** Mail: every command once or twice, a rotation every few steps, one compaction. */
const mail: Workload = {
  name: "mail",
  options: { durability: "Maximal", rotationTargetBytes: 400 },
  steps: [
    { _tag: "Insert", now: at(1), jobs: [job("email", "to a")] },
    { _tag: "Insert", now: at(2), jobs: [job("email", "to b"), job("email", "to c"), job("sms")] },
    { _tag: "Insert", now: at(3), jobs: [job("later", null, at(90))] },
    { _tag: "Claim", now: at(4), queue: "default", limit: 2 },
    { _tag: "Complete", now: at(5), jobId: 1, result: new Map([["delivered", true]]) },
    { _tag: "Fail", now: at(6), jobId: 2, error: "mailbox full" },
    { _tag: "Register", now: at(7), scheduleId: "every-minute", definition: everyMinute },
    { _tag: "NextJobs", now: at(8), queue: "default", limit: 2 },
    { _tag: "Complete", now: at(9), jobId: 3, result: Uint8Array.of(1, 2, 3) },
    { _tag: "Cancel", now: at(10), jobId: 4, reason: "superseded" },
    { _tag: "Tick", now: at(61) },
    { _tag: "Compact", now: at(62), retentionMs: 0 },
    { _tag: "Insert", now: at(63), jobs: [job("after-compaction", [1, 2, 3])] },
    { _tag: "Claim", now: at(64), queue: "default", limit: 3 },
    { _tag: "Complete", now: at(65), jobId: 2, result: "second try" },
    { _tag: "Tick", now: at(121) },
    { _tag: "Insert", now: at(122), jobs: [job("last")] },
  ],
};

/** Schedules and rescue: two schedules delivered by ticks, re-registered, cancelled; orphans rescued. */
const schedules: Workload = {
  name: "schedules",
  options: { durability: "Maximal", rotationTargetBytes: 600 },
  steps: [
    {
      _tag: "Register",
      now: at(1),
      scheduleId: "half-minute",
      definition: schedule("a", { everyMs: 30 * second }),
    },
    {
      _tag: "Register",
      now: at(2),
      scheduleId: "cron",
      definition: schedule("b", { cron: "*/2 * * * *" }),
    },
    { _tag: "Tick", now: at(31) },
    { _tag: "NextJobs", now: at(32), queue: "default", limit: 1 },
    { _tag: "Complete", now: at(33), jobId: 1, result: -7 },
    { _tag: "Tick", now: at(61) },
    { _tag: "Tick", now: at(121) },
    { _tag: "Claim", now: at(122), queue: "default", limit: 2 },
    { _tag: "Reopen", now: at(130) },
    { _tag: "Claim", now: at(131), queue: "default", limit: 3 },
    { _tag: "Rescue", now: at(200), startedBefore: at(150) },
    {
      _tag: "Register",
      now: at(201),
      scheduleId: "half-minute",
      definition: schedule("a2", { everyMs: 45 * second }),
    },
    { _tag: "CancelSchedule", now: at(202), scheduleId: "cron" },
    { _tag: "Tick", now: at(250) },
    { _tag: "Claim", now: at(251), queue: "default", limit: 4 },
    { _tag: "Fail", now: at(252), jobId: 2, error: "flaky" },
    { _tag: "Compact", now: at(253), retentionMs: 10 * second },
    { _tag: "Tick", now: at(300) },
    { _tag: "Claim", now: at(301), queue: "default", limit: 2 },
    { _tag: "Reopen", now: at(302) },
    { _tag: "Tick", now: at(400) },
  ],
};

const text = (length: number, seed: string) =>
  seed.repeat(Math.ceil(length / seed.length)).slice(0, length);

/** Big batches: records of hundreds of bytes, a batch spanning a rotation, two compactions. */
const batches: Workload = {
  name: "batches",
  options: { durability: "Maximal", rotationTargetBytes: 1024 },
  steps: [
    {
      _tag: "Insert",
      now: at(1),
      jobs: [job("big", text(300, "a")), job("big", text(200, "b")), job("big", text(500, "c"))],
    },
    { _tag: "Insert", now: at(2), jobs: [1, 2, 3, 4, 5].map((index) => job("small", index)) },
    { _tag: "Claim", now: at(3), queue: "default", limit: 4 },
    {
      _tag: "Complete",
      now: at(4),
      jobId: 1,
      result: Uint8Array.from({ length: 400 }, (_, index) => index % 251),
    },
    { _tag: "Complete", now: at(5), jobId: 2, result: new Map([["ok", [true, null, 2n ** 60n]]]) },
    { _tag: "Fail", now: at(6), jobId: 3, error: text(120, "disk on fire ") },
    { _tag: "Cancel", now: at(7), jobId: 8, reason: "not needed" },
    { _tag: "Compact", now: at(8), retentionMs: 0 },
    { _tag: "Insert", now: at(9), jobs: [job("big", text(900, "d"))] },
    { _tag: "Claim", now: at(10), queue: "default", limit: 10 },
    { _tag: "Complete", now: at(11), jobId: 4 },
    { _tag: "Fail", now: at(12), jobId: 5, error: "once" },
    { _tag: "Rescue", now: at(20), startedBefore: at(15) },
    { _tag: "Compact", now: at(21), retentionMs: 5 * second },
    { _tag: "Insert", now: at(22), jobs: [job("big", text(700, "e")), job("big", text(700, "f"))] },
    { _tag: "Reopen", now: at(23) },
    { _tag: "Claim", now: at(24), queue: "default", limit: 1 },
  ],
};

/** Segment durability: appends durable only at a close (or a seal); reopens between. */
const segment: Workload = {
  name: "segment",
  options: { durability: "Segment", rotationTargetBytes: 500 },
  steps: [
    { _tag: "Insert", now: at(1), jobs: [job("a", "one"), job("a", "two")] },
    { _tag: "Claim", now: at(2), queue: "default", limit: 1 },
    { _tag: "Complete", now: at(3), jobId: 1, result: "done" },
    { _tag: "Insert", now: at(4), jobs: [job("b", text(250, "g"))] },
    { _tag: "Reopen", now: at(5) },
    { _tag: "Claim", now: at(6), queue: "default", limit: 2 },
    { _tag: "Register", now: at(7), scheduleId: "every-minute", definition: everyMinute },
    { _tag: "Tick", now: at(67) },
    { _tag: "Fail", now: at(68), jobId: 2, error: "retry me" },
    { _tag: "Insert", now: at(69), jobs: [job("c", text(300, "h"))] },
    { _tag: "Reopen", now: at(70) },
    { _tag: "Compact", now: at(71), retentionMs: 0 },
    { _tag: "Insert", now: at(72), jobs: [job("d", "after")] },
    { _tag: "Cancel", now: at(73), jobId: 4, reason: "gone" },
  ],
};

/**
 * Cycles: twelve rounds of insert, claim, complete with a result and fail,
 * under a 300-byte rotation target; ticks deliver the retries, a compaction
 * halfway, a reopen with jobs executing (rescued at open) after round 9.
 */
const cycles: Workload = {
  name: "cycles",
  options: { durability: "Maximal", rotationTargetBytes: 300 },
  steps: Array.from({ length: 12 }, (_, round): ReadonlyArray<Step> => {
    const base = 10 * round;
    const first = 3 * round + 1;
    // A queue per round: each claim takes exactly this round's jobs, whatever earlier retries do.
    const queue = `round-${round}`;
    const roundJob = (args: Value.Value) => ({ ...job("cycle", args), queue });
    const roundSteps: Array<Step> = [
      {
        _tag: "Insert",
        now: at(base + 1),
        jobs: [roundJob(round), roundJob(-round), roundJob(text(round * 10, "p"))],
      },
      { _tag: "Claim", now: at(base + 2), queue, limit: 3 },
      { _tag: "Complete", now: at(base + 3), jobId: first, result: [round, text(20, "r")] },
      { _tag: "Fail", now: at(base + 4), jobId: first + 1, error: `round ${round}` },
    ];
    // The third job stays executing until a later round's rescue, or the reopen's.
    if (round % 4 === 3) roundSteps.push({ _tag: "Tick", now: at(base + 9) });
    if (round === 5)
      roundSteps.push({ _tag: "Rescue", now: at(base + 9), startedBefore: at(base) });
    if (round === 6)
      roundSteps.push({ _tag: "Compact", now: at(base + 9), retentionMs: 30 * second });
    if (round === 9) roundSteps.push({ _tag: "Reopen", now: at(base + 9) });
    return roundSteps;
  }).flat(),
};

/** Every workload of the crash and fault explorations. */
export const workloads: ReadonlyArray<Workload> = [mail, schedules, batches, segment, cycles];
