/**
 * A command waiting in the engine's queue and the way its caller is
 * answered: the command, how to read its answer from the state right after
 * its records, and how an outcome reaches a fiber or a promise. Also the
 * engine's own refusal, `Rejected`, which `Engine` re-exports.
 */
import type { Commands, Decide, Rejection, State, Terminal } from "@tay/core";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Described from "../../disk/Described.js";

/** What a rejection means, on one line. */
const explain = (rejected: Rejection.Rejection): string => {
  switch (rejected._tag) {
    case "JobNotFound":
      return `no job ${rejected.jobId} (never inserted, or compacted away)`;
    case "InvalidTransition":
      return `job ${rejected.jobId} is ${rejected.from}: ${rejected.command} is not allowed`;
    case "ScheduleNotFound":
      return `no schedule ${JSON.stringify(rejected.scheduleId)}`;
    case "ScheduleAlreadyCancelled":
      return `schedule ${JSON.stringify(rejected.scheduleId)} is already cancelled`;
    case "RevisionMismatch":
      return `schedule ${JSON.stringify(rejected.scheduleId)} is at revision ${rejected.actual}, not ${rejected.expected}`;
    case "InvalidDefinition":
      return `schedule ${JSON.stringify(rejected.scheduleId)}: ${rejected.detail}`;
    case "InvalidField":
      return `${rejected.field}: ${rejected.detail}`;
    case "TooLarge":
      return `the record would be ${rejected.bytes} bytes, over ${rejected.limit}`;
    case "IdsExhausted":
      return `job ids would pass 2^53-1 (last ${rejected.lastJobId}, ${rejected.requested} requested)`;
    case "StaleAttempt":
      return `job ${rejected.jobId}'s attempt ${rejected.attempt} is no longer current (the job is ${rejected.state} at attempt ${rejected.currentAttempt})`;
    case "UniqueKeyTaken":
      return `job ${rejected.jobId}'s unique key ${JSON.stringify(rejected.uniqueKey)} in queue ${JSON.stringify(rejected.queue)} is held by job ${rejected.heldBy}, which is not terminal`;
    default: {
      const unknown: never = rejected;
      return String(unknown);
    }
  }
};

