/**
 * Unique inserts decided while the inserts before them wait to fold and
 * their batches are in flight (batchDecider's backlog and pending keys):
 * fast-check's scheduler interleaves groups of commands (keyed inserts,
 * batches of them, plain inserts, completions; a group is issued at once,
 * so it shares a drain) with the end of each write of a real engine on a
 * fault disk (so groups meet batches in flight). Whatever the order: every insert is
 * answered (none dies: a duplicate always names a job that holds its key
 * when it is answered); the store reopens (its fold refuses a second
 * non-terminal holder of a key, so a missed duplicate fails here); an
 * inserted job carries its key; a duplicate never names a job whose
 * completion or cancellation was answered before the duplicate was issued.
 * Cancels by guessed ids reach jobs inserted in the same drain.
 */
import type { Job } from "@tay/core";
import { Effect } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { driven, openGated } from "../support/scheduledWrites.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Init from "../../src/store/Init.js";

const runs = Number(process.env.TAY_UNIQUE_INTERLEAVING_RUNS ?? "60");

const keys = ["a", "b", "c"] as const;

type Op =
  | { readonly _tag: "insert"; readonly key: number }
  | { readonly _tag: "many"; readonly keys: ReadonlyArray<number> }
  | { readonly _tag: "plain" }
  | { readonly _tag: "complete" }
  /** By a guessed id: it may name a job inserted in the same drain, before its answer. */
  | { readonly _tag: "cancel"; readonly jobId: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ _tag: fc.constant("insert"), key: fc.nat(2) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      _tag: fc.constant("many"),
      keys: fc.array(fc.nat(2), { minLength: 1, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("plain") }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("complete") }) },
  {
    weight: 1,
    arbitrary: fc.record({ _tag: fc.constant("cancel"), jobId: fc.integer({ min: 1, max: 12 }) }),
  },
);

const keyOf = (index: number): string => keys[index] ?? "a";

/** What a keyed insert was answered, and when (a step of the run's counter). */
interface Answered {
  readonly key: string;
  readonly issuedAt: number;
  readonly job: Job.Job & { readonly duplicate?: true };
}

describe("unique inserts among batches in flight", () => {
  it("answer exactly one job per key at a time, whatever the interleaving (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.array(opArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }),
        async (s, groups) => {
          const { engine, layer } = await openGated(s);
          let step = 0;
          const answered: Array<Answered> = [];
          // Job id -> the step its completion or cancellation was answered at.
          const completedAt = new Map<number, number>();
          const run = async (op: Op): Promise<void> => {
            const issuedAt = step++;
            switch (op._tag) {
              case "insert": {
                const key = keyOf(op.key);
                const job = await engine.insert({
                  queue: "q",
                  worker: "W",
                  args: 0,
                  uniqueKey: key,
                });
                answered.push({ key, issuedAt, job });
                break;
              }
              case "many": {
                const jobs = await engine.insertMany(
                  op.keys.map((key) => ({
                    queue: "q",
                    worker: "W",
                    args: 1,
                    uniqueKey: keyOf(key),
                  })),
                );
                jobs.forEach((job, index) => {
                  answered.push({ key: keyOf(op.keys[index] ?? 0), issuedAt, job });
                });
                break;
              }
              case "plain":
                await engine.insert({ queue: "q", worker: "W", args: 2 });
                break;
              case "complete": {
                const [job] = await engine.claim("q", 1);
                if (job === undefined) break;
                // Refused when a cancel took the job first.
                const completed = await engine.complete(job.jobId).then(
                  () => true,
                  () => false,
                );
                if (completed) completedAt.set(job.jobId, step++);
                break;
              }
              case "cancel": {
                // Refused when no such job is active: that is fine here.
                const cancelled = await engine.cancel(op.jobId).then(
                  () => true,
                  () => false,
                );
                if (cancelled) completedAt.set(op.jobId, step++);
                break;
              }
            }
          };
          const done = Promise.all(
            groups.map((group) =>
              s.schedule(Promise.resolve(group)).then((ops) => Promise.all(ops.map(run))),
            ),
          );
          await driven(s, done);
          // Writes still held (a background one) end as the close goes on.
          await driven(s, engine.close());
          const reopened = await EnginePromises.open("/data", { disk: layer });
          try {
            for (const { key, issuedAt, job } of answered) {
              expect(job.uniqueKey).toBe(key);
              expect(reopened.job(job.jobId)?.uniqueKey).toBe(key);
              if (job.duplicate !== true) continue;
              const finished = completedAt.get(job.jobId);
              if (finished !== undefined) expect(finished).toBeGreaterThan(issuedAt);
            }
            // Inserted (not duplicates): at most one per key was ever not terminal
            // at once, which the reopen's fold has checked; and each was answered once.
            const inserted = answered.filter(({ job }) => job.duplicate !== true);
            expect(new Set(inserted.map(({ job }) => job.jobId)).size).toBe(inserted.length);
          } finally {
            await reopened.close();
          }
        },
      ),
      { numRuns: runs },
    );
  }, 120_000);

  it("a key freed in the drain that took it is free again: the backlog's keys go with its fold", async () => {
    const disk = FaultDisk.make();
    disk.seedDirectory("/data");
    const layer = FaultDisk.layer(disk);
    await Effect.runPromise(Effect.provide(Init.init("/data"), layer));
    const engine = await EnginePromises.open("/data", { disk: layer });
    const keyed = { queue: "q", worker: "W", args: null, uniqueKey: "k" };
    // One drain: job 1 takes the key, is cancelled (by the id it will get), and the key is free.
    const [first, cancelled, second] = await Promise.all([
      engine.insert(keyed),
      engine.cancel(1),
      engine.insert(keyed),
    ]);
    expect(first.jobId).toBe(1);
    expect(cancelled.state).toBe("cancelled");
    expect(second).toMatchObject({ jobId: 2, state: "available" });
    expect(second.duplicate).toBeUndefined();
    await engine.close();
  });
});
