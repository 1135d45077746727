/**
 * Creating a store: FORMAT.md's publication order, each step durable before
 * the next — STORE-V2, then `epochs/00000000000000000001/` with its MANIFEST
 * (first sequence 1, base record count 0) and an empty `segments/`, then
 * CURRENT (epoch 1). Only then does `init` report success.
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import { Disk, type DiskError } from "../disk/Disk.js";
import * as Entropy from "../disk/Entropy.js";
import {
  encodeCurrentPointer,
  encodeManifest,
  encodeStoreMarker,
  formatStoreId,
} from "./internal/codec.js";
import { exists, makeDirectoryDurable, publishSmallFile } from "../disk/Files.js";
import * as Lock from "../disk/Lock.js";
import { probeHardLinks } from "./internal/segmentCreate.js";
import * as Layout from "./Layout.js";
import {
  IncompleteInitialization,
  type InitError,
  NotEmpty,
  StoreNotFound,
  UnsupportedStoreV1,
} from "./StoreError.js";

/** What `init` made. */
export interface Initialized {
  readonly path: string;
  /** The new STORE_ID, printed (8-4-4-4-12). */
  readonly storeId: string;
  readonly createdAt: number;
}

/** Entries an init accepts in the directory it initializes. */
const initDebris: ReadonlySet<string> = new Set([
  Layout.lockName,
  Layout.temporaryPath(Layout.markerName),
]);

/** How many entry names a `NotEmpty` error lists. */
export const listedEntriesMax = 16;

/**
 * Classifies a directory's entries for init (and `Import`): a Store-v1
 * root, an incomplete initialization, or anything else but LOCK is a
 * refusal.
 */
export const refuseEntries = (
  directory: string,
  entries: ReadonlyArray<string>,
): Effect.Effect<void, NotEmpty | UnsupportedStoreV1 | IncompleteInitialization> => {
  if (entries.includes(Layout.storeV1MarkerName)) {
    return Effect.fail(new UnsupportedStoreV1({ path: directory, found: "STORE" }));
  }
  if (entries.includes(Layout.storeV1SegmentsName)) {
    return Effect.fail(new UnsupportedStoreV1({ path: directory, found: "segments" }));
  }
  if (entries.includes(Layout.markerName) && !entries.includes(Layout.currentName)) {
    return Effect.fail(new IncompleteInitialization({ path: directory }));
  }
  // LOCK and STORE-V2.tmp are what an init that crashed before publishing
  // STORE-V2 leaves (LOCK may also be an opener's stale file): the directory
  // holds no store yet, and publishing replaces the stale temporary file.
  const others = entries.filter((name) => !initDebris.has(name));
  if (others.length > 0) {
    return Effect.fail(
      new NotEmpty({ path: directory, entries: others.slice(0, listedEntriesMax) }),
    );
  }
  return Effect.void;
};

/**
 * Creates the directory when missing (one level: its parent must exist) and
 * makes its entry durable; refuses a path that is not a directory.
 */
export const ensureDirectory = (
  directory: string,
): Effect.Effect<void, DiskError | StoreNotFound, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    if (!(yield* exists(directory))) {
      yield* makeDirectoryDurable(directory).pipe(
        Effect.catchIf(
          (error) => error.code === "ENOENT",
          () => Effect.fail(new StoreNotFound({ path: directory, reason: "MissingDirectory" })),
        ),
      );
      return;
    }
    const stat = yield* disk.stat(directory);
    if (stat.type !== "directory") {
      return yield* new StoreNotFound({ path: directory, reason: "NotADirectory" });
    }
  });

/**
 * Initializes an empty store in `directory`.
 *
 * A missing directory is created (its parent must exist: a missing parent is
 * `StoreNotFound`); an existing one must be empty but for LOCK and a stale
 * STORE-V2.tmp (the debris of an init that crashed before it published
 * anything, so such an init can simply be run again). Refuses a
 * Store-v1 root (`UnsupportedStoreV1`), an interrupted init
 * (`IncompleteInitialization`), any other content (`NotEmpty`), a
 * directory another process has locked (`Locked`), or a file system
 * without hard links (`HardLinksUnsupported`). Holds LOCK while it
 * publishes, and never creates `DATA_DIR/STORE` or `DATA_DIR/segments`.
 *
 * @example
 *   yield* Init.init("/var/lib/tay") // { path, storeId: "…", createdAt }
 */
export const init = (directory: string): Effect.Effect<Initialized, InitError, Disk> =>
  Effect.scoped(
    Effect.gen(function* () {
      const disk = yield* Disk;
      yield* ensureDirectory(directory);
      yield* refuseEntries(directory, yield* disk.readDirectory(directory));
      yield* Lock.acquire(Layout.lockPath(directory));
      // Checked again under the lock: another init may have won the race.
      yield* refuseEntries(directory, yield* disk.readDirectory(directory));

      const storeId = yield* Entropy.storeId;
      const createdAt = yield* Clock.currentTimeMillis;
      yield* publishSmallFile(
        Layout.markerPath(directory),
        encodeStoreMarker({ storeId, createdAt }),
      );
      yield* makeDirectoryDurable(Layout.epochsPath(directory));
      yield* makeDirectoryDurable(Layout.epochPath(directory, 1));
      yield* publishSmallFile(
        Layout.manifestPath(directory, 1),
        encodeManifest({
          storeId,
          epoch: 1,
          parentEpoch: 0,
          firstSequence: 1,
          baseRecordCount: 0,
          createdAt,
        }),
      );
      // Every segment is hard-linked into place (FORMAT.md, "Creating a
      // segment"): refuse a file system without hard links now. The probe's
      // SEGMENT.tmp is removed again, and creating segments/ syncs that.
      yield* probeHardLinks(directory, 1, Layout.manifestPath(directory, 1), "init");
      yield* makeDirectoryDurable(Layout.segmentsPath(directory, 1));
      yield* publishSmallFile(
        Layout.currentPath(directory),
        encodeCurrentPointer({ storeId, epoch: 1 }),
      );
      return { path: directory, storeId: formatStoreId(storeId), createdAt };
    }),
  );
