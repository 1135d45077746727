/**
 * A listing's lean fold without an index (docs/cli.md, "Listings without
 * an index", 2026-12-07): `tay jobs` on a PostgreSQL URL, or on a
 * directory whose terminal index cannot answer, folds lean (completed jobs
 * kept as their facts) and keeps, of the completed jobs' whole records as
 * they leave the state, only those the listing can print: the ones its
 * filter wants, at most its limit of them, the first in its order. `tay
 * job` is the listing of one id. Memory: the lean state and at most
 * `limit` records, where the whole fold held every job whole (703 MB on
 * 1,000,000 jobs).
 */
import { type Event, Generation, type HistoryError, Job, type State } from "@tay/core";
import { type Projection, StateProjection } from "@tay/shell-node";
import * as Effect from "effect/Effect";

/** Which jobs a listing wants. */
export interface Filter {
  readonly queue: string | undefined;
  readonly state: Event.JobState | undefined;
  readonly limit: number;
  /** Newest first (`--order desc`, 2026-12-06). */
  readonly descending: boolean;
  /** The ids listed, both included (`--after` + 1 and `--before` - 1; 2026-12-06). */
  readonly first: number;
  readonly last: number;
}

/** Every id: no `--after` or `--before`. */
export const everyId = { first: 0, last: Number.MAX_SAFE_INTEGER } as const;

/** The listing of one job: what `tay job ID` keeps. */
export const oneJob = (jobId: number): Filter => ({
  queue: undefined,
  state: undefined,
  limit: 1,
  descending: false,
  first: jobId,
  last: jobId,
});

/** Ids of the facts a listing wants, in its order (facts are completed jobs). */
export function* factIds(state: State.State, filter: Filter): Generator<number> {
  if (filter.state !== undefined && filter.state !== "completed") return;
  const walk = filter.descending
    ? state.terminal.entriesDownFrom(filter.last)
    : state.terminal.entriesFrom(filter.first);
  for (const [jobId, fact] of walk) {
    if (jobId < filter.first || jobId > filter.last) return;
    if (filter.queue === undefined || fact.queue === filter.queue) yield jobId;
  }
}

/** No `--limit`. */
const unlimited = Number.MAX_SAFE_INTEGER;

/**
 * Whether `filter` lists every completed job (no limit, queue or bound):
 * its fold holds every record either way, and the whole fold holds them in
 * less (`tay jobs` of 1,000,000 completed jobs: 1,026 MB whole, 1,164 MB
 * lean with the records kept in a map; 2026-12-07).
 */
const everyCompleted = (filter: Filter): boolean =>
  filter.limit === unlimited &&
  filter.queue === undefined &&
  filter.first === everyId.first &&
  filter.last === everyId.last &&
  (filter.state === undefined || filter.state === "completed");

/** Whether `filter` lists `job`: its id in bounds, its queue and its state the ones asked for. */
export const wants = (filter: Filter, job: Job.Job): boolean =>
  job.jobId >= filter.first &&
  job.jobId <= filter.last &&
  (filter.queue === undefined || job.queue === filter.queue) &&
  (filter.state === undefined || job.state === filter.state);

/** Records folded between two hand-overs: what the fold holds of unwanted jobs at most. */
export const handOverEveryRecords = 4096;

/**
 * A lean fold from nothing that keeps the whole records of the completed
 * jobs `filter` may list, at most `filter.limit` of them: the lowest ids,
 * or the highest newest first. What the builder hands over is taken every
 * `everyRecords` records; a (10,2) result recorded after its job was taken
 * is added to the kept record (a result changes no field a filter reads).
 */
export class ListingFold {
  #builder: Generation.Builder | undefined = undefined;
  #kept = new Map<number, Job.Job>();
  // The kept ids, the one the listing would reach last on top.
  #ids: KeptIds;
  #applied = 0;

  constructor(
    private readonly filter: Filter,
    private readonly everyRecords = handOverEveryRecords,
  ) {
    this.#ids = new KeptIds(filter.descending);
  }

  readonly projection: Projection.Projection<Generation.Builder, HistoryError.HistoryError> = {
    start: (manifest) => {
      this.#kept = new Map();
      this.#ids = new KeptIds(this.filter.descending);
      this.#applied = 0;
      const builder = Generation.start(manifest.baseRecordCount, { lean: true, collectLeft: true });
      this.#builder = builder;
      return builder;
    },
    apply: (builder, sequence, event) => {
      const applied = StateProjection.leanFoldProjection.apply(builder, sequence, event);
      this.#applied += 1;
      if (this.#applied % this.everyRecords === 0) this.#keep(Generation.takeLeft(builder));
      return applied;
    },
  };

  /** The records kept, by id, once the fold is over. */
  kept(): ReadonlyMap<number, Job.Job> {
    if (this.#builder !== undefined) this.#keep(Generation.takeLeft(this.#builder));
    return this.#kept;
  }

  #keep(left: Generation.Left): void {
    for (const job of left.jobs) {
      // Completed, as every job a lean state lets go.
      if (!wants(this.filter, job)) continue;
      if (this.#kept.has(job.jobId)) {
        // Handed over again (never seen; harmless): the later record.
        this.#kept.set(job.jobId, job);
      } else if (this.#kept.size < this.filter.limit) {
        this.#kept.set(job.jobId, job);
        // Without a limit nothing is let go again: no order to keep.
        if (this.filter.limit !== unlimited) this.#ids.push(job.jobId);
      } else if (this.filter.limit > 0 && this.#ids.before(job.jobId)) {
        this.#kept.delete(this.#ids.replaceTop(job.jobId));
        this.#kept.set(job.jobId, job);
      }
    }
    for (const result of left.results) {
      const job = this.#kept.get(result.jobId);
      if (job !== undefined) this.#kept.set(result.jobId, Job.applied(job, result));
    }
  }
}

/**
 * Ids in a binary heap whose top is the one a listing reaches last: the
 * highest ascending, the lowest newest first.
 */
class KeptIds {
  readonly #ids: Array<number> = [];

