/**
 * The engine's side of the terminal inspection index (issue 19): at open,
 * the index is checked against the log, or rebuilt by the open's fold; each
 * commit's records let go of completed jobs (`Evolve.leaving`), which are
 * appended in the background and served from memory until written; reads
 * of a job the lean state holds as facts go to the index, on the caller's
 * thread (the engine's queries are synchronous). A compaction copies what
 * its new base keeps into a fresh index (so retention prunes it too), and
 * the close publishes HEAD for the last sequence.
 */
import {
  type Event,
  Evolve,
  Generation,
  type HistoryError,
  Image,
  type Job,
  type Snapshot,
  type State,
  type Terminal,
} from "@tay/core";
import { formatStoreId } from "@tay/codec";
import type * as Context from "effect/Context";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { type Disk, DiskError } from "../../disk/Disk.js";
import type * as Log from "../../log/Log.js";
import type { Manifest, Projection, Resumed } from "../../log/Projection.js";
import { foldProjection, resumeLean } from "../../store/StateProjection.js";
import * as FileLog from "../../store/FileLog.js";
import type { StoreOptionsInput } from "../../store/StoreOptions.js";
import * as TerminalIndex from "../../store/TerminalIndex.js";
import type { JobFilter, TerminalReader } from "./operations.js";
import { PendingTerminal } from "./pendingTerminal.js";

/** Entries read from the log at a time while rebuilding. */
export const rebuildPageRecords = 1024;

/**
 * Entries (jobs and results) that commits let go of, encoded, at which they
 * are written (with one write). One write per commit cost more than the commit
 * (a fiber, the index's lock and a thread-pool write per completed job: one
 * worker processed 4.5x fewer jobs a second under `Throughput` with the
 * index than without). Fewer wait in memory, served from there, until a
 * later commit fills the queue, a compaction or the close: a crash loses
 * nothing, the index being a projection rebuilt when stale. A count, not a
 * delay: the writes then fall at the same points of a history every time
 * (the crash harness reruns a workload and needs the same operations).
 */
export const drainItemsMin = 256;

/**
 * Records committed since the last state image past which the engine
 * writes another at the next commit whose segments' digests the store
 * knows (a checkpoint, docs/store.md, "Checkpoints", "Checkpoints under
 * load"): what bounds the fold of an open after a crash.
 */
export const checkpointRecordsDefault = 262_144;

/** What the open found of the index. */
export interface IndexReport {
  /** Why the index was rebuilt at open (one line), or null when it was current. */
  readonly rebuilt: string | null;
  /**
   * Why the open folded the log's records instead of resuming from the
   * state image written at the last close (one line), or null when it
   * resumed (docs/store.md, "The state image").
   */
  readonly imageRefused: string | null;
}

/** The log's identity now: its store, current epoch and last sequence. */
const identityOf = <K extends Log.Kind>(log: Log.Log<K>) =>
  Effect.map(log.view.generation(), ({ epoch }) => ({
    storeId: log.view.storeId,
    epoch,
    lastSequence: log.lastSequence(),
  }));

/** Which jobs a listing wants (as the engine's `jobs` query). */
export type JobsFilter = JobFilter;

const isInsert = (event: Event.Event): boolean =>
  event._tag === "JobInserted" || event._tag === "JobInsertedV3";

/** True when every record inserts jobs and does nothing else. */
const insertsOnly = (records: ReadonlyArray<Event.Event>): boolean => {
  for (const record of records) {
    if (isInsert(record)) continue;
    if (record._tag !== "Mutation" || !record.events.every(isInsert)) return false;
  }
  return true;
};

/** The index of an engine over a lean state, and its background writer. */
export class Indexing {
  #index: TerminalIndex.TerminalIndex;
  // What commits let go of, encoded, served from memory until written.
  readonly #pending = new PendingTerminal();
  /** A drain is running: no other is started (one write at a time, in commit order). */
  #draining = false;
  readonly #lock: Effect.Semaphore;
  readonly #context: Context.Context<Disk>;
  /** The first failure of a background write: later reads fail with it. */
  #failure: TerminalIndex.TerminalIndexError | undefined = undefined;
  /**
   * False once a compaction's rewrite failed: the directory may hold part
   * of the new index, which HEAD must never vouch for (the next open rebuilds).
   */
  #publishable = true;

