#!/usr/bin/env node
// `pnpm soak [--minutes N] [--dir DIR] [--producers P] [--rate JOBS_PER_S] [--sample-seconds S]
// [--auto-compact RECORDS]`:
// the long-running test outside CI. It opens the BUILT engine (as a user's process would) under
// Maximal with 1 MiB segments, runs P producers inserting at a steady total rate (waiting for room
// when the command queue answers Overloaded) and two workers from the worker runtime on two queues
// (handlers that take a few milliseconds, one attempt in twenty failing and retried), and compacts
// every minute (retention one minute); with --auto-compact, the engine compacts on its own instead
// (`autoCompact`, the same retention, `minRecords` RECORDS: docs/engine.md). Every S seconds it samples the resident memory and the open
// file descriptors; after the warm-up (the first fifth of the run, at most five minutes, and at
// least until the second compaction has made the retained state steady) it compares the mean of the last quarter of the samples with the mean of the first
// quarter: growth above 10% fails the run. At the end it stops the producers, closes the workers and
// the engine, runs `tay verify` on the store, reopens it and checks that every acknowledged insert
// is there. Prints the curve (one row per sample) and a summary; exit 0 only if all held.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const root = new URL("..", import.meta.url).pathname;
const { EnginePromises, Worker, Engine } = await import(
  new URL("../packages/shell-node/dist/index.js", import.meta.url).href
);

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "30" },
    dir: { type: "string" },
    producers: { type: "string", default: "4" },
    rate: { type: "string", default: "400" },
    "sample-seconds": { type: "string", default: "10" },
    keep: { type: "boolean", default: false },
    "auto-compact": { type: "string" },
  },
});
const positive = (name, text) => {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`soak: --${name} must be a positive number, not ${text}`);
    process.exit(2);
  }
  return value;
};
const minutes = positive("minutes", values.minutes);
const producers = Math.round(positive("producers", values.producers));
const rate = positive("rate", values.rate);
const sampleSeconds = positive("sample-seconds", values["sample-seconds"]);
const autoRecords =
  values["auto-compact"] === undefined
    ? undefined
    : Math.round(positive("auto-compact", values["auto-compact"]));
const directory = values.dir ?? join(mkdtempSync(join(tmpdir(), "tay-soak-")), "data");
const durationMs = minutes * 60_000;
// The warm-up: the first fifth of the run (at most five minutes: JIT, pools, the first segments),
// and at least until just after the second compaction: only that one drops the jobs finished in
// the first minute, so the retained state reaches its steady size (one to two minutes of jobs)
// there.
const compactEveryMs = 60_000;
const warmUpMs = Math.max(Math.min(durationMs / 5, 300_000), 2 * compactEveryMs + 5_000);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const openFds = () => readdirSync("/proc/self/fd").length;
const mib = (bytes) => (bytes / 1024 / 1024).toFixed(1);

const opened = await EnginePromises.open(directory, {
  createIfMissing: true,
  durability: "Maximal",
  rotationTargetBytes: 1024 * 1024,
  ...(autoRecords === undefined
    ? {}
    : { autoCompact: { retentionMs: 60_000, minRecords: autoRecords } }),
});

const counts = {
  inserted: 0,
  overloaded: 0,
  completed: 0,
  retried: 0,
  compactions: 0,
  insertErrors: 0,
};
const acknowledged = new Set();
let running = true;

/** Inserts one job, waiting for room while the queue answers Overloaded. */
const insert = async (job) => {
  for (;;) {
    try {
      return await opened.insert(job);
    } catch (error) {
      if (!(error instanceof Engine.Overloaded)) throw error;
      counts.overloaded += 1;
      await opened.room();
    }
  }
};

/** One producer: `perSecond` jobs a second in batches every 50 ms, mixed sizes and queues. */
const producer = async (index, perSecond) => {
  const perTick = Math.max(1, Math.round(perSecond / 20));
  let sequence = 0;
  while (running) {
    const started = Date.now();
    const batch = [];
    for (let count = 0; count < perTick; count += 1) {
      sequence += 1;
      batch.push(
        insert({
          queue: sequence % 3 === 0 ? "soak-b" : "soak-a",
          worker: "Soak",
          args: {
            producer: index,
            sequence,
            ms: sequence % 7,
            fail: sequence % 20 === 0,
            pad: "x".repeat(sequence % 200),
          },
          maxAttempts: 3,
        }).then(
          (job) => {
            counts.inserted += 1;
            acknowledged.add(job.jobId);
          },
          (error) => {
            counts.insertErrors += 1;
            if (counts.insertErrors <= 3) console.error(`soak: insert failed: ${error}`);
          },
        ),
      );
    }
    await Promise.all(batch);
    await sleep(Math.max(0, 50 - (Date.now() - started)));
  }
};

const handlers = {
  Soak: async (job) => {
    if (job.args.fail && job.attempt === 1) throw new Error("planned failure");
    if (job.args.ms > 0) await sleep(job.args.ms);
    return { done: job.jobId };
  },
};
const onEvent = (event) => {
  if (event._tag === "Completed") counts.completed += 1;
  if (event._tag === "Retried") counts.retried += 1;
};
const workers = [
  await Worker.start(opened, {
    queues: { "soak-a": 16 },
    handlers,
    onEvent,
    backoff: { baseMs: 100, factor: 2, capMs: 1000 },
  }),
  await Worker.start(opened, {
    queues: { "soak-b": 8 },
    handlers,
    onEvent,
    backoff: { baseMs: 100, factor: 2, capMs: 1000 },
  }),
];

