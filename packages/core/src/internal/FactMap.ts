/**
 * The facts of a lean state's completed jobs (`Terminal.Fact`), packed: a
 * persistent id-keyed map that holds each fact as one 32-bit integer in a
 * typed-array page of `pageSlots` ids, about 4 bytes a job instead of the
 * ~60 a fact object and its map slot take (docs/core.md, "Packed facts").
 *
 * A slot is `1 + 2·hasResult + 4·attempt + 16384·queueIndex` (0: no fact),
 * so an attempt below `attemptLimit` and a queue index below `queueLimit`
 * pack; a fact that does not (a history written elsewhere with a larger
 * attempt, or more queues than the index bits hold) is kept whole in an
 * overflow `IdMap` instead, so nothing is ever lost or clamped. Queue
 * names are interned: each name a fact uses gets the next index, for good,
 * in two persistent maps (name to index, index to name).
 *
 * Persistence: pages are found by page number (id / pageSlots) in an
 * `IdMap`; a change copies the one page it writes (1 KiB) and the trie
 * path above it, unless the page was created by the same `Edit` run, which
 * then writes it in place. `FactMapBuilder` is the generation fold's
 * mutable twin: it owns its pages until it publishes them.
 */
import type { Fact } from "../Terminal.js";
import { Edit, owns } from "./Edit.js";
import { IdMap } from "./IdMap.js";
import { compareStrings, SortedMap } from "./SortedMap.js";

/** Ids per page: a page is a 1 KiB Uint32Array. */
export const pageSlots = 256;
/** Attempts 0..4095 pack (max_attempts is at most 1,000, EVENTS.md). */
export const attemptLimit = 4096;
/** Queue indexes 0..262,143 pack (the 18 bits above attempt and result). */
export const queueLimit = 262_144;

const resultWeight = 2;
const attemptWeight = 4;
const queueWeight = attemptWeight * attemptLimit;

// A page's slots are written only by an update holding the page's `edit`,
// or appended past every map's end (`FactMap.withSlot`).
interface Page {
  readonly slots: Uint32Array;
  readonly edit: Edit | undefined;
  /**
   * One past the last slot anything may have written: a map may append in
   * place only past its own end and at or past this (nobody else's slot is
   * there to see).
   */
  written: number;
}

/** The slot of a fact, or 0 when it does not pack. */
const pack = (queueIndex: number, fact: Fact): number =>
  Number.isInteger(fact.attempt) &&
  fact.attempt >= 0 &&
  fact.attempt < attemptLimit &&
  queueIndex < queueLimit
    ? 1 +
      (fact.hasResult ? resultWeight : 0) +
      fact.attempt * attemptWeight +
      queueIndex * queueWeight
    : 0;

const queueIndexOf = (slot: number): number => Math.floor(slot / queueWeight);
const attemptOf = (slot: number): number => Math.floor(slot / attemptWeight) % attemptLimit;
const hasResultOf = (slot: number): boolean => (slot & resultWeight) !== 0;

const pageOf = (id: number): number => Math.floor(id / pageSlots);

/** The interned queue names: name to index and back. */
interface Queues {
  readonly indexes: SortedMap<string, number>;
  readonly names: IdMap<string>;
}

const noQueues: Queues = { indexes: SortedMap.empty(compareStrings), names: IdMap.empty() };

/** A persistent map from job ids to packed facts; every update returns a new map. */
export class FactMap {
  /** @internal Use `empty` or `FactMapBuilder`. */
  constructor(
    private readonly pages: IdMap<Page>,
    private readonly overflow: IdMap<Fact>,
    private readonly queues: Queues,
    private readonly count: number,
    /** One past the highest id this map ever wrote a slot for: its pages' slots from here on are not its own. */
    private readonly end: number,
  ) {}

  /** The empty map. */
  static empty(): FactMap {
    return emptyFactMap;
  }

  /** Number of facts, O(1). */
  get size(): number {
    return this.count;
  }

