/**
 * A rate-limited queue's recent start times (EVENTS-V3.md (24,3)): the `at`
 * of its latest starts in log order, at most the limit's `count` of them.
 *
 * Two costs made claims from a rate-limited queue 3x slower than from an
 * unlimited one (2026-12-02, 32 workers, count 10,000): every start copied
 * the whole list, and every claim counted the starts in the window with a
 * scan of it. Here a run that owns a list (one that it created: a batch
 * under its `Edit`, or a generation fold) appends in place, and a count
 * over a list in ascending order (the usual case: times come from a clock)
 * is a binary search. Lists are never reordered, so a clock that goes
 * back changes nothing of what is kept or counted: such a list is only
 * counted by a scan.
 */

// Whether a list is in ascending order, once known. Lists are immutable
// once published; a run that appends in place to a list it owns updates
// this first.
const ascendingKnown = new WeakMap<ReadonlyArray<number>, boolean>();

const scanAscending = (times: ReadonlyArray<number>): boolean => {
  for (let index = 1; index < times.length; index++) {
    if ((times[index] ?? 0) < (times[index - 1] ?? 0)) return false;
  }
  return true;
};

const isAscending = (times: ReadonlyArray<number>): boolean => {
  let known = ascendingKnown.get(times);
  if (known === undefined) {
    known = scanAscending(times);
    ascendingKnown.set(times, known);
  }
  return known;
};

const stillAscending = (times: ReadonlyArray<number>, at: number): boolean =>
  isAscending(times) && (times.length === 0 || at >= (times[times.length - 1] ?? at));

/** How many of `times` are after `threshold`. */
export const countAfter = (times: ReadonlyArray<number>, threshold: number): number => {
  if (!isAscending(times)) {
    let after = 0;
    for (const at of times) if (at > threshold) after++;
    return after;
  }
  // The first index whose time is after the threshold.
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((times[middle] ?? 0) > threshold) high = middle;
    else low = middle + 1;
  }
  return times.length - low;
};

/**
 * The earliest time from which fewer than `count` of `times` fall in the
 * window (t - perMs, t]: the `count`-th latest time plus `perMs`. Minus
 * infinity when the list holds fewer than `count` times.
 */
export const roomAt = (times: ReadonlyArray<number>, count: number, perMs: number): number => {
  if (times.length < count) return Number.NEGATIVE_INFINITY;
  // Kept in log order: a clock that went back leaves it unsorted (rare), so sort a copy then.
  const ordered = isAscending(times) ? times : [...times].sort((left, right) => left - right);
  return (ordered[ordered.length - count] ?? 0) + perMs;
};

/** A new list: `times` (left unchanged) with `at` appended, keeping the last `count`. */
export const withStart = (
  times: ReadonlyArray<number> | undefined,
  at: number,
  count: number,
): Array<number> => {
  const kept = times === undefined ? [] : times.slice(Math.max(0, times.length - count + 1));
  ascendingKnown.set(kept, times === undefined || stillAscending(times, at));
  kept.push(at);
  return kept;
};

/** Appends `at` to a list the caller owns, in place, keeping the last `count`. */
export const pushStart = (times: Array<number>, at: number, count: number): void => {
  ascendingKnown.set(times, stillAscending(times, at));
  times.push(at);
  // Dropping from the front one at a time: V8 trims an array's start in place.
  while (times.length > count) times.shift();
};
