/**
 * Creating a store that starts with a given generation: how a store kept
 * by another log (PostgreSQL, `tay copy URL DIR`) becomes a directory with
 * every record under its own sequence and in its own bytes, a page at a
 * time (memory: one page and two lean states, never the history).
 *
 * FORMAT.md's publication order, as `init` follows it, each step durable
 * before the next: STORE-V2; `epochs/00000000000000000001/` with its
 * MANIFEST (parent 0, the given first sequence and base record count) and
 * `segments/`, holding the records in sealed segments written as they
 * arrive, as compaction writes a base (`internal/baseSegments.ts`), then a
 * header-only active segment linked into place; and only then CURRENT
 * (epoch 1). Every event is folded with core's fold before its page is
 * written, so this writes nothing the engine's deciders could not have
 * produced. Then the copy is inspected as `verify` would and must fold to
 * the same state. Both folds are lean (a terminal job kept as the facts
 * its rules need, `Generation.start(n, { lean: true })`): the same rules
 * refuse the same histories, and a store of mostly finished jobs is
 * copied in memory for its active ones (2026-12-03; the records' own
 * bytes are checked by their CRCs when the copy is inspected). A caller
 * that holds the whole state the copy must fold to (`copy-prefix`) gives
 * it as `Expected`: both folds are then whole, and the one read back is
 * compared with it too, so the copy is read back once (2026-12-04: it
 * was read back a second time by `copy-prefix`, after the rename).
 *
 * It writes all this in a staging directory beside DIR
 * (`.NAME.tay-copy-<16 hex>`, `CopyStaging`), every file and directory
 * fsynced, verifies it there, and only then publishes it by one rename
 * onto DIR and an fsync of DIR's parent. A failure at any step (a refused
 * fold, a producer's own error, a disk error, a verification that does not
 * match) removes the staging directory; DIR is never written before the
 * rename. A crash leaves DIR as it was or holding the whole store, and at
 * most a staging directory beside it, which the next import into DIR
 * removes: never a store with part of the history, nothing to repair.
 */
import { type Event, Generation, HistoryError, type State } from "@tay/core";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type * as Scope from "effect/Scope";
import { Disk, type DiskError } from "../disk/Disk.js";
import * as Entropy from "../disk/Entropy.js";
import {
  exists,
  makeDirectoryDurable,
  parentPath,
  publishSmallFile,
  removeIfPresent,
} from "../disk/Files.js";
import * as Lock from "../disk/Lock.js";
import * as Batch from "../log/Batch.js";
import type { UnencodableEvent } from "../log/LogError.js";
import type { Projection } from "../log/Projection.js";
import { type CopyNames, copyMismatch } from "./CopyCheck.js";
import * as CopyStaging from "./CopyStaging.js";
import { type Initialized, refuseEntries } from "./Init.js";
import { BaseSegments, createActiveSegment } from "./internal/baseSegments.js";
import {
  encodeCurrentPointer,
  encodeManifest,
  encodeStoreMarker,
  formatStoreId,
  type Manifest,
} from "./internal/codec.js";
import * as Layout from "./Layout.js";
import * as Recovery from "./Recovery.js";
import { foldProjection, leanFoldProjection } from "./StateProjection.js";
import {
  CopyVerificationFailed,
  HistoryRejected,
  type InitError,
  type RecoveryError,
  StoreNotFound,
} from "./StoreError.js";
import { defaults } from "./StoreOptions.js";

/** Where the generation to write starts and how much of it is the base. */
export interface GenerationStart {
  /** The first record's sequence (>= 1). */
  readonly firstSequence: number;
  /** The first `baseRecordCount` events are the canonical base. */
  readonly baseRecordCount: number;
}

/** The generation to write whole: where it starts, its base, and its events in order. */
export interface ImportedGeneration extends GenerationStart {
  readonly events: ReadonlyArray<Event.Event>;
}

