/**
 * Helpers over the ascending key arrays of `SortedMap`'s nodes and edge
 * leaves: a binary search and exact copies with one entry more or less.
 * A range (`from` to `to`) lets an edge leaf that owns only part of a
 * shared array copy just its own entries.
 */

/** A total order: negative, zero or positive like `Array.prototype.sort`. */
export type Compare<K> = (left: K, right: K) => number;

/**
 * The values beside a leaf's keys: an array as long as its keys, or null
 * in a keys-only map (`SortedMap.keysOnly`), whose every value is one
 * constant. The job indexes map every key to `null`: an array of 32
 * `null`s per leaf was 8.5 bytes an entry held, and copied again with
 * every copy of the leaf (docs/core.md, 2026-12-04, issue 19).
 */
export type Values<V> = Array<V> | null;

/** `values.slice(from, to)`, or null for a keys-only leaf. */
export const valuesSlice = <V>(values: Values<V>, from: number, to: number): Values<V> =>
  values === null ? null : values.slice(from, to);

/** Most entries (keys of a leaf, children of a branch) a node or an edge leaf holds. */
export const entriesMax = 32;

/** The first index in `from` to `to` whose key is >= `key` (`to` when none is). */
export const lowerBound = <K>(
  keys: ReadonlyArray<K>,
  key: K,
  compare: Compare<K>,
  from = 0,
  to = keys.length,
): number => {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(keys[middle] as K, key) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
};

/**
 * `list.splice(at, 0, item)` without the empty list of removed items that
 * `splice` makes on every call (one per index update of every command).
 */
export const insertAt = <T>(list: Array<T>, at: number, item: T): void => {
  list.push(item);
  for (let index = list.length - 1; index > at; index--) list[index] = list[index - 1] as T;
  list[at] = item;
};

/**
 * A copy of `list` from `from` to `to` with `item` at `at` (an index of
 * `list`), exactly as long as it needs to be. (A `slice` then an insert
 * would grow the copy by half again: a tree built by persistent inserts
 * held about 80 bytes an entry that way, 2026-12-04.)
 */
export const withInserted = <T>(
  list: ReadonlyArray<T>,
  at: number,
  item: T,
  from = 0,
  to = list.length,
): Array<T> => {
  const copy = new Array<T>(to - from + 1);
  for (let index = from; index < at; index++) copy[index - from] = list[index] as T;
  copy[at - from] = item;
  for (let index = at; index < to; index++) copy[index - from + 1] = list[index] as T;
  return copy;
};

/** A copy of `list` from `from` to `to` without its item at `at` (`slice` and `splice` would make two lists). */
export const withRemoved = <T>(
  list: ReadonlyArray<T>,
  at: number,
  from = 0,
  to = list.length,
): Array<T> => {
  const copy = new Array<T>(to - from - 1);
  for (let index = from; index < at; index++) copy[index - from] = list[index] as T;
  for (let index = at + 1; index < to; index++) copy[index - from - 1] = list[index] as T;
  return copy;
};
