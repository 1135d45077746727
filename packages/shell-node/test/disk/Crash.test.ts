// Proves the crash harness crashes at every cut point and finds protocol bugs: a toy append-only
// log store passes at every cut point with a correct protocol (write, fsync, then acknowledge), and
// the harness reports exactly the expected failing cut points for buggy protocols (acknowledge before
// fsync, no directory fsync after create). The harness refuses workloads it
// cannot explore, and crashes with each mode and a seed per sample (the fast-check integration is
// tested in the testkit).
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import * as Crash from "../../src/disk/Crash.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";

import { appendLog, checkLog, logPath, setup, storeDirectory } from "../support/toyLog.js";

const values = [11, 22, 33];

describe("exploreCrashes with a correct protocol", () => {
  it.effect("passes at every cut point, without tearing", () =>
    Effect.gen(function* () {
      const report = yield* Crash.exploreCrashes(appendLog("correct", values), checkLog, { setup });
      // open, syncDirectory, then a write and a sync per value; plus the cut after the end.
      expect(report.cutPoints).toBe(2 + 2 * values.length + 1);
      expect(report.explored).toBe(report.cutPoints);
      expect(report.crashes).toBe(report.cutPoints);
      expect(report.failures).toEqual([]);
    }),
  );

  it.effect("passes with torn writes, persisted unsynced entries and short writes", () =>
    Effect.gen(function* () {
      const report = yield* Crash.exploreCrashes(appendLog("correct", values), checkLog, {
        setup,
        modes: [
          { tear: "none" },
          { tear: "sector" },
          { tear: "anywhere", unsyncedEntries: "prefix" },
        ],
        samplesPerCutPoint: 4,
        faults: [FaultDisk.shortWrite(3)],
        seed: 7,
      });
      // Short writes of 3 bytes: three writes per 8-byte record.
      expect(report.cutPoints).toBe(2 + 4 * values.length + 1);
      expect(report.explored).toBe(report.cutPoints);
      expect(report.crashes).toBe(report.cutPoints * (1 + 4 + 4));
      expect(report.failures.map(Crash.describeFailure)).toEqual([]);
    }),
  );

  it.effect("samples cutPointsMax cut points, always including the last, reproducibly", () =>
    Effect.gen(function* () {
      const many = Array.from({ length: 10 }, (_, index) => index + 1);
      const explore = (seed: number) =>
        Crash.exploreCrashes(appendLog("acknowledgeBeforeSync", many), checkLog, {
          setup,
          cutPointsMax: 5,
          seed,
        });
      const report = yield* explore(3);
      expect(report.cutPoints).toBe(23);
      expect(report.explored).toBe(5);
      const again = yield* explore(3);
      expect(again.failures.map((failure) => failure.cutPoint)).toEqual(
        report.failures.map((failure) => failure.cutPoint),
      );
    }),
  );
});

describe("exploreCrashes with buggy protocols", () => {
  it.effect(
    "acknowledging before fsync fails exactly at the cut points just before each sync",
    () =>
      Effect.gen(function* () {
        const report = yield* Crash.exploreCrashes(
          appendLog("acknowledgeBeforeSync", values),
          checkLog,
          {
            setup,
          },
        );
        expect(report.cutPoints).toBe(9);
        expect(report.explored).toBe(9);
        // Operations: 0 open, 1 syncDirectory, then (write, sync) at 2-3, 4-5, 6-7; cut 8 is the end.
        expect(report.failures.map((failure) => failure.cutPoint)).toEqual([3, 5, 7]);
        const first = report.failures[0];
        expect(first?.operation?.kind).toBe("sync");
        expect(first?.operation?.path).toBe(logPath);
        expect(first?.acknowledged).toEqual([11]);
        expect(first?.crash).toEqual({
          tear: "none",
          unsyncedEntries: "lost",
          seed: expect.any(Number),
        });
      }),
  );

  it.effect(
    "creating the log without a directory fsync fails at every cut point after the first ack",
    () =>
      Effect.gen(function* () {
        const report = yield* Crash.exploreCrashes(appendLog("noDirectorySync", values), checkLog, {
          setup,
        });
        // Operations: 0 open, then (write, sync) at 1-2, 3-4, 5-6; cut 7 is after the end.
        expect(report.cutPoints).toBe(8);
        expect(report.failures.map((failure) => failure.cutPoint)).toEqual([3, 4, 5, 6, 7]);
        const last = report.failures[report.failures.length - 1];
        expect(last?.operation).toBeUndefined();
        expect(last?.acknowledged).toEqual(values);
        expect(Crash.describeFailure(report.failures[0] ?? expect.fail("no failure"))).toContain(
          "cut point 3 (before write /store/log",
        );
      }),
  );

  it.effect("failFast stops at the first failing crash", () =>
    Effect.gen(function* () {
      const report = yield* Crash.exploreCrashes(
        appendLog("acknowledgeBeforeSync", values),
        checkLog,
        {
          setup,
          failFast: true,
        },
      );
      expect(report.failures.map((failure) => failure.cutPoint)).toEqual([3]);
      expect(report.explored).toBe(4);
    }),
  );

  it.effect("a replay of a failure's crash on a fresh run gives the same failing disk", () =>
    Effect.gen(function* () {
      const report = yield* Crash.exploreCrashes(
        appendLog("acknowledgeBeforeSync", values),
        checkLog,
        {
          setup,
          modes: [{ tear: "anywhere" }],
          seed: 5,
        },
      );
      const failure = report.failures[0];
      if (failure === undefined) return yield* Effect.fail("expected a failure");
      const disk = FaultDisk.make({ cutAt: failure.cutPoint });
      disk.seedDirectory(storeDirectory);
      const acknowledged: Array<number> = [];
      yield* Effect.ignore(
        appendLog("acknowledgeBeforeSync", values)(disk, (value) =>
          Effect.sync(() => {
            acknowledged.push(value);
          }),
        ),
      );
      expect(acknowledged).toEqual(failure.acknowledged);
      const replayed = yield* Effect.either(checkLog(disk.crash(failure.crash), acknowledged));
      expect(replayed._tag).toBe("Left");
    }),
  );
});

