// `tay compact` (and `retry`, `pause`, `limit`, `resume`, `insert` (also `--wait`), `cancel-all`, `retry-all`) on a store another process holds and serves: the holder compacts
// (redrives) through its server and the CLI prints what the in-process command prints; without a
// server the lock still refuses it. The holder here is this test process (engine and server in process).
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnginePromises, Server } from "@tay/shell-node";
import {
  expectFailure,
  json,
  ok,
  removeTemporary,
  requireBuild,
  spawnTay,
  tay,
  temporaryDirectory,
  watch,
} from "./support/cli.js";

let root = "";
let directory = "";
let opened: EnginePromises.OpenedEngine;
let served: Server.StartedServer | undefined;

beforeAll(async () => {
  requireBuild();
  root = await temporaryDirectory();
  directory = path.join(root, "data");
  opened = await EnginePromises.open(directory, { createIfMissing: true });
  const done = await opened.insert({ queue: "mail", worker: "W", args: null });
  await opened.insert({ queue: "mail", worker: "W", args: null });
  await opened.claim("mail");
  await opened.complete(done.jobId);
  served = await Server.start(opened, { directory });
});

afterAll(async () => {
  await served?.close();
  await opened.close();
  await removeTemporary(root);
});

describe("tay compact on a served store", () => {
  it("compacts through the holder's server and prints the in-process report", async () => {
    const report = await json(["compact", directory, "--retention", "0ms"]);
    expect(report).toMatchObject({
      epoch: 2,
      parent_epoch: 1,
      jobs_dropped: 1,
      jobs_kept: 1,
      removed_epochs: [1],
      not_removed: [],
    });
    // The holder's own engine compacted: the completed job is gone, the other kept.
    expect(opened.job(1)).toBeUndefined();
    expect(opened.job(2)?.state).toBe("available");
    const text = await ok(["compact", directory, "--retention", "0ms"]);
    expect(text).toContain("compacted into epoch 3 (parent 2)");
    expect(text).toMatch(/jobs kept\s+1/);
  }, 60_000);

  it("retry goes through the holder's server too", async () => {
    expect(await json(["cancel", directory, "2"])).toMatchObject({ job_id: 2, state: "cancelled" });
    expect(await json(["retry", directory, "2", "--reason", "again"])).toMatchObject({
      job_id: 2,
      state: "available",
    });
    // The holder's own engine redrove it.
    expect(opened.job(2)?.state).toBe("available");
  }, 60_000);

  it("pause, limit, resume and a unique insert go through it too", async () => {
    expect(await ok(["pause", directory, "mail"])).toBe("queue mail: paused\n");
    expect(
      await json(["limit", directory, "mail", "--concurrency", "2", "--rate", "5/1s"]),
    ).toEqual({
      queue: "mail",
      at: expect.any(Number),
      paused: true,
      concurrency: 2,
      rate_limit: { count: 5, per_ms: 1000 },
    });
    expect(await ok(["resume", directory, "mail"])).toBe(
      "queue mail: running, concurrency 2, 5 per 1000 ms\n",
    );
    // The holder's own engine holds the state.
    expect(opened.queue("mail")).toMatchObject({ paused: false, concurrency: 2 });
    const job = ["--queue", "mail", "--worker", "W", "--args", "null", "--unique-key", "k"];
    const first = await json(["insert", directory, ...job, "--timeout", "5s"]);
    expect(first).toMatchObject({ unique_key: "k", timeout_ms: 5000, duplicate: false });
    const again = await json(["insert", directory, ...job]);
    expect(again).toMatchObject({
      job_id: (first as { job_id: number }).job_id,
      duplicate: true,
    });
  }, 60_000);

  it("cancel-all and retry-all go through it too", async () => {
    const waiting = opened.jobs({ queue: "mail", state: "available" }).map((job) => job.jobId);
    expect(waiting.length).toBeGreaterThan(0);
    expect(await json(["cancel-all", directory, "--queue", "mail"])).toEqual({
      job_ids: waiting,
      refused: [],
    });
    expect(opened.jobs({ queue: "mail", state: "available" })).toEqual([]);
    expect(await ok(["retry-all", directory, "--state", "cancelled"])).toBe(
      `retried ${waiting.length} job(s): ${waiting.join(", ")}\n`,
    );
    expect(opened.jobs({ queue: "mail", state: "available" }).map((job) => job.jobId)).toEqual(
      waiting,
    );
  }, 60_000);

  it("insert --wait prints the job as it ended: 0 completed, 1 discarded, 130 on SIGINT", async () => {
    const waitFor = async (queue: string) => {
      for (;;) {
        const [job] = opened.jobs({ queue });
        if (job !== undefined) return job;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const insert = (queue: string, json: boolean) => {
      const child = spawnTay([
        "insert",
        directory,
        ...["--queue", queue, "--worker", "W", "--args", "7", "--max-attempts", "1"],
        "--wait",
        ...(json ? ["--json"] : []),
      ]);
      return { child, ...watch(child) };
    };
    // Completed by this process's engine while the command waits.
    const completing = insert("awaited-ok", true);
    const first = await waitFor("awaited-ok");
    await opened.claim("awaited-ok");
    await opened.complete(first.jobId, { sent: 7 });
    const done = await completing.exited;
    expect(done.stderr).toBe("");
    expect(done.status).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({
      job_id: first.jobId,
      state: "completed",
      result: { value: { sent: 7 } },
      duplicate: false,
    });
    // Discarded: the job is printed, and the exit says why.
    const failing = insert("awaited-fail", false);
    const second = await waitFor("awaited-fail");
    await opened.claim("awaited-fail");
    await opened.fail(second.jobId, "smtp said no");
    const failed = await failing.exited;
    expect(failed.stdout).toMatch(/state\s+discarded/);
    expect(expectFailure(failed, "JobNotCompleted")).toContain(
      `job ${second.jobId} ended discarded: smtp said no`,
    );
    // SIGINT while it waits: 130, and the job stays as it was.
    const interrupted = insert("awaited-never", false);
    const third = await waitFor("awaited-never");
    interrupted.child.kill("SIGINT");
    expect((await interrupted.exited).status).toBe(130);
    expect(opened.job(third.jobId)?.state).toBe("available");
  }, 60_000);

  it("is refused as Locked once the holder stops serving", async () => {
    await served?.close();
    served = undefined;
    expectFailure(await tay(["compact", directory, "--retention", "0ms"]), "Locked");
  }, 60_000);
});
