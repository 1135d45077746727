/**
 * One attempt of one job: the handler runs with an `AbortSignal`; what it
 * returns completes the job, what it throws fails the attempt (retried
 * after the worker's backoff, or discarded when attempts are spent). A
 * timeout, a shutdown or the attempt's end by someone else (the job was
 * cancelled, or rescued) aborts the signal. Every complete and fail names
 * the attempt it ends: one the engine no longer holds current is refused
 * (`StaleAttempt`) and appends nothing, so a late handler never ends a job
 * twice. The attempt's slot is released when the attempt ends, even if a
 * handler that ignores its signal is still running.
 *
 * A returned value that the log cannot hold (a function, a `Date`, a
 * `NaN` somewhere inside) fails the attempt with the path to it
 * (`result.user.id: a function is not a value`), as core's canonical form
 * says (`Value.canonical`); so does a result the engine refuses to record
 * (one too large for a record), rather than leaving the job executing.
 */
import { type Backoff, type Job, Value } from "@tay/core";
import { messageOf } from "../../disk/Described.js";
import * as Engine from "../../engine/Engine.js";
import type * as Log from "../../log/Log.js";
import { isBackpressure } from "./backpressure.js";
import { type Plain, toPlain } from "./plain.js";

/** Bytes of an error text the log keeps (EVENTS.md: text is 0..65,535 bytes). */
export const errorBytesMax = 65_535;

/** Why a handler's signal was aborted. */
export type AbortReason =
  /** It ran past the worker's timeout: the attempt fails with "timeout". */
  | "timeout"
  /** The worker closed before it finished: the attempt fails with "interrupted". */
  | "interrupted"
  /** Someone else ended the attempt (a cancel, a rescue): nothing more is recorded. */
  | "ended";

/** What the handler sees. */
export interface WorkerJob<Args> {
  readonly jobId: number;
  readonly queue: string;
  readonly worker: string;
  /** The job's args as plain data (maps as objects; bigints and bytes as they are). */
  readonly args: Args;
  /** This attempt (1 for the first). */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly insertedAt: number;
  readonly scheduledAt: number;
  /** The job as the engine holds it, args as a core `Value`. */
  readonly job: Job.Job;
}

/** What a handler gets beside its job. */
export interface HandlerContext {
  /** Aborted on timeout, on shutdown, or when the job's attempt was ended by someone else. */
  readonly signal: AbortSignal;
  /**
   * Tells the runtime the handler is alive. Embedded, nothing expires
   * (the worker's own process holds the job); a remote worker's lease is
   * extended by it.
   */
  readonly heartbeat: () => void;
  /**
   * Reports how far the handler got (any value a result may be, at most
   * 64 KiB encoded): the engine holds the latest report of the attempt
   * while it executes (`engine.progress(jobId)`, a client's `progress`,
   * `GET /v1/jobs/ID/progress`, the dashboard), in memory, never in the
   * log. Resolves once held, and also once the attempt turned out to have
   * ended (its signal tells the handler that) or, remote, when the server
   * could not be reached: a report is worth no failed attempt. Rejects
   * for a value that is not one, or too large, naming the path inside it.
   */
  readonly progress: (value: unknown) => Promise<void>;
}

/** A handler: returns the job's result (or nothing), or throws to fail the attempt. */
export type Handler<Args = unknown> = (job: WorkerJob<Args>, context: HandlerContext) => unknown;

