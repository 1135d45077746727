/**
 * An engine with a terminal index (the default) answers every job, every
 * listing (limits included) and every count through its ordinary queries
 * (`job`, `jobs`, `counts`) as the all-in-memory engine does, on random
 * workloads (inserts with and without unique keys, completions with and
 * without results, failures, cancellations, redrives, compactions): the
 * same store reopened with `terminalIndex: false` is the reference. Its
 * index is current after a clean close, rebuilt during the open's fold
 * with the reason when deleted, rebuilt by a second fold when HEAD names
 * another sequence, and pruned by compaction's retention like the log.
 * Each check would fail if a completed job were lost, kept twice, read
 * without its result, listed out of order, or kept past its retention.
 */
import { existsSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Event, State, Value } from "@tay/core";
import * as fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Effect, Layer } from "effect";
import { Disk, type DiskService, type FileHandle } from "../../src/disk/Disk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import { endOneStep, insertStep } from "../support/promiseSteps.js";
import { theImage } from "../support/store.js";
import {
  OpenFold,
  drainItemsMin,
  openIndexing,
  openLog,
} from "../../src/engine/internal/terminalIndexing.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as FileLog from "../../src/store/FileLog.js";
import * as Import from "../../src/store/Import.js";
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
  | { readonly _tag: "redrive"; readonly pick: number }
  | { readonly _tag: "compact"; readonly all: boolean }
  | { readonly _tag: "burst"; readonly count: number };

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
  fc.record({ _tag: fc.constant("compact" as const), all: fc.boolean() }),
  // Enough completed jobs that the index writes some mid-run (`drainItemsMin`), so later steps
  // meet jobs already written beside jobs still in memory.
  fc.record({ _tag: fc.constant("burst" as const), count: fc.integer({ min: 40, max: 160 }) }),
);

const run = async (engine: EnginePromises.OpenedEngine, steps: ReadonlyArray<Step>) => {
  for (const [index, planned] of steps.entries()) {
    const queue = index % 2 === 0 ? "a" : "b";
    const ids = (state: Event.JobState) => engine.jobs({ state }).map((job) => job.jobId);
    switch (planned._tag) {
      case "insert":
        await insertStep(engine, planned.queue, planned.key, index, 1);
        break;
      case "complete":
        await endOneStep(engine, queue, "complete", planned.result, index);
        break;
      case "fail":
        await endOneStep(engine, queue, "fail", false, index);
        break;
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
      case "compact":
        // Retention 0 drops every terminal job finished before now; a day keeps them all.
        await engine.compact(planned.all ? 0 : 86_400_000);
        break;
      case "burst":
        await burst(engine, queue, planned.count, index);
        break;
    }
  }
};

/** `count` jobs inserted, claimed and ended at once: a result on every other, every fifth discarded. */
const burst = async (
  engine: EnginePromises.OpenedEngine,
  queue: string,
  count: number,
  index: number,
) => {
  await engine.insertMany(
    Array.from({ length: count }, (_, at) => ({
      queue,
      worker: "W",
      args: { index, at },
      maxAttempts: 1,
    })),
  );
  const claimed = await engine.claim(queue, count);
  await Promise.all(
    claimed.map((job, at) =>
      at % 5 === 0
        ? engine.fail(job.jobId, "burst")
        : engine.complete(job.jobId, at % 2 === 0 ? { at } : undefined),
    ),
  );
};

type Filter = EnginePromises.EnginePromises["jobs"] extends (f: infer F) => unknown ? F : never;

/**
 * Every answer an inspection gives: each job by id, every listing by state
 * and queue, with limits that stop inside and past the completed jobs.
 */
