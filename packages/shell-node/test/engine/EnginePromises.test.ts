/**
 * The engine's promise face, driven the way a program not written with
 * Effect drives it: `EnginePromises.open`, awaited commands, synchronous
 * reads, `close`. Each test would fail if the face answered before
 * durability, let a failure escape as anything but the typed error, read
 * uncommitted state, or leaked the lock.
 */
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Effect, FiberId } from "effect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Init from "../../src/store/Init.js";
import * as StoreOptions from "../../src/store/StoreOptions.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import { holdingSyncs } from "../support/heldSyncs.js";
import { scheduleDefinition as definition } from "../support/store.js";

let scratch = "";
let dir = "";

beforeEach(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "tay-promises-"));
  dir = path.join(scratch, "data");
});
afterEach(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});

/** The rejection of `promise`, which must reject. */
const rejection = async (promise: Promise<unknown>): Promise<{ readonly _tag?: unknown }> => {
  try {
    await promise;
  } catch (error) {
    if (typeof error === "object" && error !== null) return error;
    throw new Error(`rejected with a non-object: ${String(error)}`);
  }
  throw new Error("resolved; a rejection was expected");
};

/** Effect fibers made so far: fiber ids come from one counter, which this advances by one. */
const fibersMade = (): number => FiberId.unsafeMake().id;

