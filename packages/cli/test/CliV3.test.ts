// The built `tay` binary on a store that uses schema 3 (EVENTS-V3.md): a job
// discarded and retried with `tay retry`, a queue paused and limited
// through the engine, then `tay queues` and `tay status` showing the queue
// state and "event schema 3 in use"; a store without v3 features says
// nothing of schema 3.
import * as path from "node:path";
import { EnginePromises } from "@tay/shell-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectFailure,
  json,
  ok,
  removeTemporary,
  requireBuild,
  tay,
  temporaryDirectory,
} from "./support/cli.js";

let root = "";

beforeAll(async () => {
  requireBuild();
  root = await temporaryDirectory();
});
afterAll(async () => {
  await removeTemporary(root);
});

describe("tay retry, tay queues, and queue state in tay status", () => {
  it("retries a discarded job and shows the queue state", async () => {
    const store = path.join(root, "v3");
    const engine = await EnginePromises.open(store, { createIfMissing: true });
    const job = await engine.insert({ queue: "mail", worker: "Send", args: null, maxAttempts: 1 });
    await engine.claim("mail", 1);
    await engine.fail(job.jobId, "smtp down");
    await engine.pauseQueue("mail");
    await engine.setQueueLimits("mail", { concurrency: 4, rateLimit: { count: 10, perMs: 1000 } });
    await engine.close();

    const retried = await json(["retry", store, `${job.jobId}`, "--reason", "smtp back"]);
    expect(retried).toMatchObject({
      job_id: job.jobId,
      state: "available",
      attempt: 1,
      max_attempts: 2,
    });
    expectFailure(await tay(["retry", store, `${job.jobId}`]), "InvalidTransition");

    const queues = await json(["queues", store]);
    expect(queues).toEqual([
      {
        queue: "mail",
        at: expect.any(Number),
        paused: true,
        concurrency: 4,
        rate_limit: { count: 10, per_ms: 1000 },
        jobs: expect.objectContaining({ available: 1 }),
      },
    ]);
    const text = await ok(["queues", store]);
    expect(text).toMatch(/mail\s+paused\s+4\s+10\/1000ms\s+1\s+0/);

    const status = await ok(["status", store]);
    expect(status).toContain("event schema 3 in use");
    expect(status).toContain("queue mail: paused, concurrency 4, 10 per 1000 ms");
    expect(await json(["status", store])).toMatchObject({ event_schema_3: true });
  });

  it("a store without v3 features says nothing of schema 3", async () => {
    const store = path.join(root, "plain");
    const engine = await EnginePromises.open(store, { createIfMissing: true });
    await engine.insert({ queue: "mail", worker: "Send", args: null });
    await engine.close();
    const status = await ok(["status", store]);
    expect(status).not.toContain("schema 3");
    expect(await json(["status", store])).toMatchObject({
      event_schema_3: false,
      queue_states: [],
    });
  });
});
