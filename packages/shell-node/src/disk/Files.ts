/**
 * Small durable-file idioms over the `Disk` service: whole writes despite
 * short counts, exact reads, publication of a small file by
 * tmp + fsync + rename + fsync(dir), durable directory creation.
 */
import * as Effect from "effect/Effect";
import { Disk, DiskError, type FileHandle, type OpenMode } from "./Disk.js";
import * as Path from "node:path";

/** The suffix of a small file's temporary twin. */
export const temporarySuffix = ".tmp";

/** `NAME.tmp` beside `path`. */
export const temporaryPath = (path: string): string => `${path}${temporarySuffix}`;

/** The directory holding `path` (the one to fsync after a rename or create). */
export const parentPath = (path: string): string => Path.dirname(path);

/**
 * Writes all of `bytes` at `position`, looping over short writes. A write
 * that makes no progress is reported as an `EIO` disk error rather than
 * spinning. The usual case, one complete write, is one step.
 */
export const writeAll = (
  handle: FileHandle,
  position: number,
  bytes: Uint8Array,
): Effect.Effect<void, DiskError> => Effect.suspend(() => writeFrom(handle, position, bytes, 0));

const writeFrom = (
  handle: FileHandle,
  position: number,
  bytes: Uint8Array,
  written: number,
): Effect.Effect<void, DiskError> => {
  if (written >= bytes.length) return Effect.void;
  const rest = written === 0 ? bytes : bytes.subarray(written);
  return Effect.flatMap(handle.write(position + written, rest), (count) => {
    if (!(count > 0)) return Effect.fail(stalledWrite(handle.path));
    return writeFrom(handle, position, bytes, written + count);
  });
};

/** A write that reported no byte written: the loop would spin, so it fails as EIO. */
export const stalledWrite = (path: string): DiskError =>
  new DiskError({ operation: "write", path, code: "EIO", detail: "write made no progress" });

/**
 * Reads exactly `length` bytes at `position` (looping: `read` may return
 * fewer); fewer only when the file ends first.
 */
export const readUpTo = (
  handle: FileHandle,
  position: number,
  length: number,
): Effect.Effect<Uint8Array, DiskError> =>
  Effect.gen(function* () {
    const first = yield* handle.read(position, length);
    if (first.length === length || first.length === 0) return first;
    const target = new Uint8Array(length);
    target.set(first, 0);
    let filled = first.length;
    while (filled < length) {
      const more = yield* handle.read(position + filled, length - filled);
      if (more.length === 0) return target.subarray(0, filled);
      target.set(more, filled);
      filled += more.length;
    }
    return target;
  });

/** Opens a file for the duration of `use`, closing it on every exit. */
export const withFile = <A, E, R>(
  path: string,
  mode: OpenMode,
  use: (handle: FileHandle) => Effect.Effect<A, E, R>,
): Effect.Effect<A, E | DiskError, R | Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    return yield* Effect.acquireUseRelease(disk.open(path, mode), use, (handle) =>
      // A close failure after a successful use changes nothing we promised:
      // every durable step syncs before it returns.
      Effect.ignore(handle.close()),
    );
  });

/** True when `path` exists (stat succeeds); other stat failures propagate. */
export const exists = (path: string): Effect.Effect<boolean, DiskError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    return yield* disk.stat(path).pipe(
      Effect.as(true),
      Effect.catchIf(
        (error) => error.code === "ENOENT",
        () => Effect.succeed(false),
      ),
    );
  });

/** Removes `path` if present (recursively for a directory); ENOENT is success. */
export const removeIfPresent = (
  path: string,
  recursive: boolean,
): Effect.Effect<void, DiskError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    yield* disk.remove(path, { recursive }).pipe(
      Effect.catchIf(
        (error) => error.code === "ENOENT",
        () => Effect.void,
      ),
    );
  });

/**
 * Publishes a small file: `NAME.tmp` (any stale one removed first) written
 * and fsynced, renamed over `NAME`, then the directory fsynced. After success
 * the new contents are durable; a crash before leaves the old contents (or
 * no file) plus, at worst, a stale `NAME.tmp`.
 */
export const publishSmallFile = (
  path: string,
  bytes: Uint8Array,
): Effect.Effect<void, DiskError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const temporary = temporaryPath(path);
    yield* removeIfPresent(temporary, false);
    yield* withFile(temporary, "createExclusive", (handle) =>
      Effect.gen(function* () {
        yield* writeAll(handle, 0, bytes);
        yield* handle.sync();
      }),
    );
    yield* disk.rename(temporary, path);
    yield* disk.syncDirectory(parentPath(path));
  });

/** Creates one directory and fsyncs its parent, so the entry is durable. */
export const makeDirectoryDurable = (path: string): Effect.Effect<void, DiskError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    yield* disk.makeDirectory(path);
    yield* disk.syncDirectory(parentPath(path));
  });

/**
 * Creates a new file holding exactly `bytes` and returns its open
 * read/write handle for further appends; nothing is synced (the caller
 * syncs what it promises). The caller owns the handle.
 */
export const createFile = (
  path: string,
  bytes: Uint8Array,
): Effect.Effect<FileHandle, DiskError, Disk> =>
  Effect.flatMap(Disk, (disk) => disk.create(path, bytes));
