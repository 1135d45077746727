#!/usr/bin/env node
/**
 * Producers awaiting each insert on the promise face: inserts/s, CPU µs
 * per insert (`process.cpuUsage`, the figure that survives a loaded
 * machine) and bytes allocated on the V8 heap per insert (the growth of
 * the used heap between collections, summed: `v8.GCProfiler`), after a
 * warm-up; with `RAW=1`, a raw loop of `O_DSYNC` appends
 * of the same record size first (the floor one awaited `Maximal` insert
 * waits for). For A/B runs of two builds in one session, point `ROOT` at a
 * copy of the other build's repository tree (its `packages/shell-node/dist`).
 * With `STALL=1`, what the event loop waited for: every `fs.writeSync` made
 * during the timed inserts is timed (the inline writes, durable ones under
 * `Maximal`; a wrapper installed with `syncBuiltinESMExports`), and the
 * loop's delay is sampled (`monitorEventLoopDelay`, 1 ms resolution): p50,
 * p99, max.
 * docs/benchmarks.md, "One awaited insert", has the results and commands.
 *
 *   DUR=Throughput N=40000 node packages/shell-node/bench/awaited.mjs
 *   DUR=Maximal N=3000 RAW=1 node packages/shell-node/bench/awaited.mjs
 *   DUR=Throughput P=256 N=100000 node packages/shell-node/bench/awaited.mjs
 *
 * Data goes to a fresh directory under bench/tmp (not /tmp: it may be tmpfs).
 */
import fs, {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeSync,
} from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { join, resolve } from "node:path";
import { allocationCounter } from "./lib/common.mjs";

const here = new URL(".", import.meta.url).pathname;
const root = process.env.ROOT ?? resolve(here, "../../..");
const durability = process.env.DUR ?? "Throughput";
const inserts = Number(process.env.N ?? 20_000);
const producers = Number(process.env.P ?? 1);
const warmUp = Number(process.env.WARMUP ?? 2_000);
const recordBytes = 130;

const tmp = resolve(here, "../../../bench/tmp");
mkdirSync(tmp, { recursive: true });
const scratch = mkdtempSync(join(tmp, "awaited-"));

if (process.env.RAW === "1") {
  const path = join(scratch, "raw.dat");
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC);
  const bytes = Buffer.alloc(recordBytes, 0x5a);
  const rawCpu = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < inserts; index++)
    writeSync(fd, bytes, 0, recordBytes, index * recordBytes);
  const seconds = (performance.now() - started) / 1000;
  const rawUsed = process.cpuUsage(rawCpu);
  closeSync(fd);
  console.log(
    `raw O_DSYNC ${recordBytes}-byte appends: ${(inserts / seconds).toFixed(0)} writes/s, CPU ${((rawUsed.user + rawUsed.system) / inserts).toFixed(1)} µs/write`,
  );
}

const stall = process.env.STALL === "1";
/** Durations of the timed `fs.writeSync` calls, ms (with `STALL=1`). */
const writeSyncMs = [];
let timing = false;
if (stall) {
  const original = fs.writeSync;
  fs.writeSync = (...args) => {
    if (!timing) return original(...args);
    const started = performance.now();
    try {
      return original(...args);
    } finally {
      writeSyncMs.push(performance.now() - started);
    }
  };
  syncBuiltinESMExports();
}

const { EnginePromises } = await import(`${root}/packages/shell-node/dist/index.js`);
const engine = await EnginePromises.open(join(scratch, "data"), {
  createIfMissing: true,
  durability,
});
const run = async (count) => {
  let left = count;
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (left-- > 0) await engine.insert({ worker: "W", queue: "q", args: { i: left } });
    }),
  );
};
await run(warmUp);
// Allocated bytes and collections of the timed inserts (`allocationCounter`).
const allocation = allocationCounter();
const loopDelay = stall ? monitorEventLoopDelay({ resolution: 1 }) : undefined;
loopDelay?.enable();
timing = true;
const cpu = process.cpuUsage();
const started = performance.now();
await run(inserts);
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
timing = false;
loopDelay?.disable();
const { bytes: allocated, collections } = allocation();
await engine.close();
rmSync(scratch, { recursive: true, force: true });
console.log(
  `${durability}, ${producers} producer(s): ${(inserts / seconds).toFixed(0)} inserts/s, CPU ${((used.user + used.system) / inserts).toFixed(1)} µs/insert (user ${(used.user / inserts).toFixed(1)}, system ${(used.system / inserts).toFixed(1)}), ${(allocated / inserts).toFixed(0)} bytes allocated/insert (${collections} collections)`,
);
if (stall && loopDelay !== undefined) {
  const sorted = writeSyncMs.sort((a, b) => a - b);
  const at = (q) =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const ms = (value) => `${value.toFixed(3)} ms`;
  console.log(
    `  writeSync on the loop: ${sorted.length} calls, p50 ${ms(at(0.5))}, p99 ${ms(at(0.99))}, p99.9 ${ms(at(0.999))}, max ${ms(sorted.at(-1) ?? 0)}, over 2 ms: ${sorted.filter((value) => value > 2).length}`,
  );
  const delay = (q) => ms(loopDelay.percentile(q) / 1e6);
  console.log(
    `  event loop delay: p50 ${delay(50)}, p99 ${delay(99)}, max ${ms(loopDelay.max / 1e6)}`,
  );
}