/** What `importGeneration` wrote, as verified afterwards. */
export interface Imported extends Initialized {
  readonly firstSequence: number;
  /** `firstSequence - 1` when the generation holds no record. */
  readonly lastSequence: number;
  readonly baseRecordCount: number;
  /** Segment files written, the header-only active one included. */
  readonly segments: number;
  readonly bytes: number;
  /** The state the copy folds to (the same as the history's): lean, or whole when `expected` was given. */
  readonly state: State.State;
  /** The inspection of the written store (its path: the store's, not the staging directory's). */
  readonly inspection: Recovery.RecoveryReport;
}

/**
 * What a caller knows the copy must hold, checked on the import's own read
 * back of the written store, before it is published (`copy-prefix`: the
 * state of the prefix it copies). Given, the import folds whole, as it
 * writes and as it reads back, for a whole state to compare with: memory
 * is then the whole state, which such a caller holds already.
 */
export interface Expected {
  /** The whole (not lean) state the copy must fold to. */
  readonly state: State.State;
  readonly lastSequence: number;
  /** What the copy and the caller's source are called in `CopyVerificationFailed`. */
  readonly names: CopyNames;
}

/** What an import can fail with. */
export type ImportError =
  | InitError
  | UnencodableEvent
  | HistoryRejected<HistoryError.HistoryError>
  | RecoveryError
  | CopyVerificationFailed;

/**
 * How a producer hands a generation to `importPages`: `begin` once, with
 * where it starts, then `write` page after page, in order.
 */
export interface GenerationSink {
  readonly begin: (start: GenerationStart) => Effect.Effect<void, ImportError | DiskError, Disk>;
  /** Folds the events under the next sequences and writes them into the segments. */
  readonly write: (
    events: ReadonlyArray<Event.Event>,
  ) => Effect.Effect<void, ImportError | DiskError, Disk>;
}

/**
 * Refuses a target that holds anything but a LOCK, so a caller can refuse
 * before it gathers the history (`importGeneration` checks again, under
 * the lock). A missing directory passes.
 */
export const checkTarget = (directory: string): Effect.Effect<void, InitError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const entries = yield* Effect.either(disk.readDirectory(directory));
    if (Either.isLeft(entries)) return;
    yield* refuseEntries(directory, entries.right);
  });

/** A generation being written: its manifest, its fold so far, its segments. */
interface Begun {
  readonly manifest: Manifest;
  readonly builder: Generation.Builder;
  readonly segments: BaseSegments;
  /** The sequence of the next event written. */
  next: number;
}

/**
 * An import in progress: the staging directory written, the target named
 * in errors, its STORE_ID, and the generation once begun.
 */
class Importing implements GenerationSink {
  begun: Begun | undefined = undefined;

  constructor(
    private readonly directory: string,
    private readonly target: string,
    private readonly storeId: Uint8Array,
    private readonly createdAt: number,
    readonly projection: Projection<Generation.Builder, HistoryError.HistoryError>,
  ) {}

  readonly begin = (start: GenerationStart) =>
    Effect.gen(this, function* () {
      const { firstSequence, baseRecordCount } = start;
      if (this.begun !== undefined) return yield* Effect.dieMessage("importPages: begun twice");
      if (!Number.isSafeInteger(firstSequence) || firstSequence < 1) {
        return yield* Effect.dieMessage(`importPages: first sequence ${firstSequence} < 1`);
      }
      const { directory, storeId, createdAt } = this;
      const manifest = {
        storeId,
        epoch: 1,
        parentEpoch: 0,
        firstSequence,
        baseRecordCount,
        createdAt,
      };
      yield* publishSmallFile(
        Layout.markerPath(directory),
        encodeStoreMarker({ storeId, createdAt }),
      );
      yield* makeDirectoryDurable(Layout.epochsPath(directory));
      yield* makeDirectoryDurable(Layout.epochPath(directory, 1));
      yield* publishSmallFile(Layout.manifestPath(directory, 1), encodeManifest(manifest));
      yield* makeDirectoryDurable(Layout.segmentsPath(directory, 1));
      const segments = new BaseSegments({
        directory,
        epoch: 1,
        storeId,
        rotationTargetBytes: defaults.rotationTargetBytes,
        writeBytesMax: defaults.writeBytesMax,
      });
      this.begun = {
        manifest,
        builder: this.projection.start(manifest),
        segments,
        next: firstSequence,
      };
    });

