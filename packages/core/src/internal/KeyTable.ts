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
 * The keys and values themselves sit in two lists in the order they were
 * added (a removed key's place is reused), and each slot holds the key's
 * hash and its place there, as CPython's compact dict does. Growing the
 * table then allocates and fills one `Int32Array` and never touches a key:
 * with a slot per key in JavaScript arrays, each doubling allocated two
 * arrays of holes (~30 ns a slot at 2^20 slots) and wrote every key again,
 * a third of a unique insert's index cost in the engine (2026-12-04).
 *
 * Each list is kept in chunks of 4,096 places, each an ordinary heap
 * object: one growing array past 16,384 elements lives in V8's large-object
 * space, and each of its regrowths maps fresh pages and copies it whole
 * (~95 ns a key for each of the two lists, measured by pushing 131,072
 * keys; 2 ns in chunks: 2026-12-04).
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

/** log2 of the places in a chunk of `keys` and `values`: 4,096 (32 KiB each, under V8's large-object size). */
const chunkBitsDefault = 12;

/** The table; `hash` only for tests (a planted weak hash forces collisions). */
export class KeyTable<V extends NonNullable<unknown>> {
  // Two int32s per slot: the key's hash (0: an empty slot), then its place
  // in `keys` and `values`. A probe reads one cache line for several slots.
  private slots = new Int32Array(initialSlots * 2);
  private mask = initialSlots - 1;
  // The keys and values by place, chunk `place >>> chunkBits` at index
  // `place & chunkMask`; `places` counts the places ever used.
  private readonly keys: Array<Array<string | undefined>> = [];
  private readonly values: Array<Array<V | undefined>> = [];
  private places = 0;
  private readonly chunkMask: number;
  // Places of removed keys, taken again before the lists grow.
  private readonly free: Array<number> = [];
  private count = 0;
  // The last key `get` did not find, its hash, and the empty slot its probe
  // stopped at: the unique index looks a new key up, then adds it, and
  // `set` then neither hashes nor probes again. Any write forgets it.
  private missKey: string | undefined = undefined;
  private missHash = 0;
  private missSlot = 0;

  /** `hash` and `chunkBits` (log2 of a chunk's places) only for tests. */
  constructor(
    private readonly hash: KeyHash = keyHash,
    private readonly chunkBits: number = chunkBitsDefault,
  ) {
    this.chunkMask = (1 << chunkBits) - 1;
  }

  /** The number of keys held. */
  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    const hash = this.hash(key);
    const slot = this.find(key, hash);
    if (slot >= 0) return this.valueAt(this.placeOf(slot));
    this.missKey = key;
    this.missHash = hash;
    this.missSlot = ~slot;
    return undefined;
  }

  set(key: string, value: V): void {
    if (key === this.missKey) {
      this.missKey = undefined;
      this.add(this.missHash, this.missSlot, key, value);
      return;
    }
    this.missKey = undefined;
    const hash = this.hash(key);
    const slot = this.find(key, hash);
    if (slot >= 0) this.replace(this.placeOf(slot), value);
    else this.add(hash, ~slot, key, value);
  }

  delete(key: string): void {
    this.missKey = undefined;
    const slot = this.find(key, this.hash(key));
    if (slot < 0) return;
    const place = this.placeOf(slot);
    this.put(place, undefined, undefined);
    this.free.push(place);
    this.count--;
    this.closeGap(slot);
  }

  /** Every (key, value), in no particular order. */
  *entries(): IterableIterator<readonly [string, V]> {
    for (let place = 0; place < this.places; place++) {
      const key = this.keyAt(place);
      const value = this.valueAt(place);
      if (key !== undefined && value !== undefined) yield [key, value];
    }
  }

  /** The place in `keys` of the key at `slot`. */
  private placeOf(slot: number): number {
    return this.slots[slot * 2 + 1] ?? 0;
  }

  private keyAt(place: number): string | undefined {
    return this.keys[place >>> this.chunkBits]?.[place & this.chunkMask];
  }

  private valueAt(place: number): V | undefined {
    return this.values[place >>> this.chunkBits]?.[place & this.chunkMask];
  }

  /** Replaces the value at `place`, a place in use. */
  private replace(place: number, value: V): void {
    const values = this.values[place >>> this.chunkBits];
    if (values !== undefined) values[place & this.chunkMask] = value;
  }

  /** Writes `place`'s key and value (the first place past the last chunk opens the next one). */
  private put(place: number, key: string | undefined, value: V | undefined): void {
    const chunk = place >>> this.chunkBits;
    const at = place & this.chunkMask;
    let keys = this.keys[chunk];
    let values = this.values[chunk];
    if (keys === undefined || values === undefined) {
      // Of their final length at once: no regrowth while the chunk fills.
      keys = new Array<string | undefined>(this.chunkMask + 1);
      values = new Array<V | undefined>(this.chunkMask + 1);
      this.keys.push(keys);
      this.values.push(values);
    }
    keys[at] = key;
    values[at] = value;
  }

  /** The slot holding `key`, or, when absent, `~slot` of the empty slot its probe stopped at. */
  private find(key: string, hash: number): number {
    const { slots, mask } = this;
    let slot = hash & mask;
    for (;;) {
      const held = slots[slot * 2];
      if (held === 0) return ~slot;
      if (held === hash && this.keyAt(slots[slot * 2 + 1] ?? 0) === key) return slot;
      slot = (slot + 1) & mask;
    }
  }

  /** Adds an absent key whose probe stopped at the empty slot `empty`. */
  private add(hash: number, empty: number, key: string, value: V): void {
    const place = this.free.pop() ?? this.places++;
    this.put(place, key, value);
    this.slots[empty * 2] = hash;
    this.slots[empty * 2 + 1] = place;
    this.count++;
    // At most half full, so a probe for an absent key stops soon.
    if (this.count * 2 > this.mask + 1) this.grow();
  }

  /** Twice the slots, each key's hash and place moved to its slot there. */
  private grow(): void {
    const from = this.slots;
    const slotCount = (this.mask + 1) * 2;
    const slots = new Int32Array(slotCount * 2);
    const mask = slotCount - 1;
    for (let index = 0; index < from.length; index += 2) {
      const hash = from[index] ?? 0;
      if (hash === 0) continue;
      let slot = hash & mask;
      while (slots[slot * 2] !== 0) slot = (slot + 1) & mask;
      slots[slot * 2] = hash;
      slots[slot * 2 + 1] = from[index + 1] ?? 0;
    }
    this.slots = slots;
    this.mask = mask;
  }

  /**
   * Empties `gap` and moves back the keys after it in its run that probed
   * past it (backward-shift deletion: no tombstones, so probes stay short).
   */
  private closeGap(gap: number): void {
    const { slots, mask } = this;
    let empty = gap;
    let slot = gap;
    for (;;) {
      slot = (slot + 1) & mask;
      const held = slots[slot * 2] ?? 0;
      if (held === 0) break;
      const home = held & mask;
      // The key at `slot` may move to `empty` when its home is not in the
      // cyclic interval (empty, slot].
      const stays = empty <= slot ? home > empty && home <= slot : home > empty || home <= slot;
      if (stays) continue;
      slots[empty * 2] = held;
      slots[empty * 2 + 1] = slots[slot * 2 + 1] ?? 0;
      empty = slot;
    }
    slots[empty * 2] = 0;
    slots[empty * 2 + 1] = 0;
  }
}
