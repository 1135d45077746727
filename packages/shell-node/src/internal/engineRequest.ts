/**
 * A command waiting in the engine's queue and the way its caller is
 * answered: the command, how to read its answer from the state right after
 * its records, and how an outcome reaches a fiber or a promise. Also the
 * engine's own refusal, `Rejected`, which `Engine` re-exports.
 */
import type { Commands, Decide, Rejection, State } from "@tay/core";
import { Data, Effect } from "effect";
import type { StoreError } from "../StoreError.js";

/** A command the deciders refused; `rejection` says why (`RevisionMismatch`, `JobNotFound`, ...). */
export class Rejected extends Data.TaggedError("Rejected")<{
  readonly command: Commands.CommandTag;
  readonly rejection: Rejection.Rejection;
}> {
  override get message(): string {
    return `${this.command} rejected: ${this.rejection._tag}`;
  }
}

/** What every engine command can fail with. */
export type EngineError = Rejected | StoreError;

/** An answer that should exist and does not: a defect, reported as such. */
export class Missing {
  constructor(readonly message: string) {}
}

/**
 * Reads a command's answer from the state right after its records. It runs
 * at once, while that state is current: the next command of the same batch
 * updates it in place (see `Evolve.batch`). Job and schedule records are
 * immutable, so what it returns stays valid. A `Missing` answer is a bug
 * (the command's own job is not in the state): its caller dies.
 */
export type AnswerOf<A> = (state: State.State, events: Decide.Decision) => A | Missing;

/** A command waiting in the engine's queue, its type of answer erased. */
export interface Pending {
  readonly command: Commands.Command;
  /** Records the answer: the command is in the batch. */
  accept(state: State.State, events: Decide.Decision): void;
  /** Answers at once with a refusal. */
  refuse(error: EngineError): void;
  /** Answers at once with a defect (a bug in a decider, the fold or the engine). */
  die(defect: unknown): void;
  /** Answers once the batch ended: its recorded answer, or the batch's failure. */
  settle(failure: StoreError | undefined): void;
}

/**
 * The part of a queued command that does not depend on who waits for it;
 * the two callers (a fiber, a promise) supply how an outcome reaches them.
 */
abstract class Request<A> implements Pending {
  private answer: A | Missing = new Missing("an accepted command has no answer");

  constructor(
    readonly command: Commands.Command,
    private readonly answerOf: AnswerOf<A>,
  ) {}

  abstract succeed(value: A): void;
  abstract refuse(error: EngineError): void;
  abstract die(defect: unknown): void;

  accept(state: State.State, events: Decide.Decision): void {
    this.answer = this.answerOf(state, events);
  }

  settle(failure: StoreError | undefined): void {
    const answer = this.answer;
    if (failure !== undefined) this.refuse(failure);
    else if (answer instanceof Missing) this.die(new Error(answer.message));
    else this.succeed(answer);
  }
}

/** A command issued by a fiber: the drain resumes it. */
export class FiberRequest<A> extends Request<A> {
  constructor(
    command: Commands.Command,
    answerOf: AnswerOf<A>,
    private readonly resume: (outcome: Effect.Effect<A, EngineError>) => void,
  ) {
    super(command, answerOf);
  }
  succeed(value: A): void {
    this.resume(Effect.succeed(value));
  }
  refuse(error: EngineError): void {
    this.resume(Effect.fail(error));
  }
  die(defect: unknown): void {
    this.resume(Effect.die(defect));
  }
}

/** A command issued through `promises`: the drain settles its promise. */
export class PromiseRequest<A> extends Request<A> {
  constructor(
    command: Commands.Command,
    answerOf: AnswerOf<A>,
    private readonly resolve: (value: A) => void,
    private readonly reject: (reason: unknown) => void,
  ) {
    super(command, answerOf);
  }
  succeed(value: A): void {
    this.resolve(value);
  }
  refuse(error: EngineError): void {
    this.reject(error);
  }
  die(defect: unknown): void {
    this.reject(defect);
  }
}
