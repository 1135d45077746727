/**
 * Timed transitions without polling: one timer, set to the state's next
 * wake time (a scheduled job or a retry coming due, a schedule's next
 * occurrence). When it fires the engine ticks (due jobs become available,
 * due occurrences are delivered), which may make parked claims start jobs
 * in the same batch; then the timer is set again. Anything that may move
 * the next wake time earlier (a commit, a parked claim) pokes it.
 *
 * A waiting claim held back only by a queue's rate limit has no command to
 * wake it: the timer also wakes when its window passes, and ticks (a drain
 * decides such a claim again once its window has passed).
 *
 * The timer sleeps on Effect's `Clock`, so `TestClock` drives it in tests.
 */
import * as Deferred from "effect/Deferred";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as FiberId from "effect/FiberId";

/** What a tick moved (the engine's `TickReport`). */
export interface Progress {
  readonly madeAvailable: number;
  readonly timedOut: number;
  readonly delivered: number;
  readonly skipped: number;
}

/**
 * How long the timer sleeps at most before it reads the wall clock again.
 * Due times are wall-clock times (`Clock.currentTimeMillis`), but a sleep
 * runs on the host's monotonic clock, which stands still while the host is
 * suspended and ignores a step of the wall clock: a job due in an hour,
 * slept for across a half-hour suspend, would come due half an hour late.
 * Sleeping at most a minute bounds that lateness to a minute, for one look
 * a minute on an idle engine (2026-12-06).
 */
export const wallCheckMs = 60_000;

/**
 * The longest sleep a JavaScript timer takes (24.8 days): Effect's live
 * clock never ends a longer one (it treats it as infinite), so even a
 * `wallCheckMs` set longer is cut to this.
 */
export const timerMaxMs = 2 ** 31 - 1;

/** How long the timer waits after a tick that moved nothing although something was due. */
export const stuckRetryMs = Duration.seconds(1);

export class Timers {
  // When the sleeping loop will wake on its own (Infinity: only when poked).
  private armedAt = Number.POSITIVE_INFINITY;
  private poked: Deferred.Deferred<void> = Deferred.unsafeMake<void>(FiberId.none);

  constructor(
    /** The state's next wake time, or null when nothing is timed. */
    private readonly nextWakeAt: () => number | null,
    /** When a parked claim's rate window passes, or null (`BatchDecider.parkedWakeAt`). */
    private readonly parkedWakeAt: () => number | null = () => null,
    /** At most how long one sleep lasts (tests that jump weeks ahead under TestClock set it longer). */
    private readonly sleepMaxMs: number = wallCheckMs,
  ) {}

  /** The next wake time may have moved earlier: re-arm if it did. */
  poke(): void {
    if (this.wakeAt() < this.armedAt) Deferred.unsafeDone(this.poked, Effect.void);
  }

  private wakeAt(): number {
    const state = this.nextWakeAt() ?? Number.POSITIVE_INFINITY;
    return Math.min(state, this.parkedWakeAt() ?? Number.POSITIVE_INFINITY);
  }

  /**
   * Runs forever (until interrupted, or until `tick` fails: the log closed
   * or failed): sleeps until the next wake time or a poke, then ticks when
   * something is due.
   */
  run<E>(tick: Effect.Effect<Progress, E>): Effect.Effect<never, E> {
    const step = Effect.gen(this, function* () {
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis);
      const next = this.nextWakeAt();
      if (next !== null && next <= now) {
        const progress = yield* tick;
        // Something is due and the tick moved nothing: a bug, not a reason to spin.
        const moved =
          progress.madeAvailable + progress.delivered + progress.skipped + progress.timedOut;
        if (moved === 0) {
          yield* Effect.sleep(stuckRetryMs);
        }
        return;
      }
      const parked = this.parkedWakeAt();
      if (parked !== null && parked <= now) {
        yield* tick;
        // The tick's drain decided the parked claims again: a window still passed is a bug.
        if ((this.parkedWakeAt() ?? Number.POSITIVE_INFINITY) <= now) {
          yield* Effect.sleep(stuckRetryMs);
        }
        return;
      }
      const at = Math.min(next ?? Number.POSITIVE_INFINITY, parked ?? Number.POSITIVE_INFINITY);
      this.poked = Deferred.unsafeMake<void>(FiberId.none);
      this.armedAt = at;
      const poked = Deferred.await(this.poked);
      yield* at === Number.POSITIVE_INFINITY
        ? poked
        : Effect.race(
            poked,
            Effect.sleep(Duration.millis(Math.min(at - now, this.sleepMaxMs, timerMaxMs))),
          );
      this.armedAt = Number.POSITIVE_INFINITY;
    });
    return Effect.forever(step);
  }
}
