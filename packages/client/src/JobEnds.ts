/**
 * Waiting for a job to end: `whenEnded(jobId)` resolves with the job once
 * it is completed, discarded or cancelled (BullMQ's `waitUntilFinished`),
 * for a caller that inserts a job and wants its outcome. One watch of the
 * committed events serves every waiting call: it starts with the first and
 * stops with the last, and a batch wakes only the calls whose job it
 * finishes or cancels, each of which then reads its job once. The same
 * class serves the client (its event stream) and the embedded engine (its
 * commit watch): `@tay/shell-node`'s `EnginePromises.whenEnded`.
 *
 * A call reads its job once its watch is ready (in place in process; over
 * the socket, its stream opened from the sequence the server had before the
 * read), so an end committed before the read is seen by the read and one
 * committed after it by the watch: none falls between. A watch that may
 * have missed commits (over the socket, when its place in the stream was
 * compacted away while it reconnected) calls `missed` once it tells every
 * later commit again, and every waiting call reads its job anew: before
 * 2026-12-06 an end in that gap was seen only by a later call. A job no one
 * can read (never inserted, or compacted away) rejects with `UnknownJob`;
 * an aborted signal rejects with its reason.
 */
import { Event, type Job } from "@tay/core";

/** A watch of committed events: `ready` once every commit from then on will be told. */
export interface EndWatch {
  readonly stop: () => void;
  readonly ready: Promise<void>;
}

/** What waiting needs: committed events as they commit, and a job as it stands. */
export interface EndSource {
  /**
   * Tells each batch of committed events until stopped; once `ready`
   * resolves, no commit after that instant is missed (a stream opened from
   * the sequence its source had then). A `ready` that rejects rejects the
   * calls waiting on it. `missed` says that commits may have gone untold
   * and every later one will be told: each waiting job is read again.
   */
  readonly watch: (
    listener: (events: ReadonlyArray<Event.Event>) => void,
    missed: () => void,
  ) => EndWatch;
  /** The job as it stands now; undefined when there is no such job. */
  readonly job: (jobId: number) => Promise<Job.Job | undefined> | Job.Job | undefined;
}

/** The job waited for does not exist: never inserted, or compacted away. */
export class UnknownJob extends Error {
  readonly _tag = "UnknownJob";
  constructor(readonly jobId: number) {
    super(`UnknownJob: no job ${jobId} (never inserted, or compacted away)`);
    this.name = "UnknownJob";
  }
}

/** Whether `event` (or a member of a mutation) finishes or cancels a job of `waited`. */
const endedIn = (event: Event.Event, waited: ReadonlyMap<number, unknown>, out: Set<number>) => {
  if (event._tag === "JobFinished" || event._tag === "JobCancelled") {
    if (waited.has(event.jobId)) out.add(event.jobId);
  } else if (event._tag === "Mutation") {
    for (const member of event.events) endedIn(member, waited, out);
  }
};

interface Waiter {
  readonly resolve: (job: Job.Job) => void;
  readonly reject: (error: unknown) => void;
}

/** The calls waiting for jobs to end, over one source. */
export class JobEnds {
  readonly #waiting = new Map<number, Set<Waiter>>();
  #watch: EndWatch | undefined = undefined;

  constructor(private readonly source: EndSource) {}

  /** Resolves with the job once it has ended (at once if it has). */
  whenEnded(jobId: number, options: { readonly signal?: AbortSignal } = {}): Promise<Job.Job> {
    const { signal } = options;
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<Job.Job>((resolve, reject) => {
      const onAbort = () => settle(() => reject(signal?.reason));
      const settle = (then: () => void) => {
        if (!this.#forget(jobId, waiter)) return;
        signal?.removeEventListener("abort", onAbort);
        then();
      };
      const waiter: Waiter = {
        resolve: (job) => settle(() => resolve(job)),
        reject: (error) => settle(() => reject(error)),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      // Read only once the watch tells every later commit: an end falls in one or the other.
      this.#add(jobId, waiter).then(
        () => this.#check(jobId, [waiter]),
        (error: unknown) => waiter.reject(error),
      );
    });
  }

  /** Rejects every waiting call with `error` and stops the watch (its source is closing). */
  close(error: unknown): void {
    for (const waiters of [...this.#waiting.values()]) {
      for (const waiter of [...waiters]) waiter.reject(error);
    }
  }

  /** Calls waiting now (for tests: none is left behind). */
  get waiting(): number {
    let count = 0;
    for (const waiters of this.#waiting.values()) count += waiters.size;
    return count;
  }

  /** Adds `waiter`, starting the watch if none runs; resolves once the watch is ready. */
  #add(jobId: number, waiter: Waiter): Promise<void> {
    const waiters = this.#waiting.get(jobId);
    if (waiters === undefined) this.#waiting.set(jobId, new Set([waiter]));
    else waiters.add(waiter);
    this.#watch ??= this.source.watch(
      (events) => this.#told(events),
      () => this.#missed(),
    );
    return this.#watch.ready;
  }

  /** Removes `waiter`; false when it was settled already. The last one stops the watch. */
  #forget(jobId: number, waiter: Waiter): boolean {
    const waiters = this.#waiting.get(jobId);
    if (waiters === undefined || !waiters.delete(waiter)) return false;
    if (waiters.size === 0) this.#waiting.delete(jobId);
    if (this.#waiting.size === 0) {
      this.#watch?.stop();
      this.#watch = undefined;
    }
    return true;
  }

  #told(events: ReadonlyArray<Event.Event>): void {
    const ended = new Set<number>();
    for (const event of events) endedIn(event, this.#waiting, ended);
    for (const jobId of ended) this.#check(jobId, [...(this.#waiting.get(jobId) ?? [])]);
  }

  #missed(): void {
    for (const [jobId, waiters] of this.#waiting) this.#check(jobId, [...waiters]);
  }

  /** Reads the job; settles `waiters` if it has ended or does not exist. */
  #check(jobId: number, waiters: ReadonlyArray<Waiter>): void {
    const settleWith = (job: Job.Job | undefined) => {
      for (const waiter of waiters) {
        if (job === undefined) waiter.reject(new UnknownJob(jobId));
        else if (Event.isTerminal(job.state)) waiter.resolve(job);
      }
    };
    const fail = (error: unknown) => {
      for (const waiter of waiters) waiter.reject(error);
    };
    try {
      const read = this.source.job(jobId);
      if (read instanceof Promise) read.then(settleWith, fail);
      else settleWith(read);
    } catch (error) {
      fail(error);
    }
  }
}
