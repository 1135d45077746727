/**
 * The latest progress report of each job (core's `Progress`), since a
 * report replaces the one before it. Reports of attempts no longer current
 * (the job ended, or runs another attempt) are let go each time the set
 * has doubled since the last look (at least 64 held), at a constant cost
 * per report: what is held stays within twice the attempts still
 * executing, whatever ends were missed. The engine's board of reports and
 * a progress stream's reader that fell behind both keep theirs here
 * (2026-12-06).
 */
import type { Progress } from "@tay/core";

const sweepMin = 64;

export class LatestReports {
  readonly #latest = new Map<number, Progress.Progress>();
  #sweepAt = sweepMin;

  /** Keeps `report` as its job's latest; `isCurrent` tells a held report still executing. */
  add(report: Progress.Progress, isCurrent: (held: Progress.Progress) => boolean): void {
    this.#latest.set(report.jobId, report);
    if (this.#latest.size < this.#sweepAt) return;
    for (const [jobId, held] of this.#latest) {
      if (!isCurrent(held)) this.#latest.delete(jobId);
    }
    this.#sweepAt = Math.max(sweepMin, 2 * this.#latest.size);
  }

  /** The job's latest report, if held. */
  get(jobId: number): Progress.Progress | undefined {
    return this.#latest.get(jobId);
  }

  /** Lets go of the job's report. */
  delete(jobId: number): void {
    this.#latest.delete(jobId);
  }

  /** Every report held, oldest job first. */
  values(): IterableIterator<Progress.Progress> {
    return this.#latest.values();
  }

  /** Takes the oldest held report out, or undefined when none is. */
  take(): Progress.Progress | undefined {
    for (const [jobId, report] of this.#latest) {
      this.#latest.delete(jobId);
      return report;
    }
    return undefined;
  }

  get size(): number {
    return this.#latest.size;
  }
}
