/**
 * The engine's schema-3 commands (EVENTS-V3.md) on a real store through the
 * promise face: unique inserts under many concurrent inserts of the same
 * keys (exactly one job per key, every other caller answered with it as a
 * duplicate, and the same after a reopen), redrive, and queue state obeyed
 * by claims and persisted. Each test would fail if a duplicate were
 * appended, a paused or limited queue handed out a job, or the queue state
 * were lost on reopen.
 */
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Event } from "@tay/core";
import { Effect } from "effect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Init from "../../src/store/Init.js";
import { holdingSyncs } from "../support/heldSyncs.js";

let scratch = "";
let dir = "";

beforeEach(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "tay-v3-"));
  dir = path.join(scratch, "data");
});
afterEach(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});

describe("unique inserts", () => {
  it("under concurrent inserts of the same keys: one job per key, the rest duplicates of it", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    const keys = ["a", "b", "c", "d"];
    const producers = 64;
    const answers = await Promise.all(
      Array.from({ length: producers }, (_, index) =>
        engine.insert({
          queue: "mail",
          worker: "Send",
          args: index,
          uniqueKey: keys[index % keys.length] ?? "a",
        }),
      ),
    );
    const jobs = engine.jobs({ queue: "mail" });
    expect(jobs).toHaveLength(keys.length);
    for (const key of keys) {
      const holders = jobs.filter((job) => job.uniqueKey === key);
      expect(holders).toHaveLength(1);
      const holder = holders[0];
      const forKey = answers.filter((answer) => answer.uniqueKey === key);
      expect(forKey).toHaveLength(producers / keys.length);
      // Every answer names the one job; all but one are marked duplicates.
      expect(new Set(forKey.map((answer) => answer.jobId))).toEqual(new Set([holder?.jobId]));
      expect(forKey.filter((answer) => answer.duplicate === true)).toHaveLength(
        producers / keys.length - 1,
      );
    }
    // A key in another queue is another key.
    const other = await engine.insert({ queue: "sms", worker: "Send", args: null, uniqueKey: "a" });
    expect(other.duplicate).toBeUndefined();
    await engine.close();
    const reopened = await EnginePromises.open(dir);
    expect(reopened.jobs({ queue: "mail" })).toHaveLength(keys.length);
    const again = await reopened.insert({
      queue: "mail",
      worker: "Send",
      args: null,
      uniqueKey: "a",
    });
    expect(again.duplicate).toBe(true);
    await reopened.close();
  });

  it("a batch answers each job on its own", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    const first = await engine.insert({ queue: "q", worker: "W", args: null, uniqueKey: "k" });
    const batch = await engine.insertMany([
      { queue: "q", worker: "W", args: 1, uniqueKey: "k" },
      { queue: "q", worker: "W", args: 2, uniqueKey: "new" },
      { queue: "q", worker: "W", args: 3 },
    ]);
    expect(batch.map((job) => [job.jobId, job.duplicate ?? false])).toEqual([
      [first.jobId, true],
      [first.jobId + 1, false],
      [first.jobId + 2, false],
    ]);
    await engine.close();
  });

  it("a plain insert writes no schema-3 record; a keyed one writes (1,3)", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    const plain = await engine.insert({ queue: "q", worker: "W", args: null });
    expect(plain.uniqueKey).toBeNull();
    const keyed = await engine.insert({ queue: "q", worker: "W", args: null, timeoutMs: 500 });
    expect(keyed.timeoutMs).toBe(500);
    expect(Event.schema3Tags).toContain("JobInsertedV3");
    await engine.close();
  });
});

/** Tracks whether `promise` has settled, and how. */
const watched = <A>(promise: Promise<A>) => {
  const seen: { settled: boolean } = { settled: false };
  const settled = promise.then(
    (value) => {
      seen.settled = true;
      return value;
    },
    (error: unknown) => {
      seen.settled = true;
      throw error;
    },
  );
  return { seen, settled };
};

