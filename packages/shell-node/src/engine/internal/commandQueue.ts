/**
 * The engine's one queue of commands. Commands issued in the same turn
 * wait together; a drain (a microtask) hands everything waiting to the
 * batch decider, which decides it in order and appends the accepted
 * commands' records as one batch whose durability answers them all.
 * A compaction pauses the queue: nothing decides against a state the new
 * base would not contain.
 */
import { Deferred, Effect } from "effect";
import type * as Log from "../../log/Log.js";
import type { BatchDecider, Failure } from "./batchDecider.js";
import { FiberRequest, type Pending, PromiseRequest, type Rejected } from "./engineRequest.js";
import type { Issue } from "./operations.js";

export class CommandQueue<K extends Log.Kind> {
  private queue: Array<Pending<Failure<K>>> = [];
  private drainScheduled = false;
  private paused = false;
  private waitingForGate = false;

  constructor(
    private readonly log: Log.Log<K>,
    private readonly decider: BatchDecider<K>,
  ) {}

  /** Queues a command for a fiber: the Effect resumes once its batch ended. */
  readonly execute = <A>({ command, answerOf }: Issue<A>) =>
    Effect.async<A, Rejected | Failure<K>>((resume) => {
      this.queue.push(new FiberRequest(command, answerOf, resume));
      this.schedule();
    });

  /** Queues a command for a promise: it settles once its batch ended. */
  readonly submit = <A>({ command, answerOf }: Issue<A>) =>
    new Promise<A>((resolve, reject) => {
      this.queue.push(new PromiseRequest(command, answerOf, resolve, reject));
      this.schedule();
    });

  /** Decides what is queued now, then holds every later command until `resume`. */
  pause(): void {
    this.drain();
    this.paused = true;
  }

  /** Lets held commands decide again. */
  resume(): void {
    this.paused = false;
    this.schedule();
  }

  private schedule(): void {
    if (this.drainScheduled || this.paused) return;
    this.drainScheduled = true;
    // A microtask: the commands issued in this turn join the same batch.
    queueMicrotask(this.drain);
  }

  private readonly drain = (): void => {
    this.drainScheduled = false;
    if (this.paused || this.queue.length === 0) return;
    const admitted = this.log.admission();
    if (admitted._tag === "Gated") {
      this.waitFor(admitted.gate);
      return;
    }
    const requests = this.queue;
    this.queue = [];
    if (admitted._tag === "Refused") {
      for (const request of requests) request.refuse(admitted.error);
      return;
    }
    try {
      this.decider.decide(requests);
    } catch (defect) {
      // Nothing was appended (appending is the last step): every caller of
      // this drain not answered yet dies with the bug.
      for (const request of requests) request.die(defect);
    }
  };

  // The log holds appends (its own compaction, say): drain once it opens.
  private waitFor(gate: Deferred.Deferred<void>): void {
    if (this.waitingForGate) return;
    this.waitingForGate = true;
    Effect.runFork(
      Effect.zipRight(
        Deferred.await(gate),
        Effect.sync(() => {
          this.waitingForGate = false;
          this.schedule();
        }),
      ),
    );
  }
}