/** What a worker tells about each attempt. */
export type WorkerEvent =
  | { readonly _tag: "Started"; readonly job: Job.Job }
  | { readonly _tag: "Completed"; readonly job: Job.Job; readonly durationMs: number }
  | {
      readonly _tag: "Retried";
      readonly job: Job.Job;
      readonly durationMs: number;
      readonly error: string;
    }
  | {
      readonly _tag: "Discarded";
      readonly job: Job.Job;
      readonly durationMs: number;
      readonly error: string;
    }
  | {
      /** The attempt was no longer current when it ended (cancelled, rescued): nothing was recorded. */
      readonly _tag: "Stale";
      readonly job: Job.Job;
      readonly durationMs: number;
    }
  | {
      /** Its end could not be recorded: the engine refused it or its log failed. */
      readonly _tag: "Unrecorded";
      readonly job: Job.Job;
      readonly error: string;
    }
  | {
      /**
       * The engine refused the worker's claim (its log failed, or it was
       * closed): the worker claims nothing more. Told once; handlers
       * already running go on (their ends `Unrecorded` when the log is
       * gone). `cause` is the engine's refusal as it came (a tagged error
       * such as `WriterFailed`), `error` its message.
       */
      readonly _tag: "Halted";
      readonly error: string;
      readonly cause: unknown;
    }
  | {
      /**
       * A remote worker's claim failed for now and is asked again after
       * `retryInMs`: the server could not be reached, or could not serve
       * it now (closing, restarting, its log failed; a 5xx, 408 or 429).
       * Told for each failed claim while it lasts; an embedded worker
       * never tells it. A claim the server refuses for good (any other
       * 4xx: a wrong token, an option it does not take) or one made on a
       * closed client halts the worker instead (`Halted`).
       */
      readonly _tag: "ClaimFailed";
      readonly error: string;
      readonly cause: unknown;
      readonly retryInMs: number;
    };

/** How the worker runs attempts. */
export interface AttemptSettings {
  readonly handlers: Readonly<Record<string, Handler<never> | undefined>>;
  readonly backoff: Backoff.Policy | undefined;
  readonly emit: (event: WorkerEvent) => void;
  /** The worker's clock (a test's TestClock): what durations are measured on. */
  readonly now: () => number;
  /**
   * Told once the handler settled, just before its end's command is issued
   * (`attempt.finishing` is set then): the worker's next claim may ride it.
   */
  readonly recording: (attempt: Attempt) => void;
  /** Resolves once the engine may have room again, after its backpressure refused an end (`backpressure.ts`). */
  readonly roomWait: () => Promise<void>;
  /** The engine's `reportProgress`. */
  readonly progress: (jobId: number, attempt: number, value: unknown) => Promise<void>;
}

const abortError = (reason: AbortReason): Error => new Error(`the attempt was aborted: ${reason}`);

/** A running attempt, as the worker tracks it. */
export class Attempt {
  // Made when the handler first reads its signal: most handlers never do, and an
  // AbortController costs more than the rest of an attempt's bookkeeping.
  private controller: AbortController | undefined;
  /** Set once the worker itself ends the attempt: later events about it are its own. */
  finishing = false;
  /** Why the attempt was aborted, once it was: the first reason wins. */
  reason: AbortReason | undefined;
  // Ends the wait for the handler (`outcomeOf`) when the attempt is aborted.
  private onAbort: ((reason: AbortReason) => void) | undefined;

  constructor(readonly job: Job.Job) {}

  /** Aborts the handler's signal; the first reason wins. */
  abort(reason: AbortReason): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.onAbort?.(reason);
    this.controller?.abort(abortError(reason));
  }

  /** The handler's signal: aborted already if the attempt was. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(abortError(this.reason));
    }
    return this.controller.signal;
  }

  /** Tells `onAbort` the reason once the attempt is aborted (at once if it was). */
  whenAborted(onAbort: (reason: AbortReason) => void): void {
    if (this.reason !== undefined) onAbort(this.reason);
    else this.onAbort = onAbort;
  }
}

/**
 * Thrown by a handler, fails the attempt with its message and discards the
 * job at once, whatever attempts remain (core's `FailJob` with `discard`):
 * for a job that no retry can fix, such as an address that does not exist
 * (BullMQ's `UnrecoverableError`, Oban's `{:discard, reason}`). The job
 * can still be run again with `redrive` (docs/worker.md, "Dead letters").
 */
export class Discard extends Error {
  override readonly name = "Discard";
}

/**
 * Thrown by a handler, fails the attempt with its message and retries the
 * job `delayMs` from now, instead of after the worker's backoff: for a
 * handler that knows when to try again (a 429 or 503 with `Retry-After`, a
 * resource booked until a time). Attempts count as for any failure: with
 * none left, the job is discarded (BullMQ's backoff by error, Oban's
 * `{:snooze, seconds}`, which does not use up an attempt). A `delayMs` that
 * is not an integer number of milliseconds from 0 to a day is refused
 * where it is made (a `RangeError`, which then fails the attempt by the
 * usual backoff).
 */
