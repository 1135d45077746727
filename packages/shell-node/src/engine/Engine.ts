/**
 * The engine: a durable job queue over a log and core's deciders.
 *
 * Commands wait in one queue. A drain (a microtask, so that the commands
 * issued in the same turn share it) hands them to the batch decider
 * (`internal/batchDecider.ts`), which decides each in order against the
 * running state, folds the accepted ones' records as one transient batch,
 * and appends all of them as one batch after the last sequence it has seen
 * (which assigns their sequences in that order). Each caller resolves only
 * once that batch is durable as the log's policy asks, and fails with it. A
 * rejected command fails alone and appends nothing.
 *
 * Two states are kept. `decided` includes everything appended, so the next
 * command decides against it (two claims never take the same job);
 * `committed` includes only batches whose durability has resolved, and is
 * what queries read: a query never shows a job that a crash could still
 * take back under the chosen policy.
 *
 * The engine runs over any `Log` (`log/Log.ts`) and holds no knowledge of
 * files: `open` opens the file store in a directory as its log; `fromLog`
 * takes an opened log. Its users see the log only through a read-only view
 * (`engine.log`): every record appended is one its deciders produced.
 */
import {
  Generation,
  type HistoryError,
  type Job,
  type Progress as JobProgress,
  Query,
  State,
} from "@tay/core";
import * as Clock from "effect/Clock";
import * as Context from "effect/Context";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Fiber from "effect/Fiber";
import * as Layer from "effect/Layer";
import type * as Scope from "effect/Scope";
import type * as Stream from "effect/Stream";
import * as Described from "../disk/Described.js";
import { Disk } from "../disk/Disk.js";
import type * as Log from "../log/Log.js";
import type * as Projection from "../log/Projection.js";
import * as FileLog from "../store/FileLog.js";
import type { FileLogKind } from "../store/FileLog.js";
import * as Init from "../store/Init.js";
import * as Layout from "../store/Layout.js";
import { foldProjection } from "../store/StateProjection.js";
import * as TerminalIndex from "../store/TerminalIndex.js";
import type { TerminalIndexCorrupt, TerminalIndexError } from "../store/TerminalIndex.js";
import type { CompactionReport } from "../store/Store.js";
import { HistoryRejected, type InitError, type RecoveryError } from "../store/StoreError.js";
import type { StoreOptionsInput } from "../store/StoreOptions.js";
import { BatchDecider, type Failure } from "./internal/batchDecider.js";
import {
  type AutoCompact,
  type AutoCompactionStats,
  checkAutoCompact,
  startAutoCompaction,
} from "./internal/autoCompaction.js";
import { type CompactedJobs, compactStreamed } from "./internal/compaction.js";
import {
  type CatchUpStats,
  ContentionExhausted,
  conflictBackoffMsDefault,
  conflictRetriesMaxDefault,
} from "./internal/catchUp.js";
import { CommandQueue, Overloaded, queuedCommandsMaxDefault } from "./internal/commandQueue.js";
import { Rejected } from "./internal/engineRequest.js";
import { type ProgressWatcher, progressFaces } from "./internal/progressBoard.js";
import {
  commandFace,
  type EffectCommands,
  type EffectQueries,
  type PromiseCommands,
  type PromiseQueries,
  queryFace,
} from "./internal/faces.js";
import {
  queries,
  type States,
  type TickReport,
  tickIssues,
  tickReport,
  timeoutGraceMs,
} from "./internal/operations.js";
import { runToPromise } from "./internal/runToPromise.js";
import {
  checkpointRecordsDefault,
  type IndexReport,
  type Indexing,
  indexQuery,
  type JobsFilter,
  OpenFold,
  openIndexing,
  openLog,
  readerOf,
} from "./internal/terminalIndexing.js";
import {
  type Committed,
  iterator,
  type SubscribeOptions,
  type SubscriberStats,
  type Subscription,
  Subscriptions,
  stream,
} from "./internal/subscriptions.js";

export type { Committed, SubscribeOptions, SubscriberStats, Subscription };
import { type Progress, Timers } from "./internal/timers.js";

export {
  ContentionExhausted,
  conflictBackoffMsDefault,
  conflictRetriesMaxDefault,
  Overloaded,
  queuedCommandsMaxDefault,
  Rejected,
};
export type { CatchUpStats, ProgressWatcher };
export type {
  CompleteOptions,
  FailOptions,
  JobFilter,
  Lane,
  NextJobsOptions,
  TickReport,
} from "./internal/operations.js";
export type { CompactedJobs, CompactionReport, FileLogKind };
export type { AutoCompact, AutoCompactionStats } from "./internal/autoCompaction.js";
export { minRecordsDefault as autoCompactMinRecordsDefault } from "./internal/autoCompaction.js";
export { foldProjection };