// What each crash mode may leave is only explored if the harness crashes with
// that mode and a seed of its own per sample: a check that records the disks
// it is given sees every kind of outcome the mode allows.
describe("exploreCrashes crashes with each mode and sample", () => {
  /** One unsynced write of "abcdefgh" and one unsynced rename, nothing acknowledged. */
  const unsynced: Crash.Workload<number> = (disk) =>
    Effect.gen(function* () {
      const handle = yield* disk.open(`${storeDirectory}/file`, "readWrite");
      yield* handle.write(0, new TextEncoder().encode("abcdefgh"));
      yield* disk.rename(`${storeDirectory}/file`, `${storeDirectory}/renamed`);
    });
  const seeded = (disk: FaultDisk.FaultDisk) =>
    Effect.sync(() => disk.seedFile(`${storeDirectory}/file`, new Uint8Array()));

  /** The outcomes the check saw at the last cut point (after the workload), and the report. */
  const outcomesOf = (mode: Crash.CrashMode) =>
    Effect.gen(function* () {
      const seen = new Set<string>();
      const report = yield* Crash.exploreCrashes(
        unsynced,
        (disk) =>
          Effect.sync(() => {
            const files = disk.snapshotFiles();
            const file =
              files.get(`${storeDirectory}/file`) ?? files.get(`${storeDirectory}/renamed`);
            const name = files.has(`${storeDirectory}/renamed`) ? "renamed" : "file";
            seen.add(`${name}:${file?.length ?? -1}`);
          }),
        { setup: seeded, modes: [mode], samplesPerCutPoint: 24, cutPointsMax: 1, seed: 2 },
      );
      return { seen, report };
    });

  it.effect("a tearing mode leaves torn writes, and its samples differ", () =>
    Effect.gen(function* () {
      const { seen, report } = yield* outcomesOf({ tear: "anywhere" });
      expect(report.crashes).toBe(24);
      const lengths = [...seen].map((outcome) => Number(outcome.split(":")[1]));
      // Nothing kept, the whole write, and some byte count between.
      expect(lengths).toContain(0);
      expect(lengths).toContain(8);
      expect(lengths.some((length) => length > 0 && length < 8)).toBe(true);
    }),
  );

  it.effect("unsynced entries kept as a prefix: sampled, and the rename kept or not", () =>
    Effect.gen(function* () {
      const { seen, report } = yield* outcomesOf({ tear: "none", unsyncedEntries: "prefix" });
      expect(report.crashes).toBe(24);
      expect([...seen].sort()).toEqual(["file:0", "renamed:0"]);
    }),
  );
});

describe("exploreCrashes refuses what it cannot explore", () => {
  it.effect("a workload that fails without any crash", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Crash.exploreCrashes(appendLog("correct", values), checkLog, {}),
      );
      expect(error.reason).toBe("WorkloadFailed");
    }),
  );

  it.effect("a setup that fails", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Crash.exploreCrashes(appendLog("correct", values), checkLog, {
          setup: () => Effect.fail("no"),
        }),
      );
      expect(error.reason).toBe("SetupFailed");
    }),
  );

  // The last rerun is armed past every operation: it must end as the counting run did.
  it.effect("a workload that fails only when run again", () =>
    Effect.gen(function* () {
      let runs = 0;
      const flaky: Crash.Workload<number> = (disk) =>
        Effect.gen(function* () {
          runs += 1;
          yield* disk.makeDirectory(`${storeDirectory}/only`);
          if (runs > 1) return yield* Effect.fail("failed on a rerun");
        });
      const error = yield* Effect.flip(
        Crash.exploreCrashes(flaky, () => Effect.void, { setup, cutPointsMax: 1 }),
      );
      expect(error.reason).toBe("Nondeterministic");
    }),
  );

  it.effect("a workload that does not repeat itself", () =>
    Effect.gen(function* () {
      let runs = 0;
      const drifting: Crash.Workload<number> = (disk) =>
        Effect.gen(function* () {
          runs += 1;
          const count = runs === 1 ? 3 : 1;
          for (let index = 0; index < count; index += 1)
            yield* disk.makeDirectory(`/store/${index}`);
        });
      const error = yield* Effect.flip(Crash.exploreCrashes(drifting, checkLog, { setup }));
      expect(error.reason).toBe("Nondeterministic");
    }),
  );
});
