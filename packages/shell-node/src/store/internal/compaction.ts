/**
 * The compaction primitive: publish a new generation (epoch + 1) holding the
 * canonical base the engine computed, switch CURRENT to it atomically, then
 * remove the superseded generation.
 *
 * Order (each step durable before the next; see docs/store.md for the crash
 * argument): stale generations removed; `epochs/E+1/` created; `segments/`
 * created; base segments written as the base is produced, sealed and
 * fsynced (created in place: the generation is not current yet); a
 * header-only active segment staged, fsynced and hard-linked into place;
 * `segments/` fsynced; its MANIFEST published (it names the base's record
 * count, known once the base has ended);
 * CURRENT.tmp written and fsynced; renamed over CURRENT; DATA_DIR fsynced.
 * Only then is the old generation removed.
 */
import type { Event } from "@tay/core";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { Disk, DiskError, type FileHandle } from "../../disk/Disk.js";
import * as Layout from "../Layout.js";
import {
  CompactionConflict,
  CompactionInterrupted,
  type StoreError,
  WriterFailed,
} from "../StoreError.js";
import { encodeCurrentPointer, encodeManifest, type Manifest } from "./codec.js";
import {
  makeDirectoryDurable,
  publishSmallFile,
  removeIfPresent,
  withFile,
  writeAll,
} from "../../disk/Files.js";
import { createActiveSegment, writeBaseEvents } from "./baseSegments.js";
import { lastAssigned, makeSignal, type SegmentState, settle } from "./storeState.js";
import { failAll, flush, type Writer } from "./writer.js";

/** What a compaction did. */
export interface CompactionReport {
  readonly epoch: number;
  readonly parentEpoch: number;
  readonly firstSequence: number;
  readonly baseRecordCount: number;
  /** Sealed segments holding the base. */
  readonly baseSegments: number;
  /** Generation directories removed after the switch (the parent, earlier leftovers). */
  readonly removedEpochs: ReadonlyArray<number>;
  /** Generations whose removal failed: reported at the next open, removed by the next compaction. */
  readonly notRemoved: ReadonlyArray<{ readonly epoch: number; readonly error: DiskError }>;
  /** How long appends were paused, ms. */
  readonly pauseMs: number;
}

/** Options of one compaction. */
export interface CompactOptions {
  /**
   * The last sequence the base reflects: if others were appended since, the
   * compaction refuses (`CompactionConflict`) instead of dropping them.
   */
  readonly expectedLastSequence?: number;
}

/** Removes generation directories durably; collects what failed. */
const removeGenerations = (
  directory: string,
  epochs: ReadonlyArray<number>,
): Effect.Effect<
  {
    readonly removed: Array<number>;
    readonly failed: Array<{ readonly epoch: number; readonly error: DiskError }>;
  },
  never,
  Disk
> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const removed: Array<number> = [];
    const failed: Array<{ readonly epoch: number; readonly error: DiskError }> = [];
    for (const epoch of epochs) {
      const result = yield* Effect.either(
        removeIfPresent(Layout.epochPath(directory, epoch), true),
      );
      if (Either.isLeft(result)) failed.push({ epoch, error: result.left });
      else removed.push(epoch);
    }
    if (removed.length > 0) {
      const synced = yield* Effect.either(disk.syncDirectory(Layout.epochsPath(directory)));
      if (Either.isLeft(synced)) {
        for (const epoch of removed.splice(0)) failed.push({ epoch, error: synced.left });
      }
    }
    return { removed, failed };
  });

/** The generation switch's outcome before the superseded one is removed. */
interface Switched {
  readonly report: Omit<CompactionReport, "removedEpochs" | "notRemoved" | "pauseMs">;
  /** The parent, now superseded. */
  readonly superseded: number;
}

/**
 * Compacts: see the module comment. Leftover generations are removed
 * before appends pause; appends submitted before the call are written
 * first; appends submitted during it wait and get sequences after the base;
 * the superseded generation is removed after appends resume. `base` is
 * consumed once, while appends are paused, as the base segments are
 * written (issue 19: the base is never held whole). Fails with
 * `CompactionConflict` (before the base is read), `UnencodableEvent` (the
 * staged generation left an orphan, the writer going on), or
 * `WriterFailed`: an I/O error while staging (the old generation stays
 * current, the writer stops until a reopen) or while switching CURRENT
 * (which generation is current is then unknown: reopen). A `base` whose
 * iteration throws fails the compaction with that defect, the staged
 * generation an orphan and the writer going on.
 */
