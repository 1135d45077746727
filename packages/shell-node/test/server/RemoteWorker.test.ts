// The worker runtime over a client: `tay serve` runs in a child process, the worker here runs
// handlers on jobs it claims through the socket (completions, a throw retried by the usual rules,
// a Worker.Discard discarding its job at once, a pause that gives up the claim waiting in the server,
// a cancel that aborts a running handler, a rate-limited queue's jobs as its windows pass), and
// the CLI's `tay insert` goes through the same server.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Client } from "@tay/client";
import { describe, expect, it } from "vitest";
import * as RemoteWorker from "../../src/server/RemoteWorker.js";
import * as Worker from "../../src/worker/Worker.js";
import { servedChildForFile, tayBin, untilReady } from "../support/servedChild.js";

const served = servedChildForFile("remote");

const until = untilReady;

describe("RemoteWorker", () => {
  it("runs jobs claimed through the server, retries a throw, aborts a cancelled handler", async () => {
    const client = await Client.connect(served.directory);
    const producer = await Client.connect(served.directory);
    let thrown = false;
    let aborted = false;
    const worker = await RemoteWorker.start<{
      Add: { readonly a: number; readonly b: number };
      Flaky: null;
      Slow: null;
    }>(client, {
      queues: { math: 2 },
      backoff: { baseMs: 0, factor: 1, capMs: 0 },
      handlers: {
        Add: async (job) => job.args.a + job.args.b,
        Flaky: async () => {
          if (!thrown) {
            thrown = true;
            throw new Error("once");
          }
          return "second time";
        },
        Slow: (_job, context) =>
          new Promise((_resolve, reject) =>
            context.signal.addEventListener("abort", () => {
              aborted = true;
              reject(new Error("aborted"));
            }),
          ),
      },
    });
    const add = await producer.insert({ queue: "math", worker: "Add", args: { a: 2, b: 3 } });
    const flaky = await producer.insert({ queue: "math", worker: "Flaky", args: null });
    const slow = await producer.insert({ queue: "math", worker: "Slow", args: null });
    await until(async () => (await producer.job(add.jobId))?.state === "completed");
    expect((await producer.job(add.jobId))?.result?.value).toBe(5);
    await until(async () => (await producer.job(flaky.jobId))?.state === "completed");
    expect((await producer.job(flaky.jobId))?.errors.map((error) => error.error)).toEqual(["once"]);
    await until(async () => (await producer.job(slow.jobId))?.state === "executing");
    await producer.cancel(slow.jobId);
    await until(() => aborted);
    const report = await worker.close();
    expect(report.interrupted).toBe(0);
    expect((await producer.jobs({ state: "executing" })).length).toBe(0);
    await client.close();
    await producer.close();
  }, 60_000);

  it("discards a job at once when its handler throws Worker.Discard", async () => {
    const client = await Client.connect(served.directory);
    const worker = await RemoteWorker.start<{ Hopeless: null }>(client, {
      queues: { hopeless: 1 },
      backoff: { baseMs: 0, factor: 1, capMs: 0 },
      handlers: {
        Hopeless: async () => {
          throw new Worker.Discard("no such address");
        },
      },
    });
    const job = await client.insert({ queue: "hopeless", worker: "Hopeless", args: null });
    await until(async () => (await client.job(job.jobId))?.state === "discarded");
    expect(await client.job(job.jobId)).toMatchObject({
      attempt: 1,
      maxAttempts: 20,
      errors: [expect.objectContaining({ error: "no such address" })],
    });
    await worker.close();
    await client.close();
  }, 60_000);

  it("retries a job when its handler asks, with Worker.RetryAfter", async () => {
    const client = await Client.connect(served.directory);
    const worker = await RemoteWorker.start<{ Limited: null }>(client, {
      queues: { limited: 1 },
      backoff: { baseMs: 0, factor: 1, capMs: 0 },
      handlers: {
        Limited: async () => {
          throw new Worker.RetryAfter(30_000, "429, retry after 30 s");
        },
      },
    });
    const job = await client.insert({ queue: "limited", worker: "Limited", args: null });
    await until(async () => (await client.job(job.jobId))?.state === "retryable");
    const retried = await client.job(job.jobId);
    expect(retried?.errors.map((error) => error.error)).toEqual(["429, retry after 30 s"]);
    expect(retried?.scheduledAt).toBe((retried?.errors[0]?.at ?? 0) + 30_000);
    await client.cancel(job.jobId);
    await worker.close();
    await client.close();
  }, 60_000);

  it("runs every job of a rate-limited queue, its claim waiting in the server for each window", async () => {
    const client = await Client.connect(served.directory);
    await client.setQueueLimits("paced", { rateLimit: { count: 2, perMs: 100 } });
    const worker = await RemoteWorker.start<{ Paced: null }>(client, {
      queues: { paced: 4 },
      handlers: { Paced: async () => "done" },
    });
    const jobs = [];
    for (let index = 0; index < 6; index++) {
      jobs.push(await client.insert({ queue: "paced", worker: "Paced", args: null }));
    }
    // Only a window passing lets the last four start: nothing else comes to wake the claim. A
    // claim that waited for its long poll's end instead (25 s) would take 50 s: give it 15.
    const deadline = Date.now() + 15_000;
    await until(async () => {
      if (Date.now() > deadline) throw new Error("the paced jobs were not all done in 15 s");
      return (await client.jobs({ queue: "paced", state: "completed" })).length === 6;
    });
    const starts = (await client.jobs({ queue: "paced" }))
      .map((job) => job.attemptedAt ?? 0)
      .sort((left, right) => left - right);
    for (let index = 2; index < starts.length; index++) {
      expect((starts[index] ?? 0) - (starts[index - 2] ?? 0)).toBeGreaterThanOrEqual(100);
    }
    await worker.close();
    await client.close();
  }, 60_000);

  // The worker gives up its parked claim (which asks for `wide` only) when `narrow` has room
  // again, and claims anew with both. The server answered the given-up claim by dropping the
  // worker's whole session until 2026-12-06: `Slow`'s attempt failed ("lease expired") while
  // its handler ran on, and its retry ran beside it in the same worker.
  it("gives up a parked claim without failing the jobs the worker runs", async () => {
    const client = await Client.connect(served.directory);
    let aborts = 0;
    const worker = await RemoteWorker.start<{ Slow: null; Brief: null }>(client, {
      queues: { narrow: 1, wide: 2 },
      handlers: {
        Slow: (_job, context) =>
          new Promise((_resolve, reject) =>
            context.signal.addEventListener("abort", () => {
              aborts += 1;
              reject(new Error("aborted"));
            }),
          ),
        Brief: () => new Promise((resolve) => setTimeout(() => resolve("done"), 200)),
      },
    });
    const slow = await client.insert({ queue: "wide", worker: "Slow", args: null });
    await until(async () => (await client.job(slow.jobId))?.state === "executing");
    // Runs in `narrow` while a claim for `wide`'s other slot waits; its end gives that claim up.
    const brief = await client.insert({ queue: "narrow", worker: "Brief", args: null });
    await until(async () => (await client.job(brief.jobId))?.state === "completed");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const running = await client.job(slow.jobId);
    expect(running?.state).toBe("executing");
    expect(running?.attempt).toBe(1);
    expect(running?.errors).toEqual([]);
    // The session still hears of its attempts' ends: a cancel aborts the handler.
    await client.cancel(slow.jobId);
    await until(() => aborts === 1);
    await worker.close();
    await client.close();
  }, 60_000);

  it("pauses: its claim waiting in the server is given up and nothing starts until resume", async () => {
    const client = await Client.connect(served.directory);
    const producer = await Client.connect(served.directory);
    const started: Array<number> = [];
    const worker = await RemoteWorker.start(client, {
      queues: { paused: 1 },
      handlers: { W: (job) => started.push(job.jobId) },
    });
    try {
      // Its claim waits in the server (a long poll) on the empty queue.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await worker.pause();
      const { jobId } = await producer.insert({ queue: "paused", worker: "W", args: null });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(started).toEqual([]);
      expect((await producer.job(jobId))?.state).toBe("available");
      worker.resume();
      await until(async () => (await producer.job(jobId))?.state === "completed");
      expect(started).toEqual([jobId]);
    } finally {
      await worker.close();
      await producer.close();
      await client.close();
    }
  });

  it("routes tay insert through the server that holds the store", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      tayBin,
      "insert",
      served.directory,
      "--queue",
      "cli",
      "--worker",
      "W",
      "--args",
      '{"from":"cli"}',
      "--json",
    ]);
    const printed = JSON.parse(stdout);
    const client = await Client.connect(served.directory);
    expect((await client.job(printed.job_id))?.queue).toBe("cli");
    await client.close();
  }, 60_000);
});
