// The read commands that print a whole store print it as they read it
// (2026-12-06): `tay dump` a batch of records at a time, `tay jobs` a page
// of jobs at a time, and the process's output waits while its buffer is
// full. Before, a store of 1,000,000 jobs failed both with "Invalid string
// length" after holding every line.
import { PassThrough, Writable } from "node:stream";
import { type Event, type Job, State } from "@tay/core";
import { EnginePromises, NodeDisk, type Projection, Recovery } from "@tay/shell-node";
import { Effect, Either } from "effect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DumpLines } from "../src/dumpLines.js";
import { inspect } from "../src/inspect.js";
import { JobLines } from "../src/jobLines.js";
import * as Json from "../src/json.js";
import { writeTo } from "../src/streamWrite.js";
import * as Cli from "../src/Cli.js";
import { removeTemporary, runRecorded, temporaryDirectory } from "./support/cli.js";

let dir = "";

/** What `program` writes to standard output, through a terminal that keeps it. */
const written = async (program: Effect.Effect<void, never, Cli.Terminal>): Promise<string> => {
  let out = "";
  const terminal: Cli.TerminalService = {
    out: (text) =>
      Effect.sync(() => {
        out += text;
      }),
    err: () => Effect.void,
    isTerminal: false,
    interrupted: Effect.never,
    wasInterrupted: Effect.succeed(false),
  };
  await Effect.runPromise(program.pipe(Effect.provideService(Cli.Terminal, terminal)));
  return out;
};

beforeEach(async () => {
  dir = `${await temporaryDirectory()}/store`;
});

afterEach(async () => {
  await removeTemporary(dir.slice(0, dir.lastIndexOf("/")));
});

/** `count` jobs inserted one record each; every job whose id is not a multiple of 3 completed. */
const storeOf = async (count: number): Promise<void> => {
  const engine = await EnginePromises.open(dir, { createIfMissing: true });
  await Promise.all(
    Array.from({ length: count }, (_, index) =>
      engine.insert({ queue: index % 2 === 0 ? "even" : "odd", worker: "W", args: { n: index } }),
    ),
  );
  for (const queue of ["even", "odd"]) {
    for (const job of await engine.claim(queue, count)) {
      if (job.jobId % 3 !== 0) await engine.complete(job.jobId, job.jobId);
    }
  }
  await engine.close();
};

/** Every record of the store as `tay dump` prints it, read whole. */
const recordLines = async (): Promise<Array<string>> => {
  const entries: Array<Projection.Entry> = [];
  const collect: Projection.Projection<null, never> = {
    start: () => {
      entries.length = 0;
      return null;
    },
    apply: (state, sequence, event) => {
      entries.push({ sequence, event });
      return Either.right(state);
    },
  };
  await Effect.runPromise(Recovery.inspect(dir, {}, collect).pipe(Effect.provide(NodeDisk.layer)));
  return entries.map(({ sequence, event }) => Json.line(Json.record(sequence, event)));
};

