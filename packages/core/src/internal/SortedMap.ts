/**
 * A persistent (immutable) sorted map: a B+ tree of at most 32 entries per
 * node, with path copying.
 *
 * Every update returns a new map and copies only the nodes on the path to
 * the changed key (a leaf and its branches: three or four nodes for a
 * million entries), so an old map stays valid and unchanged for as long as
 * anyone holds it. Nodes carry the number of entries below them, which
 * gives `size` in O(1). The order is the comparator's; keys are never
 * compared by identity.
 *
 * Why a B+ tree and not a binary tree: the state keeps one entry per active
 * job in its claim, pending or executing index. A binary node is an object
 * of its own (80 bytes on 64-bit V8); a leaf holds its entries in two
 * arrays, 16 to 32 of them, about 21 to 30 bytes an entry (docs/core.md,
 * "Memory of an active job").
 *
 * A keys-only map (`SortedMap.keysOnly`, every value `null`: the job
 * indexes) keeps no values array in its leaves (`Values`): about 12 bytes
 * an entry instead of 21.5 (docs/core.md, "Keys-only job indexes").
 *
 * An update given an `Edit` token stamps the nodes it creates with it, and
 * changes nodes already stamped with the same token in place (a transient
 * run, see `Edit`): a run of updates then copies each path once rather than
 * once per update. Maps returned during a run share those nodes, so only the
 * last one is meant to be kept; maps made before the run are never changed.
 */
import {
  type EdgeLeaf,
  edgeIsValid,
  edgeOf,
  edgeOverLeaf,
  edgeSize,
  edgeWithAt,
  edgeWithoutAt,
  firstKeyOf,
  holdsAt,
  lastKeyOf,
  positionOf,
  tailOf,
  tailWithAppended,
} from "./EdgeLeaf.js";
import { Edit, owns } from "./Edit.js";
import {
  type Compare,
  entriesMax,
  insertAt,
  lowerBound,
  type Values,
  valuesSlice,
  withInserted,
  withRemoved,
} from "./SortedArrays.js";

export type { Compare } from "./SortedArrays.js";
/**
 * Slots of a new tail next to a tree (after a full tail went into it): a
 * map that grew a tree is being appended to, so room for a few entries
 * saves two copies (`tailWithAppended` doubles from there), and at most 7
 * free slots (112 bytes) stay with the map. 32 at once allocated ~20 bytes
 * less an insert but held 24 free slots in a map of 40 (2026-12-04).
 */
const tailRefillCapacity = 8;
/**
 * A keys-only map's one value: what every key maps to, held by the map
 * and by none of its leaves.
 */
interface Only<V> {
  readonly value: V;
}

const nullOnly: Only<null> = { value: null };

/**
 * What every version of a map shares: its order and, in a keys-only map,
 * its one value. One field of the map rather than two: a map object is
 * made by every update (8 bytes each).
 */
interface Order<K, V> {
  readonly compare: Compare<K>;
  readonly only: Only<V> | null;
}

/** Fewest entries of a node other than the root once a deletion settles it. */
const entriesMin = entriesMax / 2;

// Fields and arrays are written only by an update holding the node's
// `edit` token. One shape for both kinds keeps property reads monomorphic.
interface Leaf<K, V> {
  /** Ascending. */
  keys: Array<K>;
  /** Beside `keys`; null in a keys-only map. */
  values: Values<V>;
  children: null;
  size: number;
  readonly edit: Edit | undefined;
}

interface Branch<K, V> {
  /** The smallest key of each child. */
  keys: Array<K>;
  values: null;
  children: Array<Node<K, V>>;
  /** Entries of all the leaves below. */
  size: number;
  readonly edit: Edit | undefined;
}

type Node<K, V> = Leaf<K, V> | Branch<K, V>;

const leafOf = <K, V>(keys: Array<K>, values: Values<V>, edit: Edit | undefined): Leaf<K, V> => ({
  keys,
  values,
  children: null,
  size: keys.length,
  edit,
});

const sizeOfAll = <K, V>(children: ReadonlyArray<Node<K, V>>): number => {
  let size = 0;
  for (const child of children) size += child.size;
  return size;
};

const branchOf = <K, V>(children: Array<Node<K, V>>, edit: Edit | undefined): Branch<K, V> => ({
  keys: children.map(minKey),
  values: null,
  children,
  size: sizeOfAll(children),
  edit,
});

// A node never stays empty in a tree, so its first key exists; the cast
// only satisfies the checker under noUncheckedIndexedAccess.
const minKey = <K, V>(node: Node<K, V>): K => node.keys[0] as K;

/** The leaf itself when the run owns it, else a copy (arrays too) the run owns. */
const writableLeaf = <K, V>(node: Leaf<K, V>, edit: Edit | undefined): Leaf<K, V> =>
  owns(edit, node.edit)
    ? node
    : {
        keys: node.keys.slice(),
        values: node.values === null ? null : node.values.slice(),
        children: null,
        size: node.size,
        edit,
      };

/** The branch itself when the run owns it, else a copy (arrays too) the run owns. */
const writableBranch = <K, V>(node: Branch<K, V>, edit: Edit | undefined): Branch<K, V> =>
  owns(edit, node.edit)
    ? node
    : {
        keys: node.keys.slice(),
        values: null,
        children: node.children.slice(),
        size: node.size,
        edit,
      };

