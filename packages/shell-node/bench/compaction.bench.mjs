#!/usr/bin/env node
/**
 * Peak memory of a compaction of a store with many retained completed jobs
 * (issue 19, streaming compaction), this tree's engine beside a baseline
 * engine built from another checkout, alternated.
 *
 * One store is written straight into the log (`buildHistoryStore`: N jobs,
 * A of them only inserted, the rest inserted, started and completed in the
 * hour before, 200-byte args), then compacted once with a day's retention
 * (so every run compacts the same compacted store: a base of N jobs). Each
 * run is a fresh process (`lib/compaction-child.mjs`, --expose-gc) that
 * opens the store with the terminal index (a lean state: the completed
 * jobs are facts, their records on disk), compacts with a day's retention
 * (every job kept), and reports the peak heap sampled above what the open
 * held, and the resident peak before and after the compaction.
 *
 *   pnpm build && node packages/shell-node/bench/compaction.bench.mjs \
 *     --baseline /path/to/other/checkout [--jobs 200000] [--active 1000] [--rounds 3]
 *
 * (the baseline checkout built: its packages/shell-node/dist/index.js is
 * imported). Without `--baseline` (as `pnpm bench` runs it) only this
 * tree's engine is measured. Data goes to bench/tmp (TAY_BENCH_DIR to change it) and is
 * removed at the end; BENCH_COMPACTION_KEEP=1 keeps the store and reuses it
 * on the next run with the same sizes. Prints a table, then one JSON line.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { EnginePromises } from "../dist/index.js";
import { benchRoot, formatNumber, machineLoad, makeArgs, removeDirectory } from "./lib/common.mjs";
import { buildHistoryStore } from "./lib/tay.mjs";

const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
};
const jobs = Number(option("jobs", 200_000));
const active = Number(option("active", 1_000));
const rounds = Number(option("rounds", 3));
const baseline = option("baseline", undefined);
const engines = {
  baseline: baseline === undefined ? "" : resolve(baseline, "packages/shell-node/dist/index.js"),
  streamed: new URL("../dist/index.js", import.meta.url).pathname,
};
/** The engines measured: this tree's, and the baseline's when one was named. */
const names = baseline === undefined ? ["streamed"] : ["baseline", "streamed"];
const child = new URL("./lib/compaction-child.mjs", import.meta.url).pathname;
const directory = join(benchRoot(), "compaction");

const runChild = (engine) => {
  const run = spawnSync(process.execPath, ["--expose-gc", child, engine, directory], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`compaction-child failed: ${run.stderr}`);
  const lines = run.stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1] ?? "{}");
};

const keep = process.env.BENCH_COMPACTION_KEEP === "1";
const marker = `${directory}.json`;
const sizes = JSON.stringify({ jobs, active });

const build = async () => {
  if (keep && existsSync(marker) && readFileSync(marker, "utf8") === sizes) return null;
  removeDirectory(directory);
  const started = performance.now();
  await buildHistoryStore(directory, {
    records: 3 * (jobs - active) + active,
    availableJobs: active,
    args: makeArgs(),
  });
  // Once, so that every measured run compacts the same compacted store.
  const first = await EnginePromises.open(directory, { timers: false });
  await first.compact(86_400_000);
  await first.close();
  writeFileSync(marker, sizes);
  return (performance.now() - started) / 1000;
};

const loadBefore = machineLoad();
const buildSeconds = await build();

const runs = { baseline: [], streamed: [] };
for (let round = 0; round < rounds; round++) {
  // Alternated, the order swapped each round.
  const order = round % 2 === 0 ? names : [...names].reverse();
  for (const name of order) runs[name].push(runChild(engines[name]));
}
const loadAfter = machineLoad();
if (!keep) {
  removeDirectory(directory);
  removeDirectory(marker);
}

const mib = (bytes) => `${formatNumber(bytes / 1024 / 1024, 1)} MiB`;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const summary = {};
for (const name of names) {
  const list = runs[name];
  summary[name] = {
    peakHeapAbove: median(list.map((run) => run.peakHeapAbove)),
    peakHeldAbove: median(list.map((run) => run.peakHeldAbove)),
    rssPeakGrowth: median(list.map((run) => run.maxRssAfter - run.maxRssBefore)),
    seconds: median(list.map((run) => run.seconds)),
    cpuSeconds: median(list.map((run) => run.cpuSeconds)),
    retained: list[0]?.retained,
    baseRecordCount: list[0]?.baseRecordCount,
  };
}
console.log(
  `compaction of ${formatNumber(jobs)} jobs (${formatNumber(active)} active), a day's retention, ${rounds} rounds alternated (medians)`,
);
for (const name of names) {
  const s = summary[name];
  console.log(
    `${name.padEnd(9)} peak heap +${mib(s.peakHeapAbove)}  heap+external +${mib(s.peakHeldAbove)}  resident peak +${mib(s.rssPeakGrowth)}  ${formatNumber(s.seconds, 2)} s (CPU ${formatNumber(s.cpuSeconds, 2)} s)  (${formatNumber(s.retained)} retained facts, ${formatNumber(s.baseRecordCount)} base records)`,
  );
}
console.log(
  JSON.stringify({ jobs, active, rounds, buildSeconds, loadBefore, loadAfter, summary, runs }),
);
