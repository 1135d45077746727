/**
 * The engine's side of the terminal inspection index (issue 19): at open,
 * the index is checked against the log and rebuilt from it when stale; each
 * commit's records let go of completed jobs (`Evolve.leaving`), which are
 * appended in the background and served from memory until written; reads
 * of a job the lean state holds as facts go to the index. A compaction
 * writes a fresh index from the new base (so retention prunes it too), and
 * the close publishes HEAD for the last sequence.
 */
import { type Event, Evolve, Generation, type Job, State, type Terminal } from "@tay/core";
import { type Context, Effect } from "effect";
import type { Disk } from "../../disk/Disk.js";
import type * as Log from "../../log/Log.js";
import * as TerminalIndex from "../../store/TerminalIndex.js";
import type { JobFilter } from "./operations.js";

/** Entries read from the log at a time while rebuilding. */
export const rebuildPageRecords = 1024;

/** What the open found of the index. */
export interface IndexReport {
  /** Why the index was rebuilt at open (one line), or null when it was current. */
  readonly rebuilt: string | null;
}

/** The log's identity now: its store, current epoch and last sequence. */
const identityOf = <K extends Log.Kind>(log: Log.Log<K>) =>
  Effect.map(log.view.generation(), ({ epoch }) => ({
    storeId: log.view.storeId,
    epoch,
    lastSequence: log.lastSequence(),
  }));

const filtered = (jobs: ReadonlyArray<Job.Job>, filter: JobsFilter): ReadonlyArray<Job.Job> =>
  jobs.filter(
    (job) =>
      (filter.queue === undefined || job.queue === filter.queue) &&
      (filter.state === undefined || job.state === filter.state),
  );

/** Which jobs a listing wants (as the engine's `jobs` query). */
export type JobsFilter = JobFilter;

/** The index of an engine over a lean state, and its background writer. */
export class Indexing {
  #index: TerminalIndex.TerminalIndex;
  // Whole records let go of but not yet written; cleared once the queue is.
  readonly #pending = new Map<number, Job.Job>();
  readonly #queue: Array<Terminal.Left> = [];
  readonly #lock: Effect.Semaphore;
  readonly #context: Context.Context<Disk>;
  /** The first failure of a background write: later reads fail with it. */
  #failure: TerminalIndex.TerminalIndexError | undefined = undefined;

  constructor(
    readonly directory: string,
    index: TerminalIndex.TerminalIndex,
    lock: Effect.Semaphore,
    context: Context.Context<Disk>,
    readonly report: IndexReport,
  ) {
    this.#index = index;
    this.#lock = lock;
    this.#context = context;
  }

