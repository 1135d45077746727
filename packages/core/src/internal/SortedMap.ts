/**
 * A persistent (immutable) sorted map: an AVL tree with path copying.
 *
 * Every update returns a new map and copies only the O(log n) nodes on the
 * path to the changed key, so an old map stays valid and unchanged for as
 * long as anyone holds it. Nodes also carry their subtree size, which gives
 * `size` in O(1). The order is the comparator's; keys are never compared by
 * identity.
 *
 * An update given an `Edit` token stamps the nodes it creates with it, and
 * changes nodes already stamped with the same token in place (a transient
 * run, see `Edit`): a run of updates then copies each path once rather than
 * once per update. Maps returned during a run share those nodes, so only the
 * last one is meant to be kept; maps made before the run are never changed.
 */
import { type Edit, owns } from "./Edit.js";

/** A total order: negative, zero or positive like `Array.prototype.sort`. */
export type Compare<K> = (left: K, right: K) => number;

// Fields are written only by an update holding the node's `edit` token.
interface Node<K, V> {
  key: K;
  value: V;
  left: Node<K, V> | null;
  right: Node<K, V> | null;
  height: number;
  size: number;
  readonly edit: Edit | undefined;
}

const heightOf = <K, V>(node: Node<K, V> | null): number => (node === null ? 0 : node.height);
const sizeOf = <K, V>(node: Node<K, V> | null): number => (node === null ? 0 : node.size);

const make = <K, V>(
  key: K,
  value: V,
  left: Node<K, V> | null,
  right: Node<K, V> | null,
  edit: Edit | undefined,
): Node<K, V> => {
  const leftHeight = heightOf(left);
  const rightHeight = heightOf(right);
  return {
    key,
    value,
    left,
    right,
    height: Math.max(leftHeight, rightHeight) + 1,
    size: sizeOf(left) + sizeOf(right) + 1,
    edit,
  };
};

const owned = <K, V>(node: Node<K, V>, edit: Edit | undefined): boolean => owns(edit, node.edit);

// Rebuilds a node whose children differ in height by at most 2, restoring
// the AVL invariant with one or two rotations.
const balance = <K, V>(
  key: K,
  value: V,
  left: Node<K, V> | null,
  right: Node<K, V> | null,
  edit: Edit | undefined,
): Node<K, V> => {
  const leftHeight = heightOf(left);
  const rightHeight = heightOf(right);
  if (leftHeight > rightHeight + 1 && left !== null) {
    if (heightOf(left.left) >= heightOf(left.right)) {
      return make(left.key, left.value, left.left, make(key, value, left.right, right, edit), edit);
    }
    const pivot = left.right;
    if (pivot !== null) {
      return make(
        pivot.key,
        pivot.value,
        make(left.key, left.value, left.left, pivot.left, edit),
        make(key, value, pivot.right, right, edit),
        edit,
      );
    }
  }
  if (rightHeight > leftHeight + 1 && right !== null) {
    if (heightOf(right.right) >= heightOf(right.left)) {
      return make(
        right.key,
        right.value,
        make(key, value, left, right.left, edit),
        right.right,
        edit,
      );
    }
    const pivot = right.left;
    if (pivot !== null) {
      return make(
        pivot.key,
        pivot.value,
        make(key, value, left, pivot.left, edit),
        make(right.key, right.value, pivot.right, right.right, edit),
        edit,
      );
    }
  }
  return make(key, value, left, right, edit);
};

// `node` with new children: changed in place when the run owns it and no
// rotation is needed, else rebuilt (and rebalanced) as a new node.
const rebuild = <K, V>(
  node: Node<K, V>,
  left: Node<K, V> | null,
  right: Node<K, V> | null,
  edit: Edit | undefined,
): Node<K, V> => {
  const leftHeight = heightOf(left);
  const rightHeight = heightOf(right);
  if (owned(node, edit) && Math.abs(leftHeight - rightHeight) <= 1) {
    node.left = left;
    node.right = right;
    node.height = Math.max(leftHeight, rightHeight) + 1;
    node.size = sizeOf(left) + sizeOf(right) + 1;
    return node;
  }
  return balance(node.key, node.value, left, right, edit);
};

