/**
 * The state image (docs/store.md, "The state image"): an engine's close
 * writes its committed state beside the terminal index, and the next open
 * resumes the fold from it instead of decoding and folding every record
 * again. What it must never do is hand the engine a state other than the
 * fold of the log's bytes: each case compares the reopened engine's state
 * with the whole fold of the same store (every job, fact, schedule and
 * queue, and every derived index), on random workloads, and after the log
 * or the image changed in ways a resumed open must notice: records
 * appended after the close by an engine without the index, a byte of the
 * image flipped, the image of another copy of the store at the very
 * same store, epoch and sequence (only the segments' CRCs tell it apart),
 * and segments the image names removed from the log.
 */
import * as fsSync from "node:fs";
import { existsSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { decodeValue, encodeValue } from "@tay/codec";
import { Generation, Query, State, type Value } from "@tay/core";
import { Effect, Either, Layer } from "effect";
import * as fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Disk, DiskError, type DiskService } from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import {
  drainItemsMin,
  imageWholeJobsAlways,
  OpenFold,
  openIndexing,
} from "../../src/engine/internal/terminalIndexing.js";
import { endOneStep, insertStep } from "../support/promiseSteps.js";
import { theImage } from "../support/store.js";
import * as FileLog from "../../src/store/FileLog.js";
import { decodeRecord, encodeRecordInto, recordSize } from "../../src/store/internal/codec.js";
import {
  imageEndType,
  imageHeadType,
  imageOverflowType,
  imagePagesType,
} from "../../src/store/internal/stateImageFormat.js";
import { leanFoldProjection } from "../../src/store/StateProjection.js";
import * as TerminalIndex from "../../src/store/TerminalIndex.js";

let scratch = "";
let dir = "";

beforeEach(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "tay-image-"));
  dir = path.join(scratch, "data");
});
afterEach(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});

type Step =
  | { readonly _tag: "insert"; readonly queue: string; readonly key: string | null }
  | { readonly _tag: "complete"; readonly result: boolean }
  | { readonly _tag: "fail" }
  | { readonly _tag: "cancel" }
  | { readonly _tag: "limit"; readonly count: number }
  | { readonly _tag: "pause"; readonly paused: boolean }
  | { readonly _tag: "compact"; readonly all: boolean }
  | { readonly _tag: "burst"; readonly count: number }
  | { readonly _tag: "reopen" };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      _tag: fc.constant("insert" as const),
      queue: fc.constantFrom("a", "b", "limited"),
      key: fc.oneof(
        { weight: 3, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom("k1", "k2") },
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ _tag: fc.constant("complete" as const), result: fc.boolean() }),
  },
  fc.record({ _tag: fc.constant("fail" as const) }),
  fc.record({ _tag: fc.constant("cancel" as const) }),
  fc.record({ _tag: fc.constant("limit" as const), count: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ _tag: fc.constant("pause" as const), paused: fc.boolean() }),
  fc.record({ _tag: fc.constant("compact" as const), all: fc.boolean() }),
  fc.record({ _tag: fc.constant("burst" as const), count: fc.integer({ min: 5, max: 60 }) }),
  fc.record({ _tag: fc.constant("reopen" as const) }),
);

/** Runs `steps`, reopening (resumed from the image) where a step says so; the engine left open. */
const run = async (
  opened: EnginePromises.OpenedEngine,
  steps: ReadonlyArray<Step>,
  options: EnginePromises.OpenOptions = {},
): Promise<EnginePromises.OpenedEngine> => {
  let engine = opened;
  for (const [index, planned] of steps.entries()) {
    const queue = (["a", "b", "limited"] as const)[index % 3] ?? "a";
    switch (planned._tag) {
      case "insert":
        await insertStep(engine, planned.queue, planned.key, index, 2);
        break;
      case "complete":
        await endOneStep(engine, queue, "complete", planned.result, index);
        break;
      case "fail":
        await endOneStep(engine, queue, "fail", false, index);
        break;
      case "cancel": {
        const [job] = engine.jobs({ state: "available" });
        if (job !== undefined) await engine.cancel(job.jobId);
        break;
      }
      case "limit":
        // The rate-limit window is what a base does not carry: the image does.
        await engine.setQueueLimits("limited", {
          rateLimit: { count: planned.count, perMs: 3_600_000 },
        });
        // A start under the limit, if a job waits: the window then holds it.
        await engine.insert({ queue: "limited", worker: "W", args: { index } });
        await engine.claim("limited", 1);
        break;
      case "pause":
        await (planned.paused ? engine.pauseQueue("b") : engine.resumeQueue("b"));
        break;
      case "compact":
        await engine.compact(planned.all ? 0 : 86_400_000);
        break;
      case "burst": {
        await engine.insertMany(
          Array.from({ length: planned.count }, (_, at) => ({ queue, worker: "W", args: { at } })),
        );
        const claimed = await engine.claim(queue, planned.count);
        await Promise.all(
          claimed.map((job, at) => engine.complete(job.jobId, at % 2 === 0 ? { at } : undefined)),
        );
        break;
      }
      case "reopen":
        await engine.close();
        engine = await EnginePromises.open(dir, options);
        expect(engine.report.terminalIndex?.imageRefused).toBeNull();
        break;
    }
  }
  return engine;
};