/** A numeric argument out of its range: refused before anything is decided. */
export class InvalidArgument extends Data.TaggedError("InvalidArgument")<{
  /** The operation and argument, e.g. `compact.retentionMs`. */
  readonly argument: string;
  readonly value: string;
  /** What the argument must be. */
  readonly expected: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "InvalidArgument",
      undefined,
      `${this.argument} must be ${this.expected}, not ${this.value}; nothing was done`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** What every engine command can fail with: a refusal, or its log's failures. */
export type EngineError<K extends Log.Kind = FileLogKind> = Rejected | Overloaded | Failure<K>;

/** What opening an engine can fail with. */
export type OpenError =
  | RecoveryError
  | InitError
  | HistoryRejected<HistoryError.HistoryError>
  | InvalidArgument
  | TerminalIndexCorrupt;

/** How the engine treats what it finds at open, and time. */
export interface StartOptions {
  /**
   * Run timed transitions on their own: one timer set to the state's next
   * wake time ticks the engine (due jobs become available, due schedule
   * occurrences are delivered), so nobody calls `tick`. Default true; a
   * test that drives every tick itself turns it off.
   */
  readonly timers?: boolean;
  /**
   * Committed events a subscriber may have handed over and not taken yet;
   * one that falls further behind reads what it missed from the log
   * instead (see `subscribe`). Default 10,000.
   */
  readonly subscriberBufferMax?: number;
  /**
   * At open, every job still `executing` was claimed by a process that no
   * longer holds the lock: fail those attempts (retry or discard by the
   * usual rules) before serving. Default true.
   */
  readonly rescueOnOpen?: boolean;
  /**
   * Commands that may wait to be decided (issued faster than the log takes
   * them, or held by a compaction); past it a command is refused at once
   * with `Overloaded` and nothing is done. `room()` waits until there is
   * room. A positive integer; default 100,000.
   */
  readonly queuedCommandsMax?: number;
  /**
   * A log shared with other engines: how many times one command is decided
   * again after `AppendConflict` (another engine appended first) before its
   * caller gets `ContentionExhausted`. A positive integer; default 64.
   */
  readonly conflictRetriesMax?: number;
  /**
   * A log shared with other engines: after a second `AppendConflict` in a
   * row (no append of this engine went through between them), wait this
   * long before reading what the others appended and deciding again,
   * twice as long after each further one, up to 8 times it; the first
   * conflict is caught up at once. Commands issued meanwhile wait and are
   * decided with the refused ones, so engines that keep racing for the log
   * take turns in fewer, larger appends (docs/postgres.md, "An engine that
   * keeps losing steps aside"): 20 made 4 engines × 16 producers 1.3–1.6x
   * faster. Only an engine in an even race waits: one whose own records
   * are under an eighth, or over two thirds, of those it appended or
   * folded lately never does (a web process inserting now and then beside
   * busy workers would wait up to a second for its turn). Milliseconds, 0
   * to 60,000; 0 never waits. Default 20.
   */
  readonly conflictBackoffMs?: number;
  /**
   * Compact on its own, with this retention, once the records appended
   * since the generation's base reach `max(minRecords, growth × jobs the
   * base holds)` (defaults 100,000 and 4): the cost of compacting (the
   * jobs it rewrites) stays a constant share of each record appended. A
   * failure is kept for `autoCompaction()` and tried again after another
   * `minRecords` records. Default false: dropping finished jobs is the
   * owner's choice (docs/engine.md, "Compaction on its own").
   */
  readonly autoCompact?: AutoCompact | false;
}

export interface EngineOptions extends StoreOptionsInput, StartOptions {
  /**
   * Initialize the store first when `directory` holds none (missing, or
   * empty but for init debris), like LevelDB's `create_if_missing`. A
   * non-empty directory without a store is still refused (`NotEmpty`).
   * Default false.
   */
  readonly createIfMissing?: boolean;
  /**
   * Keep completed jobs out of memory (issue 19): the state is lean (a
   * completed job without a unique key is held as its facts only) and their
   * whole records live in the disk-backed terminal index beside the store,
   * `DATA_DIR/terminal-index/`, rebuilt from the log at open when it is
   * missing or stale (during the open's one fold). `job`, `jobs` and
   * `counts` answer as on a full state; `state()` is the lean state.
   * Default true; false keeps every job whole in memory and writes no index
   * (docs/engine.md, "The terminal index by default").
   */
  readonly terminalIndex?: boolean;
  /**
   * With the terminal index: records committed since the last state image
   * after which the engine writes another (a checkpoint) at the next
   * commit whose segments' digests the store knows, so that an open after a crash folds
   * at most about this many records onto it; never fewer than the jobs
   * the state holds, since an image costs in proportion to them
   * (docs/store.md, "Checkpoints"). Default 262,144; false writes an
   * image only at the close.
   */
  readonly checkpointRecords?: number | false;
}

/** Recovery report plus what the fold found. */
export type EngineReport<K extends Log.Kind = FileLogKind> = K["report"] & {
  readonly jobs: Query.Counts;
  readonly schedules: number;
  readonly lastJobId: number;
  /** Jobs found executing at open and failed by the rescue. */
  readonly rescued: number;
  /** The terminal index, when the engine keeps one: why it was rebuilt at open, if it was. */
  readonly terminalIndex: IndexReport | null;
};

/** What `health` answers. */
export interface EngineHealth {
  /** False once the log refuses appends for good. */
  readonly ok: boolean;
  /**
   * `open`; `gated` while the log holds appends for a moment (a
   * compaction's switch to its new generation); `refused` for good.
   */
  readonly log: "open" | "gated" | "refused";
  /** Why the log refuses appends (its error's message), or null. */
  readonly reason: string | null;
}

/** The engine's health as its log's admission tells it. */
const healthOf =
  <K extends Log.Kind>(log: Log.Log<K>) =>
  (): EngineHealth => {
    const admitted = log.admission();
    switch (admitted._tag) {
      case "Open":
        return { ok: true, log: "open", reason: null };
      case "Gated":
        return { ok: true, log: "gated", reason: null };
      default:
        return { ok: false, log: "refused", reason: Described.messageOf(admitted.error) };
    }
  };

/** The engine's operations answered as promises (see `EnginePromises`). */
export type PromiseFace<K extends Log.Kind = FileLogKind> = PromiseCommands &
  PromiseQueries & {
    /** Makes due jobs available and delivers or skips due schedule occurrences. */
    readonly tick: () => Promise<TickReport>;
    /** Writes a new generation without terminal jobs finished before now - retentionMs. */
    readonly compact: (retentionMs: number) => Promise<K["compaction"] & CompactedJobs>;
    /** Writes what is appended now, whatever the flush policy, and waits until durable. */
    readonly flush: () => Promise<void>;
    /** What the engine's own compactions did (`autoCompact`); null when it compacts only when told. */
    readonly autoCompaction: () => AutoCompactionStats | null;
    /** Every committed domain event from now (or `from`), in log order (see `subscribe`). */
    readonly subscribe: (options?: SubscribeOptions) => Subscription;
    /** The subscribers, how far behind the furthest is, what they hold untaken. */
    readonly subscriberStats: () => SubscriberStats;
    /** Tells `listener` each committed batch's records (see `EngineService.watch`). */
    readonly watch: (listener: Watcher) => () => void;
    /** Resolves once the command queue has room (see `EngineService.room`). */
    readonly room: () => Promise<void>;
    /** See `EngineService.inspectJob`. */
    readonly inspectJob: (jobId: number) => Promise<Job.Job | undefined>;
    /** See `EngineService.inspectJobs`. */
    readonly inspectJobs: (filter?: JobsFilter) => Promise<ReadonlyArray<Job.Job>>;
    /** See `EngineService.reportProgress`. */
    readonly reportProgress: (jobId: number, attempt: number, progress: unknown) => Promise<void>;
    /** See `EngineService.progress`. */
    readonly progress: (jobId: number) => JobProgress.Progress | undefined;
    /** See `EngineService.progresses`. */
    readonly progresses: () => ReadonlyArray<JobProgress.Progress>;
    /** See `EngineService.progressHeld`. */
    readonly progressHeld: () => number;
    /** See `EngineService.watchProgress`. */
    readonly watchProgress: (watcher: ProgressWatcher) => () => void;
    /** See `EngineService.health`. */
    readonly health: () => EngineHealth;
    /**
     * Resolves once the engine has closed (its subscriptions ended): for
     * what waits on its commits, such as `JobEnd.whenEnded`.
     */
    readonly closed: Promise<void>;
  };

/** The engine as an Effect service: its commands, queries, report and log view. */
export type EngineService<K extends Log.Kind = FileLogKind> = EffectCommands<
  Failure<K> | Overloaded
> &
  EffectQueries & {
    readonly report: EngineReport<K>;
    /** The log, read-only: reads, stats; nothing that appends. */
    readonly log: K["view"];
    /**
     * The same commands and reads answered as promises (see
     * `EnginePromises`): for callers outside Effect, without a fiber per
     * command. Valid while the engine's scope is open.
     */
    readonly promises: PromiseFace<K>;
    /** Makes due jobs available and delivers or skips due schedule occurrences. */
    readonly tick: () => Effect.Effect<TickReport, EngineError<K>>;
    /** Writes a new generation without terminal jobs finished before now - retentionMs. */
    readonly compact: (
      retentionMs: number,
    ) => Effect.Effect<K["compaction"] & CompactedJobs, EngineError<K> | InvalidArgument>;
    /** Writes what is appended now, whatever the flush policy, and waits until durable. */
    readonly flush: () => Effect.Effect<void, K["error"]>;
    /**
     * Every committed domain event from now (or from `options.from`), with
     * its record's sequence, in log order. A subscriber that falls more
     * than `subscriberBufferMax` events behind reads what it missed from
     * the log (memory stays bounded); one so far behind that compaction
     * removed it fails with `Compacted`. The stream ends when the engine
     * closes.
     */
    readonly subscribe: (options?: SubscribeOptions) => Stream.Stream<Committed, K["error"]>;
    /** The subscribers, how far behind the furthest is, what they hold untaken. */
    readonly subscriberStats: () => Effect.Effect<SubscriberStats>;
    /**
     * Tells `listener`, synchronously, every committed batch's records in
     * log order (a mutation is one record), as the batch commits; returns
     * the function that stops it. For runtimes that react to commits (the
     * worker notices a cancelled job this way): keep the listener short
     * and never let it throw; for anything that may fall behind, use
     * `subscribe`.
     */
    readonly watch: (listener: Watcher) => () => void;
    /**
     * Resumes once the command queue holds fewer than `queuedCommandsMax`
     * commands (at once if it does): what a caller refused with `Overloaded`
     * waits on before issuing again. Room is not reserved, so loop.
     */
    readonly room: () => Effect.Effect<void>;
    /**
     * One committed job, as `job` answers it, but failing with the terminal
     * index's error (its disk, or bytes that no longer check) where `job`
     * throws it.
     */
    readonly inspectJob: (jobId: number) => Effect.Effect<Job.Job | undefined, TerminalIndexError>;
    /** Committed jobs as `jobs` lists them, failing with the index's error where `jobs` throws it. */
    readonly inspectJobs: (
      filter?: JobsFilter,
    ) => Effect.Effect<ReadonlyArray<Job.Job>, TerminalIndexError>;
    /**
     * Holds `progress` as the progress of the job's executing `attempt`, at
     * the clock's now (core's `Progress`): in this engine's memory, never
     * in the log, let go when the attempt ends (docs/engine.md,
     * "Progress"). Fails with `Rejected` and holds nothing: `StaleAttempt`
     * once the attempt ended, `InvalidField` naming the path inside the
     * value that is not one, `TooLarge` past 64 KiB encoded.
     */
    readonly reportProgress: (
      jobId: number,
      attempt: number,
      progress: unknown,
    ) => Effect.Effect<void, Rejected>;
    /** The job's progress while the attempt it was reported for executes, or undefined. */
    readonly progress: (jobId: number) => Effect.Effect<JobProgress.Progress | undefined>;
    /** Every executing attempt's progress this engine holds, ascending by job id. */
    readonly progresses: () => Effect.Effect<ReadonlyArray<JobProgress.Progress>>;
    /**
     * How many progress reports the engine holds: at most one per executing
     * attempt (a report is let go as its attempt's end commits).
     */
    readonly progressHeld: () => number;
    /**
     * Tells `watcher`, synchronously, each progress report as the engine
     * holds it (BullMQ's `QueueEvents` "progress"), until the returned
     * function is called. Keep it short and never let it throw, as a
     * `watch` listener.
     */
    readonly watchProgress: (watcher: ProgressWatcher) => () => void;
    /**
     * Whether the engine can still do its work: false once its log refuses
     * appends for good (its writer failed, or it closed), when only a
     * restart helps. What a liveness check asks (`GET /v1/health`).
     */
    readonly health: () => Effect.Effect<EngineHealth>;
    /**
     * How often appends met another engine's records on a shared log
     * (`AppendConflict`) and commands were decided again after catching up.
     */
    readonly contention: () => CatchUpStats;
    /** What the engine's own compactions did (`autoCompact`); null when it compacts only when told. */
    readonly autoCompaction: () => AutoCompactionStats | null;
    /**
     * Drains what is appended and closes the log now, failing with what the
     * close met (the scope's end closes it too, ignoring that). Later
     * commands fail with `StoreClosed`. Idempotent.
     */
    readonly close: () => Effect.Effect<void, K["error"]>;
  };

/** The engine as an Effect service. */
export class Engine extends Context.Tag("@tay/shell-node/Engine")<Engine, EngineService>() {}

/** Told each committed batch's records, in log order (see `EngineService.watch`). */
export type Watcher = (records: ReadonlyArray<Projection.Entry>) => void;

/** Committed events a subscriber may hold untaken before it reads the log instead. */
export const subscriberBufferMaxDefault = 10_000;

/** The error a rescued orphan's attempt records. */
export const orphanError = "orphaned: the process that claimed this job stopped";

// Only the marker's absence triggers init: a directory with STORE-V2 but no
// CURRENT is an interrupted init, which open must refuse, not redo.
const initIfMissing = (directory: string): Effect.Effect<void, InitError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const marker = yield* Effect.either(disk.stat(Layout.markerPath(directory)));
    if (marker._tag === "Right") return;
    if (marker.left.code !== "ENOENT") return yield* marker.left;
    yield* Init.init(directory);
  });

