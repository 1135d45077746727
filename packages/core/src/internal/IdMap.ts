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
 *
 * Adding the next id (one past the highest this map ever bound, the usual
 * new job) copies nothing when its leaf exists and nobody appended to it
 * yet: the value is appended to the leaf's array in place and the new map
 * shares every node. Each map knows its `end` (one past the highest id it
 * ever bound) and ignores slots at or above it, which hold only what a
 * later map appended; a copy of a leaf keeps none of them.
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
  // Replaced only by an exact copy of itself, once full (`appendInPlace`).
  values: Array<V | undefined>;
  readonly edit: Edit | undefined;
}

// 32^level for level 0..11 (32^11 > 2^53): exact powers of two as doubles.
const spans: ReadonlyArray<number> = Array.from({ length: 12 }, (_, level) => width ** level);
const span = (level: number): number => spans[level] ?? Number.POSITIVE_INFINITY;

const digit = (id: number, level: number): number => Math.floor(id / span(level)) % width;

const leafIndex = (id: number): number => Math.floor(id / width);

/** A persistent id-keyed map; every "update" returns a new map. */
export class IdMap<V> {
  private constructor(
    private readonly root: Slot<V>,
    /** Levels above the leaves: the trie covers ids < 32^(height + 1). */
    private readonly height: number,
    private readonly count: number,
    /** One past the highest id ever bound here: slots at or above it are not this map's. */
    private readonly end: number,
  ) {}

