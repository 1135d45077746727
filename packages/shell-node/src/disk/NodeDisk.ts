/**
 * The `Disk` service on `node:fs`: each operation is one syscall (or the
 * short fixed sequence named in its doc), so the order the store issues them
 * in is the order the kernel sees.
 *
 * Errors are `DiskError` values with the errno code mapped to `DiskErrorCode`
 * (EWOULDBLOCK is EAGAIN, EOPNOTSUPP is ENOTSUP). Invalid positions or lengths are programmer errors
 * and die. Locks are `flock(2)` locks, taken as each runtime can (Node:
 * the fs-ext addon; Bun: libc through `bun:ffi`; Deno: `FsFile.tryLock`),
 * loaded on the first lock so that no runtime loads another's code. They
 * belong to the open file description, so a second `lock` of the same path
 * from this process is refused exactly like one from another process, and
 * openers on different runtimes exclude each other. `docs/runtimes.md`.
 */
import * as fs from "node:fs";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import * as Layer from "effect/Layer";
import {
  Disk,
  DiskError,
  type DiskService,
  type FileHandle,
  type LockHandle,
  type LockHeld,
  type OpenMode,
  type OpenOptions,
  type Read,
  type Stat,
  type Write,
  type WriteDone,
} from "./Disk.js";
import * as DenoLock from "./internal/denoLock.js";
import { lockWith } from "./internal/descriptorLock.js";
import * as FlockBunFfi from "./internal/flockBunFfi.js";
import * as FlockFsExt from "./internal/flockFsExt.js";
import {
  asErrno,
  call,
  callVoid,
  closeDescriptor,
  closedHandle,
  failed,
  toDiskError,
} from "./internal/nodeDiskCall.js";
import * as Runtime from "./internal/runtime.js";

/** `open(2)` flags per mode; `createExclusive` is O_CREAT|O_EXCL, read and write. */
const openFlags: Readonly<Record<OpenMode, number>> = {
  read: fs.constants.O_RDONLY,
  readWrite: fs.constants.O_RDWR,
  createExclusive: fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL,
};

/** Permission bits of files the store creates (before the umask). */
const fileMode = 0o644;

/** Positions and lengths are byte counts: non-negative safe integers. */
const isByteCount = (value: number): boolean => Number.isSafeInteger(value) && value >= 0;

const invalidByteCounts = (path: string, position: number, length: number): Effect.Effect<never> =>
  Effect.dieMessage(`${path}: position ${position} and length ${length} must be byte counts`);

const checkByteCounts = (path: string, position: number, length: number): Effect.Effect<void> =>
  isByteCount(position) && isByteCount(length)
    ? Effect.void
    : invalidByteCounts(path, position, length);

const openDescriptor = (path: string, flags: number): Effect.Effect<number, DiskError> =>
  call<number>("open", path, (callback) => fs.open(path, flags, fileMode, callback));

const fileStat = (path: string, fd: number): Effect.Effect<fs.Stats, DiskError> =>
  call<fs.Stats>("stat", path, (callback) => fs.fstat(fd, callback));

const isDirectoryError = (path: string): DiskError =>
  new DiskError({ operation: "open", path, code: "EISDIR", detail: "a directory is not a file" });

/**
 * Opens `path` and refuses a directory: Linux lets O_RDONLY open one, but a
 * `FileHandle` is for files only, on every layer.
 */
const openFile = (
  path: string,
  mode: OpenMode,
  dataSync: boolean,
): Effect.Effect<number, DiskError> =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      const flags = openFlags[mode] | (dataSync ? fs.constants.O_DSYNC : 0);
      const fd = yield* openDescriptor(path, flags);
      const stats = yield* fileStat(path, fd).pipe(
        Effect.tapError(() => Effect.ignore(closeDescriptor(path, fd))),
      );
      if (stats.isDirectory()) {
        yield* Effect.ignore(closeDescriptor(path, fd));
        return yield* Effect.fail(isDirectoryError(path));
      }
      return fd;
    }),
  );

/**
 * `pread` into `buffer[0, length)` until it is full or the file ends (a
 * regular file reads short only at its end): the count read.
 */
const readInto = (
  path: string,
  fd: number,
  position: number,
  buffer: Uint8Array,
  length: number,
): Effect.Effect<number, DiskError> =>
  Effect.gen(function* () {
    let filled = 0;
    while (filled < length) {
      const count = yield* call<number>("read", path, (callback) =>
        fs.read(fd, buffer, filled, length - filled, position + filled, callback),
      );
      if (count === 0) break;
      filled += count;
    }
    return filled;
  });

