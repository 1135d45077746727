/**
 * A fault-injecting, crash-modelling, in-memory `Disk`.
 *
 * The model is the one of the crash-consistency literature (ALICE, "All File
 * Systems Are Not Created Equal"; CrashMonkey): every file has volatile
 * contents (what reads see) and durable contents (what survives a crash);
 * `sync` makes a file's data and size durable (a truncation is a change like
 * a write); directory entries (creates, renames, hard links, removes) stay
 * volatile until `syncDirectory` of their parent.
 * `crash` returns the disk a reboot would find: by default only what is
 * durable, optionally with a prefix of each object's unsynced changes (torn
 * writes). Faults (EIO, ENOSPC, EACCES, short writes, a full disk, fsyncgate)
 * are injected on demand, and every operation is logged so the crash harness
 * can enumerate cut points: the moment just before each mutating operation.
 */
import * as Disk from "./Disk.js";
import { Effect, Either, Layer } from "effect";
import {
  DirectoryNode,
  FileNode,
  type Node,
  rebuild,
  type TearMode,
  type UnsyncedEntries,
  walk,
} from "./internal/faultDiskModel.js";
import {
  componentsOf,
  findNode,
  findParent,
  normalize,
  type Refusal,
  refuse,
} from "./internal/faultDiskPaths.js";
import { makeRandom } from "./internal/faultDiskRandom.js";

export type { TearMode, UnsyncedEntries } from "./internal/faultDiskModel.js";
export { sectorBytes } from "./internal/faultDiskModel.js";

/** Every operation the fault disk performs and logs (handle and lock operations included). */
export type OperationKind =
  | "open"
  | "read"
  | "write"
  | "sync"
  | "truncate"
  | "size"
  | "close"
  | "readFile"
  | "rename"
  | "link"
  | "remove"
  | "readDirectory"
  | "stat"
  | "makeDirectory"
  | "syncDirectory"
  | "lock"
  | "describe"
  | "release";

/**
 * One logged operation. `cutPoint` is present exactly on mutating operations
 * (write, sync, truncate, rename, link, remove, makeDirectory, syncDirectory,
 * describe, open with `createExclusive`): the cut point just before it. `outcome` is "ok" or
 * the error code; `powerCut` says the power was off.
 */
export interface Operation {
  /** Position in the log since the disk was made (kept when old entries are dropped). */
  readonly index: number;
  readonly kind: OperationKind;
  readonly path: string;
  /** A rename's or link's new name. */
  readonly target?: string;
  readonly mode?: Disk.OpenMode;
  readonly position?: number;
  /** Bytes asked for (read), given (write, describe), or the size set (truncate). */
  readonly length?: number;
  readonly cutPoint?: number;
  readonly outcome: "ok" | Disk.DiskErrorCode;
  readonly powerCut: boolean;
  /** Bytes actually read or written, on success. */
  readonly bytes?: number;
}

/** Which paths a fault applies to: an exact path (normalized), a pattern or a predicate. */
export type FaultPath = string | RegExp | ((path: string) => boolean);

/**
 * Where a fault strikes: operations matching `path` (all when absent); only
 * the `nth` match (1-based) when given, else every match.
 */
export interface FaultScope {
  readonly path?: FaultPath;
  readonly nth?: number;
}

/**
 * An injected fault:
 * - `Fail`: the operation fails with `code` and changes nothing;
 * - `ShortWrite`: a write stores and reports at most `bytesMax` bytes;
 * - `LoseDirtyPages`: fsyncgate: a file `sync` drops the unsynced changes
 *   (volatile contents revert to durable) and fails with EIO; a later sync
 *   succeeds with nothing left to write.
 */
export type Fault =
  | ({
      readonly _tag: "Fail";
      readonly operation: OperationKind;
      readonly code: Disk.DiskErrorCode;
    } & FaultScope)
  | ({ readonly _tag: "ShortWrite"; readonly bytesMax: number } & FaultScope)
  | ({ readonly _tag: "LoseDirtyPages" } & FaultScope);

/**
 * A fault failing `operation` with `code` (EIO, ENOSPC, EACCES...).
 *
 * @example
 * FaultDisk.fail("rename", "EIO", { nth: 2 }) // the second rename fails
 */