/** The finished state of a recovered log, or the fold's refusal of its end. */
const finished = <K extends Log.Kind>(
  recovered: Log.Recovered<Generation.Builder, K>,
): Effect.Effect<State.State, HistoryRejected<HistoryError.HistoryError>> => {
  const state = Generation.finish(recovered.state);
  return state._tag === "Right"
    ? Effect.succeed(state.right)
    : Effect.fail(
        new HistoryRejected<HistoryError.HistoryError>({
          path: recovered.log.view.path,
          offset: 0,
          sequence: recovered.report.lastSequence,
          reason: state.left,
        }),
      );
};

/**
 * `value` when it is an integer from `min` to `max`, else `InvalidArgument`
 * naming the option and what it takes: every numeric engine option's check.
 */
const wholeIn = (
  argument: string,
  value: number,
  min: number,
  max: number,
  expected: string,
): Effect.Effect<number, InvalidArgument> =>
  Number.isSafeInteger(value) && value >= min && value <= max
    ? Effect.succeed(value)
    : Effect.fail(new InvalidArgument({ argument, value: String(value), expected }));

/** Refuses a retention that is not a count of milliseconds. */
const checkRetention = (retentionMs: number): Effect.Effect<number, InvalidArgument> =>
  wholeIn(
    "compact.retentionMs",
    retentionMs,
    0,
    Number.MAX_SAFE_INTEGER,
    "an integer number of milliseconds, 0 to 2^53-1",
  );

