/**
 * The engine's one queue of commands. Commands issued in the same turn
 * wait together; a drain (a microtask) hands everything waiting to the
 * batch decider, which decides it in order and appends the accepted
 * commands' records as one batch whose durability answers them all.
 * A compaction pauses the queue: nothing decides against a state the new
 * base would not contain.
 */
import * as Data from "effect/Data";
import * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Described from "../../disk/Described.js";
import type * as Log from "../../log/Log.js";
import type { BatchDecider, Failure } from "./batchDecider.js";
import { FiberRequest, type Pending, PromiseRequest, type Rejected } from "./engineRequest.js";
import type { Issue } from "./operations.js";

const resolved = Promise.resolve();

/** Commands that may wait undecided before new ones are refused (`queuedCommandsMax`). */
export const queuedCommandsMaxDefault = 100_000;

/**
 * The queue already holds `queuedCommandsMax` commands waiting to be
 * decided (a compaction holds them, or callers issue faster than the log
 * takes them): this one was refused at once and nothing was done. Wait for
 * room (`room()`) and issue it again.
 */
export class Overloaded extends Data.TaggedError("Overloaded")<{
  readonly queuedCommandsMax: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "Overloaded",
      undefined,
      `${this.queuedCommandsMax} commands are already waiting to be decided (queuedCommandsMax ${this.queuedCommandsMax}); this one was refused and nothing was done: wait for room and retry`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

export class CommandQueue<K extends Log.Kind> {
  private queue: Array<Pending<Failure<K> | Overloaded>> = [];
  private drainScheduled = false;
  private paused = false;
  private waitingForGate = false;
  // The log has incoming jobs (`Log.incoming`): drain even with no command.
  private kicked = false;
  /** Callers waiting for room, woken once the queue is drained below its limit. */
  private roomWaiters = new Set<() => void>();

  constructor(
    private readonly log: Log.Log<K>,
    private readonly decider: BatchDecider<K>,
    private readonly queuedCommandsMax: number = queuedCommandsMaxDefault,
  ) {
    decider.waits = this.watch;
  }

  /** Commands waiting to be decided now. */
  get queued(): number {
    return this.queue.length;
  }

  /**
   * Resumes once the queue has room for a command (at once if it has). Room
   * is not reserved: a command issued then may still meet `Overloaded` when
   * others took the room first, so callers loop.
   */
  readonly room = (): Effect.Effect<void> =>
    Effect.suspend(() =>
      this.hasRoom()
        ? Effect.void
        : Effect.async<void>((resume) => {
            const waiter = () => resume(Effect.void);
            this.roomWaiters.add(waiter);
            return Effect.sync(() => this.roomWaiters.delete(waiter));
          }),
    );

  /** The promise face of `room`. */
  readonly roomPromise = (): Promise<void> =>
    this.hasRoom()
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          this.roomWaiters.add(resolve);
        });

  private hasRoom(): boolean {
    return this.queue.length < this.queuedCommandsMax;
  }

  private wakeRoomWaiters(): void {
    if (this.roomWaiters.size === 0 || !this.hasRoom()) return;
    const waiters = [...this.roomWaiters];
    this.roomWaiters.clear();
    for (const waiter of waiters) waiter();
  }

  /**
   * Queues a command for a fiber: the Effect resumes once its batch ended.
   * Interrupting it drops a waiting claim that is still parked; any other
   * command is decided all the same (its records may already be queued).
   */
  readonly execute = <A>(issue: Issue<A>) =>
    Effect.async<A, Rejected | Failure<K> | Overloaded>((resume) => {
      const request = new FiberRequest(issue.command, issue.answerOf, issue.waiting, resume);
      this.enter(request, issue.signal);
      return issue.waiting === undefined ? undefined : Effect.sync(() => this.cancel(request));
    });

  /** Queues a command for a promise: it settles once its batch ended. */
  readonly submit = <A>(issue: Issue<A>) =>
    new Promise<A>((resolve, reject) => {
      const request = new PromiseRequest(
        issue.command,
        issue.answerOf,
        issue.waiting,
        resolve,
        reject,
      );
      this.enter(request, issue.signal);
    });

  /** Refuses every parked waiting claim with `error` (the log closed or failed). */
  refuseParked(error: Rejected | Failure<K>): void {
    for (const request of this.decider.takeParked()) request.refuse(error);
  }

  private enter(request: Pending<Failure<K> | Overloaded>, signal: AbortSignal | undefined): void {
    // Bounded: a caller faster than the log (or a compaction holding the queue) is told at once.
    if (!this.hasRoom()) {
      request.refuse(new Overloaded({ queuedCommandsMax: this.queuedCommandsMax }));
      return;
    }
    if (signal !== undefined) {
      if (signal.aborted) {
        request.accept(this.decider.committed, []);
        request.settle(undefined);
        return;
      }
      // Listened to only if it waits past its drain (`watch`); the drain
      // itself answers a claim whose signal aborted meanwhile with no job.
      request.signal = signal;
      if (this.paused || this.waitingForGate) this.watch(request);
    }
    // The first command of a drain gets a list of one place: an empty
    // list's first push reserves 17 (~130 bytes more a drain).
    if (this.queue.length === 0) this.queue = [request];
    else this.queue.push(request);
    this.schedule();
  }

  /**
   * Listens to `request`'s signal from now on: it waits past its drain
   * (parked, held by a catch-up, or queued while the queue is held).
   * Once per request; a signal that aborted before is heard at once.
   */
  private readonly watch = (request: Pending<Failure<K> | Overloaded>): void => {
    const signal = request.signal;
    if (signal === undefined || request.onAnswered !== undefined) return;
    const onAbort = () => {
      // Answered with no job, unless a drain already started jobs for it.
      if (!this.cancel(request)) return;
      request.accept(this.decider.committed, []);
      request.settle(undefined);
    };
    // A signal may outlive many claims: each takes its listener away once answered.
    request.onAnswered = () => signal.removeEventListener("abort", onAbort);
    if (signal.aborted) resolved.then(onAbort);
    else signal.addEventListener("abort", onAbort, { once: true });
  };

  /** Drops `request` if it is still queued or parked; false once it is decided. */
  private cancel(request: Pending<Failure<K> | Overloaded>): boolean {
    const position = this.queue.indexOf(request);
    if (position >= 0) {
      this.queue.splice(position, 1);
      this.wakeRoomWaiters();
    } else if (!this.decider.unpark(request)) {
      return false;
    }
    request.cancelled = true;
    return true;
  }

  /** The log has incoming jobs: drain soon even if no command waits. */
  kick(): void {
    this.kicked = true;
    this.schedule();
  }

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
    // A resolved promise's reaction rather than `queueMicrotask`, which
    // makes an AsyncResource and a bound function per call (docs/benchmarks.md,
    // "One awaited insert").
    resolved.then(this.drain);
  }

  private readonly drain = (): void => {
    this.drainScheduled = false;
    if (this.paused || (this.queue.length === 0 && !this.kicked)) return;
    const admitted = this.log.admission();
    if (admitted._tag === "Gated") {
      for (const request of this.queue) this.watch(request);
      this.waitFor(admitted.gate);
      return;
    }
    const requests = this.queue;
    this.queue = [];
    this.kicked = false;
    this.wakeRoomWaiters();
    if (admitted._tag === "Refused") {
      for (const request of requests) request.refuse(admitted.error);
      this.refuseParked(admitted.error);
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
