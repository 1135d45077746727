/**
 * Proves that the worker claims, ends, retries, times out, cancels and closes exactly as a naive
 * reference model says, at the exact instants of the test's clock: no job has two live attempts,
 * no concurrency is passed, a scheduled job or a retry starts at its due time (the clock moves
 * only when the test moves it, so the worker was woken, not polling), a handler that ignores its
 * signal and returns after its timeout, a cancel or the close changes nothing, and after the
 * close a second worker drains the store, whose log then ends every job exactly once. A queue's
 * state in the engine (paused, a concurrency, a rate limit) is obeyed, and a claim it held back
 * starts at the instant it lets one (a resume, a freed slot, a rate window passing). Random
 * step lists (insert now or later, with a script of what each attempt's handler does: complete,
 * throw, hang until aborted, or ignore its signal, after some clock time; move the clock; cancel;
 * set a queue's state; close) run against a real engine on the fault disk under TestClock, and after every step, and
 * at every instant where the model expects something, the engine's jobs must equal the model's
 * and the worker's events must match the model's, in order and at their instant.
 */
import { type Job, State } from "@tay/core";
import { type Clock, Duration, Effect, Fiber, TestClock, TestContext } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type * as FaultDisk from "../../src/disk/FaultDisk.js";
import type * as Engine from "../../src/engine/Engine.js";
import * as Worker from "../../src/worker/Worker.js";
import { auditLog, engineOnFaultDisk, Ledger, settled } from "../support/workerHarness.js";

const runs = Number(process.env.TAY_WORKER_MODEL_RUNS ?? "30");
// Time for the runs and a shrink: a run takes up to ~0.2 s on a loaded
// 2-core machine, so a long mode (500 runs) gets more than the default's 100 s.
const timeLimitMs = Math.max(100_000, runs * 400);
/** Replays a failure: TAY_WORKER_MODEL_SEED and TAY_WORKER_MODEL_PATH, as fast-check printed them. */
const replay = {
  ...(process.env.TAY_WORKER_MODEL_SEED === undefined
    ? {}
    : { seed: Number(process.env.TAY_WORKER_MODEL_SEED) }),
  ...(process.env.TAY_WORKER_MODEL_PATH === undefined
    ? {}
    : { path: process.env.TAY_WORKER_MODEL_PATH }),
};

// Every time here is a multiple of 10 ms except the close timeout (5 mod 10), so that a handler's
// end never meets its own timeout or the close deadline at the same instant (which of two things
// at one instant wins is a race the model does not decide).
const handlerMs = [0, 20, 60, 130, 270, 550] as const;
const lateMs = [130, 270, 550] as const;
const timeoutsMs = [150, 400] as const;
const advancesMs = [10, 20, 50, 130, 300, 700] as const;
const delaysMs = [0, 0, 0, 10, 60, 200] as const;
const closeTimeoutsMs = [105, 255, 605] as const;

/** What one attempt's handler does. */
type Behavior =
  | { readonly kind: "complete" | "throw"; readonly afterMs: number }
  /** Ignores its signal: returns a result after `afterMs` whatever happened meanwhile. */
  | { readonly kind: "ignore"; readonly afterMs: number }
  /** Runs until its signal is aborted. */
  | { readonly kind: "hang" };

type Step =
  | {
      readonly _tag: "Insert";
      readonly queue: "a" | "b";
      readonly delayMs: number;
      readonly maxAttempts: number;
      readonly behaviors: ReadonlyArray<Behavior>;
    }
  | { readonly _tag: "Advance"; readonly ms: number }
  | { readonly _tag: "Cancel"; readonly pick: number }
  | { readonly _tag: "Queue"; readonly queue: "a" | "b"; readonly state: QueueLimits }
  | { readonly _tag: "Close" };

/** A queue's state in the engine (EVENTS-V3.md (24,3)); null: no bound. */
interface QueueLimits {
  readonly paused: boolean;
  readonly concurrency: number | null;
  readonly rateLimit: { readonly count: number; readonly perMs: number } | null;
}

const noLimits: QueueLimits = { paused: false, concurrency: null, rateLimit: null };

interface Config {
  readonly queues: Readonly<Record<string, number>>;
  readonly concurrency: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly backoff: { readonly baseMs: number; readonly factor: number; readonly capMs: number };
  readonly closeTimeoutMs: number;
}