/** Refuses a bound (`queuedCommandsMax`, `conflictRetriesMax`) that is not a positive count. */
const checkCount = (argument: string, value: number): Effect.Effect<number, InvalidArgument> =>
  wholeIn(argument, value, 1, Number.MAX_SAFE_INTEGER, "an integer count of commands, 1 to 2^53-1");

/** Refuses a `conflictBackoffMs` that is not a whole number of milliseconds up to a minute. */
const checkBackoff = (value: number): Effect.Effect<number, InvalidArgument> =>
  wholeIn("conflictBackoffMs", value, 0, 60_000, "an integer number of milliseconds, 0 to 60,000");

/** `checkpointRecords` as a count (false: never, before the close), or why it is refused. */
const checkpointRecordsOf = (
  value: number | false | undefined,
): Effect.Effect<number, InvalidArgument> => {
  if (value === undefined) return Effect.succeed(checkpointRecordsDefault);
  if (value === false) return Effect.succeed(Number.POSITIVE_INFINITY);
  return wholeIn(
    "checkpointRecords",
    value,
    1,
    Number.MAX_SAFE_INTEGER,
    "an integer count of records, 1 to 2^53-1, or false",
  );
};

/** Turns a compaction waits at most for the batches it decided to commit. */
const commitTurnsMax = 10_000;