const insert = <K, V>(
  node: Node<K, V> | null,
  key: K,
  value: V,
  compare: Compare<K>,
  edit: Edit | undefined,
): Node<K, V> => {
  if (node === null) return make(key, value, null, null, edit);
  const order = compare(key, node.key);
  if (order < 0)
    return rebuild(node, insert(node.left, key, value, compare, edit), node.right, edit);
  if (order > 0)
    return rebuild(node, node.left, insert(node.right, key, value, compare, edit), edit);
  if (owned(node, edit)) {
    node.key = key;
    node.value = value;
    return node;
  }
  return make(key, value, node.left, node.right, edit);
};

const removeMin = <K, V>(node: Node<K, V>, edit: Edit | undefined): Node<K, V> | null => {
  if (node.left === null) return node.right;
  return rebuild(node, removeMin(node.left, edit), node.right, edit);
};

const minNode = <K, V>(node: Node<K, V>): Node<K, V> => {
  let current = node;
  while (current.left !== null) current = current.left;
  return current;
};

const remove = <K, V>(
  node: Node<K, V> | null,
  key: K,
  compare: Compare<K>,
  edit: Edit | undefined,
): Node<K, V> | null => {
  if (node === null) return null;
  const order = compare(key, node.key);
  // The size tells whether the key was found: a child changed in place is
  // the same object, so identity cannot.
  if (order < 0) {
    const before = sizeOf(node.left);
    const left = remove(node.left, key, compare, edit);
    return sizeOf(left) === before ? node : rebuild(node, left, node.right, edit);
  }
  if (order > 0) {
    const before = sizeOf(node.right);
    const right = remove(node.right, key, compare, edit);
    return sizeOf(right) === before ? node : rebuild(node, node.left, right, edit);
  }
  if (node.left === null) return node.right;
  if (node.right === null) return node.left;
  const successor = minNode(node.right);
  return balance(successor.key, successor.value, node.left, removeMin(node.right, edit), edit);
};

const build = <K, V>(
  keys: ReadonlyArray<K>,
  values: ReadonlyArray<V>,
  from: number,
  to: number,
): Node<K, V> | null => {
  if (from >= to) return null;
  const middle = (from + to) >>> 1;
  const key = keys[middle];
  const value = values[middle];
  // Indexes are in bounds by construction; the guard only satisfies the
  // checker under noUncheckedIndexedAccess.
  if (key === undefined || value === undefined) return null;
  return make(
    key,
    value,
    build(keys, values, from, middle),
    build(keys, values, middle + 1, to),
    undefined,
  );
};

/** An ascending iterator over the entries with key >= a lower bound. */
class Cursor<K, V> implements IterableIterator<readonly [K, V]> {
  private readonly stack: Array<Node<K, V>> = [];

  constructor(root: Node<K, V> | null, compare: Compare<K>, from: K | undefined) {
    let node = root;
    while (node !== null) {
      if (from !== undefined && compare(node.key, from) < 0) {
        node = node.right;
      } else {
        this.stack.push(node);
        node = node.left;
      }
    }
  }

  /** The next entry's node without consuming it. */
  peek(): Node<K, V> | undefined {
    return this.stack[this.stack.length - 1];
  }

  next(): IteratorResult<readonly [K, V]> {
    const node = this.advance();
    return node === undefined
      ? { done: true, value: undefined }
      : { done: false, value: [node.key, node.value] };
  }

  advance(): Node<K, V> | undefined {
    const node = this.stack.pop();
    if (node === undefined) return undefined;
    let child = node.right;
    while (child !== null) {
      this.stack.push(child);
      child = child.left;
    }
    return node;
  }

  [Symbol.iterator](): IterableIterator<readonly [K, V]> {
    return this;
  }
}

/** A persistent sorted map; every "update" returns a new map. */
export class SortedMap<K, V> {
  private constructor(
    private readonly compare: Compare<K>,
    private readonly root: Node<K, V> | null,
  ) {}

  /** The empty map ordered by `compare`. */
  static empty<K, V>(compare: Compare<K>): SortedMap<K, V> {
    return new SortedMap<K, V>(compare, null);
  }

