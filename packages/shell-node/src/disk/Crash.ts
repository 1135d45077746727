/**
 * The crash harness: runs a workload on a fault disk, cuts the power just
 * before each of its mutating operations in turn (each a "cut point"),
 * crashes there, and checks what survives against what the workload had
 * acknowledged.
 *
 * One counting run finds the cut points (mutating operations + 1: the last
 * is after the workload finished). Then, for every cut point (or a seeded
 * sample), the workload runs again on a fresh copy of the initial disk with
 * the cut armed, so it stops exactly there with the power-cut error; the disk
 * is crashed once per requested crash mode (and random sample), and `check`
 * sees each surviving disk with the labels acknowledged before the cut.
 */
import type * as Disk from "./Disk.js";
import * as Cause from "effect/Cause";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as FaultDisk from "./FaultDisk.js";
import { makeRandom, mixSeed } from "./internal/faultDiskRandom.js";

/**
 * The code under test. It performs its I/O through `disk` and calls
 * `acknowledge(label)` whenever it would report success to its caller
 * (e.g. "record 3 is durable"). It must be deterministic, and stop at the
 * first error (the power cut reaches it as a `DiskError`).
 */
export type Workload<A> = (
  disk: Disk.DiskService,
  acknowledge: (label: A) => Effect.Effect<void>,
) => Effect.Effect<void, unknown>;

/**
 * The invariant: given the disk a crash left and the labels acknowledged
 * before the cut, fails (with any error, or dies) when the invariant is
 * broken. Typically it reopens the store through `disk` and checks every
 * acknowledged label is there.
 */
export type Check<A> = (
  disk: FaultDisk.FaultDisk,
  acknowledged: ReadonlyArray<A>,
) => Effect.Effect<void, unknown>;

/** One way to crash: see `FaultDisk.CrashOptions`. */
export interface CrashMode {
  readonly tear: FaultDisk.TearMode;
  readonly unsyncedEntries?: FaultDisk.UnsyncedEntries;
}

export interface ExploreOptions {
  /** Prepares the initial disk (seed files, run an init). Everything it leaves is made durable. */
  readonly setup?: (disk: FaultDisk.FaultDisk) => Effect.Effect<void, unknown>;
  /** Crash modes tried at every cut point. Default: `[{ tear: "none" }]`. */
  readonly modes?: ReadonlyArray<CrashMode>;
  /** Random outcomes per cut point for each random mode (tearing or unsynced entries kept). Default 1. */
  readonly samplesPerCutPoint?: number;
  /** Explore at most this many cut points: a seeded sample, always with the last. Default: all. */
  readonly cutPointsMax?: number;
  /** Seed of the sample and of the crash outcomes. Default 0. */
  readonly seed?: number;
  /** Faults armed on every run (they replay identically: their counters restart). */
  readonly faults?: ReadonlyArray<FaultDisk.Fault>;
  /** Stop at the first failing crash. Default false. */
  readonly failFast?: boolean;
}

/** A crash after which `check` failed. */
export interface CrashFailure<A> {
  readonly cutPoint: number;
  /** The mutating operation the power cut stopped; absent at the last cut point. */
  readonly operation?: FaultDisk.Operation;
  /** The crash that produced the failing disk: `disk.crash(failure.crash)` replays it. */
  readonly crash: {
    readonly tear: FaultDisk.TearMode;
    readonly unsyncedEntries: FaultDisk.UnsyncedEntries;
    readonly seed: number;
  };
  readonly acknowledged: ReadonlyArray<A>;
  readonly cause: Cause.Cause<unknown>;
}

export interface CrashReport<A> {
  /** Cut points of the workload: its mutating operations + 1. */
  readonly cutPoints: number;
  /** Cut points explored (all of them unless `cutPointsMax` sampled, or `failFast` stopped early). */
  readonly explored: number;
  /** Crashed disks checked (explored cut points x modes x samples). */
  readonly crashes: number;
  readonly failures: ReadonlyArray<CrashFailure<A>>;
}

