/**
 * A persistent map from ids (integers 0..2^53-1) to values: a 32-way radix
 * trie with path copying, as Clojure's persistent vector but sparse.
 *
 * Job ids are dense and increasing, so the trie is shallow (log32 of the
 * largest id: 4 levels for a million jobs) and can be built in O(n) from an
 * array indexed by id, which is what the generation fold hands over. An
 * update copies one 32-slot array per level; old maps stay valid. Iteration
 * is in ascending id order.
 *
 * An update given an `Edit` token changes the nodes it created earlier in
 * the same run in place (see `Edit`), so a run of updates to neighbouring
 * ids copies each path once.
 */
import { type Edit, owns } from "./Edit.js";

const width = 32;

type Slot<V> = Branch<V> | Leaf<V> | undefined;

// The arrays are written only by an update holding the node's `edit` token.
interface Branch<V> {
  readonly kind: "branch";
  readonly children: Array<Slot<V>>;
  readonly edit: Edit | undefined;
}

interface Leaf<V> {
  readonly kind: "leaf";
  readonly values: Array<V | undefined>;
  readonly edit: Edit | undefined;
}

// 32^level for level 0..11 (32^11 > 2^53): exact powers of two as doubles.
const spans: ReadonlyArray<number> = Array.from({ length: 12 }, (_, level) => width ** level);
const span = (level: number): number => spans[level] ?? Number.POSITIVE_INFINITY;

const digit = (id: number, level: number): number => Math.floor(id / span(level)) % width;

/** A persistent id-keyed map; every "update" returns a new map. */
export class IdMap<V> {
  private constructor(
    private readonly root: Slot<V>,
    /** Levels above the leaves: the trie covers ids < 32^(height + 1). */
    private readonly height: number,
    private readonly count: number,
  ) {}

  /** The empty map. */
  static empty<V>(): IdMap<V> {
    return new IdMap<V>(undefined, 0, 0);
  }

  /**
   * Builds a map in O(n) from `dense[i]` = the value of id `base + i`
   * (holes are absent ids), plus `extra` entries anywhere else. `count`
   * must be the number of values present in `dense`.
   */
  static fromDense<V>(
    dense: ReadonlyArray<V | undefined>,
    base: number,
    count: number,
    extra: Iterable<readonly [number, V]> = [],
  ): IdMap<V> {
    // Leaves first, each at its index (id / 32), then each level of
    // branches at index / 32, until a single node sits at index 0.
    let nodes: Array<{ readonly index: number; readonly node: Branch<V> | Leaf<V> }> = [];
    const end = base + dense.length;
    for (let leaf = Math.floor(base / width); leaf * width < end; leaf++) {
      const values: Array<V | undefined> = [];
      let present = false;
      for (let slot = 0; slot < width; slot++) {
        const offset = leaf * width + slot - base;
        const value = offset >= 0 && offset < dense.length ? dense[offset] : undefined;
        values.push(value);
        present ||= value !== undefined;
      }
      if (present) nodes.push({ index: leaf, node: { kind: "leaf", values, edit: undefined } });
    }
    let height = 0;
    while (nodes.length > 1 || (nodes.length === 1 && (nodes[0]?.index ?? 0) > 0)) {
      const parents: Array<{ readonly index: number; readonly children: Array<Slot<V>> }> = [];
      for (const { index, node } of nodes) {
        const parentIndex = Math.floor(index / width);
        let parent = parents[parents.length - 1];
        if (parent === undefined || parent.index !== parentIndex) {
          parent = { index: parentIndex, children: [] };
          parents.push(parent);
        }
        parent.children[index % width] = node;
      }
      nodes = parents.map(({ index, children }) => ({
        index,
        node: { kind: "branch", children, edit: undefined },
      }));
      height++;
    }
    const root = nodes[0]?.node;
    let map = new IdMap<V>(root, height, root === undefined ? 0 : count);
    for (const [id, value] of extra) map = map.set(id, value);
    return map;
  }

  /** Number of entries, O(1). */
  get size(): number {
    return this.count;
  }

  /** The value at `id`, or undefined. */
  get(id: number): V | undefined {
    if (!(id >= 0 && id < span(this.height + 1))) return undefined;
    let node = this.root;
    for (let level = this.height; node !== undefined; level--) {
      if (node.kind === "leaf") return node.values[digit(id, 0)];
      node = node.children[digit(id, level)];
    }
    return undefined;
  }

