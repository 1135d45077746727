/**
 * A queue's state (EVENTS-V3.md "Queue state"): paused or not, and its
 * limits. A queue with no (24,3) is unpaused with no limits; the state holds
 * only the queues whose state is not that default, so a queue set back to
 * the default is the same as one never set (compaction writes no (24,3) for
 * it, and the state folded from the compacted store is equal).
 */
import type { QueueStateSet, RateLimit } from "./Event.js";
import type { InvalidField } from "./HistoryError.js";
import * as Fields from "./internal/Fields.js";
import { countAfter, roomAt } from "./internal/Starts.js";
import * as Limits from "./Limits.js";

/** What the state keeps of a queue's last (24,3). */
export interface QueueState {
  readonly queue: string;
  /** When the state was last set. */
  readonly at: number;
  readonly paused: boolean;
  /** At most this many executing jobs; null for no bound. */
  readonly concurrency: number | null;
  /** At most `count` starts in any window of `perMs`; null for no bound. */
  readonly rateLimit: RateLimit | null;
}

/** True for the state of a queue no (24,3) ever touched: unpaused, no limits. */
export const isDefault = (state: {
  readonly paused: boolean;
  readonly concurrency: number | null;
  readonly rateLimit: RateLimit | null;
}): boolean => !state.paused && state.concurrency === null && state.rateLimit === null;

/** The state a (24,3) sets (its whole state: nothing of the previous one is kept). */
export const fromEvent = (event: QueueStateSet): QueueState => ({
  queue: event.queue,
  at: event.at,
  paused: event.paused,
  concurrency: event.concurrency,
  rateLimit:
    event.rateLimit === null
      ? null
      : { count: event.rateLimit.count, perMs: event.rateLimit.perMs },
});

/** The (24,3) that restores `state` (compaction writes one per non-default queue). */
export const toEvent = (state: QueueState): QueueStateSet => ({
  _tag: "QueueStateSet",
  queue: state.queue,
  at: state.at,
  paused: state.paused,
  concurrency: state.concurrency,
  rateLimit: state.rateLimit,
});

const field = (name: string): InvalidField => ({ _tag: "InvalidField", field: name });

/** The field kinds of a (24,3) the fold checks (the codec has checked them for decoded events). */
export const checkFields = (event: QueueStateSet): InvalidField | undefined => {
  if (!Fields.isNameKind(event.queue)) return field("queue");
  if (!Fields.isTime(event.at)) return field("at");
  if (typeof event.paused !== "boolean") return field("paused");
  if (event.concurrency !== null && !Fields.isId(event.concurrency)) return field("concurrency");
  const rate = event.rateLimit;
  if (rate === null) return undefined;
  if (!Fields.isIntegerIn(rate.count, Limits.rateCountMin, Limits.rateCountMax)) {
    return field("rate_limit.count");
  }
  if (!Fields.isIntegerIn(rate.perMs, Limits.ratePerMsMin, Limits.ratePerMsMax)) {
    return field("rate_limit.per_ms");
  }
  return undefined;
};

const rateLimitsEqual = (left: RateLimit | null, right: RateLimit | null): boolean =>
  left === null || right === null
    ? left === right
    : left.count === right.count && left.perMs === right.perMs;

/** Structural equality of two queue states. */
export const equals = (left: QueueState, right: QueueState): boolean =>
  left.queue === right.queue &&
  left.at === right.at &&
  left.paused === right.paused &&
  left.concurrency === right.concurrency &&
  rateLimitsEqual(left.rateLimit, right.rateLimit);

/**
 * How many more starts the rate limit allows at `now`, given the queue's
 * recent start times (ascending; `starts` may hold older ones). Infinity
 * with no rate limit.
 */
export const startsAllowed = (
  state: QueueState | undefined,
  starts: ReadonlyArray<number>,
  now: number,
): number => {
  const rate = state?.rateLimit ?? null;
  if (rate === null) return Number.POSITIVE_INFINITY;
  // The window ending now: (now - per_ms, now].
  return Math.max(0, rate.count - countAfter(starts, now - rate.perMs));
};

/**
 * From when the rate limit lets a start (its window holds fewer than
 * `count` starts from then on): the time the oldest start the window counts
 * leaves it, minus infinity while fewer than `count` are kept. Null with
 * no rate limit.
 */
export const startAllowedFrom = (
  state: QueueState | undefined,
  starts: ReadonlyArray<number>,
): number | null => {
  const rate = state?.rateLimit ?? null;
  return rate === null ? null : roomAt(starts, rate.count, rate.perMs);
};