/** The lean fold of every record of the store in `dir`, from nothing. */
const wholeFold = (): Promise<State.State> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const recovered = yield* FileLog.open(dir, {}, leanFoldProjection);
        yield* recovered.log.close();
        const finished = Generation.finish(recovered.state);
        if (finished._tag === "Left") return yield* Effect.die(finished.left);
        return finished.right;
      }),
    ).pipe(Effect.provide(NodeDisk.layer)),
  );

/** Everything a state holds and derives, in a form `toEqual` compares whole. */
const everything = (state: State.State) => ({
  lastJobId: state.lastJobId,
  lean: state.lean,
  jobs: [...state.jobs.entries()],
  facts: [...state.terminal.entries()],
  schedules: [...state.schedules.entries()],
  queues: [...state.queues.entries()],
  available: [...state.indexes.available.entries()].map(([queue, jobs]) => [
    queue,
    [...jobs.keys()].map((job) => job.jobId),
  ]),
  pending: [...state.indexes.pending.keys()].map((job) => job.jobId),
  executing: [...state.indexes.executing.keys()].map((job) => job.jobId),
  deadlines: [...state.indexes.deadlines.keys()].map((job) => job.jobId),
  due: [...state.indexes.due.keys()].map((schedule) => schedule.scheduleId),
  counts: [...state.indexes.counts.entries()],
  unique: [...state.indexes.unique.entries()],
  starts: [...state.indexes.starts.entries()],
  schema3: state.indexes.schema3,
  wake: Query.nextWakeAt(state, 5),
});

/** Reopens the store: the engine's state and open report, then the whole fold to compare with. */
const reopened = async () => {
  const engine = await EnginePromises.open(dir);
  const state = engine.state();
  const report = engine.report.terminalIndex;
  await engine.close();
  const folded = await wholeFold();
  expect(State.equals(state, folded)).toBe(true);
  expect(everything(state)).toEqual(everything(folded));
  return { state, report };
};

/** What HEAD of the crashed copy vouched for before (`before`: the entries' length it names). */
const headOf = async (directory: string) => {
  const head = await Effect.runPromise(
    Effect.provide(TerminalIndex.peek(directory), NodeDisk.layer),
  );
  if ("_tag" in head) throw new Error(`no HEAD: ${head._tag}`);
  return {
    before: head.entriesBytes,
    sequence: head.lastSequence,
    image: head.image !== undefined,
  };
};

/**
 * Copies the directory `from` to `to` as its files are at this instant, in
 * one synchronous run (nothing else of the process runs meanwhile); a file
 * removed by a write already in flight is left out, as a crash would.
 */
const copyAsIs = (from: string, to: string): void => {
  fsSync.mkdirSync(to, { recursive: true });
  for (const entry of fsSync.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    try {
      if (entry.isDirectory()) copyAsIs(source, target);
      else fsSync.copyFileSync(source, target);
    } catch (error) {
      if (!(error instanceof Error && "code" in error && error.code === "ENOENT")) throw error;
    }
  }
};

/** Every file under `directory` with its size and modification time, in one string. */
const treeSignature = (directory: string): string => {
  const parts: Array<string> = [];
  const walk = (at: string): void => {
    for (const entry of fsSync.readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name);
      try {
        if (entry.isDirectory()) walk(file);
        else {
          const stat = fsSync.statSync(file);
          parts.push(`${file}:${stat.size}:${stat.mtimeMs}`);
        }
      } catch (error) {
        if (!(error instanceof Error && "code" in error && error.code === "ENOENT")) throw error;
        parts.push(`${file}:gone`);
      }
    }
  };
  walk(directory);
  return parts.join("\n");
};

/**
 * What a crash of a running engine leaves, once its background writes (the
 * index's drains, a checkpoint) have stopped: the directory copied while no
 * file changes, so that the copy is a state the disk could hold at one
 * instant. A copy taken while a write or a rename ran mixed files from
 * before and after it (seen under load: a HEAD.tmp renamed away mid-copy).
 */
const settledCopy = async (from: string, to: string): Promise<void> => {
  for (let attempt = 0; attempt < 100; attempt++) {
    const before = await settled(from);
    fsSync.rmSync(to, { recursive: true, force: true });
    copyAsIs(from, to);
    if (treeSignature(from) === before) return;
  }
  throw new Error(`${from} changed during every copy`);
};

/** Resolves once no file under `directory` changed for 20 ms (the engine's background writes ended); its signature. */
const settled = async (directory: string): Promise<string> => {
  let before = treeSignature(directory);
  for (let attempt = 0; attempt < 500; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const now = treeSignature(directory);
    if (now === before) return now;
    before = now;
  }
  throw new Error(`${directory} never stopped changing`);
};

/** Whether `read` answers rather than throws (the index's failure, until it is rebuilt). */
const answers = (read: () => unknown): boolean => {
  try {
    read();
    return true;
  } catch {
    return false;
  }
};

/** A store of a few jobs, closed cleanly (so HEAD names an image). */
const small = async (directory: string, who: string) => {
  const engine = await EnginePromises.open(directory, { createIfMissing: true });
  for (let index = 0; index < 6; index++) {
    await engine.insert({ queue: "a", worker: "W", args: { who, index } });
  }
  const claimed = await engine.claim("a", 3);
  for (const job of claimed) await engine.complete(job.jobId, { who });
  await engine.close();
};