  /**
   * Builds a balanced map in O(n) from keys already strictly ascending by
   * `compare`, with `values[i]` for `keys[i]`. The caller guarantees the order.
   */
  static fromSorted<K, V>(
    compare: Compare<K>,
    keys: ReadonlyArray<K>,
    values: ReadonlyArray<V>,
  ): SortedMap<K, V> {
    return new SortedMap<K, V>(
      compare,
      build(keys, values, 0, Math.min(keys.length, values.length)),
    );
  }

  /** Number of entries, O(1). */
  get size(): number {
    return sizeOf(this.root);
  }

  /** The value at `key`, or undefined. */
  get(key: K): V | undefined {
    let node = this.root;
    while (node !== null) {
      const order = this.compare(key, node.key);
      if (order === 0) return node.value;
      node = order < 0 ? node.left : node.right;
    }
    return undefined;
  }

  /** True when `key` is present. */
  has(key: K): boolean {
    let node = this.root;
    while (node !== null) {
      const order = this.compare(key, node.key);
      if (order === 0) return true;
      node = order < 0 ? node.left : node.right;
    }
    return false;
  }

  /**
   * A map with `key` bound to `value` (added or replaced). With `edit`,
   * nodes of that run are updated in place (see `Edit`).
   */
  set(key: K, value: V, edit?: Edit): SortedMap<K, V> {
    const root = insert(this.root, key, value, this.compare, edit);
    return root === this.root ? this : new SortedMap(this.compare, root);
  }

  /** A map without `key` (the same map when it is absent); `edit` as for `set`. */
  delete(key: K, edit?: Edit): SortedMap<K, V> {
    const root = remove(this.root, key, this.compare, edit);
    return root === this.root ? this : new SortedMap(this.compare, root);
  }

  /** The smallest entry, or undefined when empty. */
  first(): readonly [K, V] | undefined {
    if (this.root === null) return undefined;
    const node = minNode(this.root);
    return [node.key, node.value];
  }

  /** Ascending entries, starting at the first key >= `from` when given. */
  entries(from?: K): IterableIterator<readonly [K, V]> {
    return new Cursor(this.root, this.compare, from);
  }

  /** Ascending values. */
  *values(): IterableIterator<V> {
    const cursor = new Cursor(this.root, this.compare, undefined);
    for (let node = cursor.advance(); node !== undefined; node = cursor.advance()) yield node.value;
  }

  /** Ascending keys. */
  *keys(): IterableIterator<K> {
    const cursor = new Cursor(this.root, this.compare, undefined);
    for (let node = cursor.advance(); node !== undefined; node = cursor.advance()) yield node.key;
  }

  /**
   * Calls `visit` on ascending values until it returns false; a cheaper
   * loop than the iterators for hot paths.
   */
  forEachWhile(visit: (value: V, key: K) => boolean, from?: K): void {
    const cursor = new Cursor(this.root, this.compare, from);
    for (let node = cursor.advance(); node !== undefined; node = cursor.advance()) {
      if (!visit(node.value, node.key)) return;
    }
  }

  /** Checks the AVL, order and size invariants; for tests. */
  isValid(): boolean {
    const check = (node: Node<K, V> | null, low: K | undefined, high: K | undefined): boolean => {
      if (node === null) return true;
      if (low !== undefined && this.compare(node.key, low) <= 0) return false;
      if (high !== undefined && this.compare(node.key, high) >= 0) return false;
      const leftHeight = heightOf(node.left);
      const rightHeight = heightOf(node.right);
      if (Math.abs(leftHeight - rightHeight) > 1) return false;
      if (node.height !== Math.max(leftHeight, rightHeight) + 1) return false;
      if (node.size !== sizeOf(node.left) + sizeOf(node.right) + 1) return false;
      return check(node.left, low, node.key) && check(node.right, node.key, high);
    };
    return check(this.root, undefined, undefined);
  }
}

/** Numeric ascending order. */
export const compareNumbers: Compare<number> = (left, right) => left - right;

/** String order by UTF-16 code units (deterministic; used for ids and queue names). */
export const compareStrings: Compare<string> = (left, right) =>
  left < right ? -1 : left > right ? 1 : 0;
