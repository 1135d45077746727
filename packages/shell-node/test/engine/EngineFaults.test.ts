// Proves the engine's answer to I/O errors: every disk operation N of the crash workloads (init,
// opens, appends, rotations with the staging, compactions, closes) is failed in turn with EIO,
// ENOSPC, EACCES and EROFS on the fault disk, every write is also cut short by a full disk (half
// stored, then ENOSPC) and every sync meets fsyncgate (dirty pages dropped, EIO), the process
// going on. The step that meets the fault
// must fail with a typed error whose message names the code (never a defect), every later write of
// that engine must be refused, and a reopen of the same disk once the fault is gone must succeed
// with every step answered before the fault and none of the refused one (the writer rolled back
// the bytes nobody was told about). CI runs a seeded sample of (N, code); TAY_FAULT_FULL=1 all.
// Every operation inside a tick (several batches, so a refused tick may leave its first commands
// committed) is also checked in CI, one code per operation, whatever the sample draws.
import { describe, expect, it } from "@effect/vitest";
import { State } from "@tay/core";
import { Cause, Effect, Exit, Option } from "effect";
import type * as Disk from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import { makeRandom } from "../../src/disk/internal/faultDiskRandom.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import {
  at,
  deterministic,
  directory,
  job,
  type Replay,
  replay,
  runStep,
  setTime,
  statesLike,
  t0,
  type Workload,
  workloads,
} from "../support/engineWorkloads.js";

const full = process.env.TAY_FAULT_FULL === "1";
/** (operation, code) pairs sampled per workload in CI. */
const sampledFaults = Number(process.env.TAY_FAULT_SAMPLE ?? 120);
const codes: ReadonlyArray<Disk.DiskErrorCode> = ["EIO", "ENOSPC", "EACCES", "EROFS"];

/** Where a faulted run stopped: the step (-1 for init) and what it failed with. */
interface Stopped {
  readonly step: number;
  readonly cause: Cause.Cause<unknown>;
  /** Whether a write tried after the failure, on the same engine, was refused. */
  readonly laterWriteRefused: boolean | undefined;
}

/** Where each step began in a disk's operation log (the counting run records it). */
type StepStarts = Array<number>;

/** Runs one engine's share of the steps; answers where the next engine starts, or where it stopped. */
const runEngine = (
  workload: Workload,
  start: number,
  disk: FaultDisk.FaultDisk,
  starts: StepStarts,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const opened = yield* Effect.exit(
        Engine.open(directory, { ...workload.options, timers: false }),
      );
      if (Exit.isFailure(opened)) {
        return { step: start - 1, cause: opened.cause, laterWriteRefused: undefined };
      }
      const engine = opened.value;
      for (let index = start; index < workload.steps.length; index += 1) {
        const step = workload.steps[index];
        if (step === undefined) break;
        starts[index] = disk.operations().length;
        yield* setTime(step.now);
        const ran = yield* Effect.exit(
          step._tag === "Reopen"
            ? engine.close()
            : Effect.catchTag(runStep(engine, step), "Rejected", () => Effect.void),
        );
        if (Exit.isFailure(ran)) {
          // Writes are refused until a reopen.
          const later = yield* Effect.exit(engine.insert(job("after-fault")));
          return { step: index, cause: ran.cause, laterWriteRefused: Exit.isFailure(later) };
        }
        if (step._tag === "Reopen") return index + 1;
      }
      const closed = yield* Effect.exit(engine.close());
      if (Exit.isFailure(closed)) {
        return { step: workload.steps.length, cause: closed.cause, laterWriteRefused: undefined };
      }
      return workload.steps.length;
    }),
  );

/** The workload with the disk's faults armed: where it stopped, if it did. */
const faultedRun = (workload: Workload, disk: FaultDisk.FaultDisk, starts: StepStarts = []) =>
  deterministic(
    Effect.gen(function* () {
      yield* setTime(t0);
      const initialized = yield* Effect.exit(Init.init(directory));
      if (Exit.isFailure(initialized)) {
        return { step: -1, cause: initialized.cause, laterWriteRefused: undefined };
      }
      let next = 0;
      while (next < workload.steps.length) {
        const outcome: number | Stopped = yield* runEngine(workload, next, disk, starts);
        if (typeof outcome !== "number") return outcome;
        next = outcome;
      }
      starts[workload.steps.length] = disk.operations().length;
      return undefined;
    }).pipe(Effect.provide(FaultDisk.layer(disk))),
  );

/** Reopens the disk once the fault is gone: its state, or why it would not open. */
const reopen = (disk: FaultDisk.FaultDisk) =>
  deterministic(
    Effect.scoped(
      Effect.gen(function* () {
        disk.clearFaults();
        const engine = yield* Engine.open(directory, { rescueOnOpen: false, timers: false });
        const state = yield* engine.state();
        yield* setTime(at(100_000));
        yield* engine.insert(job("after-reopen"));
        return state;
      }),
    ).pipe(Effect.provide(FaultDisk.layer(disk))),
  );

