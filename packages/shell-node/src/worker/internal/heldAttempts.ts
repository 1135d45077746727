/**
 * The attempts a worker holds, by job. Mostly one a job; but a job whose
 * attempt was ended where the worker could not see it (a remote server
 * restarted and rescued it) can be claimed again while the old attempt's
 * handler still runs. Both are held: the old one is still to be aborted
 * (its lease found gone) and waited for at a close. Until 2026-12-07 the
 * attempts were kept by job id alone, so the new attempt took the old
 * one's place and the old handler ran on, aborted by nothing.
 */
import type { Attempt } from "./attempt.js";

export class HeldAttempts {
  // The newest attempt of each job: the only one in the common case, looked up without arrays.
  private readonly newest = new Map<number, Attempt>();
  // The older attempts still running of a job claimed again (rare), oldest first.
  private readonly older = new Map<number, Array<Attempt>>();
  private count = 0;

  /** How many attempts are held. */
  get size(): number {
    return this.count;
  }

  add(attempt: Attempt): void {
    const jobId = attempt.job.jobId;
    const before = this.newest.get(jobId);
    if (before !== undefined) {
      const list = this.older.get(jobId);
      if (list === undefined) this.older.set(jobId, [before]);
      else list.push(before);
    }
    this.newest.set(jobId, attempt);
    this.count += 1;
  }

  /** Lets `attempt` go once it ended; one not held is ignored. */
  delete(attempt: Attempt): void {
    const jobId = attempt.job.jobId;
    const list = this.older.get(jobId);
    if (this.newest.get(jobId) === attempt) {
      const previous = list?.pop();
      if (previous === undefined) this.newest.delete(jobId);
      else this.newest.set(jobId, previous);
    } else {
      const at = list === undefined ? -1 : list.indexOf(attempt);
      if (list === undefined || at < 0) return;
      list.splice(at, 1);
    }
    if (list !== undefined && list.length === 0) this.older.delete(jobId);
    this.count -= 1;
  }

  /** The attempts of `jobId` held, newest first. */
  *ofJob(jobId: number): Generator<Attempt> {
    const newest = this.newest.get(jobId);
    if (newest === undefined) return;
    yield newest;
    const list = this.older.get(jobId);
    for (const attempt of list === undefined ? [] : [...list].reverse()) yield attempt;
  }

  /** Every attempt held. */
  *values(): Generator<Attempt> {
    for (const jobId of this.newest.keys()) yield* this.ofJob(jobId);
  }
}