export class RetryAfter extends Error {
  override readonly name = "RetryAfter";
  constructor(
    readonly delayMs: number,
    message: string,
  ) {
    super(message);
    if (!Number.isSafeInteger(delayMs) || delayMs < 0 || delayMs > retryAfterMsMax) {
      throw new RangeError(
        `RetryAfter: delayMs must be an integer number of milliseconds from 0 to ${retryAfterMsMax}, not ${delayMs}`,
      );
    }
  }
}

/** The longest delay a `RetryAfter` asks for: a day (a longer wait is a scheduled job). */
export const retryAfterMsMax = 86_400_000;

/** How a handler ended. */
type Outcome =
  | { readonly _tag: "Returned"; readonly value: unknown }
  | { readonly _tag: "Threw"; readonly error: unknown }
  | { readonly _tag: "Aborted"; readonly reason: AbortReason };

/** An error text the log can keep: the message, cut to `errorBytesMax` bytes. */
export const errorText = (error: unknown): string => {
  const text =
    error instanceof Error
      ? error.message === ""
        ? error.name
        : error.message
      : typeof error === "string"
        ? error
        : (() => {
            try {
              return JSON.stringify(error) ?? String(error);
            } catch {
              return String(error);
            }
          })();
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= errorBytesMax) return text;
  // Cut on a character boundary: a streaming decode holds back the bytes of
  // a character the cut splits (a plain one would write U+FFFD for them).
  return new TextDecoder("utf-8").decode(bytes.subarray(0, errorBytesMax), { stream: true });
};

const workerJob = (job: Job.Job): WorkerJob<Plain> => ({
  jobId: job.jobId,
  queue: job.queue,
  worker: job.worker,
  args: toPlain(job.args),
  attempt: job.attempt,
  maxAttempts: job.maxAttempts,
  insertedAt: job.insertedAt,
  scheduledAt: job.scheduledAt,
  job,
});

/** What a handler gets beside its job: the attempt's signal, made when first read. */
class Context implements HandlerContext {
  constructor(
    private readonly attempt: Attempt,
    private readonly report: AttemptSettings["progress"],
  ) {}
  get signal(): AbortSignal {
    return this.attempt.signal;
  }
  heartbeat(): void {}
  progress(value: unknown): Promise<void> {
    const { job } = this.attempt;
    return this.report(job.jobId, job.attempt, value).catch((error: unknown) => {
      if (!attemptGone(error)) throw error;
    });
  }
}

const fieldOf = (value: unknown, field: string): unknown =>
  typeof value === "object" && value !== null ? Reflect.get(value, field) : undefined;

/**
 * Whether a refused report says only that its attempt is no longer the
 * job's (the engine's `Rejected`, a server's error: both carry the
 * rejection): the handler's signal tells it that, and a report is no
 * reason to fail an attempt.
 */
const attemptGone = (error: unknown): boolean => {
  const tag = fieldOf(fieldOf(error, "rejection"), "_tag");
  return tag === "StaleAttempt" || tag === "JobNotFound";
};

const missingHandler = (job: Job.Job): Outcome => ({
  _tag: "Threw",
  error: new Error(
    `no handler for worker ${JSON.stringify(job.worker)} (queue ${JSON.stringify(job.queue)})`,
  ),
});

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null &&
  (typeof value === "object" || typeof value === "function") &&
  "then" in value &&
  typeof value.then === "function";

/**
 * Calls the handler now and tells how it ended: at once when it returns a
 * value or throws (no promise, no turn of the event loop), else once its
 * promise settles or the attempt is aborted (a timeout, a close, its end by
 * someone else), whichever comes first. An attempt aborted before this
 * (it waited for a slot) never calls its handler.
 */
