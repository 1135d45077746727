/**
 * Proves that in whatever order claims, handler ends, timeouts, cancels, rescues and the close
 * come, no job runs twice at once, no job is lost (after the close each is terminal, available,
 * retryable or scheduled, none executing), every attempt ends exactly once and the worker's
 * events tell the same end as the log, and a handler's late result (after its timeout, a cancel,
 * a rescue or the close) changes nothing, the engine refusing it as `StaleAttempt` when it gets
 * that far (as it refuses a late complete sent on purpose, appending nothing), and a job once
 * claimed runs even as the worker closes (its handler called, interrupted only at the close's
 * timeout). fast-check's scheduler releases every handler's settling and every outside event
 * (inserts, cancels, rescues, TestClock moves, the close) in the orders it explores, with random
 * pauses between releases, against a real engine on a fault disk whose writes finish a turn later
 * (so commands meet batches in flight).
 */
import type { Job } from "@tay/core";
import {
  Chunk,
  Clock,
  Effect,
  ManagedRuntime,
  Runtime,
  Stream,
  TestClock,
  TestContext,
} from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as Engine from "../../src/engine/Engine.js";
import * as Worker from "../../src/worker/Worker.js";
import {
  auditLog,
  engineOnFaultDisk,
  type JobRecords,
  Ledger,
  quiet,
  type Seen,
} from "../support/workerHarness.js";

const runs = Number(process.env.TAY_WORKER_INTERLEAVING_RUNS ?? "300");

const timeoutMs = 100;
const closeTimeoutMs = 50;
const rescueError = "rescued";

/** What one attempt's handler does, each settling when the scheduler releases it. */
type Behavior =
  /** Returns a value, whatever its signal says (a late result when its attempt ended first). */
  | "complete"
  | "throw"
  /** Rejects once its signal is aborted. */
  | "hang";

/** Between two releases: nothing, one turn of the event loop, or until everything settled. */
type Pause = "none" | "turn" | "settle";

interface Plan {
  readonly jobs: ReadonlyArray<{
    readonly queue: "a" | "b";
    readonly maxAttempts: number;
    readonly behaviors: ReadonlyArray<Behavior>;
  }>;
  /** Jobs to cancel, by their index in `jobs`. */
  readonly cancels: ReadonlyArray<number>;
  readonly rescues: number;
  readonly advancesMs: ReadonlyArray<number>;
  readonly pauses: ReadonlyArray<Pause>;
  /** Whether the worker is paused (`pause`) and later resumed, each a task of the scheduler. */
  readonly workerPause: boolean;
}

