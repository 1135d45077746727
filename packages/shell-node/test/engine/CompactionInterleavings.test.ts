/**
 * Compactions among commands in flight: fast-check's scheduler interleaves
 * groups of commands (inserts, batches of them, claims with completions,
 * cancels by guessed ids, compactions with and without retention; a group
 * is issued at once, so it shares a drain) with the end of each write of a
 * real engine with its terminal index on a fault disk, so a compaction
 * meets batches in flight, held commands, completions whose jobs leave for
 * the index, and index writes. Whatever the order: every command is
 * answered; the engine's answers after the last one are what a reopen of
 * the store answers, with the index current and with it rebuilt from the
 * log; an acknowledged job is gone only when its completion or cancel was
 * acknowledged and a compaction without retention ran; an acknowledged end
 * is what the job shows.
 */
import type { Job } from "@tay/core";
import { Effect } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { driven, openGated } from "../support/scheduledWrites.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as TerminalIndex from "../../src/store/TerminalIndex.js";

const runs = Number(process.env.TAY_COMPACTION_INTERLEAVING_RUNS ?? "40");
/** Replays a failure: TAY_COMPACTION_INTERLEAVING_SEED and _PATH, as fast-check printed them. */
const replay = {
  ...(process.env.TAY_COMPACTION_INTERLEAVING_SEED === undefined
    ? {}
    : { seed: Number(process.env.TAY_COMPACTION_INTERLEAVING_SEED) }),
  ...(process.env.TAY_COMPACTION_INTERLEAVING_PATH === undefined
    ? {}
    : { path: process.env.TAY_COMPACTION_INTERLEAVING_PATH }),
};