  /** The fact of `id`, or undefined. */
  get(id: number): Fact | undefined {
    const slot = this.slot(id);
    if (slot !== 0) return this.decode(slot);
    return this.overflow.size === 0 ? undefined : this.overflow.get(id);
  }

  /** True when `id` has a fact. */
  has(id: number): boolean {
    return this.slot(id) !== 0 || (this.overflow.size > 0 && this.overflow.has(id));
  }

  /**
   * A map with `id` bound to `fact` (added or replaced); `id` must be an
   * integer >= 0. With `edit`, pages and nodes of that run are written in place.
   */
  set(id: number, fact: Fact, edit?: Edit): FactMap {
    const { queues, index } = intern(this.queues, fact.queue, edit);
    const packed = pack(index, fact);
    const before = this.slot(id);
    const inOverflow = before === 0 && this.overflow.size > 0 && this.overflow.has(id);
    const added = before === 0 && !inOverflow;
    let pages = packed !== 0 || before !== 0 ? this.withSlot(id, packed, edit) : this.pages;
    if (packed !== 0 && pageOf(id) > pageOf(this.end)) pages = this.sealed(pages, edit);
    let overflow = this.overflow;
    if (packed === 0) overflow = overflow.set(id, fact, edit);
    else if (inOverflow) overflow = overflow.delete(id, edit);
    // Only a slot written moves the end: past it may lie another map's appends.
    const end = packed !== 0 ? Math.max(this.end, id + 1) : this.end;
    return new FactMap(pages, overflow, queues, this.count + (added ? 1 : 0), end);
  }

  /** Ascending entries. */
  entries(): IterableIterator<readonly [number, Fact]> {
    return this.entriesFrom(0);
  }

  /** Ascending entries of ids `from` and above (the pages below it are passed over). */
  entriesFrom(from: number): IterableIterator<readonly [number, Fact]> {
    return this.walk(from, Number.MAX_SAFE_INTEGER, false);
  }

  /** Descending entries of ids `last` and below (the pages above it are passed over). */
  entriesDownFrom(last: number): IterableIterator<readonly [number, Fact]> {
    return this.walk(0, last, true);
  }

  /** The entries of ids `first` to `last` in either order, the overflow's merged in. */
  private *walk(
    first: number,
    last: number,
    descending: boolean,
  ): IterableIterator<readonly [number, Fact]> {
    const overflow = descending
      ? this.overflow.entriesDownFrom(last)
      : this.overflow.entriesFrom(first);
    const pages = descending
      ? this.pages.entriesDownFrom(pageOf(last))
      : this.pages.entriesFrom(pageOf(first));
    let pending = overflow.next();
    for (const [pageNumber, page] of pages) {
      const base = pageNumber * pageSlots;
      const from = Math.max(0, first - base);
      const own = Math.min(pageSlots, this.end - base, last - base + 1);
      for (let step = 0; step < own - from; step++) {
        const id = base + (descending ? own - 1 - step : from + step);
        const slot = page.slots[id - base] ?? 0;
        if (slot === 0) continue;
        // Overflow entries that come before this id in the walk's order.
        while (
          pending.done !== true &&
          (descending ? pending.value[0] > id : pending.value[0] < id)
        ) {
          yield pending.value;
          pending = overflow.next();
        }
        yield [id, this.decode(slot)];
      }
    }
    for (; pending.done !== true; pending = overflow.next()) yield pending.value;
  }

  /** Ascending facts. */
  *values(): IterableIterator<Fact> {
    for (const [, fact] of this.entries()) yield fact;
  }

  /** Ascending ids. */
  *keys(): IterableIterator<number> {
    for (const [id] of this.entries()) yield id;
  }

  /** Calls `visit` on every fact in ascending id order. */
  forEachValue(visit: (fact: Fact) => void): void {
    for (const [, fact] of this.entries()) visit(fact);
  }

