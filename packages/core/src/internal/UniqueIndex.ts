/**
 * The state's unique index (`State.indexes.unique`): per (queue, unique
 * key), the ids of the jobs holding the key, ascending. In memory only: the
 * log and the events know nothing of it (docs/core.md, "One table for
 * every version of the unique index", 2026-12-03).
 *
 * Persistent, as every index of a state: every version stays readable and
 * updatable. All versions share one mutable table (per queue, a
 * `KeyTable` from key to holders); the versions the table does not show
 * hold the change that leads from each to a neighbouring version (a
 * version tree rerooted on access, as Baker's persistent arrays). The
 * engine and the fold read and extend the newest version, which costs one
 * hash probe, and an update leaves one small record of what it replaced. Reading an
 * older version first turns the table back to it: each change on the way
 * is undone once and its opposite left on the newer version, so every
 * version stays correct, at a cost linear in the changes between the two.
 *
 * It replaced a `SortedMap` keyed by a 30-bit hash of the pair: a key in
 * no order (a UUID, a hash) copied a leaf and its parent per insert, copies
 * that outlived the young generation (a unique insert cost 2.5x a plain
 * one's CPU at 256 producers), and each key kept an entry and a holders
 * list beside its map slot. Here a key costs its map slot; a key held by
 * one job stores that job's id, not a list.
 */
import type { Edit } from "./Edit.js";
import { KeyTable } from "./KeyTable.js";

/** A key's holders: one job's id, or the ids of two or more, ascending. */
type Holders = number | ReadonlyArray<number>;

/**
 * The most keys one table of a queue is given before the queue spills into
 * another: a table of 2^23 keys has 2^24 slots, and a smaller one regrows
 * in shorter pauses. Tests lower it.
 */
const spillAt = 1 << 23;

/** One queue's keys: a list of tables (one until 2^23 keys), each key in exactly one of them. */
class QueueKeys {
  readonly tables: Array<KeyTable<Holders>> = [new KeyTable()];

  constructor(private readonly capacity: number) {}

  get(uniqueKey: string): Holders | undefined {
    const tables = this.tables;
    for (let index = 0; index < tables.length; index++) {
      const holders = tables[index]?.get(uniqueKey);
      if (holders !== undefined) return holders;
    }
    return undefined;
  }

  put(uniqueKey: string, holders: Holders | undefined): void {
    const tables = this.tables;
    const [only] = tables;
    // One table with room: one probe, not a search then a write.
    if (tables.length === 1 && only !== undefined && only.size < this.capacity) {
      if (holders === undefined) only.delete(uniqueKey);
      else only.set(uniqueKey, holders);
      return;
    }
    for (let index = 0; index < tables.length; index++) {
      const table = tables[index];
      if (table === undefined || table.get(uniqueKey) === undefined) continue;
      if (holders === undefined) table.delete(uniqueKey);
      else table.set(uniqueKey, holders);
      return;
    }
    if (holders === undefined) return;
    const last = tables[tables.length - 1];
    if (last !== undefined && last.size < this.capacity) last.set(uniqueKey, holders);
    else {
      const table = new KeyTable<Holders>();
      table.set(uniqueKey, holders);
      tables.push(table);
    }
  }
}

/** The keys of the version that holds the table: mutable, shared by every version. */
class Table {
  private readonly queues = new Map<string, QueueKeys>();
  // The last pair read or written and its holders: the fold reads a key to
  // check it, then again to add a holder.
  private lastQueue = "";
  private lastKey: string | undefined = undefined;
  private lastHolders: Holders | undefined = undefined;

  constructor(private readonly capacity: number) {}

  get(queue: string, uniqueKey: string): Holders | undefined {
    if (uniqueKey === this.lastKey && queue === this.lastQueue) return this.lastHolders;
    const holders = this.queues.get(queue)?.get(uniqueKey);
    this.remember(queue, uniqueKey, holders);
    return holders;
  }

  put(queue: string, uniqueKey: string, holders: Holders | undefined): void {
    this.remember(queue, uniqueKey, holders);
    let keys = this.queues.get(queue);
    if (keys === undefined) {
      if (holders === undefined) return;
      keys = new QueueKeys(this.capacity);
      this.queues.set(queue, keys);
    }
    keys.put(uniqueKey, holders);
  }

  private remember(queue: string, uniqueKey: string, holders: Holders | undefined): void {
    this.lastQueue = queue;
    this.lastKey = uniqueKey;
    this.lastHolders = holders;
  }

