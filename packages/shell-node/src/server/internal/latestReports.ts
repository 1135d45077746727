/**
 * The progress reports a stream's reader is behind on: the latest of each
 * job, since a report replaces the one before it. Reports of attempts no
 * longer current (the job ended, or runs another attempt) are let go each
 * time the set has doubled since the last look (at least 64 held), so a
 * reader stalled for hours holds what is executing, not every job that
 * reported meanwhile (2026-12-06).
 */
import type { Progress } from "@tay/core";

const sweepMin = 64;

export class LatestReports {
  readonly #latest = new Map<number, Progress.Progress>();
  #sweepAt = sweepMin;

  /** `isCurrent(report)`: whether its attempt still executes (the engine's `progress`). */
  constructor(private readonly isCurrent: (report: Progress.Progress) => boolean) {}

  /** Keeps `report` as its job's latest. */
  add(report: Progress.Progress): void {
    this.#latest.set(report.jobId, report);
    if (this.#latest.size < this.#sweepAt) return;
    for (const [jobId, held] of this.#latest) {
      if (!this.isCurrent(held)) this.#latest.delete(jobId);
    }
    this.#sweepAt = Math.max(sweepMin, 2 * this.#latest.size);
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
