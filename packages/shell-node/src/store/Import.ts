/**
 * Creating a store that starts with a given generation: how a store kept
 * by another log (PostgreSQL, `tay copy URL DIR`) becomes a directory with
 * every record under its own sequence and in its own bytes.
 *
 * The history is folded with core's fold before anything is written (a
 * history the fold refuses is `HistoryRejected`, nothing created), so this
 * writes nothing the engine's deciders could not have produced. Then
 * FORMAT.md's publication order, as `init` follows it, each step durable
 * before the next: STORE-V2; `epochs/00000000000000000001/` with its
 * MANIFEST (parent 0, the given first sequence and base record count) and
 * `segments/`, holding the records in sealed segments written as
 * compaction writes a base, then a header-only active segment linked into
 * place; and only then CURRENT (epoch 1). A crash before CURRENT leaves
 * STORE-V2 without it: `IncompleteInitialization`, which open refuses and
 * init will not reuse, never a store with part of the history. Finally the
 * copy is inspected as `verify` would and must fold to the same state.
 */
import { type Event, Generation, type HistoryError, State } from "@tay/core";
import { Clock, Effect, Either } from "effect";
import { Disk, type DiskError } from "../disk/Disk.js";
import * as Entropy from "../disk/Entropy.js";
import { makeDirectoryDurable, publishSmallFile } from "../disk/Files.js";
import * as Lock from "../disk/Lock.js";
import * as Batch from "../log/Batch.js";
import type { UnencodableEvent } from "../log/LogError.js";
import { CopyVerificationFailed } from "./CopyPrefix.js";
import { ensureDirectory, type Initialized, refuseEntries } from "./Init.js";
import {
  encodeCurrentPointer,
  encodeManifest,
  encodeSegmentHeader,
  encodeStoreMarker,
  formatStoreId,
  type Manifest,
} from "./internal/codec.js";
import { writeBaseSegments } from "./internal/compaction.js";
import { createSegment } from "./internal/segmentCreate.js";
import * as Layout from "./Layout.js";
import * as Recovery from "./Recovery.js";
import { foldProjection } from "./StateProjection.js";
import { HistoryRejected, type InitError, type RecoveryError } from "./StoreError.js";
import { appendOptions, defaults } from "./StoreOptions.js";

/** The generation to write: where it starts, how much of it is the base, and its events in order. */
export interface ImportedGeneration {
  /** The first record's sequence (>= 1). */
  readonly firstSequence: number;
  /** The first `baseRecordCount` events are the canonical base. */
  readonly baseRecordCount: number;
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
  /** The state the copy folds to (the same as the history's). */
  readonly state: State.State;
}

/** What an import can fail with. */
export type ImportError =
  | InitError
  | UnencodableEvent
  | HistoryRejected<HistoryError.HistoryError>
  | RecoveryError
  | CopyVerificationFailed;

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

/** Folds the generation with core's fold: its state, or the first refusal. */
const foldAll = (directory: string, generation: ImportedGeneration, storeId: Uint8Array) => {
  const { firstSequence, baseRecordCount, events } = generation;
  const manifest = {
    storeId,
    epoch: 1,
    parentEpoch: 0,
    firstSequence,
    baseRecordCount,
    createdAt: 0,
  };
  const builder = foldProjection.start(manifest);
  const refused = (sequence: number, reason: HistoryError.HistoryError) =>
    new HistoryRejected<HistoryError.HistoryError>({
      path: directory,
      offset: 0,
      sequence,
      reason,
    });
  for (const [index, event] of events.entries()) {
    const applied = foldProjection.apply(builder, firstSequence + index, event);
    if (Either.isLeft(applied)) return refused(firstSequence + index, applied.left);
  }
  const finished = Generation.finish(builder);
  if (finished._tag === "Left") {
    return refused(firstSequence + events.length - 1, finished.left);
  }
  return finished.right;
};

