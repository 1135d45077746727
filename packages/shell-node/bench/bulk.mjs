#!/usr/bin/env node
/**
 * Bulk inserts alone: calls of 1,000 jobs (200-byte args) through
 * `insertMany` on a fresh store, after WARM untimed calls: jobs/s and CPU
 * µs a job. With WARM=0 the timed calls run the bulk path's code cold,
 * as `bench:peers` timed it before each case got an untimed run of its
 * own shape (docs/benchmarks.md, "Twenty-fourth session").
 *
 *   WARM=0 N=100 node packages/shell-node/bench/bulk.mjs
 *   WARM=20 N=100 DUR=Segment node packages/shell-node/bench/bulk.mjs
 *
 * N (300) timed calls, WARM (20), DUR (Maximal); ROOT=<tree> runs another
 * build. Data in a fresh directory under bench/tmp (TAY_BENCH_DIR).
 */
import { join, resolve } from "node:path";
import { freshDirectory, makeArgs, removeDirectory } from "./lib/common.mjs";

const root = resolve(process.env.ROOT ?? join(new URL(".", import.meta.url).pathname, "../../.."));
const { EnginePromises } = await import(join(root, "packages/shell-node/dist/index.js"));
const directory = freshDirectory("bulk");
const engine = await EnginePromises.open(join(directory, "data"), {
  createIfMissing: true,
  durability: process.env.DUR ?? "Maximal",
  timers: false,
});
const args = makeArgs();
const batch = Array.from({ length: 1000 }, () => ({ queue: "q", worker: "W", args }));
for (let call = 0; call < Number(process.env.WARM ?? 20); call++) await engine.insertMany(batch);
const calls = Number(process.env.N ?? 300);
const cpuBefore = process.cpuUsage();
const started = performance.now();
for (let call = 0; call < calls; call++) await engine.insertMany(batch);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const jobs = calls * batch.length;
console.log(
  `${Math.round(jobs / seconds)} jobs/s, CPU ${((cpu.user + cpu.system) / jobs).toFixed(2)} µs a job (${process.env.WARM ?? 20} untimed calls first)`,
);
await engine.close();
removeDirectory(directory);