  readonly write = (events: ReadonlyArray<Event.Event>) =>
    Effect.gen(this, function* () {
      const begun = this.begun;
      if (begun === undefined) return yield* Effect.dieMessage("importPages: write before begin");
      const prepared = Batch.prepare(events);
      if (Either.isLeft(prepared)) return yield* prepared.left;
      const records = prepared.right.records;
      for (const record of records) {
        record.sequence = begun.next;
        const applied = this.projection.apply(begun.builder, begun.next, record.event);
        if (Either.isLeft(applied)) return yield* this.refused(begun.next, applied.left);
        begun.next += 1;
      }
      yield* begun.segments.write(records);
    });

  refused(sequence: number, reason: HistoryError.HistoryError) {
    return new HistoryRejected<HistoryError.HistoryError>({
      path: this.target,
      offset: 0,
      sequence,
      reason,
    });
  }
}

/**
 * Reads the written store back, once, with the fold it was written with:
 * it must end where `written` (the fold as it was written) ends and fold
 * to its state, and likewise to `expected` when the caller gave one.
 */
const verify = (
  importing: Importing,
  directory: string,
  written: Expected,
  expected: Expected | undefined,
) =>
  Effect.gen(function* () {
    const inspection = yield* Recovery.inspect(directory, {}, importing.projection);
    const folded = Generation.finish(inspection.state);
    const copy =
      folded._tag === "Right"
        ? { lastSequence: inspection.report.lastSequence, state: folded.right }
        : {
            lastSequence: inspection.report.lastSequence,
            state: undefined,
            refusal: HistoryError.describe(folded.left),
          };
    for (const against of expected === undefined ? [written] : [written, expected]) {
      const detail = copyMismatch(copy, against, against.names);
      if (detail !== undefined) {
        return yield* new CopyVerificationFailed({ path: directory, detail });
      }
    }
    return inspection.report;
  });

/**
 * Seals the segments, checks the fold ends well, creates the active
 * segment, publishes CURRENT and verifies the written store.
 */
const finish = (
  importing: Importing,
  begun: Begun,
  directory: string,
  target: Target,
  expected: Expected | undefined,
) =>
  Effect.gen(function* () {
    const { manifest, builder, segments, next } = begun;
    const sealed = yield* segments.seal();
    const finished = Generation.finish(builder);
    if (finished._tag === "Left") return yield* importing.refused(next - 1, finished.left);
    const active = yield* createActiveSegment(
      { directory, epoch: 1, storeId: manifest.storeId },
      sealed.length + 1,
      next,
      defaults.durability,
      "init",
    );
    yield* Effect.ignore(active.handle.close());
    yield* publishSmallFile(
      Layout.currentPath(directory),
      encodeCurrentPointer({ storeId: manifest.storeId, epoch: 1 }),
    );
    const written = {
      lastSequence: next - 1,
      state: finished.right,
      names: { copy: "the written store", source: "the history given" },
    };
    const report = yield* verify(importing, directory, written, expected);
    yield* CopyStaging.publish(directory, target.path, target.exists);
    return {
      path: target.path,
      storeId: formatStoreId(manifest.storeId),
      createdAt: manifest.createdAt,
      firstSequence: manifest.firstSequence,
      lastSequence: report.lastSequence,
      baseRecordCount: manifest.baseRecordCount,
      segments: sealed.length + 1,
      bytes: report.bytes,
      state: finished.right,
      inspection: { ...report, path: target.path },
    };
  });

/** The directory to create the store as, and whether it existed (empty) when the import began. */
interface Target {
  readonly path: string;
  readonly exists: boolean;
}

/**
 * Refuses a target that is not a directory or holds anything but a LOCK,
 * and says whether it exists. A missing parent is refused later, when the
 * staging directory cannot be made there.
 */
