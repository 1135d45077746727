/**
 * One holder at a time: what the writer's batches, rotations, compactions
 * and close take turns with. It does what `Effect.Semaphore` with one
 * permit does, for less: a batch takes it once per write, and an
 * uncontended take here is a flag and a finalizer (~1 µs) where the
 * semaphore's take and release cost 10-15 µs (measured 2026-12-01,
 * docs/benchmarks.md "The writer's lock"). A release hands the turn
 * straight to the first waiter, in arrival order.
 */
import * as Effect from "effect/Effect";

/** A waiter's turn: set once the holder before it handed over. */
interface Turn {
  owned: boolean;
  readonly resume: () => void;
}

export class Exclusive {
  private held = false;
  private readonly waiters: Array<Turn> = [];

  /**
   * Takes the turn if nobody holds it, outside any fiber (the writer's
   * direct path); the taker ends it with `release` on every path.
   */
  tryTake(): boolean {
    if (this.held) return false;
    this.held = true;
    return true;
  }

  /** Ends the current turn: hands it to the first waiter, or frees it. */
  readonly handOver = (): void => {
    const next = this.waiters.shift();
    if (next === undefined) {
      this.held = false;
      return;
    }
    next.owned = true;
    next.resume();
  };

  private readonly release: Effect.Effect<void> = Effect.sync(this.handOver);

  // Waits until the holder hands the turn over. Interrupted while queued, it leaves the queue.
  private waitFor(turn: { current: Turn | undefined }): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      const waiting: Turn = { owned: false, resume: () => resume(Effect.void) };
      turn.current = waiting;
      this.waiters.push(waiting);
      return Effect.sync(() => {
        const at = this.waiters.indexOf(waiting);
        if (at >= 0) this.waiters.splice(at, 1);
      });
    });
  }

  /**
   * Runs `effect` holding the turn, and ends the turn however `effect`
   * ends (success, failure, interruption). Only the wait for the turn and
   * `effect` itself are interruptible: a turn handed over is never lost.
   */
  holding<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        if (!this.held) {
          this.held = true;
          return Effect.ensuring(restore(effect), this.release);
        }
        const turn: { current: Turn | undefined } = { current: undefined };
        // Interrupted after the turn was handed over but before it was used: hand it on.
        const waited = Effect.onInterrupt(restore(this.waitFor(turn)), () =>
          turn.current?.owned === true ? this.release : Effect.void,
        );
        return Effect.zipRight(waited, Effect.ensuring(restore(effect), this.release));
      }),
    );
  }
}