/** `pread` of `length` bytes at `position` into a new buffer, shorter at end of file. */
const readAt = (
  path: string,
  fd: number,
  position: number,
  length: number,
): Effect.Effect<Uint8Array, DiskError> => {
  const buffer = new Uint8Array(length);
  return Effect.map(readInto(path, fd, position, buffer, length), (filled) =>
    filled === length ? buffer : buffer.slice(0, filled),
  );
};

/**
 * The largest write made on the caller's thread, on a handle opened with
 * `inlineWrites` (`Disk.OpenOptions`). A write that waits for no device
 * copies into the page cache: a few microseconds for a batch this size,
 * against 40-80 µs for the hop to libuv's thread pool and back (measured
 * 2026-12-01, docs/benchmarks.md "Writes without a hop"). Larger writes,
 * and every O_DSYNC write (which waits for the device), go through the
 * thread pool.
 */
export const inlineWriteBytesMax = 64 * 1024;

/** `pwrite` on the caller's thread: the count written, or the error. */
const writeSyncOrError = (
  path: string,
  fd: number,
  position: number,
  bytes: Uint8Array,
): number | DiskError => {
  try {
    return fs.writeSync(fd, bytes, 0, bytes.length, position);
  } catch (error) {
    return toDiskError("write", path, asErrno(error));
  }
};

const writeInline = (
  path: string,
  fd: number,
  position: number,
  bytes: Uint8Array,
): Effect.Effect<number, DiskError> => {
  const written = writeSyncOrError(path, fd, position, bytes);
  return typeof written === "number" ? Effect.succeed(written) : Effect.fail(written);
};

/**
 * `pwrite` on libuv's thread pool. Writes and syncs are the store's hot path
 * (one of each per batch): the call is one step, without intermediate effects.
 */
const writeAsync = (
  path: string,
  fd: number,
  position: number,
  bytes: Uint8Array,
): Effect.Effect<number, DiskError> =>
  Effect.async<number, DiskError>((resume) => {
    fs.write(fd, bytes, 0, bytes.length, position, (error, written) =>
      resume(
        failed(error) ? Effect.fail(toDiskError("write", path, error)) : Effect.succeed(written),
      ),
    );
  });

/** `fdatasync` on libuv's thread pool, one step like `writeAsync`. */
const syncAsync = (path: string, fd: number): Effect.Effect<void, DiskError> =>
  Effect.async<void, DiskError>((resume) => {
    fs.fdatasync(fd, (error) =>
      resume(failed(error) ? Effect.fail(toDiskError("sync", path, error)) : Effect.void),
    );
  });

/** An open descriptor and whether it was closed. */
interface Descriptor {
  readonly path: string;
  readonly fd: number;
  closed: boolean;
}

/**
 * After close the descriptor number may be reused by another open file, so
 * every operation checks the flag before touching `fd`.
 */
const guarded = <A>(
  descriptor: Descriptor,
  operation: "read" | "write" | "sync" | "stat" | "truncate",
  run: () => Effect.Effect<A, DiskError>,
): Effect.Effect<A, DiskError> =>
  Effect.suspend(() =>
    descriptor.closed ? Effect.fail(closedHandle(operation, descriptor.path)) : run(),
  );

/** A write: checked, then on the caller's thread when `inline` allows it, else on the pool. */
const writeAt = (
  descriptor: Descriptor,
  inline: boolean,
  position: number,
  bytes: Uint8Array,
): Effect.Effect<number, DiskError> =>
  Effect.suspend(() => {
    const { path, fd } = descriptor;
    if (!isByteCount(position) || !isByteCount(bytes.length)) {
      return invalidByteCounts(path, position, bytes.length);
    }
    if (descriptor.closed) return Effect.fail(closedHandle("write", path));
    if (inline && bytes.length <= inlineWriteBytesMax) {
      return writeInline(path, fd, position, bytes);
    }
    return writeAsync(path, fd, position, bytes);
  });

/**
 * The callback form of `writeAt` (`Write.now`): the store's direct path
 * writes a batch without an Effect. A position or length that is not a
 * byte count is a programmer error and throws (the writer's guard stops
 * the writer with it).
 */
