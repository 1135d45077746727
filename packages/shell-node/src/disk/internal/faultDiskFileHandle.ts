/**
 * The fault disk's file handles: each call checks the handle and its mode,
 * then changes the file's model through the disk's runner (one logged
 * operation, one cut point when it mutates).
 */
import type * as Disk from "../Disk.js";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type { Injected } from "./faultDiskFaults.js";
import { attempt } from "./faultDiskLog.js";
import type { FileNode } from "./faultDiskModel.js";
import { type Refusal, refuse } from "./faultDiskPaths.js";
import type { Run } from "./faultDiskRunner.js";
import type { Space } from "./faultDiskSpace.js";

/** Opening for writing requires one of these modes. */
const writableModes: ReadonlySet<Disk.OpenMode> = new Set(["readWrite", "createExclusive"]);

/** What every operation on a closed handle (or released lock) is refused with. */
export const closedRefusal = (): Either.Either<never, Refusal> =>
  refuse("Other", "EBADF: the handle is closed");

const isByteCount = (value: number): boolean => Number.isSafeInteger(value) && value >= 0;

/** Dies (a programmer error, as in `NodeDisk`) unless both are byte counts. */
const checkByteCounts = (path: string, position: number, length: number): Effect.Effect<void> =>
  isByteCount(position) && isByteCount(length)
    ? Effect.void
    : Effect.dieMessage(`${path}: position ${position} and length ${length} must be byte counts`);

/** One open file: the node it names, how it was opened, and whether it was closed. */
interface Handle {
  readonly node: FileNode;
  readonly path: string;
  readonly mode: Disk.OpenMode;
  closed: boolean;
}

/** pwrite(2): as many bytes as the faults, the file size limit and the capacity allow. */
const writeStep =
  (handle: Handle, space: Space, position: number, bytes: Uint8Array) =>
  (injected: Injected): Either.Either<number, Refusal> => {
    if (handle.closed) return closedRefusal();
    if (!writableModes.has(handle.mode)) {
      return refuse("Other", "EBADF: the handle is not open for writing");
    }
    const asked = Math.min(bytes.length, injected.shortWriteBytesMax ?? bytes.length);
    return Either.map(space.bytesThatFit(handle.node, position, asked), (length) => {
      // A copy: the caller may reuse its buffer once the write returns.
      handle.node.apply({ _tag: "Write", position, bytes: bytes.slice(0, length) });
      return length;
    });
  };

/** fdatasync(2), or the fsyncgate failure when injected. */
const syncStep =
  (handle: Handle) =>
  (injected: Injected): Either.Either<void, Refusal> => {
    if (handle.closed) return closedRefusal();
    if (injected.loseDirtyPages) {
      handle.node.dropDirtyPages();
      return refuse("EIO", "injected fault: fsync failed and the dirty pages were dropped");
    }
    handle.node.sync();
    return Either.void;
  };

// ftruncate(2): a change like a write, volatile until the next sync
// (O_DSYNC covers writes only). Linux refuses a read-only descriptor
// with EINVAL.
const truncateStep =
  (handle: Handle, space: Space, size: number) => (): Either.Either<void, Refusal> => {
    if (handle.closed) return closedRefusal();
    if (!writableModes.has(handle.mode)) {
      return refuse("Other", "EINVAL: the handle is not open for writing");
    }
    return Either.map(space.checkFileEnd(size), () => {
      handle.node.apply({ _tag: "Truncate", size });
    });
  };

/**
 * A handle on `node`, counted open in `space` until closed. With `dataSync`
 * every write is followed by a sync (O_DSYNC).
 */
export const makeFileHandle = (
  run: Run,
  space: Space,
  node: FileNode,
  path: string,
  mode: Disk.OpenMode,
  dataSync: boolean,
): Disk.FileHandle => {
  const handle: Handle = { node, path, mode, closed: false };
  space.trackOpen(node, 1);
  const write = (position: number, bytes: Uint8Array) =>
    run(
      attempt("write", path, { position, length: bytes.length }, true),
      writeStep(handle, space, position, bytes),
      (length) => length,
    );
  const sync = () => run(attempt("sync", path, {}, true), syncStep(handle));
  const truncate = (size: number) =>
    run(attempt("truncate", path, { length: size }, true), truncateStep(handle, space, size));
  // An O_DSYNC write is modelled as the write then a sync, two
  // operations of the log: a cut between them loses the bytes (the call
  // never returned), and sync faults strike it as they strike `sync`.
  const durableWrite = (position: number, bytes: Uint8Array) =>
    Effect.zipRight(
      checkByteCounts(path, position, bytes.length),
      dataSync
        ? Effect.flatMap(write(position, bytes), (length) => Effect.as(sync(), length))
        : write(position, bytes),
    );
  return {
    path,
    dataSync,
    truncate: (size) => Effect.zipRight(checkByteCounts(path, size, 0), truncate(size)),
    read: (position, length) =>
      Effect.zipRight(
        checkByteCounts(path, position, length),
        run(
          attempt("read", path, { position, length }),
          () =>
            handle.closed ? closedRefusal() : Either.right(node.contents.read(position, length)),
          (bytes) => bytes.length,
        ),
      ),
    write: Object.assign(durableWrite, {
      // The same operations run to their end on the caller's thread: the
      // model is synchronous, so the store's inline path meets the same cut
      // points and faults as its other writes.
      inline: (position: number, bytes: Uint8Array) =>
        Effect.runSync(Effect.either(durableWrite(position, bytes))),
    }),
    sync,
    size: () =>
      run(attempt("size", path), () =>
        handle.closed ? closedRefusal() : Either.right(node.contents.size),
      ),
    close: () =>
      run(attempt("close", path), () => {
        if (!handle.closed) space.trackOpen(node, -1);
        handle.closed = true;
        return Either.void;
      }),
  };
};
