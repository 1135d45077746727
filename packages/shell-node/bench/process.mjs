#!/usr/bin/env node
/**
 * Processing alone: N jobs inserted (untimed), then claimed and completed
 * by the worker runtime with concurrency C (or, with LOOP=raw, C lanes of
 * claim + complete by hand), two rounds in one process (the first warms
 * the code): jobs/s, CPU µs per job (user, system), records and inline
 * writes per job, and the heap held before close. NOIDX=1 opens without
 * the terminal index; ROOT=<tree> runs another build (A/B).
 *
 *   DUR=Throughput N=10000 node --expose-gc packages/shell-node/bench/process.mjs
 *   ROOT=/work/wt/base DUR=Maximal C=8 node packages/shell-node/bench/process.mjs
 *
 * docs/benchmarks.md, "The terminal index's writes batched", has results.
 * Data in a fresh directory under bench/tmp (TAY_BENCH_DIR).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { benchRoot } from "./lib/common.mjs";

const here = new URL(".", import.meta.url).pathname;
const root = resolve(process.env.ROOT ?? join(here, "../../.."));
const { openTay, initTay } = await import(join(root, "packages/shell-node/bench/lib/tay.mjs"));
const durability = process.env.DUR ?? "Maximal";
const jobs = Number(process.env.N ?? 3_000);
const concurrency = Number(process.env.C ?? 1);
const directory = mkdtempSync(join(benchRoot(), "process-"));
await initTay(directory);
const tay = await openTay(directory, durability, {
  loop: process.env.LOOP ?? "runtime",
  options: process.env.NOIDX ? { terminalIndex: false } : {},
});
const args = { payload: "x".repeat(200) };

/** Claims and completes `jobs` jobs by the runtime or by hand. */
const processAll = async () => {
  let done = 0;
  if (tay.process !== undefined) {
    await tay.process({
      concurrency,
      shouldStop: () => done >= jobs,
      onStart: () => {},
      onCompleted: () => {
        done += 1;
      },
    });
    return done;
  }
  const lane = async () => {
    while (done < jobs) {
      const job = await tay.claim("bench");
      if (job === undefined) break;
      await tay.complete(job);
      done += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return done;
};

for (let round = 0; round < 2; round++) {
  for (let at = 0; at < jobs; at += 5_000) {
    const count = Math.min(5_000, jobs - at);
    await tay.insertMany(
      "bench",
      Array.from({ length: count }, () => args),
    );
  }
  const before = await tay.stats();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const done = await processAll();
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const after = await tay.stats();
  const perJob = (value) => (value / done).toFixed(0);
  console.log(
    `${durability} c${concurrency} ${tay.process === undefined ? "raw loop" : "runtime"}${process.env.NOIDX ? ", no index" : ""}: ${Math.round((done / ms) * 1000)} jobs/s, CPU ${perJob(cpu.user + cpu.system)} µs/job (user ${perJob(cpu.user)}, system ${perJob(cpu.system)}), records/job ${((after.records - before.records) / done).toFixed(2)}, inline writes/job ${((after.inlineWrites.writes - before.inlineWrites.writes) / done).toFixed(2)}, slow inline ${after.inlineWrites.slow - before.inlineWrites.slow}`,
  );
}
if (globalThis.gc !== undefined) {
  globalThis.gc();
  console.log(`heap held before close: ${(process.memoryUsage().heapUsed / 1e6).toFixed(1)} MB`);
}
await tay.close();
rmSync(directory, { recursive: true, force: true });