/** Numeric ascending order. */
export const compareNumbers: Compare<number> = (left, right) => left - right;

/** The child of a branch whose range holds `key`: the last whose smallest key is <= it, or the first. */
const childIndex = <K>(keys: ReadonlyArray<K>, key: K, compare: Compare<K>): number => {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(keys[middle] as K, key) <= 0) low = middle + 1;
    else high = middle;
  }
  return low === 0 ? 0 : low - 1;
};

/** What an update tells the level above: whether an entry came or went, and a new right sibling. */
interface Outcome<K, V> {
  changed: boolean;
  split: Node<K, V> | null;
  /**
   * The sibling holds only the new entry and the node is untouched (see
   * `appendsPastFull`). Not "the same node": one the run owns may have
   * been split in place.
   */
  appended: boolean;
}

/** Splits an overfull node the run owns in two halves; the right half goes to `outcome`. */
const splitIfFull = <K, V>(node: Node<K, V>, outcome: Outcome<K, V>, edit: Edit | undefined) => {
  if (node.keys.length <= entriesMax) return;
  const half = node.keys.length >>> 1;
  if (node.children === null) {
    const values = node.values === null ? null : node.values.splice(half);
    outcome.split = leafOf(node.keys.splice(half), values, edit);
    node.size = node.keys.length;
  } else {
    node.keys.splice(half);
    outcome.split = branchOf(node.children.splice(half), edit);
    node.size -= outcome.split.size;
  }
};

/**
 * Whether an entry added at `at` goes after the last of a full node on the
 * tree's right edge: then the node stays as it is (shared, not copied) and
 * the entry starts its right sibling. Ids and times arrive in ascending
 * order, so the indexes grow at their right edge: split in halves, every
 * node they left behind would stay half empty.
 */
const appendsPastFull = <K, V>(node: Node<K, V>, at: number, rightmost: boolean): boolean =>
  rightmost && at === node.keys.length && node.keys.length >= entriesMax;

/**
 * `leaf` with `key` bound to `value` at `at` (its lower bound there): in
 * place when the run owns it, else a copy exactly as long as it needs.
 */
const leafWithAt = <K, V>(
  leaf: Leaf<K, V>,
  at: number,
  found: boolean,
  key: K,
  value: V,
  edit: Edit | undefined,
): Leaf<K, V> => {
  const { values } = leaf;
  if (found) {
    const target = writableLeaf(leaf, edit);
    target.keys[at] = key;
    if (target.values !== null) target.values[at] = value;
    return target;
  }
  if (!owns(edit, leaf.edit)) {
    const copiedValues = values === null ? null : withInserted(values, at, value);
    return leafOf(withInserted(leaf.keys, at, key), copiedValues, edit);
  }
  insertAt(leaf.keys, at, key);
  if (values !== null) insertAt(values, at, value);
  leaf.size++;
  return leaf;
};

/** `leaf` without `key` (in place when the run owns it), or undefined when it lacks it. */
const leafWithout = <K, V>(
  leaf: Leaf<K, V>,
  key: K,
  compare: Compare<K>,
  edit: Edit | undefined,
): Leaf<K, V> | undefined => {
  const at = lowerBound(leaf.keys, key, compare);
  if (at === leaf.keys.length || compare(leaf.keys[at] as K, key) !== 0) return undefined;
  const { values } = leaf;
  if (!owns(edit, leaf.edit)) {
    return leafOf(
      withRemoved(leaf.keys, at),
      values === null ? null : withRemoved(values, at),
      edit,
    );
  }
  leaf.keys.splice(at, 1);
  if (values !== null) values.splice(at, 1);
  leaf.size--;
  return leaf;
};

const insertInLeaf = <K, V>(
  node: Leaf<K, V>,
  key: K,
  value: V,
  compare: Compare<K>,
  edit: Edit | undefined,
  outcome: Outcome<K, V>,
  rightmost: boolean,
): Node<K, V> => {
  const at = lowerBound(node.keys, key, compare);
  const found = at < node.keys.length && compare(node.keys[at] as K, key) === 0;
  if (!found) outcome.changed = true;
  if (!found && appendsPastFull(node, at, rightmost)) {
    outcome.split = leafOf([key], node.values === null ? null : [value], edit);
    outcome.appended = true;
    return node;
  }
  const next = leafWithAt(node, at, found, key, value, edit);
  splitIfFull(next, outcome, edit);
  return next;
};