export const compact = (
  writer: Writer,
  compactions: Effect.Semaphore,
  base: Iterable<Event.Event>,
  options: CompactOptions,
): Effect.Effect<CompactionReport, StoreError, Disk> =>
  Effect.gen(function* () {
    const { state } = writer;
    if (state.failure !== undefined) return yield* state.failure;
    const leftovers = yield* removeGenerations(
      state.directory,
      state.orphans.map((orphan) => orphan.epoch),
    );
    state.orphans = state.orphans.filter((orphan) => !leftovers.removed.includes(orphan.epoch));
    const pausedAt = yield* Clock.currentTimeMillis;
    // Close the gate: later submissions wait until the new generation is current.
    const gate = yield* Effect.sync(() => {
      const signal = makeSignal<never>();
      state.gate = signal;
      return signal;
    });
    const switched = yield* Effect.gen(function* () {
      yield* flush(writer);
      return yield* writer.exclusive.holding(switchGeneration(writer, base, options));
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          state.gate = undefined;
          settle(gate, Effect.void);
        }),
      ),
    );
    const resumedAt = yield* Clock.currentTimeMillis;
    const superseded = yield* removeGenerations(state.directory, [switched.superseded]);
    for (const failure of superseded.failed) {
      state.orphans.push({
        epoch: failure.epoch,
        path: Layout.epochPath(state.directory, failure.epoch),
        kind: "Superseded",
      });
    }
    return {
      ...switched.report,
      removedEpochs: [...leftovers.removed, ...superseded.removed],
      notRemoved: [...leftovers.failed, ...superseded.failed],
      pauseMs: resumedAt - pausedAt,
    };
  }).pipe(compactions.withPermits(1));

/** Refuses to compact: the writer failed, records came since the base, or epoch+1 is taken. */
const refusal = (state: Writer["state"], options: CompactOptions): StoreError | undefined => {
  if (state.failure !== undefined) return state.failure;
  const lastSequence = lastAssigned(state);
  if (options.expectedLastSequence !== undefined && options.expectedLastSequence !== lastSequence) {
    return new CompactionConflict({
      path: state.directory,
      expectedLastSequence: options.expectedLastSequence,
      lastSequence,
    });
  }
  const epoch = state.generation.epoch + 1;
  if (state.orphans.some((orphan) => orphan.epoch === epoch)) {
    // A leftover staged epoch+1 could not be removed: do not write into it.
    return new DiskError({
      operation: "remove",
      path: Layout.epochPath(state.directory, epoch),
      code: "EEXIST",
      detail: "a staged generation with this epoch could not be removed",
    });
  }
  return undefined;
};

/** A staged generation: its segments (the active one last) and the active segment's handle. */
interface Staged {
  readonly manifest: Manifest;
  readonly segments: ReadonlyArray<SegmentState>;
  readonly active: SegmentState;
  readonly handle: FileHandle;
  readonly crc: number;
}

/** What the MANIFEST of a staged generation says but its base record count and time. */
type StagedFields = Omit<Manifest, "baseRecordCount" | "createdAt">;

/**
 * Writes the new generation beside the current one: its directory, the
 * base segments (sealed, fsynced) written as `base` is consumed, a
 * header-only active segment, staged and linked into place like every
 * header-only segment (the sync of `segments/` makes the base files'
 * entries durable too), and last its MANIFEST, which names the base's
 * record count, known only once the base has ended (2026-12-02).
 */
const stage = (
  state: Writer["state"],
  fields: StagedFields,
  base: Iterable<Event.Event>,
): Effect.Effect<Staged, StoreError, Disk> =>
  Effect.gen(function* () {
    const { directory } = state;
    const { epoch, storeId, firstSequence } = fields;
    yield* makeDirectoryDurable(Layout.epochPath(directory, epoch));
    yield* makeDirectoryDurable(Layout.segmentsPath(directory, epoch));
    const target = {
      directory,
      epoch,
      storeId,
      rotationTargetBytes: state.options.rotationTargetBytes,
      writeBytesMax: state.options.writeBytesMax,
    };
    const written = yield* writeBaseEvents(target, firstSequence, base);
    const {
      segment: active,
      handle,
      crc,
    } = yield* createActiveSegment(
      target,
      written.segments.length + 1,
      firstSequence + written.recordCount,
      state.options.durability,
      "compaction",
    );
    const manifest: Manifest = {
      ...fields,
      baseRecordCount: written.recordCount,
      createdAt: yield* Clock.currentTimeMillis,
    };
    yield* Effect.onError(
      publishSmallFile(Layout.manifestPath(directory, epoch), encodeManifest(manifest)),
      () => Effect.ignore(handle.close()),
    );
    const segments = [...written.segments, active];
    return { segments, active, handle, crc, manifest };
  });

