/**
 * A compaction's base, streamed (issue 19): core's `Snapshot.events` of the
 * decided state, whose completed jobs a lean state holds as facts are read
 * from the terminal index as the base reaches them, handed to the log,
 * which writes the new generation as it consumes the base, and folded as
 * it goes into the state the new base restores. Nothing holds the base or
 * the retained jobs whole: a compaction's memory is the active jobs, one
 * snapshot part and one write.
 *
 * The index is disposable: one that failed (a write, or a read here) is
 * rebuilt from the log and the compaction tried again, once. A read that
 * fails while the log consumes the base ends that compaction (the staged
 * generation is an orphan the retry removes; the old one stays current).
 */
import {
  type Event,
  Generation,
  type HistoryError,
  type Job,
  Snapshot,
  type State,
} from "@tay/core";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import type * as Log from "../../log/Log.js";
import type { TerminalIndexError } from "../../store/TerminalIndex.js";
import { type Indexing, isIndexError } from "./terminalIndexing.js";

/** A base core produced that its own fold refuses: a defect of core, never of the log. */
export class BaseDoesNotFold extends Data.TaggedError("BaseDoesNotFold")<{
  readonly reason: HistoryError.HistoryError;
}> {}

/**
 * How many jobs a compaction's base holds and how many the retention left
 * out: both counted inside the held queue, so no command between the state
 * compacted and its base moves either (2026-12-07: counted around the call,
 * a schedule's delivery during it made `jobsDropped` -1).
 */
export interface CompactedJobs {
  readonly jobsKept: number;
  readonly jobsDropped: number;
}

/** What a compaction wrote, and the state its base restores. */
export interface Compacted<C> {
  readonly report: C;
  /** The fold of the new base (what both of the engine's states become). */
  readonly kept: State.State;
  readonly baseRecordCount: number;
}

/** An index read that ended a base: told apart from the log's own errors (a `DiskError` too). */
class IndexReadFailed extends Data.TaggedError("IndexReadFailed")<{
  readonly error: TerminalIndexError;
}> {}

const readFailed = (error: unknown): error is IndexReadFailed => error instanceof IndexReadFailed;

/** Where a read of the index that ended the base is kept (the log sees a defect). */
interface Reads {
  failure: TerminalIndexError | undefined;
}

/** `events`, each applied to `builder` as it passes; an index read that throws is noted. */
function* folding(
  events: Iterable<Event.Event>,
  builder: Generation.Builder,
  reads: Reads,
): Generator<Event.Event, void, undefined> {
  try {
    for (const event of events) {
      const applied = Generation.apply(builder, undefined, event);
      if (applied._tag === "Left") throw new BaseDoesNotFold({ reason: applied.left });
      yield event;
    }
  } catch (error) {
    if (isIndexError(error)) reads.failure = error;
    throw error;
  }
}

/**
 * One compaction of `state` (at the log's `expectedLastSequence`) at
 * `options`, its base streamed into the log: the log's report and the
 * base's fold, or the log's error, or the index's error that ended it.
 */
const once = <K extends Log.Kind>(
  log: Log.Log<K>,
  state: State.State,
  options: Snapshot.Options,
  terminal: Snapshot.TerminalRecords | undefined,
  expectedLastSequence: number,
): Effect.Effect<Compacted<K["compaction"]>, K["error"] | IndexReadFailed> =>
  Effect.suspend(() => {
    const builder = Generation.startBase({ lean: state.lean });
    const reads: Reads = { failure: undefined };
    const base = folding(Snapshot.events(state, options, terminal), builder, reads);
    return log.compact(base, expectedLastSequence).pipe(
      Effect.catchAllDefect((defect) =>
        reads.failure === undefined
          ? Effect.die(defect)
          : Effect.fail(new IndexReadFailed({ error: reads.failure })),
      ),
      Effect.flatMap((report) => {
        Generation.endBase(builder);
        const kept = Generation.finish(builder);
        if (kept._tag === "Left") return Effect.die(new BaseDoesNotFold({ reason: kept.left }));
        return Effect.succeed({
          report,
          kept: kept.right,
          baseRecordCount: builder.recordsApplied,
        });
      }),
    );
  });

/**
 * The index's records of the fact ids asked for, but for those whose
 * finish time (known without a read) the retention drops: core would drop
 * them after reading them (`Snapshot.drops`), and reading a job costs its
 * entry's decode, so a compaction that drops most jobs read them all
 * (33,000 dropped jobs, 0.8 s of a held queue, 2026-12-06). A job whose
 * time is not known is read, as before.
 */
const keptRecords =
  (indexing: Indexing, options: Snapshot.Options): Snapshot.TerminalRecords =>
  (jobIds) => {
    const cutoff = options.now - options.retentionMs;
    function* kept(): Generator<number> {
      for (const jobId of jobIds) {
        const finishedAt = indexing.finishedAt(jobId);
        if (finishedAt === undefined || finishedAt >= cutoff) yield jobId;
      }
    }
    // What is read is noted: the copy into the new index carries the times on.
    function* noting(): Generator<Job.Job> {
      for (const job of indexing.records(kept())) {
        indexing.noteFinished(job);
        yield job;
      }
    }
    return noting();
  };

/**
 * Compacts the decided `state`: a full state's base from memory; a lean
 * one's with its completed jobs read from `indexing`, rebuilt first when
 * it failed before, and rebuilt and tried again when a read fails now.
 */
export const compactStreamed = <K extends Log.Kind>(
  log: Log.Log<K>,
  indexing: Indexing | undefined,
  state: State.State,
  options: Snapshot.Options,
  expectedLastSequence: number,
): Effect.Effect<Compacted<K["compaction"]>, K["error"] | TerminalIndexError> => {
  const unwrapped = <A, X>(effect: Effect.Effect<A, X | IndexReadFailed>) =>
    Effect.mapError(effect, (error) => (readFailed(error) ? error.error : error));
  if (indexing === undefined) {
    return unwrapped(once(log, state, options, undefined, expectedLastSequence));
  }
  const attempt = once(log, state, options, keptRecords(indexing, options), expectedLastSequence);
  const healthy = indexing.failed ? indexing.rebuilt(log) : Effect.void;
  return Effect.zipRight(
    healthy,
    unwrapped(
      Effect.catchIf(attempt, readFailed, () => Effect.zipRight(indexing.rebuilt(log), attempt)),
    ),
  );
};
