/**
 * Compaction on its own (2026-12-06). Without it a store's log grows until
 * someone calls `compact`: an application that never does keeps every
 * finished job and replays every record at open (BullMQ's users trim Redis
 * by hand, taskforcesh/bullmq#2734). An engine opened with `autoCompact`
 * compacts, with the retention its owner chose, once the records appended
 * since its generation's base reach `max(minRecords, growth × base jobs)`,
 * the jobs the base holds (what the last compaction kept) being what the
 * next one rewrites, and more: the rule of Redis's
 * `auto-aof-rewrite-min-size` and `-percentage`, with the base's size
 * counted in jobs. A compaction costs in proportion to the jobs it writes,
 * so letting the log grow by a multiple of them before the next one keeps
 * that cost a share of each record appended (about `1 / growth` jobs
 * rewritten a record), however large the retained history; the minimum
 * keeps a small store from compacting at every few commits. Counted in
 * the base's records, a base of 150,000 retained jobs (a few hundred
 * snapshot parts) was compacted every `minRecords`, 8.7 s each; counted in
 * all the jobs held, a store whose retention drops everything never
 * compacted with a growth of 3 or more, its finished jobs counted until
 * the compaction that drops them (both tried first, 2026-12-06).
 *
 * The check is a comparison of sequences at each commit; the compaction
 * runs on its own fiber in the engine's scope, one at a time, and is not
 * interrupted by the engine's close, which waits for it (a compaction cut
 * half-way would leave its staged generation for the next one to remove).
 * A failed one (a full disk, another engine's compaction on a shared log)
 * is counted and its error kept for `autoCompaction()`, and the next try
 * waits for another `minRecords` records: never a loop of failures.
 */
import { Snapshot } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Queue from "effect/Queue";
import type * as Scope from "effect/Scope";
import { messageOf } from "../../disk/Described.js";
import type { CompactedJobs } from "./compaction.js";

/** When and how an engine compacts on its own. */
export interface AutoCompact {
  /** Terminal jobs that finished longer ago than this are dropped, as `compact(retentionMs)` drops them. */
  readonly retentionMs: number;
  /** Records appended since the base before a compaction is due at all. Default 100,000. */
  readonly minRecords?: number;
  /** ... and at least this multiple of the jobs the base holds. Default 4. */
  readonly growth?: number;
}

/** What the engine's own compactions have done. */
export interface AutoCompactionStats {
  readonly retentionMs: number;
  /** Compactions that finished. */
  readonly runs: number;
  /** Compactions that failed; the last one's error is `lastError`. */
  readonly failures: number;
  readonly running: boolean;
  /** When the last compaction (finished or failed) ended, epoch milliseconds. */
  readonly lastAt: number | null;
  /** The last failure's message, until a compaction finishes. */
  readonly lastError: string | null;
  /**
   * How long the last compaction (finished or failed) took, ms. It holds
   * commands while it writes the base, not while the terminal index then
   * copies what the base kept (since 2026-12-07, docs/engine.md), so this
   * is an upper bound of the hold.
   */
  readonly lastDurationMs: number | null;
  /** Terminal jobs these compactions dropped, since the engine opened. */
  readonly jobsDropped: number;
  /** The sequence whose commit makes the engine look again. */
  readonly checkAt: number;
}

export const minRecordsDefault = 100_000;
export const growthDefault = 4;

/** A generation as the rule reads it: its first sequence and its base's record count. */
export interface GenerationStart {
  readonly firstSequence: number;
  readonly baseRecordCount: number;
}

/** The sequence at which a generation whose base holds `jobs` is due: past its base by the rule's count. */
export const dueAt = (
  generation: GenerationStart,
  jobs: number,
  options: { readonly minRecords: number; readonly growth: number },
): number => {
  const baseEnd = generation.firstSequence + generation.baseRecordCount - 1;
  return baseEnd + Math.max(options.minRecords, Math.ceil(options.growth * jobs));
};

/** Why an option is refused: the engine's `InvalidArgument` fields. */
export interface Refusal {
  readonly argument: string;
  readonly value: string;
  readonly expected: string;
}

const refusal = (argument: string, value: unknown, expected: string): Refusal => ({
  argument: `autoCompact.${argument}`,
  value: String(value),
  expected,
});