const writeNow = (
  descriptor: Descriptor,
  inline: boolean,
  position: number,
  bytes: Uint8Array,
  done: WriteDone,
): void => {
  const { path, fd } = descriptor;
  if (!isByteCount(position) || !isByteCount(bytes.length)) {
    throw new Error(`${path}: position ${position} and length ${bytes.length} must be byte counts`);
  }
  if (descriptor.closed) {
    done(closedHandle("write", path), 0);
    return;
  }
  if (!inline || bytes.length > inlineWriteBytesMax) {
    fs.write(fd, bytes, 0, bytes.length, position, (error, written) =>
      done(failed(error) ? toDiskError("write", path, error) : undefined, written),
    );
    return;
  }
  const written = writeSyncOrError(path, fd, position, bytes);
  if (typeof written === "number") done(undefined, written);
  else done(written, 0);
};

/**
 * `pwrite` on the caller's thread, whatever the handle (`Write.inline`): on
 * an `O_DSYNC` descriptor it returns once the bytes are durable. The store's
 * writer decides when the caller's thread may wait for the device. A
 * position or length that is not a byte count throws, as in `writeNow`.
 */
const writeInlineNow = (
  descriptor: Descriptor,
  position: number,
  bytes: Uint8Array,
): Either.Either<number, DiskError> => {
  const { path, fd } = descriptor;
  if (!isByteCount(position) || !isByteCount(bytes.length)) {
    throw new Error(`${path}: position ${position} and length ${bytes.length} must be byte counts`);
  }
  if (descriptor.closed) return Either.left(closedHandle("write", path));
  const written = writeSyncOrError(path, fd, position, bytes);
  return typeof written === "number" ? Either.right(written) : Either.left(written);
};

/**
 * `pread` on the caller's thread until `length` bytes or end of file
 * (`Read.now`). A position or length that is not a byte count is a
 * programmer error and throws, as in `writeNow`.
 */
const readNow = (
  descriptor: Descriptor,
  position: number,
  length: number,
): Either.Either<Uint8Array, DiskError> => {
  const { path, fd } = descriptor;
  if (!isByteCount(position) || !isByteCount(length)) {
    throw new Error(`${path}: position ${position} and length ${length} must be byte counts`);
  }
  if (descriptor.closed) return Either.left(closedHandle("read", path));
  const buffer = new Uint8Array(length);
  let filled = 0;
  try {
    while (filled < length) {
      const count = fs.readSync(fd, buffer, filled, length - filled, position + filled);
      if (count === 0) break;
      filled += count;
    }
  } catch (error) {
    return Either.left(toDiskError("read", path, asErrno(error)));
  }
  return Either.right(filled === length ? buffer : buffer.slice(0, filled));
};

const makeFileHandle = (
  path: string,
  fd: number,
  dataSync: boolean,
  inlineWrites = false,
): FileHandle => {
  // An O_DSYNC write waits for the device: never on the caller's thread.
  const inline = inlineWrites && !dataSync;
  const descriptor: Descriptor = { path, fd, closed: false };
  // `now` hangs off the write itself: a wrapper that replaces `write` (a
  // counting test double) drops it, and the store falls back to the Effect.
  const write: Write = Object.assign(
    (position: number, bytes: Uint8Array) => writeAt(descriptor, inline, position, bytes),
    {
      now: (position: number, bytes: Uint8Array, done: WriteDone) =>
        writeNow(descriptor, inline, position, bytes, done),
      inline: (position: number, bytes: Uint8Array) => writeInlineNow(descriptor, position, bytes),
    },
  );
  const read: Read = Object.assign(
    (position: number, length: number) =>
      Effect.zipRight(
        checkByteCounts(path, position, length),
        guarded(descriptor, "read", () => readAt(path, fd, position, length)),
      ),
    {
      now: (position: number, length: number) => readNow(descriptor, position, length),
      into: (position: number, target: Uint8Array, length: number) =>
        Effect.zipRight(
          checkByteCounts(path, position, Math.min(length, target.length)),
          guarded(descriptor, "read", () =>
            readInto(path, fd, position, target, Math.min(length, target.length)),
          ),
        ),
    },
  );
  return {
    path,
    dataSync,
    read,
    write,
    sync: () => guarded(descriptor, "sync", () => syncAsync(path, fd)),
    truncate: (size) =>
      Effect.zipRight(
        checkByteCounts(path, size, 0),
        guarded(descriptor, "truncate", () =>
          callVoid("truncate", path, (callback) => fs.ftruncate(fd, size, callback)),
        ),
      ),
    size: () =>
      guarded(descriptor, "stat", () => Effect.map(fileStat(path, fd), (stats) => stats.size)),
    close: () =>
      Effect.suspend(() => {
        if (descriptor.closed) return Effect.void;
        descriptor.closed = true;
        return closeDescriptor(path, fd);
      }),
  };
};