  /** True when `id` is present. */
  has(id: number): boolean {
    return this.get(id) !== undefined;
  }

  /**
   * A map with `id` bound to `value` (added or replaced); `id` must be an
   * integer >= 0. With `edit`, nodes of that run are updated in place.
   */
  set(id: number, value: V, edit?: Edit): IdMap<V> {
    let root = this.root;
    let height = this.height;
    // Grow upwards until the trie covers the id.
    while (id >= span(height + 1)) {
      root = root === undefined ? undefined : { kind: "branch", children: [root], edit };
      height++;
    }
    const added = this.get(id) === undefined;
    return new IdMap(setIn(root, height, id, value, edit), height, this.count + (added ? 1 : 0));
  }

  /**
   * A map without `id` (this map when it is absent). A node left empty is
   * dropped, so a map whose ids all left holds no nodes for them.
   */
  delete(id: number, edit?: Edit): IdMap<V> {
    if (this.get(id) === undefined) return this;
    return new IdMap(removeIn(this.root, this.height, id, edit), this.height, this.count - 1);
  }

  /** Calls `visit` on every value in ascending id order, without allocating per entry. */
  forEachValue(visit: (value: V) => void): void {
    if (this.root !== undefined) visitNode(this.root, visit);
  }

  /** Ascending values. */
  *values(): IterableIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  /** Ascending ids. */
  *keys(): IterableIterator<number> {
    for (const [id] of this.entries()) yield id;
  }

  /** Ascending entries. */
  *entries(): IterableIterator<readonly [number, V]> {
    const stack: Array<{
      readonly node: Branch<V> | Leaf<V>;
      readonly base: number;
      readonly level: number;
    }> = [];
    if (this.root !== undefined) stack.push({ node: this.root, base: 0, level: this.height });
    for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
      const { node, base, level } = frame;
      if (node.kind === "leaf") {
        for (let index = 0; index < node.values.length; index++) {
          const value = node.values[index];
          if (value !== undefined) yield [base + index, value];
        }
        continue;
      }
      // Push children right to left so the leftmost is visited first.
      for (let index = node.children.length - 1; index >= 0; index--) {
        const child = node.children[index];
        if (child !== undefined)
          stack.push({ node: child, base: base + index * span(level), level: level - 1 });
      }
    }
  }
}

const visitNode = <V>(node: Branch<V> | Leaf<V>, visit: (value: V) => void): void => {
  if (node.kind === "leaf") {
    for (const value of node.values) if (value !== undefined) visit(value);
    return;
  }
  for (const child of node.children) if (child !== undefined) visitNode(child, visit);
};

const setIn = <V>(
  node: Slot<V>,
  level: number,
  id: number,
  value: V,
  edit: Edit | undefined,
): Branch<V> | Leaf<V> => {
  if (level === 0) {
    if (node !== undefined && node.kind === "leaf" && owns(edit, node.edit)) {
      node.values[digit(id, 0)] = value;
      return node;
    }
    const values = node !== undefined && node.kind === "leaf" ? [...node.values] : [];
    values[digit(id, 0)] = value;
    return { kind: "leaf", values, edit };
  }
  const index = digit(id, level);
  if (node !== undefined && node.kind === "branch" && owns(edit, node.edit)) {
    node.children[index] = setIn(node.children[index], level - 1, id, value, edit);
    return node;
  }
  const children = node !== undefined && node.kind === "branch" ? [...node.children] : [];
  children[index] = setIn(children[index], level - 1, id, value, edit);
  return { kind: "branch", children, edit };
};

const isEmpty = <T>(slots: ReadonlyArray<T | undefined>): boolean => {
  for (const slot of slots) if (slot !== undefined) return false;
  return true;
};

// The caller checked that `id` is present, so every node on its path exists.
const removeIn = <V>(node: Slot<V>, level: number, id: number, edit: Edit | undefined): Slot<V> => {
  if (node === undefined) return undefined;
  if (node.kind === "leaf") {
    const values = owns(edit, node.edit) ? node.values : [...node.values];
    values[digit(id, 0)] = undefined;
    if (isEmpty(values)) return undefined;
    return values === node.values ? node : { kind: "leaf", values, edit };
  }
  const index = digit(id, level);
  const children = owns(edit, node.edit) ? node.children : [...node.children];
  children[index] = removeIn(children[index], level - 1, id, edit);
  if (isEmpty(children)) return undefined;
  return children === node.children ? node : { kind: "branch", children, edit };
};