const insert = <K, V>(
  node: Node<K, V>,
  key: K,
  value: V,
  compare: Compare<K>,
  edit: Edit | undefined,
  outcome: Outcome<K, V>,
  rightmost: boolean,
): Node<K, V> => {
  if (node.children === null) {
    return insertInLeaf(node, key, value, compare, edit, outcome, rightmost);
  }
  const at = childIndex(node.keys, key, compare);
  const child = node.children[at] as Node<K, V>;
  const last = at === node.children.length - 1;
  const next = insert(child, key, value, compare, edit, outcome, rightmost && last);
  const split = outcome.split;
  const appended = outcome.appended;
  outcome.split = null;
  outcome.appended = false;
  // A replacement inside a child the run owns changes nothing here (unless
  // it replaced the child's smallest key with another equal one).
  const unchanged = next === child && split === null && !outcome.changed;
  if (unchanged && node.keys[at] === minKey(next)) return node;
  if (split !== null && appended && appendsPastFull(node, at + 1, rightmost)) {
    // The child stayed as it was and the new sibling goes past a full
    // branch: this branch stays shared too, the sibling starts the next one.
    outcome.split = branchOf([split], edit);
    outcome.appended = true;
    return node;
  }
  if (split !== null && !owns(edit, node.edit)) {
    // A copy with the sibling in place, exactly as long as it needs (a split means an entry came).
    const children = withInserted(node.children, at + 1, split);
    children[at] = next;
    const keys = withInserted(node.keys, at + 1, minKey(split));
    keys[at] = minKey(next);
    const copy: Branch<K, V> = { keys, values: null, children, size: node.size + 1, edit };
    splitIfFull(copy, outcome, edit);
    return copy;
  }
  const target = writableBranch(node, edit);
  target.children[at] = next;
  target.keys[at] = minKey(next);
  if (outcome.changed) target.size++;
  if (split !== null) {
    insertAt(target.children, at + 1, split);
    insertAt(target.keys, at + 1, minKey(split));
  }
  splitIfFull(target, outcome, edit);
  return target;
};

/**
 * Settles the underfull child at `at` of a branch the run owns: merged with
 * a neighbour when both fit in one node, else their entries shared evenly.
 */
const rebalance = <K, V>(parent: Branch<K, V>, at: number, edit: Edit | undefined): void => {
  const left = at > 0 ? at - 1 : at;
  const first = parent.children[left] as Node<K, V>;
  const second = parent.children[left + 1] as Node<K, V>;
  const keys = first.keys.concat(second.keys);
  let nodes: Array<Node<K, V>>;
  if (first.children === null || second.children === null) {
    // Leaves of one map: both keys-only or neither.
    const values =
      first.values === null || second.values === null ? null : first.values.concat(second.values);
    if (keys.length <= entriesMax) nodes = [leafOf(keys, values, edit)];
    else {
      const half = keys.length >>> 1;
      nodes = [leafOf(keys.slice(0, half), valuesSlice(values, 0, half), edit)];
      nodes.push(leafOf(keys.slice(half), valuesSlice(values, half, keys.length), edit));
    }
  } else {
    const children = first.children.concat(second.children);
    if (children.length <= entriesMax) nodes = [branchOf(children, edit)];
    else {
      const half = children.length >>> 1;
      nodes = [branchOf(children.slice(0, half), edit), branchOf(children.slice(half), edit)];
    }
  }
  parent.children.splice(left, 2, ...nodes);
  parent.keys.splice(left, 2, ...nodes.map(minKey));
};

/** Where a node lies: on the tree's left edge, on its right edge (the root is on both). */
interface Edges {
  readonly left: boolean;
  readonly right: boolean;
}

const bothEdges: Edges = { left: true, right: true };
const noEdge: Edges = { left: false, right: false };
const leftEdge: Edges = { left: true, right: false };
const rightEdge: Edges = { left: false, right: true };

/** The edges of the child at `at` of a branch with `count` children lying on `edges`. */
const childEdges = (edges: Edges, at: number, count: number): Edges => {
  const left = edges.left && at === 0;
  const right = edges.right && at === count - 1;
  return left ? (right ? bothEdges : leftEdge) : right ? rightEdge : noEdge;
};

const remove = <K, V>(
  node: Node<K, V>,
  key: K,
  compare: Compare<K>,
  edit: Edit | undefined,
  outcome: Outcome<K, V>,
  edges: Edges,
): Node<K, V> => {
  if (node.children === null) {
    const next = leafWithout(node, key, compare, edit);
    if (next === undefined) return node;
    outcome.changed = true;
    return next;
  }
  const at = childIndex(node.keys, key, compare);
  const below = childEdges(edges, at, node.children.length);
  const next = remove(node.children[at] as Node<K, V>, key, compare, edit, outcome, below);
  if (!outcome.changed) return node;
  const target = writableBranch(node, edit);
  target.size--;
  if (next.keys.length === 0) {
    target.children.splice(at, 1);
    target.keys.splice(at, 1);
    return target;
  }
  target.children[at] = next;
  target.keys[at] = minKey(next);
  // A node on an edge may run low: a queue taken from its front (claims
  // in order) would otherwise rebuild its first two leaves every few removals.
  const onEdge = below.left || below.right;
  if (next.keys.length < entriesMin && !onEdge && target.children.length > 1) {
    rebalance(target, at, edit);
  }
  return target;
};

/** Nodes of one level over `items`: as full as allowed, the last two shared evenly if needed. */
const chunks = <T>(items: ReadonlyArray<T>): Array<Array<T>> => {
  const count = Math.ceil(items.length / entriesMax);
  const result: Array<Array<T>> = [];
  for (let index = 0; index < count; index++) {
    result.push(items.slice(index * entriesMax, (index + 1) * entriesMax));
  }
  const last = result[result.length - 1];
  const before = result[result.length - 2];
  if (last !== undefined && before !== undefined && last.length < entriesMin) {
    const both = before.concat(last);
    const half = both.length >>> 1;
    result.splice(result.length - 2, 2, both.slice(0, half), both.slice(half));
  }
  return result;
};