/** A command the deciders refused; `rejection` says why (`RevisionMismatch`, `JobNotFound`, ...). */
export class Rejected extends Data.TaggedError("Rejected")<{
  /** The command refused; `ReportProgress` is a progress report (it appends nothing either way). */
  readonly command: Commands.CommandTag | "ReportProgress";
  readonly rejection: Rejection.Rejection;
}> {
  /** The rejection's tag is the reason: `InvalidField: args.x: ... (InsertJobs appended nothing)`. */
  get description(): Described.Description {
    return Described.describe(
      this.rejection._tag,
      undefined,
      `${explain(this.rejection)} (${this.command} appended nothing)`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** An answer that should exist and does not: a defect, reported as such. */
export class Missing {
  constructor(readonly message: string) {}
}

// Until `accept`: one shared value, not an object per command.
const noAnswer = new Missing("an accepted command has no answer");

/**
 * Reads a command's answer from the state right after its records. It runs
 * at once, while that state is current: the next command of the same batch
 * updates it in place (see `Evolve.batch`). Job and schedule records are
 * immutable, so what it returns stays valid. A `Missing` answer is a bug
 * (the command's own job is not in the state): its caller dies.
 */
export type AnswerOf<A> = (
  state: State.State,
  events: Decide.Decision,
  /** On a lean state: the whole records the events let go of (they are facts in `state`). */
  left?: Terminal.Left,
) => A | Missing;

/** One queue a waiting claim takes from, and at most how many of its jobs. */
export interface Lane {
  readonly queue: string;
  readonly limit: number;
}

/**
 * What a waiting claim asks: up to `limit` jobs in all from its lanes. It
 * is answered once it starts at least one job; until then it is parked
 * and decided again whenever a drain may have made one of its queues'
 * jobs available. It starts from a lane the decider moves by one each time
 * a waiting claim starts jobs, so no queue starves another; `rotation`
 * moves it further for this claim (decided again after a conflict).
 */
export interface Waiting {
  readonly lanes: ReadonlyArray<Lane>;
  readonly limit: number;
  rotation: number;
  /** Told when a drain decides the claim with jobs (`NextJobsOptions.onDecided`). */
  readonly decided: (() => void) | undefined;
}

/**
 * A command waiting in the engine's queue, its type of answer erased; `X`
 * is what its log can fail with.
 */
export interface Pending<X> {
  readonly command: Commands.Command;
  /** Set for a waiting claim (`command` is then its first lane's claim). */
  readonly waiting: Waiting | undefined;
  /** Its caller gave up (an interrupted fiber, an aborted signal): drop it unanswered. */
  cancelled: boolean;
  /**
   * A waiting claim's signal: its caller may give up. The queue listens to
   * it only once the claim waits past its drain (parked, held by a
   * catch-up, or queued behind a pause): most claims are answered by the
   * drain they enter, and a listener added and taken away per claim cost
   * more than the rest of its queueing (docs/engine.md, 2026-12-02).
   */
  signal: AbortSignal | undefined;
  /** Run once, when the request is answered (a waiting claim drops its signal's listener). */
  onAnswered: (() => void) | undefined;
  /** Records the answer: the command is in the batch. */
  accept(state: State.State, events: Decide.Decision, left?: Terminal.Left): void;
  /** Answers at once with a refusal. */
  refuse(error: Rejected | X): void;
  /** Answers at once with a defect (a bug in a decider, the fold or the engine). */
  die(defect: unknown): void;
  /** Answers once the batch ended: its recorded answer, or the batch's failure. */
  settle(failure: X | undefined): void;
}

/**
 * The part of a queued command that does not depend on who waits for it;
 * the two callers (a fiber, a promise) supply how an outcome reaches them.
 */
abstract class Request<A, X> implements Pending<X> {
  private answer: A | Missing = noAnswer;
  cancelled = false;
  signal: AbortSignal | undefined = undefined;
  onAnswered: (() => void) | undefined = undefined;

  /** Runs `onAnswered` once: the caller is being answered now. */
  protected answered(): void {
    const onAnswered = this.onAnswered;
    this.onAnswered = undefined;
    onAnswered?.();
  }

  constructor(
    readonly command: Commands.Command,
    private readonly answerOf: AnswerOf<A>,
    readonly waiting: Waiting | undefined,
  ) {}

  abstract succeed(value: A): void;
  abstract refuse(error: Rejected | X): void;
  abstract die(defect: unknown): void;

  accept(state: State.State, events: Decide.Decision, left?: Terminal.Left): void {
    this.answer = this.answerOf(state, events, left);
  }

  settle(failure: X | undefined): void {
    const answer = this.answer;
    if (failure !== undefined) this.refuse(failure);
    else if (answer instanceof Missing) this.die(new Error(answer.message));
    else this.succeed(answer);
  }
}

/** A command issued by a fiber: the drain resumes it. */
export class FiberRequest<A, X> extends Request<A, X> {
  constructor(
    command: Commands.Command,
    answerOf: AnswerOf<A>,
    waiting: Waiting | undefined,
    private readonly resume: (outcome: Effect.Effect<A, Rejected | X>) => void,
  ) {
    super(command, answerOf, waiting);
  }
  succeed(value: A): void {
    this.answered();
    this.resume(Effect.succeed(value));
  }
  refuse(error: Rejected | X): void {
    this.answered();
    this.resume(Effect.fail(error));
  }
  die(defect: unknown): void {
    this.answered();
    this.resume(Effect.die(defect));
  }
}

/** A command issued through `promises`: the drain settles its promise. */
export class PromiseRequest<A, X> extends Request<A, X> {
  constructor(
    command: Commands.Command,
    answerOf: AnswerOf<A>,
    waiting: Waiting | undefined,
    private readonly resolve: (value: A) => void,
    private readonly reject: (reason: unknown) => void,
  ) {
    super(command, answerOf, waiting);
  }
  succeed(value: A): void {
    this.answered();
    this.resolve(value);
  }
  refuse(error: Rejected | X): void {
    this.answered();
    this.reject(error);
  }
  die(defect: unknown): void {
    this.answered();
    this.reject(defect);
  }
}
