/**
 * The edge leaves of a `SortedMap` (its first and last leaf, kept outside
 * the tree): each the entries `start` to `end` of two arrays that several
 * versions of the map share, as `IdMap`'s leaves share theirs up to `end`.
 *
 * Why views and not copies: the job indexes take ids and times in
 * ascending order and are taken from their front, so almost every update
 * of a running engine adds one entry after the last (the tail) or drops
 * the first (the head). A copy of the leaf cost ~300 bytes of arrays per
 * update for one entry; a view costs one small object.
 *
 * - The tail's arrays are allocated at their capacity, with holes, not
 *   grown by `push`: V8 would grow them by half again plus 16 slots, and
 *   that slack stayed in every small map (a map of 2 entries held 540
 *   bytes instead of 260, 2026-12-04). A hole is a free slot.
 * - Adding after the last entry of the tail writes slot `end` when it is
 *   still a hole (no other version wrote past this one's end); older
 *   versions keep seeing only their prefix. Else (a branching history: an
 *   older version appended to again), or when the arrays are full, the
 *   entries are copied into arrays twice as large (at most `entriesMax`).
 *   Only tails have holes: a head's arrays may be a leaf that older
 *   versions still hold in their tree.
 * - Dropping the first entry moves `start`. The dead prefix is copied away
 *   once it is both longer than the live entries and `deadMin` or more,
 *   so a version retains at most max(live, `deadMin`) dead slots (and the
 *   jobs in them).
 * - Any other change copies the live entries exactly, or replaces a value
 *   in place in a transient run that made the arrays (`writer`, see
 *   `Edit`).
 * - A keys-only map's edge leaves have no values array (`values` null):
 *   every rule above is about the keys array, which alone says which
 *   slots are free.
 */
import { type Edit, owns } from "./Edit.js";
import {
  type Compare,
  entriesMax,
  lowerBound,
  type Values,
  valuesSlice,
  withInserted,
  withRemoved,
} from "./SortedArrays.js";

// `start` and `end` move in place only under the `edit` token; entries of
// the arrays are written once, except by the `writer` run.
export interface EdgeLeaf<K, V> {
  /**
   * Ascending from `start` to `end`. Slots past `end` are holes (free) or
   * the entries of versions that appended to these arrays after this one.
   */
  readonly keys: Array<K>;
  /** Beside `keys`, or null in a keys-only map. */
  readonly values: Values<V>;
  start: number;
  end: number;
  /** The run that may move this object's `start` and `end` in place. */
  readonly edit: Edit | undefined;
  /** The run that made the arrays: only it may rewrite their entries in place. */
  readonly writer: Edit | undefined;
}

/**
 * Dead slots before `start` that a version may keep without copying: below
 * it a drained leaf is not copied again and again for a few slots.
 */
const deadMin = 8;

/** An edge leaf over all of `keys` and `values` (no holes): fresh arrays the run `edit` made. */
export const edgeOf = <K, V>(
  keys: Array<K>,
  values: Values<V>,
  edit: Edit | undefined,
): EdgeLeaf<K, V> => ({ keys, values, start: 0, end: keys.length, edit, writer: edit });

/**
 * An edge leaf over a tree leaf's arrays, for the run `edit`; `writer` is
 * that run only when it made the leaf (else the arrays are older trees'
 * too and never written). Not `edgeOf` with a default: an absent writer
 * passed as `undefined` would take the default (found by the branching
 * property, 2026-12-04).
 */
export const edgeOverLeaf = <K, V>(
  keys: Array<K>,
  values: Values<V>,
  edit: Edit | undefined,
  writer: Edit | undefined,
): EdgeLeaf<K, V> => ({ keys, values, start: 0, end: keys.length, edit, writer });

/** Number of entries of the edge leaf. */
export const edgeSize = <K, V>(edge: EdgeLeaf<K, V>): number => edge.end - edge.start;

export const firstKeyOf = <K, V>(edge: EdgeLeaf<K, V>): K => edge.keys[edge.start] as K;

export const lastKeyOf = <K, V>(edge: EdgeLeaf<K, V>): K => edge.keys[edge.end - 1] as K;

/** The index (in the arrays) of the first entry >= `key`; `end` when none is. */
export const positionOf = <K, V>(edge: EdgeLeaf<K, V>, key: K, compare: Compare<K>): number =>
  lowerBound(edge.keys, key, compare, edge.start, edge.end);

/** Whether the entry at `at` (a `positionOf`) is `key`'s. */
export const holdsAt = <K, V>(
  edge: EdgeLeaf<K, V>,
  at: number,
  key: K,
  compare: Compare<K>,
): boolean => at < edge.end && compare(edge.keys[at] as K, key) === 0;

// Whether slot `end` of the arrays is free: no version wrote it yet.
const freeAt = <K, V>(edge: EdgeLeaf<K, V>, end: number): boolean =>
  end < edge.keys.length && !(end in edge.keys);

/** `edge`'s arrays from `start` to `end`: the same object moved when the run owns it, else a new view. */
const viewOf = <K, V>(
  edge: EdgeLeaf<K, V>,
  start: number,
  end: number,
  edit: Edit | undefined,
): EdgeLeaf<K, V> => {
  if (owns(edit, edge.edit)) {
    edge.start = start;
    edge.end = end;
    return edge;
  }
  const writer = owns(edit, edge.writer) ? edit : undefined;
  return { keys: edge.keys, values: edge.values, start, end, edit, writer };
};