/** Why the harness itself could not run the exploration. */
export type CrashHarnessErrorReason = "SetupFailed" | "WorkloadFailed" | "Nondeterministic";

/** The harness could not explore: setup or the uncut workload failed, or a rerun diverged. */
export class CrashHarnessError extends Data.TaggedError("CrashHarnessError")<{
  readonly reason: CrashHarnessErrorReason;
  readonly detail: string;
}> {
  override get message(): string {
    return `${this.reason}: ${this.detail}`;
  }
}

/** One run of the workload on a fresh copy of the initial disk. */
interface Run<A> {
  readonly disk: FaultDisk.FaultDisk;
  readonly acknowledged: ReadonlyArray<A>;
  readonly exit: Exit.Exit<void, unknown>;
}

const runWorkload = <A>(
  initial: FaultDisk.FaultDisk,
  workload: Workload<A>,
  options: ExploreOptions,
  cutPoint: number | undefined,
): Effect.Effect<Run<A>> =>
  Effect.suspend(() => {
    // Crashing a settled disk copies it exactly: a fresh disk for every run.
    const disk = initial.crash();
    for (const fault of options.faults ?? []) disk.inject(fault);
    if (cutPoint !== undefined) disk.cutPowerAt(cutPoint);
    const acknowledged: Array<A> = [];
    const acknowledge = (label: A) =>
      Effect.sync(() => {
        acknowledged.push(label);
      });
    return Effect.map(Effect.exit(workload(disk, acknowledge)), (exit) => ({
      disk,
      acknowledged,
      exit,
    }));
  });

const prepare = (options: ExploreOptions): Effect.Effect<FaultDisk.FaultDisk, CrashHarnessError> =>
  Effect.gen(function* () {
    const disk = FaultDisk.make();
    if (options.setup !== undefined) {
      const exit = yield* Effect.exit(options.setup(disk));
      if (Exit.isFailure(exit)) {
        return yield* new CrashHarnessError({
          reason: "SetupFailed",
          detail: Cause.pretty(exit.cause),
        });
      }
    }
    disk.settle();
    return disk;
  });

/** All cut points, or a seeded sample of `cutPointsMax` (the last always included), ascending. */
const chooseCutPoints = (
  cutPoints: number,
  cutPointsMax: number | undefined,
  seed: number,
): ReadonlyArray<number> => {
  const all = Array.from({ length: cutPoints }, (_, index) => index);
  if (cutPointsMax === undefined || cutPoints <= cutPointsMax) return all;
  const random = makeRandom(mixSeed(seed, cutPoints));
  const earlier = all.slice(0, -1);
  // A partial Fisher-Yates shuffle: the first `cutPointsMax - 1` slots are the sample.
  const sampleSize = Math.max(0, cutPointsMax - 1);
  for (let index = 0; index < sampleSize; index += 1) {
    const chosen = index + random.below(earlier.length - index);
    const swapped = earlier[index];
    const picked = earlier[chosen];
    if (swapped === undefined || picked === undefined) break;
    earlier[index] = picked;
    earlier[chosen] = swapped;
  }
  return [...earlier.slice(0, sampleSize).sort((left, right) => left - right), cutPoints - 1];
};

const isRandomMode = (mode: CrashMode): boolean =>
  mode.tear !== "none" || mode.unsyncedEntries === "prefix";

/** Checks that a rerun stopped where the counting run said it would. */
const checkDeterminism = <A>(
  run: Run<A>,
  cutPoint: number,
  lastCutPoint: number,
): Effect.Effect<void, CrashHarnessError> => {
  const diverged =
    cutPoint < lastCutPoint
      ? !run.disk.poweredOff()
      : run.disk.poweredOff() || Exit.isFailure(run.exit);
  return diverged
    ? Effect.fail(
        new CrashHarnessError({
          reason: "Nondeterministic",
          detail: `the rerun armed at cut point ${cutPoint} of ${lastCutPoint + 1} did not stop there: ${run.disk.mutations()} mutating operations`,
        }),
      )
    : Effect.void;
};