  /**
   * The packed form an image carries (`Image.Facts`): the queue names in
   * the order slots index them, each page's slots this map owns (a copy,
   * zeroed past its end, where the page runs past it), ascending, and the
   * facts that do not pack. Read at once: an owner's run may write a page
   * it owns later.
   */
  packed(): Packed {
    const names: Array<string> = [];
    for (let index = 0; index < this.queues.names.size; index++) {
      names.push(this.queues.names.get(index) ?? "");
    }
    return {
      queues: names,
      pages: { [Symbol.iterator]: () => this.ownPages() },
      overflow: { [Symbol.iterator]: () => this.overflow.entries() },
    };
  }

  private *ownPages(): Generator<readonly [number, Uint32Array]> {
    for (const [number, page] of this.pages.entries()) {
      const own = Math.min(pageSlots, this.end - number * pageSlots);
      if (own <= 0) continue;
      if (own === pageSlots) {
        yield [number, page.slots];
        continue;
      }
      const slots = page.slots.slice();
      slots.fill(0, own);
      yield [number, slots];
    }
  }

  /** How many facts each queue holds, without decoding a fact per id. */
  countsByQueue(): Map<string, number> {
    const perIndex: Array<number> = [];
    for (const [pageNumber, page] of this.pages.entries()) {
      const own = Math.min(pageSlots, this.end - pageNumber * pageSlots);
      for (let offset = 0; offset < own; offset++) {
        const slot = page.slots[offset] ?? 0;
        if (slot === 0) continue;
        const index = queueIndexOf(slot);
        perIndex[index] = (perIndex[index] ?? 0) + 1;
      }
    }
    const counts = new Map<string, number>();
    perIndex.forEach((count, index) => {
      const name = this.queues.names.get(index);
      if (name !== undefined) counts.set(name, (counts.get(name) ?? 0) + count);
    });
    this.overflow.forEachValue((fact) => counts.set(fact.queue, (counts.get(fact.queue) ?? 0) + 1));
    return counts;
  }

  private slot(id: number): number {
    if (id >= this.end) return 0;
    const page = this.pages.get(pageOf(id));
    return page === undefined ? 0 : (page.slots[id % pageSlots] ?? 0);
  }

  private decode(slot: number): Fact {
    return {
      queue: this.queues.names.get(queueIndexOf(slot)) ?? "",
      attempt: attemptOf(slot),
      hasResult: hasResultOf(slot),
    };
  }

  /**
   * `pages` once this map's end moves past the page it ends in: from then
   * on the new map takes that whole page as its own, so nobody may append
   * to it in place any more (closed), and another map's appends past this
   * one's end are left out of the new map's copy.
   */
  private sealed(pages: IdMap<Page>, edit: Edit | undefined): IdMap<Page> {
    const number = pageOf(this.end);
    const page = pages.get(number);
    if (page === undefined) return pages;
    const own = this.end - number * pageSlots;
    if (page.written <= own) {
      page.written = pageSlots;
      return pages;
    }
    const slots = page.slots.slice();
    slots.fill(0, own);
    return pages.set(number, { slots, edit, written: pageSlots }, edit);
  }

  /**
   * The pages with `id`'s slot set to `slot`: written in place when this
   * run owns the page, or when a fact goes past this map's end into a page
   * nobody wrote past it (jobs complete mostly in id order: the page and
   * the trie above it are then shared, not copied; a 1 KiB copy costs ~0.7
   * µs); else copied, without the slots past this map's end.
   */
  private withSlot(id: number, slot: number, edit: Edit | undefined): IdMap<Page> {
    const number = pageOf(id);
    const offset = id % pageSlots;
    const page = this.pages.get(number);
    const own = Math.min(pageSlots, Math.max(0, this.end - number * pageSlots));
    const appends = slot !== 0 && id >= this.end && page !== undefined && page.written <= own;
    if (page !== undefined && (appends || owns(edit, page.edit))) {
      page.slots[offset] = slot;
      page.written = Math.max(page.written, offset + 1);
      return this.pages;
    }
    const slots = page === undefined ? new Uint32Array(pageSlots) : page.slots.slice();
    // Another map's appends past this one's end are not carried over.
    if (own < pageSlots) slots.fill(0, own);
    slots[offset] = slot;
    const written = Math.max(own, offset + 1);
    return this.pages.set(number, { slots, edit, written }, edit);
  }
}