/**
 * Writes CURRENT.tmp for `epoch` and syncs it; a failure leaves the old
 * generation current (CURRENT untouched).
 */
const writePointer = (directory: string, storeId: Uint8Array, epoch: number) =>
  Effect.gen(function* () {
    const temporary = Layout.temporaryPath(Layout.currentPath(directory));
    yield* removeIfPresent(temporary, false);
    yield* withFile(temporary, "createExclusive", (handle) =>
      Effect.gen(function* () {
        yield* writeAll(handle, 0, encodeCurrentPointer({ storeId, epoch }));
        yield* handle.sync();
      }),
    );
  });

/**
 * Renames CURRENT.tmp over CURRENT and syncs the directory. From the rename
 * on, which generation a restart finds depends on whether the directory
 * sync happened: either is complete, but this process can no longer tell
 * which, so a failure here stops the writer (`CompactionInterrupted`).
 */
const publishPointer = (writer: Writer, staged: Staged) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const { directory } = writer.state;
    const currentPath = Layout.currentPath(directory);
    const published = yield* Effect.either(
      Effect.gen(function* () {
        yield* disk.rename(Layout.temporaryPath(currentPath), currentPath);
        yield* disk.syncDirectory(directory);
      }),
    );
    if (Either.isRight(published)) return;
    yield* Effect.ignore(staged.handle.close());
    const failure = new WriterFailed({
      cause: new CompactionInterrupted({ cause: published.left }),
    });
    yield* Effect.sync(() => failAll(writer.state, failure));
    return yield* failure;
  });

/**
 * An I/O error while staging stops the writer (2026-12-01, docs/store.md):
 * the old generation is intact, but the disk has just failed an operation
 * of the store, and nothing is written to it again until a reopen has
 * re-validated it. Other refusals (`HardLinksUnsupported`) fail only the
 * compaction.
 */
const failStop = <X extends StoreError>(writer: Writer, error: X): X | WriterFailed => {
  if (error._tag !== "DiskError") return error;
  const failure = new WriterFailed({ cause: error });
  failAll(writer.state, failure);
  return failure;
};

/** Stages the new generation and switches CURRENT to it; runs paused, holding the writer's turn. */
const switchGeneration = (
  writer: Writer,
  base: Iterable<Event.Event>,
  options: CompactOptions,
): Effect.Effect<Switched, StoreError, Disk> =>
  Effect.gen(function* () {
    const { state } = writer;
    const refused = refusal(state, options);
    if (refused !== undefined) return yield* Effect.fail(refused);
    const { directory } = state;
    const parent = state.generation;
    const epoch = parent.epoch + 1;
    const firstSequence = lastAssigned(state) + 1;
    const fields = { storeId: parent.storeId, epoch, parentEpoch: parent.epoch, firstSequence };
    // Until the rename a failure leaves the old generation current, the staged one an
    // orphan: whatever ended the staging (a failure, a base that threw, an interruption).
    const orphaned = Effect.sync(() => {
      state.orphans.push({ epoch, path: Layout.epochPath(directory, epoch), kind: "Staged" });
    });
    const staged = yield* stage(state, fields, base).pipe(
      Effect.onError(() => orphaned),
      Effect.mapError((error) => failStop(writer, error)),
    );
    const { manifest } = staged;
    yield* writePointer(directory, parent.storeId, epoch).pipe(
      Effect.tapError(() => Effect.zipRight(Effect.ignore(staged.handle.close()), orphaned)),
      Effect.mapError((error) => failStop(writer, error)),
    );
    yield* publishPointer(writer, staged);
    yield* Effect.ignore(parent.active.handle.close());
    yield* Effect.sync(() => {
      state.generation = {
        epoch,
        manifest,
        storeId: parent.storeId,
        segments: [...staged.segments],
        active: { segment: staged.active, handle: staged.handle, crc: staged.crc },
      };
      state.nextSequence = firstSequence + manifest.baseRecordCount;
    });
    return {
      report: {
        epoch,
        parentEpoch: parent.epoch,
        firstSequence,
        baseRecordCount: manifest.baseRecordCount,
        baseSegments: staged.segments.length - 1,
      },
      superseded: parent.epoch,
    };
  });