/** Writes the generation's directory, manifest, sealed segments and active segment; returns the segment count. */
const writeGeneration = (
  directory: string,
  manifest: Manifest,
  events: ReadonlyArray<Event.Event>,
) =>
  Effect.gen(function* () {
    const { storeId, firstSequence } = manifest;
    yield* makeDirectoryDurable(Layout.epochsPath(directory));
    yield* makeDirectoryDurable(Layout.epochPath(directory, 1));
    yield* publishSmallFile(Layout.manifestPath(directory, 1), encodeManifest(manifest));
    yield* makeDirectoryDurable(Layout.segmentsPath(directory, 1));
    const sealed = yield* writeBaseSegments(
      directory,
      1,
      storeId,
      firstSequence,
      events,
      defaults.rotationTargetBytes,
      defaults.writeBytesMax,
    );
    // The active segment, empty, after the last record: staged, linked, and
    // `segments/` synced, which makes the sealed files' entries durable too.
    const id = sealed.segments.length + 1;
    const header = encodeSegmentHeader({
      segmentId: id,
      firstSequence: firstSequence + sealed.recordCount,
      storeId,
    });
    const handle = yield* createSegment({
      directory,
      epoch: 1,
      id,
      header,
      sync: true,
      append: appendOptions(defaults.durability),
      operation: "init",
    });
    yield* Effect.ignore(handle.close());
    return id;
  });

/** Inspects the written store: it must end at `lastSequence` and fold to `expected`. */
const verify = (directory: string, lastSequence: number, expected: State.State) =>
  Effect.gen(function* () {
    const inspection = yield* Recovery.inspect(directory, {}, foldProjection);
    const folded = Generation.finish(inspection.state);
    const detail =
      inspection.report.lastSequence !== lastSequence
        ? `the written store ends at sequence ${inspection.report.lastSequence}, the history at ${lastSequence}`
        : folded._tag === "Left" || !State.equals(folded.right, expected)
          ? "the written store folds to another state than the history given"
          : undefined;
    if (detail !== undefined) return yield* new CopyVerificationFailed({ path: directory, detail });
    return inspection.report;
  });

/**
 * Creates a store in `directory` (missing, or empty but for a LOCK: as
 * `Init.init` requires) whose one generation starts at
 * `generation.firstSequence` with `generation.baseRecordCount` base
 * records and holds `generation.events`, each under its own sequence (see
 * the module comment). Returns what was written, verified.
 *
 * Fails, before anything is created, with `HistoryRejected` (core's fold
 * refuses the history), `UnencodableEvent`, or init's refusals of the
 * directory (`NotEmpty`, `Locked`, ...); afterwards with a `DiskError`
 * (the store is left without CURRENT: `IncompleteInitialization`) or
 * `CopyVerificationFailed`.
 *
 * @example
 *   yield* Import.importGeneration("/var/lib/tay", { firstSequence: 41, baseRecordCount: 2, events })
 */
export const importGeneration = (
  directory: string,
  generation: ImportedGeneration,
): Effect.Effect<Imported, ImportError | DiskError, Disk> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { firstSequence, baseRecordCount, events } = generation;
      if (!Number.isSafeInteger(firstSequence) || firstSequence < 1) {
        return yield* Effect.dieMessage(`importGeneration: first sequence ${firstSequence} < 1`);
      }
      const storeId = yield* Entropy.storeId;
      const state = foldAll(directory, generation, storeId);
      if (state instanceof HistoryRejected) return yield* state;
      // Refused before anything is written (the segments encode them again as they go).
      const prepared = Batch.prepare(events);
      if (Either.isLeft(prepared)) return yield* prepared.left;

      const disk = yield* Disk;
      yield* ensureDirectory(directory);
      yield* refuseEntries(directory, yield* disk.readDirectory(directory));
      yield* Lock.acquire(Layout.lockPath(directory));
      // Checked again under the lock: another init may have won the race.
      yield* refuseEntries(directory, yield* disk.readDirectory(directory));
      const createdAt = yield* Clock.currentTimeMillis;
      yield* publishSmallFile(
        Layout.markerPath(directory),
        encodeStoreMarker({ storeId, createdAt }),
      );
      const manifest = {
        storeId,
        epoch: 1,
        parentEpoch: 0,
        firstSequence,
        baseRecordCount,
        createdAt,
      };
      const segments = yield* writeGeneration(directory, manifest, events);
      yield* publishSmallFile(
        Layout.currentPath(directory),
        encodeCurrentPointer({ storeId, epoch: 1 }),
      );
      const report = yield* verify(directory, firstSequence + events.length - 1, state);
      return {
        path: directory,
        storeId: formatStoreId(storeId),
        createdAt,
        firstSequence,
        lastSequence: report.lastSequence,
        baseRecordCount,
        segments,
        bytes: report.bytes,
        state,
      };
    }),
  );
