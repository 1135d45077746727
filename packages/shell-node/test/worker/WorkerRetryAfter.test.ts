// A handler that knows when to try again throws `Worker.RetryAfter(delayMs, message)`: the attempt
// fails with its message and the job is retried `delayMs` after the failure, whatever the
// worker's backoff; with no attempt left it is discarded as any failure; a delay out of range is
// refused where it is made (a RangeError, which fails the attempt by the usual backoff).
import { describe, expect, it } from "vitest";
import { tempStores, until } from "../support/tempStores.js";
import * as Worker from "../../src/worker/Worker.js";

const stores = tempStores("retry-after");
const open = () => stores.open();

describe("Worker.RetryAfter", () => {
  it("retries the job delayMs after the failure, whatever the worker's backoff", async () => {
    const engine = await open();
    const worker = await Worker.start(engine, {
      queues: { api: 1 },
      // The worker's own backoff would retry at once.
      backoff: { baseMs: 0, factor: 1, capMs: 0 },
      handlers: {
        Call: () => {
          throw new Worker.RetryAfter(60_000, "429 Too Many Requests");
        },
      },
    });
    try {
      const { jobId } = await engine.insert({ queue: "api", worker: "Call", args: null });
      await until(() => engine.job(jobId)?.state === "retryable");
      const job = engine.job(jobId);
      const failedAt = job?.errors[0]?.at ?? 0;
      expect(job?.errors.map((error) => error.error)).toEqual(["429 Too Many Requests"]);
      expect(job?.scheduledAt).toBe(failedAt + 60_000);
    } finally {
      await worker.close();
      await engine.close();
    }
  });

  it("discards the job once its attempts are spent, as any failure", async () => {
    const engine = await open();
    const worker = await Worker.start(engine, {
      queues: { api: 1 },
      handlers: {
        Call: () => {
          throw new Worker.RetryAfter(0, "busy");
        },
      },
    });
    try {
      const { jobId } = await engine.insert({
        queue: "api",
        worker: "Call",
        args: null,
        maxAttempts: 2,
      });
      await until(() => engine.job(jobId)?.state === "discarded");
      expect(engine.job(jobId)?.errors.map((error) => error.error)).toEqual(["busy", "busy"]);
    } finally {
      await worker.close();
      await engine.close();
    }
  });

  it("refuses a delay out of range where it is made", () => {
    for (const delayMs of [-1, 1.5, Number.NaN, Worker.retryAfterMsMax + 1]) {
      expect(() => new Worker.RetryAfter(delayMs, "x")).toThrow(RangeError);
    }
    expect(new Worker.RetryAfter(Worker.retryAfterMsMax, "x").delayMs).toBe(Worker.retryAfterMsMax);
  });
});
