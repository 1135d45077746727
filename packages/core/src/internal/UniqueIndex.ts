/**
 * The state's unique index (`State.indexes.unique`): per (queue, unique
 * key), the ids of the jobs holding the key, ascending. In memory only: the
 * log and the events know nothing of it (docs/core.md, "The unique index
 * keyed by a hash", 2026-12-02).
 *
 * Persistent like every index: a `SortedMap` from a 30-bit hash of the pair
 * (a small integer, compared inline, no string read) to a chain of the
 * pairs with that hash, each entry holding its full queue and key, which a
 * lookup compares for equality. It replaced a `SortedMap` keyed by the
 * joined string (`uniqueIndexKey`): every lookup then compared ~17 joined
 * strings sharing a long prefix (the queue's and the keys' own), half of a
 * keyed insert's decision at 256 producers.
 *
 * The hash is the polynomial one of Java's `String.hashCode` over the queue
 * then the key: keys that differ only in their last characters (`key-1`,
 * `key-2`...) land on neighbouring hashes, so a drain's run of sequential
 * keys updates neighbouring leaves, as the joined strings' order did.
 * Strings chosen to collide make a chain as long as the set: its lookups
 * are linear in it (accepted: keys are the application's own, and a chain
 * costs equality checks, not a wrong answer).
 */
import type { Edit } from "./Edit.js";
import { compareNumbers, SortedMap } from "./SortedMap.js";

/** A hash of a (queue, key) pair: an integer 0..2^30-1 (a V8 small integer). */
export type Hash = (queue: string, uniqueKey: string) => number;

/** One pair of a hash, and the next pair with the same hash. Never changed once made. */
interface Entry {
  readonly queue: string;
  readonly uniqueKey: string;
  readonly holders: ReadonlyArray<number>;
  readonly next: Entry | undefined;
}

const hashMask = 0x3fffffff;

/** The default hash: 31-polynomial over the queue, its length, then the key. */
export const hashPair: Hash = (queue, uniqueKey) => {
  let hash = 0;
  for (let index = 0; index < queue.length; index++) {
    hash = (Math.imul(hash, 31) + queue.charCodeAt(index)) | 0;
  }
  // The queue's length between the two: ("ab", "c") and ("a", "bc") differ.
  hash = (Math.imul(hash, 31) + queue.length) | 0;
  for (let index = 0; index < uniqueKey.length; index++) {
    hash = (Math.imul(hash, 31) + uniqueKey.charCodeAt(index)) | 0;
  }
  return hash & hashMask;
};

// `compareNumbers` itself: the map's searches compare such keys inline.
const compareHashes = compareNumbers;

/** The entry of (queue, uniqueKey) in a chain, if any. */
const inChain = (entry: Entry | undefined, queue: string, uniqueKey: string): Entry | undefined => {
  let at = entry;
  while (at !== undefined && (at.uniqueKey !== uniqueKey || at.queue !== queue)) at = at.next;
  return at;
};

/** `chain` with `found`'s holders replaced (the entries before it copied), or a new head. */
const withEntry = (
  chain: Entry | undefined,
  found: Entry | undefined,
  queue: string,
  uniqueKey: string,
  holders: ReadonlyArray<number>,
): Entry => {
  if (found === undefined) return { queue, uniqueKey, holders, next: chain };
  const replaced: Entry = { queue, uniqueKey, holders, next: found.next };
  return chain === found || chain === undefined
    ? replaced
    : { ...chain, next: withEntry(chain.next, found, queue, uniqueKey, holders) };
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
    private readonly chains: SortedMap<number, Entry>,
    /** The number of (queue, key) pairs held. */
    readonly size: number,
    private readonly hash: Hash,
  ) {}

  /** The empty index; `hash` only for tests (a planted weak hash forces collisions). */
  static empty(hash: Hash = hashPair): UniqueIndex {
    return new UniqueIndex(SortedMap.empty(compareHashes), 0, hash);
  }

  /** An index of `pairs` ((queue, key, holders ascending), each pair once), in O(n log n). */
  static of(
    pairs: Iterable<readonly [string, string, ReadonlyArray<number>]>,
    hash: Hash = hashPair,
  ): UniqueIndex {
    const chains = new Map<number, Entry>();
    let size = 0;
    for (const [queue, uniqueKey, holders] of pairs) {
      const at = hash(queue, uniqueKey);
      chains.set(at, { queue, uniqueKey, holders, next: chains.get(at) });
      size++;
    }
    const hashes = [...chains.keys()].sort(compareHashes);
    const heads: Array<Entry> = [];
    for (const at of hashes) {
      const head = chains.get(at);
      if (head !== undefined) heads.push(head);
    }
    return new UniqueIndex(SortedMap.fromSorted(compareHashes, hashes, heads), size, hash);
  }

  /** The ids of the jobs of `queue` holding `uniqueKey`, ascending; undefined when none ever did. */
  holders(queue: string, uniqueKey: string): ReadonlyArray<number> | undefined {
    return inChain(this.chains.get(this.hash(queue, uniqueKey)), queue, uniqueKey)?.holders;
  }

  /**
   * The index with `jobId` appended to the holders of (queue, uniqueKey):
   * ids only grow, so the list stays ascending. With `edit`, the map's
   * nodes of that run are updated in place (see `Edit`); entries never are.
   */
  withHolder(queue: string, uniqueKey: string, jobId: number, edit?: Edit): UniqueIndex {
    const at = this.hash(queue, uniqueKey);
    const chain = this.chains.get(at);
    const found = inChain(chain, queue, uniqueKey);
    const before = found?.holders ?? [];
    // Built to its length: a spread grows a list of 17 slots for one id.
    const holders = new Array<number>(before.length + 1);
    for (let index = 0; index < before.length; index++) holders[index] = before[index] ?? 0;
    holders[before.length] = jobId;
    const head = withEntry(chain, found, queue, uniqueKey, holders);
    const size = found === undefined ? this.size + 1 : this.size;
    return new UniqueIndex(this.chains.set(at, head, edit), size, this.hash);
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

  /** Every (joined key, holders), in the joined keys' order: O(n log n), for tests and tools. */
  entries(): IterableIterator<readonly [string, ReadonlyArray<number>]> {
    const all: Array<readonly [string, ReadonlyArray<number>]> = [];
    for (const head of this.chains.values()) {
      for (let entry: Entry | undefined = head; entry !== undefined; entry = entry.next) {
        all.push([joinedKey(entry.queue, entry.uniqueKey), entry.holders]);
      }
    }
    all.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return all.values();
  }
}
