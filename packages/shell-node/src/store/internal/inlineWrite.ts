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
 * - within a budget of loop time for slow writes: an inline write that
 *   took more than `inlineSlowMs` spends its whole duration from a budget
 *   of `slowBudgetMs`, which refills at `slowBudgetRate` of the time that
 *   passes; once it is spent, writes go to the pool until it has refilled
 *   to zero (a disk that is slow now, from writeback, another process's
 *   syncs or a failing device, is probed once per refill). The odd slow
 *   write of a healthy device (this VM's: a few in a thousand, 2–8 ms)
 *   costs nothing more than its own wait; a disk that stays slow stalls
 *   the loop for at most that share of the time.
 *
 * - at most one per turn of the event loop: a producer that awaits each
 *   insert would otherwise chain write, answer, next insert and next write
 *   in microtasks and never let the loop turn; a second inline write in a
 *   turn waits for the next check phase (`setImmediate`), so timers and
 *   I/O run between any two. Under `Segment` (since 2026-12-05) writes
 *   made within `chainBudgetMs` of the turn's first go at once too
 *   (`chains`): a page-cache copy each, not a device's wait.
 *
 * The bound this gives the host's loop: it waits for at most one such
 * write per turn, of at most 4 KiB (`Maximal`), or for the writes of
 * `chainBudgetMs` plus one of at most 64 KiB (`Segment`), and over any
 * span of t ms for writes slower than `inlineSlowMs` for at most
 * `slowBudgetMs` + `slowBudgetRate` × t, plus the one write that
 * overdraws the budget (the loop learns a write is slow only once it
 * returned: how long that one takes is the device's; measured in
 * docs/benchmarks.md). `Throughput`'s handle
 * writes inline by itself (`Disk.OpenOptions.inlineWrites`: nothing there
 * is waited for, so it is not held), and its writes share the same
 * turn (`turnPlan`: one record of the turn for both, since 2026-12-05).
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

/** An inline write that took longer than this spends its time from the slow-write budget. */
export const inlineSlowMs = 2;

/** The loop time slow inline writes may take at once (ms): the budget's capacity. */
export const slowBudgetMs = 50;

/** The budget's refill, as a share of the time that passes: 50 ms a second. */
export const slowBudgetRate = 0.05;

/** The inline writes made by one writer: how many, how many were slow, the slowest. */
export interface InlineRecord {
  writes: number;
  slow: number;
  slowestMs: number;
  /** The slow-write budget (ms) as of `budgetAt`; below zero while overdrawn. */
  budgetMs: number;
  /** When the budget was last spent (`performance.now()`, ms). */
  budgetAt: number;
  /** Writes go to the pool until `heldUntil` (`performance.now()`, ms): the budget is overdrawn. */
  held: boolean;
  heldUntil: number;
  /**
   * When the first write on the caller's thread was made in this turn of
   * the event loop (`performance.now()`, ms), NaN when none was: this
   * path's inline writes and `Throughput`'s handle's own share the turn
   * (`turnPlan`).
   */
  turnStartedAt: number;
}

/** A record of no inline write, its budget whole. */
export const makeRecord = (): InlineRecord => ({
  writes: 0,
  slow: 0,
  slowestMs: 0,
  budgetMs: slowBudgetMs,
  budgetAt: Number.NEGATIVE_INFINITY,
  held: false,
  heldUntil: Number.NEGATIVE_INFINITY,
  turnStartedAt: Number.NaN,
});

/** What the decision reads of the batch and the writer. */
export interface InlineInputs {
  /** `bytesMaxFor` the policy and the handle: 0 when this path never writes inline. */
  readonly bytesMax: number;
  readonly bytes: number;
  /** Records still pending behind this batch. */
  readonly pendingRecords: number;
}

/**
 * Whether a policy's writes on the caller's thread chain within a turn of
 * the loop for up to `chainBudgetMs` (2026-12-05): `Segment`'s inline
 * writes and `Throughput`'s handle's, each a page-cache copy of
 * microseconds; not `Maximal`'s, each a wait for the device, one per turn.
 */
export const chains = (durability: DurabilityPolicy): boolean => durability !== "Maximal";

/**
 * Whether the policy's segment handle makes its own writes on the caller's
 * thread (`appendOptions`' `inlineWrites`: `Throughput`), so that its
 * `now` writes take their turn as this path's do.
 */
export const handleWritesInline = (durability: DurabilityPolicy): boolean =>
  // Asked once a write: `appendOptions` would build an object each time
  // (`inlineWrite.test.ts` holds the two to the same answer).
  durability === "Throughput";

/** Whether this write may be made on the caller's thread by this path (in this turn or the next). */
export const mayInline = (record: InlineRecord, inputs: InlineInputs): boolean =>
  inputs.bytesMax > 0 &&
  inputs.bytes <= inputs.bytesMax &&
  inputs.pendingRecords === 0 &&
  !record.held;

/** How a write on the caller's thread fits its turn of the loop (`turnPlan`). */
export type TurnPlan = "Starts" | "Now" | "NextTurn";

/**
 * Where a write on the caller's thread at `now` (ms) goes: the first of its
 * turn of the event loop (`Starts`: the caller ends the turn at the loop's
 * next check phase, `endTurn`); another at once, for a policy whose writes
 * chain, within `chainBudgetMs` of the turn's first (`Now`); else at the
 * loop's next turn (`NextTurn`), so that timers and I/O run between.
 */
export const turnPlan = (record: InlineRecord, now: number, chaining: boolean): TurnPlan => {
  if (Number.isNaN(record.turnStartedAt)) {
    record.turnStartedAt = now;
    return "Starts";
  }
  return chaining && now - record.turnStartedAt <= chainBudgetMs ? "Now" : "NextTurn";
};

/** The loop turned: the next write on the caller's thread starts a new turn. */
export const endTurn = (record: InlineRecord): void => {
  record.turnStartedAt = Number.NaN;
};

/** Notes an inline write that ran from `started` to `ended` (ms): a slow one spends from the budget. */
export const note = (record: InlineRecord, started: number, ended: number): void => {
  const tookMs = ended - started;
  record.writes += 1;
  if (tookMs > record.slowestMs) record.slowestMs = tookMs;
  if (tookMs <= inlineSlowMs) return;
  record.slow += 1;
  const refilled = record.budgetMs + (started - record.budgetAt) * slowBudgetRate;
  record.budgetMs = Math.min(slowBudgetMs, refilled) - tookMs;
  record.budgetAt = ended;
  if (record.budgetMs >= 0) return;
  record.held = true;
  record.heldUntil = ended - record.budgetMs / slowBudgetRate;
};

/**
 * How long the writes of one turn of the event loop may chain on the
 * caller's thread (ms), for a policy whose writes chain (`chains`), before
 * the next waits for the loop's next turn.
 *
 * `Throughput`'s handle writes a batch into the page cache on the caller's
 * thread (`Disk.OpenOptions.inlineWrites`) and answers at once: a worker
 * with a backlog then chains answer, handler, next command and next write
 * in microtasks for as long as the backlog lasts, and the host's loop
 * never turns (measured 2026-12-05: no 10 ms timer fired and no `fs.stat`
 * returned while 40,000 jobs were worked, 1.1 s; a worker's own timeouts
 * and a SIGTERM wait on that loop). One write per turn, as for the inline
 * path above, would cost a turn per commit; a budget keeps the batching
 * and bounds the wait: the loop turns at least every `chainBudgetMs` plus
 * one batch's write. docs/disk.md, "`Throughput`'s chain of writes is bounded".
 */
export const chainBudgetMs = 1;

/** At `now` (ms), lifts the hold once the budget has refilled to zero. */
export const lift = (record: InlineRecord, now: number): void => {
  if (now >= record.heldUntil) record.held = false;
};