const emptyFactMap = new FactMap(IdMap.empty(), IdMap.empty(), noQueues, 0, 0);

/** The index of `queue`, interned if new. */
const intern = (
  queues: Queues,
  queue: string,
  edit: Edit | undefined,
): { readonly queues: Queues; readonly index: number } => {
  const known = queues.indexes.get(queue);
  if (known !== undefined) return { queues, index: known };
  const index = queues.names.size;
  return {
    queues: {
      indexes: queues.indexes.set(queue, index, edit),
      names: queues.names.set(index, queue, edit),
    },
    index,
  };
};

/** Facts packed as a map holds them (`FactMap.packed`, `FactMapBuilder.restorePacked`). */
export interface Packed {
  /** Queue names, in the order the slots' queue indexes count them. */
  readonly queues: ReadonlyArray<string>;
  /** Pages of `pageSlots` slots by page number (id / pageSlots), ascending. */
  readonly pages: Iterable<readonly [number, Uint32Array]>;
  /** The facts that do not pack, by id. */
  readonly overflow: Iterable<readonly [number, Fact]>;
}

/** Pages this far beyond the dense array's end (or below its start) go to a `Map`. */
const densePageGapMax = 16;

/**
 * The mutable facts of a generation fold: pages in an array indexed by
 * page number minus the first one seen (far outliers in a `Map`), written
 * in place, and queue names in a plain `Map`. `toFactMap` publishes them;
 * from then on a published page is copied before it is written again.
 */
export class FactMapBuilder {
  private readonly dense: Array<Page | undefined> = [];
  private basePage = 0;
  private readonly sparse = new Map<number, Page>();
  private readonly names: Array<string> = [];
  private readonly indexes = new Map<string, number>();
  private readonly overflow = new Map<number, Fact>();
  private count = 0;
  /** One past the highest id whose slot was written. */
  private end = 0;
  // Pages stamped with this token are this builder's own; publishing
  // replaces it, so every page published is copied before its next write.
  private edit = new Edit();

  /** Number of facts. */
  get size(): number {
    return this.count;
  }

  /** The fact of `id`, or undefined. */
  get(id: number): Fact | undefined {
    const slot = this.slot(id);
    if (slot !== 0) {
      return {
        queue: this.names[queueIndexOf(slot)] ?? "",
        attempt: attemptOf(slot),
        hasResult: hasResultOf(slot),
      };
    }
    return this.overflow.size === 0 ? undefined : this.overflow.get(id);
  }

  /** True when `id` has a fact. */
  has(id: number): boolean {
    return this.slot(id) !== 0 || (this.overflow.size > 0 && this.overflow.has(id));
  }

  /** Binds `id` (an integer >= 0) to `fact`. */
  set(id: number, fact: Fact): void {
    let index = this.indexes.get(fact.queue);
    if (index === undefined) {
      index = this.names.length;
      this.names.push(fact.queue);
      this.indexes.set(fact.queue, index);
    }
    const packed = pack(index, fact);
    const before = this.slot(id);
    const inOverflow = before === 0 && this.overflow.size > 0 && this.overflow.has(id);
    if (before === 0 && !inOverflow) this.count++;
    if (packed === 0) this.overflow.set(id, fact);
    else if (inOverflow) this.overflow.delete(id);
    if (packed !== 0 || before !== 0) this.ownPage(pageOf(id)).slots[id % pageSlots] = packed;
    if (packed !== 0) this.end = Math.max(this.end, id + 1);
  }