const compactor = setInterval(() => {
  // Compacting on its own: its count is read at each sample instead.
  if (autoRecords !== undefined) return;
  opened.compact(60_000).then(
    () => {
      counts.compactions += 1;
    },
    (error) => console.error(`soak: compaction failed: ${error}`),
  );
}, compactEveryMs);

const samples = [];
const started = Date.now();
const sample = () => {
  const at = Date.now() - started;
  if (autoRecords !== undefined) counts.compactions = opened.autoCompaction()?.runs ?? 0;
  const stats = opened.counts();
  let pending = 0;
  for (const perQueue of stats.values())
    pending += (perQueue.available ?? 0) + (perQueue.scheduled ?? 0) + (perQueue.retryable ?? 0);
  const row = {
    seconds: Math.round(at / 1000),
    rssMiB: Number(mib(process.memoryUsage().rss)),
    heapMiB: Number(mib(process.memoryUsage().heapUsed)),
    fds: openFds(),
    inserted: counts.inserted,
    completed: counts.completed,
    pending,
    compactions: counts.compactions,
  };
  samples.push(row);
  console.log(
    `${String(row.seconds).padStart(6)} s  rss ${String(row.rssMiB).padStart(7)} MiB  heap ${String(row.heapMiB).padStart(7)} MiB  fds ${String(row.fds).padStart(4)}  inserted ${row.inserted}  completed ${row.completed}  pending ${row.pending}  compactions ${row.compactions}`,
  );
};

console.log(
  `soak: ${minutes} min in ${directory}: ${producers} producers at ${rate} jobs/s in all, 2 workers (soak-a x16, soak-b x8), ${autoRecords === undefined ? "a compaction every minute" : `compacting on its own after ${autoRecords} records`}; warm-up ${Math.round(warmUpMs / 1000)} s; a sample every ${sampleSeconds} s`,
);
const producing = Array.from({ length: producers }, (_, index) =>
  producer(index, rate / producers),
);
sample();
while (Date.now() - started < durationMs) {
  await sleep(Math.min(sampleSeconds * 1000, durationMs - (Date.now() - started)));
  sample();
}

running = false;
clearInterval(compactor);
await Promise.all(producing);
for (const worker of workers) await worker.close({ timeoutMs: 10_000 });
await opened.close();

const mean = (rows, field) =>
  rows.reduce((sum, row) => sum + row[field], 0) / Math.max(1, rows.length);
const after = samples.filter((row) => row.seconds * 1000 >= warmUpMs);
const quarter = Math.max(1, Math.floor(after.length / 4));
const growth = (field) => {
  const first = mean(after.slice(0, quarter), field);
  const last = mean(after.slice(-quarter), field);
  return { first, last, growth: first === 0 ? 0 : (last - first) / first };
};
const rss = growth("rssMiB");
const fds = growth("fds");

const verify = spawnSync("node", [join(root, "packages/cli/bin/tay.mjs"), "verify", directory], {
  encoding: "utf8",
});
const reopened = await EnginePromises.open(directory, { timers: false, rescueOnOpen: false });
// Compaction drops jobs finished more than a minute ago, so presence is checked for the jobs not
// finished, and every acknowledged id must be at most the store's last job id (kept across
// compactions).
const unfinished = [...acknowledged].filter((jobId) => {
  const held = reopened.job(jobId);
  return held !== undefined && held.state !== "completed" && held.state !== "discarded";
}).length;
const missing = [...acknowledged].filter((jobId) => jobId > reopened.report.lastJobId).length;
const lastJobId = reopened.report.lastJobId;
await reopened.close();

const flat = rss.growth <= 0.1 && fds.growth <= 0.1;
const summary = {
  minutes,
  directory,
  inserted: counts.inserted,
  completed: counts.completed,
  retried: counts.retried,
  overloaded: counts.overloaded,
  insertErrors: counts.insertErrors,
  compactions: counts.compactions,
  samplesAfterWarmUp: after.length,
  rssMiB: {
    firstQuarter: rss.first.toFixed(1),
    lastQuarter: rss.last.toFixed(1),
    growth: `${(rss.growth * 100).toFixed(1)}%`,
  },
  fds: {
    firstQuarter: fds.first.toFixed(1),
    lastQuarter: fds.last.toFixed(1),
    growth: `${(fds.growth * 100).toFixed(1)}%`,
  },
  flat,
  verify: {
    exit: verify.status,
    output: (verify.stdout + verify.stderr).trim().split("\n").slice(-3).join(" | "),
  },
  lastJobId,
  unfinishedAtEnd: unfinished,
  acknowledgedMissing: missing,
};
console.log(`soak summary: ${JSON.stringify(summary, null, 2)}`);
const ok = flat && verify.status === 0 && missing === 0 && counts.insertErrors === 0;
console.log(ok ? "soak: PASS" : "soak: FAIL");
if (!values.keep && values.dir === undefined)
  rmSync(join(directory, ".."), { recursive: true, force: true });
process.exit(ok ? 0 : 1);