export const fail = (
  operation: OperationKind,
  code: Disk.DiskErrorCode,
  scope: FaultScope = {},
): Fault => ({ _tag: "Fail", operation, code, ...scope });

/** A fault making writes short: at most `bytesMax` (>= 1) bytes each. */
export const shortWrite = (bytesMax: number, scope: FaultScope = {}): Fault => ({
  _tag: "ShortWrite",
  bytesMax,
  ...scope,
});

/** The fsyncgate fault: `sync` loses the dirty pages and reports EIO. */
export const loseDirtyPages = (scope: FaultScope = {}): Fault => ({
  _tag: "LoseDirtyPages",
  ...scope,
});

/** What a crash keeps beyond the durable state. Defaults: no tearing, unsynced entries lost, seed 0. */
export interface CrashOptions {
  /**
   * Unsynced file changes: `none` keeps none; `anywhere` keeps, per file, a
   * random prefix of its unsynced changes in order, the first dropped write
   * possibly kept in part (any byte count); `sector` likewise but a partial
   * write keeps whole 512-byte sectors of the file only.
   */
  readonly tear?: TearMode;
  /** Unsynced directory entries: `lost`, or per directory a random prefix of its unsynced changes. */
  readonly unsyncedEntries?: UnsyncedEntries;
  /** Seed of the random choices; the same seed and state give the same disk. */
  readonly seed?: number;
}

/** Configuration of a fresh fault disk. */
export interface Options {
  readonly faults?: ReadonlyArray<Fault>;
  /** Total bytes of live file contents; a write beyond is short, or ENOSPC when nothing fits. */
  readonly capacityBytes?: number;
  /** Cuts the power just before mutating operation number `cutAt` (0-based). */
  readonly cutAt?: number;
  /** Largest file, in bytes (EFBIG beyond), so a stray position cannot exhaust memory. */
  readonly fileBytesMax?: number;
  /** Log entries kept; the oldest half is dropped when full. */
  readonly operationLogEntriesMax?: number;
}

/** The error every operation fails with once the power is cut. */
export const powerCutDetail = "power cut";

/** Whether `error` is the fault disk's power-cut error. */
export const isPowerCut = (error: unknown): boolean =>
  error instanceof Disk.DiskError && error.code === "EIO" && error.detail === powerCutDetail;

/** Default `fileBytesMax`: 2 GiB. */
export const fileBytesMaxDefault = 2 ** 31;

/** Default `operationLogEntriesMax`. */
export const operationLogEntriesMaxDefault = 1_000_000;

/**
 * A `DiskService` in memory, with the controls of a test: faults, power
 * cuts, crashes, and views of its volatile and durable contents. The
 * helpers other than the service are synchronous and never logged.
 */
export interface FaultDisk extends Disk.DiskService {
  /** Adds a fault from now on. */
  readonly inject: (fault: Fault) => void;
  /** Removes every fault. */
  readonly clearFaults: () => void;
  /** Cuts the power now: every later operation fails with the power-cut error. */
  readonly cutPower: () => void;
  /** Cuts the power just before mutating operation `cutPoint` (0-based, counted since the disk was made). */
  readonly cutPowerAt: (cutPoint: number) => void;
  readonly poweredOff: () => boolean;
  /** Mutating operations attempted so far: the cut points passed. */
  readonly mutations: () => number;
  /** The operation log, oldest first. */
  readonly operations: () => ReadonlyArray<Operation>;
  /**
   * The disk a reboot finds: cuts this disk's power (if still on) and
   * returns a new disk holding only what survives, with no lock held, no
   * fault and an empty log. Calling it again gives another (or, with the
   * same options, the same) outcome of the same crash.
   */
  readonly crash: (options?: CrashOptions) => FaultDisk;
  /** Makes everything durable, as a clean shutdown would (all files and directories synced). */
  readonly settle: () => void;
  /** Creates a directory and its missing parents, durably (test setup). Throws if a component is a file. */
  readonly seedDirectory: (path: string) => void;
  /** Creates or replaces a file with `bytes`, durably, parents included (test setup). */
  readonly seedFile: (path: string, bytes: Uint8Array) => void;
  /** Every file's volatile contents (what reads see now), by path. */
  readonly snapshotFiles: () => ReadonlyMap<string, Uint8Array>;
  /** Every file's durable contents: what `crash()` without tearing keeps. */
  readonly durableFiles: () => ReadonlyMap<string, Uint8Array>;
  /** Every volatile path, sorted; directories end with `/`. */
  readonly listing: () => ReadonlyArray<string>;
}

