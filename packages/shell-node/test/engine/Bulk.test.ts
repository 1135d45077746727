// Commands over many jobs (`Bulk.redriveAll`, `Bulk.cancelAll`) on a real
// store: they change exactly the jobs their filter names (queue, states,
// limit; the defaults: discarded jobs, waiting jobs), each through the
// ordinary command, so a job whose unique key another job holds is refused
// on its own and listed while the others go on; more jobs than the command
// queue's bound are all done (the refused-as-Overloaded ones sent again
// once there is room); what they did survives a reopen; and a failure of
// the store rejects the call, the jobs changed before it staying changed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, type Scope } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import type { Disk } from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Bulk from "../../src/engine/Bulk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";

const made: Array<string> = [];
afterEach(() => {
  for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const open = (directory: string, queuedCommandsMax?: number) =>
  EnginePromises.open(directory, {
    createIfMissing: true,
    timers: false,
    ...(queuedCommandsMax === undefined ? {} : { queuedCommandsMax }),
  });

const freshDirectory = (): string => {
  const root = mkdtempSync(join(tmpdir(), "tay-bulk-"));
  made.push(root);
  return join(root, "data");
};

type Opened = Awaited<ReturnType<typeof open>>;

/** Inserts `count` jobs of `queue` with one attempt, and discards each (claimed, failed). */
const discarded = async (
  engine: Opened,
  queue: string,
  count: number,
  uniqueKey?: (index: number) => string,
): Promise<Array<number>> => {
  const jobs = await engine.insertMany(
    Array.from({ length: count }, (_, index) => ({
      queue,
      worker: "W",
      args: index,
      maxAttempts: 1,
      ...(uniqueKey === undefined ? {} : { uniqueKey: uniqueKey(index) }),
    })),
  );
  const started = await engine.claim(queue, count);
  await Promise.all(started.map((job) => engine.fail(job.jobId, "down")));
  return jobs.map((job) => job.jobId);
};

describe("Bulk.redriveAll", () => {
  it("runs again the discarded jobs of one queue, and nothing else", async () => {
    const directory = freshDirectory();
    const engine = await open(directory);
    const mail = await discarded(engine, "mail", 5);
    const other = await discarded(engine, "other", 2);
    const cancelled = await engine.insert({ queue: "mail", worker: "W", args: null });
    await engine.cancel(cancelled.jobId, "no");
    const outcome = await Bulk.redriveAll(engine, { queue: "mail" }, { reason: "smtp back" });
    expect(outcome).toEqual({ jobIds: mail, refused: [] });
    for (const jobId of mail) expect(engine.job(jobId)).toMatchObject({ state: "available" });
    for (const jobId of other) expect(engine.job(jobId)?.state).toBe("discarded");
    expect(engine.job(cancelled.jobId)?.state).toBe("cancelled");
    // Asked for, cancelled jobs too; at most `limit`, lowest ids first.
    const more = await Bulk.redriveAll(engine, { states: ["discarded", "cancelled"], limit: 2 });
    expect(more.jobIds).toEqual(other);
    const last = await Bulk.redriveAll(engine, { states: ["cancelled"] });
    expect(last.jobIds).toEqual([cancelled.jobId]);
    await engine.close();
    const reopened = await open(directory);
    for (const jobId of [...mail, ...other, cancelled.jobId]) {
      expect(reopened.job(jobId)?.state).toBe("available");
    }
    await reopened.close();
  }, 60_000);

  it("lists a job whose unique key another job holds, and runs the others", async () => {
    const engine = await open(freshDirectory());
    const [first, second] = await discarded(engine, "q", 2, (index) => `k${index}`);
    // Another job now holds k0: running the first again would be a second holder.
    const holder = await engine.insert({ queue: "q", worker: "W", args: null, uniqueKey: "k0" });
    expect(holder.duplicate).toBeUndefined();
    const outcome = await Bulk.redriveAll(engine, { queue: "q" });
    expect(outcome.jobIds).toEqual([second]);
    expect(outcome.refused).toEqual([
      { jobId: first, reason: "UniqueKeyTaken", message: expect.stringContaining("held by job") },
    ]);
    expect(engine.job(first ?? 0)?.state).toBe("discarded");
    await engine.close();
  }, 60_000);

  it("does more jobs than the command queue holds, sending the overloaded ones again", async () => {
    const engine = await open(freshDirectory(), 100);
    const ids: Array<number> = [];
    // Inserted and discarded in slices the bound lets through.
    for (let slice = 0; slice < 6; slice++) ids.push(...(await discarded(engine, "q", 50)));
    const outcome = await Bulk.redriveAll(engine);
    expect(outcome.refused).toEqual([]);
    expect(outcome.jobIds).toEqual(ids);
    expect(engine.jobs({ state: "available" }).length).toBe(300);
    await engine.close();
  }, 60_000);
});

describe("Bulk over a store that fails", () => {
  it("rejects with the store's failure, and the jobs changed before it stay changed", async () => {
    const disk = FaultDisk.make();
    const run = <A, E>(program: Effect.Effect<A, E, Disk | Scope.Scope>) =>
      Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(FaultDisk.layer(disk))));
    await run(Init.init("/data"));
    const failure = await run(
      Effect.gen(function* () {
        const engine = yield* Engine.open("/data", { timers: false });
        const promises = engine.promises;
        const jobs = yield* Effect.promise(() =>
          promises.insertMany(
            Array.from({ length: 300 }, (_, index) => ({
              queue: "q",
              worker: "W",
              args: index,
              maxAttempts: 1,
            })),
          ),
        );
        const started = yield* Effect.promise(() => promises.claim("q", 300));
        yield* Effect.promise(() =>
          Promise.all(started.map((job) => promises.fail(job.jobId, "x"))),
        );
        expect(jobs).toHaveLength(300);
        // The writes fail from the second chunk on: its room is asked for after the first committed.
        let rooms = 0;
        const face = {
          jobs: promises.jobs,
          redrive: promises.redrive,
          cancel: promises.cancel,
          room: () => {
            rooms += 1;
            if (rooms === 2) disk.inject(FaultDisk.fail("write", "EIO"));
            return promises.room();
          },
        };
        return yield* Effect.promise(() =>
          Bulk.redriveAll(face).then(
            () => undefined,
            (error: unknown) => error,
          ),
        );
      }),
    );
    expect(failure).toMatchObject({ _tag: "WriterFailed" });
    disk.clearFaults();
    const states = await run(
      Effect.gen(function* () {
        const engine = yield* Engine.open("/data", { timers: false });
        return yield* engine.counts();
      }),
    );
    // The first chunk's 256 run again, durably; the other 44 were not, and nothing is half done.
    expect(states.get("q")).toMatchObject({ available: 256, discarded: 44 });
  }, 60_000);
});