const open = (
  path: string,
  mode: OpenMode,
  options: OpenOptions = {},
): Effect.Effect<FileHandle, DiskError> => {
  // O_DSYNC only where a write is asked for: it means nothing to reads.
  const dataSync = options.dataSync === true && mode !== "read";
  const inlineWrites = options.inlineWrites === true && mode !== "read";
  return Effect.map(openFile(path, mode, dataSync), (fd) =>
    makeFileHandle(path, fd, dataSync, inlineWrites),
  );
};

/**
 * open(O_RDWR|O_CREAT|O_EXCL) and pwrite in the same synchronous turn (the
 * bytes are a segment header: microseconds), so no other fiber, timer or
 * callback of this process runs between them; see `DiskService.create`.
 */
const create = (path: string, bytes: Uint8Array): Effect.Effect<FileHandle, DiskError> =>
  Effect.uninterruptible(
    Effect.suspend(() => {
      let fd: number;
      try {
        fd = fs.openSync(path, openFlags.createExclusive, fileMode);
      } catch (error) {
        return Effect.fail(toDiskError("open", path, asErrno(error)));
      }
      try {
        let written = 0;
        while (written < bytes.length) {
          written += fs.writeSync(fd, bytes, written, bytes.length - written, written);
        }
      } catch (error) {
        return Effect.zipRight(
          Effect.ignore(closeDescriptor(path, fd)),
          Effect.fail(toDiskError("write", path, asErrno(error))),
        );
      }
      return Effect.succeed(makeFileHandle(path, fd, false));
    }),
  );

/** What a read of a file whose size says 0 (a pseudo-file) asks for at a time. */
const unsizedReadBytes = 64 * 1024;

/** The pieces' bytes end to end, in a Uint8Array of their own. */
const joined = (pieces: ReadonlyArray<Uint8Array>): Uint8Array => {
  const bytes = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    bytes.set(piece, at);
    at += piece.length;
  }
  return bytes;
};

/**
 * The bytes of an open file: as many as fstat says, asked for in one
 * read(2) (looping only on a short read), or for a file that says 0, read
 * on until a read returns 0. Never zero-filled first: every byte returned
 * was read.
 */
const readOpened = (path: string, fd: number): Effect.Effect<Uint8Array, DiskError> =>
  Effect.gen(function* () {
    const stats = yield* fileStat(path, fd);
    // Refused before any read, alike on every runtime (read(2) says EISDIR on Linux).
    if (stats.isDirectory()) {
      return yield* Effect.fail(
        new DiskError({
          operation: "read",
          path,
          code: "EISDIR",
          detail: "a directory is not a file",
        }),
      );
    }
    const { size } = stats;
    if (size > 0) {
      const buffer = new Uint8Array(Buffer.allocUnsafeSlow(size).buffer, 0, size);
      const filled = yield* readInto(path, fd, 0, buffer, size);
      return buffer.subarray(0, filled);
    }
    const pieces: Array<Uint8Array> = [];
    for (let position = 0; ; ) {
      const piece = yield* readAt(path, fd, position, unsizedReadBytes);
      if (piece.length === 0) return joined(pieces);
      pieces.push(piece);
      position += piece.length;
    }
  });

/**
 * The whole file, in open + fstat + one read + close: four trips to the
 * thread pool whatever its size, where `fs.readFile` makes one per 512 KiB
 * (46 for the terminal index's 24 MB offsets file). Most of such a read's
 * time is the new buffer's page faults, which no read size avoids; the
 * engine's open runs it beside its fold (2026-12-07, docs/store.md).
 */
const readFile = (path: string): Effect.Effect<Uint8Array, DiskError> =>
  Effect.acquireUseRelease(
    openDescriptor(path, openFlags.read),
    (fd) => readOpened(path, fd),
    (fd) => Effect.ignore(closeDescriptor(path, fd)),
  );

const rename = (source: string, target: string): Effect.Effect<void, DiskError> =>
  callVoid("rename", source, (callback) => fs.rename(source, target, callback));