const outcomeOf = (attempt: Attempt, settings: AttemptSettings): Outcome | Promise<Outcome> => {
  const { job } = attempt;
  if (attempt.reason !== undefined) return { _tag: "Aborted", reason: attempt.reason };
  const handler = settings.handlers[job.worker];
  if (handler === undefined) return missingHandler(job);
  let value: unknown;
  try {
    // The registry's argument types are its owner's promise about the args the jobs carry:
    // the runtime hands over what the job holds.
    value = (handler as Handler<Plain>)(workerJob(job), new Context(attempt, settings.progress));
  } catch (error) {
    return settled(attempt, { _tag: "Threw", error });
  }
  if (!isThenable(value)) return settled(attempt, { _tag: "Returned", value });
  return new Promise<Outcome>((resolve) => {
    attempt.whenAborted((reason) => resolve({ _tag: "Aborted", reason }));
    value.then(
      (result) => resolve(settled(attempt, { _tag: "Returned", value: result })),
      (error: unknown) => resolve(settled(attempt, { _tag: "Threw", error })),
    );
  });
};

/**
 * A handler that settles once its signal was aborted settles because of it (it returns what it
 * has, or rejects with the signal's reason): the abort decided the attempt's end.
 */
const settled = (attempt: Attempt, outcome: Outcome): Outcome =>
  attempt.reason === undefined ? outcome : { _tag: "Aborted", reason: attempt.reason };

/** How the worker ends an attempt in the engine: complete with a result, or fail (and discard). */
type Ending =
  | { readonly _tag: "Complete"; readonly result: Value.Value | undefined }
  | {
      readonly _tag: "Fail";
      readonly error: string;
      readonly discard?: true;
      /** The handler's own delay before the retry (`RetryAfter`), instead of the worker's backoff. */
      readonly delayMs?: number;
    };

/**
 * What a handler's outcome asks the engine to record (nothing, when another
 * ended it). A returned value goes through core's canonical form, the one
 * the decider applies too: plain objects become maps, and what is not a
 * value fails the attempt with the path to it.
 */
const endingOf = (outcome: Outcome): Ending | undefined => {
  switch (outcome._tag) {
    case "Returned": {
      if (outcome.value === undefined) return { _tag: "Complete", result: undefined };
      const result = Value.canonical(outcome.value, Value.resultDepthMax);
      return result._tag === "Unencodable"
        ? { _tag: "Fail", error: `result${result.path}: ${result.detail}` }
        : { _tag: "Complete", result: result.value };
    }
    case "Threw":
      return outcome.error instanceof Discard
        ? { _tag: "Fail", error: errorText(outcome.error), discard: true }
        : outcome.error instanceof RetryAfter
          ? { _tag: "Fail", error: errorText(outcome.error), delayMs: outcome.error.delayMs }
          : { _tag: "Fail", error: errorText(outcome.error) };
    case "Aborted":
      return outcome.reason === "ended" ? undefined : { _tag: "Fail", error: outcome.reason };
    default: {
      const unknown: never = outcome;
      return unknown;
    }
  }
};

/**
 * Why the engine refused to record a result, as the error of the attempt
 * that produced it; undefined for a refusal that is not about the result
 * (a stale attempt, a closed log), which is told as it is. The result is
 * canonical already (`endingOf`), so what the decider can still refuse of
 * it is its size.
 */
const refusedResult = (refusal: Engine.Rejected): string | undefined =>
  refusal.rejection._tag === "TooLarge"
    ? `result: the completion would be a record of ${refusal.rejection.bytes} bytes, over ${refusal.rejection.limit}`
    : undefined;

/** Tells what the engine recorded for the attempt. */
const tellRecorded = (
  ending: Ending,
  after: Job.Job,
  durationMs: number,
  settings: AttemptSettings,
): void => {
  if (after.state === "completed") settings.emit({ _tag: "Completed", job: after, durationMs });
  else if (ending._tag === "Fail") {
    const error = ending.error;
    settings.emit(
      after.state === "retryable"
        ? { _tag: "Retried", job: after, durationMs, error }
        : { _tag: "Discarded", job: after, durationMs, error },
    );
  }
};