/** A tree of `keys` and their `values` (none: a keys-only tree). */
const build = <K, V>(
  keys: ReadonlyArray<K>,
  values: ReadonlyArray<V> | null,
): Node<K, V> | null => {
  const count = values === null ? keys.length : Math.min(keys.length, values.length);
  if (count === 0) return null;
  const keyChunks = chunks(keys.slice(0, count));
  const valueChunks = values === null ? null : chunks(values.slice(0, count));
  let level: Array<Node<K, V>> = keyChunks.map((chunk, index) =>
    leafOf(chunk, valueChunks === null ? null : (valueChunks[index] ?? []), undefined),
  );
  while (level.length > 1) level = chunks(level).map((children) => branchOf(children, undefined));
  return level[0] ?? null;
};

/**
 * A tree with `key` bound to `value` (the root itself when a run it owns
 * changed in place); a first leaf without values when `keysOnly`.
 */
const insertRoot = <K, V>(
  root: Node<K, V> | null,
  key: K,
  value: V,
  compare: Compare<K>,
  edit: Edit | undefined,
  keysOnly: boolean,
): Node<K, V> => {
  if (root === null) return leafOf([key], keysOnly ? null : [value], edit);
  const outcome: Outcome<K, V> = { changed: false, split: null, appended: false };
  const next = insert(root, key, value, compare, edit, outcome, true);
  return outcome.split === null ? next : branchOf([next, outcome.split], edit);
};

/** A tree without `key` (the same root when it is absent; null once empty). */
const removeRoot = <K, V>(
  root: Node<K, V>,
  key: K,
  compare: Compare<K>,
  edit: Edit | undefined,
): Node<K, V> | null => {
  const outcome: Outcome<K, V> = { changed: false, split: null, appended: false };
  let next: Node<K, V> | null = remove(root, key, compare, edit, outcome, bothEdges);
  if (!outcome.changed) return root;
  // A branch left with one child gives way to it; an empty leaf to nothing.
  while (next !== null && next.children !== null && next.children.length === 1) {
    next = next.children[0] ?? null;
  }
  return next !== null && next.keys.length === 0 ? null : next;
};

/** The tree's leftmost leaf. */
const firstLeaf = <K, V>(root: Node<K, V>): Leaf<K, V> => {
  let node = root;
  while (node.children !== null) node = node.children[0] as Node<K, V>;
  return node;
};

/** The tree's largest key. */
const maxKey = <K, V>(root: Node<K, V>): K => {
  let node = root;
  while (node.children !== null) node = node.children[node.children.length - 1] as Node<K, V>;
  return node.keys[node.keys.length - 1] as K;
};

const lastKey = <K, V>(leaf: Leaf<K, V>): K => leaf.keys[leaf.keys.length - 1] as K;

/**
 * `root` with the entries `from` to `to` of `keys` and `values` inserted,
 * as one run of its own (the path copied once). A fresh token, never the
 * caller's: the caller's run may own nodes that maps still hold as their
 * edge leaves. A keys-only map's entries all have its one value, `only`.
 */
const withEntries = <K, V>(
  root: Node<K, V> | null,
  keys: ReadonlyArray<K>,
  values: Values<V>,
  from: number,
  to: number,
  compare: Compare<K>,
  only: Only<V> | null,
): Node<K, V> | null => {
  const run = new Edit();
  let tree = root;
  for (let index = from; index < to; index++) {
    const value = values === null ? only?.value : values[index];
    tree = insertRoot(tree, keys[index] as K, value as V, compare, run, values === null);
  }
  return tree;
};

/** Where `appendRight` tells the level above of a node that starts a new right sibling. */
interface Grown<K, V> {
  split: Node<K, V> | null;
}

/**
 * The entries `from` to `to` of `keys` and `values` (ascending, at most
 * 32): a tail given to the tree. Arrays that are these entries exactly are
 * taken as they are; the caller guarantees that nobody writes them again.
 */
interface Entries<K, V> {
  readonly keys: Array<K>;
  readonly values: Values<V>;
  readonly from: number;
  readonly to: number;
}

/** A leaf of `entries` from `from` on: their very arrays when that is all of them. */
const leafOfPart = <K, V>(entries: Entries<K, V>, from: number): Leaf<K, V> => {
  const { keys, values, to } = entries;
  if (from === 0 && to === keys.length && (values === null || to === values.length)) {
    return leafOf(keys, values, undefined);
  }
  return leafOf(keys.slice(from, to), valuesSlice(values, from, to), undefined);
};

/**
 * `node` (on the tree's right edge) with `entries` (all above the tree's)
 * added: its last leaf filled to 32, the rest a new last leaf; a full
 * branch keeps its children and the new leaf starts its right sibling.
 * Every node copied exactly as long as it needs (no slack for later
 * pushes), so the nodes left behind the edge are full and exact; a whole
 * tail of 32 becomes a leaf without a copy.
 */
