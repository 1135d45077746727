// A worker paused on its own (BullMQ's `worker.pause()`): its waiting claim is given up and no job
// starts until `resume`, while handlers already running finish and are recorded; `pause` resolves
// once no claim is in flight; a paused worker closes as any other; the store's queues are
// untouched (another worker of the same queue goes on).
import { describe, expect, it } from "vitest";
import { tempStores, until } from "../support/tempStores.js";
import * as Worker from "../../src/worker/Worker.js";

const stores = tempStores("worker-pause");
const open = () => stores.open();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("worker pause and resume", () => {
  it("gives up the waiting claim: nothing starts until resume, then everything runs", async () => {
    const engine = await open();
    const started: Array<number> = [];
    const worker = await Worker.start(engine, {
      queues: { q: 2 },
      handlers: { W: (job) => started.push(job.jobId) },
    });
    try {
      // The worker waits on an empty queue: its claim is parked in the engine.
      await sleep(20);
      await worker.pause();
      expect(worker.isPaused()).toBe(true);
      const jobs = await engine.insertMany(
        [1, 2, 3].map(() => ({ queue: "q", worker: "W", args: null })),
      );
      await sleep(200);
      expect(started).toEqual([]);
      for (const { jobId } of jobs) expect(engine.job(jobId)?.state).toBe("available");
      worker.resume();
      expect(worker.isPaused()).toBe(false);
      await until(() => jobs.every(({ jobId }) => engine.job(jobId)?.state === "completed"));
      expect(started.sort()).toEqual(jobs.map(({ jobId }) => jobId));
    } finally {
      await worker.close();
      await engine.close();
    }
  });

  it("lets running handlers finish and be recorded while it starts no other", async () => {
    const engine = await open();
    const releases: Array<() => void> = [];
    const worker = await Worker.start(engine, {
      queues: { q: 2 },
      handlers: {
        Held: () =>
          new Promise<string>((resolve) => {
            releases.push(() => resolve("done"));
          }),
      },
    });
    try {
      const jobs = await engine.insertMany(
        [1, 2, 3].map(() => ({ queue: "q", worker: "Held", args: null })),
      );
      await until(() => releases.length === 2);
      await worker.pause();
      for (const release of releases.splice(0)) release();
      const [first, second, third] = jobs.map(({ jobId }) => jobId);
      await until(
        () =>
          engine.job(first ?? 0)?.state === "completed" &&
          engine.job(second ?? 0)?.state === "completed",
      );
      // Room freed by the two ends is not claimed while paused.
      await sleep(200);
      expect(engine.job(third ?? 0)?.state).toBe("available");
      expect(worker.running()).toBe(0);
      worker.resume();
      await until(() => releases.length === 1);
      releases[0]?.();
      await until(() => engine.job(third ?? 0)?.state === "completed");
    } finally {
      await worker.close();
      await engine.close();
    }
  });

  it("pauses only itself: another worker of the queue goes on, and a paused worker closes", async () => {
    const engine = await open();
    const ran: Array<string> = [];
    const paused = await Worker.start(engine, {
      queues: { q: 1 },
      handlers: { W: () => ran.push("paused one") },
    });
    await paused.pause();
    const other = await Worker.start(engine, {
      queues: { q: 1 },
      handlers: { W: () => ran.push("other") },
    });
    try {
      const { jobId } = await engine.insert({ queue: "q", worker: "W", args: null });
      await until(() => engine.job(jobId)?.state === "completed");
      expect(ran).toEqual(["other"]);
      expect(engine.queue("q")).toBeUndefined();
      const report = await paused.close();
      expect(report.interrupted).toBe(0);
      // Pausing or resuming a closed worker starts nothing.
      await paused.pause();
      paused.resume();
    } finally {
      await other.close();
      await engine.close();
    }
  });
});