/**
 * A tail of `size` entries in arrays of `capacity` slots: the first `size`
 * to be written by the caller, the rest holes (free). Allocated at their
 * capacity rather than pushed, so no slack beyond it. No values array
 * when `keysOnly`.
 */
const tailWithRoom = <K, V>(
  size: number,
  capacity: number,
  edit: Edit | undefined,
  keysOnly: boolean,
): EdgeLeaf<K, V> => {
  const keys = new Array<K>(capacity);
  const values = keysOnly ? null : new Array<V>(capacity);
  return { keys, values, start: 0, end: size, edit, writer: edit };
};

/**
 * The tail `edge` (fewer than `entriesMax` entries) with `key`, above all
 * of its keys, added last: written into slot `end` when it is free,
 * else its entries copied into arrays twice as large with the new one.
 */
export const tailWithAppended = <K, V>(
  edge: EdgeLeaf<K, V>,
  key: K,
  value: V,
  edit: Edit | undefined,
): EdgeLeaf<K, V> => {
  const { keys, values, start, end } = edge;
  if (freeAt(edge, end)) {
    keys[end] = key;
    if (values !== null) values[end] = value;
    return viewOf(edge, start, end + 1, edit);
  }
  const size = end - start + 1;
  const next = tailWithRoom<K, V>(size, Math.min(entriesMax, 2 * size), edit, values === null);
  for (let index = start; index < end; index++) next.keys[index - start] = keys[index] as K;
  next.keys[size - 1] = key;
  if (values !== null && next.values !== null) {
    for (let index = start; index < end; index++) {
      next.values[index - start] = values[index] as V;
    }
    next.values[size - 1] = value;
  }
  return next;
};

/**
 * `edge` with `key` bound to `value` at `at` (its `positionOf`; `found`
 * when the entry there is `key`'s). Not for an append to the tail, which
 * `tailWithAppended` shares. May hold one entry more than `entriesMax`.
 */
export const edgeWithAt = <K, V>(
  edge: EdgeLeaf<K, V>,
  at: number,
  found: boolean,
  key: K,
  value: V,
  edit: Edit | undefined,
): EdgeLeaf<K, V> => {
  const { keys, values, start, end } = edge;
  if (!found) {
    const copiedKeys = withInserted(keys, at, key, start, end);
    const copiedValues = values === null ? null : withInserted(values, at, value, start, end);
    return edgeOf(copiedKeys, copiedValues, edit);
  }
  if (owns(edit, edge.writer) && !(end in keys)) {
    // The run made the arrays, so it owns every view of them.
    keys[at] = key;
    if (values !== null) values[at] = value;
    return edge;
  }
  const copiedKeys = keys.slice(start, end);
  const copiedValues = valuesSlice(values, start, end);
  copiedKeys[at - start] = key;
  if (copiedValues !== null) copiedValues[at - start] = value;
  return edgeOf(copiedKeys, copiedValues, edit);
};

// Whether entries `start` to `end` of arrays leave too much dead before them.
const tooDead = (start: number, end: number): boolean => start >= deadMin && start > end - start;

/**
 * Whether the edge leaf is well formed, for tests: 1 to `entriesMax`
 * entries, ascending, none a hole, its dead prefix bounded; a values
 * array exactly when the map is not `keysOnly`.
 */
export const edgeIsValid = <K, V>(
  edge: EdgeLeaf<K, V>,
  compare: Compare<K>,
  keysOnly: boolean,
): boolean => {
  const { keys, values, start, end } = edge;
  const size = end - start;
  if (size < 1 || size > entriesMax || start < 0 || tooDead(start, end)) return false;
  if (end > keys.length || (values === null) !== keysOnly) return false;
  if (values !== null && values.length !== keys.length) return false;
  for (let index = start; index < end; index++) {
    if (!(index in keys) || (values !== null && !(index in values))) return false;
    if (index > start && compare(keys[index - 1] as K, keys[index] as K) >= 0) return false;
  }
  return true;
};

/** `edge` without its entry at `at`; null when none is left. */
export const edgeWithoutAt = <K, V>(
  edge: EdgeLeaf<K, V>,
  at: number,
  edit: Edit | undefined,
): EdgeLeaf<K, V> | null => {
  const { keys, values, start, end } = edge;
  if (end - start === 1) return null;
  if (at === start && !tooDead(start + 1, end)) return viewOf(edge, start + 1, end, edit);
  if (at === start) {
    // Too much dead: the live entries alone, so the dropped ones can go.
    return edgeOf(keys.slice(start + 1, end), valuesSlice(values, start + 1, end), edit);
  }
  const copiedValues = values === null ? null : withRemoved(values, at, start, end);
  return edgeOf(withRemoved(keys, at, start, end), copiedValues, edit);
};

/** A tail of `key` alone, with room for `capacity` entries (no values array when `keysOnly`). */
export const tailOf = <K, V>(
  key: K,
  value: V,
  capacity: number,
  edit: Edit | undefined,
  keysOnly: boolean,
): EdgeLeaf<K, V> => {
  const tail = tailWithRoom<K, V>(1, capacity, edit, keysOnly);
  tail.keys[0] = key;
  if (tail.values !== null) tail.values[0] = value;
  return tail;
};
