/**
 * Shared fixtures of the store suites: temporary directories, sample events,
 * a trivial projection run, a `Disk` wrapper that counts operations, and
 * the crash suites' exploration (their three crash modes, no failure).
 */
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { expect } from "@effect/vitest";
import { Event } from "@tay/core";
import { Effect, Layer } from "effect";
import * as Crash from "../../src/disk/Crash.js";
import { Disk, type DiskService, type FileHandle } from "../../src/disk/Disk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as Projection from "../../src/log/Projection.js";
import * as Init from "../../src/store/Init.js";
import * as Store from "../../src/store/Store.js";
import * as TerminalIndex from "../../src/store/TerminalIndex.js";

/** A fresh directory under the OS temp dir, removed with the scope. */
export const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tay-store-"))),
  (directory) => Effect.promise(() => fs.rm(directory, { recursive: true, force: true })),
);

/** A data directory path (not yet created) inside a fresh temporary directory. */
export const dataDirectory = Effect.map(temporaryDirectory, (directory) =>
  path.join(directory, "data"),
);

/** The Node disk layer. */
export const nodeDisk = NodeDisk.layer;

/** A store initialized in a new data directory: its path. */
export const initialized = Effect.gen(function* () {
  const directory = yield* dataDirectory;
  yield* Init.init(directory);
  return directory;
});

/** How many records the store in `directory` holds, by a fresh open. */
export const reopenedCount = (directory: string) =>
  Effect.scoped(Effect.map(Store.open(directory, {}, Projection.count), (opened) => opened.state));

/** A (1,1) inserted event for job `jobId`, with `args` of about `argsBytes` bytes. */
export const inserted = (jobId: number, argsBytes = 0): Event.Event =>
  Event.jobInserted({
    jobId,
    queue: "default",
    worker: "W",
    args: argsBytes === 0 ? null : "x".repeat(argsBytes),
    priority: 0,
    maxAttempts: 1,
    scheduledAt: 0,
    insertedAt: 0,
  });

/** A schedule definition: every minute, on queue "reports", skipping while one is active. */
export const scheduleDefinition = {
  queue: "reports",
  worker: "Report",
  args: null,
  priority: 0,
  maxAttempts: 3,
  everyMs: 60_000,
  cron: null,
  overlap: "skip" as const,
};

/** Counters of a `counting` disk. */
export interface Counts {
  writes: number;
  syncs: number;
  directorySyncs: number;
}

/**
 * Wraps a disk service, counting file writes, file syncs and directory
 * syncs; `syncDelayMs` makes each file sync slower (so group commit has
 * something to group).
 */
export const counting = (
  inner: DiskService,
  syncDelayMs = 0,
): { readonly service: DiskService; readonly counts: Counts } => {
  const counts: Counts = { writes: 0, syncs: 0, directorySyncs: 0 };
  const wrap = (handle: FileHandle): FileHandle => ({
    ...handle,
    write: (position, bytes) =>
      Effect.suspend(() => {
        counts.writes += 1;
        return handle.write(position, bytes);
      }),
    sync: () =>
      Effect.suspend(() => {
        counts.syncs += 1;
        return syncDelayMs > 0
          ? Effect.zipRight(Effect.sleep(`${syncDelayMs} millis`), handle.sync())
          : handle.sync();
      }),
  });
  const service: DiskService = {
    ...inner,
    // Options are dropped on purpose: without O_DSYNC every batch has a
    // separate sync, which is what this wrapper holds or counts.
    open: (file, mode) => Effect.map(inner.open(file, mode), wrap),
    create: (file, bytes) =>
      Effect.suspend(() => {
        counts.writes += 1;
        return Effect.map(inner.create(file, bytes), wrap);
      }),
    syncDirectory: (directory) =>
      Effect.suspend(() => {
        counts.directorySyncs += 1;
        return inner.syncDirectory(directory);
      }),
  };
  return { service, counts };
};

/** A layer of `service`. */
export const diskLayer = (service: DiskService): Layer.Layer<Disk> => Layer.succeed(Disk, service);

/** Reads a file's bytes. */
export const readBytes = (file: string): Effect.Effect<Uint8Array> =>
  Effect.promise(async () => new Uint8Array(await fs.readFile(file)));

/** Replaces a file's bytes. */
export const writeBytes = (file: string, bytes: Uint8Array): Effect.Effect<void> =>
  Effect.promise(() => fs.writeFile(file, bytes));

/**
 * The crashes every crash suite of the store and the engine tries at each
 * cut point: the unsynced data dropped; the last writes torn anywhere with
 * directory entries kept in part; torn at sector boundaries.
 */
export const crashModes: ReadonlyArray<Crash.CrashMode> = [
  { tear: "none" },
  { tear: "anywhere", unsyncedEntries: "prefix" },
  { tear: "sector", unsyncedEntries: "lost" },
];

/**
 * Cuts `workload` before every mutating disk operation (or a seeded sample
 * of them, with `cutPointsMax`), crashes it in `crashModes` and runs
 * `check` on each crashed disk. Fails the test with the first three
 * failures described, and when nothing was sampled, unless every cut
 * point was explored. Returns the report, for the suite's own counts.
 */
export const exploreCrashModes = <A>(
  workload: Crash.Workload<A>,
  check: Crash.Check<A>,
  options: Omit<Crash.ExploreOptions, "modes">,
) =>
  Effect.gen(function* () {
    const report = yield* Crash.exploreCrashes(workload, check, { ...options, modes: crashModes });
    expect(report.failures.slice(0, 3).map(Crash.describeFailure)).toEqual([]);
    if (options.cutPointsMax === undefined) expect(report.explored).toBe(report.cutPoints);
    return report;
  });

/**
 * `exploreCrashModes` with modes of the suite's own tried beside the three
 * (`crashModes`): a suite moved onto the skeleton keeps every mode it had,
 * such as a sector tear that keeps unsynced entries in part. Fails the
 * test as `exploreCrashModes` does; returns the report.
 */
export const exploreCrashModesAnd = <A>(
  extraModes: ReadonlyArray<Crash.CrashMode>,
  workload: Crash.Workload<A>,
  check: Crash.Check<A>,
  options: Omit<Crash.ExploreOptions, "modes">,
) =>
  Effect.gen(function* () {
    const modes = [...crashModes, ...extraModes];
    const report = yield* Crash.exploreCrashes(workload, check, { ...options, modes });
    expect(report.failures.slice(0, 3).map(Crash.describeFailure)).toEqual([]);
    if (options.cutPointsMax === undefined) expect(report.explored).toBe(report.cutPoints);
    return report;
  });

/**
 * The path of the one state image in the terminal index of the store in
 * `directory` (a publish leaves only HEAD's: docs/store.md, "A file per
 * image"); fails the test when there is another count.
 */
export const theImage = async (directory: string): Promise<string> => {
  const index = TerminalIndex.indexPath(directory);
  const images = (await fs.readdir(index)).filter(TerminalIndex.isImageFile);
  expect(images).toHaveLength(1);
  return path.join(index, images[0] ?? "");
};