/**
 * Explores every crash of `workload` (see the module comment) and reports
 * the ones after which `check` fails. Fails with `CrashHarnessError` only
 * when the exploration itself is impossible.
 *
 * @example
 * const report = yield* Crash.exploreCrashes(
 *   (disk, acknowledge) => Effect.gen(function* () {
 *     const file = yield* disk.open("/data/log", "readWrite");
 *     yield* file.write(0, record);
 *     yield* file.sync();
 *     yield* acknowledge(1);
 *   }),
 *   (disk, acknowledged) => checkLog(disk, acknowledged),
 *   { setup: (disk) => Effect.sync(() => disk.seedFile("/data/log", new Uint8Array())) },
 * );
 * expect(report.failures).toEqual([]);
 */
export const exploreCrashes = <A>(
  workload: Workload<A>,
  check: Check<A>,
  options: ExploreOptions = {},
): Effect.Effect<CrashReport<A>, CrashHarnessError> =>
  Effect.gen(function* () {
    const seed = options.seed ?? 0;
    const modes = options.modes ?? [{ tear: "none" }];
    const samples = options.samplesPerCutPoint ?? 1;
    const initial = yield* prepare(options);
    const counting = yield* runWorkload(initial, workload, options, undefined);
    if (Exit.isFailure(counting.exit)) {
      return yield* new CrashHarnessError({
        reason: "WorkloadFailed",
        detail: `the workload fails without any crash: ${Cause.pretty(counting.exit.cause)}`,
      });
    }
    const cutPoints = counting.disk.mutations() + 1;
    const failures: Array<CrashFailure<A>> = [];
    let explored = 0;
    let crashes = 0;
    for (const cutPoint of chooseCutPoints(cutPoints, options.cutPointsMax, seed)) {
      const run = yield* runWorkload(initial, workload, options, cutPoint);
      yield* checkDeterminism(run, cutPoint, cutPoints - 1);
      explored += 1;
      const operation = run.disk.operations().find((entry) => entry.cutPoint === cutPoint);
      for (const [modeIndex, mode] of modes.entries()) {
        for (let sample = 0; sample < (isRandomMode(mode) ? samples : 1); sample += 1) {
          const crash = {
            tear: mode.tear,
            unsyncedEntries: mode.unsyncedEntries ?? "lost",
            seed: mixSeed(seed, cutPoint, modeIndex, sample),
          };
          const exit = yield* Effect.exit(check(run.disk.crash(crash), run.acknowledged));
          crashes += 1;
          if (Exit.isSuccess(exit)) continue;
          failures.push({
            cutPoint,
            ...(operation === undefined ? {} : { operation }),
            crash,
            acknowledged: run.acknowledged,
            cause: exit.cause,
          });
          if (options.failFast === true) return { cutPoints, explored, crashes, failures };
        }
      }
    }
    return { cutPoints, explored, crashes, failures };
  });

/** A one-line account of a failure, for assertion messages. */
export const describeFailure = <A>(failure: CrashFailure<A>): string => {
  const where =
    failure.operation === undefined
      ? "after the workload finished"
      : `before ${failure.operation.kind} ${failure.operation.path}`;
  const crash = `tear ${failure.crash.tear}, unsynced entries ${failure.crash.unsyncedEntries}, seed ${failure.crash.seed}`;
  return `cut point ${failure.cutPoint} (${where}; ${crash}); acknowledged ${JSON.stringify(
    failure.acknowledged,
    (_, value) => (typeof value === "bigint" ? value.toString() : value),
  )}: ${Cause.pretty(failure.cause)}`;
};

/** A workload with its invariant (and optionally its own initial disk). */
export interface CrashScenario<A> {
  readonly workload: Workload<A>;
  readonly check: Check<A>;
  readonly setup?: (disk: FaultDisk.FaultDisk) => Effect.Effect<void, unknown>;
}
