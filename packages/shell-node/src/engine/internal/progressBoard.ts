/**
 * The latest progress report of each executing attempt (core's
 * `Progress`): held in memory by the engine that took the report, never
 * appended to the log (docs/engine.md, "Progress"). A report is checked
 * against the committed state (the attempt executes now); one whose attempt
 * then ends is let go when the end commits (the engine's watch of commits
 * calls `ended`), so the board holds at most one report per executing
 * attempt, each within `Progress.progressBytesMax`.
 */
import { Event, Progress, type Rejection, type State } from "@tay/core";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Either from "fp-ts/lib/Either.js";
import type * as Projection from "../../log/Projection.js";
import { LatestReports } from "../LatestReports.js";
import { Rejected } from "./engineRequest.js";

/** Told each report as it is held. */
export type ProgressWatcher = (progress: Progress.Progress) => void;

export class ProgressBoard {
  // Also swept as it doubles, for an end this engine never read (one inside a
  // generation another engine on a shared log compacted, folded here whole).
  readonly #latest = new LatestReports();
  readonly #watchers = new Set<ProgressWatcher>();

  /** Holds `report` as its job's progress, or says why not (nothing is held then). */
  report(state: State.State, report: Progress.Report): Rejection.Rejection | undefined {
    const decided = Progress.report(state, report);
    if (Either.isLeft(decided)) return decided.left;
    this.#latest.add(decided.right, (held) => Progress.isCurrent(state, held));
    for (const watcher of this.#watchers) {
      try {
        watcher(decided.right);
      } catch (thrown) {
        // The watcher's own error, left unhandled as a `watch` listener's
        // would be: the report is held all the same, and the reporter's
        // handler is not failed for it.
        void Promise.reject(thrown);
      }
    }
    return undefined;
  }

  /** Tells `watcher` each report held from now on; returns the function that stops it. */
  watch(watcher: ProgressWatcher): () => void {
    this.#watchers.add(watcher);
    return () => {
      this.#watchers.delete(watcher);
    };
  }

  /** The job's progress while the attempt it was reported for executes. */
  of(state: State.State, jobId: number): Progress.Progress | undefined {
    const progress = this.#latest.get(jobId);
    return progress !== undefined && Progress.isCurrent(state, progress) ? progress : undefined;
  }

  /** Every executing attempt's progress, ascending by job id. */
  all(state: State.State): ReadonlyArray<Progress.Progress> {
    return [...this.#latest.values()]
      .filter((progress) => Progress.isCurrent(state, progress))
      .sort((left, right) => left.jobId - right.jobId);
  }

  /** How many reports are held. */
  get size(): number {
    return this.#latest.size;
  }

  /**
   * Lets go of the reports of the attempts a committed batch ended: the
   * engine's watch of commits. Nothing to look at while no report is held,
   * so an engine whose workers report none pays one comparison a batch.
   */
  readonly ended = (records: ReadonlyArray<Projection.Entry>): void => {
    if (this.#latest.size === 0) return;
    for (const { event } of records) {
      const members = event._tag === "Mutation" ? event.events : [event];
      for (const member of members) {
        if (Event.endsAnAttempt(member)) this.#latest.delete(member.jobId);
      }
    }
  };
}

/**
 * The engine's progress operations on both faces (docs/engine.md,
 * "Progress"), over a board that `watch` tells of every committed batch:
 * the promise face reports at `now()`, the Effect face at its fiber's
 * clock; both read the committed state.
 */
export const progressFaces = (
  watch: (listener: ProgressBoard["ended"]) => () => void,
  committed: () => State.State,
  now: () => number,
) => {
  const board = new ProgressBoard();
  watch(board.ended);
  const take = (at: number, jobId: number, attempt: number, value: unknown) => {
    const rejection = board.report(committed(), { jobId, attempt, value, at });
    return rejection === undefined
      ? undefined
      : new Rejected({ command: "ReportProgress", rejection });
  };
  const progress = (jobId: number) => board.of(committed(), jobId);
  const progresses = () => board.all(committed());
  const progressHeld = () => board.size;
  const watchProgress = (watcher: ProgressWatcher) => board.watch(watcher);
  return {
    promises: {
      watchProgress,
      reportProgress: (jobId: number, attempt: number, value: unknown): Promise<void> => {
        const refused = take(now(), jobId, attempt, value);
        return refused === undefined ? Promise.resolve() : Promise.reject(refused);
      },
      progress,
      progresses,
      progressHeld,
    },
    effects: {
      reportProgress: (jobId: number, attempt: number, value: unknown) =>
        Effect.flatMap(Clock.currentTimeMillis, (time) => {
          const refused = take(time, jobId, attempt, value);
          return refused === undefined ? Effect.void : Effect.fail(refused);
        }),
      progress: (jobId: number) => Effect.sync(() => progress(jobId)),
      progresses: () => Effect.sync(progresses),
      progressHeld,
      watchProgress,
    },
  };
};
