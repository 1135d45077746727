/**
 * TestClock as Effect's live clock behaves at the far end: a sleep longer
 * than a JavaScript timer takes (2^31 - 1 ms, 24.8 days) never ends, since
 * the live clock treats it as infinite. Under the plain TestClock such a
 * sleep ends on time, so a timer that asks for one passes there and hangs
 * in production.
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