const appendRight = <K, V>(
  node: Node<K, V>,
  entries: Entries<K, V>,
  grown: Grown<K, V>,
): Node<K, V> => {
  if (node.children === null) {
    const { keys, values, from, to } = entries;
    const room = Math.max(0, entriesMax - node.keys.length);
    const cut = Math.min(from + room, to);
    if (cut < to) grown.split = leafOfPart(entries, cut);
    if (room === 0) return node;
    // Leaves of one map: both keys-only or neither.
    const filled =
      node.values === null || values === null ? null : node.values.concat(values.slice(from, cut));
    return leafOf(node.keys.concat(keys.slice(from, cut)), filled, undefined);
  }
  const at = node.children.length - 1;
  const child = node.children[at] as Node<K, V>;
  const next = appendRight(child, entries, grown);
  const split = grown.split;
  grown.split = null;
  const fits = split !== null && node.children.length < entriesMax;
  const children =
    fits && split !== null ? withInserted(node.children, at + 1, split) : node.children.slice();
  const branchKeys =
    fits && split !== null ? withInserted(node.keys, at + 1, minKey(split)) : node.keys.slice();
  children[at] = next;
  let size = node.size - child.size + next.size;
  if (fits && split !== null) size += split.size;
  // A full branch: the new node starts this one's right sibling.
  else if (split !== null) grown.split = branchOf([split], undefined);
  return { keys: branchKeys, values: null, children, size, edit: undefined };
};

/** `root` with `entries` added at its right edge (see `appendRight`): copies, never the arrays. */
const withAppended = <K, V>(root: Node<K, V> | null, entries: Entries<K, V>): Node<K, V> => {
  if (root === null) return leafOfPart(entries, entries.from);
  const grown: Grown<K, V> = { split: null };
  const next = appendRight(root, entries, grown);
  return grown.split === null ? next : branchOf([next, grown.split], undefined);
};

/**
 * `node` (a branch on the tree's left edge) without its first leaf; null
 * when nothing is left. Nodes on the left edge may hold a single entry,
 * so nothing is rebalanced.
 */
const withoutFirstLeaf = <K, V>(node: Node<K, V>): Node<K, V> | null => {
  if (node.children === null) return null;
  const child = node.children[0] as Node<K, V>;
  const next = withoutFirstLeaf(child);
  if (next === null && node.children.length === 1) return null;
  const removed = child.size - (next?.size ?? 0);
  const children = next === null ? withRemoved(node.children, 0) : node.children.slice();
  const keys = next === null ? withRemoved(node.keys, 0) : node.keys.slice();
  if (next !== null) {
    children[0] = next;
    keys[0] = minKey(next);
  }
  return { keys, values: null, children, size: node.size - removed, edit: undefined };
};

/** `root` without its first leaf, a branch with one child giving way to it. */
const withoutFirst = <K, V>(root: Node<K, V>): Node<K, V> | null => {
  let next = withoutFirstLeaf(root);
  while (next !== null && next.children !== null && next.children.length === 1) {
    next = next.children[0] ?? null;
  }
  return next;
};

/**
 * An ascending iterator over the entries with key >= a lower bound, across
 * the map's head leaf, tree and tail leaf in turn.
 */
class Cursor<K, V> implements IterableIterator<readonly [K, V]> {
  // The path from the tree's root: each node and the index of the entry next read in it.
  private readonly nodes: Array<Node<K, V>> = [];
  private readonly indexes: Array<number> = [];
  // The edge leaf being read (the path is empty meanwhile), its next entry and its end.
  private edge: EdgeLeaf<K, V> | null = null;
  private edgeAt = 0;
  private edgeEnd = 0;
  // The next part to enter: 0 the head, 1 the tree, 2 the tail, 3 none.
  private part = 0;
  /** The key and value the last `advance` found. */
  key: K | undefined = undefined;
  value: V | undefined = undefined;

  constructor(
    private readonly head: EdgeLeaf<K, V> | null,
    private readonly root: Node<K, V> | null,
    private readonly tail: EdgeLeaf<K, V> | null,
    private readonly compare: Compare<K>,
    private readonly from: K | undefined,
    // A keys-only map's one value (its leaves hold none).
    private readonly only: V | undefined,
  ) {}

  /** Moves to the next entry (into `key` and `value`); false when there is none. */
  advance(): boolean {
    for (;;) {
      const edge = this.edge;
      if (edge !== null) {
        const at = this.edgeAt;
        if (at < this.edgeEnd) {
          this.key = edge.keys[at];
          this.value = edge.values === null ? this.only : edge.values[at];
          this.edgeAt = at + 1;
          return true;
        }
        this.edge = null;
      }
      if (this.nodes.length > 0 && this.step()) return true;
      if (this.part > 2) return false;
      const part = this.part++;
      if (part === 1) this.descend(this.root);
      else this.enter(part === 0 ? this.head : this.tail);
    }
  }

  // The first entry >= `from` of an edge leaf.
  private enter(edge: EdgeLeaf<K, V> | null): void {
    if (edge === null) return;
    this.edge = edge;
    this.edgeAt = this.from === undefined ? edge.start : positionOf(edge, this.from, this.compare);
    this.edgeEnd = edge.end;
  }

  // The path to the first entry >= `from` under `root`.
  private descend(root: Node<K, V> | null): void {
    const { compare, from } = this;
    let node = root;
    while (node !== null) {
      this.nodes.push(node);
      if (node.children === null) {
        this.indexes.push(from === undefined ? 0 : lowerBound(node.keys, from, compare));
        node = null;
      } else {
        const at = from === undefined ? 0 : childIndex(node.keys, from, compare);
        this.indexes.push(at);
        node = node.children[at] ?? null;
      }
    }
  }