  constructor(private readonly descending: boolean) {}

  /** Whether `jobId` comes before `left` in the listing's order. */
  #precedes(jobId: number, left: number): boolean {
    return this.descending ? jobId > left : jobId < left;
  }

  /** Whether `jobId` comes before the top: it would be listed and the top not. */
  before(jobId: number): boolean {
    const top = this.#ids[0];
    return top !== undefined && this.#precedes(jobId, top);
  }

  push(jobId: number): void {
    const ids = this.#ids;
    let at = ids.push(jobId) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = ids[parent] ?? jobId;
      if (!this.#precedes(above, jobId)) break;
      ids[at] = above;
      at = parent;
    }
    ids[at] = jobId;
  }

  /** Puts `jobId` in place of the top, and returns the top it replaced. */
  replaceTop(jobId: number): number {
    const ids = this.#ids;
    const top = ids[0] ?? jobId;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= ids.length) break;
      const right = ids[child + 1];
      const left = ids[child] ?? jobId;
      if (right !== undefined && this.#precedes(left, right)) child += 1;
      const lower = ids[child] ?? jobId;
      if (!this.#precedes(jobId, lower)) break;
      ids[at] = lower;
      at = child;
    }
    ids[at] = jobId;
    return top;
  }
}

/** Folds the store once through `projection`: a directory's fold, or a URL's. */
export type FoldThrough<A, E, R> = (
  projection: Projection.Projection<Generation.Builder, HistoryError.HistoryError>,
) => Effect.Effect<A, E, R>;

/** What `foldForListing` folded, and the records it kept (a lean fold's). */
export interface FoldedForListing<A> {
  readonly folded: A;
  /** The whole records of the completed jobs the listing can reach; empty when the fold was whole. */
  readonly kept: ReadonlyMap<number, Job.Job>;
  /** Whether `folded` is the lean fold (its completed jobs as facts). */
  readonly lean: boolean;
}

/**
 * A listing's fold: lean through `ListingFold`, and again whole only when
 * a fact the listing can reach (the first `limit` it wants, in its order)
 * has no record kept (core always hands every one over); whole at once for
 * a listing of every completed job (`everyCompleted`). `fold` folds the
 * store once through the projection it is given: a directory's or a URL's.
 */
export const foldForListing = <A extends { readonly state: State.State }, E, R>(
  filter: Filter,
  fold: FoldThrough<A, E, R>,
): Effect.Effect<FoldedForListing<A>, E, R> =>
  Effect.gen(function* () {
    const whole = Effect.map(fold(StateProjection.foldProjection), (folded) => ({
      folded,
      kept: new Map<number, Job.Job>(),
      lean: false,
    }));
    if (everyCompleted(filter)) return yield* whole;
    const listing = new ListingFold(filter);
    const lean = yield* fold(listing.projection);
    const kept = listing.kept();
    if (everyReachedKept(lean.state, filter, kept)) return { folded: lean, kept, lean: true };
    return yield* whole;
  });

/** Whether every fact the listing can reach has its record in `kept`. */
const everyReachedKept = (
  state: State.State,
  filter: Filter,
  kept: ReadonlyMap<number, Job.Job>,
): boolean => {
  let reached = 0;
  for (const jobId of factIds(state, filter)) {
    if (reached >= filter.limit) return true;
    if (!kept.has(jobId)) return false;
    reached += 1;
  }
  return true;
};

/** What `foldForJob` folded, and the job's record it kept (a lean fold's). */
export interface FoldedForJob<A> {
  readonly folded: A;
  /** The job's whole record as it left the lean state; undefined when it did not leave, or the fold was whole. */
  readonly kept: Job.Job | undefined;
  /** Whether `folded` is the lean fold (its completed jobs as facts). */
  readonly lean: boolean;
}

/**
 * One job's fold (`tay job`, on a directory without a usable index or on a
 * URL): the listing of its one id (2026-12-05: the memory of a lean state,
 * not of every job).
 */
export const foldForJob = <A extends { readonly state: State.State }, E, R>(
  jobId: number,
  fold: FoldThrough<A, E, R>,
): Effect.Effect<FoldedForJob<A>, E, R> =>
  Effect.map(foldForListing(oneJob(jobId), fold), ({ folded, kept, lean }) => ({
    folded,
    kept: kept.get(jobId),
    lean,
  }));