const behaviorArb: fc.Arbitrary<Behavior> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("complete"), afterMs: fc.constantFrom(...handlerMs) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("throw"), afterMs: fc.constantFrom(...handlerMs) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "hang" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("ignore"), afterMs: fc.constantFrom(...lateMs) }),
  },
);

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 16,
    arbitrary: fc.record({
      _tag: fc.constant("Insert"),
      queue: fc.constantFrom("a", "a", "b"),
      delayMs: fc.constantFrom(...delaysMs),
      maxAttempts: fc.integer({ min: 1, max: 3 }),
      behaviors: fc.array(behaviorArb, { minLength: 3, maxLength: 3 }),
    }),
  },
  {
    weight: 12,
    arbitrary: fc.record({ _tag: fc.constant("Advance"), ms: fc.constantFrom(...advancesMs) }),
  },
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant("Cancel"), pick: fc.nat(40) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("Queue"),
      queue: fc.constantFrom("a", "b"),
      state: fc.record({
        paused: fc.boolean(),
        concurrency: fc.option(fc.integer({ min: 1, max: 2 }), { nil: null }),
        // Even mod 10: a start a window let through, and the ends after it, never fall on the
        // close's deadline (5 mod 10).
        rateLimit: fc.option(
          fc.record({
            count: fc.integer({ min: 1, max: 2 }),
            perMs: fc.constantFrom(32, 124, 306),
          }),
          { nil: null },
        ),
      }),
    }),
  },
  // Rare: a close ends the claims, and the steps after it only move the clock, insert, cancel.
  { weight: 1, arbitrary: fc.constant({ _tag: "Close" as const }) },
);

const configArb: fc.Arbitrary<Config> = fc
  .record({
    a: fc.integer({ min: 1, max: 3 }),
    b: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
    concurrency: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    timeoutMs: fc.option(fc.constantFrom(...timeoutsMs), { nil: undefined }),
    backoff: fc.record({
      baseMs: fc.constantFrom(10, 40, 100),
      factor: fc.constantFrom(1, 2),
      capMs: fc.constantFrom(100, 1_000),
    }),
    closeTimeoutMs: fc.constantFrom(...closeTimeoutsMs),
  })
  .map(({ a, b, ...rest }) => ({ ...rest, queues: b === undefined ? { a } : { a, b } }));

const behaviorText = (behavior: Behavior): string =>
  behavior.kind === "hang" ? "hang" : `${behavior.kind}:${behavior.afterMs}`;

const behaviorOf = (text: string): Behavior => {
  const [kind, after] = text.split(":");
  if (kind === "hang") return { kind };
  if (kind === "complete" || kind === "throw" || kind === "ignore") {
    return { kind, afterMs: Number(after) };
  }
  throw new Error(`not a behavior: ${text}`);
};

/** The result an attempt's handler returns. */
const resultOf = (jobId: number, attempt: number) => `done ${jobId}.${attempt}`;
/** The error an attempt's handler throws. */
const boomOf = (jobId: number, attempt: number) => `boom ${jobId}.${attempt}`;

/** What the worker's counters told about one run. */
interface Tally {
  instants: number;
  claims: number;
  completions: number;
  timeouts: number;
  interrupted: number;
  cancelledRunning: number;
  lateReturns: number;
  /** Of those, handlers that ignored their signal and returned after the close's deadline. */
  lateAfterClose: number;
  retries: number;
}

const tally: Tally = {
  instants: 0,
  claims: 0,
  completions: 0,
  timeouts: 0,
  interrupted: 0,
  cancelledRunning: 0,
  lateReturns: 0,
  lateAfterClose: 0,
  retries: 0,
};

// ---------------------------------------------------------------------------------------------
// The reference model.

/** A job as the model holds it. */
interface ModelJob {
  readonly jobId: number;
  readonly queue: string;
  readonly maxAttempts: number;
  readonly behaviors: ReadonlyArray<Behavior>;
  state: Job.Job["state"];
  attempt: number;
  scheduledAt: number;
  attemptedAt: number | null;
  finishedAt: number | null;
  errors: Array<string>;
  result: string | null;
  /** While executing: when the attempt ends on its own (undefined: only when aborted). */
  endsAt: number | undefined;
  /** While executing: how it ends then. */
  ending: "complete" | "throw" | "timeout";
  /** A cancel ended its running attempt: the worker owes a Stale event for it. */
  staleOwed: number | undefined;
}

