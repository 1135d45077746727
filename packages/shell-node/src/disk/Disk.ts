/**
 * The file-system service the shell runs on.
 *
 * A deliberately narrow interface: exactly the operations the store performs
 * (positional reads and writes, truncation, fsync of files and directories,
 * rename, hard links, readdir, remove, stat, mkdir, and an exclusive
 * advisory lock). The Node
 * layer (`NodeDisk`) maps them one-to-one to syscalls; the testkit's
 * fault-injecting layer models a disk with durable and volatile contents.
 * Both must pass the same contract tests.
 */
import * as Context from "effect/Context";
import * as Data from "effect/Data";
import type * as Effect from "effect/Effect";
import type * as Either from "effect/Either";
import * as Described from "./Described.js";

/** Operations a `DiskError` can name. */
export type DiskOperation =
  | "open"
  | "read"
  | "write"
  | "sync"
  | "close"
  | "rename"
  | "link"
  | "truncate"
  | "remove"
  | "readDirectory"
  | "stat"
  | "makeDirectory"
  | "syncDirectory"
  | "lock"
  | "unlock";

/**
 * POSIX error codes the shell distinguishes. `Other` carries anything else
 * (the original code is in `detail`). EPERM, EXDEV and ENOTSUP (EOPNOTSUPP
 * on Linux is the same number) are how `link` says a file system has no
 * hard links for us.
 */
export type DiskErrorCode =
  | "ENOENT"
  | "EEXIST"
  | "ENOTDIR"
  | "EISDIR"
  | "ENOTEMPTY"
  | "EACCES"
  | "EROFS"
  | "EIO"
  | "ENOSPC"
  | "EAGAIN"
  | "EPERM"
  | "EXDEV"
  | "ENOTSUP"
  | "Other";

