/**
 * A mutable hash table from strings to values, with open addressing and
 * linear probing, the unique index's store of one queue's keys
 * (`UniqueIndex`, docs/core.md "One table for every version of the unique
 * index", 2026-12-03).
 *
 * Why not a native `Map`: a probe for a key a `Map` does not hold (what
 * every new unique key asks) walks its bucket's chain, reading each entry's
 * key string to compare hashes, a few cache misses per probe in a map of
 * hundreds of thousands of keys. Here each slot's 32-bit hash sits in one
 * `Int32Array`, so such a probe reads one cache line and, almost always,
 * no string at all. And a `Map` holds at most 2^24 entries.
 *
 * The hash is unkeyed (the core is deterministic), so strings chosen to
 * collide make probes linear in their number: keys are the application's
 * own, and collisions cost time, never a wrong answer.
 */

/** A string's hash for the table: a mixed 32-bit integer, never 0 (0 marks an empty slot). */
export type KeyHash = (key: string) => number;

/** The default: the ×31 polynomial over the key's UTF-16 units, then murmur3's finalizer. */
export const keyHash: KeyHash = (key) => {
  let hash = 0;
  for (let index = 0; index < key.length; index++) {
    hash = (Math.imul(hash, 31) + key.charCodeAt(index)) | 0;
  }
  // Neighbouring keys (`key-1`, `key-2`) have neighbouring polynomials:
  // mixed, they spread over the table instead of filling one run of slots.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash === 0 ? 1 : hash;
};

const initialSlots = 8;

/** The table; `hash` only for tests (a planted weak hash forces collisions). */
export class KeyTable<V extends NonNullable<unknown>> {
  private hashes = new Int32Array(initialSlots);
  private keys: Array<string | undefined> = new Array(initialSlots);
  private values: Array<V | undefined> = new Array(initialSlots);
  private mask = initialSlots - 1;
  private count = 0;

  constructor(private readonly hash: KeyHash = keyHash) {}

  /** The number of keys held. */
  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    const slot = this.find(key, this.hash(key));
    return slot < 0 ? undefined : this.values[slot];
  }

  set(key: string, value: V): void {
    const hash = this.hash(key);
    const slot = this.find(key, hash);
    if (slot >= 0) {
      this.values[slot] = value;
      return;
    }
    // At most half full, so a probe for an absent key stops soon.
    if ((this.count + 1) * 2 > this.hashes.length) this.grow();
    this.place(hash, key, value);
    this.count++;
  }

  delete(key: string): void {
    const slot = this.find(key, this.hash(key));
    if (slot < 0) return;
    this.count--;
    this.closeGap(slot);
  }

  /** Every (key, value), in no particular order. */
  *entries(): IterableIterator<readonly [string, V]> {
    for (let slot = 0; slot < this.hashes.length; slot++) {
      const key = this.keys[slot];
      const value = this.values[slot];
      if (key !== undefined && value !== undefined) yield [key, value];
    }
  }

  /** The slot holding `key`, or -1. */
  private find(key: string, hash: number): number {
    const { hashes, keys, mask } = this;
    let slot = hash & mask;
    for (;;) {
      const held = hashes[slot];
      if (held === 0) return -1;
      if (held === hash && keys[slot] === key) return slot;
      slot = (slot + 1) & mask;
    }
  }

  /** Writes a key known to be absent into the first free slot of its run. */
  private place(hash: number, key: string | undefined, value: V | undefined): void {
    const { hashes, keys, values, mask } = this;
    let slot = hash & mask;
    while (hashes[slot] !== 0) slot = (slot + 1) & mask;
    hashes[slot] = hash;
    keys[slot] = key;
    values[slot] = value;
  }

  private grow(): void {
    const { hashes, keys, values } = this;
    const slots = hashes.length * 2;
    this.hashes = new Int32Array(slots);
    this.keys = new Array(slots);
    this.values = new Array(slots);
    this.mask = slots - 1;
    for (let slot = 0; slot < hashes.length; slot++) {
      const held = hashes[slot] ?? 0;
      if (held !== 0) this.place(held, keys[slot], values[slot]);
    }
  }

  /**
   * Empties `gap` and moves back the keys after it in its run that probed
   * past it (backward-shift deletion: no tombstones, so probes stay short).
   */
  private closeGap(gap: number): void {
    const { hashes, keys, values, mask } = this;
    let empty = gap;
    let slot = gap;
    for (;;) {
      slot = (slot + 1) & mask;
      const held = hashes[slot] ?? 0;
      if (held === 0) break;
      const home = held & mask;
      // The key at `slot` may move to `empty` when its home is not in the
      // cyclic interval (empty, slot].
      const stays = empty <= slot ? home > empty && home <= slot : home > empty || home <= slot;
      if (stays) continue;
      hashes[empty] = held;
      keys[empty] = keys[slot];
      values[empty] = values[slot];
      empty = slot;
    }
    hashes[empty] = 0;
    keys[empty] = undefined;
    values[empty] = undefined;
  }
}