const checkDirectory = (directory: string): Effect.Effect<boolean, InitError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    if (!(yield* exists(directory))) return false;
    if ((yield* disk.stat(directory)).type !== "directory") {
      return yield* new StoreNotFound({ path: directory, reason: "NotADirectory" });
    }
    yield* refuseEntries(directory, yield* disk.readDirectory(directory));
    return true;
  });

/**
 * Removes a failed import's staging directory and makes the removal
 * durable. Best effort: a crash or an error here leaves the staging
 * directory, which the next import into the same target removes.
 */
const removeStaging = (staging: string) =>
  Effect.ignore(
    Effect.gen(function* () {
      const disk = yield* Disk;
      yield* removeIfPresent(staging, true);
      yield* disk.syncDirectory(parentPath(staging));
    }),
  );

/**
 * Creates a store in `directory` (missing, or empty but for a LOCK: as
 * `Init.init` requires) whose one generation `produce` hands over page by
 * page through the sink: `begin` with where it starts, then `write` its
 * events in order, each under its own sequence (see the module comment).
 * The store is staged beside `directory`, verified (read back once, and
 * compared with `expected` too when given), then renamed onto it
 * (`CopyStaging`). Returns what was written, verified.
 *
 * Fails with init's refusals of the directory (`NotEmpty`, `Locked`, ...)
 * before anything is written; then with `HistoryRejected` (core's fold
 * refuses an event), `UnencodableEvent`, the producer's own error, a
 * `DiskError`, `CopyVerificationFailed` or `NotEmpty` (the target gained
 * entries meanwhile), having removed its staging directory.
 *
 * @example
 *   yield* Import.importPages("/var/lib/tay", (sink) =>
 *     Effect.zipRight(sink.begin({ firstSequence: 41, baseRecordCount: 2 }), sink.write(events)))
 */
export const importPages = <X, R>(
  directory: string,
  produce: (sink: GenerationSink) => Effect.Effect<void, X, R>,
  expected?: Expected,
): Effect.Effect<Imported, ImportError | DiskError | X, Disk | Exclude<R, Scope.Scope>> =>
  Effect.gen(function* () {
    let staging: string | undefined;
    return yield* Effect.scoped(
      Effect.gen(function* () {
        yield* checkDirectory(directory);
        // Held to the end when DIR exists: no init or other import gets in
        // before the rename replaces it (the lock file goes just before).
        if (yield* exists(directory)) yield* Lock.acquire(Layout.lockPath(directory));
        // Checked again under the lock: another init may have won the race.
        const target = { path: directory, exists: yield* checkDirectory(directory) };
        yield* CopyStaging.removeStale(directory);
        const made = yield* CopyStaging.makeStaging(directory);
        staging = made;
        // Locked, so another import's `removeStale` leaves it alone.
        yield* Lock.acquire(Layout.lockPath(made));
        // A failure midway leaves no segment file open.
        let current: Importing | undefined;
        yield* Effect.addFinalizer(() => current?.begun?.segments.close() ?? Effect.void);
        const storeId = yield* Entropy.storeId;
        const projection = expected === undefined ? leanFoldProjection : foldProjection;
        const createdAt = yield* Clock.currentTimeMillis;
        current = new Importing(made, directory, storeId, createdAt, projection);
        yield* produce(current);
        const begun = current.begun;
        if (begun === undefined) return yield* Effect.dieMessage("importPages: never begun");
        return yield* finish(current, begun, made, target, expected);
      }),
    ).pipe(
      // After the scope: the locks are released and the files closed first.
      Effect.onError(() => (staging === undefined ? Effect.void : removeStaging(staging))),
    );
  });

/**
 * `importPages` of a generation given whole (its events in one array).
 *
 * @example
 *   yield* Import.importGeneration("/var/lib/tay", { firstSequence: 41, baseRecordCount: 2, events })
 */
export const importGeneration = (
  directory: string,
  generation: ImportedGeneration,
  expected?: Expected,
): Effect.Effect<Imported, ImportError | DiskError, Disk> =>
  importPages(
    directory,
    (sink) => Effect.zipRight(sink.begin(generation), sink.write(generation.events)),
    expected,
  );
