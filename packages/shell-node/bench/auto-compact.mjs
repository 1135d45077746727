#!/usr/bin/env node
/**
 * What compaction on its own (`autoCompact`) costs a busy store: P
 * producers insert, claim and complete jobs for S seconds (three records a
 * job) on an engine opened without it, then on one with `autoCompact: {
 * retentionMs: RET (default 0), minRecords: M }`, alternately for R rounds, each on a
 * fresh store. Reported per run: jobs/s, the compactions the engine ran,
 * the slowest job's round trip (insert to complete: a compaction holds the
 * queue while it writes the base), p99 of those round trips, and the
 * store's records at the end (what an open would replay).
 * docs/benchmarks.md, "Compaction on its own", has the results.
 *
 *   S=10 P=32 M=100000 R=2 node packages/shell-node/bench/auto-compact.mjs
 *   RET=3600000 S=20 ... (an hour's retention: every finished job kept and rewritten)
 *
 * Data goes to a fresh directory under bench/tmp (not /tmp: it may be tmpfs).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { Effect } from "effect";

const here = new URL(".", import.meta.url).pathname;
const { EnginePromises } = await import(resolve(here, "../dist/index.js"));
const seconds = Number(process.env.S ?? 10);
const producers = Number(process.env.P ?? 32);
const minRecords = Number(process.env.M ?? 100_000);
const rounds = Number(process.env.R ?? 2);
const durability = process.env.DUR ?? "Throughput";
const retentionMs = Number(process.env.RET ?? 0);

const tmp = resolve(here, "../../../bench/tmp");
mkdirSync(tmp, { recursive: true });

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

/** One run on a fresh store; `autoCompact` or not. */
const run = async (auto) => {
  const scratch = mkdtempSync(join(tmp, "auto-compact-"));
  const options = { createIfMissing: true, durability };
  const engine = await EnginePromises.open(
    join(scratch, "data"),
    auto ? { ...options, autoCompact: { retentionMs, minRecords } } : options,
  );
  const trips = [];
  let jobs = 0;
  const until = performance.now() + seconds * 1000;
  const producer = async (index) => {
    const queue = `q${index}`;
    while (performance.now() < until) {
      const started = performance.now();
      const { jobId } = await engine.insert({ queue, worker: "W", args: { n: jobs } });
      const [claimed] = await engine.claim(queue);
      if (claimed?.jobId !== jobId) throw new Error(`claimed ${claimed?.jobId}, not ${jobId}`);
      await engine.complete(jobId, null);
      trips.push(performance.now() - started);
      jobs += 1;
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: producers }, (_, index) => producer(index)));
  const elapsed = (performance.now() - began) / 1000;
  const stats = await Effect.runPromise(engine.log.stats());
  const compactions = engine.autoCompaction()?.runs ?? 0;
  const lastDurationMs = engine.autoCompaction()?.lastDurationMs ?? null;
  await engine.close();
  rmSync(scratch, { recursive: true, force: true });
  trips.sort((a, b) => a - b);
  return {
    auto,
    jobsPerSecond: Math.round(jobs / elapsed),
    compactions,
    p99Ms: Number(percentile(trips, 0.99).toFixed(2)),
    maxMs: Number((trips.at(-1) ?? 0).toFixed(1)),
    lastDurationMs,
    records: stats.records,
  };
};

console.log(
  `auto-compact: ${producers} producers, ${seconds} s a run, ${durability}, retention ${retentionMs} ms, minRecords ${minRecords}, ${rounds} round(s)`,
);
for (let round = 0; round < rounds; round++) {
  for (const auto of [false, true]) {
    const result = await run(auto);
    console.log(
      `${auto ? "autoCompact" : "off        "}  ${String(result.jobsPerSecond).padStart(7)} jobs/s  compactions ${result.compactions}  p99 ${result.p99Ms} ms  max ${result.maxMs} ms  records at end ${result.records}${result.auto ? `  last compaction ${result.lastDurationMs} ms` : ""}`,
    );
  }
}
