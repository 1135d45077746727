/**
 * Proves that a worker process killed with SIGKILL at random moments, round after round, never
 * completes a job twice and never loses one: in the end every inserted job has exactly one
 * completion record in the log, every completion a child acknowledged is that record at the
 * attempt it named, every attempt that failed on the way failed for a recorded reason (the
 * handler's planned failure of a first attempt, or "orphaned" from the rescue at the next open,
 * which rescues exactly the jobs the kill left executing), and the store verifies. Children run
 * the BUILT engine and `Worker.start` under Maximal and print a line per acknowledged completion
 * (test/support/worker-child.mjs); the parent inserts jobs between rounds and checks the store,
 * kills each child at a seeded random moment, and at the end runs a worker in-process under
 * TestClock (so the rescues' backoffs pass at once) until every job is done.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Generation, type Job, Query, State } from "@tay/core";
import { Effect, TestClock, TestContext } from "effect";
import { describe, expect, it } from "vitest";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import * as Recovery from "../../src/store/Recovery.js";
import * as Worker from "../../src/worker/Worker.js";
import { auditLog, type JobRecords } from "../support/workerHarness.js";

const rounds = Number(process.env.TAY_WORKER_KILL_ROUNDS ?? "12");
const seed = Number(process.env.TAY_WORKER_KILL_SEED ?? "20261201");
const jobsPerRound = 40;
const concurrency = 8;
/** Handlers take 0 to this long (real time), so kills land while several run. */
const handlerMsMax = 15;
/** Share of jobs whose first attempt fails (the handler throws). */
const failFirstShare = 0.15;
// Every round may orphan a job once, and its first attempt may fail: it never runs out.
const maxAttempts = rounds + 10;
const killDelayMinMs = 10;
const killDelayMaxMs = 250;
/** Children loading their modules ahead of their turn (loading `effect` takes most of a second). */
const sparesAhead = 2;
const firstAckTimeoutMs = 30_000;

const childScript = fileURLToPath(new URL("../support/worker-child.mjs", import.meta.url));
const builtEntry = fileURLToPath(new URL("../../dist/index.js", import.meta.url));

/** The child's handler's failure of a first attempt (worker-child.mjs says the same). */
const plannedFailure = (jobId: number) => `planned failure of job ${jobId}`;

/** mulberry32: a tiny seeded generator, so the jobs and kill moments are the same every run. */
const seeded = (start: number): (() => number) => {
  let state = start >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
};

interface Child {
  readonly process: ChildProcess;
  /** Complete lines printed so far (a line cut by the kill is not one). */
  readonly lines: Array<string>;
  readonly stderr: Array<string>;
  readonly exited: Promise<void>;
  /** Resolves at the first acknowledged completion; rejects if the child exits first. */
  readonly firstAck: Promise<void>;
}

const spawnChild = (directory: string): Child => {
  const child = spawn(process.execPath, [childScript, directory, String(concurrency)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: Array<string> = [];
  const stderr: Array<string> = [];
  let partial = "";
  let acked: () => void = () => {};
  let failed: (error: Error) => void = () => {};
  const firstAck = new Promise<void>((resolve, reject) => {
    acked = resolve;
    failed = reject;
  });
  // Never an unhandled rejection: the spare that is never used is killed.
  firstAck.catch(() => {});
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    const parts = `${partial}${chunk}`.split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    if (lines.some((line) => line.startsWith("completed "))) acked();
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => stderr.push(chunk));
  const exited = new Promise<void>((resolve) => {
    child.on("exit", (code, signal) => {
      failed(new Error(`child exited (${code ?? signal}) before a completion: ${stderr.join("")}`));
      resolve();
    });
  });
  return { process: child, lines, stderr, exited, firstAck };
};

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  Promise.race([
    promise,
    new Promise<A>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms).unref(),
    ),
  ]);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the children told, over all rounds. */
interface Told {
  /** Acknowledged completions: job id to the attempt that completed it. */
  readonly acknowledged: Map<number, number>;
  /** Jobs acknowledged as completed twice (never, if the worker holds). */
  readonly twice: Array<string>;
  /** Each child's `rescued N`, by round. */
  readonly rescued: Array<number>;
  /** Lines that must never appear (an unrecorded or discarded end). */
  readonly unexpected: Array<string>;
}

const readLines = (told: Told, lines: ReadonlyArray<string>): void => {
  for (const line of lines) {
    const [what, first, second] = line.split(" ");
    if (what === "rescued") told.rescued.push(Number(first));
    else if (what === "completed") {
      const jobId = Number(first);
      if (told.acknowledged.has(jobId)) told.twice.push(line);
      told.acknowledged.set(jobId, Number(second));
    } else if (what !== "retried") told.unexpected.push(line);
  }
};

/**
 * Between rounds, in-process, without rescuing: every acknowledged completion is in the store at
 * its attempt; inserts the next round's jobs. Returns how many jobs the last kill left executing.
 */
const betweenRounds = (directory: string, told: Told, random: () => number, insert: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const engine = yield* Engine.open(directory, { durability: "Maximal", rescueOnOpen: false });
      const state = yield* engine.state();
      for (const [jobId, attempt] of told.acknowledged) {
        const job = yield* engine.job(jobId);
        expect([jobId, job?.state, job?.attempt]).toEqual([jobId, "completed", attempt]);
      }
      const executing = Query.jobsIn(state, "executing").length;
      if (insert > 0) {
        yield* engine.insertMany(
          Array.from({ length: insert }, () => ({
            queue: "kill",
            worker: "Kill",
            args: new Map<string, number | boolean>([
              ["ms", Math.floor(random() * (handlerMsMax + 1))],
              ["failFirst", random() < failFirstShare],
            ]),
            maxAttempts,
          })),
        );
      }
      return executing;
    }),
  ).pipe(Effect.provide(NodeDisk.layer));