/** What the engine says of a job, in the shape the model predicts. */
const viewOf = (job: Omit<ModelJob, "errors"> & { readonly errors: ReadonlyArray<string> }) => ({
  jobId: job.jobId,
  state: job.state,
  attempt: job.attempt,
  scheduledAt: job.scheduledAt,
  attemptedAt: job.attemptedAt,
  finishedAt: job.finishedAt,
  errors: job.errors,
  result: job.result,
});

const engineView = (job: Job.Job) =>
  viewOf({
    ...job,
    behaviors: [],
    errors: job.errors.map((error) => `${error.attempt}@${error.at}: ${error.error}`),
    result: job.result === null ? null : String(job.result.value),
    endsAt: undefined,
    ending: "complete",
    staleOwed: undefined,
  });

const terminal = (state: Job.Job["state"]) =>
  state === "completed" || state === "discarded" || state === "cancelled";

class Model {
  readonly jobs = new Map<number, ModelJob>();
  /** Handlers past their attempt's end that return later (ignoring their signal), by time. */
  zombies: Array<{ readonly jobId: number; readonly attempt: number; readonly at: number }> = [];
  closing: { readonly deadline: number; readonly running: number } | undefined;
  interruptedAtClose = 0;
  readonly limits: ReadonlyMap<string, number>;
  readonly totalMax: number;
  /** Each queue's state in the engine, as the steps set it. */
  readonly queues = new Map<string, QueueLimits>();
  /** A rate-limited queue's latest starts, at most its count of them (as the engine keeps them). */
  readonly starts = new Map<string, Array<number>>();

  constructor(readonly config: Config) {
    this.limits = new Map(Object.entries(config.queues));
    const sum = [...this.limits.values()].reduce((total, limit) => total + limit, 0);
    this.totalMax = config.concurrency ?? sum;
  }

  insert(job: Job.Job, behaviors: ReadonlyArray<Behavior>): void {
    this.jobs.set(job.jobId, {
      jobId: job.jobId,
      queue: job.queue,
      maxAttempts: job.maxAttempts,
      behaviors,
      state: job.scheduledAt > job.insertedAt ? "scheduled" : "available",
      attempt: 0,
      scheduledAt: job.scheduledAt,
      attemptedAt: null,
      finishedAt: null,
      errors: [],
      result: null,
      endsAt: undefined,
      ending: "complete",
      staleOwed: undefined,
    });
  }

  /** The delay before the retry of failed attempt `attempt` (no library code: the formula). */
  delayMs(attempt: number): number {
    const { baseMs, factor, capMs } = this.config.backoff;
    return Math.min(capMs, baseMs * factor ** (attempt - 1));
  }

  /** When an executing job's attempt ends, counting the close deadline. */
  endOf(job: ModelJob): number | undefined {
    const deadline = this.closing?.deadline;
    if (deadline === undefined) return job.endsAt;
    return job.endsAt === undefined ? deadline : Math.min(job.endsAt, deadline);
  }

  /** The next time after `now` at which the model expects something, or undefined. */
  nextDeadline(now: number): number | undefined {
    const times: Array<number> = this.zombies.map((zombie) => zombie.at);
    for (const job of this.jobs.values()) {
      if (job.state === "scheduled" || job.state === "retryable") times.push(job.scheduledAt);
      const end = job.state === "executing" ? this.endOf(job) : undefined;
      if (end !== undefined) times.push(end);
    }
    // A rate window passing lets a claim start: no command comes then, only the engine's timer.
    for (const queue of this.closing === undefined ? this.queues.keys() : []) {
      const opens = this.rateOpensAfter(queue, now);
      if (opens !== undefined && this.hasAvailable(queue)) times.push(opens);
    }
    const later = times.filter((time) => time > now);
    return later.length === 0 ? undefined : Math.min(...later);
  }

  /** Due jobs become available at their time; late handlers past `now` are gone. */
  reach(now: number): void {
    for (const job of this.jobs.values()) {
      if ((job.state === "scheduled" || job.state === "retryable") && job.scheduledAt <= now) {
        job.state = "available";
      }
    }
    const late = this.zombies.filter((zombie) => zombie.at <= now);
    tally.lateReturns += late.length;
    const deadline = this.closing?.deadline;
    if (deadline !== undefined) {
      tally.lateAfterClose += late.filter((zombie) => zombie.at > deadline).length;
    }
    this.zombies = this.zombies.filter((zombie) => zombie.at > now);
  }

