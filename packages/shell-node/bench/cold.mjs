#!/usr/bin/env node
/**
 * Cold start of a store of N records (default 1,000,000: 330,000 jobs
 * inserted, started and completed, 10,000 available, as the peer
 * comparison's), from open until the first claim, each open in a fresh
 * process (`lib/open-child.mjs`), beside the read-and-CRC baseline of the
 * same bytes: every byte of the store's files read in 4 MiB chunks and
 * CRC-32C'd, also in a fresh process. With several builds (`ROOTS=a,b`,
 * each a repository tree with its `dist`), rounds alternate build by build,
 * so a shared machine's load falls on both alike. docs/benchmarks.md has
 * the results.
 *
 *   node packages/shell-node/bench/cold.mjs
 *   ROOTS=/work/wt/perf-base,/work/wt/perf ROUNDS=3 node packages/shell-node/bench/cold.mjs
 *
 * The store is built once under bench/tmp/cold-N (kept; `DIR=` another
 * place) with this tree's build; the format is the same for every build.
 * With several builds each opens its own copy of it (`cold-N.1`, `cold-N.2`,
 * ..., made once and kept): an open closes the engine, which rewrites the
 * terminal index's HEAD as that build writes it (since 2026-12-02 with the
 * offsets file beside it), so on one shared copy each build would open
 * what the other left.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { benchRoot, makeArgs } from "./lib/common.mjs";

const here = new URL(".", import.meta.url).pathname;
const ownRoot = resolve(here, "../../..");
const records = Number(process.env.N ?? 1_000_000);
const rounds = Number(process.env.ROUNDS ?? 3);
const roots = (process.env.ROOTS ?? ownRoot).split(",").map((root) => resolve(root));
const directory = process.env.DIR ?? join(benchRoot(), `cold-${records}`);

if (!existsSync(join(directory, "CURRENT"))) {
  const { buildHistoryStore } = await import("./lib/tay.mjs");
  const started = performance.now();
  await buildHistoryStore(directory, {
    records,
    availableJobs: Math.min(10_000, Math.floor(records / 10)),
    args: makeArgs(),
  });
  console.log(`built ${directory} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

// Read and CRC every byte, in a fresh process, with `root`'s codec.
const readAndCrc = (root) => {
  const script = `
    import { closeSync, openSync, readdirSync, readSync } from "node:fs";
    import { join } from "node:path";
    const { crc32c } = await import(${JSON.stringify(`${root}/packages/codec/dist/index.js`)});
    const buffer = new Uint8Array(4 * 1024 * 1024);
    let bytes = 0;
    let crc = 0;
    const started = performance.now();
    const walk = (path) => {
      for (const entry of readdirSync(path, { withFileTypes: true })) {
        const child = join(path, entry.name);
        if (entry.isDirectory()) walk(child);
        else if (entry.isFile()) {
          const fd = openSync(child, "r");
          for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
            crc = crc32c(buffer.subarray(0, read), crc);
            bytes += read;
          }
          closeSync(fd);
        }
      }
    };
    walk(${JSON.stringify(directory)});
    console.log(JSON.stringify({ seconds: (performance.now() - started) / 1000, bytes, crc }));
  `;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`read-and-CRC failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").pop());
};

// One copy of the store per build when there are several (see the top).
const directories = new Map(
  roots.map((root, index) => {
    if (roots.length === 1) return [root, directory];
    const copy = `${directory}.${index + 1}`;
    if (!existsSync(join(copy, "CURRENT"))) cpSync(directory, copy, { recursive: true });
    return [root, copy];
  }),
);

const openOnce = (root) => {
  const child = `${root}/packages/shell-node/bench/lib/open-child.mjs`;
  const run = spawnSync(process.execPath, ["--expose-gc", child, "tay", directories.get(root)], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`open-child (${root}) failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").pop());
};

const median = (values) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const range = (values, digits = 2) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
console.log(`store ${directory}, ${records} records; load ${load()}`);
const results = new Map(roots.map((root) => [root, { opens: [], baseline: [] }]));
for (let round = 0; round < rounds; round++) {
  for (const root of roots) {
    const result = results.get(root);
    const open = openOnce(root);
    const baseline = readAndCrc(root);
    result.opens.push(open);
    result.baseline.push(baseline.seconds);
    console.log(
      `round ${round + 1} ${root}: claim ${open.claimSeconds.toFixed(3)} s, ready ${open.readySeconds.toFixed(3)} s (validate ${Math.round(open.validateMs)} ms, fold ${Math.round(open.foldMs)} ms), CPU ${open.readyCpuSeconds.toFixed(2)} s, heap ${(open.heldHeapBytes / 1e6).toFixed(1)} MB, peak RSS ${(open.peakRssBytes / 1e6).toFixed(0)} MB; read+CRC ${baseline.seconds.toFixed(3)} s (${(baseline.bytes / 1e6).toFixed(1)} MB); load ${load()}`,
    );
  }
}
console.log("\nmedian (min–max) over the rounds:");
for (const [root, { opens, baseline }] of results) {
  const of = (name) => opens.map((open) => open[name]);
  console.log(
    `${root}\n  open → first claim s ${range(of("claimSeconds"))}; ready s ${range(of("readySeconds"))}; ` +
      `CPU to ready s ${range(of("readyCpuSeconds"))}; validate ms ${range(of("validateMs"), 0)}; fold ms ${range(of("foldMs"), 0)}\n` +
      `  held heap MB ${range(
        of("heldHeapBytes").map((bytes) => bytes / 1e6),
        1,
      )}; peak RSS MB ${range(
        of("peakRssBytes").map((bytes) => bytes / 1e6),
        0,
      )}; read-and-CRC baseline s ${range(baseline, 3)}`,
  );
}
console.log(`load ${load()}`);
