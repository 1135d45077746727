/**
 * Where an import builds a store before it exists: a staging directory
 * beside the target, `.NAME.tay-copy-<16 hex digits>` in the target's
 * parent (the same file system, so one rename(2) publishes it), made
 * durable whole there, then renamed onto the target and the parent
 * fsynced. A crash at any instant leaves the target as it was (missing,
 * empty or holding only a LOCK) or holding the whole store, and at most a
 * staging directory beside it, which a later import into the same target
 * removes (`removeStale`).
 *
 * rename(2) of a directory replaces an existing empty directory (Linux,
 * and the fault disk's model), and refuses a non-empty one with ENOTEMPTY:
 * a target that gained entries meanwhile is refused, never overwritten.
 */
import * as Path from "node:path";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { Disk, type DiskError } from "../disk/Disk.js";
import * as Entropy from "../disk/Entropy.js";
import { makeDirectoryDurable, removeIfPresent } from "../disk/Files.js";
import * as Lock from "../disk/Lock.js";
import { listedEntriesMax } from "./Init.js";
import * as Layout from "./Layout.js";
import { NotEmpty, StoreNotFound } from "./StoreError.js";

/** The random part of a staging directory's name: 8 bytes, 16 lowercase hex digits. */
const suffixPattern = /^[0-9a-f]{16}$/;

/** `.NAME.tay-copy-`: the prefix of every staging directory of the target `directory`. */
export const stagingPrefix = (directory: string): string =>
  `.${Path.basename(Path.resolve(directory))}.tay-copy-`;

/** The directory holding the target (where its staging directories are). */
export const targetParent = (directory: string): string => Path.dirname(Path.resolve(directory));

/** Whether `name` is one of the target's staging directories by its name alone. */
export const isStagingName = (directory: string, name: string): boolean => {
  const prefix = stagingPrefix(directory);
  return name.startsWith(prefix) && suffixPattern.test(name.slice(prefix.length));
};

/**
 * What a staging directory may hold and still be removed as an import's
 * leftover: what `Import` writes before CURRENT (CURRENT.tmp included:
 * until the rename, it is not CURRENT). One holding CURRENT (a crash
 * between CURRENT and the publishing rename) is a whole store: kept.
 */
const removable: ReadonlySet<string> = new Set([
  Layout.lockName,
  Layout.markerName,
  Layout.temporaryPath(Layout.markerName),
  Layout.epochsName,
  Layout.temporaryPath(Layout.currentName),
]);

/**
 * Removes one leftover staging directory, under its LOCK (a staging
 * directory of a copy still running is locked by it, and skipped): only
 * when it holds nothing outside `removable`.
 */
const removeOne = (parent: string, path: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const disk = yield* Disk;
      if ((yield* disk.stat(path)).type !== "directory") return;
      yield* Lock.acquire(Path.join(path, Layout.lockName));
      const entries = yield* disk.readDirectory(path);
      if (entries.some((name) => !removable.has(name))) return;
      yield* disk.remove(path, { recursive: true });
      yield* disk.syncDirectory(parent);
    }),
  );

/**
 * Removes the target's leftover staging directories (names matching
 * `.NAME.tay-copy-<16 hex>`, holding no CURRENT and nothing else an
 * import does not write, not locked by a running copy). Best effort: one
 * that cannot be removed is left as it is.
 */
export const removeStale = (directory: string): Effect.Effect<void, never, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const parent = targetParent(directory);
    const entries = yield* Effect.either(disk.readDirectory(parent));
    if (Either.isLeft(entries)) return;
    for (const name of entries.right) {
      if (isStagingName(directory, name)) {
        yield* Effect.ignore(removeOne(parent, Path.join(parent, name)));
      }
    }
  });

/**
 * Creates a new, durable staging directory beside `directory`; a missing
 * parent is `StoreNotFound` (as init's missing directory).
 */
export const makeStaging = (
  directory: string,
): Effect.Effect<string, DiskError | StoreNotFound, Disk> =>
  Effect.gen(function* () {
    const entropy = yield* Entropy.Entropy;
    const bytes = yield* entropy.bytes(8);
    const suffix = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
    const staging = Path.join(targetParent(directory), `${stagingPrefix(directory)}${suffix}`);
    yield* makeDirectoryDurable(staging).pipe(
      Effect.catchIf(
        (error) => error.code === "ENOENT",
        () => Effect.fail(new StoreNotFound({ path: directory, reason: "MissingDirectory" })),
      ),
    );
    return staging;
  });

/**
 * Publishes the staged store (durable whole, verified) as `directory`:
 * the target's own LOCK removed when it exists (the caller holds it, so
 * no other init or import is inside; an empty directory is what rename(2)
 * replaces), one rename, then the parent fsynced. A target that holds
 * anything else is `NotEmpty`, the staging directory left for the caller
 * to remove.
 */
export const publish = (
  staging: string,
  directory: string,
  targetExists: boolean,
): Effect.Effect<void, DiskError | NotEmpty, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    if (targetExists) yield* removeIfPresent(Layout.lockPath(directory), false);
    // Resolved: rename(2) refuses a target spelled `.` or `DIR/.` (EBUSY).
    yield* disk.rename(staging, Path.resolve(directory)).pipe(
      Effect.catchIf(
        (error) => error.code === "ENOTEMPTY" || error.code === "EEXIST",
        () =>
          Effect.flatMap(disk.readDirectory(directory), (entries) =>
            Effect.fail(
              new NotEmpty({ path: directory, entries: entries.slice(0, listedEntriesMax) }),
            ),
          ),
      ),
    );
    yield* disk.syncDirectory(targetParent(directory));
  });