  /** A claim the worker made at `now`: legal only for an available job, while not closing. */
  start(jobId: number, attempt: number, now: number): void {
    const job = this.jobs.get(jobId);
    if (job === undefined) throw new Error(`claimed job ${jobId}, which was never inserted`);
    if (this.closing !== undefined) throw new Error(`claimed job ${jobId} after close`);
    if (job.state !== "available" || attempt !== job.attempt + 1) {
      throw new Error(`claimed ${jobId}.${attempt} while ${job.state} at ${job.attempt}`);
    }
    if (!this.engineAllows(job.queue, now)) {
      const state = JSON.stringify(this.queueOf(job.queue));
      throw new Error(`claimed ${jobId}.${attempt} against queue ${job.queue}'s state ${state}`);
    }
    const rate = this.queueOf(job.queue).rateLimit;
    if (rate !== null)
      this.starts.set(job.queue, [...(this.starts.get(job.queue) ?? []), now].slice(-rate.count));
    tally.claims += 1;
    job.state = "executing";
    job.attempt = attempt;
    job.attemptedAt = now;
    const behavior = job.behaviors[attempt - 1] ?? { kind: "complete", afterMs: 0 };
    const timeoutMs = this.config.timeoutMs;
    const own = behavior.kind === "hang" ? undefined : behavior.afterMs;
    if (timeoutMs !== undefined && (own === undefined || own > timeoutMs)) {
      job.endsAt = now + timeoutMs;
      job.ending = "timeout";
    } else {
      job.endsAt = own === undefined ? undefined : now + own;
      job.ending = behavior.kind === "throw" ? "throw" : "complete";
    }
  }

  /** A handler that ignores its signal returns after its attempt ended: it is noted. */
  private haunt(job: ModelJob, endedAt: number): void {
    const behavior = job.behaviors[job.attempt - 1];
    if (behavior?.kind !== "ignore") return;
    const at = (job.attemptedAt ?? 0) + behavior.afterMs;
    if (at > endedAt) this.zombies.push({ jobId: job.jobId, attempt: job.attempt, at });
  }

  /** The worker's tag for the end of `job`'s attempt at `now`, applied. */
  end(job: ModelJob, now: number): "Completed" | "Retried" | "Discarded" {
    const interrupted = job.endsAt === undefined || job.endsAt > now;
    this.haunt(job, now);
    if (!interrupted && job.ending === "complete") {
      job.state = "completed";
      job.finishedAt = now;
      job.result = resultOf(job.jobId, job.attempt);
      tally.completions += 1;
      return "Completed";
    }
    const error = interrupted
      ? "interrupted"
      : job.ending === "timeout"
        ? "timeout"
        : boomOf(job.jobId, job.attempt);
    if (interrupted) this.interruptedAtClose += 1;
    if (error === "timeout") tally.timeouts += 1;
    if (error === "interrupted") tally.interrupted += 1;
    job.errors.push(`${job.attempt}@${now}: ${error}`);
    if (job.attempt < job.maxAttempts) {
      job.state = "retryable";
      job.scheduledAt = now + this.delayMs(job.attempt);
      tally.retries += 1;
      return "Retried";
    }
    job.state = "discarded";
    job.finishedAt = now;
    return "Discarded";
  }

  /** A cancel at `now`: true when the engine must accept it. */
  cancel(jobId: number, now: number): boolean {
    const job = this.jobs.get(jobId);
    if (job === undefined || terminal(job.state)) return false;
    if (job.state === "executing") {
      job.staleOwed = job.attempt;
      this.haunt(job, now);
      tally.cancelledRunning += 1;
    }
    job.state = "cancelled";
    job.finishedAt = now;
    return true;
  }

  /** A queue's state set by the steps (none: no bound). */
  queueOf(queue: string): QueueLimits {
    return this.queues.get(queue) ?? noLimits;
  }

  /** The state a step set: a rate limit newly set counts starts from now on, as the engine does. */
  setQueue(queue: string, state: QueueLimits): void {
    if (state.rateLimit === null) this.starts.delete(queue);
    else if (this.queueOf(queue).rateLimit === null) this.starts.set(queue, []);
    this.queues.set(queue, state);
  }

  /** How many of the queue's kept starts fall in the window (at - perMs, at]. */
  inWindow(queue: string, at: number): number {
    const rate = this.queueOf(queue).rateLimit;
    if (rate === null) return 0;
    return (this.starts.get(queue) ?? []).filter((start) => start > at - rate.perMs).length;
  }

