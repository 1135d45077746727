// `tay demo` is interruptible and resumable: SIGINT stops it cleanly (exit
// 130, a summary, the lock released, a valid store), and a second run
// continues from the store until every job is finished, with no job lost or
// inserted twice. Both runs are the built binary as a child process; the
// totals are checked against the demo's deterministic failure rule.
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  json,
  removeTemporary,
  requireBuild,
  spawnTay,
  temporaryDirectory,
  watch,
} from "./support/cli.js";

let root = "";

beforeAll(async () => {
  requireBuild();
  root = await temporaryDirectory();
});

afterAll(async () => {
  await removeTemporary(root);
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const jobCount = 1500;

/** The demo's rule: job ids 7, 57, 107, ... fail every attempt and are discarded. */
const discardedIds = Array.from({ length: jobCount }, (_, index) => index + 1).filter(
  (jobId) => jobId % 50 === 7,
);

describe("tay demo", () => {
  it("stops on SIGINT with 130 and a summary, then resumes to the end", async () => {
    const store = path.join(root, "demo");
    const running = spawnTay(["demo", store, "--jobs", String(jobCount)]);
    const first = watch(running);
    await first.waitFor(/inserted 1500 job\(s\)/);
    // Let the workers get going (the run cannot finish in this time: retries wait 1 s and 2 s).
    await first.waitFor(/^demo .*finished [1-9]\d*\//m);
    running.kill("SIGINT");
    const stopped = await first.exited;
    expect(stopped.stderr).toBe("");
    expect(stopped.status).toBe(130);
    expect(stopped.stdout).toContain("stopped: interrupted (SIGINT)");
    const left = /(\d+) job\(s\) unfinished: run tay demo/.exec(stopped.stdout);
    expect(left).not.toBeNull();
    expect(stopped.stdout).toMatch(/^QUEUE\s+SCHEDULED/m);

    // The lock is released and the store is valid between the runs.
    const between = await json(["verify", store]);
    expect(between).toMatchObject({ valid: true });

    const second = watch(spawnTay(["demo", store, "--jobs", String(jobCount)]));
    const resumed = await second.exited;
    expect(resumed.stderr).toBe("");
    expect(resumed.status).toBe(0);
    expect(resumed.stdout).toContain(`resuming ${left?.[1]} unfinished job(s); inserting none`);
    expect(resumed.stdout).toContain("stopped: every job finished");

    const jobs = await json(["jobs", store, "--queue", "demo"]);
    const demoJobs = (Array.isArray(jobs) ? jobs : []).filter(
      (job): job is Record<string, unknown> => isObject(job) && job.worker === "demo",
    );
    expect(demoJobs.map((job) => job.job_id)).toEqual(
      Array.from({ length: jobCount }, (_, index) => index + 1),
    );
    expect(demoJobs.filter((job) => job.state === "discarded").map((job) => job.job_id)).toEqual(
      discardedIds,
    );
    expect(demoJobs.filter((job) => job.state === "completed")).toHaveLength(
      jobCount - discardedIds.length,
    );
    for (const job of demoJobs.filter((job) => job.state === "discarded")) {
      expect(job).toMatchObject({ attempt: 3, max_attempts: 3 });
    }
  });
});