const answers = async (
  lastJobId: number,
  job: (jobId: number) => Promise<unknown>,
  jobs: (filter: Filter) => Promise<unknown>,
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
  for (const limit of [0, 1, 2, 5]) {
    listings.push(await jobs({ limit }));
    listings.push(await jobs({ state: "completed", limit }));
    listings.push(await jobs({ state: "completed", queue: "b", limit }));
  }
  // A page after any id is the whole listing's jobs past it (each engine
  // against itself; the listings then against the reference's).
  const filters: ReadonlyArray<Filter> = [
    {},
    { state: "completed" },
    { queue: "b" },
    { state: "available" },
  ];
  for (const filter of filters) {
    const whole = (await jobs(filter)) as ReadonlyArray<{ readonly jobId: number }>;
    const newestFirst = [...whole].reverse();
    expect(await jobs({ ...filter, order: "desc" })).toEqual(newestFirst);
    const bounds = [0, 1, 2, Math.floor(lastJobId / 2), lastJobId, lastJobId + 1];
    for (const after of bounds) {
      const past = whole.filter((listed) => listed.jobId > after);
      expect(await jobs({ ...filter, after }), `${JSON.stringify(filter)} after ${after}`).toEqual(
        past,
      );
      const page = await jobs({ ...filter, after, limit: 2 });
      expect(page).toEqual(past.slice(0, 2));
      listings.push(page);
      const before = after;
      const below = newestFirst.filter((listed) => listed.jobId < before);
      expect(await jobs({ ...filter, order: "desc", before })).toEqual(below);
      const older = await jobs({ ...filter, order: "desc", before, limit: 2 });
      expect(older).toEqual(below.slice(0, 2));
      listings.push(older);
      // Both bounds: the ids strictly between, in either order.
      const between = whole.filter((listed) => listed.jobId > 1 && listed.jobId < before);
      expect(await jobs({ ...filter, after: 1, before })).toEqual(between);
      expect(await jobs({ ...filter, after: 1, before, order: "desc" })).toEqual(
        [...between].reverse(),
      );
    }
  }
  return { byId, listings };
};

/** What the ordinary queries answer: every job and listing, and the counts. */
const queried = async (engine: EnginePromises.OpenedEngine, lastJobId: number) => ({
  ...(await answers(
    lastJobId,
    async (jobId) => engine.job(jobId),
    async (filter) => engine.jobs(filter),
  )),
  counts: engine.counts(),
});

/** The same through `inspectJob`/`inspectJobs`, which fail with the index's error. */
const inspected = async (engine: EnginePromises.OpenedEngine, lastJobId: number) => ({
  ...(await answers(lastJobId, engine.inspectJob, engine.inspectJobs)),
  counts: engine.counts(),
});

const indexed = async (lastJobId: number) => {
  const engine = await EnginePromises.open(dir);
  const seen = await queried(engine, lastJobId);
  expect(await inspected(engine, lastJobId)).toEqual(seen);
  const report = engine.report.terminalIndex;
  await engine.close();
  return { seen, report };
};

const reference = async (lastJobId: number) => {
  const engine = await EnginePromises.open(dir, { terminalIndex: false });
  expect(engine.report.terminalIndex).toBeNull();
  const seen = await queried(engine, lastJobId);
  await engine.close();
  return seen;
};

/**
 * NodeDisk whose terminal index entries files count their writes, and how many run at once; with
 * `gate`, each write first waits for the promise it returns (the test holds a write in flight).
 */
const countingEntriesWrites = (
  counts: { writes: number; inFlight: number; mostInFlight: number },
  gate?: () => Promise<void>,
): DiskService => {
  const counted = (file: string, handle: FileHandle): FileHandle => {
    if (path.basename(file) !== TerminalIndex.entriesName) return handle;
    const write = (position: number, bytes: Uint8Array) =>
      Effect.suspend(() => {
        counts.writes += 1;
        counts.inFlight += 1;
        counts.mostInFlight = Math.max(counts.mostInFlight, counts.inFlight);
        const opened = gate === undefined ? Effect.void : Effect.promise(gate);
        return Effect.ensuring(
          Effect.zipRight(opened, handle.write(position, bytes)),
          Effect.sync(() => {
            counts.inFlight -= 1;
          }),
        );
      });
    return { ...handle, write };
  };
  return {
    ...NodeDisk.make,
    open: (file, mode, options) =>
      Effect.map(NodeDisk.make.open(file, mode, options), (handle) => counted(file, handle)),
    create: (file, bytes) =>
      Effect.map(NodeDisk.make.create(file, bytes), (handle) => counted(file, handle)),
  };
};

