/**
 * The lock file on a `node:fs` descriptor and a `Flock` (Node through
 * fs-ext, Bun through libc): open, flock, describe, release. The lock
 * belongs to the open file description, so a second `lock` of the same
 * path from this process is refused exactly like one from another process.
 */
import * as fs from "node:fs";
import * as Effect from "effect/Effect";
import { type DiskError, type LockHandle, LockHeld } from "../Disk.js";
import type { Flock } from "./flock.js";
import { call, callVoid, closeDescriptor, closedHandle, writeAllAt } from "./nodeDiskCall.js";

/** Permission bits of the lock file (before the umask). */
const fileMode = 0o644;

const makeLockHandle = (flock: Flock, path: string, fd: number): LockHandle => {
  let released = false;
  return {
    path,
    describe: (contents) =>
      Effect.suspend(() =>
        released
          ? Effect.fail(closedHandle("write", path))
          : Effect.zipRight(
              callVoid("write", path, (callback) => fs.ftruncate(fd, 0, callback)),
              writeAllAt(path, fd, 0, contents),
            ),
      ),
    release: () =>
      Effect.suspend(() => {
        if (released) return Effect.void;
        released = true;
        return flock
          .unlock(path, fd)
          .pipe(Effect.ensuring(Effect.ignore(closeDescriptor(path, fd))));
      }),
  };
};

/** `load`, run until it first succeeds and then remembered: the addon or library loads once. */
const remembered = (
  load: (path: string) => Effect.Effect<Flock, DiskError>,
): ((path: string) => Effect.Effect<Flock, DiskError>) => {
  let loaded: Flock | null = null;
  return (path) =>
    loaded === null
      ? Effect.tap(load(path), (flock) =>
          Effect.sync(() => {
            loaded = flock;
          }),
        )
      : Effect.succeed(loaded);
};

/**
 * open(O_RDWR|O_CREAT) + flock(LOCK_EX|LOCK_NB) with the `Flock` that
 * `load` gives (loaded on the first lock, once). The file is never truncated here: its contents are
 * only informative (`describe` rewrites them).
 */
export const lockWith = (
  load: (path: string) => Effect.Effect<Flock, DiskError>,
): ((path: string) => Effect.Effect<LockHandle, DiskError | LockHeld>) => {
  const loadFlock = remembered(load);
  return (path) =>
    Effect.uninterruptible(
      Effect.gen(function* () {
        const flock = yield* loadFlock(path);
        const fd = yield* call<number>("lock", path, (callback) =>
          fs.open(path, fs.constants.O_RDWR | fs.constants.O_CREAT, fileMode, callback),
        );
        const taken = yield* flock
          .tryExclusive(path, fd)
          .pipe(Effect.tapError(() => Effect.ignore(closeDescriptor(path, fd))));
        if (!taken) {
          yield* Effect.ignore(closeDescriptor(path, fd));
          return yield* Effect.fail(new LockHeld({ path }));
        }
        return makeLockHandle(flock, path, fd);
      }),
    );
};