  /**
   * Resuming (`Image`): takes over packed pages (the arrays themselves) and
   * their queue names into this empty builder. Why not, in a few words: a
   * builder not empty, a name twice, a page twice or not of `pageSlots`, a
   * slot no fact packs to (even, or a queue index past the names), a fact
   * for id 0 or above `lastId`. The overflow is the caller's, by `set`.
   */
  restorePacked(
    queues: ReadonlyArray<string>,
    pages: Iterable<readonly [number, Uint32Array]>,
    lastId: number,
  ): string | undefined {
    if (this.count !== 0 || this.names.length !== 0) return "the facts are not empty";
    for (const name of queues) {
      if (this.indexes.has(name)) return `queue ${name} twice`;
      this.indexes.set(name, this.names.length);
      this.names.push(name);
    }
    for (const [number, slots] of pages) {
      if (!Number.isSafeInteger(number) || number < 0 || slots.length !== pageSlots) {
        return `page ${number}`;
      }
      if (this.page(number) !== undefined) return `page ${number} twice`;
      let facts = 0;
      let last = -1;
      for (let offset = 0; offset < pageSlots; offset++) {
        const slot = slots[offset] ?? 0;
        if (slot === 0) continue;
        if (slot % 2 !== 1 || queueIndexOf(slot) >= queues.length) return `slot ${slot}`;
        facts++;
        last = offset;
      }
      if (facts === 0) continue;
      if ((number === 0 && slots[0] !== 0) || number * pageSlots + last > lastId) {
        return `a fact beyond ${lastId}`;
      }
      this.adopt(number, { slots, edit: this.edit, written: pageSlots });
      this.count += facts;
      this.end = Math.max(this.end, number * pageSlots + last + 1);
    }
    return undefined;
  }

  /** The persistent map of the facts so far; the builder stays usable. */
  toFactMap(): FactMap {
    this.edit = new Edit();
    const extra: Array<readonly [number, Page]> = [...this.sparse.entries()];
    let present = 0;
    for (const page of this.dense) if (page !== undefined) present++;
    const pages = IdMap.fromDense(this.dense, this.basePage, present, extra);
    let overflow = IdMap.empty<Fact>();
    for (const [id, fact] of this.overflow) overflow = overflow.set(id, fact);
    const sorted = [...this.names].sort(compareStrings);
    const queues: Queues = {
      indexes: SortedMap.fromSorted(
        compareStrings,
        sorted,
        sorted.map((name) => this.indexes.get(name) ?? 0),
      ),
      names: IdMap.fromDense(this.names, 0, this.names.length),
    };
    return new FactMap(pages, overflow, queues, this.count, this.end);
  }

  private slot(id: number): number {
    const page = this.page(pageOf(id));
    return page === undefined ? 0 : (page.slots[id % pageSlots] ?? 0);
  }

  private page(number: number): Page | undefined {
    const offset = number - this.basePage;
    const page = offset >= 0 && offset < this.dense.length ? this.dense[offset] : undefined;
    return page !== undefined || this.sparse.size === 0 ? page : this.sparse.get(number);
  }

  /** The page `number`, created or copied so that this builder owns it. */
  private ownPage(number: number): Page {
    const page = this.page(number);
    if (page !== undefined && page.edit === this.edit) return page;
    const owned: Page = {
      slots: page === undefined ? new Uint32Array(pageSlots) : page.slots.slice(),
      edit: this.edit,
      // Published whole: a map's first append to it copies it.
      written: pageSlots,
    };
    this.adopt(number, owned);
    return owned;
  }

  /** Puts `owned` in place as page `number`. */
  private adopt(number: number, owned: Page): void {
    if (this.dense.length === 0 && this.sparse.size === 0) this.basePage = number;
    const offset = number - this.basePage;
    if (offset >= 0 && offset < this.dense.length + densePageGapMax && !this.sparse.has(number)) {
      while (this.dense.length < offset) this.dense.push(undefined);
      this.dense[offset] = owned;
    } else {
      this.sparse.set(number, owned);
    }
  }
}