/** link(2): `target` becomes a second name of `source`; EEXIST if it exists. */
const link = (source: string, target: string): Effect.Effect<void, DiskError> =>
  callVoid("link", source, (callback) => fs.link(source, target, callback));

/** unlink(2), which refuses a directory with EISDIR on Linux. */
const unlink = (path: string): Effect.Effect<void, DiskError> =>
  callVoid("remove", path, (callback) => fs.unlink(path, callback));

/**
 * Deno's `fs.unlink` removes an empty directory (it falls back to rmdir),
 * so there a directory is refused before the unlink, as Linux refuses it.
 */
const unlinkRefusingDirectories = (path: string): Effect.Effect<void, DiskError> =>
  Effect.flatMap(
    call<fs.Stats>("remove", path, (callback) => fs.lstat(path, callback)),
    (stats) =>
      stats.isDirectory()
        ? Effect.fail(
            new DiskError({ operation: "remove", path, code: "EISDIR", detail: "is a directory" }),
          )
        : unlink(path),
  );

const removeFile = Runtime.current === "deno" ? unlinkRefusingDirectories : unlink;

const remove = (
  path: string,
  options?: { readonly recursive?: boolean },
): Effect.Effect<void, DiskError> =>
  options?.recursive === true
    ? callVoid("remove", path, (callback) => fs.rm(path, { recursive: true }, callback))
    : removeFile(path);

const readDirectory = (path: string): Effect.Effect<ReadonlyArray<string>, DiskError> =>
  Effect.map(
    call<Array<string>>("readDirectory", path, (callback) => fs.readdir(path, callback)),
    // The default sort compares UTF-16 code units, the order the interface promises.
    (names) => names.sort(),
  );

const statTypeOf = (stats: fs.Stats): Stat["type"] => {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  return "other";
};

const stat = (path: string): Effect.Effect<Stat, DiskError> =>
  Effect.map(
    call<fs.Stats>("stat", path, (callback) => fs.stat(path, callback)),
    (stats) => ({ type: statTypeOf(stats), size: stats.size }),
  );

const makeDirectory = (path: string): Effect.Effect<void, DiskError> =>
  callVoid("makeDirectory", path, (callback) => fs.mkdir(path, callback));

/** open(O_RDONLY|O_DIRECTORY) + fsync + close: the only way to make entries durable. */
const syncDirectory = (path: string): Effect.Effect<void, DiskError> =>
  Effect.acquireUseRelease(
    call<number>("syncDirectory", path, (callback) =>
      fs.open(path, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY, callback),
    ),
    (fd) => callVoid("syncDirectory", path, (callback) => fs.fsync(fd, callback)),
    // Closing a read-only descriptor has nothing left to lose; the fsync's
    // outcome is what the caller needs.
    (fd) => Effect.ignore(closeDescriptor(path, fd)),
  );

/** The lock of this process's runtime: same `LockHeld`, same kernel lock, everywhere. */
const lockFor = (
  runtime: Runtime.Runtime,
): ((path: string) => Effect.Effect<LockHandle, DiskError | LockHeld>) => {
  switch (runtime) {
    case "node":
      return lockWith(FlockFsExt.load);
    case "bun":
      return lockWith(FlockBunFfi.load);
    case "deno":
      return DenoLock.lock(Reflect.get(globalThis, "Deno"));
    default: {
      const unknown: never = runtime;
      return unknown;
    }
  }
};

/**
 * open(O_RDWR|O_CREAT) + flock(LOCK_EX|LOCK_NB) (see `lockFor`). The file is
 * never truncated here: its contents are only informative (`describe`
 * rewrites them).
 */
const lock = lockFor(Runtime.current);

/**
 * The Node implementation of `DiskService`.
 *
 * @example
 * const program = Effect.flatMap(Disk, (disk) => disk.readDirectory("/var/lib/tay"));
 * Effect.runPromise(Effect.provide(program, NodeDisk.layer));
 */
export const make: DiskService = {
  open,
  create,
  readFile,
  rename,
  link,
  remove,
  readDirectory,
  stat,
  makeDirectory,
  syncDirectory,
  lock,
};

/** Provides `Disk` backed by `node:fs` and `flock(2)` (on Node, Bun and Deno). */
export const layer: Layer.Layer<Disk> = Layer.succeed(Disk, make);
