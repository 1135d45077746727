/**
 * Timeouts without a timer per attempt: every attempt of a worker gets the
 * same `timeoutMs`, or its job's own (EVENTS-V3.md `timeout_ms`) when that
 * is shorter; attempts start in time order, so their deadlines mostly come
 * in order too (a job's own shorter one is inserted in its place); one
 * fiber sleeps until the earliest, or until a new earliest is added, and
 * aborts what has run past it. It sleeps on Effect's `Clock`, so
 * `TestClock` drives it.
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import type { Attempt } from "./attempt.js";

/**
 * How long the fiber sleeps at most before it reads the wall clock again:
 * deadlines are wall-clock times and a sleep runs on the host's monotonic
 * clock (still while the host is suspended), so a longer sleep could abort
 * an attempt that long after its deadline (the engine's timer does the
 * same: engine/internal/timers.ts).
 */
export const wallCheckMs = 60_000;

/** The longest sleep a JavaScript timer takes: Effect's live clock never ends a longer one. */
const timerMaxMs = 2 ** 31 - 1;

export class Deadlines {
  // Attempts and their deadlines, earliest first (appended in start order).
  private queue: Array<{ readonly at: number; readonly attempt: Attempt }> = [];
  private head = 0;
  private wake: (() => void) | undefined;

  constructor(
    private readonly timeoutMs: number | undefined,
    private readonly now: () => number,
    /** At most how long one sleep lasts (tests that jump weeks ahead under TestClock set it longer). */
    private readonly sleepMaxMs: number = wallCheckMs,
  ) {}

  /**
   * `attempt` started now: aborted with "timeout" once it runs the worker's
   * `timeoutMs` or `jobTimeoutMs`, whichever is shorter (never, with neither).
   */
  add(attempt: Attempt, jobTimeoutMs: number | null = null): void {
    const timeoutMs = Math.min(
      this.timeoutMs ?? Number.POSITIVE_INFINITY,
      jobTimeoutMs ?? Number.POSITIVE_INFINITY,
    );
    if (timeoutMs === Number.POSITIVE_INFINITY) return;
    const at = this.now() + timeoutMs;
    // Usually last; a job's own shorter timeout may go before later ones.
    let index = this.queue.length;
    while (index > this.head && (this.queue[index - 1]?.at ?? 0) > at) index--;
    this.queue.splice(index, 0, { at, attempt });
    // Only a new earliest deadline changes how long the fiber sleeps: it
    // may be asleep until a later one (2026-12-05: a job's own 50 ms
    // timeout behind a 5 s one fired after 5 s; found by a mutation run).
    if (index !== this.head) return;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Resumes once `add` brings a new earliest deadline. */
  private readonly woken: Effect.Effect<void> = Effect.async<void>((resume) => {
    this.wake = () => resume(Effect.void);
    return Effect.sync(() => {
      this.wake = undefined;
    });
  });

  /** Runs until interrupted: aborts each attempt still running at its deadline. */
  readonly run: Effect.Effect<never> = Effect.forever(
    Effect.suspend(() => {
      const next = this.queue[this.head];
      if (next === undefined) return this.woken;
      const waitMs = next.at - this.now();
      // At most a minute: a timeout of months is reached by sleeping again.
      if (waitMs > 0) {
        return Effect.race(
          Effect.sleep(Duration.millis(Math.min(waitMs, this.sleepMaxMs, timerMaxMs))),
          this.woken,
        );
      }
      this.head += 1;
      // An attempt that ended (or is ending) has nothing left to time out.
      if (next.attempt.reason === undefined && !next.attempt.finishing) {
        next.attempt.abort("timeout");
      }
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      return Effect.void;
    }),
  );
}
