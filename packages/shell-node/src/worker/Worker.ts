/**
 * The worker runtime: runs jobs, not only stores them. Handlers are keyed
 * by worker name; a worker takes jobs from its queues, each with its own
 * concurrency, under a global limit. It never polls: an idle worker parks
 * a waiting claim (`Engine.nextJobs`) that the engine answers in the very
 * batch that makes one of its queues' jobs available (an insert, a retry
 * or a scheduled job coming due, a schedule delivering), so a handler
 * starts one durable write after the insert that fed it. A busy worker's
 * next claim rides the batch of the end that frees its slot (slots.ts).
 *
 * Semantics (docs/worker.md): at least once. A returned value completes
 * the job (its result); a throw fails the attempt (retried after the
 * worker's backoff, or discarded when attempts are spent); a job whose
 * worker has no handler fails with an error naming the worker. Every end of
 * an attempt names the attempt (fencing): a late handler's complete or fail
 * is refused as `StaleAttempt` and appends nothing. A timeout aborts the
 * handler's signal and fails the attempt ("timeout"). `close` stops
 * claiming; a job once claimed runs (one whose claim was in flight as the
 * close began too): the close waits for running handlers up to its timeout,
 * then aborts the rest and fails them ("interrupted", retried by the usual
 * rules). After a clean close no job is left executing; after a crash, the
 * engine's rescue at open ends them. A claim the engine refuses (its log
 * failed, or it was closed) ends the claims, told once as `Halted`.
 */
import { type Backoff, Event, type Job } from "@tay/core";
import * as Data from "effect/Data";
import * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Fiber from "effect/Fiber";
import * as FiberId from "effect/FiberId";
import * as Scope from "effect/Scope";
import * as Described from "../disk/Described.js";
import type * as Engine from "../engine/Engine.js";
import type * as EnginePromises from "../engine/EnginePromises.js";
import { messageOf } from "../disk/Described.js";
import type * as Log from "../log/Log.js";
import type * as Projection from "../log/Projection.js";
import {
  Attempt,
  type Handler,
  type HandlerContext,
  runAttempt,
  type WorkerEvent,
  type WorkerJob,
} from "./internal/attempt.js";
import { roomWait } from "./internal/backpressure.js";
import { ClaimLoop } from "./internal/claimLoop.js";
import { Deadlines } from "./internal/deadlines.js";
import { HeldAttempts } from "./internal/heldAttempts.js";
import type { Plain } from "./internal/plain.js";
import { Slots } from "./internal/slots.js";

export type { Handler, HandlerContext, Plain, WorkerEvent, WorkerJob };
export { Discard, RetryAfter, retryAfterMsMax } from "./internal/attempt.js";

/**
 * What the worker needs of an engine: a waiting claim, the commit watch,
 * and complete/fail. An engine provides it; so does a remote client's
 * adapter (server/RemoteWorker.ts).
 */
export type WorkerEngine<K extends Log.Kind> = Pick<Engine.EngineService<K>, "watch"> & {
  readonly promises: Pick<
    Engine.PromiseFace<K>,
    "nextJobs" | "complete" | "fail" | "reportProgress"
  >;
  /**
   * True while the worker's claims fail for now and are asked again (a
   * remote server not reached); an embedded engine has none.
   */
  readonly unreachable?: () => boolean;
  /**
   * Tells `listener` of an attempt the worker runs that is no longer its
   * own without a commit the watch would show (a remote lease found gone);
   * returns the function that stops telling. An embedded engine has none.
   */
  readonly lost?: (listener: (jobId: number, attempt: number) => void) => () => void;
};

/** How long `close` (and a scope's end) waits for running handlers by default. */
export const closeTimeoutMsDefault = 10_000;

/** How long a close gives running handlers: its own timeout, else the worker's, else 10 s. */
const closeTimeoutOf = (
  options: Pick<WorkerOptions<unknown>, "closeTimeoutMs">,
  closeOptions: CloseOptions | undefined,
): number => closeOptions?.timeoutMs ?? options.closeTimeoutMs ?? closeTimeoutMsDefault;