  /** Per queue, the number of keys in each of its tables. */
  tableSizes(): ReadonlyMap<string, ReadonlyArray<number>> {
    const sizes = new Map<string, ReadonlyArray<number>>();
    for (const [queue, keys] of this.queues)
      sizes.set(
        queue,
        keys.tables.map((table) => table.size),
      );
    return sizes;
  }

  *pairs(): IterableIterator<readonly [string, string, Holders]> {
    for (const [queue, keys] of this.queues) {
      for (const table of keys.tables) {
        for (const [uniqueKey, holders] of table.entries()) yield [queue, uniqueKey, holders];
      }
    }
  }
}

/**
 * Entries of (queue, key, the holders a version sees under it), in three
 * parallel lists rather than a tuple each: an update under an edit appends
 * three slots and allocates nothing of its own. A change lives as long as
 * any version before it, and a tuple per insert (~70 bytes) was promoted
 * with it (2026-12-04).
 */
class Entries {
  readonly queues: Array<string> = [];
  readonly keys: Array<string> = [];
  readonly holders: Array<Holders | undefined> = [];

  push(queue: string, uniqueKey: string, holders: Holders | undefined): void {
    this.queues.push(queue);
    this.keys.push(uniqueKey);
    this.holders.push(holders);
  }
}

/** Entries of one (queue, key, holders). */
const entriesOf = (queue: string, uniqueKey: string, holders: Holders | undefined): Entries => {
  const entries = new Entries();
  entries.push(queue, uniqueKey, holders);
  return entries;
};

/**
 * A version some changes away from `toward`: applied from the last entry
 * to the first, they turn `toward`'s table into this version's. One entry
 * per update, or all of a run's under one `Edit` (one record for a batch).
 */
class Change {
  constructor(
    readonly entries: Entries,
    readonly toward: Version,
  ) {}
}

/**
 * A version's place: the table itself, or changes away from another
 * version. Mutable on purpose: rerooting moves the table between versions;
 * what each version reads never changes.
 */
class Version {
  constructor(public place: Table | Change) {}
}

/** The table turned to show `version`, which then holds it (rerooting). */
const tableOf = (version: Version): Table => {
  const first = version.place;
  if (first instanceof Table) return first;
  const path: Array<readonly [Version, Change]> = [];
  let at: Version = version;
  let place: Table | Change = first;
  while (place instanceof Change) {
    path.push([at, place]);
    at = place.toward;
    place = at.place;
  }
  const table = place;
  // From the change next to the table back to `version`: undo each one and
  // leave its opposite on the version that held the table until then.
  for (let index = path.length - 1; index >= 0; index--) {
    const step = path[index];
    if (step === undefined) continue;
    const [older, change] = step;
    change.toward.place = new Change(undo(table, change.entries), older);
    older.place = table;
  }
  return table;
};

/**
 * Writes `entries` into the table, last to first, and returns what each
 * replaced in the order written: applied last to first, they restore it.
 */
const undo = (table: Table, entries: Entries): Entries => {
  const opposite = new Entries();
  const { queues, keys, holders } = entries;
  for (let index = queues.length - 1; index >= 0; index--) {
    const queue = queues[index];
    const uniqueKey = keys[index];
    if (queue === undefined || uniqueKey === undefined) continue;
    opposite.push(queue, uniqueKey, table.get(queue, uniqueKey));
    table.put(queue, uniqueKey, holders[index]);
  }
  return opposite;
};

/**
 * The run an index made under an `Edit` may extend in place: the version
 * before the run, and the change that leads from it to the index's version.
 */
interface Run {
  readonly edit: Edit;
  readonly from: Version;
  readonly change: Change;
}

/** `holders` as a list (a fresh one for a single id: lists read are never kept). */
const listOf = (holders: Holders | undefined): ReadonlyArray<number> | undefined =>
  holders === undefined || typeof holders !== "number" ? holders : [holders];

/** `holders` with `jobId` after them: ids only grow, so the list stays ascending. */
const withId = (holders: Holders | undefined, jobId: number): Holders => {
  if (holders === undefined) return jobId;
  if (typeof holders === "number") return [holders, jobId];
  // Built to its length: a spread grows a list of 17 slots for one id.
  const next = new Array<number>(holders.length + 1);
  for (let index = 0; index < holders.length; index++) next[index] = holders[index] ?? 0;
  next[holders.length] = jobId;
  return next;
};

/**
 * The key `uniqueIndexKey` joins, split again: its queue's length, a colon,
 * the queue, then the key. Undefined for a string it cannot have made.
 */
