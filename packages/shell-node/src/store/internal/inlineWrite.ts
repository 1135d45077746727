import type { DurabilityPolicy } from "../StoreOptions.js";

/**
 * When the writer's direct path makes a write the store waits for on the
 * caller's thread (the event loop) instead of handing it to the thread
 * pool: the pure leaf of that decision, and the record of the inline
 * writes made.
 *
 * A one-producer awaited insert under `Maximal` spent more time in the
 * hand-off to libuv's thread pool and back (dispatch, the pool thread's
 * wake-up, the completion's trip through the poll phase) than the rest of
 * its path; Redis writes and syncs its AOF on its one thread. Under
 * `Segment` the write only copies into the page cache (microseconds), so
 * the hop is nearly all of it. The price is that the loop waits while the
 * write runs: for the device under `Maximal`, and under `Segment` for the
 * rare page-cache write that waits on writeback (a page a sync is writing
 * out, or dirty-page throttling). So the inline path is bounded
 * (docs/disk.md, "Durable writes on the caller's thread"):
 * - only a small batch (`bytesMaxFor`: under `Maximal` one page, the
 *   device's smallest write, since a larger batch means many producers,
 *   whose next batch forms while the pool writes this one; under `Segment`
 *   64 KiB, the size `Throughput` writes inline);
 * - only when nothing else is pending (a batch cut short by a size limit
 *   goes to the pool, its rest right behind it);
 * - not after an inline write that took more than `inlineSlowMs`: a disk
 *   that is slow now (writeback, another process's syncs, a failing
 *   device) is given to the pool for at least a hold, and then until a
 *   write there takes at most `inlineSlowMs` again (measured from the
 *   hand-off to the answer on the loop, which only overstates it). The
 *   hold starts at `inlineHoldMs` and doubles with each slow inline write
 *   up to `inlineHoldMsMax`, back to the start after `fastWritesToReset`
 *   fast inline writes in a row: a disk that stays slow stalls the loop
 *   ever more rarely.
 *
 * - at most one per turn of the event loop: a producer that awaits each
 *   insert would otherwise chain write, answer, next insert and next write
 *   in microtasks and never let the loop turn; a second inline write in a
 *   turn waits for the next check phase (`setImmediate`), so timers and
 *   I/O run between any two.
 *
 * The bound this gives the host's loop: it waits for at most one such
 * write per turn, of at most 4 KiB (`Maximal`) or 64 KiB (`Segment`), and
 * for at most one write slower than `inlineSlowMs` per hold (10 a second
 * at most, fewer while the disk stays slow); how long that one write takes
 * is the device's (measured in docs/benchmarks.md). `Throughput`'s handle
 * writes inline by itself (`Disk.OpenOptions.inlineWrites`: nothing there
 * is waited for, so it is not held).
 */

/** The largest batch written inline under `Maximal`: one 4 KiB page. */
export const inlineBytesMax = 4096;

/** The largest batch written inline under `Segment`: a page-cache copy, as `Throughput`'s. */
export const inlineBufferedBytesMax = 64 * 1024;

/**
 * The largest batch this policy writes inline through this path; 0 for
 * none (`Throughput`, whose handle writes inline by itself, and a
 * `Maximal` handle without `O_DSYNC`, whose writes are not durable when
 * they return).
 */
export const bytesMaxFor = (durability: DurabilityPolicy, dataSync: boolean): number => {
  if (durability === "Maximal") return dataSync ? inlineBytesMax : 0;
  return durability === "Segment" && !dataSync ? inlineBufferedBytesMax : 0;
};

/** An inline write that took longer than this holds the inline path off. */
export const inlineSlowMs = 2;

/** The first hold after a slow inline write. */
export const inlineHoldMs = 100;

/** The longest hold: the disk is probed again at least this often. */
export const inlineHoldMsMax = 6400;

/** Fast inline writes in a row after which the hold is back to `inlineHoldMs`. */
export const fastWritesToReset = 64;

/** The inline writes made by one writer: how many, how many were slow, the slowest. */
export interface InlineRecord {
  writes: number;
  slow: number;
  slowestMs: number;
  /** Durable writes go to the pool until this time (`performance.now()`, ms) and one there is fast again. */
  held: boolean;
  heldUntil: number;
  /** The hold the next slow inline write sets. */
  holdMs: number;
  /** Fast inline writes since the last slow one. */
  fastInARow: number;
  /** An inline write was made in this turn of the event loop. */
  turnUsed: boolean;
  /** When the durable write in the pool now was handed off (`performance.now()`, ms), or NaN. */
  poolStartedAt: number;
}

/** A record of no inline write. */
export const makeRecord = (): InlineRecord => ({
  writes: 0,
  slow: 0,
  slowestMs: 0,
  held: false,
  heldUntil: Number.NEGATIVE_INFINITY,
  holdMs: inlineHoldMs,
  fastInARow: 0,
  turnUsed: false,
  poolStartedAt: Number.NaN,
});

/** What the decision reads of the batch and the writer. */
export interface InlineInputs {
  /** `bytesMaxFor` the policy and the handle: 0 when this path never writes inline. */
  readonly bytesMax: number;
  readonly bytes: number;
  /** Records still pending behind this batch. */
  readonly pendingRecords: number;
}

/** Whether this write may be made on the caller's thread (in this turn or the next). */
export const mayInline = (record: InlineRecord, inputs: InlineInputs): boolean =>
  inputs.bytesMax > 0 &&
  inputs.bytes <= inputs.bytesMax &&
  inputs.pendingRecords === 0 &&
  !record.held;

/** Where a write goes: inline now, inline at the loop's next check phase, or the pool. */
export type InlinePlan = "Now" | "NextTurn" | "Pool";

/** `mayInline`, and at most one inline write per turn of the event loop. */
export const plan = (record: InlineRecord, inputs: InlineInputs): InlinePlan => {
  if (!mayInline(record, inputs)) return "Pool";
  return record.turnUsed ? "NextTurn" : "Now";
};

/** Notes an inline write that ran from `started` to `ended` (ms). */
export const note = (record: InlineRecord, started: number, ended: number): void => {
  const tookMs = ended - started;
  record.writes += 1;
  if (tookMs > record.slowestMs) record.slowestMs = tookMs;
  if (tookMs > inlineSlowMs) {
    record.slow += 1;
    record.held = true;
    record.heldUntil = ended + record.holdMs;
    record.holdMs = Math.min(record.holdMs * 2, inlineHoldMsMax);
    record.fastInARow = 0;
    return;
  }
  record.fastInARow += 1;
  if (record.fastInARow >= fastWritesToReset) record.holdMs = inlineHoldMs;
};

/** Notes that a durable write was handed to the pool at `started` (ms). */
export const notePoolStart = (record: InlineRecord, started: number): void => {
  record.poolStartedAt = started;
};

/** A durable write handed to the pool answered at `ended`: a fast one lifts the hold. */
export const notePoolEnd = (record: InlineRecord, ended: number): void => {
  const started = record.poolStartedAt;
  if (Number.isNaN(started)) return;
  record.poolStartedAt = Number.NaN;
  if (ended >= record.heldUntil && ended - started <= inlineSlowMs) record.held = false;
};