  // The next entry of the current part; false (the path emptied) when it has none left.
  private step(): boolean {
    let depth = this.nodes.length - 1;
    // Climb while the node at `depth` is exhausted.
    while (depth >= 0) {
      const node = this.nodes[depth] as Node<K, V>;
      const at = this.indexes[depth] as number;
      if (at < node.keys.length) break;
      depth--;
      if (depth >= 0) this.indexes[depth] = (this.indexes[depth] as number) + 1;
    }
    if (depth < 0) {
      this.nodes.length = 0;
      this.indexes.length = 0;
      return false;
    }
    // Descend to the leftmost leaf under the current child.
    while (depth < this.nodes.length - 1) {
      const parent = this.nodes[depth] as Branch<K, V>;
      depth++;
      this.nodes[depth] = parent.children[this.indexes[depth - 1] as number] as Node<K, V>;
      this.indexes[depth] = 0;
    }
    const leaf = this.nodes[depth] as Leaf<K, V>;
    const at = this.indexes[depth] as number;
    this.key = leaf.keys[at];
    this.value = leaf.values === null ? this.only : leaf.values[at];
    this.indexes[depth] = at + 1;
    return true;
  }

  next(): IteratorResult<readonly [K, V]> {
    return this.advance()
      ? { done: false, value: [this.key as K, this.value as V] }
      : { done: true, value: undefined };
  }

  [Symbol.iterator](): IterableIterator<readonly [K, V]> {
    return this;
  }
}

/**
 * A persistent sorted map; every "update" returns a new map.
 *
 * Its two edge leaves live outside the tree (`head`: keys below all
 * others; `tail`: keys above all others). Ids and times arrive ascending
 * and queues are taken from their front, so most updates fall on an edge:
 * there they touch one leaf, not the leaf and every branch above it (the
 * path copy cost 1.3–1.5 KB an update at 30,000 entries), and the usual
 * ones (an append to the tail, a removal of the head's first) copy no
 * entries at all: versions share the edges' arrays (`EdgeLeaf`). A tail
 * past 32 entries gives its first 32 to the tree as a whole leaf
 * (`withAppended`, a copy); a removal in the tree's first leaf while there
 * is no head takes that leaf out as the head (`withoutFirst`, its arrays
 * shared with the trees that hold it); a head past 32 gives its upper
 * half to the tree.
 */
export class SortedMap<K, V> {
  private constructor(
    // `only` set in a keys-only map (every leaf's `values` null).
    private readonly order: Order<K, V>,
    private readonly root: Node<K, V> | null,
    // Never empty when present.
    private readonly head: EdgeLeaf<K, V> | null,
    private readonly tail: EdgeLeaf<K, V> | null,
  ) {}

  /** The empty map ordered by `compare`. */
  static empty<K, V>(compare: Compare<K>): SortedMap<K, V> {
    return new SortedMap<K, V>({ compare, only: null }, null, null, null);
  }

  /**
   * The empty keys-only map ordered by `compare`: every key maps to `null`
   * and its leaves keep their keys alone (a set, with a map's interface;
   * the state's job indexes). It answers every read as a map of `null`s
   * does.
   */
  static keysOnly<K>(compare: Compare<K>): SortedMap<K, null> {
    return new SortedMap<K, null>({ compare, only: nullOnly }, null, null, null);
  }

  /** A keys-only map (`keysOnly`) built in O(n) from keys already strictly ascending by `compare`. */
  static fromSortedKeys<K>(compare: Compare<K>, keys: ReadonlyArray<K>): SortedMap<K, null> {
    const order = { compare, only: nullOnly };
    return new SortedMap<K, null>(order, build<K, null>(keys, null), null, null);
  }

  /**
   * Builds a map in O(n) from keys already strictly ascending by `compare`,
   * with `values[i]` for `keys[i]`. The caller guarantees the order.
   */
  static fromSorted<K, V>(
    compare: Compare<K>,
    keys: ReadonlyArray<K>,
    values: ReadonlyArray<V>,
  ): SortedMap<K, V> {
    return new SortedMap<K, V>({ compare, only: null }, build(keys, values), null, null);
  }

  /** True for a keys-only map (`keysOnly`, `fromSortedKeys`): its leaves hold no values. */
  isKeysOnly(): boolean {
    return this.order.only !== null;
  }

  /** Number of entries, O(1). */
  get size(): number {
    const { head, root, tail } = this;
    return (
      (head === null ? 0 : edgeSize(head)) +
      (root?.size ?? 0) +
      (tail === null ? 0 : edgeSize(tail))
    );
  }

  // The edge leaf holding `key`, or that would; null when the tree does.
  private onEdge(key: K): EdgeLeaf<K, V> | null {
    const { head, tail } = this;
    const { compare } = this.order;
    if (head !== null && compare(key, lastKeyOf(head)) <= 0) return head;
    if (tail !== null && compare(key, firstKeyOf(tail)) >= 0) return tail;
    return null;
  }

  // The tree's leaf whose range holds `key`.
  private treeLeafOf(key: K): Leaf<K, V> | null {
    let node = this.root;
    while (node !== null && node.children !== null) {
      node = node.children[childIndex(node.keys, key, this.order.compare)] ?? null;
    }
    return node;
  }