  /** The first instant after `now` at which the queue's rate window has room again, if full now. */
  rateOpensAfter(queue: string, now: number): number | undefined {
    const rate = this.queueOf(queue).rateLimit;
    if (rate === null || this.inWindow(queue, now) < rate.count) return undefined;
    const candidates = (this.starts.get(queue) ?? [])
      .map((start) => start + rate.perMs)
      .filter((at) => at > now && this.inWindow(queue, at) < rate.count);
    return candidates.length === 0 ? undefined : Math.min(...candidates);
  }

  /** Whether the engine's state of the queue lets a claim start one of its jobs at `now`. */
  engineAllows(queue: string, now: number): boolean {
    const { paused, concurrency, rateLimit } = this.queueOf(queue);
    if (paused || (concurrency !== null && this.running(queue) >= concurrency)) return false;
    return rateLimit === null || this.inWindow(queue, now) < rateLimit.count;
  }

  hasAvailable(queue: string): boolean {
    for (const job of this.jobs.values()) {
      if (job.queue === queue && job.state === "available") return true;
    }
    return false;
  }

  running(queue?: string): number {
    let count = 0;
    for (const job of this.jobs.values()) {
      if (job.state === "executing" && (queue === undefined || job.queue === queue)) count += 1;
    }
    return count;
  }
}

// ---------------------------------------------------------------------------------------------
// The real side and the checks after each settle.

interface Real {
  readonly engine: Engine.EngineService;
  readonly disk: FaultDisk.FaultDisk;
  readonly clock: Clock.Clock;
  readonly ledger: Ledger;
  readonly worker: Worker.RunningWorker;
  /** Worker events already matched against the model. */
  matched: number;
  closing: Fiber.RuntimeFiber<Worker.CloseReport> | undefined;
  report: Worker.CloseReport | undefined;
}

/**
 * Sleeps `ms` of the test's clock, from a promise (what a handler's own timers would be); with a
 * signal, it ends early once the signal is aborted (the handler then settles as it would have).
 */
const sleepOn = (clock: Clock.Clock, ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    void Effect.runPromise(clock.sleep(Duration.millis(ms))).then(resolve);
    signal?.addEventListener("abort", () => resolve(), { once: true });
  });

/**
 * The handler every job runs: its args script what each attempt does. Its promises are plain
 * ones, settled straight from the signal's listener where it listens (so they race the abort).
 */
