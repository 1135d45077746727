#!/usr/bin/env node
/**
 * The worker runtime with handlers of uneven length: N jobs inserted
 * (untimed; after an unmeasured round of up to 1,000), then run by one worker of concurrency C whose handler waits
 * a random 0..MAXMS ms (a timer; MAXMS=0: until the next turn of the
 * loop, `setImmediate`; MAXMS=-1: returns at once, synchronously). Prints
 * jobs/s and the disk's writes and syncs per job: with handlers that end
 * at different times, how many of the jobs' ends and claims share a write
 * (docs/worker.md, "Claims in flight"). ROOT=<tree> runs another build
 * (A/B). Data in a fresh directory under bench/tmp (TAY_BENCH_DIR).
 *
 *   C=8 MAXMS=3 node packages/shell-node/bench/uneven.mjs
 *   ROOT=/tmp/base DUR=Maximal C=8 MAXMS=0 node packages/shell-node/bench/uneven.mjs
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { benchRoot } from "./lib/common.mjs";

const here = new URL(".", import.meta.url).pathname;
const root = resolve(process.env.ROOT ?? join(here, "../../.."));
const { openTay, initTay, countingDisk, diskCounters } = await import(
  join(root, "packages/shell-node/bench/lib/tay.mjs")
);
const { Worker } = await import(join(root, "packages/shell-node/dist/index.js"));

const concurrency = Number(process.env.C ?? 8);
const jobs = Number(process.env.N ?? 2_000);
const maxMs = Number(process.env.MAXMS ?? 3);
const durability = process.env.DUR ?? "Maximal";

const handler =
  maxMs < 0
    ? () => {}
    : maxMs === 0
      ? () => new Promise((done) => setImmediate(done))
      : () => new Promise((done) => setTimeout(done, Math.random() * maxMs));

const directory = mkdtempSync(join(benchRoot(), "uneven-"));
const counters = diskCounters();
await initTay(directory);
const tay = await openTay(directory, durability, { disk: countingDisk(counters) });

/** `count` jobs inserted, then run by a worker until all are completed: jobs/s, writes and syncs. */
const round = async (count) => {
  for (let at = 0; at < count; at += 5_000) {
    await tay.insertMany(
      "bench",
      Array.from({ length: Math.min(5_000, count - at) }, () => ({ x: 1 })),
    );
  }
  let done = 0;
  let finish;
  const finished = new Promise((resolveFinished) => {
    finish = resolveFinished;
  });
  const writesBefore = counters.writes;
  const syncsBefore = counters.syncs;
  const started = performance.now();
  const worker = await Worker.start(tay.promises, {
    queues: { bench: concurrency },
    handlers: { W: handler },
    onEvent: (event) => {
      if (event._tag === "Completed" && ++done >= count) finish();
    },
  });
  await finished;
  const ms = performance.now() - started;
  await worker.close();
  return {
    jobsPerSecond: Math.round((done / ms) * 1000),
    writes: (counters.writes - writesBefore) / done,
    syncs: (counters.syncs - syncsBefore) / done,
  };
};

// Unmeasured: the first jobs would otherwise pay for compiling the paths.
await round(Math.min(jobs, 1_000));
const measured = await round(jobs);
console.log(
  `${durability} c${concurrency} handlers 0..${maxMs} ms: ${measured.jobsPerSecond} jobs/s, writes/job ${measured.writes.toFixed(2)}, syncs/job ${measured.syncs.toFixed(2)}`,
);
await tay.close();
rmSync(directory, { recursive: true, force: true });
