/**
 * How many handlers may run, per queue and in all: a worker claims only
 * what it has room for, so a claimed job always starts at once.
 */
import { Effect } from "effect";
import type * as Engine from "../../engine/Engine.js";

type Lane = Engine.Lane;

export class Slots {
  private readonly running = new Map<string, number>();
  private total = 0;
  // Waits for room or for idleness; every release wakes them all to look again.
  private waiters: Array<() => void> = [];

  constructor(
    /** Each queue's concurrency. */
    private readonly limits: ReadonlyMap<string, number>,
    /** The concurrency of all queues together. */
    private readonly totalMax: number,
  ) {}

  /** Handlers running now, in all. */
  get busy(): number {
    return this.total;
  }

  /** Room left in all. */
  free(): number {
    return this.totalMax - this.total;
  }

  /** Each queue with room, and how many of its jobs may start now. */
  lanes(): Array<Lane> {
    const free = this.free();
    const lanes: Array<Lane> = [];
    for (const [queue, limit] of this.limits) {
      const room = Math.min(limit - (this.running.get(queue) ?? 0), free);
      if (room > 0) lanes.push({ queue, limit: room });
    }
    return lanes;
  }

  /** A handler of `queue` starts. */
  take(queue: string): void {
    this.running.set(queue, (this.running.get(queue) ?? 0) + 1);
    this.total += 1;
  }

  /** Told each queue whose handler ended (after its room is given back). */
  onRelease: (queue: string) => void = () => {};

  /** A handler of `queue` ended: wakes a wait for room. */
  release(queue: string): void {
    this.running.set(queue, Math.max(0, (this.running.get(queue) ?? 0) - 1));
    this.total = Math.max(0, this.total - 1);
    this.wakeWaiters();
    this.onRelease(queue);
  }

  // Resolves at the next release (or when interrupted, drops its waiter).
  private readonly released: Effect.Effect<void> = Effect.async<void>((resume) => {
    const waiter = () => resume(Effect.void);
    this.waiters.push(waiter);
    return Effect.sync(() => {
      this.waiters = this.waiters.filter((other) => other !== waiter);
    });
  });

  /**
   * Resolves once some queue has room (at once if one has) or `wake` is
   * called: a promise, for the claim loop, which runs without a fiber.
   */
  roomOrWake(): Promise<void> {
    if (this.woken || this.lanes().length > 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.waiters.push(resolve);
    }).then(() => this.roomOrWake());
  }

  // Set by `wake`: waits for room end at once from then on.
  private woken = false;

  /** Ends every wait of `roomOrWake`, now and later (the worker closes). */
  wake(): void {
    this.woken = true;
    this.wakeWaiters();
  }

  // Every release (and the close's wake) wakes every wait to look again.
  private wakeWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Resolves once no handler runs. */
  readonly idle: Effect.Effect<void> = Effect.suspend(() =>
    this.total === 0 ? Effect.void : Effect.zipRight(this.released, this.idle),
  );
}
