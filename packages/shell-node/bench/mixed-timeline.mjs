#!/usr/bin/env node
/**
 * The mixed workload's latency split (issue 13): 16 producers at RATE jobs/s
 * in all (default 500), 8 workers of the worker runtime, SECS seconds
 * (default 5). Timestamps at the insert call, at its answer and on the
 * handler's first line, joined by job id: where the insert → handler
 * latency goes (the durable write before the answer, or the hand-over to
 * the handler after it), with the store's inline-write counts.
 *
 *   pnpm build && node packages/shell-node/bench/mixed-timeline.mjs
 *   DUR=Segment RATE=2000 ROOT=<tree> NOIDX=1 node packages/shell-node/bench/mixed-timeline.mjs
 *
 * NOIDX=1 opens without the terminal index. Data in bench/tmp (TAY_BENCH_DIR).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { benchRoot } from "./lib/common.mjs";

const here = new URL(".", import.meta.url).pathname;
const root = resolve(process.env.ROOT ?? join(here, "../../.."));
const { openTay, initTay } = await import(join(root, "packages/shell-node/bench/lib/tay.mjs"));
const directory = mkdtempSync(join(benchRoot(), "mixed-timeline-"));
const durability = process.env.DUR ?? "Maximal";
const producers = 16;
const rate = Number(process.env.RATE ?? 500);
const seconds = Number(process.env.SECS ?? 5);

await initTay(directory);
const options = process.env.NOIDX ? { terminalIndex: false } : {};
const tay = await openTay(directory, durability, { options });
const sent = new Map();
const answered = new Map();
const started = new Map();
const now = () => performance.now();
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const t0 = now();
const deadline = t0 + seconds * 1000;
const interval = (1000 * producers) / rate;
let stopped = false;

const producer = async (lane) => {
  let next = t0 + (lane * interval) / producers;
  while (now() < deadline) {
    const wait = next - now();
    if (wait > 0) await sleep(wait);
    if (now() >= deadline) break;
    next += interval;
    const at = now();
    const job = await tay.insert("bench", { at });
    sent.set(job.jobId, at);
    answered.set(job.jobId, now());
  }
};
const working = tay.process({
  concurrency: 8,
  shouldStop: () => stopped,
  onStart: (_args, id) => {
    if (!stopped) started.set(id, now());
  },
  onCompleted: () => {},
});
await Promise.all(Array.from({ length: producers }, (_, lane) => producer(lane)));
stopped = true;
await working;

const percentile = (values, p) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const toAnswer = [];
const toStart = [];
const answerToStart = [];
for (const [id, at] of sent) {
  const answer = answered.get(id) ?? at;
  toAnswer.push(answer - at);
  const start = started.get(id);
  if (start === undefined) continue;
  toStart.push(start - at);
  answerToStart.push(start - answer);
}
const ms = (value) => `${value.toFixed(3)} ms`;
const stats = await tay.stats();
console.log(
  `${durability}, ${rate} jobs/s, ${sent.size} jobs: call → answer p50 ${ms(percentile(toAnswer, 50))}, p99 ${ms(percentile(toAnswer, 99))}; call → handler p50 ${ms(percentile(toStart, 50))}, p99 ${ms(percentile(toStart, 99))}; answer → handler p50 ${ms(percentile(answerToStart, 50))}; inline writes ${JSON.stringify(stats.inlineWrites ?? null)}`,
);
await tay.close();
rmSync(directory, { recursive: true, force: true });