/** The failure of `cause`, which must be a typed error describing itself with `code`. */
const checkTyped = (cause: Cause.Cause<unknown>, code: Disk.DiskErrorCode, where: string) => {
  const failure = Cause.failureOption(cause);
  expect(Option.isSome(failure), `${where}: a typed failure, not ${Cause.pretty(cause)}`).toBe(
    true,
  );
  if (Option.isNone(failure)) return;
  const error = failure.value;
  if (!(error instanceof Error) || !("_tag" in error)) {
    expect.fail(`${where}: not a tagged error: ${String(error)}`);
    return;
  }
  expect(typeof error._tag, where).toBe("string");
  expect(error.message, where).toContain(code);
};

/** Counts for the report. */
const counts = {
  faults: 0,
  operations: 0,
  stopped: 0,
  tolerated: 0,
  laterWritesRefused: 0,
  reopened: 0,
};

/** Transitions the replay allows after the workload stopped at `step`. */
const allowed = (
  expected: Replay,
  workload: Workload,
  stopped: Stopped | undefined,
  plan: FaultPlan,
) => {
  const last = workload.steps.length - 1;
  if (stopped === undefined)
    return { low: expected.after[last] ?? 0, high: expected.after[last] ?? 0 };
  const answered = stopped.step <= 0 ? 0 : (expected.after[stopped.step - 1] ?? 0);
  // Under Segment or Throughput an answered append is in the page cache only until a close
  // syncs it: fsyncgate drops it as a power loss would, so only what the last close made
  // durable must survive that fault.
  const maximal = (workload.options.durability ?? "Maximal") === "Maximal";
  const lastClose = workload.steps.findLastIndex(
    (step, index) => index < stopped.step && step._tag === "Reopen",
  );
  const durable = lastClose < 0 ? 0 : (expected.after[lastClose] ?? 0);
  const before = !maximal && plan.kind === "LoseDirtyPages" ? durable : answered;
  const step = workload.steps[stopped.step];
  const through = expected.after[Math.min(stopped.step, last)] ?? 0;
  // A refused append is absent (a tick is three commands, each its own batch: those before the
  // refused one may have committed, the writer's rollback keeps what was acknowledged); a
  // compaction or a reopen that failed may have finished its work before the fault.
  const whole = step === undefined || step._tag === "Compact" || step._tag === "Reopen";
  return { low: before, high: whole ? through : Math.max(answered, through - 1) };
};

/**
 * One fault to inject: a code failing operation `index` of the counting run,
 * a write cut short by a full disk (half its bytes stored, then ENOSPC), or
 * fsyncgate on a sync (the dirty pages dropped, EIO).
 */
interface FaultPlan {
  readonly index: number;
  readonly code: Disk.DiskErrorCode;
  readonly kind: "Fail" | "FullDisk" | "LoseDirtyPages";
}

/** Every plan for the operations of `log`. */
const plansOf = (log: ReadonlyArray<FaultDisk.Operation>): ReadonlyArray<FaultPlan> =>
  log.flatMap(
    (operation, index): ReadonlyArray<FaultPlan> => [
      ...codes.map((code) => ({ index, code, kind: "Fail" as const })),
      ...(operation.kind === "write" && (operation.length ?? 0) > 1
        ? [{ index, code: "ENOSPC" as const, kind: "FullDisk" as const }]
        : []),
      ...(operation.kind === "sync"
        ? [{ index, code: "EIO" as const, kind: "LoseDirtyPages" as const }]
        : []),
    ],
  );

/** Faults the run must check: every plan, or a seeded sample. */
const chooseFaults = (plans: ReadonlyArray<FaultPlan>, seed: number) => {
  const all = [...plans];
  if (full || all.length <= sampledFaults) return all;
  const random = makeRandom(seed);
  for (let index = 0; index < sampledFaults; index += 1) {
    const chosen = index + random.below(all.length - index);
    const swapped = all[index];
    const picked = all[chosen];
    if (swapped === undefined || picked === undefined) break;
    all[index] = picked;
    all[chosen] = swapped;
  }
  return all.slice(0, sampledFaults).sort((left, right) => left.index - right.index);
};

/** The faults of `plan`, striking the how-manieth operation of its kind it names. */
const faultsOf = (log: ReadonlyArray<FaultDisk.Operation>, plan: FaultPlan) => {
  const operation = log[plan.index];
  if (operation === undefined) throw new Error(`no operation ${plan.index}`);
  const nth = log.slice(0, plan.index + 1).filter((entry) => entry.kind === operation.kind).length;
  const faults: ReadonlyArray<FaultDisk.Fault> =
    plan.kind === "Fail"
      ? [FaultDisk.fail(operation.kind, plan.code, { nth })]
      : plan.kind === "FullDisk"
        ? [
            FaultDisk.shortWrite(Math.floor((operation.length ?? 2) / 2), { nth }),
            // The write of the rest meets the full disk.
            FaultDisk.fail("write", "ENOSPC", { nth: nth + 1 }),
          ]
        : [FaultDisk.loseDirtyPages({ nth })];
  return { operation, faults };
};

