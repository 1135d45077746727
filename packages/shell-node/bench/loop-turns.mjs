#!/usr/bin/env node
/**
 * Whether the host's event loop turns while the worker runtime works a
 * backlog: N jobs inserted (untimed), then worked by the runtime with
 * concurrency C, while a 10 ms interval counts its ticks and a loop of
 * `fs.stat` calls counts its round trips (thread-pool I/O answered in the
 * poll phase). Before 2026-12-05 a `Throughput` backlog ran every command
 * in microtasks and neither fired until the backlog was done
 * (docs/disk.md, "`Throughput`'s chain of writes is bounded").
 *
 *   DUR=Throughput N=40000 node packages/shell-node/bench/loop-turns.mjs
 *   ROOT=/work/wt/base DUR=Segment C=8 node packages/shell-node/bench/loop-turns.mjs
 *
 * NOIDX=1 opens without the terminal index; ROOT=<tree> runs another build.
 * Data in a fresh directory under bench/tmp (TAY_BENCH_DIR).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { benchRoot } from "./lib/common.mjs";

const here = new URL(".", import.meta.url).pathname;
const root = resolve(process.env.ROOT ?? join(here, "../../.."));
const { openTay, initTay } = await import(join(root, "packages/shell-node/bench/lib/tay.mjs"));
const durability = process.env.DUR ?? "Throughput";
const jobs = Number(process.env.N ?? 40_000);
const concurrency = Number(process.env.C ?? 1);
const directory = mkdtempSync(join(benchRoot(), "loop-turns-"));
await initTay(directory);
const tay = await openTay(directory, durability, {
  options: process.env.NOIDX ? { terminalIndex: false } : {},
});
for (let at = 0; at < jobs; at += 5_000) {
  const count = Math.min(5_000, jobs - at);
  await tay.insertMany(
    "bench",
    Array.from({ length: count }, () => ({ payload: "x".repeat(200) })),
  );
}
let ticks = 0;
const interval = setInterval(() => {
  ticks += 1;
}, 10);
let stats = 0;
let longestStat = 0;
let stopped = false;
const statLoop = (async () => {
  while (!stopped) {
    const started = performance.now();
    await stat(directory);
    longestStat = Math.max(longestStat, performance.now() - started);
    stats += 1;
  }
})();
let done = 0;
const started = performance.now();
await tay.process({
  concurrency,
  shouldStop: () => done >= jobs,
  onStart: () => {},
  onCompleted: () => {
    done += 1;
  },
});
const ms = performance.now() - started;
stopped = true;
clearInterval(interval);
await statLoop;
console.log(
  `${durability} c${concurrency}${process.env.NOIDX ? ", no index" : ""}: ${Math.round((done / ms) * 1000)} jobs/s over ${ms.toFixed(0)} ms; 10 ms ticks ${ticks} of ~${Math.floor(ms / 10)} due; fs.stat round trips ${stats}, the longest ${longestStat.toFixed(1)} ms`,
);
await tay.close();
rmSync(directory, { recursive: true, force: true });
