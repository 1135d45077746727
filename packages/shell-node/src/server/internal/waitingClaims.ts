/**
 * The waiting claims (`/v1/next-jobs`) that carry a `claim` id, so their
 * caller can give one up (`/v1/give-up`) without closing its connection.
 * A claim given up so is answered as it stands: with nothing if it was
 * still waiting, with its jobs if the engine had already started them.
 * Closing the connection instead, as a caller could only do before
 * 2026-12-06, left a claim decided at that instant without anyone to
 * answer: its jobs failed at once ("lease expired") having never run,
 * an attempt spent (a job of `maxAttempts: 1` discarded unrun), and a
 * remote worker gives up its parked claim whenever a queue it did not ask
 * for has room again.
 *
 * A give-up can overtake its claim (sent on another connection, it may
 * reach the server first): its id is then kept for `earlyGiveUpMs` (at
 * most `earlyGiveUpsMax` of them), and the claim, when it arrives, is
 * answered at once with nothing.
 */

/** How long a give-up that came before its claim is kept for it. */
export const earlyGiveUpMs = 60_000;

/** The most give-ups kept for claims not seen yet; the oldest go first. */
export const earlyGiveUpsMax = 10_000;

export class WaitingClaims {
  private readonly waiting = new Map<string, AbortController>();
  // Ids given up before their claim came, with when; in the order they came.
  private readonly early = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Registers a waiting claim; false when `id` was given up already (the
   * claim is answered at once with nothing) or is in use (it is then
   * waited on, but cannot be given up by id).
   */
  add(id: string, controller: AbortController): boolean {
    this.prune();
    if (this.early.delete(id)) return false;
    if (this.waiting.has(id)) return true;
    this.waiting.set(id, controller);
    return true;
  }

  /** The claim was answered. */
  remove(id: string, controller: AbortController): void {
    if (this.waiting.get(id) === controller) this.waiting.delete(id);
  }

  /** Gives up the claim `id`: true if it was waiting, false if it is kept for its arrival. */
  giveUp(id: string): boolean {
    const controller = this.waiting.get(id);
    if (controller !== undefined) {
      this.waiting.delete(id);
      controller.abort();
      return true;
    }
    this.prune();
    if (this.early.size >= earlyGiveUpsMax) {
      const [oldest] = this.early.keys();
      if (oldest !== undefined) this.early.delete(oldest);
    }
    this.early.set(id, this.now());
    return false;
  }

  /** Claims waiting now. */
  get size(): number {
    return this.waiting.size;
  }

  private prune(): void {
    const before = this.now() - earlyGiveUpMs;
    for (const [id, at] of this.early) {
      if (at > before) return;
      this.early.delete(id);
    }
  }
}
