/**
 * The read commands' catch-up at rest (docs/cli.md, "Read commands after a
 * crash", 2026-12-05): a store whose engine stopped without a close (or
 * whose last close was followed by an engine without the index) has a
 * terminal index whose HEAD names an earlier sequence than the log's last,
 * and a state image at HEAD's sequence. The engine's open would resume from
 * the image and write the index's tail; a reader writes nothing, so it
 * resumes the same way, collects what the records after the image let go
 * of (`Generation.takeLeft`: the whole records of the jobs that left the
 * lean state, and the results recorded for jobs that left before), and
 * holds them in memory beside the index as HEAD left it. Memory: the jobs
 * completed since the last image, which a checkpoint bounds.
 */
import { type Event, Generation, type HistoryError, Job, State } from "@tay/core";
import { type Projection, StateProjection, type TerminalIndex } from "@tay/shell-node";
import { Effect } from "effect";

/** The completed jobs let go after HEAD's sequence, whole, and the results recorded after it. */
export interface Tail {
  /** The sequence HEAD names: the index holds the jobs let go through it. */
  readonly through: number;
  readonly jobs: ReadonlyMap<number, Job.Job>;
  /** Results recorded after HEAD's sequence for jobs the index holds without them. */
  readonly results: ReadonlyMap<number, Event.ResultRecorded>;
}

/**
 * A lean fold at rest that resumes from the state image HEAD names and
 * collects what the records after it let go of; or, when the image is not
 * taken (missing, of another generation, a pass that failed), folds from
 * nothing and collects nothing (`tail()` is then undefined).
 */
export class TailFold {
  /** The builder of the pass that resumed, while it is the one folding. */
  #resumed: Generation.Builder | undefined = undefined;
  #through = -1;

  constructor(
    private readonly found: TerminalIndex.Found,
    private readonly image: TerminalIndex.DecodedImage | string,
  ) {}

  readonly projection: Projection.Projection<Generation.Builder, HistoryError.HistoryError> = {
    ...StateProjection.leanFoldProjection,
    resume: (manifest) => {
      const resumed = StateProjection.resumeLean(this.found, this.image, manifest, true);
      if (typeof resumed === "string") return undefined;
      this.#resumed = resumed.state;
      this.#through = resumed.through;
      return resumed;
    },
    start: (manifest) => {
      // A pass that resumed failed: this one folds from nothing, and
      // collects nothing (it would collect every completed job).
      this.#resumed = undefined;
      return StateProjection.leanFoldProjection.start(manifest);
    },
  };

  /** What the resumed pass let go of after the image, once the fold is over; undefined when it did not resume. */
  tail(): Tail | undefined {
    const builder = this.#resumed;
    if (builder === undefined) return undefined;
    const left = Generation.takeLeft(builder);
    const jobs = new Map<number, Job.Job>();
    for (const job of left.jobs) jobs.set(job.jobId, job);
    // One hand-over for the whole fold: the builder merged each result
    // recorded for a job it handed over into that job's record, so these
    // are results of jobs let go before the image, which the index holds.
    const results = new Map<number, Event.ResultRecorded>();
    for (const result of left.results) results.set(result.jobId, result);
    return { through: this.#through, jobs, results };
  }
}

/** Records folded between two hand-overs of `OneJobFold`: what it holds of other jobs at most. */
export const handOverEveryRecords = 4096;

/**
 * A lean fold from nothing that keeps, of every completed job let go of,
 * only the whole record of `jobId` (docs/cli.md, "Read commands after a
 * crash", 2026-12-05): what `tay job ID` folds when the index cannot answer
 * (missing, stale, behind the log), instead of the whole fold. It reads
 * every record for the job's history anyway. What the builder hands over
 * is taken every `handOverEveryRecords` records and dropped but for that job.
 */
export class OneJobFold {
  #builder: Generation.Builder | undefined = undefined;
  #job: Job.Job | undefined = undefined;
  #applied = 0;

  constructor(
    private readonly jobId: number,
    private readonly everyRecords = handOverEveryRecords,
  ) {}

  readonly projection: Projection.Projection<Generation.Builder, HistoryError.HistoryError> = {
    start: (manifest) => {
      this.#job = undefined;
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

  /** The job's whole record, once the fold is over, if it left the lean state. */
  job(): Job.Job | undefined {
    if (this.#builder !== undefined) this.#keep(Generation.takeLeft(this.#builder));
    return this.#job;
  }

  #keep(left: Generation.Left): void {
    for (const job of left.jobs) if (job.jobId === this.jobId) this.#job = job;
    // A result after the job was handed over in an earlier take.
    for (const result of left.results) {
      const job = this.#job;
      if (result.jobId === this.jobId && job !== undefined) {
        this.#job = Job.applied(job, result);
      }
    }
  }
}

/** What `foldForJob` folded, and the job's record it kept (a lean fold's). */
export interface FoldedForJob<A> {
  readonly folded: A;
  /** The job's whole record as it left the lean state; undefined when it did not leave, or the fold was whole. */
  readonly kept: Job.Job | undefined;
  /** Whether `folded` is the lean fold (its completed jobs as facts). */
  readonly lean: boolean;
}

/**
 * One job's fold: lean through `OneJobFold` (the memory of a lean state,
 * 2026-12-05), and again whole only for a job the lean state holds as a
 * fact and whose record that fold did not keep (core always hands it
 * over). `fold` folds the store once through the projection it is given:
 * a directory's (`tay job DIR` without a usable index) or a URL's.
 */
export const foldForJob = <A extends { readonly state: State.State }, E, R>(
  jobId: number,
  fold: (
    projection: Projection.Projection<Generation.Builder, HistoryError.HistoryError>,
  ) => Effect.Effect<A, E, R>,
): Effect.Effect<FoldedForJob<A>, E, R> =>
  Effect.gen(function* () {
    const one = new OneJobFold(jobId);
    const lean = yield* fold(one.projection);
    const kept = one.job();
    if (kept !== undefined || State.fact(lean.state, jobId) === undefined) {
      return { folded: lean, kept, lean: true };
    }
    return { folded: yield* fold(StateProjection.foldProjection), kept: undefined, lean: false };
  });
