/**
 * The fault disk's advisory locks: one holder per lock file at a time, as
 * flock(LOCK_EX|LOCK_NB) gives; a second taker gets `LockHeld`.
 */
import * as Disk from "../Disk.js";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { closedRefusal } from "./faultDiskFileHandle.js";
import { attempt } from "./faultDiskLog.js";
import type { DirectoryNode, FileNode } from "./faultDiskModel.js";
import { normalize, refuse } from "./faultDiskPaths.js";
import type { Run } from "./faultDiskRunner.js";
import { lockFileNode } from "./faultDiskTree.js";

const makeLockHandle = (
  run: Run,
  locks: Set<FileNode>,
  node: FileNode,
  path: string,
): Disk.LockHandle => {
  let released = false;
  return {
    path,
    describe: (contents) =>
      run(attempt("describe", path, { length: contents.length }, true), () => {
        if (released) return closedRefusal();
        // ftruncate then pwrite: two changes, so a crash may keep only the first.
        node.apply({ _tag: "Truncate", size: 0 });
        node.apply({ _tag: "Write", position: 0, bytes: contents.slice() });
        return Either.void;
      }),
    release: () =>
      run(attempt("release", path), () => {
        if (!released) locks.delete(node);
        released = true;
        return Either.void;
      }),
  };
};

/** Takes the lock at `rawPath` (creating its file when missing), recording it in `locks`. */
export const lock = (
  run: Run,
  root: DirectoryNode,
  locks: Set<FileNode>,
  rawPath: string,
): Effect.Effect<Disk.LockHandle, Disk.DiskError | Disk.LockHeld> => {
  const path = normalize(rawPath);
  const taken = run(attempt("lock", path), () =>
    Either.flatMap(lockFileNode(root, path), (node) => {
      // EAGAIN is what flock(LOCK_NB) reports; it becomes LockHeld below.
      if (locks.has(node)) return refuse("EAGAIN", "the lock is held");
      locks.add(node);
      return Either.right(makeLockHandle(run, locks, node, path));
    }),
  );
  return Effect.catchIf(
    taken,
    (error) => error.code === "EAGAIN",
    () => Effect.fail(new Disk.LockHeld({ path })),
  );
};