/** The options with their defaults, or why the first wrong one is refused. */
export const checkAutoCompact = (
  options: AutoCompact,
): { readonly ok: Required<AutoCompact> } | { readonly refused: Refusal } => {
  const { retentionMs, minRecords = minRecordsDefault, growth = growthDefault } = options;
  if (!Number.isSafeInteger(retentionMs) || retentionMs < 0) {
    const expected = "an integer number of milliseconds, 0 to 2^53-1";
    return { refused: refusal("retentionMs", retentionMs, expected) };
  }
  if (!Number.isSafeInteger(minRecords) || minRecords < 1) {
    const expected = "an integer count of records, 1 to 2^53-1";
    return { refused: refusal("minRecords", minRecords, expected) };
  }
  if (!Number.isFinite(growth) || growth < 0 || growth > 1_000) {
    return { refused: refusal("growth", growth, "a number from 0 to 1000") };
  }
  return { ok: { retentionMs, minRecords, growth } };
};

/** What the compaction fiber needs of its engine. */
export interface Compacting<E> {
  readonly lastSequence: () => number;
  /** The jobs the engine's state holds, active and terminal (for a base this engine did not write). */
  readonly jobs: () => number;
  /** The current generation (after a compaction: the new one). */
  readonly generation: () => Effect.Effect<GenerationStart>;
  /** Compacts; tells how many jobs the new base holds and how many it dropped. */
  readonly compact: (retentionMs: number) => Effect.Effect<CompactedJobs, E>;
  readonly now: () => number;
}

/**
 * Starts the engine's compaction fiber in the scope; answers what each
 * commit calls (`committed`) and the stats. `committed` only compares and,
 * when due, wakes the fiber: it costs a commit nothing else.
 */
export const startAutoCompaction = <E>(
  options: Required<AutoCompact>,
  engine: Compacting<E>,
  start: GenerationStart,
): Effect.Effect<
  { readonly committed: () => void; readonly stats: () => AutoCompactionStats },
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const wake = yield* Queue.sliding<true>(1);
    // The jobs the base holds, as the rule weighs it: those the state held right
    // after this engine's compaction wrote it; a base it did not write (at open, or
    // another engine's on a shared log) at most its records' worth of full parts.
    const seen = (generation: GenerationStart) => ({
      firstSequence: generation.firstSequence,
      jobs: Math.min(engine.jobs(), generation.baseRecordCount * Snapshot.partJobsMax),
    });
    let base = seen(start);
    const baseJobs = (generation: GenerationStart): number => {
      if (generation.firstSequence !== base.firstSequence) base = seen(generation);
      return base.jobs;
    };
    let stats: AutoCompactionStats = {
      retentionMs: options.retentionMs,
      runs: 0,
      failures: 0,
      running: false,
      lastAt: null,
      lastError: null,
      lastDurationMs: null,
      jobsDropped: 0,
      checkAt: dueAt(start, base.jobs, options),
    };
    const check = Effect.gen(function* () {
      // Another engine's compaction (a shared log) may have moved the base meanwhile.
      const generation = yield* engine.generation();
      const due = dueAt(generation, baseJobs(generation), options);
      if (engine.lastSequence() < due) {
        stats = { ...stats, checkAt: due };
        return;
      }
      stats = { ...stats, running: true };
      const started = performance.now();
      const outcome = yield* Effect.either(engine.compact(options.retentionMs));
      const ended = {
        lastAt: engine.now(),
        lastDurationMs: Math.round(performance.now() - started),
      };
      if (outcome._tag === "Right") {
        const rebased = yield* engine.generation();
        // The base's own count: the state's, read now, holds the commands decided since
        // (2026-12-07; the same race made a served compaction's jobsDropped -1).
        const { jobsKept, jobsDropped } = outcome.right;
        base = { firstSequence: rebased.firstSequence, jobs: jobsKept };
        stats = {
          ...stats,
          ...ended,
          running: false,
          runs: stats.runs + 1,
          jobsDropped: stats.jobsDropped + jobsDropped,
          lastError: null,
          checkAt: dueAt(rebased, base.jobs, options),
        };
      } else {
        const checkAt = engine.lastSequence() + options.minRecords;
        const lastError = messageOf(outcome.left);
        const failures = stats.failures + 1;
        stats = { ...stats, ...ended, running: false, failures, lastError, checkAt };
      }
    });
    // A close interrupts the wait, and waits for a check (and its compaction) under way.
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Queue.take(wake), Effect.uninterruptible(check))),
    );
    return {
      committed: () => {
        if (!stats.running && engine.lastSequence() >= stats.checkAt) {
          Queue.unsafeOffer(wake, true);
        }
      },
      stats: () => stats,
    };
  });