  /** The empty map. */
  static empty<V>(): IdMap<V> {
    return new IdMap<V>(undefined, 0, 0, 0);
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
      // Exactly 32 slots: grown by pushes, the array would hold 43.
      const values = new Array<V | undefined>(width);
      let present = false;
      for (let slot = 0; slot < width; slot++) {
        const offset = leaf * width + slot - base;
        const value = offset >= 0 && offset < dense.length ? dense[offset] : undefined;
        values[slot] = value;
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
    let map =
      root === undefined
        ? new IdMap<V>(undefined, 0, 0, 0)
        : new IdMap<V>(root, height, count, base + dense.length);
    for (const [id, value] of extra) map = map.set(id, value);
    return map;
  }

  /** Number of entries, O(1). */
  get size(): number {
    return this.count;
  }

  /** The value at `id`, or undefined. */
  get(id: number): V | undefined {
    if (!(id >= 0 && id < this.end)) return undefined;
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
    if (id === this.end && this.appendInPlace(id, value)) {
      return new IdMap(this.root, this.height, this.count + 1, id + 1);
    }
    let root = this.root;
    let height = this.height;
    if (id >= this.end && this.end > 0 && leafIndex(id) !== leafIndex(this.end - 1)) {
      root = this.closeTip(edit);
    }
    // Grow upwards until the trie covers the id.
    while (id >= span(height + 1)) {
      root = root === undefined ? undefined : { kind: "branch", children: [root], edit };
      height++;
    }
    const added = this.get(id) === undefined;
    return new IdMap(
      setIn(root, height, id, value, edit, this.end),
      height,
      this.count + (added ? 1 : 0),
      Math.max(this.end, id + 1),
    );
  }

  /**
   * The root for a map whose end moves past the leaf of `end - 1` (the
   * one leaf appends go to): that leaf is closed to appends (its array
   * padded to full width), so that no later append to it shows in the new
   * map; or, when an append of another map already went into it, replaced
   * on the new map's path by a copy without it.
   */
  private closeTip(edit: Edit | undefined): Slot<V> {
    const tipId = this.end - 1;
    const tip = this.leafOf(tipId);
    if (tip === undefined) return this.root;
    const own = this.end - (tipId - digit(tipId, 0));
    if (tip.values.length <= own) {
      if (tip.values.length < width) tip.values.length = width;
      return this.root;
    }
    return setIn(this.root, this.height, tipId, tip.values[digit(tipId, 0)], edit, this.end);
  }

  /** The leaf that holds `id`'s slot, if there is one. */
  private leafOf(id: number): Leaf<V> | undefined {
    if (!(id >= 0 && id < span(this.height + 1))) return undefined;
    let node = this.root;
    for (let level = this.height; node !== undefined && node.kind === "branch"; level--) {
      node = node.children[digit(id, level)];
    }
    return node;
  }

  /**
   * Appends the value of `id` (this map's `end`) to its leaf's array when
   * the leaf exists and its array ends right before `id`'s slot (no later
   * map appended to it): false when it does not, and nothing was written.
   */
  private appendInPlace(id: number, value: V): boolean {
    const leaf = this.leafOf(id);
    if (leaf === undefined || leaf.values.length !== digit(id, 0)) return false;
    leaf.values.push(value);
    // The pushes grew the array to 43 slots, 88 bytes more than its 32
    // entries need for as long as the leaf lives (every job's id passes
    // here). Full, it takes no more appends: an exact copy with the same
    // entries serves every map that shares the leaf.
    if (leaf.values.length === width) leaf.values = leaf.values.slice();
    return true;
  }

  /**
   * A map without `id` (this map when it is absent). A node left empty is
   * dropped, so a map whose ids all left holds no nodes for them.
   */
  delete(id: number, edit?: Edit): IdMap<V> {
    if (this.get(id) === undefined) return this;
    return new IdMap(
      removeIn(this.root, this.height, id, edit, this.end),
      this.height,
      this.count - 1,
      this.end,
    );
  }

  /** Calls `visit` on every value in ascending id order, without allocating per entry. */
  forEachValue(visit: (value: V) => void): void {
    if (this.root !== undefined) visitNode(this.root, this.height, 0, this.end, visit);
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
  entries(): IterableIterator<readonly [number, V]> {
    return this.entriesFrom(0);
  }

  /**
   * Ascending entries of ids `first` and above: the subtrees wholly below
   * `first` are passed over, so a page of a listing from deep in the map
   * costs its own entries and one path, not every entry before it.
   */
  entriesFrom(first: number): IterableIterator<readonly [number, V]> {
    return this.walk(first, Number.POSITIVE_INFINITY, false);
  }

  /**
   * Descending entries of ids `last` and below: the subtrees wholly above
   * `last` are passed over (a listing newest first, from anywhere).
   */
  entriesDownFrom(last: number): IterableIterator<readonly [number, V]> {
    return this.walk(Number.NEGATIVE_INFINITY, last, true);
  }

  /** The entries of ids `first` to `last`, in either order, visiting only the subtrees that hold some. */
  private *walk(
    first: number,
    last: number,
    descending: boolean,
  ): IterableIterator<readonly [number, V]> {
    const stack: Array<{
      readonly node: Branch<V> | Leaf<V>;
      readonly base: number;
      readonly level: number;
    }> = [];
    if (this.root !== undefined) stack.push({ node: this.root, base: 0, level: this.height });
    for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
      const { node, base, level } = frame;
      if (node.kind === "leaf") {
        const from = Math.max(0, first - base);
        const own = Math.min(node.values.length, this.end - base, last - base + 1);
        for (let step = 0; step < own - from; step++) {
          const index = descending ? own - 1 - step : from + step;
          const value = node.values[index];
          if (value !== undefined) yield [base + index, value];
        }
        continue;
      }
      // The child to visit first is pushed last, to be popped first.
      const childSpan = span(level);
      const count = node.children.length;
      for (let step = 0; step < count; step++) {
        const index = descending ? step : count - 1 - step;
        const child = node.children[index];
        const childBase = base + index * childSpan;
        if (child !== undefined && childBase + childSpan > first && childBase <= last)
          stack.push({ node: child, base: childBase, level: level - 1 });
      }
    }
  }
}

const visitNode = <V>(
  node: Branch<V> | Leaf<V>,
  level: number,
  base: number,
  end: number,
  visit: (value: V) => void,
): void => {
  if (node.kind === "leaf") {
    const own = Math.min(node.values.length, end - base);
    for (let index = 0; index < own; index++) {
      const value = node.values[index];
      if (value !== undefined) visit(value);
    }
    return;
  }
  const childSpan = span(level);
  for (let index = 0; index < node.children.length; index++) {
    const child = node.children[index];
    if (child !== undefined) visitNode(child, level - 1, base + index * childSpan, end, visit);
  }
};

/**
 * `leaf`'s values for a map whose `end` is given, to change: the array
 * itself when the run owns the leaf, else a copy; either way without the
 * slots at or above `end` (what later maps appended), so that binding an
 * id beyond them cannot take them in.
 */
const ownValues = <V>(
  leaf: Leaf<V>,
  leafBase: number,
  end: number,
  edit: Edit | undefined,
): Array<V | undefined> => {
  const own = Math.max(0, end - leafBase);
  if (!owns(edit, leaf.edit)) return leaf.values.slice(0, own);
  if (leaf.values.length > own) leaf.values.length = own;
  return leaf.values;
};

const setIn = <V>(
  node: Slot<V>,
  level: number,
  id: number,
  value: V | undefined,
  edit: Edit | undefined,
  end: number,
): Branch<V> | Leaf<V> => {
  if (level === 0) {
    const slot = digit(id, 0);
    if (node === undefined || node.kind !== "leaf") {
      const values: Array<V | undefined> = [];
      values[slot] = value;
      return { kind: "leaf", values, edit };
    }
    const values = ownValues(node, id - slot, end, edit);
    values[slot] = value;
    return values === node.values ? node : { kind: "leaf", values, edit };
  }
  const index = digit(id, level);
  if (node !== undefined && node.kind === "branch" && owns(edit, node.edit)) {
    node.children[index] = setIn(node.children[index], level - 1, id, value, edit, end);
    return node;
  }
  const children = node !== undefined && node.kind === "branch" ? [...node.children] : [];
  children[index] = setIn(children[index], level - 1, id, value, edit, end);
  return { kind: "branch", children, edit };
};

const isEmpty = <T>(slots: ReadonlyArray<T | undefined>): boolean => {
  for (const slot of slots) if (slot !== undefined) return false;
  return true;
};

// The caller checked that `id` is present, so every node on its path exists.
const removeIn = <V>(
  node: Slot<V>,
  level: number,
  id: number,
  edit: Edit | undefined,
  end: number,
): Slot<V> => {
  if (node === undefined) return undefined;
  if (node.kind === "leaf") {
    const slot = digit(id, 0);
    const values = ownValues(node, id - slot, end, edit);
    values[slot] = undefined;
    if (isEmpty(values)) return undefined;
    return values === node.values ? node : { kind: "leaf", values, edit };
  }
  const index = digit(id, level);
  const children = owns(edit, node.edit) ? node.children : [...node.children];
  children[index] = removeIn(children[index], level - 1, id, edit, end);
  if (isEmpty(children)) return undefined;
  return children === node.children ? node : { kind: "branch", children, edit };
};