/** Opening for writing requires one of these modes. */
const writableModes: ReadonlySet<Disk.OpenMode> = new Set(["readWrite", "createExclusive"]);

/** The `DiskOperation` a kind reports in its errors (as `NodeDisk` names them). */
const diskOperationOf = (kind: OperationKind): Disk.DiskOperation => {
  switch (kind) {
    case "size":
      return "stat";
    case "readFile":
      return "read";
    case "describe":
      return "write";
    case "release":
      return "unlock";
    default:
      return kind;
  }
};

const faultKindMatches = (fault: Fault, kind: OperationKind): boolean => {
  switch (fault._tag) {
    case "Fail":
      return fault.operation === kind;
    case "ShortWrite":
      return kind === "write";
    case "LoseDirtyPages":
      return kind === "sync";
    default: {
      const unreachable: never = fault;
      return unreachable;
    }
  }
};

const faultPathMatches = (
  path: FaultPath | undefined,
  candidates: ReadonlyArray<string>,
): boolean => {
  if (path === undefined) return true;
  return candidates.some((candidate) => {
    if (typeof path === "string") return normalize(path) === candidate;
    if (path instanceof RegExp) return path.test(candidate);
    return path(candidate);
  });
};

/** What the matching faults ask of the operation beyond failing it. */
interface Injected {
  readonly shortWriteBytesMax: number | undefined;
  readonly loseDirtyPages: boolean;
}

/** One call as the disk sees it before running it. */
interface Attempt {
  readonly kind: OperationKind;
  readonly path: string;
  readonly details: {
    readonly target?: string;
    readonly mode?: Disk.OpenMode;
    readonly position?: number;
    readonly length?: number;
  };
  readonly mutating: boolean;
  /** Close and release succeed with the power off: there is nothing left to close. */
  readonly survivesPowerCut: boolean;
}

const attempt = (
  kind: OperationKind,
  path: string,
  details: Attempt["details"] = {},
  mutating = false,
): Attempt => ({
  kind,
  path,
  details,
  mutating,
  survivesPowerCut: kind === "close" || kind === "release",
});

const isByteCount = (value: number): boolean => Number.isSafeInteger(value) && value >= 0;

const checkByteCounts = (path: string, position: number, length: number): Effect.Effect<void> =>
  isByteCount(position) && isByteCount(length)
    ? Effect.void
    : Effect.dieMessage(`${path}: position ${position} and length ${length} must be byte counts`);

const closedRefusal = (): Either.Either<never, Refusal> =>
  refuse("Other", "EBADF: the handle is closed");

/**
 * A fresh, empty fault disk (only `/` exists).
 *
 * @example
 * const disk = FaultDisk.make({ faults: [FaultDisk.fail("sync", "EIO", { nth: 1 })] });
 * disk.seedDirectory("/data");
 * await Effect.runPromise(program.pipe(Effect.provide(FaultDisk.layer(disk))));
 * const survivor = disk.crash({ tear: "sector", seed: 7 });
 */
export const make = (options: Options = {}): FaultDisk => fromRoot(new DirectoryNode(), options);

/**
 * Provides `Disk` backed by `disk`; keep `disk` to inject faults and crash it.
 * Any `DiskService` is accepted, so a crash workload can provide the disk it
 * was handed.
 */
export const layer = (disk: Disk.DiskService): Layer.Layer<Disk.Disk> =>
  Layer.succeed(Disk.Disk, disk);

