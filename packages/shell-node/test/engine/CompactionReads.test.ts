/**
 * A compaction reads from the terminal index only the completed jobs its
 * base keeps: those its retention drops are known by the finish time the
 * offset table keeps beside their entries (2026-12-06), so their entries
 * are not read (a compaction that dropped 33,000 jobs read and decoded them
 * all, 0.8 s of a held queue). A job whose time the table does not know
 * (an index an open walked) is read, as before. Counted on the fault disk's
 * operation log: the reads of the index's entries file during `compact`.
 */
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Init from "../../src/store/Init.js";
import * as TerminalIndex from "../../src/store/TerminalIndex.js";

const entriesPath = `/data/${TerminalIndex.directoryName}/${TerminalIndex.entriesName}`;

/** A store on a fault disk with `count` completed jobs whose entries are written, and one waiting. */
const completedStore = async (count: number) => {
  const disk = FaultDisk.make();
  disk.seedDirectory("/data");
  const layer = FaultDisk.layer(disk);
  await Effect.runPromise(Effect.provide(Init.init("/data"), layer));
  const engine = await EnginePromises.open("/data", { disk: layer, timers: false });
  await engine.insertMany(
    Array.from({ length: count }, (_, args) => ({ queue: "q", worker: "W", args: { args } })),
  );
  for (const job of await engine.claim("q", count)) await engine.complete(job.jobId, null);
  await engine.insert({ queue: "wait", worker: "W", args: null });
  return { disk, layer, engine };
};

/** Reads of the index's entries file while `run` runs. */
const entryReads = async (disk: FaultDisk.FaultDisk, run: () => Promise<unknown>) => {
  const from = disk.operations().length;
  await run();
  return disk
    .operations()
    .slice(from)
    .filter((operation) => operation.kind === "read" && operation.path === entriesPath).length;
};

/** Until every completed job's entry is written (their lookups read the file). */
const written = async (disk: FaultDisk.FaultDisk, engine: EnginePromises.OpenedEngine) => {
  for (let round = 0; round < 200; round++) {
    const reads = await entryReads(disk, () => engine.inspectJob(1));
    if (reads > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the entries were never written");
};

describe("a compaction's reads of the terminal index", () => {
  it("reads none of the jobs its retention drops, and every one it keeps", async () => {
    const { disk, engine } = await completedStore(600);
    try {
      await written(disk, engine);
      // An hour's retention keeps all 600: their entries are read (a page of ids at a time).
      expect(await entryReads(disk, () => engine.compact(3_600_000))).toBeGreaterThan(0);
      expect(engine.counts().get("q")?.completed).toBe(600);
      // The compaction's copy noted their finish times: dropping them all reads nothing.
      expect(await entryReads(disk, () => engine.compact(0))).toBe(0);
      expect(engine.counts().get("q")?.completed ?? 0).toBe(0);
      expect(engine.jobs({ queue: "wait" })).toHaveLength(1);
    } finally {
      await engine.close();
    }
  });

  it("reads a job whose finish time an open's walk did not learn, and keeps it whole", async () => {
    const { disk, layer, engine } = await completedStore(300);
    await written(disk, engine);
    await engine.close();
    // Without the offsets file the open walks the entries: the table knows no finish times.
    const index = `/data/${TerminalIndex.directoryName}`;
    const names = await Effect.runPromise(disk.readDirectory(index));
    const offsets = names.filter(TerminalIndex.isOffsetsFile);
    expect(offsets).toHaveLength(1);
    for (const name of offsets) await Effect.runPromise(disk.remove(`${index}/${name}`));
    const reopened = await EnginePromises.open("/data", { disk: layer, timers: false });
    try {
      expect(reopened.counts().get("q")?.completed).toBe(300);
      // Kept: read whole into the base, though the table does not know when they finished.
      expect(await entryReads(disk, () => reopened.compact(3_600_000))).toBeGreaterThan(0);
      expect(reopened.counts().get("q")?.completed).toBe(300);
      expect((await reopened.inspectJob(1))?.state).toBe("completed");
      // The compaction's copy learned their times: dropped now without a read.
      expect(await entryReads(disk, () => reopened.compact(0))).toBe(0);
      expect(reopened.counts().get("q")?.completed ?? 0).toBe(0);
    } finally {
      await reopened.close();
    }
  });
});