  #provided<A>(
    effect: Effect.Effect<A, TerminalIndex.TerminalIndexError, Disk>,
  ): Effect.Effect<A, TerminalIndex.TerminalIndexError> {
    return Effect.provide(effect, this.#context);
  }

  /** After a commit: what `records` let go of on `before` is written in the background. */
  committed(before: State.State, records: ReadonlyArray<Event.Event>): void {
    const left = Evolve.leaving(before, records);
    if (left.jobs.length === 0 && left.results.length === 0) return;
    for (const job of left.jobs) this.#pending.set(job.jobId, job);
    for (const result of left.results) {
      const job = this.#pending.get(result.jobId);
      if (job !== undefined) {
        this.#pending.set(job.jobId, { ...job, result: { value: result.result, at: result.at } });
      }
    }
    this.#queue.push(left);
    const failed = (error: TerminalIndex.TerminalIndexError) =>
      Effect.sync(() => {
        this.#failure ??= error;
      });
    Effect.runFork(Effect.catchAll(this.drain(), failed));
  }

  /** Writes everything queued (one writer at a time). */
  drain(): Effect.Effect<void, TerminalIndex.TerminalIndexError> {
    return this.#provided(this.#lock.withPermits(1)(this.#drainHeld()));
  }

  #drainHeld(): Effect.Effect<void, TerminalIndex.TerminalIndexError, Disk> {
    return Effect.gen(this, function* () {
      for (let left = this.#queue.shift(); left !== undefined; left = this.#queue.shift()) {
        yield* TerminalIndex.add(this.#index, left);
      }
      this.#pending.clear();
    });
  }

  /** The whole record of a job the state holds as facts, or undefined. */
  job(jobId: number): Effect.Effect<Job.Job | undefined, TerminalIndex.TerminalIndexError> {
    const pending = this.#pending.get(jobId);
    if (pending !== undefined) return Effect.succeed(pending);
    if (this.#failure !== undefined) return Effect.fail(this.#failure);
    return this.#lock.withPermits(1)(TerminalIndex.lookup(this.#index, jobId));
  }

  /** Every job the index holds (what is queued written first), ascending by id. */
  jobs(): Effect.Effect<ReadonlyArray<Job.Job>, TerminalIndex.TerminalIndexError> {
    if (this.#failure !== undefined) return Effect.fail(this.#failure);
    return this.#provided(
      this.#lock.withPermits(1)(
        Effect.flatMap(this.#drainHeld(), () => TerminalIndex.scan(this.#index)),
      ),
    );
  }

  /**
   * After a compaction to `base`: a fresh index of the completed jobs the
   * base keeps, published for the log's new generation.
   */
  rebased<K extends Log.Kind>(
    log: Log.Log<K>,
    base: ReadonlyArray<Event.Event>,
  ): Effect.Effect<void, TerminalIndex.TerminalIndexError> {
    return this.#provided(
      this.#lock.withPermits(1)(
        Effect.gen(this, function* () {
          yield* this.#drainHeld();
          yield* Effect.ignore(TerminalIndex.close(this.#index));
          const identity = yield* identityOf(log);
          const { index } = yield* TerminalIndex.open(this.directory, identity);
          this.#index = index;
          const builder = Generation.start(base.length, { lean: true, collectLeft: true });
          for (const event of base) Generation.apply(builder, undefined, event);
          yield* TerminalIndex.add(index, Generation.takeLeft(builder));
          yield* TerminalIndex.publish(index, identity);
        }),
      ),
    );
  }

  /** Writes what is queued, publishes HEAD for the log's last sequence, closes the file. */
  close<K extends Log.Kind>(
    log: Log.Log<K>,
  ): Effect.Effect<void, TerminalIndex.TerminalIndexError> {
    return this.#provided(
      this.#lock.withPermits(1)(
        Effect.gen(this, function* () {
          yield* this.#drainHeld();
          if (this.#failure === undefined) {
            yield* TerminalIndex.publish(this.#index, yield* identityOf(log));
          }
          yield* TerminalIndex.close(this.#index);
        }),
      ),
    );
  }
}

/** Folds the log's current generation again, handing its completed jobs to the index. */
const rebuild = <K extends Log.Kind>(
  log: Log.Log<K>,
  index: TerminalIndex.TerminalIndex,
  baseRecordCount: number,
): Effect.Effect<void, K["error"] | TerminalIndex.TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const { firstSequence } = yield* log.view.generation();
    const last = log.lastSequence();
    const builder = Generation.start(baseRecordCount, { lean: true, collectLeft: true });
    for (let sequence = firstSequence; sequence <= last; ) {
      const entries = yield* log.view.readFrom(sequence, rebuildPageRecords);
      if (entries.length === 0) break;
      for (const entry of entries) {
        // Recovery folded these very records already: a refusal cannot happen here.
        Generation.apply(builder, entry.sequence, entry.event);
        sequence = entry.sequence + 1;
      }
      yield* TerminalIndex.add(index, Generation.takeLeft(builder));
    }
  });

/**
 * Opens the index of the store in `directory` for the engine over `log`
 * (whose state is a lean fold): current, or rebuilt from the log with the
 * reason. The scope's end writes what is queued and publishes HEAD.
 */
export const openIndexing = <K extends Log.Kind>(
  directory: string,
  log: Log.Log<K>,
  baseRecordCount: number,
): Effect.Effect<Indexing, K["error"] | TerminalIndex.TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const identity = yield* identityOf(log);
    const opened = yield* TerminalIndex.open(directory, identity);
    if (opened.stale !== undefined) {
      yield* rebuild(log, opened.index, baseRecordCount);
      yield* TerminalIndex.publish(opened.index, identity);
    }
    const rebuilt =
      opened.stale === undefined ? null : TerminalIndex.describeStaleness(opened.stale);
    const lock = yield* Effect.makeSemaphore(1);
    const context = yield* Effect.context<Disk>();
    return new Indexing(directory, opened.index, lock, context, { rebuilt });
  });

/** A job as `State.job` answers it on a full state: whole from the state, else from the index. */
export const jobOf = (
  indexing: Indexing | undefined,
  state: State.State,
  jobId: number,
): Effect.Effect<Job.Job | undefined, TerminalIndex.TerminalIndexError> => {
  const job = State.job(state, jobId);
  if (job !== undefined || indexing === undefined || State.fact(state, jobId) === undefined) {
    return Effect.succeed(job);
  }
  return indexing.job(jobId);
};

/** Jobs as the `jobs` query answers them on a full state: the state's, and the index's. */
export const jobsOf = (
  indexing: Indexing | undefined,
  state: State.State,
  whole: ReadonlyArray<Job.Job>,
  filter: JobsFilter,
): Effect.Effect<ReadonlyArray<Job.Job>, TerminalIndex.TerminalIndexError> =>
  Effect.gen(function* () {
    const wantsCompleted = filter.state === undefined || filter.state === "completed";
    const fromIndex =
      indexing === undefined || !wantsCompleted || state.terminal.size === 0
        ? []
        : filtered(
            (yield* indexing.jobs()).filter((job) => state.terminal.has(job.jobId)),
            filter,
          );
    const all = [...whole, ...fromIndex].sort((left, right) => left.jobId - right.jobId);
    return filter.limit === undefined ? all : all.slice(0, filter.limit);
  });