/**
 * Makes what is decided durable and lets its commits run: the terminal
 * index takes the jobs a batch lets go of only once it commits, and the
 * snapshot of the decided state reads them there.
 */
const committedAll = <K extends Log.Kind>(log: Log.Log<K>, decider: BatchDecider<K>) =>
  Effect.gen(function* () {
    yield* log.flush();
    for (let turn = 0; turn < commitTurnsMax; turn++) {
      if (decider.committedLastSequence >= log.lastSequence()) return;
      yield* Effect.yieldNow();
    }
  });

/**
 * Compaction: decide what is queued, hold the queue, write the new base of
 * the decided state, and make the folded base both states.
 */
const compactor = <K extends Log.Kind>(
  log: Log.Log<K>,
  queue: CommandQueue<K>,
  decider: BatchDecider<K>,
  rebased: (firstSequence: number) => void,
  indexing: Indexing | undefined,
) =>
  Effect.map(
    Effect.makeSemaphore(1),
    (compactions) => (retentionMs: number) =>
      compactions.withPermits(1)(
        Effect.gen(function* () {
          yield* checkRetention(retentionMs);
          const at = yield* Clock.currentTimeMillis;
          yield* Effect.sync(() => queue.pause());
          // No catch-up replaces the states while the base is written and folded.
          const body = Effect.gen(function* () {
            if (indexing !== undefined) yield* committedAll(log, decider);
            // What `decided` holds, not the log's last (which a catch-up moves to the
            // head before it folds the records; none runs now, but a base must never
            // be offered for records it lacks: the log refuses a stale expectation).
            const lastBefore = decider.decidedThrough;
            const options = { now: at, retentionMs };
            // The base is produced as the log writes it, and folded as it goes (issue 19).
            const decided = decider.decided;
            const compacted = yield* compactStreamed(log, indexing, decided, options, lastBefore);
            decider.rebase(compacted.kept);
            rebased(lastBefore + 1);
            // The new base keeps what the retention keeps: so does the index. The log is
            // compacted whatever the index meets: a failed rewrite is rebuilt from the log.
            // Commands go on once the index is taken, not after its copy (2026-12-07: 1.5-2 s
            // of a held queue on a store keeping 1,000,000 completed jobs).
            if (indexing !== undefined) {
              const { kept, baseRecordCount } = compacted;
              const goOn = Effect.sync(() => queue.resume());
              yield* Effect.catchAll(indexing.rebased(log, kept, baseRecordCount, goOn), () =>
                Effect.ignore(indexing.rebuilt(log)),
              );
            }
            const jobsKept = State.jobCount(compacted.kept);
            const jobsDropped = State.jobCount(decided) - jobsKept;
            return { ...compacted.report, jobsKept, jobsDropped };
          });
          return yield* Effect.acquireUseRelease(
            decider.catchUp.suspend(),
            () => body,
            () => Effect.sync(() => decider.catchUp.resume()),
          ).pipe(
            // Refused because another writer moved the log (a shared one): catch up
            // now, so that the caller's next try finds this engine current.
            Effect.tapError((error) =>
              Effect.sync(() => {
                if (error._tag === "CompactionConflict") decider.catchUp.follow();
              }),
            ),
            Effect.ensuring(Effect.sync(() => queue.resume())),
          );
        }),
      ),
  );

/** Fails every executing job (the lock, or the log, proves no other worker runs them). */
const rescueOrphans = <K extends Log.Kind>(
  decider: BatchDecider<K>,
  rescue: EffectCommands<Failure<K> | Overloaded>["rescue"],
): Effect.Effect<number, EngineError<K>> =>
  Query.jobsIn(decider.decided, "executing").length === 0
    ? Effect.succeed(0)
    : rescue(Number.MAX_SAFE_INTEGER, orphanError);

/**
 * The subscriptions of an engine over `recovered`, and what a compaction
 * tells them: the new generation's first sequence (its base is no events).
 */
const subscriptionsOf = <K extends Log.Kind>(
  { log, report }: Opened<K>,
  decider: BatchDecider<K>,
  bufferMax: number,
) => {
  let generation = {
    first: report.firstSequence,
    firstEvent: report.firstSequence + report.baseRecordCount,
  };
  const subscriptions = new Subscriptions(
    log.view,
    () => decider.committedLastSequence,
    () => generation,
    bufferMax,
  );
  const rebased = (firstSequence: number) => {
    generation = { first: firstSequence, firstEvent: log.lastSequence() + 1 };
    subscriptions.skipTo(generation.firstEvent);
  };
  decider.afterReload = ({ firstSequence, firstEvent }) => {
    generation = { first: firstSequence, firstEvent };
    subscriptions.reread();
  };
  return { subscriptions, rebased };
};