  /** The value at `key`, or undefined. */
  get(key: K): V | undefined {
    const { compare } = this.order;
    const edge = this.onEdge(key);
    if (edge !== null) {
      const at = positionOf(edge, key, compare);
      return holdsAt(edge, at, key, compare) ? this.valueIn(edge.values, at) : undefined;
    }
    const leaf = this.treeLeafOf(key);
    if (leaf === null) return undefined;
    const at = lowerBound(leaf.keys, key, compare);
    return at < leaf.keys.length && compare(leaf.keys[at] as K, key) === 0
      ? this.valueIn(leaf.values, at)
      : undefined;
  }

  // The value at `at` of a leaf's values; the map's one value when it is keys-only.
  private valueIn(values: Values<V>, at: number): V | undefined {
    return values === null ? this.order.only?.value : values[at];
  }

  /** True when `key` is present. */
  has(key: K): boolean {
    const { compare } = this.order;
    const edge = this.onEdge(key);
    if (edge !== null) return holdsAt(edge, positionOf(edge, key, compare), key, compare);
    const leaf = this.treeLeafOf(key);
    if (leaf === null) return false;
    const at = lowerBound(leaf.keys, key, compare);
    return at < leaf.keys.length && compare(leaf.keys[at] as K, key) === 0;
  }

  /**
   * A map with `key` bound to `value` (added or replaced). With `edit`,
   * nodes of that run are updated in place (see `Edit`).
   */
  set(key: K, value: V, edit?: Edit): SortedMap<K, V> {
    const { root, head, tail } = this;
    const { compare, only } = this.order;
    if (head !== null && compare(key, lastKeyOf(head)) <= 0) {
      const at = positionOf(head, key, compare);
      const next = edgeWithAt(head, at, holdsAt(head, at, key, compare), key, value, edit);
      if (edgeSize(next) <= entriesMax) return this.with(root, next, tail);
      // Past full: its upper half goes into the tree (below every key there).
      const { keys, values } = next;
      const half = next.start + (edgeSize(next) >>> 1);
      const kept = edgeOf(
        keys.slice(next.start, half),
        valuesSlice(values, next.start, half),
        edit,
      );
      const tree = withEntries(root, keys, values, half, next.end, compare, only);
      return this.with(tree, kept, tail);
    }
    const intoTail =
      (tail !== null && compare(key, firstKeyOf(tail)) >= 0) ||
      root === null ||
      compare(key, maxKey(root)) > 0;
    const keysOnly = only !== null;
    if (!intoTail) {
      return this.with(insertRoot(root, key, value, compare, edit, keysOnly), head, tail);
    }
    if (tail === null) {
      const capacity = root === null ? 1 : tailRefillCapacity;
      return this.with(root, head, tailOf(key, value, capacity, edit, keysOnly));
    }
    return this.setInTail(tail, key, value, edit);
  }

  // `set` of a key that goes into the tail (present).
  private setInTail(
    tail: EdgeLeaf<K, V>,
    key: K,
    value: V,
    edit: Edit | undefined,
  ): SortedMap<K, V> {
    const { root, head } = this;
    const { compare, only } = this.order;
    const at = positionOf(tail, key, compare);
    const appends = at === tail.end;
    if (appends && edgeSize(tail) < entriesMax) {
      return this.with(root, head, tailWithAppended(tail, key, value, edit));
    }
    if (appends) {
      // Full: its 32 entries become the tree's last leaf (its very arrays:
      // none free, nobody writes them again), the new one the tail.
      const { keys, values } = tail;
      const whole = { keys, values, from: tail.start, to: tail.end };
      const refill = tailOf(key, value, tailRefillCapacity, edit, only !== null);
      return this.with(withAppended(root, whole), head, refill);
    }
    const next = edgeWithAt(tail, at, holdsAt(tail, at, key, compare), key, value, edit);
    if (edgeSize(next) <= entriesMax) return this.with(root, head, next);
    // Past full: its first 32 entries become the tree's last leaf, whole.
    const { keys, values } = next;
    const cut = next.start + entriesMax;
    const rest = edgeOf(keys.slice(cut, next.end), valuesSlice(values, cut, next.end), edit);
    const whole = { keys, values, from: next.start, to: cut };
    return this.with(withAppended(root, whole), head, rest);
  }

  /** A map without `key` (the same map when it is absent); `edit` as for `set`. */
  delete(key: K, edit?: Edit): SortedMap<K, V> {
    const { root, head, tail } = this;
    const { compare } = this.order;
    const edge = this.onEdge(key);
    if (edge !== null) {
      const at = positionOf(edge, key, compare);
      if (!holdsAt(edge, at, key, compare)) return this;
      const left = edgeWithoutAt(edge, at, edit);
      return edge === head ? this.with(root, left, tail) : this.with(root, head, left);
    }
    if (root === null) return this;
    const first = firstLeaf(root);
    if (head === null && compare(key, lastKey(first)) <= 0) {
      // The tree's first leaf becomes the head: the removals after this
      // one (a queue taken from its front) move the head's start alone.
      const at = lowerBound(first.keys, key, compare);
      if (at === first.keys.length || compare(first.keys[at] as K, key) !== 0) return this;
      // The tree first: a run that owns `first` may change its arrays in place.
      const tree = withoutFirst(root);
      const writer = owns(edit, first.edit) ? edit : undefined;
      const taken = edgeOverLeaf(first.keys, first.values, edit, writer);
      return this.with(tree, edgeWithoutAt(taken, at, edit), tail);
    }
    const next = removeRoot(root, key, compare, edit);
    return next === root ? this : this.with(next, head, tail);
  }