const scripted =
  (clock: Clock.Clock, ledger: Ledger): Worker.Handler<ReadonlyArray<string>> =>
  (job, { signal }) => {
    ledger.handlerCalled(job.jobId, job.attempt);
    const behavior = behaviorOf(job.args[job.attempt - 1] ?? "complete:0");
    const result = resultOf(job.jobId, job.attempt);
    const boom = () => {
      throw new Error(boomOf(job.jobId, job.attempt));
    };
    switch (behavior.kind) {
      case "hang":
        return new Promise((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
        );
      case "ignore":
        return sleepOn(clock, behavior.afterMs, undefined).then(() => result);
      case "complete":
        if (behavior.afterMs === 0) return result;
        return sleepOn(clock, behavior.afterMs, signal).then(() => result);
      case "throw":
        if (behavior.afterMs === 0) return boom();
        return sleepOn(clock, behavior.afterMs, signal).then(boom);
      default: {
        const unknown: never = behavior;
        return unknown;
      }
    }
  };

const fingerprint = (real: Real) => () =>
  `${real.disk.mutations()}/${real.ledger.seen.length}/${real.ledger.invoked}`;

/** A claim and its place in claim order when it was made (an end in the same instant moves it). */
interface Claimed {
  readonly queue: string;
  readonly jobId: number;
  readonly scheduledAt: number;
}

/** Matches the worker's new events against the model, in order; returns the claims among them. */
const matchEvents = (real: Real, model: Model, now: number): Array<Claimed> => {
  const fresh = real.ledger.seen.slice(real.matched);
  real.matched = real.ledger.seen.length;
  const claimed: Array<Claimed> = [];
  for (const seen of fresh) {
    const what = `${seen.tag} ${seen.jobId}.${seen.attempt}@${seen.at}`;
    if (seen.at !== now) throw new Error(`${what} told at another instant than ${now}`);
    const job = model.jobs.get(seen.jobId);
    if (seen.tag === "Started") {
      if (job !== undefined) claimed.push({ ...job });
      model.start(seen.jobId, seen.attempt, now);
      continue;
    }
    if (seen.tag === "Stale" && job?.staleOwed === seen.attempt) {
      job.staleOwed = undefined;
      continue;
    }
    const end = job === undefined || job.state !== "executing" ? undefined : model.endOf(job);
    if (job === undefined || end !== now || job.attempt !== seen.attempt) {
      throw new Error(`${what} not expected (model: ${JSON.stringify(job && viewOf(job))})`);
    }
    const expected = model.end(job, now);
    if (seen.tag !== expected) throw new Error(`${what}: expected ${expected}`);
  }
  return claimed;
};

/** After the events: nothing owed, nothing idle that could run, claims in claim order. */
const checkModel = (model: Model, now: number, claimed: ReadonlyArray<Claimed>): void => {
  for (const job of model.jobs.values()) {
    if (job.staleOwed !== undefined) throw new Error(`no Stale for cancelled job ${job.jobId}`);
    const end = job.state === "executing" ? model.endOf(job) : undefined;
    if (end !== undefined && end <= now) {
      throw new Error(`job ${job.jobId}'s attempt ${job.attempt} did not end at ${end}`);
    }
  }
  const before = (left: ModelJob, right: Claimed) =>
    left.scheduledAt < right.scheduledAt ||
    (left.scheduledAt === right.scheduledAt && left.jobId < right.jobId);
  for (const claim of claimed) {
    for (const other of model.jobs.values()) {
      if (other.queue === claim.queue && other.state === "available" && before(other, claim)) {
        throw new Error(
          `job ${claim.jobId} was claimed before ${other.jobId}, first in claim order`,
        );
      }
    }
  }
  if (model.closing !== undefined) return;
  for (const [queue, limit] of model.limits) {
    const waiting = model.hasAvailable(queue);
    const room = model.running(queue) < limit && model.running() < model.totalMax;
    if (waiting && room && model.engineAllows(queue, now)) {
      throw new Error(`queue ${queue} has room and an available job, and nothing claimed it`);
    }
  }
};

/** Compares every job of the engine's committed state with the model, naming the first apart. */
const compareStates = (jobs: ReadonlyArray<Job.Job>, model: Model, context: string): void => {
  const actual = jobs.map(engineView);
  const expected = [...model.jobs.values()].map((job) => viewOf(job));
  expect(actual.map((job) => job.jobId)).toEqual(expected.map((job) => job.jobId));
  actual.forEach((job, index) => {
    expect({ context, ...job }).toEqual({ context, ...expected[index] });
  });
};

/** Settles, then checks everything the model knows at the clock's current instant. */
const observe = (real: Real, model: Model, label: string) =>
  Effect.gen(function* () {
    yield* settled(fingerprint(real));
    tally.instants += 1;
    const now = real.clock.unsafeCurrentTimeMillis();
    model.reach(now);
    const context = `${label} at ${now}`;
    yield* Effect.try({
      try: () => {
        checkModel(model, now, matchEvents(real, model, now));
        expect(real.ledger.violations).toEqual([]);
      },
      catch: (error) => new Error(`${context}: ${error instanceof Error ? error.message : error}`),
    }).pipe(Effect.orDie);
    compareStates(yield* real.engine.jobs(), model, context);
    yield* checkClose(real, model, context);
  });

/** The close resolves exactly when the model has nothing executing, with the model's counts. */
const checkClose = (real: Real, model: Model, context: string) =>
  Effect.gen(function* () {
    const closing = model.closing;
    if (real.closing === undefined || closing === undefined || real.report !== undefined) return;
    const done = real.closing.unsafePoll();
    const idle = model.running() === 0;
    if ((done !== null) !== idle) {
      return yield* Effect.dieMessage(
        `${context}: close done ${done !== null}, model idle ${idle}`,
      );
    }
    if (done === null) return;
    const report = yield* Fiber.join(real.closing);
    const interrupted = model.interruptedAtClose;
    expect(report).toEqual({ finished: closing.running - interrupted, interrupted });
    real.report = report;
  });

// ---------------------------------------------------------------------------------------------
// Steps.

/** Moves the clock to `target`, stopping at every instant where something may happen. */
const advanceTo = (real: Real, model: Model, target: number, label: string) =>
  Effect.gen(function* () {
    for (;;) {
      const now = real.clock.unsafeCurrentTimeMillis();
      if (now >= target) return;
      // Only where the model expects something: whatever the clock fires in between, it fires
      // at its own instant, and an event told at an instant the model did not stop at fails.
      const next = Math.min(target, model.nextDeadline(now) ?? target);
      yield* TestClock.setTime(next);
      yield* observe(real, model, label);
    }
  });

const insert = (real: Real, model: Model, step: Extract<Step, { _tag: "Insert" }>) =>
  Effect.gen(function* () {
    const now = real.clock.unsafeCurrentTimeMillis();
    const job = yield* real.engine.insert({
      queue: step.queue,
      worker: "Scripted",
      args: step.behaviors.map(behaviorText),
      maxAttempts: step.maxAttempts,
      ...(step.delayMs === 0 ? {} : { scheduledAt: now + step.delayMs }),
    });
    model.insert(job, step.behaviors);
  });

const cancel = (real: Real, model: Model, pick: number) =>
  Effect.gen(function* () {
    const ids = [...model.jobs.keys()];
    const jobId = ids[pick % Math.max(1, ids.length)];
    if (jobId === undefined) return;
    const now = real.clock.unsafeCurrentTimeMillis();
    const accepted = model.cancel(jobId, now);
    const outcome = yield* Effect.either(real.engine.cancel(jobId, "test"));
    expect({ jobId, accepted: outcome._tag === "Right" }).toEqual({ jobId, accepted });
  });

/**
 * Sets a queue's state: a pause before the limits, a resume after them, so that no claim can
 * start between the two commands that the state set by both would refuse.
 */
const setQueue = (real: Real, model: Model, step: Extract<Step, { _tag: "Queue" }>) =>
  Effect.gen(function* () {
    const { queue, state } = step;
    const limits = { concurrency: state.concurrency, rateLimit: state.rateLimit };
    if (state.paused) yield* real.engine.pauseQueue(queue);
    yield* real.engine.setQueueLimits(queue, limits);
    if (!state.paused) yield* real.engine.resumeQueue(queue);
    model.setQueue(queue, state);
  });

const close = (real: Real, model: Model) =>
  Effect.gen(function* () {
    if (real.report !== undefined) {
      // Idempotent: a second close answers the first one's report at once.
      expect(yield* real.worker.close()).toEqual(real.report);
      return;
    }
    if (real.closing !== undefined) return;
    const now = real.clock.unsafeCurrentTimeMillis();
    model.closing = { deadline: now + model.config.closeTimeoutMs, running: model.running() };
    real.closing = yield* Effect.fork(
      real.worker.close({ timeoutMs: model.config.closeTimeoutMs }),
    );
  });

const perform = (real: Real, model: Model, step: Step, label: string) =>
  Effect.gen(function* () {
    switch (step._tag) {
      case "Insert":
        yield* insert(real, model, step);
        break;
      case "Advance":
        yield* advanceTo(real, model, real.clock.unsafeCurrentTimeMillis() + step.ms, label);
        return;
      case "Cancel":
        yield* cancel(real, model, step.pick);
        break;
      case "Queue":
        yield* setQueue(real, model, step);
        break;
      case "Close":
        yield* close(real, model);
        break;
      default: {
        const unknown: never = step;
        return unknown;
      }
    }
    yield* observe(real, model, label);
  });

/**
 * After the steps: close (if the steps did not), run the clock until the close is done and every
 * late handler has returned and every retry is due; nothing may be executing then. Returns how
 * many jobs the model left not terminal.
 */
const wind = (real: Real, model: Model) =>
  Effect.gen(function* () {
    yield* close(real, model);
    yield* observe(real, model, "close");
    for (let guard = 0; guard < 1_000; guard++) {
      const next = model.nextDeadline(real.clock.unsafeCurrentTimeMillis());
      if (next === undefined) break;
      yield* advanceTo(real, model, next, "wind");
    }
    expect(real.report).toBeDefined();
    const state = yield* real.engine.state();
    const left = [...State.jobs(state)].filter((job) => !terminal(job.state));
    expect(left.filter((job) => job.state !== "available")).toEqual([]);
    return left.length;
  });

/**
 * A second worker completes whatever is left, every queue's state lifted first; then the log
 * must end every job exactly once.
 */
const drain = (real: Real, model: Model) =>
  Effect.gen(function* () {
    for (const queue of model.queues.keys()) {
      yield* real.engine.setQueueLimits(queue, { concurrency: null, rateLimit: null });
      yield* real.engine.resumeQueue(queue);
    }
    const ledger = new Ledger(
      new Map([
        ["a", 4],
        ["b", 4],
      ]),
      8,
      () => real.clock.unsafeCurrentTimeMillis(),
    );
    yield* Worker.run(real.engine, {
      queues: { a: 4, b: 4 },
      handlers: { Scripted: () => "drained" },
      onEvent: ledger.onEvent,
    });
    const open = () =>
      Effect.map(real.engine.state(), (state) =>
        [...State.jobs(state)].some((job) => !terminal(job.state)),
      );
    for (let guard = 0; guard < 200 && (yield* open()); guard++) {
      yield* settled(() => `${real.disk.mutations()}/${ledger.seen.length}`);
    }

    expect(yield* open()).toBe(false);
    expect(ledger.violations).toEqual([]);
    const audited = yield* auditLog(real.engine);
    const completedByWorker = real.ledger.seen.filter((seen) => seen.tag === "Completed");
    for (const job of audited)
      expect({ jobId: job.jobId, ends: job.terminal }).toEqual({ jobId: job.jobId, ends: 1 });
    // Every completion the first worker told of is the job's one completion record.
    for (const seen of completedByWorker) {
      expect(audited.find((job) => job.jobId === seen.jobId)?.completed).toBe(1);
    }
  });

const scenario = (config: Config, steps: ReadonlyArray<Step>) =>
  Effect.gen(function* () {
    const { disk, engine } = yield* engineOnFaultDisk();
    const clock = yield* Effect.clock;
    const model = new Model(config);
    const ledger = new Ledger(model.limits, model.totalMax, () => clock.unsafeCurrentTimeMillis());
    const worker = yield* Worker.run<Engine.FileLogKind, { Scripted: ReadonlyArray<string> }>(
      engine,
      {
        queues: config.queues,
        ...(config.concurrency === undefined ? {} : { concurrency: config.concurrency }),
        ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
        backoff: config.backoff,
        handlers: { Scripted: scripted(clock, ledger) },
        onEvent: ledger.onEvent,
      },
    );
    // A run that fails leaves handlers hanging: close with no wait, moving the clock, or the
    // scope's own close would wait for them on a clock that nobody moves.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        const closing = yield* Effect.fork(worker.close({ timeoutMs: 1 }));
        for (let moves = 0; closing.unsafePoll() === null && moves < 100; moves++) {
          yield* TestClock.adjust(1_000);
        }
      }),
    );
    const real: Real = {
      engine,
      disk,
      clock,
      ledger,
      worker,
      matched: 0,
      closing: undefined,
      report: undefined,
    };
    yield* observe(real, model, "start");
    for (const [index, step] of steps.entries()) {
      yield* perform(real, model, step, `step ${index} (${step._tag})`);
    }
    yield* wind(real, model);
    yield* drain(real, model);
  }).pipe(Effect.scoped, Effect.provide(TestContext.TestContext));