describe("an engine with a terminal index", () => {
  it("answers as the all-in-memory engine on random workloads, reopened and rebuilt", async () => {
    // A fixed seed: eight unseeded samples sometimes completed no keyless job with a result,
    // and the coverage check below then failed (seen once in CI).
    const samples = fc.sample(fc.array(step, { minLength: 5, maxLength: 40 }), {
      numRuns: 12,
      seed: 20261202,
    });
    let withResults = 0;
    let writtenMidRun = 0;
    for (const steps of samples) {
      await fs.rm(dir, { recursive: true, force: true });
      // The index is the default.
      const counts = { writes: 0, inFlight: 0, mostInFlight: 0 };
      const engine = await EnginePromises.open(dir, {
        createIfMissing: true,
        disk: Layer.succeed(Disk, countingEntriesWrites(counts)),
      });
      expect(engine.report.terminalIndex?.rebuilt).toMatch(/^no HEAD/);
      await run(engine, steps);
      if (counts.writes > 0) writtenMidRun += 1;
      const lastJobId = engine.state().lastJobId;
      const live = await queried(engine, lastJobId);
      expect(await inspected(engine, lastJobId)).toEqual(live);
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
      expect(current.report).toEqual({ rebuilt: null, imageRefused: null });
      expect(current.seen).toEqual(expected);
      // Deleted: rebuilt from the log, with the reason, and the same answers again.
      await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
      const rebuilt = await indexed(lastJobId);
      expect(rebuilt.report?.rebuilt).toMatch(/^no HEAD/);
      expect(rebuilt.seen).toEqual(expected);
    }
    // The samples did complete jobs without a key with results, and some had the index write
    // before the end, so the answers mixed jobs read from it with jobs still in memory.
    expect(withResults).toBeGreaterThan(0);
    expect(writtenMidRun).toBeGreaterThan(0);
  });

  it("writes what a run of commits let go of together, one write at a time, answering meanwhile", async () => {
    const counts = { writes: 0, inFlight: 0, mostInFlight: 0 };
    const engine = await EnginePromises.open(dir, {
      createIfMissing: true,
      durability: "Throughput",
      disk: Layer.succeed(Disk, countingEntriesWrites(counts)),
    });
    const jobs = 300;
    await engine.insertMany(
      Array.from({ length: jobs }, (_, index) => ({ queue: "a", worker: "W", args: { index } })),
    );
    // One commit per completion, each awaited: each lets its job go.
    for (let index = 0; index < jobs; index++) {
      const [job] = await engine.claim("a", 1);
      if (job === undefined) throw new Error("no job to claim");
      await engine.complete(job.jobId, index % 2 === 0 ? { index } : undefined);
      // Written or not yet, the job reads whole.
      expect(engine.job(job.jobId)).toMatchObject({
        state: "completed",
        args: new Map([["index", index]]),
        result: index % 2 === 0 ? { value: new Map([["index", index]]) } : null,
      });
    }
    const live = engine.jobs({ state: "completed" });
    expect(live).toHaveLength(jobs);
    await engine.close();
    // A write per commit would be 300; batches of `drainItemsMin` jobs, and the close's, are 2.
    expect(counts.writes).toBeGreaterThan(0);
    expect(counts.writes).toBeLessThan(jobs / 4);
    expect(counts.mostInFlight).toBe(1);
    const reopened = await EnginePromises.open(dir);
    expect(reopened.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(reopened.jobs({ state: "completed" })).toEqual(live);
    await reopened.close();
  });

  it("starts a write once what commits let go of reaches drainItemsMin entries, not one later", async () => {
    const counts = { writes: 0, inFlight: 0, mostInFlight: 0 };
    const engine = await EnginePromises.open(dir, {
      createIfMissing: true,
      durability: "Throughput",
      disk: Layer.succeed(Disk, countingEntriesWrites(counts)),
    });
    await engine.insertMany(
      Array.from({ length: drainItemsMin }, (_, at) => ({ queue: "a", worker: "W", args: at })),
    );
    const claimed = await engine.claim("a", drainItemsMin);
    // Completed without a result: one entry each.
    for (const job of claimed.slice(0, -1)) await engine.complete(job.jobId);
    expect(counts.writes).toBe(0);
    const last = claimed[claimed.length - 1];
    if (last === undefined) throw new Error("nothing claimed");
    await engine.complete(last.jobId);
    for (let tries = 0; counts.writes === 0; tries++) {
      if (tries > 500) throw new Error("no entries write started at the bound");
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await engine.close();
  });

  it("serves what commits let go of while the write of earlier ones is in flight", async () => {
    // Each entries write waits until the test lets it go.
    const waiting: Array<() => void> = [];
    const gate = () => new Promise<void>((resolve) => waiting.push(resolve));
    const letOneGo = () => waiting.shift()?.();
    const counts = { writes: 0, inFlight: 0, mostInFlight: 0 };
    const engine = await EnginePromises.open(dir, {
      createIfMissing: true,
      disk: Layer.succeed(Disk, countingEntriesWrites(counts, gate)),
    });
    const untilWrites = async (writes: number) => {
      for (let tries = 0; counts.writes < writes || waiting.length === 0; tries++) {
        if (tries > 500) throw new Error(`no entries write ${writes} held`);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    };
    const completeAll = async (count: number) => {
      await engine.insertMany(
        Array.from({ length: count }, (_, at) => ({
          queue: "a",
          worker: "W",
          args: { at },
        })),
      );
      const claimed = await engine.claim("a", count);
      for (const job of claimed) await engine.complete(job.jobId, { at: job.jobId });
      return claimed.map((job) => job.jobId);
    };
    // 256 completions: one write starts, held; ten more commit behind it.
    await completeAll(256);
    await untilWrites(1);
    const behind = await completeAll(10);
    // The first write done, the drain takes what is behind it: that write is held in turn.
    letOneGo();
    await untilWrites(2);
    // Neither written by the first write nor yet by the second: read whole from memory.
    for (const jobId of behind) {
      expect(engine.job(jobId)).toMatchObject({
        state: "completed",
        result: { value: new Map([["at", jobId]]) },
      });
    }
    letOneGo();
    const all = engine.jobs({ state: "completed" });
    expect(all).toHaveLength(266);
    const closing = engine.close();
    // The close's own write of HEAD's offsets is not an entries write; let any held one go.
    const releasing = setInterval(letOneGo, 5);
    await closing;
    clearInterval(releasing);
    const reopened = await EnginePromises.open(dir);
    expect(reopened.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(reopened.jobs({ state: "completed" })).toEqual(all);
    await reopened.close();
  });

  it("prunes the index with compaction's retention, as the log", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    for (let index = 0; index < 6; index++) {
      await engine.insert({ queue: "a", worker: "W", args: index });
    }
    for (let index = 0; index < 4; index++) {
      const [job] = await engine.claim("a", 1);
      if (job !== undefined) await engine.complete(job.jobId, index);
    }
    expect(engine.jobs({ state: "completed" })).toHaveLength(4);
    // Retention 0 drops what finished before now: not in the same millisecond as the last completion.
    await new Promise((resolve) => setTimeout(resolve, 2));
    await engine.compact(0);
    expect(engine.jobs({ state: "completed" })).toEqual([]);
    expect(engine.job(1)).toBeUndefined();
    expect(engine.jobs().map((job) => job.jobId)).toEqual([5, 6]);
    await engine.close();
    const again = await EnginePromises.open(dir);
    expect(again.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(again.jobs().map((job) => job.jobId)).toEqual([5, 6]);
    await again.close();
  });

  it("keeps what a day's retention keeps, copied into the new generation's index", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    for (let index = 0; index < 5; index++) {
      await engine.insert({ queue: "a", worker: "W", args: index });
      const [job] = await engine.claim("a", 1);
      if (job !== undefined) await engine.complete(job.jobId, index % 2 === 0 ? index : undefined);
    }
    const before = engine.jobs();
    await engine.compact(86_400_000);
    expect(engine.jobs()).toEqual(before);
    expect(engine.state().terminal.size).toBe(5);
    await engine.close();
    const again = await EnginePromises.open(dir);
    expect(again.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(again.jobs()).toEqual(before);
    await again.close();
  });

  /** A list nested `depth` levels deep (a scalar is 1). */
  const nested = (depth: number): Value.Value => {
    let value: Value.Value = "leaf";
    for (let level = 1; level < depth; level++) value = [value];
    return value;
  };

  /**
   * Reopens `dir` (closed) with its index current, then with the index
   * deleted (rebuilt): both list `before`. The second engine is left open.
   */
  const reopensAlike = async (before: ReadonlyArray<unknown>) => {
    const again = await EnginePromises.open(dir);
    expect(again.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(await again.inspectJobs()).toEqual(before);
    await again.close();
    await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
    const rebuilt = await EnginePromises.open(dir);
    expect(rebuilt.report.terminalIndex?.rebuilt).toMatch(/^no HEAD/);
    expect(await rebuilt.inspectJobs()).toEqual(before);
    return rebuilt;
  };

  it("keeps the deepest args and result the deciders accept through a compaction, its index and a reopen", async () => {
    // Args 61 levels deep (a snapshot part, the index's entry and the image hold them 3 levels
    // down) and a result 63 deep (a (10,2) record holds it 1 down). Until 2026-12-05 the deciders
    // took args 63 deep, which no base or index entry could encode: the compaction failed and
    // the next open could not build its index.
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    await engine.insert({ queue: "a", worker: "W", args: nested(Value.argsDepthMax) });
    await engine.insert({ queue: "a", worker: "W", args: nested(Value.argsDepthMax) });
    const [job] = await engine.claim("a", 1);
    await engine.complete(job?.jobId ?? 0, nested(Value.resultDepthMax));
    await expect(
      engine.insert({ queue: "a", worker: "W", args: nested(Value.argsDepthMax + 1) }),
    ).rejects.toMatchObject({ _tag: "Rejected" });
    const before = await engine.inspectJobs();
    expect(before.map((held) => held.state)).toEqual(["completed", "available"]);
    await engine.compact(86_400_000);
    expect(await engine.inspectJobs()).toEqual(before);
    await engine.close();
    await (await reopensAlike(before)).close();
  });

  it("serves and reopens a store an older build wrote with args 62 and 63 deep; its compaction names the job", async () => {
    // A build before 2026-12-05 (or another writer) could insert args as deep as an insert
    // holds (63): a one-job (7,3) entry cannot nest them, so the index keeps them as a deep
    // entry (docs/store.md). Before, completing one failed every read of the index, and the
    // next open with the index failed.
    const insert = (jobId: number, depth: number) =>
      Event.jobInserted({
        jobId,
        queue: "a",
        worker: "W",
        args: nested(depth),
        priority: 0,
        maxAttempts: 1,
        scheduledAt: 0,
        insertedAt: 0,
      });
    await Effect.runPromise(
      Import.importGeneration(dir, {
        firstSequence: 1,
        baseRecordCount: 0,
        events: [insert(1, 62), insert(2, 63), insert(3, 1)],
      }).pipe(Effect.provide(NodeDisk.layer)),
    );
    // Active, they cannot be in a state image either (its base holds them as parts): the
    // close writes none, the index stays current, and the next open folds the records.
    const first = await EnginePromises.open(dir);
    await first.close();
    const engine = await EnginePromises.open(dir);
    expect(engine.report.terminalIndex).toEqual({
      rebuilt: null,
      imageRefused: "HEAD names no image",
    });
    expect(engine.job(2)?.args).toEqual(nested(63));
    const claimed = await engine.claim("a", 2);
    for (const job of claimed) await engine.complete(job.jobId, job.jobId);
    const before = await engine.inspectJobs();
    expect(before.map((job) => [job.jobId, job.state, job.result?.value ?? null])).toEqual([
      [1, "completed", 1],
      [2, "completed", 2],
      [3, "available", null],
    ]);
    expect(engine.job(2)?.args).toEqual(nested(63));
    // No base can hold them 3 levels down: refused, naming the job and where, nothing changed.
    await expect(engine.compact(86_400_000)).rejects.toThrow(
      /UnencodableEvent: .*job 1: event \(7,1\): nested deeper than 64 levels at jobs\[\d\]\.args\[0\]/,
    );
    expect(await engine.inspectJobs()).toEqual(before);
    await engine.close();
    const rebuilt = await reopensAlike(before);
    // Once the retention lets them go, the compaction goes through.
    await rebuilt.compact(0);
    expect((await rebuilt.inspectJobs()).map((job) => job.jobId)).toEqual([3]);
    await rebuilt.close();
  });

  it("compacts while completions are still being made durable, losing none", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    for (let index = 0; index < 20; index++) {
      await engine.insert({ queue: "a", worker: "W", args: index });
    }
    const claimed = await engine.claim("a", 20);
    // Issued together with the compaction: decided before it, committed around it.
    const completions = claimed.map((job) => engine.complete(job.jobId, job.jobId));
    await engine.compact(86_400_000);
    await Promise.all(completions);
    expect(engine.jobs({ state: "completed" }).map((job) => job.result?.value)).toEqual(
      claimed.map((job) => job.jobId),
    );
    await engine.close();
    const reopened = await EnginePromises.open(dir, { terminalIndex: false });
    expect(reopened.jobs({ state: "completed" })).toHaveLength(20);
    await reopened.close();
  });

  it("rebuilds with a second fold when HEAD names another sequence", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    await engine.insert({ queue: "a", worker: "W", args: 1 });
    const [job] = await engine.claim("a", 1);
    if (job !== undefined) await engine.complete(job.jobId, "one");
    await engine.close();
    // An engine without the index appends; HEAD still names the sequence before.
    const plain = await EnginePromises.open(dir, { terminalIndex: false });
    await plain.insert({ queue: "a", worker: "W", args: 2 });
    const [second] = await plain.claim("a", 1);
    if (second !== undefined) await plain.complete(second.jobId, "two");
    const expected = plain.jobs();
    await plain.close();
    // Without the state image HEAD names (with it, the open resumes and
    // catches the index up instead: StateImage.test.ts).
    await fs.rm(await theImage(dir));
    const again = await EnginePromises.open(dir);
    expect(again.report.terminalIndex?.rebuilt).toMatch(
      /^HEAD reflects sequence \d+ \(rebuilt by a second fold\)$/,
    );
    expect(again.jobs()).toEqual(expected);
    await again.close();
  });

  it("throws the index's typed error from job and jobs when its bytes change underneath", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    await engine.insert({ queue: "a", worker: "W", args: 1 });
    const [job] = await engine.claim("a", 1);
    if (job !== undefined) await engine.complete(job.jobId, "one");
    // A compaction keeping everything writes the index whole (the background writer's queue
    // first): the job is in the entries file, which is then damaged.
    await engine.compact(86_400_000);
    const entries = path.join(TerminalIndex.indexPath(dir), TerminalIndex.entriesName);
    const bytes = await fs.readFile(entries);
    expect(bytes.length).toBeGreaterThan(0);
    await fs.writeFile(entries, new Uint8Array(bytes.length));
    expect(() => engine.job(1)).toThrow(TerminalIndex.TerminalIndexCorrupt);
    // An id the state holds no fact of is not looked up: no job, not the index's failure.
    expect(engine.job(2)).toBeUndefined();
    expect(() => engine.jobs({ state: "completed" })).toThrow(TerminalIndex.TerminalIndexCorrupt);
    await expect(engine.inspectJob(1)).rejects.toMatchObject({ _tag: "TerminalIndexCorrupt" });
    await engine.close();
    // The failed read started a rebuild in the background: done before the close (the
    // index current), or not (HEAD unchanged, the zeroed entries found by the next open).
    const again = await EnginePromises.open(dir);
    const rebuilt = again.report.terminalIndex?.rebuilt ?? null;
    if (rebuilt !== null) expect(rebuilt).toMatch(/^entry at offset 0/);
    expect(again.job(1)?.result?.value).toBe("one");
    await again.close();
  });

  it("rebuilds in the background when a lookup meets a flipped payload the open did not check", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    await engine.insert({ queue: "a", worker: "W", args: "x".repeat(200) });
    const [job] = await engine.claim("a", 1);
    if (job !== undefined) await engine.complete(job.jobId, "one");
    await engine.close();
    // A payload byte of the job's entry (past its 24-byte header): the open checks headers only.
    const entries = path.join(TerminalIndex.indexPath(dir), TerminalIndex.entriesName);
    const bytes = await fs.readFile(entries);
    bytes[100] = (bytes[100] ?? 0) ^ 1;
    await fs.writeFile(entries, bytes);
    const again = await EnginePromises.open(dir);
    expect(again.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(() => again.job(1)).toThrow(TerminalIndex.TerminalIndexCorrupt);
    // The failed read started a rebuild from the log: the job answers again once it is done.
    let answered: unknown;
    for (let attempt = 0; attempt < 200 && answered === undefined; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      try {
        answered = again.job(1)?.result?.value;
      } catch {
        answered = undefined;
      }
    }
    expect(answered).toBe("one");
    await again.close();
  });

  it("compacts again from a rebuilt index when a read fails while the base is written", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    for (let index = 0; index < 30; index++) {
      await engine.insert({ queue: "a", worker: "W", args: index });
      const [job] = await engine.claim("a", 1);
      if (job !== undefined) await engine.complete(job.jobId, index % 3 === 0 ? index : undefined);
    }
    await engine.insert({ queue: "a", worker: "W", args: "active" });
    // Written whole by a first compaction, then damaged: the next one's base reads it.
    await engine.compact(86_400_000);
    const before = engine.jobs();
    const entries = path.join(TerminalIndex.indexPath(dir), TerminalIndex.entriesName);
    const bytes = await fs.readFile(entries);
    await fs.writeFile(entries, new Uint8Array(bytes.length));
    const report = await engine.compact(86_400_000);
    // The failed attempt's staged generation (epoch 3) was removed by the retry, which wrote it.
    expect(report).toMatchObject({ epoch: 3, removedEpochs: [3, 2], notRemoved: [] });
    expect(engine.jobs()).toEqual(before);
    await engine.close();
    const expected = await reference(31);
    expect(expected.listings[0]).toEqual(before);
    const reopened = await indexed(31);
    expect(reopened.report).toEqual({ rebuilt: null, imageRefused: null });
    expect(reopened.seen).toEqual(expected);
  });
});

describe("the open's rebuild of the index", () => {
  it("writes what it stages past a bound as the fold goes, the same bytes as at the end", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    // 9,000 records: the fold hands completed jobs over at record 8,192 (`collectEveryRecords`).
    const count = 3_000;
    await Promise.all(
      Array.from({ length: count }, (_, index) =>
        engine.insert({ queue: "a", worker: "W", args: { index, pad: "x".repeat(200) } }),
      ),
    );
    const claimed = await engine.claim("a", count);
    await Promise.all(
      claimed.map((job) => engine.complete(job.jobId, job.jobId % 3 === 0 ? job.jobId : undefined)),
    );
    const expected = engine.jobs();
    await engine.close();
    const entries = path.join(TerminalIndex.indexPath(dir), TerminalIndex.entriesName);
    /** Rebuilds the index by the open's fold with `bytesMax`: the entries and what was spilled. */
    const rebuilt = (bytesMax: number) =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            yield* Effect.promise(() =>
              fs.rm(TerminalIndex.indexPath(dir), { recursive: true, force: true }),
            );
            const fold = new OpenFold(yield* TerminalIndex.peek(dir), dir, bytesMax);
            const recovered = yield* FileLog.open(dir, {}, fold.projection);
            const spilled = fold.staged?.written ?? 0;
            const indexing = yield* openIndexing(dir, recovered, fold);
            yield* indexing.close(recovered.log);
            yield* recovered.log.close();
            return { spilled, bytes: yield* Effect.promise(() => fs.readFile(entries)) };
          }),
        ).pipe(Effect.provide(NodeDisk.layer)),
      );
    const atEnd = await rebuilt(TerminalIndex.stagedBytesMax);
    const asItGoes = await rebuilt(1024);
    expect(atEnd.spilled).toBe(0);
    expect(asItGoes.spilled).toBeGreaterThan(0);
    expect(asItGoes.spilled).toBeLessThan(asItGoes.bytes.length);
    // Compared as bytes: toEqual walks 2 MB in seconds.
    expect(Buffer.compare(asItGoes.bytes, atEnd.bytes)).toBe(0);
    const reopened = await EnginePromises.open(dir);
    // Closed without an engine's state: HEAD names no state image.
    expect(reopened.report.terminalIndex).toEqual({
      rebuilt: null,
      imageRefused: "HEAD names no image",
    });
    expect(reopened.jobs()).toEqual(expected);
    await reopened.close();
  });

  // Counts descriptors through Linux's /proc (CI's system); skipped where there is none.
  it.skipIf(!existsSync("/proc/self/fd"))(
    "an open that fails after the rebuild wrote entries closes the entries file",
    async () => {
      const engine = await EnginePromises.open(dir, { createIfMissing: true });
      // Over 4 MiB of records: the scan reads several chunks, and the rebuild
      // writes entries between them before the torn tail fails the open.
      const count = 9_000;
      await Promise.all(
        Array.from({ length: count }, (_, index) =>
          engine.insert({ queue: "a", worker: "W", args: { index, pad: "x".repeat(300) } }),
        ),
      );
      const claimed = await engine.claim("a", count);
      await Promise.all(claimed.map((job) => engine.complete(job.jobId, undefined)));
      await engine.close();
      await fs.rm(TerminalIndex.indexPath(dir), { recursive: true, force: true });
      const segments = path.join(dir, "epochs", "00000000000000000001", "segments");
      const last = path.join(segments, (await fs.readdir(segments)).sort().at(-1) ?? "");
      await fs.truncate(last, (await fs.stat(last)).size - 5);
      const entries = path.join(TerminalIndex.indexPath(dir), TerminalIndex.entriesName);
      /** This process's descriptors open on the entries file (Linux's /proc). */
      const openOnEntries = async () => {
        const descriptors = await fs.readdir("/proc/self/fd");
        const targets = await Promise.all(
          descriptors.map((fd) => fs.readlink(`/proc/self/fd/${fd}`).catch(() => "")),
        );
        return targets.filter((target) => target === entries).length;
      };
      const outcome = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const fold = new OpenFold(yield* TerminalIndex.peek(dir), dir, 1024);
            const failed = yield* Effect.flip(openLog(dir, {}, fold));
            return { failed, spilled: fold.staged?.written ?? 0 };
          }),
        ).pipe(Effect.provide(NodeDisk.layer)),
      );
      expect(outcome.failed._tag).toBe("IncompleteTail");
      // The rebuild had written entries (and opened the file) before the failure.
      expect(outcome.spilled).toBeGreaterThan(0);
      expect(await openOnEntries()).toBe(0);
    },
  );
});
