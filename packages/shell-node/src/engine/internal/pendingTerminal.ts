/**
 * What commits let go of that the terminal index has not written yet: the
 * whole records of jobs that left the lean state, and results recorded for
 * jobs written before. The engine's queries read them from here until the
 * index holds them.
 *
 * The index writes the commits' entries in batches, in commit order, while
 * further commits arrive (`terminalIndexing.ts`). So memory lets go of an id
 * only once the last commit that set it is written: a job redriven and let
 * go of again, or given a result, by a commit queued behind the batch stays
 * here. (Emptying it only when the queue was empty, as before 2026-12-04,
 * kept every job of a busy engine until a pause.)
 */
import type { Event, Job, Terminal } from "@tay/core";

export class PendingTerminal {
  readonly #jobs = new Map<number, Job.Job>();
  readonly #results = new Map<number, Event.ResultRecorded>();
  /** For each id held above, the commit that last set it. */
  readonly #since = new Map<number, number>();
  #commits = 0;

  /** Commits noted so far (the number of the last). */
  get commits(): number {
    return this.#commits;
  }

  /** Ids held (jobs or results). */
  get size(): number {
    return this.#since.size;
  }

  /** Notes what one commit let go of; answers the commit's number. */
  add(left: Terminal.Left): number {
    const commit = ++this.#commits;
    for (const job of left.jobs) {
      this.#jobs.set(job.jobId, job);
      this.#since.set(job.jobId, commit);
    }
    for (const result of left.results) {
      const job = this.#jobs.get(result.jobId);
      if (job === undefined) this.#results.set(result.jobId, result);
      else this.#jobs.set(job.jobId, { ...job, result: { value: result.result, at: result.at } });
      this.#since.set(result.jobId, commit);
    }
    return commit;
  }

  /** The whole record of a job not written yet (with any result recorded since). */
  job(jobId: number): Job.Job | undefined {
    return this.#jobs.get(jobId);
  }

  /** A result recorded for a job already written, not written itself yet. */
  result(jobId: number): Event.ResultRecorded | undefined {
    return this.#results.get(jobId);
  }

  /** The commits up to `last` are written, `lefts` among them: lets go of what no later one set. */
  written(lefts: Iterable<Terminal.Left>, last: number): void {
    for (const left of lefts) {
      for (const job of left.jobs) this.#release(job.jobId, last);
      for (const result of left.results) this.#release(result.jobId, last);
    }
  }

  /** Everything of the commits up to `last` is in the index (a rebuild from the log). */
  writtenUpTo(last: number): void {
    for (const jobId of [...this.#since.keys()]) this.#release(jobId, last);
  }

  #release(jobId: number, last: number): void {
    const since = this.#since.get(jobId);
    if (since === undefined || since > last) return;
    this.#jobs.delete(jobId);
    this.#results.delete(jobId);
    this.#since.delete(jobId);
  }
}