/**
 * The state an engine starts from, handed to its decider and then
 * forgotten. A generator's context keeps every variable its closures name,
 * and the engine's closures live as long as the engine: a `state` named in
 * `serve` or `deciding` kept the open's state, and through it every version
 * of the maps since (each job present at open, the unique index's change
 * records), for the engine's life.
 */
interface Opening {
  state: State.State | undefined;
}

/** The decider and queue over a recovered log, and what ends their waits when the log closes. */
const deciding = <K extends Log.Kind>(
  { log }: Opened<K>,
  opening: Opening,
  now: () => number,
  options: StartOptions,
) =>
  Effect.gen(function* () {
    const state = opening.state;
    opening.state = undefined;
    if (state === undefined) return yield* Effect.dieMessage("the opening state was taken twice");
    const queuedCommandsMax = yield* checkCount(
      "queuedCommandsMax",
      options.queuedCommandsMax ?? queuedCommandsMaxDefault,
    );
    const conflictRetriesMax = yield* checkCount(
      "conflictRetriesMax",
      options.conflictRetriesMax ?? conflictRetriesMaxDefault,
    );
    const backoffMs = yield* checkBackoff(options.conflictBackoffMs ?? conflictBackoffMsDefault);
    const decider = new BatchDecider(log, state, log.lastSequence(), now, {
      retriesMax: conflictRetriesMax,
      backoffMs,
    });
    // A shared log: another engine's records may feed a claim parked here.
    const unwatch = log.watchOthers?.(() => decider.catchUp.follow());
    if (unwatch !== undefined) yield* Effect.addFinalizer(() => Effect.sync(unwatch));
    const queue = new CommandQueue(log, decider, queuedCommandsMax);
    // A log that takes jobs in from elsewhere: a drain takes them.
    const unwatchIncoming = log.incoming?.watch(() => queue.kick());
    if (unwatchIncoming !== undefined)
      yield* Effect.addFinalizer(() => Effect.sync(unwatchIncoming));
    // Once the log no longer takes appends, no parked claim would ever wake.
    const refuseParked = Effect.sync(() => {
      const admitted = log.admission();
      if (admitted._tag === "Refused") queue.refuseParked(admitted.error);
    });
    yield* Effect.addFinalizer(() => refuseParked);
    return { decider, queue, refuseParked };
  });

/**
 * What runs after each commit, in order: the terminal index takes the jobs
 * that leave memory, subscribers and watchers see the records, the timer
 * re-reads the next wake time. Answers `watch`.
 */
const listenToCommits = <K extends Log.Kind>(
  log: Log.Log<K>,
  decider: BatchDecider<K>,
  subscriptions: Subscriptions<K["error"]>,
  timers: Timers,
  indexing: Indexing | undefined,
): ((listener: Watcher) => () => void) => {
  const watchers = new Set<Watcher>();
  decider.afterCommit = (records, before, left) => {
    if (indexing !== undefined) {
      if (left !== undefined) indexing.letGo(left);
      else {
        indexing.committed(
          before,
          records.map((record) => record.event),
        );
      }
      indexing.checkpoint(log);
    }
    subscriptions.publish(records);
    for (const watcher of watchers) watcher(records);
    timers.poke();
  };
  return (listener) => {
    watchers.add(listener);
    return () => {
      watchers.delete(listener);
    };
  };
};

/**
 * Runs the engine over a recovered log for the scope: the optional rescue
 * of orphaned jobs, then service. The log's state must be core's fold
 * (`foldProjection`) of its current generation.
 */
export const fromLog = <K extends Log.Kind>(
  recovered: Log.Recovered<Generation.Builder, K>,
  options: StartOptions = {},
  indexing?: Indexing,
): Effect.Effect<
  EngineService<K>,
  HistoryRejected<HistoryError.HistoryError> | EngineError<K> | InvalidArgument,
  Scope.Scope
> =>
  Effect.flatMap(finished(recovered), (state) =>
    serve({ log: recovered.log, report: recovered.report }, state, options, indexing),
  );

/** What the engine keeps of a recovered log: not its fold's builder. */
interface Opened<K extends Log.Kind> {
  readonly log: Log.Recovered<Generation.Builder, K>["log"];
  readonly report: Log.Recovered<Generation.Builder, K>["report"];
}

/**
 * `fromLog` once the fold is finished. Every closure the engine keeps is
 * made in here, where the recovered log's builder is out of reach: a
 * closure made where `recovered` is in scope kept the open's whole fold
 * (the builder's array of every job id) for the engine's life.
 */
