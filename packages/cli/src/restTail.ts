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
import { type Event, Generation, type HistoryError, type Job } from "@tay/core";
import { type Projection, StateProjection, type TerminalIndex } from "@tay/shell-node";

/** The completed jobs let go after HEAD's sequence, whole, and the results recorded after it. */
export interface Tail {
  /** The sequence HEAD names: the index holds the jobs let go through it. */
  readonly through: number;
  readonly jobs: ReadonlyMap<number, Job.Job>;
  /** Results recorded after HEAD's sequence for jobs the index holds without them. */
  readonly results: ReadonlyMap<number, Event.ResultRecorded>;
  /** The store a lean fold kept these records of, when no index is behind them (`atRest.keptTail`). */
  readonly keptFrom?: string;
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
