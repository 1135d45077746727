/**
 * The unique keys of inserts a runtime has decided but not folded yet
 * (`Decide.insertJobsPending`): per (queue, key), the job holding it. One
 * table serves every drain of an engine: `clear` empties it in O(1) and its
 * storage is written again by the next drain's keys.
 *
 * Why not a `Map` per drain (its form until 2026-12-04): a drain of 256
 * keyed inserts grew a fresh map from 4 entries to 256, ~100 bytes
 * allocated and ~50 ns per insert, on every drain. Here each slot carries
 * the number of the drain (`epoch`) that wrote it, and a slot of an earlier
 * one reads as empty: clearing is one increment, and nothing is allocated
 * once the table has grown to the largest drain.
 *
 * Open addressing with linear probing on the key's `keyHash`; nothing is
 * ever removed within a drain, so no deletion is needed.
 */
import { type KeyHash, keyHash } from "./KeyTable.js";

const initialSlots = 64;

/**
 * A table past this many slots is dropped at `clear` when the drain that
 * grew it used few of them: one burst of inserts does not leave every
 * later drain with a large table of stale references.
 */
const keptSlotsMax = 1 << 12;

/** The pending keys of a runtime's drains, reused from one drain to the next. */
export class PendingKeys {
  // Per slot: the epoch that wrote it (an earlier one: empty), the key's
  // hash, its queue and key, and the job holding them.
  private epochs = new Int32Array(initialSlots);
  private hashes = new Int32Array(initialSlots);
  private queues: Array<string | undefined> = new Array(initialSlots);
  private keys: Array<string | undefined> = new Array(initialSlots);
  private jobIds: Array<number> = new Array(initialSlots);
  private mask = initialSlots - 1;
  private epoch = 1;
  private count = 0;
  // The last pair `holder` did not find, its hash, and the empty slot its
  // probe stopped at: the decider looks a key up, then adds it, with one
  // hash and one probe. Any write forgets it.
  private missQueue: string | undefined = undefined;
  private missKey: string | undefined = undefined;
  private missHash = 0;
  private missSlot = 0;

  /** `hash` only for tests (a planted weak hash forces collisions). */
  constructor(private readonly hash: KeyHash = keyHash) {}

  /** The number of (queue, key) pairs held. */
  get size(): number {
    return this.count;
  }

  /** The job holding `uniqueKey` of `queue`, or undefined. */
  holder(queue: string, uniqueKey: string): number | undefined {
    const hash = this.hash(uniqueKey);
    const slot = this.find(queue, uniqueKey, hash);
    if (slot >= 0) return this.jobIds[slot];
    this.missQueue = queue;
    this.missKey = uniqueKey;
    this.missHash = hash;
    this.missSlot = ~slot;
    return undefined;
  }

  /** Records that `jobId` holds `uniqueKey` of `queue` (replacing any holder before). */
  add(queue: string, uniqueKey: string, jobId: number): void {
    const remembered = uniqueKey === this.missKey && queue === this.missQueue;
    this.missKey = undefined;
    const hash = remembered ? this.missHash : this.hash(uniqueKey);
    const found = remembered ? ~this.missSlot : this.find(queue, uniqueKey, hash);
    if (found >= 0) {
      this.jobIds[found] = jobId;
      return;
    }
    this.write(~found, hash, queue, uniqueKey, jobId);
    this.count++;
    // At most half full, so a probe for an absent key stops soon.
    if (this.count * 2 > this.mask + 1) this.grow();
  }

  /** Empties the table (O(1), unless a large table is dropped). */
  clear(): void {
    const slotCount = this.mask + 1;
    if (slotCount > keptSlotsMax && this.count * 8 < slotCount) this.reset(initialSlots);
    else if (this.epoch === 0x7fffffff) this.reset(slotCount);
    else this.epoch++;
    this.count = 0;
    this.missKey = undefined;
  }

  /** The slot holding the pair, or `~slot` of the empty slot its probe stopped at. */
  private find(queue: string, uniqueKey: string, hash: number): number {
    const { epochs, hashes, keys, queues, mask, epoch } = this;
    let slot = hash & mask;
    while (epochs[slot] === epoch) {
      if (hashes[slot] === hash && keys[slot] === uniqueKey && queues[slot] === queue) return slot;
      slot = (slot + 1) & mask;
    }
    return ~slot;
  }

  private write(slot: number, hash: number, queue: string, uniqueKey: string, jobId: number): void {
    this.epochs[slot] = this.epoch;
    this.hashes[slot] = hash;
    this.queues[slot] = queue;
    this.keys[slot] = uniqueKey;
    this.jobIds[slot] = jobId;
  }

  /** Twice the slots, the current epoch's pairs moved over. */
  private grow(): void {
    const { epochs, hashes, queues, keys, jobIds, epoch } = this;
    this.reset((this.mask + 1) * 2);
    for (let slot = 0; slot < epochs.length; slot++) {
      const queue = queues[slot];
      const uniqueKey = keys[slot];
      const jobId = jobIds[slot];
      if (epochs[slot] !== epoch || queue === undefined || uniqueKey === undefined) continue;
      if (jobId === undefined) continue;
      const hash = hashes[slot] ?? 0;
      this.write(~this.find(queue, uniqueKey, hash), hash, queue, uniqueKey, jobId);
    }
  }

  /** Fresh storage of `slotCount` slots, every one empty (epoch 1). */
  private reset(slotCount: number): void {
    this.epochs = new Int32Array(slotCount);
    this.hashes = new Int32Array(slotCount);
    this.queues = new Array(slotCount);
    this.keys = new Array(slotCount);
    this.jobIds = new Array(slotCount);
    this.mask = slotCount - 1;
    this.epoch = 1;
  }
}
