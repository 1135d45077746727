#!/usr/bin/env node
/**
 * Everything a script allocates, by function: runs SCRIPT under V8's
 * sampling heap profiler with collected objects included (young and old
 * generation), then prints the sampled bytes by allocating function,
 * divided by UNITS (jobs, inserts) when given. Allocation, unlike time,
 * survives a loaded machine: the figure for A/B runs of two trees.
 *
 *   DUR=Throughput N=30000 node --expose-gc bench/alloc-profile.mjs \
 *     packages/shell-node/bench/process.mjs [UNITS=60000] [ROWS=30]
 *
 * The script's own environment (ROOT=<tree>, ...) passes through. Sampling
 * interval 4 KiB: small figures per unit are noisy, large ones are not.
 */
import { Session } from "node:inspector/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [script, units = "1", rows = "30"] = process.argv.slice(2);
if (script === undefined) throw new Error("usage: alloc-profile.mjs SCRIPT [UNITS] [ROWS]");
const session = new Session();
session.connect();
await session.post("HeapProfiler.enable");
await session.post("HeapProfiler.startSampling", {
  samplingInterval: 4096,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
// The script reads process.argv for nothing but its own path.
await import(pathToFileURL(resolve(script)).href);
const { profile } = await session.post("HeapProfiler.stopSampling");

const bySite = new Map();
let total = 0;
const walk = (node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const site = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber}`;
  total += node.selfSize;
  bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  for (const child of node.children) walk(child);
};
walk(profile.head);
const per = Number(units);
console.log(
  `allocated in all: ${(total / 1e6).toFixed(1)} MB, ${(total / per).toFixed(0)} B per unit`,
);
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) {
  console.log(`${(bytes / per).toFixed(0).padStart(8)} B  ${site}`);
}
