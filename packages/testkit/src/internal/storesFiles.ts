/**
 * File idioms of the store writer and the damage helpers, over the `Disk`
 * service only (so they run on `NodeDisk` and on `FaultDisk` alike): whole
 * writes despite short counts, durable creation, in-place rewrites.
 */
import * as Path from "node:path";
import { Disk } from "@tay/shell-node";
import * as Effect from "effect/Effect";

/** Writes all of `bytes` at `position`, looping over short writes; no progress is EIO. */
export const writeAll = (
  handle: Disk.FileHandle,
  position: number,
  bytes: Uint8Array,
): Effect.Effect<void, Disk.DiskError> =>
  Effect.gen(function* () {
    let written = 0;
    while (written < bytes.length) {
      const count = yield* handle.write(position + written, bytes.subarray(written));
      if (!(count > 0)) {
        return yield* new Disk.DiskError({
          operation: "write",
          path: handle.path,
          code: "EIO",
          detail: "write made no progress",
        });
      }
      written += count;
    }
  });

/** Runs `use` on `path` opened in `mode`, closing the handle on every exit. */
export const withFile = <A, E>(
  path: string,
  mode: Disk.OpenMode,
  use: (handle: Disk.FileHandle) => Effect.Effect<A, E>,
): Effect.Effect<A, E | Disk.DiskError, Disk.Disk> =>
  Effect.flatMap(Disk.Disk, (disk) =>
    Effect.acquireUseRelease(disk.open(path, mode), use, (handle) => Effect.ignore(handle.close())),
  );

/** Creates `path` (it must not exist) holding exactly `bytes`, fsynced; its directory is not synced. */
export const createFile = (
  path: string,
  bytes: Uint8Array,
): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  withFile(path, "createExclusive", (handle) =>
    Effect.zipRight(writeAll(handle, 0, bytes), handle.sync()),
  );

/** Writes `bytes` over `path` at `position` (an existing file), fsynced. */
export const overwriteAt = (
  path: string,
  position: number,
  bytes: Uint8Array,
): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  withFile(path, "readWrite", (handle) =>
    Effect.zipRight(writeAll(handle, position, bytes), handle.sync()),
  );

/** Makes the entries of `path`'s directory durable. */
export const syncParent = (path: string): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  Effect.flatMap(Disk.Disk, (disk) => disk.syncDirectory(Path.dirname(path)));

/** True when `path` exists; other stat failures propagate. */
export const exists = (path: string): Effect.Effect<boolean, Disk.DiskError, Disk.Disk> =>
  Effect.flatMap(Disk.Disk, (disk) =>
    disk.stat(path).pipe(
      Effect.as(true),
      Effect.catchIf(
        (error) => error.code === "ENOENT",
        () => Effect.succeed(false),
      ),
    ),
  );