type Op =
  | { readonly _tag: "insert" }
  | { readonly _tag: "many"; readonly count: number }
  | { readonly _tag: "complete" }
  /** By a guessed id: it may name a job inserted in the same drain, or an ended one. */
  | { readonly _tag: "cancel"; readonly jobId: number }
  /** Retention 0 lets go of every job ended before now; a day's keeps them all. */
  | { readonly _tag: "compact"; readonly retentionMs: 0 | 86_400_000 };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ _tag: fc.constant("insert") }) },
  {
    weight: 1,
    arbitrary: fc.record({ _tag: fc.constant("many"), count: fc.integer({ min: 1, max: 3 }) }),
  },
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant("complete") }) },
  {
    weight: 1,
    arbitrary: fc.record({ _tag: fc.constant("cancel"), jobId: fc.integer({ min: 1, max: 15 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      _tag: fc.constant("compact"),
      retentionMs: fc.constantFrom<0 | 86_400_000>(0, 86_400_000),
    }),
  },
);

/** What the commands were answered, with the steps of a counter when they were issued and answered. */
interface Acknowledged {
  step: number;
  readonly inserted: Array<number>;
  /** Job id -> the result its acknowledged completion recorded. */
  readonly completed: Map<number, number>;
  readonly cancelled: Set<number>;
  /** Job id -> the step its acknowledged completion or cancel was issued at. */
  readonly endIssued: Map<number, number>;
  /** The step the last compaction without retention was answered at (-1: none). */
  droppingAnswered: number;
  compactions: number;
}

const noneAcknowledged = (): Acknowledged => ({
  step: 0,
  inserted: [],
  completed: new Map(),
  cancelled: new Set(),
  endIssued: new Map(),
  droppingAnswered: -1,
  compactions: 0,
});

const runOp =
  (engine: EnginePromises.OpenedEngine, acknowledged: Acknowledged) =>
  async (op: Op): Promise<void> => {
    switch (op._tag) {
      case "insert": {
        const job = await engine.insert({ queue: "q", worker: "W", args: 0 });
        acknowledged.inserted.push(job.jobId);
        return;
      }
      case "many": {
        const jobs = await engine.insertMany(
          Array.from({ length: op.count }, (_, index) => ({
            queue: "q",
            worker: "W",
            args: index,
          })),
        );
        for (const job of jobs) acknowledged.inserted.push(job.jobId);
        return;
      }
      case "complete": {
        const [job] = await engine.claim("q", 1);
        if (job === undefined) return;
        // Refused when a cancel took the job first.
        const result = job.jobId * 10;
        const issued = acknowledged.step++;
        const done = await engine.complete(job.jobId, result).then(
          () => true,
          () => false,
        );
        if (!done) return;
        acknowledged.completed.set(job.jobId, result);
        acknowledged.endIssued.set(job.jobId, issued);
        return;
      }
      case "cancel": {
        // Refused when no such job is active: that is fine here.
        const issued = acknowledged.step++;
        const done = await engine.cancel(op.jobId).then(
          () => true,
          () => false,
        );
        if (!done) return;
        acknowledged.cancelled.add(op.jobId);
        acknowledged.endIssued.set(op.jobId, issued);
        return;
      }
      case "compact":
        await engine.compact(op.retentionMs);
        acknowledged.compactions += 1;
        if (op.retentionMs === 0) acknowledged.droppingAnswered = acknowledged.step++;
        return;
    }
  };

/** Every job the engine answers for, by id up to `lastJobId` (terminal ones from the index). */
const answers = async (engine: EnginePromises.OpenedEngine, lastJobId: number) => {
  const byId: Array<Job.Job | undefined> = [];
  for (let jobId = 1; jobId <= lastJobId; jobId++) byId.push(await engine.inspectJob(jobId));
  return { lastJobId: engine.state().lastJobId, byId, listed: await engine.inspectJobs() };
};

/**
 * Each acknowledged job is where its acknowledged commands left it, or gone
 * only when its end was acknowledged and a compaction without retention
 * was answered after that end was issued.
 */
const checkAcknowledged = (
  acknowledged: Acknowledged,
  byId: ReadonlyArray<Job.Job | undefined>,
): void => {
  expect(new Set(acknowledged.inserted).size).toBe(acknowledged.inserted.length);
  for (const jobId of acknowledged.inserted) {
    const job = byId[jobId - 1];
    const result = acknowledged.completed.get(jobId);
    const ended = result !== undefined || acknowledged.cancelled.has(jobId);
    if (job === undefined) {
      const endIssued = acknowledged.endIssued.get(jobId) ?? Number.POSITIVE_INFINITY;
      expect({ jobId, ended, dropped: acknowledged.droppingAnswered > endIssued }).toEqual({
        jobId,
        ended: true,
        dropped: true,
      });
      continue;
    }
    if (result !== undefined) expect(job.result?.value).toBe(result);
    if (result !== undefined) expect(job.state).toBe("completed");
    if (acknowledged.cancelled.has(jobId)) expect(job.state).toBe("cancelled");
    if (!ended) expect(["available", "executing"]).toContain(job.state);
  }
};

describe("compactions among commands in flight", () => {
  it("lose, double or change nothing acknowledged, whatever the interleaving (property)", async () => {
    let overlapped = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.array(opArb, { minLength: 1, maxLength: 5 }), { minLength: 2, maxLength: 7 }),
        async (s, groups) => {
          const { engine, disk, layer } = await openGated(s);
          const acknowledged = noneAcknowledged();
          const run = runOp(engine, acknowledged);
          const done = Promise.all(
            groups.map((group) =>
              s.schedule(Promise.resolve(group)).then((ops) => Promise.all(ops.map(run))),
            ),
          );
          await driven(s, done);
          if (acknowledged.compactions > 0 && groups.some((group) => group.length > 1)) {
            overlapped += 1;
          }
          const lastJobId = engine.state().lastJobId;
          const live = await answers(engine, lastJobId);
          checkAcknowledged(acknowledged, live.byId);
          // Writes still held (a background one) end as the close goes on.
          await driven(s, engine.close());
          const reopened = await EnginePromises.open("/data", { disk: layer });
          try {
            expect(reopened.report.terminalIndex?.rebuilt ?? null).toBeNull();
            expect(await answers(reopened, lastJobId)).toEqual(live);
          } finally {
            await reopened.close();
          }
          await Effect.runPromise(
            disk.remove(TerminalIndex.indexPath("/data"), { recursive: true }),
          );
          const rebuilt = await EnginePromises.open("/data", { disk: layer });
          try {
            expect(rebuilt.report.terminalIndex?.rebuilt).toMatch(/^no HEAD/);
            expect(await answers(rebuilt, lastJobId)).toEqual(live);
          } finally {
            await rebuilt.close();
          }
        },
      ),
      { numRuns: runs, ...replay },
    );
    // Compactions did run among other commands of their group.
    expect(overlapped).toBeGreaterThan(runs / 4);
  }, 180_000);
});