const splitIndexKey = (indexKey: string): readonly [string, string] | undefined => {
  const colon = indexKey.indexOf(":");
  const length = Number(indexKey.slice(0, colon));
  if (colon < 1 || !Number.isSafeInteger(length) || colon + 1 + length > indexKey.length) {
    return undefined;
  }
  return [indexKey.slice(colon + 1, colon + 1 + length), indexKey.slice(colon + 1 + length)];
};

const joinedKey = (queue: string, uniqueKey: string): string =>
  `${queue.length}:${queue}${uniqueKey}`;

/** A persistent unique index; every "update" returns a new one. */
export class UniqueIndex {
  private constructor(
    private readonly version: Version,
    private count: number,
    private readonly run: Run | undefined,
    // Keys per table of a queue (`spillAt`, lower in tests).
    private readonly capacity: number,
  ) {}

  /** The number of (queue, key) pairs held. */
  get size(): number {
    return this.count;
  }

  /** The empty index; `capacity` (keys per map of a queue) only for tests. */
  static empty(capacity: number = spillAt): UniqueIndex {
    return new UniqueIndex(new Version(new Table(capacity)), 0, undefined, capacity);
  }

  /** An index of `pairs` ((queue, key, holders ascending), each pair once), in O(n). */
  static of(
    pairs: Iterable<readonly [string, string, ReadonlyArray<number>]>,
    capacity: number = spillAt,
  ): UniqueIndex {
    const table = new Table(capacity);
    let size = 0;
    for (const [queue, uniqueKey, holders] of pairs) {
      const [only] = holders;
      table.put(queue, uniqueKey, holders.length === 1 && only !== undefined ? only : holders);
      size++;
    }
    return new UniqueIndex(new Version(table), size, undefined, capacity);
  }

  /** The ids of the jobs of `queue` holding `uniqueKey`, ascending; undefined when none ever did. */
  holders(queue: string, uniqueKey: string): ReadonlyArray<number> | undefined {
    return listOf(tableOf(this.version).get(queue, uniqueKey));
  }

  /**
   * The index with `jobId` appended to the holders of (queue, uniqueKey).
   * Every version stays as it was, except, as with every map of a state,
   * the ones made under the same `edit` as this update: an index made
   * under `edit` is extended in place, its run kept as one change (one
   * record per batch rather than three objects per insert, which the
   * young generation would copy while the batch is in flight).
   */
  withHolder(queue: string, uniqueKey: string, jobId: number, edit?: Edit): UniqueIndex {
    // The empty index has nothing to share: a first key starts a table of
    // its own. Every fold from `State.initialState` starts from one empty
    // index; sharing its table, each fold's first read turned the table back
    // through the previous fold's every key, and the empty index kept that
    // fold's table alive through its change record.
    if (this.count === 0) {
      const fresh = new Table(this.capacity);
      fresh.put(queue, uniqueKey, jobId);
      return new UniqueIndex(new Version(fresh), 1, undefined, this.capacity);
    }
    const table = tableOf(this.version);
    const before = table.get(queue, uniqueKey);
    table.put(queue, uniqueKey, withId(before, jobId));
    const count = before === undefined ? this.count + 1 : this.count;
    const run = this.run;
    // The run's change still leads to this version (no reroot since).
    if (edit !== undefined && run?.edit === edit && run.from.place === run.change) {
      run.change.entries.push(queue, uniqueKey, before);
      this.count = count;
      return this;
    }
    const next = new Version(table);
    const change = new Change(entriesOf(queue, uniqueKey, before), next);
    const from = this.version;
    from.place = change;
    const nextRun = edit === undefined ? undefined : { edit, from, change };
    return new UniqueIndex(next, count, nextRun, this.capacity);
  }

  /**
   * The holders under a key `uniqueIndexKey` joined (the index's view
   * before 2026-12-02, kept for tests and tools; the deciders and the fold
   * use `holders`).
   */
  get(indexKey: string): ReadonlyArray<number> | undefined {
    const pair = splitIndexKey(indexKey);
    return pair === undefined ? undefined : this.holders(pair[0], pair[1]);
  }

  /** Per queue, the number of keys in each of its tables (for tests: a table holds at most 2^23). */
  tableSizes(): ReadonlyMap<string, ReadonlyArray<number>> {
    return tableOf(this.version).tableSizes();
  }

  /** Every (joined key, holders), in the joined keys' order: O(n log n), for tests and tools. */
  entries(): IterableIterator<readonly [string, ReadonlyArray<number>]> {
    const all: Array<readonly [string, ReadonlyArray<number>]> = [];
    for (const [queue, uniqueKey, holders] of tableOf(this.version).pairs()) {
      all.push([joinedKey(queue, uniqueKey), listOf(holders) ?? []]);
    }
    all.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return all.values();
  }
}