const planArb: fc.Arbitrary<Plan> = fc.record({
  jobs: fc.array(
    fc.record({
      queue: fc.constantFrom("a", "a", "b"),
      maxAttempts: fc.integer({ min: 1, max: 3 }),
      behaviors: fc.array(fc.constantFrom<Behavior>("complete", "complete", "throw", "hang"), {
        minLength: 3,
        maxLength: 3,
      }),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  cancels: fc.array(fc.nat(4), { maxLength: 2 }),
  rescues: fc.integer({ min: 0, max: 1 }),
  advancesMs: fc.array(fc.constantFrom(50, 100, 150), { minLength: 1, maxLength: 3 }),
  pauses: fc.array(fc.constantFrom<Pause>("none", "turn", "settle"), {
    minLength: 1,
    maxLength: 24,
  }),
  workerPause: fc.boolean(),
});

/** What the runs explored, in all. */
const explored = {
  releases: 0,
  timeouts: 0,
  cancelledRunning: 0,
  rescued: 0,
  interrupted: 0,
  startedWhileClosing: 0,
  stale: 0,
  staleRefusedByEngine: 0,
  lateCompletesRefused: 0,
  pausedQuiet: 0,
};

/** The engine the worker sees: the same, with every end the engine refuses as stale counted. */
const counting = (engine: Engine.EngineService): Engine.EngineService => {
  const stale = <A, E>(command: Effect.Effect<A, E>) =>
    Effect.tapError(command, (error) =>
      Effect.sync(() => {
        if (error instanceof Engine.Rejected && error.rejection._tag === "StaleAttempt") {
          explored.staleRefusedByEngine += 1;
        }
      }),
    );
  return {
    ...engine,
    complete: (...args) => stale(engine.complete(...args)),
    fail: (...args) => stale(engine.fail(...args)),
  };
};

/** Handlers whose every settling is a task of the scheduler; results late ones are told of. */
const scheduledHandler =
  (scheduler: fc.Scheduler, ledger: Ledger): Worker.Handler<ReadonlyArray<Behavior>> =>
  (job, { signal }) => {
    ledger.handlerCalled(job.jobId, job.attempt);
    const label = `${job.args[job.attempt - 1]} ${job.jobId}.${job.attempt}`;
    switch (job.args[job.attempt - 1] ?? "complete") {
      case "hang":
        return new Promise((_, reject) => {
          signal.addEventListener(
            "abort",
            () =>
              void scheduler.schedule(Promise.resolve(), label).then(() => reject(signal.reason)),
            { once: true },
          );
        });
      case "throw":
        return scheduler.schedule(Promise.resolve(), label).then(() => {
          throw new Error(`boom ${job.jobId}.${job.attempt}`);
        });
      default:
        return scheduler.schedule(Promise.resolve(`done ${job.jobId}.${job.attempt}`), label);
    }
  };

interface Run {
  readonly scheduler: fc.Scheduler;
  readonly engine: Engine.EngineService;
  readonly ledger: Ledger;
  readonly worker: Worker.RunningWorker;
  readonly run: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>;
  /** Until everything settled (`light`: a pause of a few turns while things change). */
  readonly settle: (light?: boolean) => Promise<number>;
  readonly inserted: Array<number | undefined>;
  closing: Promise<Worker.CloseReport> | undefined;
  /** How many events the worker had told when the close began. */
  closeBegan: { readonly seen: number } | undefined;
  report: Worker.CloseReport | undefined;
  /**
   * The log's last sequence when the worker's `pause` resolved, and when it
   * was resumed (or the close began): no job may start in between.
   */
  readonly quiet: Array<{ from: number; to: number | undefined }>;
}

const lastSequence = (run: Run) =>
  run.run(Effect.map(run.engine.log.stats(), (stats) => stats.lastSequence));

/** Pauses the worker and, as a later task, resumes it: no job may start while it is quiet. */
const schedulePause = (run: Run): void => {
  const { scheduler } = run;
  const resumed = scheduler.schedule(Promise.resolve(), "resume worker");
  void scheduler.schedule(Promise.resolve(), "pause worker").then(async () => {
    await run.run(run.worker.pause());
    const window = { from: await lastSequence(run), to: undefined as number | undefined };
    run.quiet.push(window);
    await resumed;
    window.to = await lastSequence(run);
    await run.run(run.worker.resume());
  });
};

const startClose = (run: Run) => {
  if (run.closing !== undefined) return;
  run.closeBegan = { seen: run.ledger.seen.length };
  run.closing = run.run(run.worker.close({ timeoutMs: closeTimeoutMs })).then((report) => {
    run.report = report;
    return report;
  });
};

/** Every outside event of the plan, as a task of the scheduler. */
const scheduleEvents = (run: Run, plan: Plan): void => {
  const { scheduler, engine } = run;
  plan.jobs.forEach((job, index) => {
    void scheduler.schedule(Promise.resolve(), `insert ${index}`).then(async () => {
      const inserted = await engine.promises.insert({
        queue: job.queue,
        worker: "Scheduled",
        args: [...job.behaviors],
        maxAttempts: job.maxAttempts,
      });
      run.inserted[index] = inserted.jobId;
    });
  });
  for (const index of plan.cancels) {
    void scheduler.schedule(Promise.resolve(), `cancel ${index}`).then(async () => {
      const jobId = run.inserted[index];
      if (jobId !== undefined) await engine.promises.cancel(jobId, "test").catch(() => undefined);
    });
  }
  for (let rescue = 0; rescue < plan.rescues; rescue++) {
    void scheduler
      .schedule(Promise.resolve(), "rescue")
      .then(() =>
        run.run(
          Effect.flatMap(Clock.currentTimeMillis, (now) => engine.rescue(now + 1, rescueError)),
        ),
      );
  }
  for (const ms of plan.advancesMs) {
    void scheduler
      .schedule(Promise.resolve(), `advance ${ms}`)
      .then(() => run.run(TestClock.adjust(ms)));
  }
  if (plan.workerPause) schedulePause(run);
  void scheduler.schedule(Promise.resolve(), "close").then(() => startClose(run));
};

/** The sequences of the records that start a job (alone, or inside a mutation). */
const startSequences = (engine: Engine.EngineService) =>
  Effect.gen(function* () {
    const generation = yield* engine.log.generation();
    const entries = yield* Stream.runCollect(engine.log.iterFrom(generation.firstSequence));
    return Chunk.toReadonlyArray(entries)
      .filter(({ event }) =>
        (event._tag === "Mutation" ? event.events : [event]).some(
          (member) => member._tag === "JobStarted",
        ),
      )
      .map(({ sequence }) => sequence);
  });

/** No job started while the worker was paused and quiet (after `pause` resolved, before `resume`). */
const checkQuiet = (run: Run, started: ReadonlyArray<number>): void => {
  for (const window of run.quiet) {
    const to = window.to ?? Number.POSITIVE_INFINITY;
    const inside = started.filter((sequence) => sequence > window.from && sequence <= to);
    if (inside.length > 0) {
      throw new Error(`jobs started at ${inside.join(", ")} while paused (${window.from}..${to})`);
    }
    explored.pausedQuiet += 1;
  }
};

/** Releases the scheduler's tasks one by one, with the plan's pauses, until it runs dry. */
const drive = async (run: Run, pauses: ReadonlyArray<Pause>) => {
  for (let release = 0; release < 2_000; release++) {
    if (run.scheduler.count() === 0) {
      await run.settle();
      if (run.scheduler.count() === 0) return;
    }
    await run.scheduler.waitNext(1);
    explored.releases += 1;
    const pause = pauses[release % pauses.length];
    if (pause === "settle") await run.settle(true);
    else if (pause === "turn") await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`the scheduler never ran dry: ${run.scheduler.report().length} tasks`);
};

/** Closes (if the plan's close has not run), moving the clock until the close is done. */
const windDown = async (run: Run) => {
  startClose(run);
  for (let guard = 0; guard < 200; guard++) {
    await run.settle();
    if (run.scheduler.count() > 0) {
      await run.scheduler.waitNext(run.scheduler.count());
      continue;
    }
    if (run.report !== undefined) return run.report;
    await run.run(TestClock.adjust(closeTimeoutMs));
  }
  throw new Error("the close never ended");
};

/** The worker's end event of each attempt (there is at most one: the ledger checks it). */
const endsTold = (seen: ReadonlyArray<Seen>) => seen.filter((event) => event.tag !== "Started");

/** The worker's story and the log's agree on how every attempt ended. */
const sameStory = (records: JobRecords, told: ReadonlyArray<Seen>): void => {
  for (const event of told.filter((seen) => seen.jobId === records.jobId)) {
    const end = records.ends.get(event.attempt);
    const what = `job ${records.jobId} attempt ${event.attempt}: ${event.tag}, log ${JSON.stringify(end)} (${records.tags.join(", ")})`;
    switch (event.tag) {
      case "Completed":
        expect(end?.tag, what).toBe("JobFinished:completed");
        break;
      case "Retried":
        expect([end?.tag, end?.error], what).toEqual(["JobRetried", event.error]);
        break;
      case "Discarded":
        expect([end?.tag, end?.error], what).toEqual(["JobFinished:discarded", event.error]);
        break;
      case "Stale":
        // Someone else ended it: a cancel, or the rescue.
        expect(
          end?.tag === "JobCancelled" || (end !== undefined && end.error === rescueError),
          what,
        ).toBe(true);
        break;
      default:
        throw new Error(`${what}: not an end the worker may tell here`);
    }
  }
  // Every attempt the log ended, the worker told of once.
  for (const attempt of records.ends.keys()) {
    const count = told.filter((seen) => seen.jobId === records.jobId && seen.attempt === attempt);
    expect(count.length, `job ${records.jobId} attempt ${attempt}: ends told`).toBe(1);
  }
};

/**
 * A job once claimed runs, the close included: an attempt failed as interrupted (at the close's
 * timeout) had its handler called, as a job claimed while the worker closed once did not. (The
 * TestClock cannot tell when: adjusts that overlap may set it back.)
 */
const checkClose = (run: Run) => {
  const began = run.closeBegan;
  if (began === undefined) throw new Error("the close never began");
  for (const event of run.ledger.seen) {
    if (event.error !== "interrupted") continue;
    const what = `job ${event.jobId} attempt ${event.attempt} interrupted: its handler was called`;
    expect(run.ledger.called(event.jobId, event.attempt), what).toBe(true);
  }
  explored.startedWhileClosing += run.ledger.seen
    .slice(began.seen)
    .filter((event) => event.tag === "Started").length;
};

/** After the close: nothing executing, nothing lost, every end once and told the same. */
const checkEnd = (
  run: Run,
  state: ReadonlyMap<number, Job.Job>,
  audited: ReadonlyArray<JobRecords>,
) => {
  expect(run.ledger.violations).toEqual([]);
  checkClose(run);
  const inserted = run.inserted.filter((jobId) => jobId !== undefined);
  for (const jobId of inserted) {
    expect([
      "completed",
      "discarded",
      "cancelled",
      "available",
      "retryable",
      "scheduled",
    ]).toContain(state.get(jobId)?.state);
  }
  const told = endsTold(run.ledger.seen);
  for (const records of audited) {
    expect(
      records.terminal,
      `job ${records.jobId}: ${records.tags.join(", ")}`,
    ).toBeLessThanOrEqual(1);
    sameStory(records, told);
  }
  for (const event of told) {
    if (event.tag === "Stale") explored.stale += 1;
    if (event.error === "timeout") explored.timeouts += 1;
    if (event.error === "interrupted") explored.interrupted += 1;
  }
  for (const records of audited) {
    for (const end of records.ends.values()) {
      if (end.tag === "JobCancelled") explored.cancelledRunning += 1;
      if (end.error === rescueError) explored.rescued += 1;
    }
  }
};

/** A late worker completes every attempt that ended: refused as stale, appending nothing. */
const lateCompletes = (run: Run, audited: ReadonlyArray<JobRecords>) =>
  Effect.gen(function* () {
    const before = (yield* run.engine.log.stats()).lastSequence;
    for (const records of audited) {
      for (const attempt of records.ends.keys()) {
        const late = yield* Effect.flip(run.engine.complete(records.jobId, "late", { attempt }));
        expect(late instanceof Engine.Rejected && late.rejection._tag).toBe("StaleAttempt");
        explored.lateCompletesRefused += 1;
      }
    }
    expect((yield* run.engine.log.stats()).lastSequence).toBe(before);
  });

const explore = (scheduler: fc.Scheduler, plan: Plan) =>
  Effect.gen(function* () {
    const { disk, engine } = yield* engineOnFaultDisk({ writesOnNextTurn: true });
    const clock = yield* Effect.clock;
    const ledger = new Ledger(
      new Map([
        ["a", 2],
        ["b", 1],
      ]),
      2,
      () => clock.unsafeCurrentTimeMillis(),
    );
    const worker = yield* Worker.run<Engine.FileLogKind, { Scheduled: ReadonlyArray<Behavior> }>(
      counting(engine),
      {
        queues: { a: 2, b: 1 },
        concurrency: 2,
        timeoutMs,
        backoff: { baseMs: 10, factor: 1, capMs: 10 },
        handlers: { Scheduled: scheduledHandler(scheduler, ledger) },
        onEvent: ledger.onEvent,
      },
    );
    const runtime = yield* Effect.runtime<never>();
    const run: Run = {
      scheduler,
      engine,
      ledger,
      worker,
      run: (effect) => Runtime.runPromise(runtime)(effect),
      settle: (light) =>
        quiet(() => `${disk.mutations()}/${ledger.seen.length}/${scheduler.count()}`, light),
      inserted: plan.jobs.map(() => undefined),
      closing: undefined,
      closeBegan: undefined,
      report: undefined,
      quiet: [],
    };
    scheduleEvents(run, plan);
    yield* Effect.promise(() => drive(run, plan.pauses));
    yield* Effect.promise(() => windDown(run));
    checkQuiet(run, yield* startSequences(engine));
    const audited = yield* auditLog(engine);
    const jobs = yield* engine.jobs();
    checkEnd(run, new Map(jobs.map((job) => [job.jobId, job])), audited);
    yield* lateCompletes(run, audited);
  }).pipe(Effect.scoped);

describe("the worker under fast-check's scheduler", () => {
  it("keeps every job's attempts apart and ended once, in every order explored", async () => {
    const started = Date.now();
    let runCount = 0;
    // One TestClock for all the runs (making a test context costs more than a run).
    const testRuntime = ManagedRuntime.make(TestContext.TestContext);
    try {
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), planArb, async (scheduler, plan) => {
          runCount += 1;
          await testRuntime.runPromise(explore(scheduler, plan));
        }),
        {
          numRuns: runs,
          ...(process.env.TAY_WORKER_INTERLEAVING_SEED === undefined
            ? {}
            : { seed: Number(process.env.TAY_WORKER_INTERLEAVING_SEED) }),
          // Shrinking runs many explorations: report what it has by then.
          interruptAfterTimeLimit: 120_000,
          markInterruptAsFailure: true,
        },
      );
    } finally {
      await testRuntime.dispose();
    }
    console.log(
      `worker interleavings: ${runCount} runs (${runs} asked), ${explored.releases} scheduled releases, ${explored.timeouts} timeouts, ${explored.cancelledRunning} running jobs cancelled, ${explored.rescued} rescued, ${explored.interrupted} interrupted at close, ${explored.startedWhileClosing} started while closing, ${explored.stale} stale ends (${explored.staleRefusedByEngine} refused by the engine), ${explored.lateCompletesRefused} late completes refused, ${explored.pausedQuiet} quiet pauses checked, in ${Date.now() - started} ms`,
    );
  }, 170_000);
});