const serve = <K extends Log.Kind>(
  opened: Opened<K>,
  state: State.State,
  options: StartOptions,
  indexing: Indexing | undefined,
): Effect.Effect<EngineService<K>, EngineError<K> | InvalidArgument, Scope.Scope> => {
  const opening: Opening = { state };
  return Effect.gen(function* () {
    const { log } = opened;
    // The promise face reads the clock of the context the engine was opened in.
    const clock = yield* Effect.clock;
    const now = () => clock.unsafeCurrentTimeMillis();
    const { decider, queue, refuseParked } = yield* deciding(opened, opening, now, options);
    const timers = new Timers(
      () => Query.nextWakeAt(decider.decided, timeoutGraceMs),
      () => decider.parkedWakeAt(),
    );
    decider.parkedAgain = () => timers.poke();
    const { subscriptions, rebased } = subscriptionsOf(
      opened,
      decider,
      options.subscriberBufferMax ?? subscriberBufferMaxDefault,
    );
    const { closed, closeSubscriptions } = closingOf(subscriptions);
    yield* Effect.addFinalizer(() => closeSubscriptions);
    const watch = listenToCommits(log, decider, subscriptions, timers, indexing);
    const states = statesOf(decider, indexing);
    const effects = effectFace(queue, states);
    const rescued =
      options.rescueOnOpen === false ? 0 : yield* rescueOrphans(decider, effects.rescue);
    const compact = yield* compactor(log, queue, decider, rebased, indexing);
    const jobs = () => State.jobCount(decider.committed);
    const auto = { compact, now, jobs, watch };
    const autoCompaction = yield* compactingOnItsOwn(options.autoCompact, opened, auto);
    const progress = progressFaces(watch, () => decider.committed, now);
    const health = healthOf(log);
    const inspectJob = (jobId: number) => indexQuery(() => queries.job(states(), jobId));
    const inspectJobs = (filter: JobsFilter = {}) =>
      indexQuery(() => queries.jobs(states(), filter));
    if (options.timers !== false) yield* forkTimers(timers, queue, effects.tick);
    // Programs of several steps are defined once, as Effects, and run for
    // the promise face on the engine's clock.
    const run = <A, X>(program: Effect.Effect<A, X>) =>
      runToPromise(Effect.withClock(program, clock));
    const promises = promiseFace(queue, states, now, {
      tick: () => run(effects.tick()),
      compact: (retentionMs) => run(compact(retentionMs)),
      flush: () => run(log.flush()),
      autoCompaction: () => autoCompaction?.stats() ?? null,
      subscribe: (subscribeOptions = {}) => iterator(subscriptions, subscribeOptions, run),
      subscriberStats: () => subscriptions.stats(),
      watch,
      room: queue.roomPromise,
      inspectJob: (jobId) => run(inspectJob(jobId)),
      inspectJobs: (filter) => run(inspectJobs(filter)),
      ...progress.promises,
      health,
      closed,
    });
    return {
      ...effects,
      report: engineReport(opened.report, decider.committed, rescued, indexing),
      log: log.view,
      promises,
      compact,
      flush: log.flush,
      subscribe: (subscribeOptions) => stream(subscriptions, subscribeOptions),
      subscriberStats: () => Effect.sync(() => subscriptions.stats()),
      watch,
      room: queue.room,
      inspectJob,
      inspectJobs,
      ...progress.effects,
      health: () => Effect.sync(health),
      contention: () => decider.catchUp.stats(),
      autoCompaction: () => autoCompaction?.stats() ?? null,
      close: () => Effect.ensuring(log.close(), Effect.zipRight(refuseParked, closeSubscriptions)),
    };
  });
};

/** The promise the engine's close resolves, and the close of its subscriptions that resolves it. */
const closingOf = <E>(subscriptions: Subscriptions<E>) => {
  let markClosed = (): void => {};
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const closeSubscriptions = Effect.sync(() => {
    subscriptions.closeAll();
    markClosed();
  });
  return { closed, closeSubscriptions };
};

/**
 * The engine's compaction fiber when `autoCompact` asks for one
 * (internal/autoCompaction.ts), or null; a wrong option refuses the open.
 */
const compactingOnItsOwn = <K extends Log.Kind, E>(
  autoCompact: AutoCompact | false | undefined,
  { log, report }: Opened<K>,
  engine: {
    readonly compact: (retentionMs: number) => Effect.Effect<CompactedJobs, E>;
    readonly now: () => number;
    readonly jobs: () => number;
    readonly watch: (listener: Watcher) => () => void;
  },
) => {
  if (autoCompact === undefined || autoCompact === false) return Effect.succeed(null);
  const checked = checkAutoCompact(autoCompact);
  if ("refused" in checked) return Effect.fail(new InvalidArgument(checked.refused));
  const generation = () =>
    Effect.map(log.view.generation(), (current) => ({
      firstSequence: current.firstSequence,
      // A log that does not tell its base's length: the rule counts every record as appended.
      baseRecordCount: current.baseRecordCount ?? 0,
    }));
  const lastSequence = () => log.lastSequence();
  const compacting = { ...engine, lastSequence, generation };
  return Effect.tap(startAutoCompaction(checked.ok, compacting, report), (started) =>
    Effect.sync(() => engine.watch(started.committed)),
  );
};

/**
 * The engine's states as its queries read them: the committed and the
 * decided, and the terminal index's reader when there is one (whose close
 * then writes the state image of what is committed, docs/store.md).
 */
const statesOf = <K extends Log.Kind>(
  decider: BatchDecider<K>,
  indexing: Indexing | undefined,
): (() => States) => {
  if (indexing === undefined) {
    return () => ({ committed: decider.committed, decided: decider.decided });
  }
  indexing.committedState = () => ({
    state: decider.committed,
    lastSequence: decider.committedLastSequence,
  });
  const terminal = readerOf(indexing);
  return () => ({ committed: decider.committed, decided: decider.decided, terminal });
};

/**
 * Runs the timers in the engine's scope: interrupted when it closes, ended
 * on their own once the log is closed. A full queue defers a tick until
 * there is room; it does not end the timers.
 */