  /** Records of the current generation's canonical base (for a rebuild from the log). */
  #baseRecordCount: number;
  /** Rebuilds from the log in the background after a failure (set by `openIndexing`). */
  repair: () => void = () => {};
  /**
   * What the close writes the state image from (docs/store.md, "The state
   * image"): the file log's segments as written (set by the engine's open)
   * and the engine's committed state (set once it serves). Without both,
   * the close writes none.
   */
  digests: ((lastSequence: number) => Effect.Effect<FileLog.Digests | undefined>) | undefined =
    undefined;
  committedState:
    | (() => { readonly state: State.State; readonly lastSequence: number })
    | undefined = undefined;
  /** Records committed since the last image past which a checkpoint writes another. */
  checkpointRecords = checkpointRecordsDefault;
  /**
   * The last sequence of the last state image written or resumed from
   * (HEAD names it), or of a state judged not worth one, or the one
   * before the generation's first: where the checkpoint interval counts
   * from; -1 for none yet in this generation.
   */
  #imageSequence: number;
  /** A checkpoint is being written: no other is started. */
  #checkpointing = false;
  /** Counts the swaps of the index (a compaction's, a rebuild's): a checkpoint started before one is dropped. */
  #swaps = 0;

  constructor(
    readonly directory: string,
    index: TerminalIndex.TerminalIndex,
    lock: Effect.Semaphore,
    context: Context.Context<Disk>,
    readonly report: IndexReport,
    baseRecordCount: number,
    imageSequence = -1,
  ) {
    this.#index = index;
    this.#lock = lock;
    this.#context = context;
    this.#baseRecordCount = baseRecordCount;
    this.#imageSequence = imageSequence;
  }

  /** Whether a write failed since the last rebuild: reads fail until the next one. */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  #provided<A, X>(effect: Effect.Effect<A, X, Disk>): Effect.Effect<A, X> {
    return Effect.provide(effect, this.#context);
  }

  /** After a commit: what `records` let go of on `before` is written in the background. */
  committed(before: State.State, records: ReadonlyArray<Event.Event>): void {
    // Inserts alone let go of nothing, and `leaving` would build a job record per insert to find that.
    if (insertsOnly(records)) return;
    this.letGo(Evolve.leaving(before, records));
  }

  /**
   * After a commit whose caller knows what it let go of (a drain reads it
   * for its commands' answers): written in the background, as `committed`.
   */
  letGo(left: Terminal.Left): void {
    if (left.jobs.length === 0 && left.results.length === 0) return;
    const failure = this.#pending.add(left);
    if (failure !== undefined) {
      const { path, end } = this.#index;
      this.#failed(new TerminalIndex.TerminalIndexCorrupt({ path, offset: end, reason: failure }));
      return;
    }
    if (!this.#draining && this.#pending.openEntries >= drainItemsMin) this.#startDrain();
  }

  /** Writes what is queued in the background; what is queued by its end gets the next drain. */
  #startDrain(): void {
    this.#draining = true;
    this.#inBackground(
      this.drain(),
      Effect.sync(() => {
        this.#draining = false;
        if (this.#pending.openEntries >= drainItemsMin) this.#startDrain();
      }),
    );
  }