/** Tells why the engine recorded nothing for the attempt. */
const tellRefused = (
  job: Job.Job,
  refusal: unknown,
  durationMs: number,
  settings: AttemptSettings,
): void => {
  if (refusal instanceof Engine.Rejected && refusal.rejection._tag === "StaleAttempt") {
    settings.emit({ _tag: "Stale", job, durationMs });
  } else {
    settings.emit({ _tag: "Unrecorded", job, error: messageOf(refusal) });
  }
};

const recorded = Promise.resolve();

/**
 * Records the attempt's end, fenced by its attempt number, and tells what
 * happened. A completion whose result the engine refuses becomes a failed
 * attempt with the reason, so the job is retried or discarded rather than
 * left executing. Through the promise face: no fiber per attempt.
 */
const record = <K extends Log.Kind>(
  engine: Pick<Engine.PromiseFace<K>, "complete" | "fail">,
  attempt: Attempt,
  ending: Ending,
  durationMs: number,
  settings: AttemptSettings,
): Promise<void> => {
  const { job } = attempt;
  const fenced = { attempt: job.attempt };
  const command =
    ending._tag === "Complete"
      ? engine.complete(job.jobId, ending.result, fenced)
      : engine.fail(job.jobId, ending.error, {
          ...fenced,
          ...backoffOf(ending, settings),
          ...(ending.discard === undefined ? {} : { discard: true }),
        });
  return command.then(
    (after) => tellRecorded(ending, after, durationMs, settings),
    (refusal: unknown) => {
      // Nothing was recorded and the engine is only full for now: the same end again, once it
      // may have room (the attempt's fence keeps it from ending a later attempt).
      if (isBackpressure(refusal)) {
        return settings
          .roomWait()
          .then(() => record(engine, attempt, ending, durationMs, settings));
      }
      const refused =
        ending._tag === "Complete" && refusal instanceof Engine.Rejected
          ? refusedResult(refusal)
          : undefined;
      if (refused !== undefined) {
        return record(engine, attempt, { _tag: "Fail", error: refused }, durationMs, settings);
      }
      tellRefused(job, refusal, durationMs, settings);
      return undefined;
    },
  );
};

/** The failure's backoff: the handler's own delay (`RetryAfter`), else the worker's, else the engine's. */
const backoffOf = (
  ending: Ending & { readonly _tag: "Fail" },
  settings: AttemptSettings,
): { readonly backoff?: Backoff.Policy } => {
  if (ending.delayMs !== undefined) {
    return { backoff: { baseMs: ending.delayMs, factor: 1, capMs: ending.delayMs } };
  }
  return settings.backoff === undefined ? {} : { backoff: settings.backoff };
};

/** The handler's outcome recorded (or told as stale, when someone else ended the attempt). */
const ended = <K extends Log.Kind>(
  engine: Pick<Engine.PromiseFace<K>, "complete" | "fail">,
  attempt: Attempt,
  outcome: Outcome,
  startedAt: number,
  settings: AttemptSettings,
): Promise<void> => {
  // The handler learns of a timeout through its signal too.
  if (outcome._tag === "Aborted") attempt.abort(outcome.reason);
  const durationMs = settings.now() - startedAt;
  const ending = endingOf(outcome);
  if (ending === undefined) {
    settings.emit({ _tag: "Stale", job: attempt.job, durationMs });
    return recorded;
  }
  attempt.finishing = true;
  settings.recording(attempt);
  return record(engine, attempt, ending, durationMs, settings);
};

/**
 * Runs one attempt to its end: the handler, then its outcome recorded.
 * Never rejects: what could not be recorded is told as `Unrecorded`.
 */
export const runAttempt = <K extends Log.Kind>(
  engine: Pick<Engine.PromiseFace<K>, "complete" | "fail">,
  attempt: Attempt,
  settings: AttemptSettings,
): Promise<void> => {
  const startedAt = settings.now();
  settings.emit({ _tag: "Started", job: attempt.job });
  const outcome = outcomeOf(attempt, settings);
  return outcome instanceof Promise
    ? outcome.then((settledOutcome) => ended(engine, attempt, settledOutcome, startedAt, settings))
    : ended(engine, attempt, outcome, startedAt, settings);
};