  // This map when nothing changed (a run's update in place), else a new one.
  private with(
    root: Node<K, V> | null,
    head: EdgeLeaf<K, V> | null,
    tail: EdgeLeaf<K, V> | null,
  ): SortedMap<K, V> {
    return root === this.root && head === this.head && tail === this.tail
      ? this
      : new SortedMap(this.order, root, head, tail);
  }

  /** The smallest entry, or undefined when empty. */
  first(): readonly [K, V] | undefined {
    const { head, root, tail } = this;
    const edge = head ?? (root === null ? tail : null);
    if (edge !== null) return [firstKeyOf(edge), this.valueIn(edge.values, edge.start) as V];
    if (root === null) return undefined;
    const leaf = firstLeaf(root);
    return [leaf.keys[0] as K, this.valueIn(leaf.values, 0) as V];
  }

  private cursor(from: K | undefined): Cursor<K, V> {
    const { head, root, tail } = this;
    const { compare, only } = this.order;
    return new Cursor(head, root, tail, compare, from, only?.value);
  }

  /** Ascending entries, starting at the first key >= `from` when given. */
  entries(from?: K): IterableIterator<readonly [K, V]> {
    return this.cursor(from);
  }

  /** Ascending values. */
  *values(): IterableIterator<V> {
    const cursor = this.cursor(undefined);
    while (cursor.advance()) yield cursor.value as V;
  }

  /** Ascending keys. */
  *keys(): IterableIterator<K> {
    const cursor = this.cursor(undefined);
    while (cursor.advance()) yield cursor.key as K;
  }

  /**
   * Calls `visit` on ascending values until it returns false; a cheaper
   * loop than the iterators for hot paths.
   */
  forEachWhile(visit: (value: V, key: K) => boolean, from?: K): void {
    const cursor = this.cursor(from);
    while (cursor.advance()) {
      if (!visit(cursor.value as V, cursor.key as K)) return;
    }
  }

  /** The number of entries of each leaf, left to right (head, tree, tail): the fill, for tests. */
  leafSizes(): Array<number> {
    const sizes: Array<number> = [];
    const visit = (node: Node<K, V> | null): void => {
      if (node === null) return;
      if (node.children === null) sizes.push(node.keys.length);
      else for (const child of node.children) visit(child);
    };
    if (this.head !== null) sizes.push(edgeSize(this.head));
    visit(this.root);
    if (this.tail !== null) sizes.push(edgeSize(this.tail));
    return sizes;
  }

  /**
   * Checks the invariants, for tests: keys ascending across the head, the
   * tree's leaves and the tail; edge leaves of 1 to 32 entries within their
   * arrays, their dead prefix bounded (`edgeIsValid`); in the
   * tree, a branch's keys the smallest of its children, sizes the sums
   * below, every leaf at the same depth, every node off the tree's edges at
   * least half full (one on an edge at least one entry: `appendsPastFull`,
   * `remove`), none beyond 32 entries, a root branch with two children or
   * more; a values array in every leaf exactly when the map is not keys-only.
   */
  isValid(): boolean {
    const { head, tail } = this;
    const { compare, only } = this.order;
    let previous: K | undefined;
    const below = (key: K): boolean => previous === undefined || compare(previous, key) < 0;
    const keysOnly = only !== null;
    const ascending = (leaf: Leaf<K, V>): boolean => {
      for (const key of leaf.keys) {
        if (!below(key)) return false;
        previous = key;
      }
      const { values } = leaf;
      const fits = values === null ? keysOnly : !keysOnly && values.length === leaf.keys.length;
      return fits && leaf.size === leaf.keys.length;
    };
    if (head !== null && !edgeIsValid(head, compare, keysOnly)) return false;
    if (tail !== null && !edgeIsValid(tail, compare, keysOnly)) return false;
    if (head !== null) previous = lastKeyOf(head);
    if (!this.treeIsValid(ascending)) return false;
    return tail === null || below(firstKeyOf(tail));
  }

  private treeIsValid(ascending: (leaf: Leaf<K, V>) => boolean): boolean {
    const root = this.root;
    if (root === null) return true;
    if (root.children !== null && root.children.length < 2) return false;
    let leafDepth = -1;
    const check = (node: Node<K, V>, depth: number, edges: Edges): boolean => {
      const fewest = edges.left || edges.right ? 1 : entriesMin;
      if (node.keys.length < fewest || node.keys.length > entriesMax) return false;
      if (node.children === null) {
        if (leafDepth === -1) leafDepth = depth;
        return depth === leafDepth && ascending(node);
      }
      if (node.children.length !== node.keys.length) return false;
      if (node.size !== sizeOfAll(node.children)) return false;
      return node.children.every(
        (child, index) =>
          this.order.compare(minKey(child), node.keys[index] as K) === 0 &&
          check(child, depth + 1, childEdges(edges, index, node.children.length)),
      );
    };
    return check(root, 0, bothEdges);
  }
}

/** String order by UTF-16 code units (deterministic; used for ids and queue names). */
export const compareStrings: Compare<string> = (left, right) =>
  left < right ? -1 : left > right ? 1 : 0;
