/**
 * An engine with a terminal index (`terminalIndex: true`) answers every job
 * and every listing as the all-in-memory engine does, on random workloads
 * (inserts with and without unique keys, completions with and without
 * results, failures, cancellations, redrives): the same store reopened
 * without the index is the reference. Its index is current after a clean
 * close, rebuilt with the reason when deleted, and pruned by compaction's
 * retention like the log. Each check would fail if a completed job were
 * lost, kept twice, read without its result, or kept past its retention.
 */
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Event, State } from "@tay/core";
import * as fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as TerminalIndex from "../../src/store/TerminalIndex.js";

let scratch = "";
let dir = "";

beforeEach(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "tay-tindex-"));
  dir = path.join(scratch, "data");
});
afterEach(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});

type Step =
  | { readonly _tag: "insert"; readonly queue: string; readonly key: string | null }
  | { readonly _tag: "complete"; readonly result: boolean }
  | { readonly _tag: "fail" }
  | { readonly _tag: "cancel"; readonly pick: number }
  | { readonly _tag: "redrive"; readonly pick: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    _tag: fc.constant("insert" as const),
    queue: fc.constantFrom("a", "b"),
    key: fc.oneof(
      { weight: 3, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom("k1", "k2") },
    ),
  }),
  fc.record({ _tag: fc.constant("complete" as const), result: fc.boolean() }),
  fc.record({ _tag: fc.constant("fail" as const) }),
  fc.record({ _tag: fc.constant("cancel" as const), pick: fc.nat() }),
  fc.record({ _tag: fc.constant("redrive" as const), pick: fc.nat() }),
);

const run = async (engine: EnginePromises.OpenedEngine, steps: ReadonlyArray<Step>) => {
  for (const [index, planned] of steps.entries()) {
    const queue = index % 2 === 0 ? "a" : "b";
    const ids = (state: Event.JobState) => engine.jobs({ state }).map((job) => job.jobId);
    switch (planned._tag) {
      case "insert":
        await engine.insert({
          queue: planned.queue,
          worker: "W",
          args: { index },
          maxAttempts: 1,
          ...(planned.key === null ? {} : { uniqueKey: planned.key }),
        });
        break;
      case "complete":
      case "fail": {
        const [job] = await engine.claim(queue, 1);
        if (job === undefined) break;
        if (planned._tag === "fail") await engine.fail(job.jobId, "boom");
        else await engine.complete(job.jobId, planned.result ? { index } : undefined);
        break;
      }
      case "cancel": {
        const live = [...ids("available"), ...ids("scheduled")];
        const jobId = live[planned.pick % Math.max(1, live.length)];
        if (jobId !== undefined) await engine.cancel(jobId);
        break;
      }
      case "redrive": {
        const dead = [...ids("discarded"), ...ids("cancelled")];
        const jobId = dead[planned.pick % Math.max(1, dead.length)];
        // A key held again refuses the redrive: that is the rule, not a failure here.
        if (jobId !== undefined) await engine.redrive(jobId).catch(() => undefined);
        break;
      }
    }
  }
};

/** Every answer an inspection gives: each job by id, and every listing by state and queue. */
const answers = async (
  lastJobId: number,
  job: (jobId: number) => Promise<unknown>,
  jobs: (
    filter: EnginePromises.EnginePromises["jobs"] extends (f: infer F) => unknown ? F : never,
  ) => Promise<unknown>,
) => {
  const byId = [];
  for (let jobId = 1; jobId <= lastJobId + 1; jobId++) byId.push(await job(jobId));
  const listings = [];
  for (const state of [undefined, ...Event.jobStates]) {
    for (const queue of [undefined, "a", "b"]) {
      listings.push(
        await jobs({
          ...(state === undefined ? {} : { state }),
          ...(queue === undefined ? {} : { queue }),
        }),
      );
    }
  }
  listings.push(await jobs({ state: "completed", limit: 2 }));
  return { byId, listings };
};

const indexed = async (lastJobId: number) => {
  const engine = await EnginePromises.open(dir, { terminalIndex: true });
  const seen = await answers(lastJobId, engine.inspectJob, engine.inspectJobs);
  const report = engine.report.terminalIndex;
  await engine.close();
  return { seen, report };
};

const reference = async (lastJobId: number) => {
  const engine = await EnginePromises.open(dir);
  const seen = await answers(
    lastJobId,
    async (jobId) => engine.job(jobId),
    async (filter) => engine.jobs(filter),
  );
  await engine.close();
  return seen;
};

describe("an engine with a terminal index", () => {
  it("answers as the all-in-memory engine on random workloads, reopened and rebuilt", async () => {
    // A fixed seed: eight unseeded samples sometimes completed no keyless job with a result,
    // and the coverage check below then failed (seen once in CI).
    const samples = fc.sample(fc.array(step, { minLength: 5, maxLength: 40 }), {
      numRuns: 10,
      seed: 20261202,
    });
    let withResults = 0;
    for (const steps of samples) {
      await fs.rm(dir, { recursive: true, force: true });
      const engine = await EnginePromises.open(dir, { createIfMissing: true, terminalIndex: true });
      expect(engine.report.terminalIndex?.rebuilt).toMatch(/^no HEAD/);
      await run(engine, steps);
      const lastJobId = engine.state().lastJobId;
      const live = await answers(lastJobId, engine.inspectJob, engine.inspectJobs);
      // The lean state holds no completed job without a key whole.
      for (const job of State.jobs(engine.state())) {
        expect(job.state !== "completed" || job.uniqueKey !== null).toBe(true);
      }
      await engine.close();
      const expected = await reference(lastJobId);
      // Completed jobs with a result that only the index holds whole.
      withResults += expected.byId.filter(
        (job) =>
          typeof job === "object" &&
          job !== null &&
          "result" in job &&
          job.result !== null &&
          "uniqueKey" in job &&
          job.uniqueKey === null,
      ).length;
      expect(live).toEqual(expected);
      // Reopened: the index is current (closed cleanly) and gives the same answers.
      const current = await indexed(lastJobId);
      expect(current.report).toEqual({ rebuilt: null });
      expect(current.seen).toEqual(expected);
      // Deleted: rebuilt from the log, with the reason, and the same answers again.
      await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
      const rebuilt = await indexed(lastJobId);
      expect(rebuilt.report?.rebuilt).toMatch(/^no HEAD/);
      expect(rebuilt.seen).toEqual(expected);
    }
    // The samples did complete jobs without a key with results.
    expect(withResults).toBeGreaterThan(0);
  });

  it("prunes the index with compaction's retention, as the log", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true, terminalIndex: true });
    for (let index = 0; index < 6; index++) {
      await engine.insert({ queue: "a", worker: "W", args: index });
    }
    for (let index = 0; index < 4; index++) {
      const [job] = await engine.claim("a", 1);
      if (job !== undefined) await engine.complete(job.jobId, index);
    }
    expect(await engine.inspectJobs({ state: "completed" })).toHaveLength(4);
    await engine.compact(0);
    expect(await engine.inspectJobs({ state: "completed" })).toEqual([]);
    expect(await engine.inspectJob(1)).toBeUndefined();
    expect((await engine.inspectJobs()).map((job) => job.jobId)).toEqual([5, 6]);
    await engine.close();
    const again = await EnginePromises.open(dir, { terminalIndex: true });
    expect(again.report.terminalIndex).toEqual({ rebuilt: null });
    expect((await again.inspectJobs()).map((job) => job.jobId)).toEqual([5, 6]);
    await again.close();
  });
});