describe("the state image", () => {
  it("resumes the open to the state the whole fold gives, on random workloads", async () => {
    const samples = fc.sample(fc.array(step, { minLength: 5, maxLength: 40 }), {
      numRuns: 12,
      seed: 20261204,
    });
    let withStarts = 0;
    let withFacts = 0;
    for (const steps of samples) {
      await fs.rm(dir, { recursive: true, force: true });
      const first = await EnginePromises.open(dir, { createIfMissing: true });
      const engine = await run(first, steps);
      await engine.close();
      // (The reopened engine rescues the jobs left executing: its state is the fold of the
      // records written after that, which `reopened` compares it with.)
      const { state, report } = await reopened();
      expect(report?.imageRefused).toBeNull();
      if (state.indexes.starts.size > 0) withStarts += 1;
      if (state.terminal.size > 0) withFacts += 1;
    }
    // The samples reached what only the image carries beside the base.
    expect(withStarts).toBeGreaterThan(0);
    expect(withFacts).toBeGreaterThan(0);
  });

  it("carries a rate-limited queue's window, which a base does not", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    await engine.setQueueLimits("limited", { rateLimit: { count: 3, perMs: 3_600_000 } });
    for (let index = 0; index < 5; index++) {
      await engine.insert({ queue: "limited", worker: "W", args: { index } });
    }
    expect(await engine.claim("limited", 2)).toHaveLength(2);
    await engine.close();
    const { state, report } = await reopened();
    expect(report?.imageRefused).toBeNull();
    expect(state.indexes.starts.get("limited")).toHaveLength(2);
    // The window holds: one more start within the hour, not two.
    const again = await EnginePromises.open(dir);
    expect(await again.claim("limited", 2)).toHaveLength(1);
    await again.close();
  });

  it("goes on from the resumed state: later commands, closes and opens fold alike", async () => {
    await small(dir, "a");
    const engine = await EnginePromises.open(dir);
    expect(engine.report.terminalIndex?.imageRefused).toBeNull();
    const [job] = await engine.claim("a", 1);
    if (job !== undefined) await engine.complete(job.jobId, { again: true });
    await engine.insert({ queue: "a", worker: "W", args: { later: true } });
    await engine.close();
    const { report } = await reopened();
    expect(report?.imageRefused).toBeNull();
  });

  it("resumes and catches the index up when an engine without the index appended after the close", async () => {
    await small(dir, "a");
    const plain = await EnginePromises.open(dir, { terminalIndex: false });
    await plain.insert({ queue: "a", worker: "W", args: { unseen: true } });
    const [job] = await plain.claim("a", 1);
    if (job !== undefined) await plain.complete(job.jobId, { by: "plain" });
    const expected = plain.jobs();
    await plain.close();
    // HEAD and the image still name the old last sequence; the active
    // segment grew: its bytes up to the image's end are the ones folded.
    const engine = await EnginePromises.open(dir);
    expect(engine.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(engine.jobs()).toEqual(expected);
    expect(engine.job(job?.jobId ?? 0)?.result?.value).toEqual(new Map([["by", "plain"]]));
    await engine.close();
    const { state, report } = await reopened();
    expect(report).toEqual({ rebuilt: null, imageRefused: null });
    expect(
      [...State.jobs(state)].some((one) => one.args instanceof Map && one.args.has("unseen")),
    ).toBe(true);
  });

  it("resumes after a crash from the last close's image; entries written past HEAD are cut and written again", async () => {
    await small(dir, "a");
    const engine = await EnginePromises.open(dir);
    // More completed jobs than a drain waits for: entries go past what HEAD vouches for.
    const count = drainItemsMin + 44;
    await engine.insertMany(
      Array.from({ length: count }, (_, at) => ({ queue: "b", worker: "W", args: { at } })),
    );
    for (const claimed of await engine.claim("b", count)) {
      await engine.complete(
        claimed.jobId,
        claimed.jobId % 3 === 0 ? { id: claimed.jobId } : undefined,
      );
    }
    await engine.insert({ queue: "b", worker: "W", args: { last: true } });
    // What a crash leaves: the directory as it is, the engine never closed
    // (HEAD names the image of the open's start), plus bytes past the
    // entries HEAD vouches for that no write finished.
    const crashed = path.join(scratch, "crashed");
    await settledCopy(dir, crashed);
    const expected = engine.jobs();
    await engine.close();
    const entries = path.join(TerminalIndex.indexPath(crashed), TerminalIndex.entriesName);
    const head = await Effect.runPromise(
      Effect.provide(TerminalIndex.peek(crashed), NodeDisk.layer),
    );
    if ("_tag" in head) throw new Error(`no HEAD: ${head._tag}`);
    expect((await fs.stat(entries)).size).toBeGreaterThan(head.entriesBytes);
    // More of them than the tail written again covers: only the cut removes them all.
    await fs.appendFile(entries, new Uint8Array(1024 * 1024).fill(0xa5));
    dir = crashed;
    const again = await EnginePromises.open(dir);
    expect(again.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(again.jobs()).toEqual(expected);
    await again.close();
    // The bytes past HEAD were cut before the tail was written again.
    const closed = await Effect.runPromise(Effect.provide(TerminalIndex.peek(dir), NodeDisk.layer));
    expect("_tag" in closed ? -1 : closed.entriesBytes).toBe((await fs.stat(entries)).size);
    const { report } = await reopened();
    expect(report).toEqual({ rebuilt: null, imageRefused: null });
  });

  it("catches up a long tail as the fold goes, the same bytes as at the end", async () => {
    await small(dir, "start");
    const engine = await EnginePromises.open(dir);
    // 9,000 records after the image: the fold hands completed jobs over every 4,096.
    const count = 3_000;
    await engine.insertMany(
      Array.from({ length: count }, (_, index) => ({
        queue: "b",
        worker: "W",
        args: { index, pad: "x".repeat(200) },
      })),
    );
    const claimed = await engine.claim("b", count);
    await Promise.all(
      claimed.map((job) => engine.complete(job.jobId, job.jobId % 3 === 0 ? job.jobId : undefined)),
    );
    const crashed = path.join(scratch, "crashed");
    await settledCopy(dir, crashed);
    const expected = engine.jobs();
    await engine.close();
    // Bytes past the entries HEAD vouches for that no write finished, more than the tail
    // written again covers: both ways cut them first.
    await fs.appendFile(
      path.join(TerminalIndex.indexPath(crashed), TerminalIndex.entriesName),
      new Uint8Array(4 * 1024 * 1024).fill(0xa5),
    );
    /** Catches a copy of the crashed store up with `bytesMax`: what was spilled, the entries, the jobs. */
    const caughtUp = async (bytesMax: number) => {
      const copy = path.join(scratch, `copy-${bytesMax}`);
      await fs.cp(crashed, copy, { recursive: true });
      const entries = path.join(TerminalIndex.indexPath(copy), TerminalIndex.entriesName);
      const spilled = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const found = yield* TerminalIndex.peek(copy);
            const image = yield* TerminalIndex.peekImage(copy, found);
            const fold = new OpenFold(found, copy, bytesMax, image);
            const recovered = yield* FileLog.open(copy, {}, fold.projection);
            expect(fold.imageRefused).toBeNull();
            const written = fold.staged?.written ?? 0;
            const indexing = yield* openIndexing(copy, recovered, fold);
            expect(indexing.report).toEqual({ rebuilt: null, imageRefused: null });
            yield* indexing.close(recovered.log);
            yield* recovered.log.close();
            return written;
          }),
        ).pipe(Effect.provide(NodeDisk.layer)),
      );
      const bytes = await fs.readFile(entries);
      const reopened = await EnginePromises.open(copy);
      const jobs = reopened.jobs();
      await reopened.close();
      return { spilled, bytes, jobs };
    };
    const { before } = await headOf(crashed);
    const atEnd = await caughtUp(TerminalIndex.stagedBytesMax);
    const asItGoes = await caughtUp(1024);
    // Nothing past HEAD's entries written before the end, or some as the fold went.
    expect(atEnd.spilled).toBe(before);
    expect(asItGoes.spilled).toBeGreaterThan(before);
    // Compared as bytes: toEqual walks 2 MB in seconds.
    expect(Buffer.compare(asItGoes.bytes, atEnd.bytes)).toBe(0);
    expect(atEnd.jobs).toEqual(expected);
    expect(asItGoes.jobs).toEqual(expected);
  });

  it("writes a checkpoint once enough records were committed; a crash after it resumes from there", async () => {
    await small(dir, "start");
    const opened = await headOf(dir);
    const engine = await EnginePromises.open(dir, { checkpointRecords: 50 });
    for (let index = 0; index < 40; index++) {
      await engine.insert({ queue: "a", worker: "W", args: { index } });
      const [job] = await engine.claim("a", 1);
      if (job !== undefined)
        await engine.complete(job.jobId, index % 2 === 0 ? { index } : undefined);
    }
    await settled(dir);
    // One commit more once the writes have settled: a checkpoint is taken at a commit, and one
    // still running when the 100th record committed (a loaded machine) let that turn pass.
    await engine.insert({ queue: "a", worker: "W", args: { index: "last" } });
    await settled(dir);
    // 121 records: a checkpoint at 50 and one at 100 or so, each at an idle moment.
    const head = await headOf(dir);
    expect(head.sequence).toBeGreaterThanOrEqual(opened.sequence + 100);
    expect(head.image).toBe(true);
    const crashed = path.join(scratch, "crashed");
    await settledCopy(dir, crashed);
    const expected = engine.jobs();
    await engine.close();
    dir = crashed;
    const again = await EnginePromises.open(dir);
    expect(again.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(again.jobs()).toEqual(expected);
    await again.close();
    await reopened();
  });

  it("writes a checkpoint at the commit that completes the interval exactly", async () => {
    await small(dir, "start");
    const opened = await headOf(dir);
    const engine = await EnginePromises.open(dir, { checkpointRecords: 40 });
    // Thirteen jobs of three records each (39), then the 40th record: the interval exactly (the
    // state's 20 jobs at most, whole and as facts, keep it at 40).
    for (let index = 0; index < 13; index++) {
      await engine.insert({ queue: "a", worker: "W", args: { index } });
      for (const job of await engine.claim("a", 1)) await engine.complete(job.jobId);
    }
    await engine.insert({ queue: "a", worker: "W", args: { index: "fortieth" } });
    await settled(dir);
    const head = await headOf(dir);
    expect([head.sequence - opened.sequence, head.image]).toEqual([40, true]);
    await engine.close();
  });

  it("after a rebuild of the index (HEAD without an image), counts the interval from the generation's start", async () => {
    await small(dir, "start");
    const engine = await EnginePromises.open(dir, { checkpointRecords: 40 });
    // Jobs inserted, claimed and completed (three records each, so that the jobs held stay
    // below the interval) until a checkpoint after `after`: at the fortieth record, or a few
    // later when a commit found the store's writes under way (a checkpoint is taken only where
    // the segments' digests are known).
    const untilImage = async (after: number, jobsMax: number) => {
      for (let index = 0; index < jobsMax; index++) {
        await engine.insert({ queue: "a", worker: "W", args: { index } });
        for (const job of await engine.claim("a", 1)) await engine.complete(job.jobId);
        await settled(dir);
        const head = await headOf(dir);
        if (head.image && head.sequence > after) return head.sequence;
      }
      return undefined;
    };
    // HEAD names the image of the clean close; the next one is a checkpoint's.
    const imaged = await untilImage((await headOf(dir)).sequence, 20);
    if (imaged === undefined) throw new Error("no checkpoint in 60 records");
    // Damaged entries: a read fails and the index is rebuilt; its HEAD names no image.
    const entries = path.join(TerminalIndex.indexPath(dir), TerminalIndex.entriesName);
    await fs.writeFile(entries, new Uint8Array((await fs.readFile(entries)).length));
    expect(() => engine.job(1)).toThrow(TerminalIndex.TerminalIndexCorrupt);
    // The rebuild runs in the background: its index answers once it is swapped in.
    for (let tries = 0; !answers(() => engine.job(1)); tries++) {
      if (tries > 6000) throw new Error("the index was never rebuilt");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await settled(dir);
    const rebuilt = await headOf(dir);
    expect(rebuilt.image).toBe(false);
    // The image the interval counted from is gone: counted from the generation's start, the
    // next commit (or one soon after) is past it and writes a checkpoint, before forty records
    // more than that image.
    const next = await untilImage(rebuilt.sequence, 6);
    expect(next ?? Number.POSITIVE_INFINITY).toBeLessThan(imaged + 40);
    await engine.close();
  });

  it.each([
    ["one segment", undefined],
    ["segments sealed after the checkpoint", 1500],
  ])(
    "writes checkpoints under a load that never leaves the store idle; a crash resumes from one (%s)",
    async (_, rotationTargetBytes) => {
      await small(dir, "start");
      const opened = await headOf(dir);
      const head = path.join(TerminalIndex.indexPath(dir), TerminalIndex.headName);
      const crashed = path.join(scratch, "crashed");
      let crashedAt: number | undefined;
      let index = 0;
      // Each segment sync takes 3 ms while a job is started every
      // millisecond or so: whenever a commit is told, later records are
      // pending or being written. The first checkpoint's HEAD, once renamed
      // into place, is a crash: the copy is what the disk holds then (taken
      // at once, nothing else runs meanwhile but writes already in flight).
      const slow: DiskService = {
        ...NodeDisk.make,
        open: (file, mode) =>
          Effect.map(NodeDisk.make.open(file, mode), (handle) =>
            file.endsWith(".tay")
              ? { ...handle, sync: () => Effect.zipRight(Effect.sleep(3), handle.sync()) }
              : handle,
          ),
        rename: (source, target) =>
          Effect.tap(NodeDisk.make.rename(source, target), () => {
            if (target !== head || crashedAt !== undefined || index === 0) return;
            crashedAt = index;
            copyAsIs(dir, crashed);
          }),
      };
      const engine = await EnginePromises.open(dir, {
        checkpointRecords: 40,
        disk: Layer.succeed(Disk, slow),
        ...(rotationTargetBytes === undefined ? {} : { rotationTargetBytes }),
      });
      const started: Array<Promise<unknown>> = [];
      // Three records a job (the interval grows with the jobs the state holds).
      const work = async (at: number) => {
        await engine.insert({ queue: "a", worker: "W", args: { at } });
        for (const job of await engine.claim("a", 1)) await engine.complete(job.jobId, { at });
      };
      // Jobs go on being started until the first checkpoint's HEAD is in place (about 100 jobs on
      // an idle machine; a loaded one, whose image writes run slower, needs more).
      const jobsMax = 2_000;
      for (index = 1; index <= jobsMax && crashedAt === undefined; index++) {
        started.push(work(index));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await Promise.all(started);
      await engine.close();
      // A checkpoint was written while jobs were still being started, not by the close.
      expect(crashedAt).toBeLessThanOrEqual(jobsMax);
      const during = await headOf(crashed);
      expect(during.image).toBe(true);
      expect(during.sequence).toBeGreaterThanOrEqual(opened.sequence + 40);
      dir = crashed;
      const { report } = await reopened();
      expect(report).toEqual({ rebuilt: null, imageRefused: null });
    },
  );

  it("writes no checkpoint with checkpointRecords false, and refuses a count that is not one", async () => {
    await small(dir, "start");
    const opened = await headOf(dir);
    const engine = await EnginePromises.open(dir, { checkpointRecords: false });
    for (let index = 0; index < 40; index++) {
      await engine.insert({ queue: "a", worker: "W", args: { index } });
    }
    await settled(dir);
    expect((await headOf(dir)).sequence).toBe(opened.sequence);
    await engine.close();
    for (const checkpointRecords of [0, 1.5, -3]) {
      await expect(EnginePromises.open(dir, { checkpointRecords })).rejects.toMatchObject({
        _tag: "InvalidArgument",
        argument: "checkpointRecords",
      });
    }
  });

  it("resumes after a crash to the state the whole fold gives, on random workloads", async () => {
    const samples = fc.sample(fc.array(step, { minLength: 5, maxLength: 30 }), {
      numRuns: 8,
      seed: 20261205,
    });
    const original = dir;
    let resumed = 0;
    for (const [at, steps] of samples.entries()) {
      dir = original;
      await fs.rm(dir, { recursive: true, force: true });
      await small(dir, "start");
      // Checkpoints every few records (some samples none: `false`).
      // No timers: nothing commits between the copy and the answers compared.
      const options: EnginePromises.OpenOptions = {
        checkpointRecords: at % 4 === 3 ? false : 1 + (at % 3) * 7,
        timers: false,
      };
      const engine = await run(await EnginePromises.open(dir, options), steps, options);
      const crashed = path.join(scratch, `crashed-${at}`);
      await settledCopy(dir, crashed);
      const expected = engine.jobs();
      await engine.close();
      dir = crashed;
      // The index answers as before the crash (what it vouched for, caught up).
      const again = await EnginePromises.open(dir, { rescueOnOpen: false });
      expect(again.jobs()).toEqual(expected);
      if (again.report.terminalIndex?.imageRefused === null) resumed += 1;
      await again.close();
      // A compaction leaves HEAD without an image: then the open folds.
      await reopened();
      await fs.rm(crashed, { recursive: true, force: true });
    }
    dir = original;
    expect(resumed).toBeGreaterThan(0);
  });

  it("never resumes from another copy's image at the same store, epoch and sequence", async () => {
    await small(dir, "start");
    const other = path.join(scratch, "other");
    await fs.cp(dir, other, { recursive: true });
    // The copies diverge by the same number of records of the same lengths:
    // only the bytes differ.
    for (const [directory, who] of [
      [dir, "mine"],
      [other, "them"],
    ] as const) {
      const engine = await EnginePromises.open(directory);
      await engine.insert({ queue: "a", worker: "W", args: { who } });
      await engine.close();
    }
    await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
    await fs.cp(TerminalIndex.indexPath(other), TerminalIndex.indexPath(dir), { recursive: true });
    const { state, report } = await reopened();
    expect(report?.imageRefused).toMatch(/first pass, resumed from the image, failed/);
    const whos = [...State.jobs(state)].map((job) =>
      job.args instanceof Map ? job.args.get("who") : null,
    );
    expect(whos).toContain("mine");
    expect(whos).not.toContain("them");
  });

  it("folds from nothing when the image's bytes are not those HEAD names", async () => {
    await small(dir, "a");
    const image = await theImage(dir);
    const bytes = await fs.readFile(image);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 0x40;
    await fs.writeFile(image, bytes);
    const { report } = await reopened();
    expect(report?.imageRefused).toMatch(/not the one HEAD names/);
  });

  it("folds from nothing when HEAD names no image or the image is gone", async () => {
    await small(dir, "a");
    await fs.rm(await theImage(dir));
    const gone = await reopened();
    expect(gone.report?.imageRefused).toMatch(/image unreadable/);
    // That open's close wrote a new one.
    const again = await reopened();
    expect(again.report?.imageRefused).toBeNull();
  });

  it("publishes HEAD without an image the disk would not take, and the next open folds", async () => {
    await small(dir, "a");
    // A disk with no room for the image: creating its temporary file fails with ENOSPC.
    const image = path.join(TerminalIndex.indexPath(dir), TerminalIndex.imageTemporaryName);
    const full: DiskService = {
      ...NodeDisk.make,
      open: (file, mode, options) =>
        file === image
          ? Effect.fail(
              new DiskError({ operation: "open", path: file, code: "ENOSPC", detail: "full" }),
            )
          : NodeDisk.make.open(file, mode, options),
    };
    const engine = await EnginePromises.open(dir, { disk: Layer.succeed(Disk, full) });
    expect(engine.report.terminalIndex?.imageRefused).toBeNull();
    await engine.insert({ queue: "a", worker: "W", args: { later: true } });
    await engine.close();
    const { report } = await reopened();
    expect(report?.rebuilt).toBeNull();
    expect(report?.imageRefused).toBe("HEAD names no image");
  });

  it("keeps the image HEAD names when a crash falls between a new image and its HEAD", async () => {
    await small(dir, "a");
    const index = TerminalIndex.indexPath(dir);
    const before = await theImage(dir);
    // The close's HEAD is never renamed into place, as if the process died
    // right after its image's rename: the HEAD of the last close stays.
    const head = path.join(index, TerminalIndex.headName);
    const dies: DiskService = {
      ...NodeDisk.make,
      rename: (source, target) =>
        target === head
          ? Effect.fail(
              new DiskError({ operation: "rename", path: target, code: "EIO", detail: "" }),
            )
          : NodeDisk.make.rename(source, target),
    };
    const engine = await EnginePromises.open(dir, { disk: Layer.succeed(Disk, dies) });
    for (let index = 0; index < 5; index++) {
      await engine.insert({ queue: "a", worker: "W", args: { later: index } });
    }
    const [job] = await engine.claim("a", 1);
    if (job !== undefined) await engine.complete(job.jobId, { later: true });
    const expected = engine.jobs();
    await engine.close().catch(() => undefined);
    // The new image was written beside the one HEAD names, never over it.
    const images = (await fs.readdir(index)).filter(TerminalIndex.isImageFile);
    expect(images).toHaveLength(2);
    expect(images).toContain(path.basename(before));
    // An older build's one image, `image`, is removed by the next publish too.
    await fs.writeFile(path.join(index, "image"), "older");
    // A temporary offsets file a crash cut short (each publish names its own).
    await fs.writeFile(path.join(index, "offsets-1-7-0000beef.tmp"), "cut");
    const again = await EnginePromises.open(dir);
    expect(again.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(again.jobs()).toEqual(expected);
    await again.close();
    // That close's publish removed every image but its own.
    expect(await theImage(dir)).not.toBe(before);
    expect(existsSync(path.join(index, "image"))).toBe(false);
    expect(existsSync(path.join(index, "offsets-1-7-0000beef.tmp"))).toBe(false);
    await reopened();
  });

  it("is not written for a backlog of active jobs, whose fold costs less than its image", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    // More jobs held whole than the image is always written for, in few records.
    const count = imageWholeJobsAlways + 100;
    for (let from = 0; from < count; from += 1000) {
      await engine.insertMany(
        Array.from({ length: Math.min(1000, count - from) }, (_, at) => ({
          queue: "a",
          worker: "W",
          args: { at: from + at },
        })),
      );
    }
    await engine.close();
    const { state, report } = await reopened();
    expect(State.jobCount(state)).toBe(count);
    expect(report?.imageRefused).toBe("HEAD names no image");
  });

  it("is written for exactly imageWholeJobsAlways jobs held whole, in few records", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    for (let from = 0; from < imageWholeJobsAlways; from += 1024) {
      await engine.insertMany(
        Array.from({ length: 1024 }, (_, at) => ({
          queue: "a",
          worker: "W",
          args: { at: from + at },
        })),
      );
    }
    await engine.close();
    const { state, report } = await reopened();
    expect(State.jobCount(state)).toBe(imageWholeJobsAlways);
    expect(report?.imageRefused).toBeNull();
  });

  it("is not resumed from when the generation holds fewer segments than it names", async () => {
    // Segments of a few records each: the close's image names several.
    const engine = await EnginePromises.open(dir, {
      createIfMissing: true,
      rotationTargetBytes: 2048,
    });
    for (let index = 0; index < 40; index++) {
      await engine.insert({ queue: "a", worker: "W", args: { index } });
    }
    await engine.close();
    const segmentsDir = path.join(dir, "epochs", "00000000000000000001", "segments");
    const names = (await fs.readdir(segmentsDir)).sort();
    expect(names.length).toBeGreaterThan(3);
    // The two highest segments gone (the last one the close's rotation left
    // empty): the log is a shorter valid one, whose last jobs the image
    // still holds. Resumed from it, the state would hold them.
    for (const name of names.slice(-2)) await fs.rm(path.join(segmentsDir, name));
    const { state } = await reopened();
    expect(state.lastJobId).toBeLessThan(40);
  });

  it("decodes what it encodes, and refuses a cut or flipped image by its records' CRCs", async () => {
    await small(dir, "a");
    const image = await fs.readFile(await theImage(dir));
    const decoded = TerminalIndex.decodeImage(image);
    expect(Either.isRight(decoded)).toBe(true);
    for (const at of [0, 10, Math.floor(image.length / 2), image.length - 1]) {
      const flipped = Uint8Array.from(image);
      flipped[at] = (flipped[at] ?? 0) ^ 0x01;
      expect(Either.isLeft(TerminalIndex.decodeImage(flipped))).toBe(true);
    }
    // Every cut is refused, at a record's end too (the end record).
    for (let cut = 0; cut < image.length; cut++) {
      expect(Either.isLeft(TerminalIndex.decodeImage(image.subarray(0, cut))), `cut ${cut}`).toBe(
        true,
      );
    }
    // Never a throw, whatever the bytes: cut anywhere, bytes overwritten anywhere.
    fc.assert(
      fc.property(
        fc.nat({ max: image.length }),
        fc.array(fc.tuple(fc.nat({ max: image.length - 1 }), fc.nat({ max: 255 })), {
          maxLength: 4,
        }),
        (cut, writes) => {
          const bytes = Uint8Array.from(image.subarray(0, cut));
          for (const [at, value] of writes) if (at < bytes.length) bytes[at] = value;
          const decoded = TerminalIndex.decodeImage(bytes);
          // (Two writes at one offset may put its byte back.)
          const same = Buffer.compare(bytes, image) === 0;
          expect(Either.isLeft(decoded)).toBe(!same);
        },
      ),
      { numRuns: 300 },
    );
  });
  it("survives a power cut after a clean close: the next open takes the index and resumes from the image", async () => {
    const disk = FaultDisk.make();
    disk.seedDirectory("/data");
    const engine = await EnginePromises.open("/data", {
      createIfMissing: true,
      disk: FaultDisk.layer(disk),
    });
    for (let index = 0; index < 6; index++) {
      await engine.insert({ queue: "a", worker: "W", args: { index } });
    }
    const claimed = await engine.claim("a", 3);
    for (const job of claimed) await engine.complete(job.jobId, job.jobId * 10);
    const expected = engine.jobs();
    await engine.close();
    // Only what the close made durable is left: the entries, the image, the offsets and HEAD.
    const survivor = disk.crash();
    const again = await EnginePromises.open("/data", { disk: FaultDisk.layer(survivor) });
    expect(again.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect(again.jobs()).toEqual(expected);
    for (const job of claimed) expect(again.job(job.jobId)?.result?.value).toBe(job.jobId * 10);
    await again.close();
  });
  it("refuses an image whose records are misnumbered, out of their order or followed by bytes, whose facts are cut or out of range, or whose head is of another format", async () => {
    await small(dir, "a");
    const image = await fs.readFile(await theImage(dir));
    // The image's records, to be framed again in another order or numbering.
    type Framed = { readonly type: number; readonly schema: number; readonly payload: Uint8Array };
    const records: Array<Framed> = [];
    for (let offset = 0; offset < image.length; ) {
      const decoded = decodeRecord(image, offset);
      if (decoded._tag !== "Record") return expect.unreachable(decoded._tag);
      const { type, schema, payload } = decoded.record;
      records.push({ type, schema, payload });
      offset += decoded.size;
    }
    const [head, ...rest] = records;
    const events = rest.filter(({ type }) => type < imageHeadType);
    const end = records[records.length - 1];
    if (head === undefined || end === undefined || events.length === 0) {
      return expect.unreachable("a head, events and an end");
    }
    expect([head.type, end.type]).toEqual([imageHeadType, imageEndType]);
    /** The records framed one after another, the first numbered `first`, the next ones after it. */
    const framed = (list: ReadonlyArray<Framed>, first = 1) => {
      const bytes = new Uint8Array(
        list.reduce((sum, { payload }) => sum + recordSize(payload.length), 0),
      );
      let offset = 0;
      for (const [position, { type, schema, payload }] of list.entries()) {
        encodeRecordInto(bytes, offset, { type, schema, sequence: first + position, payload });
        offset += recordSize(payload.length);
      }
      return bytes;
    };
    const empty = (type: number): Framed => ({ type, schema: 1, payload: new Uint8Array(0) });
    const decodes = (bytes: Uint8Array) => Either.isRight(TerminalIndex.decodeImage(bytes));
    // Framed again as written, and with empty runs of pages and overflow in their place: images.
    expect(decodes(framed(records))).toBe(true);
    expect(
      decodes(framed([head, ...events, empty(imagePagesType), empty(imageOverflowType), end])),
    ).toBe(true);
    const refused = {
      "numbered from 2": framed(records, 2),
      "a byte after the end record": Uint8Array.from([...framed(records), 0]),
      "a second end record": framed([...records, end]),
      "no head first": framed([{ ...head, type: imageHeadType + 20 }, ...rest]),
      "pages after overflow": framed([
        head,
        ...events,
        empty(imageOverflowType),
        empty(imagePagesType),
        end,
      ]),
      "an event after pages": framed([head, empty(imagePagesType), ...events, end]),
      "an event after overflow": framed([head, empty(imageOverflowType), ...events, end]),
    };
    for (const [what, bytes] of Object.entries(refused)) {
      expect(decodes(bytes), what).toBe(false);
    }
    // Facts that do not pack, each three LEB128 numbers: the id less the one before, the queue's
    // place, 2·attempt + hasResult.
    const decoded = TerminalIndex.decodeImage(image);
    if (Either.isLeft(decoded)) return expect.unreachable(decoded.left);
    const { queues } = decoded.right.image.facts;
    expect(queues.length).toBeGreaterThan(0);
    const withRuns = (runs: ReadonlyArray<Framed>) =>
      TerminalIndex.decodeImage(framed([head, ...events, ...runs, end]));
    const overflow = (...numbers: ReadonlyArray<number>): Framed => ({
      type: imageOverflowType,
      schema: 1,
      payload: Uint8Array.from(numbers),
    });
    const facts = withRuns([overflow(3, 0, 2, 1, 0, 5)]);
    if (Either.isLeft(facts)) return expect.unreachable(facts.left);
    expect(facts.right.image.facts.overflow).toEqual([
      [3, { queue: queues[0], attempt: 1, hasResult: false }],
      [4, { queue: queues[0], attempt: 2, hasResult: true }],
    ]);
    const page = (bytes: number): Framed => ({
      type: imagePagesType,
      schema: 1,
      payload: new Uint8Array(1 + bytes),
    });
    expect(Either.isRight(withRuns([page(1024)]))).toBe(true);
    const refusedRuns = {
      "an id again": [overflow(3, 0, 2, 0, 0, 2)],
      "a queue past the head's": [overflow(3, queues.length, 2)],
      "a number cut": [overflow(3, 0, 0x82)],
      "a fact cut": [overflow(3, 0)],
      "a page cut": [page(1000)],
    };
    for (const [what, runs] of Object.entries(refusedRuns)) {
      expect(Either.isLeft(withRuns(runs)), what).toBe(true);
    }
    // A head of another format, or naming a segment without its four numbers.
    const fields = decodeValue(head.payload);
    if (fields._tag === "Left" || !(fields.right instanceof Map)) {
      return expect.unreachable("the head is a value map");
    }
    const map = fields.right;
    const headWith = (key: string, value: Value.Value): Framed => {
      const payload = encodeValue(new Map<string, Value.Value>([...map, [key, value]]));
      if (payload._tag === "Left") return expect.unreachable(payload.left._tag);
      return { ...head, payload: payload.right };
    };
    expect(decodes(framed([headWith("format", 1), ...rest]))).toBe(true);
    expect(decodes(framed([headWith("format", 2), ...rest]))).toBe(false);
    expect(decodes(framed([headWith("segments", [[1, 2, 3]]), ...rest]))).toBe(false);
  });
});
