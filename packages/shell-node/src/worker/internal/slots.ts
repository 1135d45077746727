/**
 * How many handlers may run, per queue and in all. A slot is held from a
 * handler's start until its attempt's end is recorded (or found recorded
 * by someone else). Once the handler has settled and its end is being
 * recorded (`finishing`), its slot may be claimed again: the next claim
 * then rides the same durable write as that end (one write per job with
 * one worker instead of two), and the job it claims waits, `pending`,
 * until the slot is released, which the same batch's answer does a few
 * turns later. So a queue never runs more handlers than its limit, and
 * the worker's events never show more attempts started and not ended.
 */
import * as Effect from "effect/Effect";
import type * as Engine from "../../engine/Engine.js";

type Lane = Engine.Lane;

/** Counts of one queue, or of the whole worker. */
interface Count {
  /** Attempts started and not released: their handlers run, or their ends are being recorded. */
  held: number;
  /** Of `held`, those whose ends are being recorded (their slots may be claimed again). */
  finishing: number;
  /** Claimed jobs waiting for a slot to be released. */
  pending: number;
  /** Room promised to claims in flight (their limits): not offered to another claim. */
  promised: number;
}

const zero = (): Count => ({ held: 0, finishing: 0, pending: 0, promised: 0 });

/**
 * Room a claim may take: slots not held, plus finishing ones not promised
 * to pending jobs, less what claims in flight may still start.
 */
const claimable = (count: Count, limit: number): number =>
  limit - count.held + count.finishing - count.pending - count.promised;

export class Slots {
  private readonly counts = new Map<string, Count>();
  private readonly all: Count = zero();
  // Claimed jobs waiting for a slot, in claim order.
  private waiting: Array<{ readonly queue: string; readonly start: () => void }> = [];
  // Waits for idleness; every release wakes them all to look again.
  private waiters: Array<() => void> = [];

  constructor(
    /** Each queue's concurrency. */
    private readonly limits: ReadonlyMap<string, number>,
    /** The concurrency of all queues together. */
    private readonly totalMax: number,
  ) {
    for (const queue of limits.keys()) this.counts.set(queue, zero());
  }

  private countOf(queue: string): Count {
    let count = this.counts.get(queue);
    if (count === undefined) {
      count = zero();
      this.counts.set(queue, count);
    }
    return count;
  }

  /** Attempts held or waiting to start, in all: what a close waits for. */
  get busy(): number {
    return this.all.held + this.all.pending;
  }

  /** Room a claim may take in all. */
  free(): number {
    return claimable(this.all, this.totalMax);
  }

  /** Each queue with room for a claim, and how many of its jobs it may take now. */
  lanes(): Array<Lane> {
    const free = this.free();
    const lanes: Array<Lane> = [];
    if (free <= 0) return lanes;
    for (const [queue, limit] of this.limits) {
      const room = Math.min(claimable(this.countOf(queue), limit), free);
      if (room > 0) lanes.push({ queue, limit: room });
    }
    return lanes;
  }

  /**
   * A claim for `lanes` and at most `limit` jobs in all is in flight
   * (`by` 1), or answered (`by` -1): until then its room is not offered to
   * another claim (`lanes`, `free`), so two claims in flight never start
   * more jobs than the slots hold.
   */
  promise(lanes: ReadonlyArray<Lane>, limit: number, by: 1 | -1): void {
    for (const lane of lanes) this.countOf(lane.queue).promised += by * lane.limit;
    this.all.promised += by * limit;
  }

  /** Told each queue whose room for a claim grew (a handler settled, or a slot was released). */
  onRoom: (queue: string) => void = () => {};

  /**
   * A claimed job of `queue`: `start` runs now if a slot is free, else
   * once one is released (the slot of an attempt still finishing).
   */
  admit(queue: string, start: () => void): void {
    if (this.startable(queue)) {
      this.take(queue);
      start();
      return;
    }
    this.countOf(queue).pending += 1;
    this.all.pending += 1;
    this.waiting.push({ queue, start });
  }

  private startable(queue: string): boolean {
    const limit = this.limits.get(queue) ?? 0;
    return this.countOf(queue).held < limit && this.all.held < this.totalMax;
  }

  private take(queue: string): void {
    this.countOf(queue).held += 1;
    this.all.held += 1;
  }

  /** The handler of an attempt of `queue` settled: its end is being recorded. */
  finishing(queue: string): void {
    this.countOf(queue).finishing += 1;
    this.all.finishing += 1;
    this.onRoom(queue);
  }

  /**
   * The attempt of `queue` ended (`finished`: after `finishing`): its slot
   * goes to the first pending job that fits, else back to the claims.
   */
  release(queue: string, finished: boolean): void {
    const count = this.countOf(queue);
    count.held -= 1;
    this.all.held -= 1;
    if (finished) {
      count.finishing -= 1;
      this.all.finishing -= 1;
    }
    // Handed over before anyone waiting for idleness looks: a close never sees
    // a moment with nothing held while a claimed job still waits to start.
    this.startPending();
    this.wakeWaiters();
    // A finished attempt's room was told at `finishing`.
    if (!finished) this.onRoom(queue);
  }

  // Usually one release makes room for the first waiting job and the worker is full again:
  // looking further then is wasted (a release per job, each scanning the rest, at 32 slots).
  private startPending(): void {
    let index = 0;
    while (index < this.waiting.length && this.all.held < this.totalMax) {
      const job = this.waiting[index];
      if (job === undefined || !this.startable(job.queue)) {
        index += 1;
        continue;
      }
      this.waiting.splice(index, 1);
      this.countOf(job.queue).pending -= 1;
      this.all.pending -= 1;
      this.take(job.queue);
      job.start();
    }
  }

  // Every release wakes every wait to look again.
  private wakeWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  // Resolves at the next release (or when interrupted, drops its waiter).
  private readonly released: Effect.Effect<void> = Effect.async<void>((resume) => {
    const waiter = () => resume(Effect.void);
    this.waiters.push(waiter);
    return Effect.sync(() => {
      this.waiters = this.waiters.filter((other) => other !== waiter);
    });
  });

  /** Resolves once no claimed job waits for a slot (each waits for one finishing attempt's end). */
  readonly allStarted: Effect.Effect<void> = Effect.suspend(() =>
    this.all.pending === 0 ? Effect.void : Effect.zipRight(this.released, this.allStarted),
  );

  /** Resolves once no attempt is held and no claimed job waits to start. */
  readonly idle: Effect.Effect<void> = Effect.suspend(() =>
    this.busy === 0 ? Effect.void : Effect.zipRight(this.released, this.idle),
  );
}