/** Every job is completed, or every one left is executing, available or due later. */
const allCompleted = (state: State.State) =>
  [...State.jobs(state)].every((job: Job.Job) => job.state === "completed");

/**
 * The last worker, in-process under TestClock set to now: opens (rescuing what the last kill left
 * executing), completes every job left, moving the clock to each next retry, and closes.
 */
const finalRun = (directory: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.now());
      const engine = yield* Engine.open(directory, { durability: "Maximal" });
      yield* Worker.run(engine, {
        queues: { kill: concurrency },
        handlers: { Kill: (job) => `done ${job.jobId}.${job.attempt}` },
      });
      for (let guard = 0; guard < 10_000; guard++) {
        const state = yield* engine.state();
        if (allCompleted(state)) break;
        const busy =
          Query.jobsIn(state, "executing").length + Query.jobsIn(state, "available").length;
        const next = Query.nextWakeAt(state);
        if (busy === 0 && next !== null) yield* TestClock.setTime(next);
        else yield* Effect.promise(() => sleep(2));
      }
      const state = yield* engine.state();
      expect(allCompleted(state)).toBe(true);
      return { rescued: engine.report.rescued, audited: yield* auditLog(engine), state };
    }),
  ).pipe(Effect.provide(NodeDisk.layer), Effect.provide(TestContext.TestContext));

/** Every job completed once, at the acknowledged attempt, every failure for a known reason. */
const checkRecords = (records: JobRecords, told: Told): void => {
  const what = `job ${records.jobId}: ${records.tags.join(", ")}; errors ${records.errors.join(" / ")}`;
  expect([records.terminal, records.completed], what).toEqual([1, 1]);
  for (const error of records.errors) {
    expect([Engine.orphanError, plannedFailure(records.jobId)], what).toContain(error);
  }
  const acknowledged = told.acknowledged.get(records.jobId);
  if (acknowledged !== undefined) {
    expect(records.ends.get(acknowledged)?.tag, what).toBe("JobFinished:completed");
  }
};

/** Runs the rounds: insert, start a child, wait for a completion, kill at a random moment. */
const killRounds = async (directory: string, told: Told, random: () => number) => {
  const spares: Array<Child> = [];
  const executingBefore: Array<number> = [];
  try {
    for (let spare = 0; spare < Math.min(sparesAhead, rounds); spare++) {
      spares.push(spawnChild(directory));
    }
    for (let round = 0; round < rounds; round++) {
      executingBefore.push(
        await Effect.runPromise(betweenRounds(directory, told, random, jobsPerRound)),
      );
      const child = spares.shift();
      if (child === undefined) throw new Error("no child to run");
      child.process.stdin?.write("go\n");
      if (round + sparesAhead < rounds) spares.push(spawnChild(directory));
      await withTimeout(child.firstAck, firstAckTimeoutMs, `round ${round}`);
      await sleep(killDelayMinMs + random() * (killDelayMaxMs - killDelayMinMs));
      child.process.kill("SIGKILL");
      await child.exited;
      readLines(told, child.lines);
    }
    executingBefore.push(await Effect.runPromise(betweenRounds(directory, told, random, 0)));
  } finally {
    for (const spare of spares) spare.process.kill("SIGKILL");
    await Promise.all(spares.map((spare) => spare.exited));
  }
  return executingBefore;
};

describe("SIGKILL of a worker process", () => {
  it(`${rounds} kills complete every job exactly once, for recorded reasons`, async () => {
    if (!existsSync(builtEntry)) {
      throw new Error(
        `${builtEntry} is missing: this test runs the BUILT worker in a child process. Build first: pnpm build`,
      );
    }
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "tay-worker-kill-"));
    const directory = path.join(scratch, "data");
    const random = seeded(seed);
    const told: Told = { acknowledged: new Map(), twice: [], rescued: [], unexpected: [] };
    const startedAt = Date.now();
    try {
      await Effect.runPromise(Effect.provide(Init.init(directory), NodeDisk.layer));
      const executing = await killRounds(directory, told, random);
      expect({ twice: told.twice, unexpected: told.unexpected }).toEqual({
        twice: [],
        unexpected: [],
      });
      // Each child's open rescued exactly what the kill before it left executing.
      expect(told.rescued).toEqual(executing.slice(0, rounds));
      const last = await Effect.runPromise(finalRun(directory));
      expect(last.rescued).toBe(executing[rounds]);
      expect(last.audited).toHaveLength(rounds * jobsPerRound);
      for (const records of last.audited) checkRecords(records, told);
      const inspected = await Effect.runPromise(
        Effect.provide(Recovery.inspect(directory, {}, Engine.foldProjection), NodeDisk.layer),
      );
      const verified = Generation.finish(inspected.state);
      if (verified._tag === "Left") throw new Error(`the store does not fold: ${verified.left}`);
      expect(allCompleted(verified.right)).toBe(true);
      expect(State.jobCount(verified.right)).toBe(rounds * jobsPerRound);
      // Every job a kill left executing was failed once as orphaned by the next open.
      const orphaned = last.audited.flatMap((records) =>
        records.errors.filter((error) => error === Engine.orphanError),
      ).length;
      const leftExecuting = executing.reduce((sum, count) => sum + count, 0);
      expect(orphaned).toBe(leftExecuting);
      console.log(
        `worker kill test: ${rounds} SIGKILLs (seed ${seed}) in ${Date.now() - startedAt} ms, ${rounds * jobsPerRound} jobs each completed exactly once, ${told.acknowledged.size} completions acknowledged by the children, ${leftExecuting} jobs left executing by the kills, each rescued once as orphaned, store verified`,
      );
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  }, 120_000);
});
