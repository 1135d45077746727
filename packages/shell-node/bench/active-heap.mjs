#!/usr/bin/env node
/**
 * Where an active job's bytes go (issue 19): builds two stores (A jobs
 * inserted only, 200-byte args, as `terminal.bench.mjs`'s "active" store;
 * and an empty one), opens each in a fresh process (`--expose-gc`, the
 * terminal index on), takes a V8 heap snapshot after two full collections,
 * and prints the difference per job by kind of heap object (V8's node type
 * and name: `Object` for plain objects, strings by length, `number` for heap
 * numbers, `(object elements)` for arrays' backing stores).
 *
 *   pnpm build && node packages/shell-node/bench/active-heap.mjs [--active 20000]
 *
 * ROOT=<repository> measures another build's dist (the stores are built
 * with this tree's). Data goes to bench/tmp/active-heap (TAY_BENCH_DIR).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { benchRoot, makeArgs } from "./lib/common.mjs";

const [mode, directory] = process.argv.slice(2);

/** In a child: open, collect, snapshot, print the totals by (type, name). */
const snapshotTotals = async () => {
  const root = process.env.ROOT ?? resolve(new URL(".", import.meta.url).pathname, "../../..");
  const { EnginePromises } = await import(`${root}/packages/shell-node/dist/index.js`);
  const promises = await EnginePromises.open(directory, {
    durability: "Maximal",
    terminalIndex: true,
    timers: false,
  });
  globalThis.gc();
  globalThis.gc();
  const file = writeHeapSnapshot(join(directory, "..", `${process.pid}.heapsnapshot`));
  const snapshot = JSON.parse(readFileSync(file, "utf8"));
  rmSync(file);
  const { node_fields: fields, node_types: nodeTypes } = snapshot.snapshot.meta;
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const totals = {};
  for (let at = 0; at < snapshot.nodes.length; at += fields.length) {
    const type = nodeTypes[0][snapshot.nodes[at + typeAt]];
    const name = snapshot.strings[snapshot.nodes[at + nameAt]];
    const shown = type === "string" ? `length ${name.length}` : type === "number" ? "" : name;
    const key = `${type} ${shown.slice(0, 40)}`.trim();
    totals[key] ??= { count: 0, bytes: 0 };
    totals[key].count++;
    totals[key].bytes += snapshot.nodes[at + sizeAt];
  }
  await promises.close();
  console.log(JSON.stringify(totals));
};

const main = async () => {
  const at = process.argv.indexOf("--active");
  const active = at === -1 ? 20_000 : Number(process.argv[at + 1]);
  const { buildHistoryStore, initTay } = await import("./lib/tay.mjs");
  const base = join(benchRoot(), "active-heap");
  const stores = { empty: join(base, "empty"), active: join(base, `active-${active}`) };
  mkdirSync(base, { recursive: true });
  if (!existsSync(join(stores.empty, "CURRENT"))) await initTay(stores.empty);
  if (!existsSync(join(stores.active, "CURRENT"))) {
    await buildHistoryStore(stores.active, {
      records: active,
      availableJobs: active,
      args: makeArgs(),
    });
  }
  const measure = (store) => {
    const run = spawnSync(process.execPath, ["--expose-gc", import.meta.filename, "child", store], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.status !== 0) throw new Error(`child failed: ${run.stderr}`);
    return JSON.parse(run.stdout.trim().split("\n").pop());
  };
  // The empty store twice: its first open writes the index directory.
  measure(stores.empty);
  const empty = measure(stores.empty);
  const full = measure(stores.active);
  const rows = Object.entries(full)
    .map(([key, { count, bytes }]) => {
      const before = empty[key] ?? { count: 0, bytes: 0 };
      return { key, count: count - before.count, bytes: bytes - before.bytes };
    })
    .filter((row) => Math.abs(row.bytes) >= active)
    .sort((left, right) => right.bytes - left.bytes);
  let total = 0;
  for (const row of Object.entries(full)) total += row[1].bytes - (empty[row[0]]?.bytes ?? 0);
  console.log(`${active} active jobs (${process.env.ROOT ?? "this tree"}): bytes per job by kind`);
  for (const { key, count, bytes } of rows) {
    console.log(
      `${key.padEnd(44)} ${String(count).padStart(8)} objects ${(bytes / active).toFixed(1).padStart(7)} B`,
    );
  }
  console.log(
    `${"all kinds".padEnd(44)} ${"".padStart(16)} ${(total / active).toFixed(1).padStart(7)} B`,
  );
};

if (mode === "child" && directory !== undefined) await snapshotTotals();
else await main();