describe("Bulk.cancelAll", () => {
  it("cancels what waits in a queue, leaving executing jobs unless asked", async () => {
    const engine = await open(freshDirectory());
    const waiting = await engine.insertMany(
      Array.from({ length: 4 }, (_, index) => ({ queue: "q", worker: "W", args: index })),
    );
    const later = await engine.insert({
      queue: "q",
      worker: "W",
      args: null,
      scheduledAt: Date.now() + 3_600_000,
    });
    const [running] = await engine.claim("q", 1);
    const elsewhere = await engine.insert({ queue: "r", worker: "W", args: null });
    const outcome = await Bulk.cancelAll(engine, { queue: "q" }, "drained");
    const expected = [...waiting.map((job) => job.jobId), later.jobId].filter(
      (jobId) => jobId !== running?.jobId,
    );
    expect(outcome).toEqual({ jobIds: expected, refused: [] });
    for (const jobId of expected) expect(engine.job(jobId)?.state).toBe("cancelled");
    expect(engine.job(running?.jobId ?? 0)?.state).toBe("executing");
    expect(engine.job(elsewhere.jobId)?.state).toBe("available");
    const executing = await Bulk.cancelAll(engine, { states: ["executing"] });
    expect(executing.jobIds).toEqual([running?.jobId]);
    expect(engine.job(running?.jobId ?? 0)?.state).toBe("cancelled");
    await engine.close();
  }, 60_000);
});