const forkTimers = <K extends Log.Kind, E extends { readonly _tag: string }>(
  timers: Timers,
  queue: CommandQueue<K>,
  tick: () => Effect.Effect<Progress, E>,
) =>
  Effect.forkScoped(
    Effect.ignore(
      timers.run(
        Effect.retry(Effect.zipRight(queue.room(), tick()), {
          while: (error) => error._tag === "Overloaded",
        }),
      ),
    ),
  );

/** What the fold found at open. */
const reportOf = (state: State.State) => ({
  jobs: Query.totals(state),
  schedules: state.schedules.size,
  lastJobId: state.lastJobId,
});

/** The open's report: the log's recovery, the fold's findings, the rescue, the terminal index. */
const engineReport = <K extends Log.Kind>(
  recovery: K["report"],
  state: State.State,
  rescued: number,
  indexing: Indexing | undefined,
): EngineReport<K> => ({
  ...recovery,
  ...reportOf(state),
  rescued,
  terminalIndex: indexing?.report ?? null,
});

/** The Effect face: every command through a fiber, every query as `Effect.sync`. */
const effectFace = <K extends Log.Kind>(queue: CommandQueue<K>, states: () => States) => {
  const commands = commandFace((make, args) =>
    Effect.flatMap(Clock.currentTimeMillis, (time) => queue.execute(make(time, ...args))),
  );
  const reads = queryFace(states, Effect.sync);
  const tick = () =>
    Effect.gen(function* () {
      const time = yield* Clock.currentTimeMillis;
      const [dueJobs, dueOccurrences, timeouts] = tickIssues(time);
      const promoted = yield* queue.execute(dueJobs);
      const occurrences = yield* queue.execute(dueOccurrences);
      return tickReport(promoted, occurrences, yield* queue.execute(timeouts));
    });
  // The tables' entries have the mapped types' shapes by construction (faces.ts).
  return { ...commands, ...reads, tick } as unknown as EffectCommands<Failure<K> | Overloaded> &
    EffectQueries & { readonly tick: () => Effect.Effect<TickReport, EngineError<K>> };
};

/** The promise face: every command settles a promise, every query is a plain call. */
const promiseFace = <K extends Log.Kind>(
  queue: CommandQueue<K>,
  states: () => States,
  now: () => number,
  programs: Pick<
    PromiseFace<K>,
    | "tick"
    | "compact"
    | "flush"
    | "autoCompaction"
    | "subscribe"
    | "subscriberStats"
    | "watch"
    | "room"
    | "inspectJob"
    | "inspectJobs"
    | "reportProgress"
    | "progress"
    | "progresses"
    | "progressHeld"
    | "watchProgress"
    | "health"
    | "closed"
  >,
): PromiseFace<K> => {
  const commands = commandFace((make, args) => queue.submit(make(now(), ...args)));
  const reads = queryFace(states, (read) => read());
  // The tables' entries have the mapped types' shapes by construction (faces.ts).
  return { ...commands, ...reads, ...programs } as unknown as PromiseFace<K>;
};

/**
 * Opens the engine on the store in `directory` for the scope: recovery
 * (validate, fold), the optional rescue of orphaned jobs, then service.
 */
export const open = (
  directory: string,
  options: EngineOptions = {},
): Effect.Effect<EngineService, OpenError | EngineError, Disk | Scope.Scope> =>
  Effect.gen(function* () {
    const checkpointRecords = yield* checkpointRecordsOf(options.checkpointRecords);
    if (options.createIfMissing === true) yield* initIfMissing(directory);
    if (options.terminalIndex === false) {
      return yield* fromLog(yield* FileLog.open(directory, options, foldProjection), options);
    }
    // HEAD is read before the fold, so that the fold knows whether to rebuild the index too.
    const found = yield* TerminalIndex.peek(directory);
    // HEAD's offsets file is read on the thread pool while the fold checks
    // segments (its fresh pages' faults cost ~65 ms at 1,000,000 jobs); the
    // index's open joins it, and nothing of it outlives the open.
    const offsets = yield* Effect.fork(TerminalIndex.readSavedOffsets(directory, found));
    // Let it ask for the file now, before this fiber's own reads.
    yield* Effect.yieldNow();
    const image = yield* TerminalIndex.peekImage(directory, found);
    const fold = new OpenFold(
      found,
      directory,
      TerminalIndex.stagedBytesMax,
      image,
      Fiber.join(offsets),
    );
    const { recovered, indexing } = yield* Effect.ensuring(
      Effect.gen(function* () {
        const recovered = yield* openLog(directory, options, fold);
        return { recovered, indexing: yield* openIndexing(directory, recovered, fold) };
      }),
      Fiber.interrupt(offsets),
    );
    const { log } = recovered;
    indexing.digests = log.view.digests;
    indexing.checkpointRecords = checkpointRecords;
    // Added after the log's own finalizer, so it runs first: the log is closed
    // (every append settled) before HEAD names its last sequence.
    yield* Effect.addFinalizer(() =>
      Effect.ignore(Effect.zipRight(Effect.ignore(log.close()), indexing.close(log))),
    );
    return yield* fromLog(recovered, options, indexing);
  });

/** A scoped layer providing `Engine` for the store in `directory`. */
export const layer = (
  directory: string,
  options: EngineOptions = {},
): Layer.Layer<Engine, OpenError | EngineError, Disk> =>
  Layer.scoped(Engine, open(directory, options));
