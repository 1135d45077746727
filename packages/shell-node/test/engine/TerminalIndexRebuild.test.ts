/**
 * The terminal index rebuilt from the log while the engine serves: a read
 * that meets damaged bytes fails, and the index is rebuilt in the
 * background. Here that rebuild is held at its first write to the new
 * entries file, so that what commits and reads meanwhile is the same every
 * run: what memory holds (jobs let go of before the rebuild and since)
 * still reads whole, and once the rebuild ends every job reads whole, live
 * and after a reopen that finds the index current. A compaction whose
 * rewrite of the index fails rebuilds it the same way, and the index is
 * then HEAD's again: the close publishes it and the reopen finds it current.
 */
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Effect, Layer } from "effect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Disk, DiskError, type DiskService, type FileHandle } from "../../src/disk/Disk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as TerminalIndex from "../../src/store/TerminalIndex.js";
import { holdingWrites } from "../support/heldWrites.js";

let scratch = "";
let dir = "";

beforeEach(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "tay-rebuild-"));
  dir = path.join(scratch, "data");
});
afterEach(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});

const entriesPath = () => path.join(TerminalIndex.indexPath(dir), TerminalIndex.entriesName);
const isEntries = (file: string) => file === entriesPath();

/** Inserts, claims and completes one job with `result`: its id. */
const completeOne = async (engine: EnginePromises.OpenedEngine, result: string) => {
  await engine.insert({ queue: "q", worker: "W", args: result });
  const [job] = await engine.claim("q", 1);
  if (job === undefined) throw new Error("nothing to claim");
  await engine.complete(job.jobId, result);
  return job.jobId;
};

const summary = (
  job: { readonly state: string; readonly result: { readonly value: unknown } | null } | undefined,
) => (job === undefined ? undefined : { state: job.state, result: job.result?.value });

/** Until the index answers again (the rebuild swapped it in). */
const untilAnswering = async (engine: EnginePromises.OpenedEngine, jobId: number) => {
  for (let tries = 0; ; tries++) {
    try {
      return await engine.inspectJob(jobId);
    } catch (error) {
      // A bound on the wait, not a timed expectation: a loaded machine only waits longer.
      if (tries > 6000) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
};

/**
 * An engine whose index holds jobs 1 and 2 (written by a compaction), with
 * job 3 let go of since (in memory), and the index's bytes then zeroed: a
 * read of job 1 fails and starts the rebuild, held at its first write.
 */
const rebuildHeld = async () => {
  const holding = holdingWrites(NodeDisk.make);
  const engine = await EnginePromises.open(dir, {
    createIfMissing: true,
    timers: false,
    disk: Layer.succeed(Disk, holding.service),
  });
  for (const result of ["one", "two"]) await completeOne(engine, result);
  // A compaction keeping everything writes the index whole, what is pending first.
  await engine.compact(86_400_000);
  const pending = await completeOne(engine, "three");
  const bytes = await fs.readFile(entriesPath());
  await fs.writeFile(entriesPath(), new Uint8Array(bytes.length));
  const rebuild = holding.holdNext(isEntries);
  expect(() => engine.job(1)).toThrow(TerminalIndex.TerminalIndexCorrupt);
  await rebuild.reached;
  return { engine, holding, pending, release: rebuild.release };
};

describe("a rebuild of the terminal index held at its first write", () => {
  it("serves what memory holds meanwhile, and every job whole once it ends", async () => {
    const { engine, pending, release } = await rebuildHeld();
    // The index failed and is not rebuilt yet; job 3 is still held in memory, and a job
    // completed now is too: both read whole, without the index.
    expect(() => engine.job(1)).toThrow(TerminalIndex.TerminalIndexCorrupt);
    expect(summary(engine.job(pending))).toEqual({ state: "completed", result: "three" });
    const during = await completeOne(engine, "four");
    expect(summary(engine.job(during))).toEqual({ state: "completed", result: "four" });
    release();
    await untilAnswering(engine, 1);
    const expected = ["one", "two", "three", "four"].map((result) => ({
      state: "completed",
      result,
    }));
    expect([1, 2, 3, 4].map((jobId) => summary(engine.job(jobId)))).toEqual(expected);
    await engine.close();
    const reopened = await EnginePromises.open(dir, { timers: false });
    expect(reopened.report.terminalIndex?.rebuilt ?? null).toBeNull();
    expect([1, 2, 3, 4].map((jobId) => summary(reopened.job(jobId)))).toEqual(expected);
    await reopened.close();
  });
});

/** NodeDisk whose next write to the index's entries file, once `failNext` is called, fails with EIO. */
const failingEntriesWrite = () => {
  let armed = false;
  const wrap = (handle: FileHandle): FileHandle => ({
    ...handle,
    write: (position, bytes) =>
      Effect.suspend(() => {
        if (!armed || !isEntries(handle.path)) return handle.write(position, bytes);
        armed = false;
        return Effect.fail(
          new DiskError({ operation: "write", path: handle.path, code: "EIO", detail: "planted" }),
        );
      }),
  });
  const service: DiskService = {
    ...NodeDisk.make,
    open: (file, mode, options) => Effect.map(NodeDisk.make.open(file, mode, options), wrap),
    create: (file, bytes) => Effect.map(NodeDisk.make.create(file, bytes), wrap),
  };
  return {
    layer: Layer.succeed(Disk, service),
    failNext: () => {
      armed = true;
    },
  };
};

describe("a compaction whose rewrite of the index fails", () => {
  it("rebuilds it from the log, and the close then publishes HEAD for it again", async () => {
    const failing = failingEntriesWrite();
    const engine = await EnginePromises.open(dir, {
      createIfMissing: true,
      timers: false,
      disk: failing.layer,
    });
    await completeOne(engine, "one");
    // The rewrite's first write (what is pending, to the old index) fails: the directory
    // may hold part of a new index, which HEAD must not name until a rebuild replaces it.
    failing.failNext();
    await engine.compact(86_400_000);
    // Committed after the rebuild: HEAD as the rebuild published it names an older sequence.
    await completeOne(engine, "two");
    await engine.close();
    const reopened = await EnginePromises.open(dir, { timers: false });
    expect(reopened.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
    expect([1, 2].map((jobId) => summary(reopened.job(jobId)))).toEqual([
      { state: "completed", result: "one" },
      { state: "completed", result: "two" },
    ]);
    await reopened.close();
  });
});
