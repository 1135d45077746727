// Proves the crash harness crashes at every cut point and finds protocol bugs: a toy append-only
// log store passes at every cut point with a correct protocol (write, fsync, then acknowledge), and
// the harness reports exactly the expected failing cut points for buggy protocols (acknowledge before
// fsync, no directory fsync after create). The fast-check integration shrinks a failing workload to
// the smallest one, and the harness refuses workloads it cannot explore.
import { describe, expect, it } from "@effect/vitest";
import type { Disk } from "@tay/shell-node";
import { Effect } from "effect";
import * as fc from "fast-check";
import * as Crash from "../src/Crash.js";
import * as FaultDisk from "../src/FaultDisk.js";

// The toy store: "/store/log" holds 8-byte records, a 32-bit value and a 32-bit check word.
const storeDirectory = "/store";
const logPath = "/store/log";
const recordBytes = 8;
const checkMask = 0x5a5a_5a5a;

const encodeRecord = (value: number): Uint8Array => {
  const record = new Uint8Array(recordBytes);
  const view = new DataView(record.buffer);
  view.setUint32(0, value);
  view.setUint32(4, (value ^ checkMask) >>> 0);
  return record;
};

/** Values of the complete, valid records at the start of the log (a torn tail is ignored). */
const decodeLog = (bytes: Uint8Array): ReadonlyArray<number> => {
  const values: Array<number> = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 0; offset + recordBytes <= bytes.length; offset += recordBytes) {
    const value = view.getUint32(offset);
    if (view.getUint32(offset + 4) !== (value ^ checkMask) >>> 0) break;
    values.push(value);
  }
  return values;
};

/** Writes every byte, looping over short writes. */
const writeAll = (file: Disk.FileHandle, position: number, bytes: Uint8Array) =>
  Effect.gen(function* () {
    let done = 0;
    while (done < bytes.length) done += yield* file.write(position + done, bytes.subarray(done));
  });

type Protocol = "correct" | "acknowledgeBeforeSync" | "noDirectorySync";

/** Appends `values` to a new log, acknowledging each one as the protocol decides. */
const appendLog =
  (protocol: Protocol, values: ReadonlyArray<number>): Crash.Workload<number> =>
  (disk, acknowledge) =>
    Effect.gen(function* () {
      const file = yield* disk.open(logPath, "createExclusive");
      if (protocol !== "noDirectorySync") yield* disk.syncDirectory(storeDirectory);
      for (const [index, value] of values.entries()) {
        yield* writeAll(file, index * recordBytes, encodeRecord(value));
        if (protocol === "acknowledgeBeforeSync") yield* acknowledge(value);
        yield* file.sync();
        if (protocol !== "acknowledgeBeforeSync") yield* acknowledge(value);
      }
      yield* file.close();
    });

/** Every acknowledged value is in the log, in order, from the start. */
const checkLog: Crash.Check<number> = (disk, acknowledged) =>
  Effect.gen(function* () {
    const exists = yield* Effect.either(disk.stat(logPath));
    if (exists._tag === "Left") {
      if (acknowledged.length === 0) return;
      return yield* Effect.fail(
        `the log is missing but ${acknowledged.length} values were acknowledged`,
      );
    }
    const values = decodeLog(yield* disk.readFile(logPath));
    const kept = values.slice(0, acknowledged.length);
    if (
      kept.length !== acknowledged.length ||
      kept.some((value, index) => value !== acknowledged[index])
    ) {
      return yield* Effect.fail(
        `acknowledged ${acknowledged.join(",")} but the log holds ${values.join(",")}`,
      );
    }
  });

const setup = (disk: FaultDisk.FaultDisk) => Effect.sync(() => disk.seedDirectory(storeDirectory));

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

describe("crashProperty", () => {
  const appended = fc.array(fc.integer({ min: 1, max: 1000 }), { maxLength: 6 });

  it("holds for the correct protocol", async () => {
    await fc.assert(
      Crash.crashProperty(appended, (generated) => ({
        workload: appendLog("correct", generated),
        check: checkLog,
        setup,
      })),
      { numRuns: 25 },
    );
  });

  it("shrinks a buggy protocol to a one-value workload", async () => {
    const result = await fc.check(
      Crash.crashProperty(appended, (generated) => ({
        workload: appendLog("acknowledgeBeforeSync", generated),
        check: checkLog,
        setup,
      })),
      { numRuns: 50, seed: 2026 },
    );
    expect(result.failed).toBe(true);
    expect(result.counterexample?.[0]).toHaveLength(1);
    expect(String(result.errorInstance)).toContain("cut point 3 (before sync /store/log");
  });
});