describe("tay dump", () => {
  it("prints each batch of records as it reads it, the same lines in order", async () => {
    await storeOf(2_500);
    const expected = await recordLines();
    expect(expected.length).toBeGreaterThan(3 * 1_024);
    const run = await runRecorded(["dump", dir]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`${expected.join("\n")}\n`);
    // A batch is at most 1,024 records: no write holds more lines.
    expect(run.writes.length).toBeGreaterThan(3);
    for (const write of run.writes) {
      expect(write.split("\n").length - 1).toBeLessThanOrEqual(1_024);
    }
  });

  it("--from and --limit still cut the same lines", async () => {
    await storeOf(1_500);
    const expected = await recordLines();
    const run = await runRecorded(["dump", dir, "--from", "1000", "--limit", "1200"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`${expected.slice(999, 999 + 1_200).join("\n")}\n`);
  });
});

describe("DumpLines across a retried read", () => {
  const manifest = (epoch: number): Projection.Manifest => ({
    storeId: new Uint8Array(16),
    epoch,
    parentEpoch: 0,
    firstSequence: 1,
    baseRecordCount: 0,
    createdAt: 0,
  });
  const event = (jobId: number): Event.Event => ({
    _tag: "JobCancelled",
    jobId,
    at: 0,
    reason: null,
  });
  const read = (dumped: DumpLines, epoch: number, through: number) => {
    let state = dumped.projection.start(manifest(epoch));
    for (let sequence = 1; sequence <= through; sequence++) {
      const next = dumped.projection.apply(state, sequence, event(sequence));
      if (Either.isLeft(next)) return next.left;
      state = next.right;
    }
    return undefined;
  };
  const printed = async (dumped: DumpLines): Promise<Array<number>> => {
    const out = await written(dumped.flush());
    return out
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line).sequence);
  };

  it("a retry of the same generation goes on after the last line printed", async () => {
    const dumped = new DumpLines(1, Number.MAX_SAFE_INTEGER);
    expect(read(dumped, 1, 5)).toBeUndefined();
    expect(await printed(dumped)).toEqual([1, 2, 3, 4, 5]);
    expect(read(dumped, 1, 8)).toBeUndefined();
    expect(await printed(dumped)).toEqual([6, 7, 8]);
  });

  it("a retry that finds another generation after lines are out stops, naming what was printed", async () => {
    const dumped = new DumpLines(1, Number.MAX_SAFE_INTEGER);
    read(dumped, 3, 4);
    expect(read(dumped, 4, 9)).toEqual({
      _tag: "GenerationChanged",
      printedEpoch: 3,
      printedThrough: 4,
      foundEpoch: 4,
    });
  });

  it("another generation before any line is out is simply read", async () => {
    const dumped = new DumpLines(10, Number.MAX_SAFE_INTEGER);
    expect(read(dumped, 3, 4)).toBeUndefined();
    expect(read(dumped, 4, 12)).toBeUndefined();
    expect(await printed(dumped)).toEqual([10, 11, 12]);
  });

  it("--limit counts lines printed across tries", async () => {
    const dumped = new DumpLines(1, 6);
    read(dumped, 1, 4);
    expect(read(dumped, 1, 9)).toEqual({ _tag: "Enough" });
    expect(await printed(dumped)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe("tay jobs", () => {
  /** Every job of the whole fold, as `tay jobs --json` prints each. */
  const wholeJobs = async (): Promise<Array<unknown>> => {
    const { state } = await Effect.runPromise(inspect(dir).pipe(Effect.provide(NodeDisk.layer)));
    return [...State.jobs(state)].map((job) => JSON.parse(Json.line(Json.job(job))));
  };

  it("--json prints one array a page at a time, the whole fold's jobs in order", async () => {
    await storeOf(2_500);
    const expected = await wholeJobs();
    const run = await runRecorded(["jobs", dir, "--json"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout.endsWith("]\n")).toBe(true);
    expect(JSON.parse(run.stdout)).toEqual(expected);
    // Pages of at most 1,024 jobs: no write holds them all.
    expect(run.writes.length).toBeGreaterThanOrEqual(4);
    const largest = Math.max(...run.writes.map((write) => write.length));
    expect(largest).toBeLessThan(run.stdout.length / 2);
  });

  it("a table a page at a time: columns as wide as the first page needs, every job a row", async () => {
    await storeOf(2_500);
    const run = await runRecorded(["jobs", dir]);
    expect(run.status).toBe(0);
    const rows = run.stdout.trimEnd().split("\n");
    expect(rows).toHaveLength(2_501);
    expect(rows[0]).toMatch(/^ {2}ID {2}STATE {6}QUEUE {2}WORKER {2}PRI {2}ATTEMPT/);
    // Ids of up to four digits, right-aligned to the first page's widest.
    expect(rows[1]).toMatch(/^ {3}1 {2}completed {2}even/);
    expect(rows[2_500]).toMatch(/^2500 {2}completed {2}odd/);
    expect(run.writes.length).toBeGreaterThanOrEqual(3);
  });

  it("--limit and --state cut across pages; nothing listed is an empty array or a header", async () => {
    await storeOf(2_500);
    const expected = await wholeJobs();
    const limited = await runRecorded(["jobs", dir, "--json", "--limit", "1500"]);
    expect(JSON.parse(limited.stdout)).toEqual(expected.slice(0, 1_500));
    const executing = await runRecorded(["jobs", dir, "--json", "--state", "executing"]);
    expect(JSON.parse(executing.stdout)).toHaveLength(833);
    const none = await runRecorded(["jobs", dir, "--json", "--state", "cancelled"]);
    expect(none.stdout).toBe("[]\n");
    const empty = await runRecorded(["jobs", dir, "--queue", "nowhere"]);
    expect(empty.stdout).toBe(
      "ID  STATE  QUEUE  WORKER  PRI  ATTEMPT  SCHEDULED_AT  FINISHED_AT  SCHEDULE\n",
    );
  });
});

describe("tay jobs --order desc, --after, --before", () => {
  it("lists newest first and between bounds across pages, the completed jobs from the index", async () => {
    await storeOf(2_500);
    const { state } = await Effect.runPromise(inspect(dir).pipe(Effect.provide(NodeDisk.layer)));
    const newest = [...State.jobs(state)]
      .reverse()
      .map((job) => JSON.parse(Json.line(Json.job(job))));
    const run = await runRecorded(["jobs", dir, "--json", "--order", "desc"]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(newest);
    const limited = await runRecorded([
      "jobs",
      dir,
      "--json",
      "--order",
      "desc",
      "--limit",
      "1500",
      "--queue",
      "odd",
    ]);
    expect(JSON.parse(limited.stdout)).toEqual(
      newest.filter((job: { readonly queue: string }) => job.queue === "odd").slice(0, 1_500),
    );
    const table = await runRecorded(["jobs", dir, "--order", "desc", "--limit", "2"]);
    expect(table.stdout.split("\n")[1]).toMatch(/^2500 {2}completed/);
    const asc = await runRecorded(["jobs", dir, "--json", "--order", "asc", "--limit", "1"]);
    expect(JSON.parse(asc.stdout)[0].job_id).toBe(1);
    // Between bounds, in either order, across the index's pages: a page at rest starts anywhere.
    const ascending = [...newest].reverse();
    const between = ascending.filter(
      (job: { readonly job_id: number }) => job.job_id > 700 && job.job_id < 2_300,
    );
    const bounded = await runRecorded([
      "jobs",
      dir,
      "--json",
      "--after",
      "700",
      "--before",
      "2300",
    ]);
    expect(JSON.parse(bounded.stdout)).toEqual(between);
    const boundedDown = await runRecorded([
      "jobs",
      dir,
      "--json",
      "--order",
      "desc",
      "--before",
      "2300",
      "--after",
      "700",
      "--limit",
      "1100",
    ]);
    expect(JSON.parse(boundedDown.stdout)).toEqual([...between].reverse().slice(0, 1_100));
    const none = await runRecorded(["jobs", dir, "--json", "--before", "1"]);
    expect(none.stdout).toBe("[]\n");
    const bad = await runRecorded(["jobs", dir, "--order", "newest"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--order: "newest" is not asc or desc');
  });
});

describe("JobLines across a listing started over", () => {
  const job = (jobId: number): Job.Job => ({ ...sample, jobId });
  const out = async (work: (lines: JobLines) => Effect.Effect<void, never, Cli.Terminal>) => {
    const lines = new JobLines(true, 4);
    const text = await written(Effect.andThen(work(lines), lines.end()));
    return JSON.parse(text).map((printed: { readonly job_id: number }) => printed.job_id);
  };
  let sample: Job.Job;

  beforeEach(async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    sample = await engine.insert({ queue: "q", worker: "W", args: 1 });
    await engine.close();
  });

  it("newest first, a page given again prints only the ids below the last printed", async () => {
    const lines = new JobLines(true, 10, true);
    const text = await written(
      Effect.andThen(
        Effect.andThen(lines.page([job(9), job(7)]), lines.page([job(9), job(7), job(5), job(2)])),
        lines.end(),
      ),
    );
    expect(JSON.parse(text).map((printed: { readonly job_id: number }) => printed.job_id)).toEqual([
      9, 7, 5, 2,
    ]);
  });

  it("a page given again prints only the ids after the last printed, up to the limit", async () => {
    expect(
      await out((lines) =>
        Effect.andThen(
          lines.page([job(1), job(2)]),
          lines.page([job(1), job(2), job(3), job(5), job(6)]),
        ),
      ),
    ).toEqual([1, 2, 3, 5]);
  });
});

describe("the process's output", () => {
  it("waits while the stream's buffer is full, and goes on once it drains", async () => {
    const taken: Array<string> = [];
    let release: (() => void) | undefined;
    const slow = new Writable({
      highWaterMark: 8,
      write(chunk: Buffer, _encoding, callback) {
        taken.push(chunk.toString());
        release = () => callback();
      },
    });
    const write = writeTo(slow);
    let done = false;
    const writing = Effect.runPromise(write("0123456789abcdef")).then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(taken).toEqual(["0123456789abcdef"]);
    expect(done).toBe(false);
    release?.();
    await writing;
    expect(done).toBe(true);
  });

  it("ends at once when the stream takes the text", async () => {
    const sink = new PassThrough({ highWaterMark: 1 << 20 });
    await Effect.runPromise(writeTo(sink)("line\n"));
    expect(sink.read()?.toString()).toBe("line\n");
  });

  it("ends when the stream closes instead of draining", async () => {
    const slow = new Writable({ highWaterMark: 1, write: () => {} });
    const writing = Effect.runPromise(writeTo(slow)("more than one byte"));
    slow.destroy();
    await writing;
  });
});