describe("the worker against a reference model, under TestClock", () => {
  it(
    "claims, ends, retries, times out, cancels and closes exactly when the model says",
    async () => {
      const started = Date.now();
      let runCount = 0;
      let stepCount = 0;
      await fc.assert(
        fc.asyncProperty(
          configArb,
          fc.array(stepArb, { minLength: 1, maxLength: 40, size: "medium" }),
          async (config, steps) => {
            runCount += 1;
            stepCount += steps.length;
            await Effect.runPromise(scenario(config, steps));
          },
        ),
        {
          numRuns: runs,
          ...replay,
          // Shrinking a long step list runs many scenarios: report what it has by then.
          interruptAfterTimeLimit: timeLimitMs,
          markInterruptAsFailure: true,
        },
      );
      console.log(
        `worker model: ${runCount} runs, ${stepCount} steps, ${tally.instants} settled instants checked, ${tally.claims} claims, ${tally.completions} completions, ${tally.retries} retries, ${tally.timeouts} timeouts, ${tally.interrupted} interrupted at close, ${tally.cancelledRunning} running jobs cancelled, ${tally.lateReturns} late returns ignored (${tally.lateAfterClose} after the close), in ${Date.now() - started} ms`,
      );
    },
    timeLimitMs + 50_000,
  );
});
