// The sorted map alone (not run by `pnpm bench`): N ascending keys set one
// persistent update at a time (as a running engine grows its indexes), then
// N steps of a queue (the smallest key removed, a larger one set). Prints
// the bytes allocated per insert (the used heap's growth between
// collections, summed: `v8.GCProfiler`), the heap the map retains per entry
// after two collections, and CPU per operation. Pass the compiled module to
// compare two builds (docs/core.md, "Indexes grown at their right edge"):
//   node --expose-gc packages/core/bench/sorted-map.mjs [SortedMap.js] [N]
import { resolve } from "node:path";
import { GCProfiler, getHeapStatistics } from "node:v8";

const modulePath = resolve(
  process.argv[2] ?? new URL("../dist/internal/SortedMap.js", import.meta.url).pathname,
);
const count = Number(process.argv[3] ?? 200_000);
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const { SortedMap, compareNumbers } = await import(modulePath);

const collect = () => {
  globalThis.gc();
  globalThis.gc();
  return getHeapStatistics().used_heap_size;
};
const cpuNs = (start) => {
  const { user, system } = process.cpuUsage(start);
  return ((user + system) * 1000) / count;
};

const before = collect();
const profiler = new GCProfiler();
profiler.start();
let map = SortedMap.empty(compareNumbers);
const started = process.cpuUsage();
for (let key = 0; key < count; key++) map = map.set(key, null);
const insertNs = cpuNs(started);
const end = getHeapStatistics().used_heap_size;
let allocated = 0;
let last = before;
for (const { beforeGC, afterGC } of profiler.stop().statistics) {
  allocated += beforeGC.heapStatistics.usedHeapSize - last;
  last = afterGC.heapStatistics.usedHeapSize;
}
allocated += end - last;
const retained = collect() - before;
console.log(
  `${count} ascending persistent sets: ${(allocated / count).toFixed(0)} B allocated/insert, ` +
    `${(retained / count).toFixed(1)} B retained/entry, ${insertNs.toFixed(0)} ns CPU/insert (size ${map.size})`,
);
const churned = process.cpuUsage();
for (let key = 0; key < count; key++) map = map.delete(key).set(count + key, null);
console.log(
  `${count} queue steps (delete the smallest, set past the largest): ${cpuNs(churned).toFixed(0)} ns CPU/step, ` +
    `${((collect() - before) / map.size).toFixed(1)} B retained/entry`,
);
