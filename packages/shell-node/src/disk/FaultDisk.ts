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
 *
 * This module is the public face and the wiring; the pieces live in
 * `internal/faultDisk*.ts`: the tree model and its crash (`Model`), paths,
 * the steps of each path operation (`Tree`), file handles, locks, space,
 * faults, the operation log and the runner that sequences power, faults,
 * model and log for every operation.
 */
import * as Disk from "./Disk.js";
import * as Layer from "effect/Layer";
import type { Fault, FaultScope } from "./internal/faultDiskFaults.js";
import type { Operation, OperationKind } from "./internal/faultDiskLog.js";
import {
  DirectoryNode,
  type FileNode,
  rebuild,
  type TearMode,
  type UnsyncedEntries,
} from "./internal/faultDiskModel.js";
import { makeRandom } from "./internal/faultDiskRandom.js";
import { OperationRunner, powerCutDetail } from "./internal/faultDiskRunner.js";
import * as Seed from "./internal/faultDiskSeed.js";
import { makeDiskService } from "./internal/faultDiskService.js";
import { Space } from "./internal/faultDiskSpace.js";

export type { Fault, FaultPath, FaultScope } from "./internal/faultDiskFaults.js";
export type { Operation, OperationKind } from "./internal/faultDiskLog.js";
export type { TearMode, UnsyncedEntries } from "./internal/faultDiskModel.js";
export { sectorBytes } from "./internal/faultDiskModel.js";
export { powerCutDetail } from "./internal/faultDiskRunner.js";

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

/** A fault disk over `root`: the disk service, then the controls of a test. */
const fromRoot = (root: DirectoryNode, options: Options): FaultDisk => {
  const fileBytesMax = options.fileBytesMax ?? fileBytesMaxDefault;
  const logEntriesMax = options.operationLogEntriesMax ?? operationLogEntriesMaxDefault;
  const runner = new OperationRunner(logEntriesMax, options.cutAt);
  for (const fault of options.faults ?? []) runner.faults.inject(fault);
  const space = new Space(root, fileBytesMax, options.capacityBytes);
  const locks = new Set<FileNode>();
  const crash = (crashOptions: CrashOptions = {}): FaultDisk => {
    runner.cutPower();
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
    ...makeDiskService({ root, run: runner.run, space, locks }),
    inject: (fault) => runner.faults.inject(fault),
    clearFaults: () => runner.faults.clear(),
    cutPower: () => runner.cutPower(),
    cutPowerAt: (cutPoint) => runner.cutPowerAt(cutPoint),
    poweredOff: () => runner.poweredOff(),
    mutations: () => runner.mutations(),
    operations: () => runner.log.snapshot(),
    crash,
    settle: () => Seed.settle(root),
    seedDirectory: (path) => {
      Seed.seedDirectory(root, path);
    },
    seedFile: (path, bytes) => Seed.seedFile(root, path, bytes),
    snapshotFiles: () => Seed.filesOf(root),
    durableFiles: () => Seed.durableFilesOf(root),
    listing: () => Seed.listingOf(root),
  };
};
