/**
 * Leases of the jobs a remote caller claimed (docs/server.md): each such
 * attempt is held for `leaseMs` (default 30 s), extended by heartbeats;
 * when it lapses, or when the session that claimed it loses its
 * connection, the server fails the attempt with "lease expired" (retried
 * by the usual rules). The fail names the attempt, so if the job has moved
 * on meanwhile (completed, cancelled, claimed again) nothing is appended,
 * and a late complete from the old holder is refused as `StaleAttempt` by
 * the same fencing.
 *
 * One timer at the earliest expiry, on the process's clock: leases are
 * between processes, and the engine's clock (a `TestClock` in tests) is
 * not theirs.
 */

/** How long a remote claim holds its job without a heartbeat. */
export const leaseMsDefault = 30_000;

/** The shortest and the longest lease a claim or a heartbeat may ask for. */
export const leaseMsMin = 1_000;
export const leaseMsMax = 3_600_000;

/** The error an expired lease's attempt records. */
export const leaseExpiredError = "lease expired";

/** One leased attempt. */
export interface Lease {
  readonly jobId: number;
  readonly attempt: number;
  expiresAt: number;
  readonly session: string | undefined;
  /** Its holder is ending it (a complete or fail sent on its session): no `ended` echo. */
  endingByHolder: boolean;
}

/** What a lease's expiry does: fail that attempt. */
export type Expire = (jobId: number, attempt: number, why: string) => void;

export class Leases {
  private readonly held = new Map<number, Lease>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  /** Leases expired, for the metrics. */
  expired = 0;

  constructor(
    private readonly expire: Expire,
    private readonly now: () => number = Date.now,
  ) {}

  /** Leases `attempt` of `jobId` for `leaseMs`, held by `session` when given. */
  take(jobId: number, attempt: number, leaseMs: number, session: string | undefined): number {
    const expiresAt = this.now() + leaseMs;
    this.held.set(jobId, { jobId, attempt, expiresAt, session, endingByHolder: false });
    this.arm(expiresAt);
    return expiresAt;
  }

  /** Extends a held lease; undefined when that attempt holds none (expired, ended). */
  extend(jobId: number, attempt: number, leaseMs: number): number | undefined {
    const lease = this.held.get(jobId);
    if (lease === undefined || lease.attempt !== attempt) return undefined;
    lease.expiresAt = this.now() + leaseMs;
    return lease.expiresAt;
  }

  /** The attempt ended through the server (complete, fail): no lease to run out. */
  release(jobId: number, attempt: number | undefined): void {
    const lease = this.held.get(jobId);
    if (lease !== undefined && (attempt === undefined || lease.attempt === attempt)) {
      this.held.delete(jobId);
    }
  }

  /**
   * The holding session itself ends `attempt` of `jobId` (a complete or
   * fail that names the session): its session stream need not be told that
   * end, which the holder learns from its own answer. Returns the lease so
   * marked, for `unmark` when the command does not commit; undefined when
   * `session` does not hold that attempt.
   */
  markEnding(jobId: number, attempt: number | undefined, session: string): Lease | undefined {
    const lease = this.held.get(jobId);
    if (lease === undefined || lease.session !== session) return undefined;
    if (attempt !== undefined && lease.attempt !== attempt) return undefined;
    lease.endingByHolder = true;
    return lease;
  }

  /** The marked end did not commit (refused, or the store failed): the session is told again. */
  unmark(marked: Lease | undefined): void {
    if (marked !== undefined && this.held.get(marked.jobId) === marked) {
      marked.endingByHolder = false;
    }
  }

  /** The session to tell that `jobId`'s attempt ended: its holder's, unless the holder ended it. */
  tellable(jobId: number): string | undefined {
    const lease = this.held.get(jobId);
    return lease === undefined || lease.endingByHolder ? undefined : lease.session;
  }

  /** `attempt` of `jobId` will never reach its holder: it fails now with `why`, if still held. */
  lost(jobId: number, attempt: number, why: string): void {
    const lease = this.held.get(jobId);
    if (lease !== undefined && lease.attempt === attempt) this.end(lease, why);
  }

  /** The session's connection dropped: every attempt it holds fails now. */
  dropSession(session: string): void {
    for (const lease of [...this.held.values()]) {
      if (lease.session === session) {
        this.end(lease, `${leaseExpiredError}: the client's connection dropped`);
      }
    }
  }

  /** Leases held now. */
  get size(): number {
    return this.held.size;
  }

  /** Stops the timer (the server closes; the leases' jobs are the next open's rescue). */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.held.clear();
  }

  private arm(at: number): void {
    if (at >= this.timerAt) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.sweep(), Math.max(0, at - this.now()));
    this.timer.unref();
  }

  private sweep(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    let next = Number.POSITIVE_INFINITY;
    for (const lease of [...this.held.values()]) {
      if (lease.expiresAt <= now) this.end(lease, leaseExpiredError);
      else if (lease.expiresAt < next) next = lease.expiresAt;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }

  /** Ends a held lease: its attempt fails with `why`, and it counts as expired. */
  private end(lease: Lease, why: string): void {
    this.held.delete(lease.jobId);
    this.expired += 1;
    this.expire(lease.jobId, lease.attempt, why);
  }
}
