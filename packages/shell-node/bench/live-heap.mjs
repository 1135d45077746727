#!/usr/bin/env node
/**
 * An active job's bytes in a running engine (issue 19), as opposed to
 * `active-heap.mjs`'s store just opened (whose indexes are built whole):
 * N jobs (200-byte args) inserted live by P awaiting producers, never
 * reopened, then the growth of V8's used heap plus external memory per job
 * after two collections. `Throughput`, no timers. ROOT=<tree> measures
 * another build (A/B: docs/core.md, "Indexes grown at their right edge").
 * With NAMES=parsed, each insert's queue and worker come from a JSON body
 * parsed for it, as a server's do (docs/core.md, "What an active job
 * holds, byte by byte").
 *
 *   node --expose-gc packages/shell-node/bench/live-heap.mjs [ROOT] [N=50000] [P=16]
 *
 * Data in a fresh directory under bench/tmp (TAY_BENCH_DIR), removed after.
 */
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { getHeapStatistics } from "node:v8";
import { freshDirectory, repositoryRoot } from "./lib/common.mjs";

const root = resolve(process.argv[2] ?? repositoryRoot);
const jobs = Number(process.argv[3] ?? 50_000);
const producers = Number(process.argv[4] ?? 16);
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const { EnginePromises } = await import(join(root, "packages/shell-node/dist/index.js"));
const directory = freshDirectory("live-heap");
const engine = await EnginePromises.open(join(directory, "data"), {
  createIfMissing: true,
  durability: "Throughput",
  timers: false,
});
const held = () => {
  globalThis.gc();
  globalThis.gc();
  return getHeapStatistics().used_heap_size + process.memoryUsage().external;
};
const payload = "x".repeat(200);
const body = JSON.stringify({ worker: "SendWelcomeEmail", queue: "emails.transactional" });
const names =
  process.env.NAMES === "parsed" ? () => JSON.parse(body) : () => ({ worker: "W", queue: "q" });
const before = held();
let left = jobs;
await Promise.all(
  Array.from({ length: producers }, async () => {
    while (left-- > 0) await engine.insert({ ...names(), args: { payload } });
  }),
);
const perJob = (held() - before) / jobs;
console.log(
  `${jobs} jobs inserted live by ${producers} producers${process.env.NAMES === "parsed" ? " (names parsed)" : ""}: ${perJob.toFixed(1)} B per active job`,
);
await engine.close();
rmSync(directory, { recursive: true, force: true });
