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

/** What is held for one id: its whole record or a result for one written before, and since when. */
interface Held {
  job: Job.Job | undefined;
  result: Event.ResultRecorded | undefined;
  /** The commit that last set it. */
  since: number;
}

export class PendingTerminal {
  // One map, not one per kind: a job let go of costs one lookup and one
  // insertion, and its release one deletion (three maps made that three each).
  readonly #held = new Map<number, Held>();
  #commits = 0;

  /** Commits noted so far (the number of the last). */
  get commits(): number {
    return this.#commits;
  }

  /** Ids held (jobs or results). */
  get size(): number {
    return this.#held.size;
  }

  /** Notes what one commit let go of; answers the commit's number. */
  add(left: Terminal.Left): number {
    const commit = ++this.#commits;
    for (const job of left.jobs) {
      const held = this.#held.get(job.jobId);
      if (held === undefined) this.#held.set(job.jobId, { job, result: undefined, since: commit });
      else {
        held.job = job;
        held.since = commit;
      }
    }
    for (const result of left.results) this.#addResult(result, commit);
    return commit;
  }

  #addResult(result: Event.ResultRecorded, commit: number): void {
    const held = this.#held.get(result.jobId);
    const job = held?.job;
    if (held === undefined) {
      this.#held.set(result.jobId, { job: undefined, result, since: commit });
      return;
    }
    if (job === undefined) held.result = result;
    else held.job = { ...job, result: { value: result.result, at: result.at } };
    held.since = commit;
  }

  /** The whole record of a job not written yet (with any result recorded since). */
  job(jobId: number): Job.Job | undefined {
    return this.#held.get(jobId)?.job;
  }

  /** A result recorded for a job already written, not written itself yet. */
  result(jobId: number): Event.ResultRecorded | undefined {
    const held = this.#held.get(jobId);
    return held?.job === undefined ? held?.result : undefined;
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
    for (const [jobId, held] of [...this.#held]) if (held.since <= last) this.#held.delete(jobId);
  }

  #release(jobId: number, last: number): void {
    const held = this.#held.get(jobId);
    if (held !== undefined && held.since <= last) this.#held.delete(jobId);
  }
}
