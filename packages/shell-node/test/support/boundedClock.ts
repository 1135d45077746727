/**
 * TestClock as Effect's live clock behaves at the far end: a sleep longer
 * than a JavaScript timer takes (2^31 - 1 ms, 24.8 days) never ends, since
 * the live clock treats it as infinite. Under the plain TestClock such a
 * sleep ends on time, so a timer that asks for one passes there and hangs
 * in production.
 *
 * `suspendableClock` adds what a host's suspend (or a step of the wall
 * clock) does: the wall-clock time jumps ahead while every sleep, which
 * runs on the monotonic clock, stays where it was.
 */
import { Clock, Duration, Effect, TestClock } from "effect";

const timerMaxMs = 2 ** 31 - 1;

/** The test's TestClock, with sleeps over `timerMaxMs` that never end. */
export const boundedClock: Effect.Effect<Clock.Clock> = Effect.map(
  TestClock.testClock(),
  (clock): Clock.Clock => ({
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => clock.unsafeCurrentTimeMillis(),
    currentTimeMillis: clock.currentTimeMillis,
    unsafeCurrentTimeNanos: () => clock.unsafeCurrentTimeNanos(),
    currentTimeNanos: clock.currentTimeNanos,
    sleep: (duration) =>
      Duration.toMillis(Duration.decode(duration)) > timerMaxMs
        ? Effect.never
        : clock.sleep(duration),
  }),
);

/** A bounded clock whose wall-clock time `suspend(ms)` moves ahead without ending any sleep. */
export interface SuspendableClock {
  readonly clock: Clock.Clock;
  readonly suspend: (ms: number) => void;
}

export const suspendableClock: Effect.Effect<SuspendableClock> = Effect.map(
  boundedClock,
  (bounded) => {
    let suspendedMs = 0;
    const wall = () => bounded.unsafeCurrentTimeMillis() + suspendedMs;
    const clock: Clock.Clock = {
      [Clock.ClockTypeId]: Clock.ClockTypeId,
      unsafeCurrentTimeMillis: wall,
      currentTimeMillis: Effect.sync(wall),
      unsafeCurrentTimeNanos: () => BigInt(wall()) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => BigInt(wall()) * 1_000_000n),
      sleep: bounded.sleep,
    };
    return {
      clock,
      suspend: (ms) => {
        suspendedMs += ms;
      },
    };
  },
);