describe("EnginePromises", () => {
  it("makes no fiber per command, the terminal index and its checkpoints on", async () => {
    const engine = await EnginePromises.open(dir, {
      createIfMissing: true,
      durability: "Throughput",
    });
    const cycle = async (index: number) => {
      await engine.insert({ queue: "q", worker: "W", args: index });
      const [job] = await engine.claim("q", 1);
      if (job === undefined) throw new Error("nothing to claim");
      await engine.complete(job.jobId);
    };
    // Warm: the first commits open what stays open.
    for (let index = 0; index < 50; index++) await cycle(index);
    const before = fibersMade();
    for (let index = 0; index < 600; index++) await cycle(index);
    // The index's writes are a fiber per drain of hundreds of jobs; a
    // commit's checkpoint check once ran an Effect (3 fibers a job).
    expect((fibersMade() - before - 1) / 600).toBeLessThan(0.05);
    await engine.close();
  });

  it("runs every command as a promise, and a reopen folds what the promises answered", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    const low = await engine.insert({ queue: "q", worker: "W", args: "low", priority: 5 });
    const high = await engine.insert({ queue: "q", worker: "W", args: "high", priority: 1 });
    const many = await engine.insertMany([
      { queue: "other", worker: "W", args: 1 },
      { queue: "other", worker: "W", args: 2 },
    ]);
    expect([low.jobId, high.jobId, ...many.map((job) => job.jobId)]).toEqual([1, 2, 3, 4]);
    const [claimed] = await engine.claim("q");
    expect(claimed?.jobId).toBe(2);
    expect((await engine.complete(2, "done")).state).toBe("completed");
    await engine.claim("q");
    const failed = await engine.fail(1, "boom", { discard: true });
    expect(failed.state).toBe("discarded");
    expect((await engine.cancel(3, "not needed")).state).toBe("cancelled");
    const schedule = await engine.registerSchedule("hourly", definition, 0);
    expect(schedule.revision).toBe(1);
    // The first occurrence is a minute away: nothing is due yet.
    expect(await engine.tick()).toEqual({
      madeAvailable: 0,
      delivered: 0,
      skipped: 0,
      timedOut: 0,
    });
    expect(engine.nextWakeAt()).toBe(schedule.nextDueAt);
    expect((await engine.cancelSchedule("hourly")).cancelledAt).not.toBeNull();
    expect(await engine.rescue(Number.MAX_SAFE_INTEGER, "stuck")).toBe(0);
    // Reads are synchronous and see every answered command.
    expect(engine.job(2)?.result?.value).toBe("done");
    expect(engine.jobs({ queue: "other" }).map((job) => job.state)).toEqual([
      "cancelled",
      "available",
    ]);
    expect(engine.counts().get("q")?.completed).toBe(1);
    expect(engine.schedule("hourly")?.cancelledAt).not.toBeNull();
    expect(engine.schedules()).toHaveLength(1);
    const held = engine.job(2);
    await engine.close();

    const reopened = await EnginePromises.open(dir);
    expect(reopened.report.lastJobId).toBe(4);
    expect(reopened.job(2)).toEqual(held);
    expect(reopened.job(1)?.state).toBe("discarded");
    await reopened.close();
  });

  it("rejects a refused command with the typed error, and appends nothing for it", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    const before = (await Effect.runPromise(engine.engine.log.stats())).lastSequence;
    const refused = await rejection(engine.complete(42));
    expect(refused._tag).toBe("Rejected");
    expect(refused).toBeInstanceOf(Error);
    const badName = await rejection(engine.insert({ queue: "", worker: "W", args: null }));
    expect(badName._tag).toBe("Rejected");
    expect((await Effect.runPromise(engine.engine.log.stats())).lastSequence).toBe(before);
    await engine.close();
  });

  it("answers only once the batch is durable, and reads show only durable state", async () => {
    await Effect.runPromise(Effect.provide(Init.init(dir), NodeDisk.layer));
    const disk = holdingSyncs();
    const engine = await EnginePromises.open(dir, { disk: disk.layer });
    disk.hold();
    let answered = false;
    const insert = engine.insert({ queue: "q", worker: "W", args: null }).then((job) => {
      answered = true;
      return job;
    });
    while (disk.state.waiting === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    // Written, not synced: no answer, nothing visible, yet the next
    // command decides against it (the claim takes the job).
    expect(answered).toBe(false);
    expect(engine.job(1)).toBeUndefined();
    expect(engine.counts().size).toBe(0);
    const claim = engine.claim("q");
    disk.release();
    expect((await insert).jobId).toBe(1);
    expect((await claim).map((job) => job.jobId)).toEqual([1]);
    expect(engine.job(1)?.state).toBe("executing");
    await engine.close();
  });

  it("rejects every command of a batch whose sync fails with WriterFailed, and every later one", async () => {
    const disk = FaultDisk.make();
    disk.seedDirectory("/data");
    const layer = FaultDisk.layer(disk);
    await Effect.runPromise(Effect.provide(Init.init("/data"), layer));
    const engine = await EnginePromises.open("/data", { disk: layer });
    await engine.insert({ queue: "q", worker: "W", args: 0 });
    // Told only of committed batches: never of the failed one's records.
    const told: Array<number> = [];
    engine.watch((records) => told.push(records.length));
    // Parked in the failing batch's drain: the log takes no more appends, so it is refused then.
    let parked: unknown;
    void engine.nextJobs([{ queue: "other", limit: 1 }]).then(
      () => {
        parked = "answered";
      },
      (error: unknown) => {
        parked = error;
      },
    );
    disk.inject(FaultDisk.fail("sync", "EIO", { path: /\.tay$/ }));
    const failures = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        rejection(engine.insert({ queue: "q", worker: "W", args: index + 1 })),
      ),
    );
    for (const failure of failures) expect(failure._tag).toBe("WriterFailed");
    await new Promise((resolve) => setImmediate(resolve));
    expect(parked).toMatchObject({ _tag: "WriterFailed" });
    disk.clearFaults();
    expect((await rejection(engine.claim("q")))._tag).toBe("WriterFailed");
    expect(engine.jobs().map((job) => job.jobId)).toEqual([1]);
    expect(told).toEqual([]);
    await engine.close();
  });

  it("refuses a command with PendingFull once the unflushed records would pass pendingBytesMax", async () => {
    const engine = await EnginePromises.open(dir, {
      createIfMissing: true,
      flush: StoreOptions.Manual,
      pendingBytesMax: 200,
    });
    const first = engine.insert({ queue: "q", worker: "W", args: null });
    // Its drain ran: its record waits for a flush, pending.
    await new Promise((resolve) => setImmediate(resolve));
    const refused = rejection(engine.insert({ queue: "q", worker: "W", args: "x".repeat(300) }));
    await engine.flush();
    expect((await refused)._tag).toBe("PendingFull");
    expect((await first).jobId).toBe(1);
    expect(engine.jobs().map((job) => job.jobId)).toEqual([1]);
    await engine.close();
  });

  it("compacts through a promise, and refuses commands after close with StoreClosed", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    for (let index = 0; index < 20; index++) {
      const [job] = await Promise.all([
        engine.insert({ queue: "q", worker: "W", args: index }),
        engine.claim("q"),
      ]);
      await engine.complete(job.jobId);
    }
    // Retention 0 drops jobs finished strictly before now: let the clock move.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const report = await engine.compact(0);
    expect(report.epoch).toBe(2);
    expect(engine.counts().get("q")?.completed ?? 0).toBe(0);
    await engine.close();
    await engine.close();
    expect((await rejection(engine.insert({ queue: "q", worker: "W", args: null })))._tag).toBe(
      "StoreClosed",
    );
  });

  it("rejects an open it cannot do with the typed error and holds no lock after it", async () => {
    const missing = await rejection(EnginePromises.open(dir));
    expect(missing._tag).toBe("StoreNotFound");
    const first = await EnginePromises.open(dir, { createIfMissing: true });
    const second = await rejection(EnginePromises.open(dir));
    expect(second._tag).toBe("Locked");
    await first.close();
    // The refused open released what it took: a third open gets the lock.
    const third = await EnginePromises.open(dir);
    await third.close();
  });
});