/** A failed file-system operation, naming the operation and the path. */
export class DiskError extends Data.TaggedError("DiskError")<{
  readonly operation: DiskOperation;
  readonly path: string;
  readonly code: DiskErrorCode;
  readonly detail: string;
}> {
  /** The errno code is the reason (`ENOSPC /data/...: write failed: ...`). */
  get description(): Described.Description {
    return Described.describe(
      this.code === "Other" ? "DiskError" : this.code,
      this.path,
      `${this.operation} failed: ${this.detail}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The lock on `path` is held by another holder (this or another process). */
export class LockHeld extends Data.TaggedError("LockHeld")<{ readonly path: string }> {
  get description(): Described.Description {
    return Described.describe("LockHeld", this.path, "another holder has the lock");
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * How to open a file:
 * - `read`: existing file, read only;
 * - `readWrite`: existing file, read and positional write;
 * - `createExclusive`: a new file (fails with EEXIST if present), read and write.
 */
export type OpenMode = "read" | "readWrite" | "createExclusive";

/** How a writable file is opened. */
export interface OpenOptions {
  /**
   * Every write returns only once its bytes (and the size that reaches
   * them) are durable, as a write followed by `sync`: `O_DSYNC`. One system
   * call per durable write instead of two, and no hop back to the caller
   * between them. The handle says so in `dataSync`.
   */
  readonly dataSync?: boolean;
  /**
   * Writes of at most 64 KiB (NodeDisk's `inlineWriteBytesMax`) that wait
   * for no device (not `dataSync`) are made on the caller's thread: a copy
   * into the page cache, microseconds, instead of a hop to the thread pool
   * and back (40-80 µs). The store asks for it only under `Throughput`,
   * whose files are never synced: a write to a file being synced can wait
   * for its writeback, and the caller's thread must not. A disk without a
   * thread pool ignores it.
   */
  readonly inlineWrites?: boolean;
}

export interface Stat {
  readonly type: "file" | "directory" | "other";
  readonly size: number;
}

/** How `Write.now` answers: the error, or the bytes written (a short count is legal). */
export type WriteDone = (error: DiskError | undefined, written: number) => void;

/**
 * Writes `bytes` at `position` and returns how many were written. A short
 * count is legal (the caller loops); the store treats any error as fatal.
 */
export interface Write {
  (position: number, bytes: Uint8Array): Effect.Effect<number, DiskError>;
  /**
   * The same write, answered by a callback: the store's writer writes a
   * batch this way, so a batch costs no fiber (docs/benchmarks.md, "One
   * awaited insert"). `done` is called exactly once, perhaps before `now`
   * returns (a write made on the caller's thread). Optional, and carried by
   * the write function itself: a wrapper that replaces `write` (to count or
   * fail writes) drops it, and its writes then go through the wrapper.
   */
  readonly now?: (position: number, bytes: Uint8Array, done: WriteDone) => void;
  /**
   * The same write made on the caller's thread, answered when it returns:
   * the count written, or the error. On a `dataSync` handle it returns only
   * once the bytes are durable, so the caller's thread waits for the device:
   * the store's writer calls it only for a small batch when nothing else is
   * in flight, and stops calling it for a while after a slow one (its bound
   * is stated and measured in docs/disk.md, "Durable writes on the caller's
   * thread"). Optional, and carried by the write function like `now`.
   */
  readonly inline?: (position: number, bytes: Uint8Array) => Either.Either<number, DiskError>;
}

/** Reads up to `length` bytes at `position`; fewer only at end of file. */
export interface Read {
  (position: number, length: number): Effect.Effect<Uint8Array, DiskError>;
  /**
   * The same read into `target[0, length)` (`length` at most
   * `target.length`): the count read, fewer only at end of file. Recovery
   * reads a store's segments through one reused buffer this way, instead of
   * a new 4 MiB buffer per chunk, whose off-heap bytes (the whole store, in
   * all) each pushed the heap towards another full collection
   * (docs/benchmarks.md, "Cold start"). Optional, and carried by the read
   * function itself, as `Write.now`: a wrapper that replaces `read` (to
   * count or fail reads) drops it, and its reads then go through the wrapper.
   */
  readonly into?: (
    position: number,
    target: Uint8Array,
    length: number,
  ) => Effect.Effect<number, DiskError>;
  /**
   * The same read on the caller's thread (`pread`), answered at once: the
   * bytes, or the error. For a read a synchronous query must make (the
   * terminal index answers `job(id)` this way, docs/engine.md): a page
   * from the page cache costs microseconds, less than the hop to the
   * thread pool. Optional, and carried by the read function itself like
   * `Write.now`: a wrapper that replaces `read` drops it.
   */
  readonly now?: (position: number, length: number) => Either.Either<Uint8Array, DiskError>;
}

/** An open file. Positions are byte offsets from the start of the file. */
export interface FileHandle {
  readonly path: string;
  /** Writes are durable when they return (opened with `dataSync`): no `sync` is needed after them. */
  readonly dataSync: boolean;
  /** Reads up to `length` bytes at `position`; fewer only at end of file. */
  readonly read: Read;
  /**
   * Writes `bytes` at `position` and returns how many were written. A short
   * count is legal (the caller loops); the store treats any error as fatal.
   */
  readonly write: Write;
  /** Makes the file's data durable (fdatasync). */
  readonly sync: () => Effect.Effect<void, DiskError>;
  /**
   * Sets the file's size to `size` (ftruncate): bytes past it are gone, a
   * larger size reads as zeros. Volatile until `sync`, like a write; an
   * `O_DSYNC` handle does not make it durable either. The writer uses it
   * to take back the bytes of a batch whose write or sync failed.
   */
  readonly truncate: (size: number) => Effect.Effect<void, DiskError>;
  /** Current size in bytes. */
  readonly size: () => Effect.Effect<number, DiskError>;
  /** Closes the handle; closing twice is a no-op. */
  readonly close: () => Effect.Effect<void, DiskError>;
}

/** A held exclusive lock; `release` unlocks and closes. */
export interface LockHandle {
  readonly path: string;
  readonly release: () => Effect.Effect<void, DiskError>;
  /** Replaces the lock file's informative contents (pid, host, session). */
  readonly describe: (contents: Uint8Array) => Effect.Effect<void, DiskError>;
}

export interface DiskService {
  readonly open: (
    path: string,
    mode: OpenMode,
    options?: OpenOptions,
  ) => Effect.Effect<FileHandle, DiskError>;
  /**
   * Creates a new file (EEXIST if present) holding `bytes`, open for reading
   * and writing. One step: nothing else of this process runs between the
   * create and the write (a kill that lands inside the create syscall can
   * still leave an empty file; a power loss can keep the entry and a prefix
   * of the bytes until both are synced). The store stages new segments with
   * it under `SEGMENT.tmp` before linking them into place (see `link`).
   */
  readonly create: (path: string, bytes: Uint8Array) => Effect.Effect<FileHandle, DiskError>;
  /** Reads a whole file (small files: marker, pointer, manifest). */
  readonly readFile: (path: string) => Effect.Effect<Uint8Array, DiskError>;
  /** Atomic rename within one directory tree; replaces `target` if it exists. */
  readonly rename: (source: string, target: string) => Effect.Effect<void, DiskError>;
  /**
   * Gives the file `source` a second name `target` (link(2)): atomic, and
   * EEXIST if `target` exists. Both names then see the same bytes. Like a
   * create, the new entry is volatile until `target`'s directory is synced.
   * A file system without hard links refuses with EPERM, ENOTSUP or EXDEV.
   */
  readonly link: (source: string, target: string) => Effect.Effect<void, DiskError>;
  /** Removes a file, or a directory and everything under it when `recursive`. */
  readonly remove: (
    path: string,
    options?: { readonly recursive?: boolean },
  ) => Effect.Effect<void, DiskError>;
  /** Entry names of a directory, sorted by code unit. */
  readonly readDirectory: (path: string) => Effect.Effect<ReadonlyArray<string>, DiskError>;
  /** Type and size; fails with ENOENT when absent. */
  readonly stat: (path: string) => Effect.Effect<Stat, DiskError>;
  /** Creates one directory (parent must exist); EEXIST if present. */
  readonly makeDirectory: (path: string) => Effect.Effect<void, DiskError>;
  /** Makes a directory's entries (creates, renames, removes) durable. */
  readonly syncDirectory: (path: string) => Effect.Effect<void, DiskError>;
  /**
   * Takes an exclusive, non-blocking advisory lock on `path` (created if
   * missing). A second lock on the same path, from this process or another,
   * fails with `LockHeld` until the first is released.
   */
  readonly lock: (path: string) => Effect.Effect<LockHandle, DiskError | LockHeld>;
}

/** The service tag: provide `NodeDisk.layer` in production, the testkit's fault disk in tests. */
export class Disk extends Context.Tag("@tay/shell-node/Disk")<Disk, DiskService>() {}