  /**
   * Runs `work` in the background, then `ended`. A disposable projection: a
   * failed write is kept (`#failed`) and rebuilt from the log.
   */
  #inBackground(
    work: Effect.Effect<void, TerminalIndex.TerminalIndexError>,
    ended: Effect.Effect<void>,
  ): void {
    const failed = (error: TerminalIndex.TerminalIndexError) =>
      Effect.sync(() => this.#failed(error));
    Effect.runFork(Effect.ensuring(Effect.catchAll(work, failed), ended));
  }

  /** The first failure is kept (reads fail with it) and repaired by a rebuild in the background. */
  #failed(error: TerminalIndex.TerminalIndexError): void {
    const first = this.#failure === undefined;
    this.#failure ??= error;
    if (first) this.repair();
  }

  /**
   * An entry whose bytes fail their checks when read: the open checks only
   * the entries' headers (a payload's record CRC is the lookup's), so such
   * an entry is first met here, and the index is rebuilt rather than left
   * failing that job's reads until something else rebuilds it.
   */
  #checked<A>(read: Either.Either<A, TerminalIndex.TerminalIndexError>) {
    if (Either.isLeft(read) && read.left instanceof TerminalIndex.TerminalIndexCorrupt) {
      this.#failed(read.left);
    }
    return read;
  }

  /** Writes everything queued (one writer at a time). */
  drain(): Effect.Effect<void, TerminalIndex.TerminalIndexError> {
    return this.#provided(this.#lock.withPermits(1)(this.#drainHeld()));
  }

  #drainHeld(): Effect.Effect<void, TerminalIndex.TerminalIndexError, Disk> {
    return Effect.gen(this, function* () {
      // What commits while a write runs goes to the next chunk, taken by the next turn here.
      for (let chunk = this.#pending.seal(); chunk !== undefined; chunk = this.#pending.seal()) {
        yield* TerminalIndex.writeEncoded(this.#index, chunk.buffer, chunk.placed);
        this.#pending.written(chunk);
      }
    });
  }

  /**
   * The whole record of a job the state holds as facts, or undefined, read
   * on the caller's thread (what is not written yet from memory): what the
   * engine's synchronous queries answer with. Reads need no lock: an
   * entry's offset is noted only once its bytes are written, and a
   * compaction swaps in the new index only once it is whole.
   */
  jobNow(jobId: number): Either.Either<Job.Job | undefined, TerminalIndex.TerminalIndexError> {
    const pending = this.#pending.job(jobId);
    if (pending !== undefined) return Either.right(pending);
    if (this.#failure !== undefined) return Either.left(this.#failure);
    const found = this.#checked(TerminalIndex.lookupNow(this.#index, jobId));
    const result = this.#pending.result(jobId);
    if (result === undefined || Either.isLeft(found) || found.right === undefined) return found;
    return Either.right({ ...found.right, result: { value: result.result, at: result.at } });
  }

  /**
   * The whole records of `jobIds` (ids the state holds as facts, ascending),
   * in that order, read from the index a page of `rebuildPageRecords` ids
   * at a time as the iteration reaches them (`lookupPageNow`; what is not
   * written yet from memory): what a compaction's streamed base
   * (`Snapshot.events`) reads, without a list of them all. Throws the
   * index's error, and `TerminalIndexCorrupt` for a fact the index has no
   * record of (a base is never silently short).
   */
  readonly records: Snapshot.TerminalRecords = (jobIds) => this.#records(jobIds);

  /** Notes a job's finish time read from its entry, for a table that did not know it (an open's walk). */
  noteFinished(job: Job.Job): void {
    if (job.finishedAt === null || this.#pending.job(job.jobId) !== undefined) return;
    TerminalIndex.noteFinishedNow(this.#index, job.jobId, job.finishedAt);
  }

  /** When `jobId` finished, if known without reading its entry (pending, or noted in the offsets). */
  finishedAt(jobId: number): number | undefined {
    const pending = this.#pending.job(jobId);
    if (pending !== undefined) return pending.finishedAt ?? undefined;
    return TerminalIndex.finishedAtNow(this.#index, jobId);
  }

  *#records(jobIds: Iterable<number>): Generator<Job.Job> {
    let page: Array<number> = [];
    for (const jobId of jobIds) {
      page.push(jobId);
      if (page.length < rebuildPageRecords) continue;
      yield* this.#page(page);
      page = [];
    }
    yield* this.#page(page);
  }

  #page(jobIds: ReadonlyArray<number>): ReadonlyArray<Job.Job> {
    if (jobIds.length === 0) return [];
    if (this.#failure !== undefined) throw this.#failure;
    const read = this.#checked(
      TerminalIndex.lookupPageNow(
        this.#index,
        jobIds.filter((jobId) => this.#pending.job(jobId) === undefined),
      ),
    );
    if (Either.isLeft(read)) throw read.left;
    const jobs: Array<Job.Job> = [];
    let at = 0;
    for (const jobId of jobIds) {
      const pendingJob = this.#pending.job(jobId);
      const found = pendingJob ?? read.right[at++];
      if (found === undefined) {
        throw new TerminalIndex.TerminalIndexCorrupt({
          path: this.#index.path,
          offset: this.#index.end,
          reason: `no entry for completed job ${jobId}`,
        });
      }
      const result = pendingJob === undefined ? this.#pending.result(jobId) : undefined;
      jobs.push(
        result === undefined
          ? found
          : { ...found, result: { value: result.result, at: result.at } },
      );
    }
    return jobs;
  }

  /**
   * After a compaction whose folded base is `kept`: a fresh index of the
   * completed jobs it keeps as facts, copied from the current one a page
   * at a time, and published for the log's new generation. The current
   * index answers reads until the new one is whole.
   *
   * `held` runs once the index is taken (what was queued for it written,
   * the identity the new one will publish read, both of the base's end):
   * the engine lets commands go on there (2026-12-07). What they let go
   * of waits in memory for the lock, and is written to the new index after
   * the swap; so nothing committed after the base lands in the old index,
   * which the copy would not carry over, and HEAD states the base's end.
   */
  rebased<K extends Log.Kind>(
    log: Log.Log<K>,
    kept: State.State,
    baseRecordCount: number,
    held: Effect.Effect<void> = Effect.void,
  ): Effect.Effect<void, TerminalIndex.TerminalIndexError> {
    this.#baseRecordCount = baseRecordCount;
    const unpublishable = Effect.sync(() => {
      this.#publishable = false;
    });
    return this.#provided(
      this.#lock.withPermits(1)(
        Effect.gen(this, function* () {
          yield* this.#drainHeld();
          const identity = yield* identityOf(log);
          yield* held;
          const old = this.#index;
          // Unlinks the old entries file, which stays open (and read) until the swap.
          const { index } = yield* TerminalIndex.open(this.directory, identity);
          // A page of ids at a time, their entries copied as bytes (checked, not decoded):
          // a read and a decode and encode per job were 1.9 s and ~0.8 s of a 6.3 s
          // compaction keeping 100,000 completed jobs (2026-12-06).
          let ids: Array<number> = [];
          for (const [jobId] of kept.terminal.entries()) {
            ids.push(jobId);
            if (ids.length < rebuildPageRecords) continue;
            yield* TerminalIndex.copyEntries(old, index, ids);
            ids = [];
          }
          yield* TerminalIndex.copyEntries(old, index, ids);
          yield* TerminalIndex.publish(index, identity);
          this.#index = index;
          this.#swaps += 1;
          this.#imageSequence = -1;
          yield* Effect.ignore(TerminalIndex.close(old));
        }).pipe(Effect.tapError(() => unpublishable)),
      ),
    );
  }

  /**
   * Rebuilds the index from the log's current generation (a second fold)
   * into a fresh directory, and swaps it in: what follows a failed write or
   * read, so that the projection's failure never stays. What is queued is
   * dropped first (the log holds it); commits after go to the new index.
   */
  rebuilt<K extends Log.Kind>(
    log: Log.Log<K>,
  ): Effect.Effect<void, K["error"] | TerminalIndex.TerminalIndexError> {
    return this.#provided(
      this.#lock.withPermits(1)(
        Effect.gen(this, function* () {
          // Everything let go of so far is in the log the rebuild reads.
          const dropped = this.#pending.sealAll();
          const identity = yield* identityOf(log);
          const old = this.#index;
          const { index } = yield* TerminalIndex.open(this.directory, identity);
          yield* rebuild(log, index, this.#baseRecordCount);
          yield* TerminalIndex.publish(index, identity);
          // What was pending for the dropped commits is in the new index now.
          this.#index = index;
          this.#swaps += 1;
          this.#imageSequence = -1;
          for (const chunk of dropped) this.#pending.written(chunk);
          this.#failure = undefined;
          this.#publishable = true;
          yield* Effect.ignore(TerminalIndex.close(old));
        }),
      ),
    );
  }

  /**
   * The state image's records for `identity`: the committed state, when it
   * stands at the log's last sequence and every record of the segments is
   * written (the image names them by their CRCs); else undefined, and the
   * next open folds the log.
   */
  #image<K extends Log.Kind>(
    log: Log.Log<K>,
    identity: TerminalIndex.Identity,
  ): Effect.Effect<TerminalIndex.ImageStream | undefined> {
    const { digests, committedState } = this;
    if (digests === undefined || committedState === undefined) return Effect.succeed(undefined);
    return Effect.gen(this, function* () {
      const { state, lastSequence } = committedState();
      const written = yield* digests(lastSequence);
      if (written === undefined || !state.lean || identity.lastSequence !== lastSequence) {
        return undefined;
      }
      const { firstSequence } = yield* Effect.orElseSucceed(log.view.generation(), () => ({
        firstSequence: -1,
      }));
      if (firstSequence < 0 || !imageWorthIt(state, lastSequence - firstSequence + 1)) {
        return undefined;
      }
      // Nothing evolves the state while the close writes it.
      return this.#imageStream(identity, firstSequence, written.segments, Image.of(state));
    });
  }

  /**
   * After a commit: when `checkpointRecords` records were committed since
   * the last image and the store knows its segments' digests at the
   * committed state's sequence (idle, or a recent write ended there),
   * writes a state image of the committed state and publishes HEAD for it,
   * in the background (docs/store.md, "Checkpoints", "Checkpoints under
   * load", "Checkpoints without a stall"). An open after a crash then
   * resumes from it and folds only the records after it.
   */
  checkpoint<K extends Log.Kind>(log: Log.Log<K>): void {
    const due = this.#checkpointDue(log);
    if (due === undefined) return;
    const { identity, image } = due;
    this.#checkpointing = true;
    const swaps = this.#swaps;
    const checkpointed = this.#provided(
      this.#lock.withPermits(1)(
        Effect.gen(this, function* () {
          // A compaction or a rebuild swapped the index in between: its HEAD is its own.
          if (swaps !== this.#swaps || this.#failure !== undefined || !this.#publishable) return;
          yield* this.#drainHeld();
          const published = yield* TerminalIndex.publish(this.#index, identity, image, true);
          if (published) this.#imageSequence = identity.lastSequence;
        }),
      ),
    );
    this.#inBackground(
      checkpointed,
      Effect.sync(() => {
        this.#checkpointing = false;
      }),
    );
  }

  /**
   * The identity and image stream (of the state frozen now) of a checkpoint
   * due now, or undefined: none running, the interval passed, the digests
   * at the committed state's sequence known, and the state worth an image.
   */
  #checkpointDue<K extends Log.Kind>(log: Log.Log<K>) {
    const { digests, committedState } = this;
    if (digests === undefined || committedState === undefined || this.#checkpointing) return;
    if (this.#failure !== undefined || !this.#publishable) return;
    const { state, lastSequence } = committedState();
    if (!state.lean) return;
    // An image costs about in proportion to the jobs it holds (whole and as
    // facts, with their offsets): the interval grows with them, so that
    // checkpoints cost a bounded share of the appends (docs/store.md).
    const interval = Math.max(this.checkpointRecords, state.jobs.size + state.terminal.size);
    // This runs after every commit: the generation (an Effect run, ~1.3 µs)
    // is read only once the interval may have passed.
    if (lastSequence - this.#imageSequence < interval) return;
    const generation = Effect.runSync(Effect.either(log.view.generation()));
    if (Either.isLeft(generation)) return;
    const { epoch, firstSequence } = generation.right;
    const since = Math.max(this.#imageSequence, firstSequence - 1);
    if (lastSequence - since < interval) {
      // The interval counts from the generation's start until an image: it
      // changes only with the generation, which resets this (a swap).
      this.#imageSequence = since;
      return;
    }
    const written = Effect.runSync(digests(lastSequence));
    if (written === undefined) return;
    if (!imageWorthIt(state, lastSequence - firstSequence + 1)) {
      // Judged again after as many records more.
      this.#imageSequence = lastSequence;
      return;
    }
    const identity = { storeId: log.view.storeId, epoch, lastSequence };
    // Frozen now, before anything else runs: the image must be of the state
    // at `lastSequence`, while the engine goes on evolving states from it
    // (a batch's run may write in place what it made). Encoded as it is
    // written, in the background (docs/store.md, "Checkpoints without a stall").
    const image = this.#imageStream(identity, firstSequence, written.segments, Image.frozen(state));
    return { identity, image };
  }

  /** The records of `image`, of the generation's fold through `identity`'s sequence. */
  #imageStream(
    identity: TerminalIndex.Identity,
    firstSequence: number,
    segments: FileLog.Digests["segments"],
    image: Image.Image,
  ): TerminalIndex.ImageStream {
    const baseRecordCount = this.#baseRecordCount;
    return TerminalIndex.imageStream(
      { ...identity, firstSequence, baseRecordCount, segments },
      image,
    );
  }

  /** Writes what is queued, publishes HEAD for the log's last sequence, closes the file. */
  close<K extends Log.Kind>(
    log: Log.Log<K>,
  ): Effect.Effect<void, TerminalIndex.TerminalIndexError> {
    return this.#provided(
      this.#lock.withPermits(1)(
        Effect.gen(this, function* () {
          const published = Effect.gen(this, function* () {
            yield* this.#drainHeld();
            if (this.#failure === undefined && this.#publishable) {
              const identity = yield* identityOf(log);
              const image = yield* this.#image(log, identity);
              yield* TerminalIndex.publish(this.#index, identity, image);
            }
          });
          // The entries file is closed whatever the writes met (a full disk
          // left it open, and its mount busy).
          yield* Effect.ensuring(published, Effect.ignore(TerminalIndex.close(this.#index)));
        }),
      ),
    );
  }
}

/**
 * Folds the log's current generation again, handing its completed jobs to
 * the index: only when HEAD named this store and epoch before the open's
 * fold (so that fold did not collect) and the index then proved stale (at
 * another sequence, or its entries failed a check).
 */
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

/** Jobs held whole up to which the close always writes a state image (its encoding ~30 ms). */
export const imageWholeJobsAlways = 4096;
/** Past that, records of the generation per job held whole for the image to be written. */
export const imageRecordsPerWholeJob = 16;

/**
 * Whether the close writes a state image of `state`, the fold of
 * `records` records (docs/store.md, "The state image"): encoding a job
 * held whole at the close and restoring it at the next open cost about as
 * much as folding 16 records (~7 µs and ~0.5 µs here), so a state whose
 * jobs are mostly active (a backlog of 500,000 jobs made the close take
 * 3.7–7.3 s) gets none and the next open folds, as it would have anyway.
 */
const imageWorthIt = (state: State.State, records: number): boolean =>
  state.jobs.size <= imageWholeJobsAlways || state.jobs.size * imageRecordsPerWholeJob <= records;

/** Records the open's fold applies between two hand-overs of the jobs that left memory. */
export const collectEveryRecords = 4096;

/**
 * The open's one fold (core's, lean), which also rebuilds the index when
 * HEAD, read before it, cannot be current for the generation it folds (no
 * HEAD, unreadable, another store or epoch): it then hands the completed
 * jobs over every `collectEveryRecords` records, encoded into
 * `TerminalIndex.Staged`; past `stagedBytesMax` of them, recovery's
 * `between` writes them to the index's entries file as the fold goes
 * (`TerminalIndex.spill`), the rest once the fold has ended. Otherwise it
 * collects nothing: a current index costs the open no job record.
 */
export class OpenFold {
  /** What the fold staged, when it collected. */
  staged: TerminalIndex.Staged | undefined = undefined;
  /** Why it collected. */
  reason: TerminalIndex.Staleness | undefined = undefined;
  #applied = 0;
  // Entries files of a fold that started again, closed at the next write.
  readonly #abandoned: Array<TerminalIndex.Staged> = [];

  /**
   * The state image HEAD named, until the fold resumes from it (then
   * dropped: the builder holds what it gave), or why there is none.
   */
  #image: TerminalIndex.DecodedImage | string;
  /** Why the open did not resume from a state image (one line), or null when it did. */
  imageRefused: string | null = "no image read";

  constructor(
    readonly found: TerminalIndex.Found,
    readonly directory: string,
    readonly stagedBytesMax = TerminalIndex.stagedBytesMax,
    image: TerminalIndex.DecodedImage | string = "no image read",
    /** HEAD's offsets file, when the open started reading it beside the fold; else read when needed. */
    readonly savedOffsets: TerminalIndex.SavedOffsets = TerminalIndex.readSavedOffsets(
      directory,
      found,
    ),
  ) {
    this.#image = image;
  }

  /**
   * The builder the image resumes, when the image is of this generation,
   * its HEAD is current for it, and core takes it; else undefined (with
   * why in `imageRefused`), and the fold starts from nothing.
   */
  #resume(manifest: Manifest): Resumed<Generation.Builder> | undefined {
    const resumed = resumeLean(this.found, this.#image, manifest, true);
    // Used or refused, it is not read again: a second pass folds from nothing.
    this.#image = "the image was read once";
    if (typeof resumed === "string") {
      this.imageRefused = resumed;
      return undefined;
    }
    this.imageRefused = null;
    if (this.staged !== undefined) this.#abandoned.push(this.staged);
    // HEAD is current for this generation up to the image's sequence: what
    // the records after it let go of is collected, to catch the index up
    // (nothing when there are none: a clean close).
    this.reason = undefined;
    this.staged = "_tag" in this.found ? undefined : TerminalIndex.stagedAfter(this.found);
    this.#applied = 0;
    return resumed;
  }

  readonly projection: Projection<Generation.Builder, HistoryError.HistoryError> = {
    resume: (manifest) => this.#resume(manifest),
    start: (manifest) => {
      // A pass that resumed failed (its segments are not those the image
      // names, or a record failed on trust): this one folds from nothing.
      if (this.imageRefused === null) {
        this.imageRefused = "the first pass, resumed from the image, failed: folded from nothing";
      }
      // A fold that starts again (a retried recovery) stages afresh.
      if (this.staged !== undefined) this.#abandoned.push(this.staged);
      this.reason = TerminalIndex.staleBefore(
        this.found,
        formatStoreId(manifest.storeId),
        manifest.epoch,
      );
      this.staged = this.reason === undefined ? undefined : new TerminalIndex.Staged();
      this.#applied = 0;
      return Generation.start(manifest.baseRecordCount, {
        lean: true,
        collectLeft: this.staged !== undefined,
      });
    },
    apply: (builder, sequence, event) => {
      const applied = foldProjection.apply(builder, sequence, event);
      this.#applied += 1;
      if (this.staged !== undefined && this.#applied % collectEveryRecords === 0) {
        TerminalIndex.stage(this.staged, Generation.takeLeft(builder));
      }
      return applied;
    },
    between: () => {
      const { staged } = this;
      const spilled =
        staged === undefined
          ? Effect.void
          : TerminalIndex.spill(this.directory, staged, this.stagedBytesMax);
      if (this.#abandoned.length === 0) return spilled;
      const closed = Effect.forEach(this.#abandoned.splice(0), (abandoned) =>
        abandoned.handle === undefined ? Effect.void : Effect.ignore(abandoned.handle.close()),
      );
      return Effect.zipRight(closed, spilled);
    },
  };

  /**
   * Closes the entries files of every fold this one ran (an open that
   * failed: nothing will write them again). Left open, a failed open's
   * rebuild kept one file handle per try until the process ended.
   */
  release(): Effect.Effect<void> {
    const all = this.#abandoned.splice(0);
    if (this.staged !== undefined) all.push(this.staged);
    return Effect.forEach(
      all,
      (staged) => {
        const { handle } = staged;
        staged.handle = undefined;
        return handle === undefined ? Effect.void : Effect.ignore(handle.close());
      },
      { discard: true },
    );
  }
}

/**
 * The file log of `directory` folded by `fold` (the engine's open); an open
 * that fails closes what the fold's rebuild of the index had opened.
 */
export const openLog = (directory: string, options: StoreOptionsInput, fold: OpenFold) =>
  FileLog.open(directory, options, fold.projection).pipe(Effect.onError(() => fold.release()));

/**
 * Opens the index of the store in `directory` for the engine over `log`,
 * whose state `fold` folded: written from what the fold staged, current,
 * or (HEAD at another sequence, entries failing a check) rebuilt by a
 * second fold; with the reason when it was not current.
 */
export const openIndexing = <K extends Log.Kind>(
  directory: string,
  recovered: Log.Recovered<Generation.Builder, K>,
  fold: OpenFold,
): Effect.Effect<Indexing, K["error"] | TerminalIndex.TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const { log, report } = recovered;
    const identity = yield* identityOf(log);
    const lock = yield* Effect.makeSemaphore(1);
    const context = yield* Effect.context<Disk>();
    const { staged, reason, found } = fold;
    const serving = (
      index: TerminalIndex.TerminalIndex,
      rebuilt: string | null,
      imageSequence = -1,
    ) =>
      repairing(
        log,
        new Indexing(
          directory,
          index,
          lock,
          context,
          { rebuilt, imageRefused: fold.imageRefused },
          report.baseRecordCount,
          imageSequence,
        ),
      );
    if (staged !== undefined) TerminalIndex.stage(staged, Generation.takeLeft(recovered.state));
    if (staged !== undefined && reason === undefined && !("_tag" in found)) {
      // Resumed from HEAD's image: the index is HEAD's, caught up with the
      // records after it (none after a clean close); the next checkpoint
      // counts from that image.
      const caughtUp = yield* TerminalIndex.openCaughtUp(
        directory,
        found,
        staged,
        fold.savedOffsets,
      );
      if (TerminalIndex.isIndex(caughtUp)) return serving(caughtUp, null, found.lastSequence);
    }
    if (staged !== undefined && reason !== undefined) {
      const index = yield* TerminalIndex.openStaged(directory, staged);
      yield* TerminalIndex.publish(index, identity);
      return serving(index, TerminalIndex.describeStaleness(reason));
    }
    const opened = yield* TerminalIndex.open(directory, identity);
    if (opened.stale !== undefined) {
      yield* rebuild(log, opened.index, report.baseRecordCount);
      yield* TerminalIndex.publish(opened.index, identity);
    }
    const rebuilt =
      opened.stale === undefined
        ? null
        : `${TerminalIndex.describeStaleness(opened.stale)} (rebuilt by a second fold)`;
    return serving(opened.index, rebuilt);
  });

/** `indexing`, rebuilding itself from `log` in the background after a failure (once per failure). */
const repairing = <K extends Log.Kind>(log: Log.Log<K>, indexing: Indexing): Indexing => {
  indexing.repair = () => {
    Effect.runFork(Effect.ignore(indexing.rebuilt(log)));
  };
  return indexing;
};

/**
 * The synchronous reader the engine's queries use (`States.terminal`): the
 * index's record, throwing its typed error when its disk or bytes fail.
 */
export const readerOf =
  (indexing: Indexing): TerminalReader =>
  (jobId) => {
    const found = indexing.jobNow(jobId);
    if (Either.isLeft(found)) throw found.left;
    return found.right;
  };

export const isIndexError = (error: unknown): error is TerminalIndex.TerminalIndexError =>
  error instanceof TerminalIndex.TerminalIndexCorrupt || error instanceof DiskError;

/**
 * A synchronous query over a lean state and its index, as an Effect: its
 * answer, or the index's error it threw, typed (anything else is a defect).
 */
export const indexQuery = <A>(query: () => A): Effect.Effect<A, TerminalIndex.TerminalIndexError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(query());
    } catch (error) {
      return isIndexError(error) ? Effect.fail(error) : Effect.die(error);
    }
  });
