// Waiting for a job's end on an embedded engine (`JobEnd.whenEnded`, over
// `@tay/client`'s `JobEnds`): a call resolves with the job once it is
// completed (with its result), discarded or cancelled, at once when it has
// ended already, and not before (a retry is no end); it rejects with
// UnknownJob for a job the engine does not have and with the signal's
// reason when aborted, and with StoreClosed when its engine closes; and no
// call or watch is left behind.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as JobEnd from "../../src/engine/JobEnd.js";

const made: Array<string> = [];
afterEach(() => {
  for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const open = () => {
  const root = mkdtempSync(join(tmpdir(), "tay-jobend-"));
  made.push(root);
  return EnginePromises.open(join(root, "data"), { createIfMissing: true, timers: false });
};

/** Whether `promise` has settled after the turns already queued. */
const settled = async (promise: Promise<unknown>): Promise<boolean> => {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  return done;
};

describe("JobEnd.whenEnded", () => {
  it("resolves once a job completes, is discarded or cancelled, and not on a retry", async () => {
    const engine = await open();
    const jobs = await engine.insertMany(
      [2, 1, 1, 1].map((maxAttempts) => ({ queue: "q", worker: "W", args: null, maxAttempts })),
    );
    const [retried, discarded, completed, cancelled] = jobs.map((job) => job.jobId);
    const controller = new AbortController();
    const waits = jobs.map((job) =>
      JobEnd.whenEnded(
        engine,
        job.jobId,
        job.jobId === retried ? { signal: controller.signal } : {},
      ),
    );
    const [forRetried, forDiscarded, forCompleted, forCancelled] = waits;
    await engine.claim("q", 3);
    await engine.fail(retried ?? 0, "once");
    await engine.fail(discarded ?? 0, "for good");
    await engine.complete(completed ?? 0, { sent: true });
    await engine.cancel(cancelled ?? 0, "no");
    expect(await forDiscarded).toMatchObject({ state: "discarded" });
    expect((await forCompleted)?.result?.value).toEqual(new Map([["sent", true]]));
    expect(await forCancelled).toMatchObject({ state: "cancelled" });
    // Attempt 1 of 2 failed: retryable, not ended; the call waits until aborted.
    expect(await settled(forRetried ?? Promise.resolve())).toBe(false);
    expect(JobEnd.waiting(engine)).toBe(1);
    controller.abort(new Error("gave up"));
    await expect(forRetried).rejects.toThrow("gave up");
    expect(JobEnd.waiting(engine)).toBe(0);
    await engine.close();
  });

  it("answers an ended job at once, refuses an unknown one and an aborted signal", async () => {
    const engine = await open();
    const job = await engine.insert({ queue: "q", worker: "W", args: null });
    await engine.cancel(job.jobId);
    expect(await JobEnd.whenEnded(engine, job.jobId)).toMatchObject({ state: "cancelled" });
    await expect(JobEnd.whenEnded(engine, 99)).rejects.toMatchObject({
      _tag: "UnknownJob",
      message: "UnknownJob: no job 99 (never inserted, or compacted away)",
    });
    const aborted = AbortSignal.abort(new Error("not now"));
    await expect(JobEnd.whenEnded(engine, job.jobId, { signal: aborted })).rejects.toThrow(
      "not now",
    );
    expect(JobEnd.waiting(engine)).toBe(0);
    await engine.close();
  });

  it("rejects a call still waiting when its engine closes, naming the store", async () => {
    const engine = await open();
    const job = await engine.insert({ queue: "q", worker: "W", args: null });
    const waiting = JobEnd.whenEnded(engine, job.jobId);
    expect(await settled(waiting)).toBe(false);
    await engine.close();
    await expect(waiting).rejects.toMatchObject({
      _tag: "StoreClosed",
      message: `StoreClosed ${engine.log.path}: the store was closed`,
    });
    expect(JobEnd.waiting(engine)).toBe(0);
  });

  it("serves many calls for one job and for many with one watch, each told once", async () => {
    const engine = await open();
    const jobs = await engine.insertMany(
      Array.from({ length: 50 }, (_, index) => ({ queue: "q", worker: "W", args: index })),
    );
    const watchers: Array<number> = [];
    const counted = {
      watch: (listener: Parameters<typeof engine.watch>[0]) => {
        watchers.push(1);
        const stop = engine.watch(listener);
        return () => {
          watchers.pop();
          stop();
        };
      },
      job: (jobId: number) => engine.job(jobId),
    };
    const waits = jobs.flatMap((job) => [
      JobEnd.whenEnded(counted, job.jobId),
      JobEnd.whenEnded(counted, job.jobId),
    ]);
    expect(watchers).toHaveLength(1);
    const started = await engine.claim("q", 50);
    await Promise.all(started.map((job) => engine.complete(job.jobId, job.jobId)));
    const ended = await Promise.all(waits);
    expect(ended.map((job) => job.jobId)).toEqual(jobs.flatMap((job) => [job.jobId, job.jobId]));
    expect(watchers).toHaveLength(0);
    await engine.close();
  });
});