/** A few turns of the event loop: time for anything not held to be answered. */
const turns = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("a duplicate's answer waits for the existing job to be durable", () => {
  const keyed = (args: number) => ({ queue: "q", worker: "W", args, uniqueKey: "k" });

  it("issued while the holder's batch is written but not synced: answered only after its sync", async () => {
    await Effect.runPromise(Effect.provide(Init.init(dir), NodeDisk.layer));
    const disk = holdingSyncs();
    const engine = await EnginePromises.open(dir, { disk: disk.layer });
    disk.hold();
    const first = watched(engine.insert(keyed(1)));
    while (disk.state.waiting === 0) await turns();
    // A later drain: the duplicate appends nothing and must not name job 1 yet.
    const duplicate = watched(engine.insert(keyed(2)));
    await turns();
    expect(duplicate.seen.settled).toBe(false);
    expect(first.seen.settled).toBe(false);
    expect(engine.job(1)).toBeUndefined();
    disk.release();
    expect(await duplicate.settled).toMatchObject({ jobId: 1, duplicate: true });
    expect((await first.settled).duplicate).toBeUndefined();
    expect(engine.job(1)?.uniqueKey).toBe("k");
    await engine.close();
  });

  it("issued in the holder's own drain: answered with that drain's batch", async () => {
    await Effect.runPromise(Effect.provide(Init.init(dir), NodeDisk.layer));
    const disk = holdingSyncs();
    const engine = await EnginePromises.open(dir, { disk: disk.layer });
    disk.hold();
    const first = watched(engine.insert(keyed(1)));
    const duplicate = watched(engine.insert(keyed(2)));
    while (disk.state.waiting === 0) await turns();
    await turns();
    expect(duplicate.seen.settled).toBe(false);
    disk.release();
    expect(await duplicate.settled).toMatchObject({ jobId: 1, duplicate: true });
    expect((await first.settled).jobId).toBe(1);
    await engine.close();
  });

  it("whose holder's batch fails: refused with the failure, never answered with the lost job", async () => {
    const disk = FaultDisk.make();
    disk.seedDirectory("/data");
    const layer = FaultDisk.layer(disk);
    await Effect.runPromise(Effect.provide(Init.init("/data"), layer));
    const engine = await EnginePromises.open("/data", { disk: layer });
    disk.inject(FaultDisk.fail("sync", "EIO", { path: /\.tay$/ }));
    const outcomes = await Promise.allSettled([engine.insert(keyed(1)), engine.insert(keyed(2))]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    for (const outcome of outcomes) {
      if (outcome.status === "rejected")
        expect(outcome.reason).toMatchObject({ _tag: "WriterFailed" });
    }
    await engine.close();
    disk.clearFaults();
    const reopened = await EnginePromises.open("/data", { disk: layer });
    expect(reopened.job(1)).toBeUndefined();
    await reopened.close();
  });
});

describe("redrive", () => {
  it("runs a discarded job again, keeping its history", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    const job = await engine.insert({ queue: "q", worker: "W", args: null, maxAttempts: 1 });
    const [claimed] = await engine.claim("q", 1);
    expect(claimed?.jobId).toBe(job.jobId);
    await engine.fail(job.jobId, "boom");
    expect(engine.job(job.jobId)?.state).toBe("discarded");
    const redriven = await engine.redrive(job.jobId, { maxAttempts: 3, reason: "fixed" });
    expect(redriven).toMatchObject({ state: "available", attempt: 1, maxAttempts: 3 });
    expect(redriven.errors).toHaveLength(1);
    const [again] = await engine.claim("q", 1);
    expect(again).toMatchObject({ jobId: job.jobId, attempt: 2 });
    await engine.close();
  });
});

describe("queue state", () => {
  it("a paused queue hands out nothing, a resumed one does, and the state survives a reopen", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    await engine.insertMany([
      { queue: "q", worker: "W", args: 1 },
      { queue: "q", worker: "W", args: 2 },
      { queue: "q", worker: "W", args: 3 },
    ]);
    const paused = await engine.pauseQueue("q");
    expect(paused?.paused).toBe(true);
    expect(await engine.claim("q", 3)).toEqual([]);
    await engine.close();
    const reopened = await EnginePromises.open(dir);
    expect(reopened.queue("q")?.paused).toBe(true);
    expect(await reopened.claim("q", 3)).toEqual([]);
    const limited = await reopened.setQueueLimits("q", { concurrency: 2 });
    expect(limited).toMatchObject({ paused: true, concurrency: 2 });
    await reopened.resumeQueue("q");
    // Concurrency 2: two of the three start.
    expect(await reopened.claim("q", 3)).toHaveLength(2);
    expect(await reopened.claim("q", 3)).toEqual([]);
    expect(reopened.queues().map((queue) => queue.queue)).toEqual(["q"]);
    // Compaction carries the queue state and the unique keys of retained jobs.
    await reopened.insert({ queue: "q", worker: "W", args: null, uniqueKey: "kept" });
    await reopened.compact(0);
    await reopened.close();
    const compacted = await EnginePromises.open(dir);
    expect(compacted.queue("q")).toMatchObject({ paused: false, concurrency: 2 });
    const again = await compacted.insert({
      queue: "q",
      worker: "W",
      args: null,
      uniqueKey: "kept",
    });
    expect(again.duplicate).toBe(true);
    // The open rescued the two executing jobs (orphans): concurrency 2 lets two others start.
    expect(await compacted.claim("q", 3)).toHaveLength(2);
    expect(await compacted.claim("q", 3)).toEqual([]);
    await compacted.close();
  });

  it("a rate limit bounds the starts in its window", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    await engine.insertMany(
      Array.from({ length: 5 }, (_, index) => ({ queue: "q", worker: "W", args: index })),
    );
    // A window of a day: the test's clock cannot leave it.
    await engine.setQueueLimits("q", { rateLimit: { count: 3, perMs: 86_400_000 } });
    expect(await engine.claim("q", 2)).toHaveLength(2);
    expect(await engine.claim("q", 5)).toHaveLength(1);
    expect(await engine.claim("q", 5)).toEqual([]);
    await engine.close();
  });
});