const fromRoot = (root: DirectoryNode, options: Options): FaultDisk => {
  const fileBytesMax = options.fileBytesMax ?? fileBytesMaxDefault;
  const logEntriesMax = options.operationLogEntriesMax ?? operationLogEntriesMaxDefault;
  const armed: Array<{ readonly fault: Fault; matches: number }> = [];
  const log: Array<Operation> = [];
  const locks = new Set<FileNode>();
  const openHandles = new Map<FileNode, number>();
  let logged = 0;
  let mutationCount = 0;
  let cutAt = options.cutAt;
  let powerOff = false;

  const inject = (fault: Fault): void => {
    if (
      fault._tag === "ShortWrite" &&
      !(Number.isSafeInteger(fault.bytesMax) && fault.bytesMax >= 1)
    ) {
      // A zero-byte write would make every correct write loop spin forever.
      throw new RangeError(
        `shortWrite: bytesMax must be a positive integer, got ${fault.bytesMax}`,
      );
    }
    armed.push({ fault, matches: 0 });
  };
  for (const fault of options.faults ?? []) inject(fault);

  /** The faults striking this attempt; each fault counts its own matches. */
  const strike = (current: Attempt): ReadonlyArray<Fault> => {
    const candidates =
      current.details.target === undefined
        ? [current.path]
        : [current.path, current.details.target];
    const struck: Array<Fault> = [];
    for (const entry of armed) {
      if (!faultKindMatches(entry.fault, current.kind)) continue;
      if (!faultPathMatches(entry.fault.path, candidates)) continue;
      entry.matches += 1;
      if (entry.fault.nth === undefined || entry.fault.nth === entry.matches)
        struck.push(entry.fault);
    }
    return struck;
  };

  const record = (
    current: Attempt,
    cutPoint: number | undefined,
    outcome: Operation["outcome"],
    bytes: number | undefined,
  ): void => {
    log.push({
      index: logged,
      kind: current.kind,
      path: current.path,
      ...current.details,
      ...(cutPoint === undefined ? {} : { cutPoint }),
      outcome,
      powerCut: outcome !== "ok" && powerOff,
      ...(bytes === undefined ? {} : { bytes }),
    });
    logged += 1;
    if (log.length > logEntriesMax) log.splice(0, Math.ceil(log.length / 2));
  };

  const nextCutPoint = (current: Attempt): number | undefined => {
    if (!current.mutating) return undefined;
    const cutPoint = mutationCount;
    mutationCount += 1;
    if (cutAt !== undefined && cutPoint >= cutAt) powerOff = true;
    return cutPoint;
  };

  /**
   * Runs one operation atomically: power, then injected failures, then the
   * model (`body`), then the log entry.
   */
  const run = <A>(
    current: Attempt,
    body: (injected: Injected) => Either.Either<A, Refusal>,
    bytesOf?: (value: A) => number,
  ): Effect.Effect<A, Disk.DiskError> =>
    Effect.suspend(() => {
      const cutPoint = nextCutPoint(current);
      const outcome = decide(current, body);
      record(
        current,
        cutPoint,
        Either.isRight(outcome) ? "ok" : outcome.left.code,
        Either.isRight(outcome) && bytesOf !== undefined ? bytesOf(outcome.right) : undefined,
      );
      return Either.match(outcome, {
        onRight: (value) => Effect.succeed(value),
        onLeft: (refusal) =>
          Effect.fail(
            new Disk.DiskError({
              operation: diskOperationOf(current.kind),
              path: current.path,
              code: refusal.code,
              detail: refusal.detail,
            }),
          ),
      });
    });

  const decide = <A>(
    current: Attempt,
    body: (injected: Injected) => Either.Either<A, Refusal>,
  ): Either.Either<A, Refusal> => {
    if (powerOff && !current.survivesPowerCut) return refuse("EIO", powerCutDetail);
    const struck = strike(current);
    for (const fault of struck) {
      if (fault._tag !== "Fail") continue;
      // close(2) frees the descriptor, and with it the flock, even when it reports an error:
      // a failed close or release still closes (a disk that kept the lock would refuse every
      // reopen of the process with LockHeld, which no real kernel does).
      if (current.survivesPowerCut) body({ shortWriteBytesMax: undefined, loseDirtyPages: false });
      return refuse(fault.code, `injected fault: ${fault.code}`);
    }
    let shortWriteBytesMax: number | undefined;
    for (const fault of struck) {
      if (fault._tag === "ShortWrite") {
        shortWriteBytesMax = Math.min(shortWriteBytesMax ?? fault.bytesMax, fault.bytesMax);
      }
    }
    const loseDirtyPages = struck.some((fault) => fault._tag === "LoseDirtyPages");
    return body({ shortWriteBytesMax, loseDirtyPages });
  };

  /** Bytes of live files: reachable now, or still open. */
  const usedBytes = (): number => {
    const live = new Set<FileNode>(openHandles.keys());
    for (const [, node] of walk(root)) if (node._tag === "File") live.add(node);
    let total = 0;
    for (const node of live) total += node.contents.size;
    return total;
  };

  /** How many of `length` bytes at `position` fit the file size limit and the capacity. */
  const bytesThatFit = (
    node: FileNode,
    position: number,
    length: number,
  ): Either.Either<number, Refusal> => {
    if (position + length > fileBytesMax) {
      return refuse("Other", `EFBIG: beyond the fault disk's ${fileBytesMax}-byte file limit`);
    }
    const capacity = options.capacityBytes;
    if (capacity === undefined || length === 0) return Either.right(length);
    const endMax = node.contents.size + Math.max(0, capacity - usedBytes());
    const fitting = Math.max(0, Math.min(length, endMax - position));
    return fitting === 0 ? refuse("ENOSPC", "no space left on device") : Either.right(fitting);
  };

  const trackOpen = (node: FileNode, delta: number): void => {
    const count = (openHandles.get(node) ?? 0) + delta;
    if (count > 0) openHandles.set(node, count);
    else openHandles.delete(node);
  };

  const makeFileHandle = (
    node: FileNode,
    path: string,
    mode: Disk.OpenMode,
    dataSync: boolean,
  ): Disk.FileHandle => {
    let closed = false;
    trackOpen(node, 1);
    const write = (position: number, bytes: Uint8Array) =>
      run(
        attempt("write", path, { position, length: bytes.length }, true),
        (injected) => {
          if (closed) return closedRefusal();
          if (!writableModes.has(mode)) {
            return refuse("Other", "EBADF: the handle is not open for writing");
          }
          const asked = Math.min(bytes.length, injected.shortWriteBytesMax ?? bytes.length);
          return Either.map(bytesThatFit(node, position, asked), (length) => {
            // A copy: the caller may reuse its buffer once the write returns.
            node.apply({ _tag: "Write", position, bytes: bytes.slice(0, length) });
            return length;
          });
        },
        (length) => length,
      );
    const sync = () =>
      run(attempt("sync", path, {}, true), (injected) => {
        if (closed) return closedRefusal();
        if (injected.loseDirtyPages) {
          node.dropDirtyPages();
          return refuse("EIO", "injected fault: fsync failed and the dirty pages were dropped");
        }
        node.sync();
        return Either.void;
      });
    // ftruncate(2): a change like a write, volatile until the next sync
    // (O_DSYNC covers writes only). Linux refuses a read-only descriptor
    // with EINVAL.
    const truncate = (size: number) =>
      run(attempt("truncate", path, { length: size }, true), () => {
        if (closed) return closedRefusal();
        if (!writableModes.has(mode)) {
          return refuse("Other", "EINVAL: the handle is not open for writing");
        }
        if (size > fileBytesMax) {
          return refuse("Other", `EFBIG: beyond the fault disk's ${fileBytesMax}-byte file limit`);
        }
        node.apply({ _tag: "Truncate", size });
        return Either.void;
      });
    return {
      path,
      dataSync,
      truncate: (size) => Effect.zipRight(checkByteCounts(path, size, 0), truncate(size)),
      read: (position, length) =>
        Effect.zipRight(
          checkByteCounts(path, position, length),
          run(
            attempt("read", path, { position, length }),
            () => (closed ? closedRefusal() : Either.right(node.contents.read(position, length))),
            (bytes) => bytes.length,
          ),
        ),
      // An O_DSYNC write is modelled as the write then a sync, two
      // operations of the log: a cut between them loses the bytes (the call
      // never returned), and sync faults strike it as they strike `sync`.
      write: (position, bytes) =>
        Effect.zipRight(
          checkByteCounts(path, position, bytes.length),
          dataSync
            ? Effect.flatMap(write(position, bytes), (length) => Effect.as(sync(), length))
            : write(position, bytes),
        ),
      sync,
      size: () =>
        run(attempt("size", path), () =>
          closed ? closedRefusal() : Either.right(node.contents.size),
        ),
      close: () =>
        run(attempt("close", path), () => {
          if (!closed) trackOpen(node, -1);
          closed = true;
          return Either.void;
        }),
    };
  };

  const open = (rawPath: string, mode: Disk.OpenMode, options: Disk.OpenOptions = {}) => {
    const path = normalize(rawPath);
    const dataSync = options.dataSync === true && mode !== "read";
    return run(
      attempt("open", path, { mode }, mode === "createExclusive"),
      (): Either.Either<Disk.FileHandle, Refusal> => {
        const names = componentsOf(path);
        if (mode === "createExclusive") {
          return Either.flatMap(findParent(root, names), ({ parent, name }) => {
            if (parent.entries.has(name)) return refuse("EEXIST", "file exists");
            const node = new FileNode(new Uint8Array(0), new Uint8Array(0));
            parent.apply({ assignments: [[name, node]] });
            return Either.right(makeFileHandle(node, path, mode, dataSync));
          });
        }
        return Either.flatMap(findNode(root, names), (node) =>
          node._tag === "Directory"
            ? refuse("EISDIR", "a directory is not a file")
            : Either.right(makeFileHandle(node, path, mode, dataSync)),
        );
      },
    );
  };

  // The model keeps create and write as two operations (two cut points): a
  // power loss may keep the entry without the bytes. Only a process kill,
  // which this model does not distinguish, benefits from the single step.
  const create = (rawPath: string, bytes: Uint8Array) =>
    Effect.flatMap(open(rawPath, "createExclusive"), (handle) => {
      const writeFrom = (position: number): Effect.Effect<Disk.FileHandle, Disk.DiskError> =>
        position >= bytes.length
          ? Effect.succeed(handle)
          : Effect.flatMap(handle.write(position, bytes.subarray(position)), (count) =>
              writeFrom(position + count),
            );
      return Effect.tapError(writeFrom(0), () => Effect.ignore(handle.close()));
    });

  const readFile = (rawPath: string) => {
    const path = normalize(rawPath);
    return run(
      attempt("readFile", path),
      () =>
        Either.flatMap(findNode(root, componentsOf(path)), (node) =>
          node._tag === "Directory"
            ? refuse("EISDIR", "illegal operation on a directory")
            : Either.right(node.contents.snapshot()),
        ),
      (bytes) => bytes.length,
    );
  };

  /** Whether `member` is `tree` or lies anywhere under it. */
  const contains = (tree: Node, member: DirectoryNode): boolean => {
    if (tree === member) return true;
    if (tree._tag === "File") return false;
    for (const child of tree.entries.values()) if (contains(child, member)) return true;
    return false;
  };

  /** rename(2): checks in Linux's order, then one atomic entry change per directory involved. */
  const renameNodes = (source: string, target: string): Either.Either<void, Refusal> =>
    Either.gen(function* () {
      // Linux resolves both parent directories before it looks the source up.
      const from = yield* findParent(root, componentsOf(source));
      const to = yield* findParent(root, componentsOf(target));
      const node = from.parent.entries.get(from.name);
      if (node === undefined) return yield* refuse("ENOENT", "no such file or directory");
      const replaced = to.parent.entries.get(to.name);
      if (replaced === node) return;
      if (node._tag === "Directory" && contains(node, to.parent)) {
        return yield* refuse("Other", "EINVAL: a directory cannot move into itself");
      }
      if (replaced !== undefined) yield* checkReplaceable(node, replaced);
      if (from.parent === to.parent) {
        from.parent.apply({
          assignments: [
            [from.name, undefined],
            [to.name, node],
          ],
        });
      } else {
        from.parent.apply({ assignments: [[from.name, undefined]] });
        to.parent.apply({ assignments: [[to.name, node]] });
      }
    });

  const checkReplaceable = (node: Node, replaced: Node): Either.Either<void, Refusal> => {
    if (node._tag === "File" && replaced._tag === "Directory") {
      return refuse("EISDIR", "cannot replace a directory with a file");
    }
    if (node._tag === "Directory" && replaced._tag === "File") {
      return refuse("ENOTDIR", "cannot replace a file with a directory");
    }
    if (replaced._tag === "Directory" && replaced.entries.size > 0) {
      return refuse("ENOTEMPTY", "directory not empty");
    }
    return Either.void;
  };

  const rename = (rawSource: string, rawTarget: string) => {
    const source = normalize(rawSource);
    const target = normalize(rawTarget);
    return run(attempt("rename", source, { target }, true), () => renameNodes(source, target));
  };

  /**
   * link(2), checked in Linux's order (the source, then the new name, then
   * that the source is not a directory): a new entry naming the same inode,
   * a change of the target's directory like a create (volatile until that
   * directory is synced; a crash keeps it or drops it).
   */
  const linkNodes = (source: string, target: string): Either.Either<void, Refusal> =>
    Either.gen(function* () {
      const node = yield* findNode(root, componentsOf(source));
      const to = yield* findParent(root, componentsOf(target));
      if (to.parent.entries.has(to.name)) return yield* refuse("EEXIST", "file exists");
      if (node._tag === "Directory") {
        return yield* refuse("EPERM", "a directory cannot be hard-linked");
      }
      to.parent.apply({ assignments: [[to.name, node]] });
    });

  const link = (rawSource: string, rawTarget: string) => {
    const source = normalize(rawSource);
    const target = normalize(rawTarget);
    return run(attempt("link", source, { target }, true), () => linkNodes(source, target));
  };

  const remove = (rawPath: string, removeOptions?: { readonly recursive?: boolean }) => {
    const path = normalize(rawPath);
    return run(attempt("remove", path, {}, true), () =>
      Either.flatMap(findParent(root, componentsOf(path)), ({ parent, name }) => {
        const node = parent.entries.get(name);
        if (node === undefined) return refuse("ENOENT", "no such file or directory");
        if (node._tag === "Directory" && removeOptions?.recursive !== true) {
          return refuse("EISDIR", "is a directory");
        }
        parent.apply({ assignments: [[name, undefined]] });
        return Either.void;
      }),
    );
  };

  const readDirectory = (rawPath: string) => {
    const path = normalize(rawPath);
    return run(
      attempt("readDirectory", path),
      (): Either.Either<ReadonlyArray<string>, Refusal> =>
        Either.flatMap(findNode(root, componentsOf(path)), (node) =>
          node._tag === "File"
            ? refuse("ENOTDIR", "not a directory")
            : // The default sort compares UTF-16 code units, as the interface promises.
              Either.right([...node.entries.keys()].sort()),
        ),
    );
  };

  const stat = (rawPath: string) => {
    const path = normalize(rawPath);
    return run(
      attempt("stat", path),
      (): Either.Either<Disk.Stat, Refusal> =>
        Either.map(findNode(root, componentsOf(path)), (node) =>
          node._tag === "File"
            ? { type: "file", size: node.contents.size }
            : { type: "directory", size: 0 },
        ),
    );
  };

  const makeDirectory = (rawPath: string) => {
    const path = normalize(rawPath);
    return run(attempt("makeDirectory", path, {}, true), () =>
      Either.flatMap(findParent(root, componentsOf(path)), ({ parent, name }) => {
        if (parent.entries.has(name)) return refuse("EEXIST", "file exists");
        parent.apply({ assignments: [[name, new DirectoryNode()]] });
        return Either.void;
      }),
    );
  };

  const syncDirectory = (rawPath: string) => {
    const path = normalize(rawPath);
    return run(attempt("syncDirectory", path, {}, true), () =>
      Either.flatMap(findNode(root, componentsOf(path)), (node) => {
        if (node._tag === "File") return refuse("ENOTDIR", "not a directory");
        node.sync();
        return Either.void;
      }),
    );
  };

  /** The lock file at `path`, created (as a volatile entry) when missing, as open(O_CREAT) does. */
  const lockFile = (path: string): Either.Either<FileNode, Refusal> =>
    Either.flatMap(findParent(root, componentsOf(path)), ({ parent, name }) => {
      const existing = parent.entries.get(name);
      if (existing?._tag === "Directory") return refuse("EISDIR", "is a directory");
      if (existing !== undefined) return Either.right(existing);
      const created = new FileNode(new Uint8Array(0), new Uint8Array(0));
      parent.apply({ assignments: [[name, created]] });
      return Either.right(created);
    });

  const makeLockHandle = (node: FileNode, path: string): Disk.LockHandle => {
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

  const lock = (
    rawPath: string,
  ): Effect.Effect<Disk.LockHandle, Disk.DiskError | Disk.LockHeld> => {
    const path = normalize(rawPath);
    const taken = run(attempt("lock", path), () =>
      Either.flatMap(lockFile(path), (node) => {
        // EAGAIN is what flock(LOCK_NB) reports; it becomes LockHeld below.
        if (locks.has(node)) return refuse("EAGAIN", "the lock is held");
        locks.add(node);
        return Either.right(makeLockHandle(node, path));
      }),
    );
    return Effect.catchIf(
      taken,
      (error) => error.code === "EAGAIN",
      () => Effect.fail(new Disk.LockHeld({ path })),
    );
  };

  const seedDirectory = (rawPath: string): DirectoryNode => {
    let directory = root;
    for (const name of componentsOf(rawPath)) {
      const child = directory.entries.get(name);
      if (child?._tag === "File") throw new Error(`seedDirectory ${rawPath}: ${name} is a file`);
      if (child !== undefined) {
        directory = child;
        continue;
      }
      const created = new DirectoryNode();
      directory.seed(name, created);
      directory = created;
    }
    return directory;
  };

  const seedFile = (rawPath: string, bytes: Uint8Array): void => {
    const path = normalize(rawPath);
    const parentPath = path.slice(0, path.lastIndexOf("/"));
    const name = path.slice(path.lastIndexOf("/") + 1);
    if (name === "") throw new Error(`seedFile ${rawPath}: not a file path`);
    const parent = seedDirectory(parentPath);
    if (parent.entries.get(name)?._tag === "Directory") {
      throw new Error(`seedFile ${rawPath}: is a directory`);
    }
    parent.seed(name, new FileNode(bytes, bytes));
  };

  const settle = (): void => {
    root.sync();
    for (const [, node] of walk(root)) node.sync();
  };

  const filesOf = (tree: DirectoryNode): ReadonlyMap<string, Uint8Array> => {
    const files = new Map<string, Uint8Array>();
    for (const [path, node] of walk(tree)) {
      if (node._tag === "File") files.set(path, node.contents.snapshot());
    }
    return files;
  };

  const crash = (crashOptions: CrashOptions = {}): FaultDisk => {
    powerOff = true;
    const survivor = rebuild(root, {
      tear: crashOptions.tear ?? "none",
      unsyncedEntries: crashOptions.unsyncedEntries ?? "lost",
      random: makeRandom(crashOptions.seed ?? 0),
    });
    return fromRoot(survivor, {
      ...(options.capacityBytes === undefined ? {} : { capacityBytes: options.capacityBytes }),
      fileBytesMax,
      operationLogEntriesMax: logEntriesMax,
    });
  };

  return {
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
    inject,
    clearFaults: () => {
      armed.length = 0;
    },
    cutPower: () => {
      powerOff = true;
    },
    cutPowerAt: (cutPoint) => {
      cutAt = cutPoint;
    },
    poweredOff: () => powerOff,
    mutations: () => mutationCount,
    operations: () => log.slice(),
    crash,
    settle,
    seedDirectory: (path) => {
      seedDirectory(path);
    },
    seedFile,
    snapshotFiles: () => filesOf(root),
    durableFiles: () =>
      filesOf(rebuild(root, { tear: "none", unsyncedEntries: "lost", random: makeRandom(0) })),
    listing: () =>
      walk(root)
        .map(([path, node]) => (node._tag === "Directory" ? `${path}/` : path))
        .sort(),
  };
};
