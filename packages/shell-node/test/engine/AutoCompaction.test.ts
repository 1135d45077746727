/**
 * Compaction on its own (`autoCompact`, internal/autoCompaction.ts): an
 * engine compacts with its owner's retention once the records appended
 * since its base reach `max(minRecords, growth × base records)`, never
 * when not asked to, keeps serving when a compaction fails (and tries again
 * only after another `minRecords` records), and its close waits for a
 * compaction under way. On the fault disk (a whole store in memory) and on
 * a real directory.
 */
import { Effect, Exit, Scope } from "effect";
import { describe, expect, it } from "vitest";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import { dueAt, startAutoCompaction } from "../../src/engine/internal/autoCompaction.js";
import * as Init from "../../src/store/Init.js";

/** A fresh store at /data on a fault disk, and the disk. */
const faultStore = async () => {
  const disk = FaultDisk.make();
  disk.seedDirectory("/data");
  const layer = FaultDisk.layer(disk);
  await Effect.runPromise(Effect.provide(Init.init("/data"), layer));
  return { disk, layer };
};

/** `count` jobs inserted, claimed and completed: three records each. */
const completeJobs = async (engine: EnginePromises.OpenedEngine, count: number) => {
  for (let index = 0; index < count; index++) {
    const { jobId } = await engine.insert({ queue: "q", worker: "W", args: index });
    const [claimed] = await engine.claim("q");
    if (claimed === undefined || claimed.jobId !== jobId) throw new Error("claimed another job");
    await engine.complete(jobId, null);
  }
};

