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
 * - Adding after the last entry of the tail pushes onto the shared arrays
 *   when this version's `end` is where they end (no other version pushed
 *   past it); older versions keep seeing only their prefix. Else (a
 *   branching history: an older version appended to again) the entries
 *   are copied. Only the tail pushes: the head's arrays may be a leaf that
 *   older versions still hold in their tree, whose length is its size.
 * - Dropping the first entry moves `start`. The dead prefix is copied away
 *   once it is both longer than the live entries and `deadMin` or more,
 *   so a version retains at most max(live, `deadMin`) dead slots (and the
 *   jobs in them).
 * - Any other change copies the live entries exactly, or rewrites them in
 *   place in a transient run that made the arrays (`writer`, see `Edit`)
 *   when nobody pushed past this version's end.
 */
import { type Edit, owns } from "./Edit.js";
import {
  type Compare,
  entriesMax,
  insertAt,
  lowerBound,
  withInserted,
  withRemoved,
} from "./SortedArrays.js";

// `keys`, `values`, `start` and `end` change in place only under the `edit`
// or `writer` token that allows it (see the fields).
export interface EdgeLeaf<K, V> {
  /** Ascending from `start` to `end`; other versions may own entries past `end`. */
  keys: Array<K>;
  values: Array<V>;
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

/** An edge leaf over all of `keys` and `values` (fresh arrays the run `edit` made). */
export const edgeOf = <K, V>(
  keys: Array<K>,
  values: Array<V>,
  edit: Edit | undefined,
): EdgeLeaf<K, V> => ({ keys, values, start: 0, end: keys.length, edit, writer: edit });

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

// True when no other version pushed past this one's entries.
const atArraysEnd = <K, V>(edge: EdgeLeaf<K, V>): boolean =>
  edge.end === edge.keys.length && edge.end === edge.values.length;

// Whether the run may rewrite the arrays' entries in place: it made them
// (so it also owns the view) and nobody pushed past this version's end.
const rewritable = <K, V>(edge: EdgeLeaf<K, V>, edit: Edit | undefined): boolean =>
  owns(edit, edge.writer) && atArraysEnd(edge);

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
 * The tail `edge` (fewer than `entriesMax` entries) with `key`, above all
 * of its keys, added last: pushed onto the shared arrays when they end
 * where this version does, else its entries copied with the new one.
 */
export const tailWithAppended = <K, V>(
  edge: EdgeLeaf<K, V>,
  key: K,
  value: V,
  edit: Edit | undefined,
): EdgeLeaf<K, V> => {
  const { keys, values, start, end } = edge;
  if (!atArraysEnd(edge)) {
    return edgeOf(
      withInserted(keys, end, key, start, end),
      withInserted(values, end, value, start, end),
      edit,
    );
  }
  keys.push(key);
  values.push(value);
  return viewOf(edge, start, end + 1, edit);
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
  if (rewritable(edge, edit)) {
    if (found) {
      keys[at] = key;
      values[at] = value;
      return edge;
    }
    insertAt(keys, at, key);
    insertAt(values, at, value);
    edge.end++;
    return edge;
  }
  if (!found) {
    const copiedKeys = withInserted(keys, at, key, start, end);
    return edgeOf(copiedKeys, withInserted(values, at, value, start, end), edit);
  }
  const copiedKeys = keys.slice(start, end);
  const copiedValues = values.slice(start, end);
  copiedKeys[at - start] = key;
  copiedValues[at - start] = value;
  return edgeOf(copiedKeys, copiedValues, edit);
};

// Whether entries `start` to `end` of arrays leave too much dead before them.
const tooDead = (start: number, end: number): boolean => start >= deadMin && start > end - start;

/**
 * Whether the edge leaf is well formed, for tests: 1 to `entriesMax`
 * entries, ascending, within its arrays, its dead prefix bounded.
 */
export const edgeIsValid = <K, V>(edge: EdgeLeaf<K, V>, compare: Compare<K>): boolean => {
  const { keys, start, end } = edge;
  const size = end - start;
  if (size < 1 || size > entriesMax || start < 0 || tooDead(start, end)) return false;
  if (end > keys.length || end > edge.values.length) return false;
  for (let index = start + 1; index < end; index++) {
    if (compare(keys[index - 1] as K, keys[index] as K) >= 0) return false;
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
    return edgeOf(keys.slice(start + 1, end), values.slice(start + 1, end), edit);
  }
  if (rewritable(edge, edit) && !tooDead(start, end - 1)) {
    keys.splice(at, 1);
    values.splice(at, 1);
    edge.end--;
    return edge;
  }
  return edgeOf(withRemoved(keys, at, start, end), withRemoved(values, at, start, end), edit);
};