/** A worker option out of its range: nothing was started. */
export class InvalidWorkerOption extends Data.TaggedError("InvalidWorkerOption")<{
  readonly option: string;
  readonly value: string;
  readonly expected: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "InvalidWorkerOption",
      undefined,
      `worker option ${this.option} must be ${this.expected}, not ${this.value}; nothing was started`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * Handlers by worker name. `Registry` maps each worker name to its args'
 * type, so a handler registered for `SendWelcome` sees `SendWelcome`'s
 * args (the registry is the caller's promise about what its jobs carry).
 */
export type Handlers<Registry> = { readonly [Name in keyof Registry]?: Handler<Registry[Name]> };

/** How a worker runs. */
export interface WorkerOptions<Registry> {
  readonly handlers: Handlers<Registry>;
  /** The queues it takes jobs from, each with its concurrency (handlers at once). */
  readonly queues: Readonly<Record<string, number>>;
  /** Handlers at once over all its queues (default: the queues' concurrencies summed). */
  readonly concurrency?: number;
  /** Aborts a handler after this long and fails its attempt with "timeout" (default: never). */
  readonly timeoutMs?: number;
  /** How long a failed attempt waits before its retry (default: core's, 1 s doubling to 1 h). */
  readonly backoff?: Backoff.Policy;
  /** Told every worker event, synchronously: keep it short. */
  readonly onEvent?: (event: WorkerEvent) => void;
  /** How long the end of the worker's scope waits for running handlers (default 10 s). */
  readonly closeTimeoutMs?: number;
}

/** How `close` waits. */
export interface CloseOptions {
  /** Running handlers get this long to finish before they are aborted (default 10 s). */
  readonly timeoutMs?: number;
}

/** What a close did. */
export interface CloseReport {
  /** Handlers that finished on their own while the worker closed. */
  readonly finished: number;
  /** Handlers aborted at the timeout, their attempts failed with "interrupted". */
  readonly interrupted: number;
}

/**
 * Where a worker is: `running` (claiming as it has room), `paused`
 * (`pause`), `reconnecting` (a remote worker whose claims fail for now and
 * are asked again), `halted` (the engine refused its claim: it claims
 * nothing more, `Halted` was told; only a new worker on a working engine
 * helps), `closing`, `closed`. What a health check asks.
 */
export type WorkerState = "running" | "paused" | "reconnecting" | "halted" | "closing" | "closed";

/** A running worker. */
export interface RunningWorker {
  /** Stops claiming, waits for running handlers, then interrupts the rest. Idempotent. */
  readonly close: (options?: CloseOptions) => Effect.Effect<CloseReport>;
  /** Handlers running now. */
  readonly running: () => number;
  /**
   * Claims nothing more until `resume` (this worker only: `pauseQueue` is
   * the store's, for every worker). Running handlers go on; a waiting
   * claim is given up. Succeeds once no claim is in flight: no job starts
   * after it until `resume`.
   */
  readonly pause: () => Effect.Effect<void>;
  /** Claims again after `pause`. */
  readonly resume: () => Effect.Effect<void>;
  /** Whether the worker is paused. */
  readonly isPaused: () => boolean;
  /** Where the worker is (see `WorkerState`). */
  readonly state: () => WorkerState;
}

const isCount = (value: number): boolean => Number.isSafeInteger(value) && value >= 1;

const invalid = (option: string, value: unknown, expected: string) =>
  Effect.fail(new InvalidWorkerOption({ option, value: String(value), expected }));

/** The options checked, with the global limit worked out. */
const checked = <Registry>(options: WorkerOptions<Registry>) =>
  Effect.gen(function* () {
    const queues = Object.entries(options.queues);
    if (queues.length === 0) return yield* invalid("queues", "{}", "at least one queue");
    for (const [queue, concurrency] of queues) {
      if (!isCount(concurrency)) {
        return yield* invalid(`queues.${queue}`, concurrency, "an integer of at least 1");
      }
    }
    const concurrency =
      options.concurrency ??
      queues.reduce((sum, [, queueConcurrency]) => sum + queueConcurrency, 0);
    if (!isCount(concurrency)) {
      return yield* invalid("concurrency", concurrency, "an integer of at least 1");
    }
    for (const [option, value] of [
      ["timeoutMs", options.timeoutMs],
      ["closeTimeoutMs", options.closeTimeoutMs],
    ] as const) {
      if (value !== undefined && !isCount(value)) {
        return yield* invalid(option, value, "an integer number of milliseconds, at least 1");
      }
    }
    return { queues: new Map(queues), concurrency };
  });

/**
 * Aborts a running handler whose attempt someone else ended (a cancel, a
 * rescue): told each committed batch by the engine's `watch`, it looks at
 * the records' tags only (the worker's own ends are `finishing`).
 */
const watchEndings = (attempts: HeldAttempts) => (records: ReadonlyArray<Projection.Entry>) => {
  if (attempts.size === 0) return;
  for (const { event } of records) {
    const members = event._tag === "Mutation" ? event.events : [event];
    for (const member of members) {
      if (!Event.endsAnAttempt(member)) continue;
      // The end is of the job's current attempt; any older one held is not current either.
      for (const attempt of attempts.ofJob(member.jobId)) {
        if (!attempt.finishing) attempt.abort("ended");
      }
    }
  }
};

/** Aborts a running handler whose attempt the engine says is no longer the worker's own. */
const abortLost =
  (attempts: HeldAttempts) =>
  (jobId: number, attemptNumber: number): void => {
    for (const attempt of attempts.ofJob(jobId)) {
      if (attempt.job.attempt === attemptNumber && !attempt.finishing) attempt.abort("ended");
    }
  };

/** What closing works on: the running worker's parts. */
interface Closing {
  readonly slots: Slots;
  readonly attempts: HeldAttempts;
  /** The claim loop, ending once the close stopped it (never rejects). */
  readonly claiming: Promise<void>;
  /** Stops what runs beside the claim loop: the watch of commits, the timeouts. */
  readonly stop: Effect.Effect<void>;
}

/**
 * Waits for the claim loop (stopped by the caller) to end, then up to `timeoutMs` for running
 * handlers, then aborts the rest and waits for their attempts to be failed as interrupted.
 */
const closed = (worker: Closing, timeoutMs: number): Effect.Effect<CloseReport> =>
  Effect.gen(function* () {
    const { slots, attempts } = worker;
    // A claim in flight starts its jobs first: claimed, they run like the others.
    yield* Effect.promise(() => worker.claiming);
    // Its jobs waiting for the slots of attempts still finishing start once those ends are
    // recorded (the same batch's answer): the timeout counts from then, as for the others.
    yield* slots.allStarted;
    const running = slots.busy;
    // Interruptible even when the close runs as the scope's finalizer (uninterruptible):
    // else the timeout could not interrupt the wait, and would wait for it for ever.
    const drained = yield* Effect.timeout(
      Effect.interruptible(slots.idle),
      `${timeoutMs} millis`,
    ).pipe(Effect.option);
    const interrupted = drained._tag === "None" ? attempts.size : 0;
    // A copy: an aborted attempt may let itself go while the others are aborted.
    for (const attempt of [...attempts.values()]) attempt.abort("interrupted");
    yield* slots.idle;
    yield* worker.stop;
    return { finished: running - interrupted, interrupted };
  });

/**
 * Runs a worker on `engine` for the scope (closing it, with
 * `closeTimeoutMs`, when the scope ends). Fails only with
 * `InvalidWorkerOption`, before anything starts.
 */
export const run = <K extends Log.Kind, Registry = Record<string, Plain>>(
  engine: WorkerEngine<K>,
  options: WorkerOptions<Registry>,
): Effect.Effect<RunningWorker, InvalidWorkerOption, Scope.Scope> =>
  Effect.gen(function* () {
    const { queues, concurrency } = yield* checked(options);
    const slots = new Slots(queues, concurrency);
    const attempts = new HeldAttempts();
    const clock = yield* Effect.clock;
    const now = () => clock.unsafeCurrentTimeMillis();
    const settings = {
      handlers: options.handlers,
      backoff: options.backoff,
      emit: options.onEvent ?? (() => {}),
      now,
      recording: (attempt: Attempt) => slots.finishing(attempt.job.queue),
      roomWait: roomWait((listener) => engine.watch(listener)),
      progress: engine.promises.reportProgress,
    };
    // Always kept: a job may carry its own timeout (EVENTS-V3.md) even when the worker has none.
    const deadlines = new Deadlines(options.timeoutMs, now);
    const begin = (attempt: Attempt) => {
      const { job } = attempt;
      deadlines.add(attempt, job.timeoutMs);
      const end = () => {
        attempts.delete(attempt);
        slots.release(job.queue, attempt.finishing);
      };
      // A promise, not a fiber: the attempt's cost is its handler and two commands. Only a
      // throwing `onEvent` makes it reject (or throw, before the handler): the slot is freed all
      // the same, and the error stays the caller's, not the claim's that started the job.
      let running: Promise<void>;
      try {
        running = runAttempt(engine.promises, attempt, settings);
      } catch (error) {
        running = Promise.reject(error);
      }
      void running.finally(end);
    };
    // Tracked from its claim: a job waiting for a finishing attempt's slot can be aborted too.
    const start = (job: Job.Job) => {
      const attempt = new Attempt(job);
      attempts.add(attempt);
      slots.admit(job.queue, () => begin(attempt));
    };
    const claims = new ClaimLoop(
      slots,
      engine.promises.nextJobs,
      start,
      (cause) => settings.emit({ _tag: "Halted", error: messageOf(cause), cause }),
      settings.roomWait,
    );
    const unwatch = engine.watch(watchEndings(attempts));
    const unlost = engine.lost?.(abortLost(attempts));
    const timing = yield* Effect.forkScoped(deadlines.run);
    const stop = Effect.zipRight(
      Effect.sync(() => {
        unwatch();
        unlost?.();
      }),
      Fiber.interrupt(timing),
    );
    // The first close's outcome, shared: a second close (concurrent or later)
    // waits for the same report instead of running the close again.
    let closing: Deferred.Deferred<CloseReport> | undefined;
    const close = (closeOptions: CloseOptions = {}): Effect.Effect<CloseReport> =>
      Effect.suspend(() => {
        if (closing !== undefined) return Deferred.await(closing);
        const outcome = Deferred.unsafeMake<CloseReport>(FiberId.none);
        closing = outcome;
        claims.stop();
        const timeoutMs = closeTimeoutOf(options, closeOptions);
        return Effect.zipRight(
          Effect.intoDeferred(
            closed({ slots, attempts, claiming: claims.done, stop }, timeoutMs),
            outcome,
          ),
          Deferred.await(outcome),
        );
      });
    yield* Effect.addFinalizer(() => close());
    return {
      close,
      running: () => slots.busy,
      pause: () => Effect.promise(() => claims.pause()),
      resume: () => Effect.sync(() => claims.resume()),
      isPaused: () => claims.isPaused,
      state: () => stateOf(closing, claims, engine),
    };
  });

/** Where the worker is: its close first, then its claims, then its engine's reach. */
const stateOf = <K extends Log.Kind>(
  closing: Deferred.Deferred<CloseReport> | undefined,
  claims: ClaimLoop,
  engine: WorkerEngine<K>,
): WorkerState => {
  if (closing !== undefined) return Effect.runSync(Deferred.isDone(closing)) ? "closed" : "closing";
  if (claims.isHalted) return "halted";
  if (claims.isPaused) return "paused";
  return engine.unreachable?.() === true ? "reconnecting" : "running";
};

/** A worker run from a program not written with Effect. */
export interface StartedWorker {
  /** Stops claiming, waits for running handlers, then interrupts the rest. Idempotent. */
  readonly close: (options?: CloseOptions) => Promise<CloseReport>;
  /** Handlers running now. */
  readonly running: () => number;
  /** See `RunningWorker.pause`: resolves once no claim is in flight. */
  readonly pause: () => Promise<void>;
  /** Claims again after `pause`. */
  readonly resume: () => void;
  /** Whether the worker is paused. */
  readonly isPaused: () => boolean;
  /** Where the worker is (see `WorkerState`). */
  readonly state: () => WorkerState;
}

/** How `start` starts: the worker's options, and whether to close on SIGINT and SIGTERM. */
export interface StartOptions<Registry> extends WorkerOptions<Registry> {
  /** Close the worker (with `closeTimeoutMs`) on SIGINT and SIGTERM. Default false. */
  readonly handleSignals?: boolean;
}

/**
 * Starts a worker on an engine opened with `EnginePromises.open`: what
 * `run` does, for a program not written with Effect. Rejects with
 * `InvalidWorkerOption` before anything starts.
 */
export const start = <Registry = Record<string, Plain>>(
  opened: Pick<EnginePromises.OpenedEngine, "engine">,
  options: StartOptions<Registry>,
): Promise<StartedWorker> => startOn(opened.engine, options);

/** What `startOn`'s caller hears of the worker it started. */
export interface StartHooks {
  /** A close began, giving running handlers `timeoutMs` (told once). */
  readonly closing?: (timeoutMs: number) => void;
  /** The worker has closed, or did not start (told once). */
  readonly stopped?: () => void;
}

/**
 * `start` on any `WorkerEngine` (an engine, a remote client's adapter):
 * the worker, its scope, and SIGINT/SIGTERM when asked for.
 */
export const startOn = async <K extends Log.Kind, Registry = Record<string, Plain>>(
  engine: WorkerEngine<K>,
  options: StartOptions<Registry>,
  hooks: StartHooks = {},
): Promise<StartedWorker> => {
  let told = false;
  const stopped = () => {
    if (told) return;
    told = true;
    hooks.stopped?.();
  };
  let closingTold = false;
  const closing = (closeOptions: CloseOptions | undefined) => {
    if (closingTold) return;
    closingTold = true;
    hooks.closing?.(closeTimeoutOf(options, closeOptions));
  };
  const scope = Effect.runSync(Scope.make());
  const exit = await Effect.runPromiseExit(Scope.extend(run(engine, options), scope));
  if (Exit.isFailure(exit)) {
    stopped();
    await Effect.runPromise(Scope.close(scope, Exit.void));
    throw exit.cause._tag === "Fail" ? exit.cause.error : new Error("the worker did not start");
  }
  const worker = exit.value;
  const onSignal = () => {
    void close();
  };
  const close = async (closeOptions?: CloseOptions) => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    closing(closeOptions);
    const report = await Effect.runPromise(worker.close(closeOptions));
    stopped();
    await Effect.runPromise(Scope.close(scope, Exit.void));
    return report;
  };
  if (options.handleSignals === true) {
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
  }
  return {
    close,
    running: worker.running,
    pause: () => Effect.runPromise(worker.pause()),
    resume: () => Effect.runSync(worker.resume()),
    isPaused: worker.isPaused,
    state: worker.state,
  };
};
