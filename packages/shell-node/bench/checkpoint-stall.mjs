#!/usr/bin/env node
/**
 * What a checkpoint costs the engine's event loop (docs/store.md,
 * "Checkpoints without a stall"): an engine on a copy of a store (the
 * terminal benchmark's 1,000,000-job store: `BENCH_TERMINAL_DIR=DIR node
 * --expose-gc packages/shell-node/bench/terminal.bench.mjs` keeps it as
 * DIR/jobs), P producers each inserting, claiming and completing one job
 * at a time until N jobs are done: enough records to pass one
 * checkpoint's interval (at least the jobs the state holds: 350,000 jobs
 * are 1,050,000 records). Prints the loop's delay (`monitorEventLoopDelay`,
 * 1 ms resolution: p99.9 and the longest), each insert's latency (p99,
 * p99.9, the longest), and the sequence HEAD names before the close (that
 * of the last checkpoint; the open's when none was written).
 * For an A/B of two builds, point `ROOT` at the other repository tree.
 *
 *   node packages/shell-node/bench/checkpoint-stall.mjs DIR/jobs [N=350000] [P=16]
 *
 * The copy goes to a fresh directory under bench/tmp and is removed at the end.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = process.env.ROOT ?? resolve(here, "../../..");
const [source, jobsText = "350000", producersText = "16"] = process.argv.slice(2);
if (source === undefined) {
  console.error("usage: checkpoint-stall.mjs STORE [JOBS] [PRODUCERS]");
  process.exit(2);
}
const { EnginePromises, NodeDisk, TerminalIndex } = await import(
  join(root, "packages/shell-node/dist/index.js")
);
const { Effect } = await import(
  join(root, "packages/shell-node/node_modules/effect/dist/esm/index.js")
);
const scratch = join(here, "../../../bench/tmp");
mkdirSync(scratch, { recursive: true });
const directory = join(mkdtempSync(join(scratch, "stall-")), "data");
cpSync(source, directory, { recursive: true });

const engine = await EnginePromises.open(directory, { durability: "Maximal", timers: false });
const count = Number(jobsText);
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
const latencies = [];
let next = 0;
const producer = async () => {
  while (next < count) {
    const at = next++;
    const started = performance.now();
    await engine.insert({ queue: "stall", worker: "W", args: { at } });
    latencies.push(performance.now() - started);
    for (const job of await engine.claim("stall", 1)) await engine.complete(job.jobId, null);
  }
};
loopDelay.enable();
const started = performance.now();
await Promise.all(Array.from({ length: Number(producersText) }, producer));
const seconds = (performance.now() - started) / 1000;
loopDelay.disable();
// HEAD before the close: the last checkpoint's sequence (the open's, if none was written).
const head = await Effect.runPromise(Effect.provide(TerminalIndex.peek(directory), NodeDisk.layer));
await engine.close();
latencies.sort((left, right) => left - right);
const quantile = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
rmSync(dirname(directory), { recursive: true, force: true });
const ms = (nanoseconds) => Number((nanoseconds / 1e6).toFixed(1));
console.log(
  JSON.stringify({
    bench: "checkpoint-stall",
    root,
    jobs: count,
    producers: Number(producersText),
    seconds: Number(seconds.toFixed(1)),
    loopDelayMs: { p999: ms(loopDelay.percentile(99.9)), max: ms(loopDelay.max) },
    insertMs: {
      p99: Number(quantile(0.99).toFixed(2)),
      p999: Number(quantile(0.999).toFixed(2)),
      max: Number(quantile(1).toFixed(1)),
    },
    checkpointedAt: "_tag" in head ? null : head.lastSequence,
  }),
);