/** Which plans of a counting run of `operations` operations to check. */
type Choose = (
  workload: Workload,
  starts: StepStarts,
  plans: ReadonlyArray<FaultPlan>,
  operations: number,
) => ReadonlyArray<FaultPlan>;

/**
 * The plans of the operations of every tick step (`starts` from the counting run); one error
 * code per operation (they take the same path), rotating through the four.
 */
const insideTicks: Choose = (workload, starts, plans) =>
  plans.filter(
    (plan) =>
      (plan.kind !== "Fail" || plan.code === codes[plan.index % codes.length]) &&
      workload.steps.some(
        (step, index) =>
          step._tag === "Tick" &&
          plan.index >= (starts[index] ?? 0) &&
          plan.index < (starts[index + 1] ?? Number.MAX_SAFE_INTEGER),
      ),
  );

const sampled: Choose = (_workload, _starts, plans, operations) => chooseFaults(plans, operations);

const exploreFaults = (workload: Workload, choose: Choose = sampled) =>
  Effect.gen(function* () {
    const expected = replay(workload.steps);
    const initial = FaultDisk.make();
    initial.seedDirectory(directory);
    const counting = initial.crash();
    const starts: StepStarts = [];
    expect(yield* faultedRun(workload, counting, starts)).toBeUndefined();
    const log = counting.operations();
    counts.operations += log.length;
    for (const plan of choose(workload, starts, plansOf(log), log.length)) {
      // A macrotask turn per run: a long exploration must not starve vitest's own messages.
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));
      const { code } = plan;
      const { operation, faults } = faultsOf(log, plan);
      const where = `${workload.name}: ${plan.kind} ${code} at operation ${operation.index} (${operation.kind} ${operation.path})`;
      const disk = initial.crash();
      for (const fault of faults) disk.inject(fault);
      const stopped = yield* faultedRun(workload, disk);
      counts.faults += 1;
      if (stopped === undefined) counts.tolerated += 1;
      else {
        counts.stopped += 1;
        checkTyped(stopped.cause, code, where);
        if (stopped.laterWriteRefused !== undefined) {
          expect(stopped.laterWriteRefused, `${where}: a later write is refused`).toBe(true);
          counts.laterWritesRefused += 1;
        }
      }
      if (stopped?.step === -1) continue; // init failed: there is no store to reopen
      const reopened = yield* Effect.either(reopen(disk));
      if (reopened._tag === "Left") {
        expect.fail(`${where}: the reopen failed: ${String(reopened.left)}`);
        continue;
      }
      const { low, high } = allowed(expected, workload, stopped, plan);
      const matching = statesLike(expected, reopened.right)
        .map((state, transitions) => ({ state, transitions }))
        .filter(({ transitions }) => transitions >= low && transitions <= high)
        .some(({ state }) => State.equals(state, reopened.right));
      expect(matching, `${where}: reopened to transitions in [${low}, ${high}]`).toBe(true);
      counts.reopened += 1;
    }
  });

describe("engine I/O faults", () => {
  for (const workload of workloads) {
    it.effect(
      `${workload.name}: a fault at any operation is typed, stops the writes, loses nothing answered`,
      () => exploreFaults(workload),
      full ? 30 * 60_000 : 60_000,
    );
  }

  // A tick is several batches: a fault after the first is durable must find the reopen within
  // the replay's window whatever the fault strikes (the seeded sample may miss every such point).
  for (const workload of workloads.filter((each) => each.steps.some((s) => s._tag === "Tick"))) {
    it.effect(
      `${workload.name}: every fault inside a tick reopens to a prefix of the tick's commands`,
      () => exploreFaults(workload, insideTicks),
      full ? 30 * 60_000 : 60_000,
    );
  }

  it("reports the counts", () => {
    console.log(
      `engine I/O faults: ${counts.faults} runs (${full ? "every operation x EIO, ENOSPC, EACCES, EROFS, every write cut short by a full disk, every sync losing its dirty pages: TAY_FAULT_FULL=1" : "a seeded sample; TAY_FAULT_FULL=1 runs every operation x fault"}) over ${counts.operations} operations of ${workloads.length} workloads: ${counts.stopped} stopped with a typed error naming the code (${counts.laterWritesRefused} of them checked: a later write refused), ${counts.tolerated} tolerated, ${counts.reopened} reopened with every answered step and none refused`,
    );
    expect(counts.faults).toBeGreaterThan(0);
  });
});