const until = async (done: () => boolean, what: string): Promise<void> => {
  for (let round = 0; round < 400; round++) {
    if (done()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never: ${what}`);
};

const epochOf = (engine: EnginePromises.OpenedEngine) =>
  Effect.runPromise(engine.log.generation()).then((generation) => generation.epoch);

describe("dueAt", () => {
  it.each([
    // first sequence, base records, jobs held, minRecords, growth: due at
    [1, 0, 0, 100, 1, 100],
    [1, 10, 50, 100, 1, 110],
    [1, 3, 500, 100, 1, 503],
    [1_001, 2, 500, 100, 2, 2_002],
    [1_001, 500, 500, 100, 0, 1_600],
    [7, 3, 9, 1, 0.5, 14],
  ])(
    "first %d, base %d, jobs %d, min %d, growth %d: due at %d",
    (first, base, jobs, minRecords, growth, due) => {
      expect(
        dueAt({ firstSequence: first, baseRecordCount: base }, jobs, { minRecords, growth }),
      ).toBe(due);
    },
  );
});

describe("an engine with autoCompact", () => {
  it("compacts once its log has grown by the rule, dropping what the retention lets go", async () => {
    const { layer } = await faultStore();
    const autoCompact = { retentionMs: 0, minRecords: 30, growth: 1 };
    const engine = await EnginePromises.open("/data", { disk: layer, timers: false, autoCompact });
    try {
      expect(engine.autoCompaction()).toMatchObject({
        runs: 0,
        checkAt: 30,
        running: false,
        lastDurationMs: null,
        jobsDropped: 0,
      });
      // Three jobs left waiting: the new base keeps them (and the rule counts their records).
      for (const args of [0, 1, 2]) await engine.insert({ queue: "wait", worker: "W", args });
      await completeJobs(engine, 8);
      // 3 + 24 records: short of the rule.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await epochOf(engine)).toBe(1);
      // Its insert and claim bring 29; its completion the 30th, which crosses the rule.
      await completeJobs(engine, 1);
      await until(() => (engine.autoCompaction()?.runs ?? 0) >= 1, "a compaction");
      expect(await epochOf(engine)).toBe(2);
      for (let jobId = 4; jobId <= 12; jobId++) expect(engine.job(jobId)).toBeUndefined();
      expect(engine.jobs({ queue: "wait" }).map((job) => job.state)).toEqual([
        "available",
        "available",
        "available",
      ]);
      const generation = await Effect.runPromise(engine.log.generation());
      const stats = engine.autoCompaction();
      // Jobs 4 to 12, completed: the nine the retention let go.
      expect(stats).toMatchObject({ failures: 0, lastError: null, running: false, jobsDropped: 9 });
      expect(stats?.lastDurationMs).toBeGreaterThanOrEqual(0);
      // Three jobs held, fewer than minRecords: due 30 records past the new base.
      const baseEnd = generation.firstSequence + (generation.baseRecordCount ?? -1) - 1;
      expect(stats?.checkAt).toBe(baseEnd + 30);
    } finally {
      await engine.close();
    }
    const reopened = await EnginePromises.open("/data", { disk: layer, timers: false });
    expect(reopened.report.jobs.available).toBe(3);
    expect(reopened.report.jobs.completed).toBe(0);
    await reopened.close();
  });

  it("after a base of many jobs in few records, waits for records as many as its jobs", async () => {
    const { layer } = await faultStore();
    const autoCompact = { retentionMs: 3_600_000, minRecords: 10, growth: 1 };
    const engine = await EnginePromises.open("/data", { disk: layer, timers: false, autoCompact });
    try {
      // One record, a hundred jobs, then nine cancels: minRecords, so a first compaction,
      // which keeps all hundred (an hour's retention) in a base of a few records.
      await engine.insertMany(
        Array.from({ length: 100 }, (_, args) => ({ queue: "q", worker: "W", args })),
      );
      for (let jobId = 1; jobId <= 9; jobId++) await engine.cancel(jobId);
      await until(() => (engine.autoCompaction()?.runs ?? 0) >= 1, "a first compaction");
      const generation = await Effect.runPromise(engine.log.generation());
      const baseRecords = generation.baseRecordCount ?? -1;
      expect(baseRecords).toBeLessThan(10);
      const baseEnd = generation.firstSequence + baseRecords - 1;
      // The next waits for a hundred records (the base's jobs), not ten (its records).
      expect(engine.autoCompaction()?.checkAt).toBe(baseEnd + 100);
      for (let index = 0; index < 99; index++) {
        await engine.insert({ queue: "q", worker: "W", args: index });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await epochOf(engine)).toBe(2);
      await engine.insert({ queue: "q", worker: "W", args: "last" });
      await until(() => (engine.autoCompaction()?.runs ?? 0) >= 2, "a second compaction");
      expect(await epochOf(engine)).toBe(3);
    } finally {
      await engine.close();
    }
  });

  it("never compacts when not asked to", async () => {
    const { layer } = await faultStore();
    const engine = await EnginePromises.open("/data", { disk: layer, timers: false });
    try {
      await completeJobs(engine, 40);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(engine.autoCompaction()).toBeNull();
      expect(await epochOf(engine)).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it("keeps serving when a compaction fails, and tries again only minRecords later", async () => {
    const { disk, layer } = await faultStore();
    const autoCompact = { retentionMs: 0, minRecords: 30 };
    const engine = await EnginePromises.open("/data", { disk: layer, timers: false, autoCompact });
    try {
      // The new generation's active segment cannot be linked into place: the compaction
      // fails, and only it (a disk error would stop the writer, docs/store.md).
      disk.inject(FaultDisk.fail("link", "EPERM", { path: /epochs\/0*2\//, nth: 1 }));
      await completeJobs(engine, 10);
      await until(() => (engine.autoCompaction()?.failures ?? 0) >= 1, "a failed compaction");
      const failed = engine.autoCompaction();
      expect(failed).toMatchObject({ runs: 0, failures: 1, running: false });
      expect(failed?.lastError).toMatch(/HardLinksUnsupported/);
      expect(failed?.checkAt).toBe(30 + 30);
      expect(await epochOf(engine)).toBe(1);
      // Still serving: the next 30 records bring the next try, which succeeds.
      await completeJobs(engine, 9);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(engine.autoCompaction()).toMatchObject({ runs: 0, failures: 1 });
      await completeJobs(engine, 1);
      await until(() => (engine.autoCompaction()?.runs ?? 0) >= 1, "a compaction");
      expect(engine.autoCompaction()).toMatchObject({ runs: 1, failures: 1, lastError: null });
      expect(await epochOf(engine)).toBeGreaterThan(1);
    } finally {
      await engine.close();
    }
  });

  it("refuses options out of range at open, naming the option", async () => {
    const { layer } = await faultStore();
    for (const [autoCompact, argument] of [
      [{ retentionMs: -1 }, "autoCompact.retentionMs"],
      [{ retentionMs: 0, minRecords: 0 }, "autoCompact.minRecords"],
      [{ retentionMs: 0, growth: Number.NaN }, "autoCompact.growth"],
    ] as const) {
      await expect(
        EnginePromises.open("/data", { disk: layer, timers: false, autoCompact }),
      ).rejects.toMatchObject({ _tag: "InvalidArgument", argument });
    }
  });
});

describe("startAutoCompaction", () => {
  it("lets a scope's close wait for a compaction under way", async () => {
    const scope = Effect.runSync(Scope.make());
    let last = 0;
    let compacted = false;
    let started = false;
    const engine = {
      lastSequence: () => last,
      jobs: () => 0,
      generation: () => Effect.succeed({ firstSequence: 1, baseRecordCount: 0 }),
      compact: () =>
        Effect.gen(function* () {
          started = true;
          yield* Effect.sleep("200 millis");
          compacted = true;
          return { jobsKept: 0, jobsDropped: 0 };
        }),
      now: () => 0,
    };
    const auto = await Effect.runPromise(
      Scope.extend(
        startAutoCompaction({ retentionMs: 0, minRecords: 5, growth: 1 }, engine, {
          firstSequence: 1,
          baseRecordCount: 0,
        }),
        scope,
      ),
    );
    last = 5;
    auto.committed();
    await until(() => started, "the compaction's start");
    await Effect.runPromise(Scope.close(scope, Exit.void));
    expect(compacted).toBe(true);
  });

  it("weighs the new base by the jobs the compaction kept, not the state's count after it", async () => {
    const scope = Effect.runSync(Scope.make());
    let last = 5;
    let generation = { firstSequence: 1, baseRecordCount: 0 };
    const engine = {
      lastSequence: () => last,
      // The state once the compaction returned: the commands decided meanwhile count too.
      jobs: () => 500,
      generation: () => Effect.succeed(generation),
      compact: () =>
        Effect.sync(() => {
          generation = { firstSequence: last + 1, baseRecordCount: 2 };
          return { jobsKept: 10, jobsDropped: 3 };
        }),
      now: () => 0,
    };
    const options = { retentionMs: 0, minRecords: 5, growth: 2 };
    const auto = await Effect.runPromise(
      Scope.extend(startAutoCompaction(options, engine, generation), scope),
    );
    try {
      auto.committed();
      await until(() => auto.stats().runs === 1, "a first compaction");
      // Its base ends at 7; then 2 x 10 kept jobs (not 2 x 500) records.
      expect(auto.stats()).toMatchObject({ jobsDropped: 3, checkAt: 7 + 20 });
      last = 27;
      auto.committed();
      await until(() => auto.stats().runs === 2, "a second compaction");
      expect(auto.stats()).toMatchObject({ jobsDropped: 6, checkAt: 29 + 20 });
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void));
    }
  });
});
