// `tay demo` runs its jobs on the worker runtime and is interruptible and
// resumable: a run ends with no job executing, with `--workers` as the
// worker's concurrency and the heartbeats it delivered counted; SIGINT stops
// it cleanly (exit 130, a summary, no job executing, the lock released, a
// valid store), and a second run continues from the store until every job is
// finished, with no job lost or inserted twice. Every run is the built binary
// as a child process; the totals are checked against the demo's
// deterministic failure rule.
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

/** The store's jobs in `state`, as `tay jobs --json` lists them. */
const jobsIn = async (store: string, state: string): Promise<Array<Record<string, unknown>>> => {
  const listed = await json(["jobs", store, "--state", state]);
  return (Array.isArray(listed) ? listed : []).filter(isObject);
};

describe("tay demo", () => {
  it("finishes with no job executing, --workers as the concurrency, heartbeats counted", async () => {
    const store = path.join(root, "finished");
    const run = await json(["demo", store, "--jobs", "200", "--workers", "3"]);
    expect(run).toMatchObject({ outcome: "finished", jobs_finished: 200, unfinished: 0 });
    expect(await jobsIn(store, "executing")).toEqual([]);

    // An even job's result names the handler that ran it, numbered among those running at once.
    const completed = await jobsIn(store, "completed");
    const numbers = completed
      .filter((job) => job.worker === "demo")
      .flatMap((job) => {
        const result = job.result;
        return isObject(result) && isObject(result.value) ? [result.value.worker] : [];
      });
    // Ids 1..200: the 100 even ones complete (the always-failing ids, 7 mod 50, are odd).
    expect(numbers).toHaveLength(100);
    expect(Math.max(...numbers.filter((number) => typeof number === "number"))).toBe(2);

    // Every retry waits 1 s and then 2 s, so the run outlasts the heartbeat's 2 s period.
    const heartbeats = completed.filter((job) => job.worker === "heartbeat").length;
    const delivered = isObject(run) ? run.heartbeats_delivered : undefined;
    expect(delivered).toBeGreaterThanOrEqual(1);
    expect(delivered).toBeLessThanOrEqual(heartbeats);
  });

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
    // The worker closed gracefully: nothing is left for the next open to rescue.
    expect(await jobsIn(store, "executing")).toEqual([]);

    // The lock is released and the store is valid between the runs.
    const between = await json(["verify", store]);
    expect(between).toMatchObject({ valid: true });

    const second = watch(spawnTay(["demo", store, "--jobs", String(jobCount)]));
    const resumed = await second.exited;
    expect(resumed.stderr).toBe("");
    expect(resumed.status).toBe(0);
    expect(resumed.stdout).toContain(`resuming ${left?.[1]} unfinished job(s); inserting none`);
    expect(resumed.stdout).toContain("stopped: every job finished");
    expect(resumed.stdout).not.toContain("rescued");
    expect(await jobsIn(store, "executing")).toEqual([]);

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
