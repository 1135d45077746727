// The sorted map alone (not run by `pnpm bench`): N ascending keys set one
// persistent update at a time (as a running engine grows its indexes), then
// N steps of a queue (the smallest key removed, a larger one set), then
// 10,000 small maps of a few entries each; keys-only maps when the build
// has them. Prints the bytes allocated per insert and per step (the used heap's growth between collections, summed:
// `v8.GCProfiler`), the heap the map retains per entry (per small map)
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
// Every value is null, as in the job indexes: a build that has keys-only
// maps (docs/core.md, 2026-12-04, issue 19) makes them as the state does.
const keysOnly = typeof SortedMap.keysOnly === "function";
const emptyMap = () =>
  keysOnly ? SortedMap.keysOnly(compareNumbers) : SortedMap.empty(compareNumbers);
console.log(`${modulePath}: ${keysOnly ? "keys-only maps" : "maps of null values"}`);

const collect = () => {
  globalThis.gc();
  globalThis.gc();
  return getHeapStatistics().used_heap_size;
};
const cpuNs = (start) => {
  const { user, system } = process.cpuUsage(start);
  return ((user + system) * 1000) / count;
};

// Bytes allocated while `run` runs: the used heap's growth between collections, summed.
const allocatedBy = (run) => {
  const start = getHeapStatistics().used_heap_size;
  const profiler = new GCProfiler();
  profiler.start();
  run();
  const end = getHeapStatistics().used_heap_size;
  let allocated = 0;
  let last = start;
  for (const { beforeGC, afterGC } of profiler.stop().statistics) {
    allocated += beforeGC.heapStatistics.usedHeapSize - last;
    last = afterGC.heapStatistics.usedHeapSize;
  }
  return allocated + end - last;
};

const before = collect();
let map = emptyMap();
const started = process.cpuUsage();
const allocated = allocatedBy(() => {
  for (let key = 0; key < count; key++) map = map.set(key, null);
});
const insertNs = cpuNs(started);
const retained = collect() - before;
console.log(
  `${count} ascending persistent sets: ${(allocated / count).toFixed(0)} B allocated/insert, ` +
    `${(retained / count).toFixed(1)} B retained/entry, ${insertNs.toFixed(0)} ns CPU/insert (size ${map.size})`,
);
const churned = process.cpuUsage();
const churnAllocated = allocatedBy(() => {
  for (let key = 0; key < count; key++) map = map.delete(key).set(count + key, null);
});
console.log(
  `${count} queue steps (delete the smallest, set past the largest): ${cpuNs(churned).toFixed(0)} ns CPU/step, ` +
    `${(churnAllocated / count).toFixed(0)} B allocated/step, ` +
    `${((collect() - before) / map.size).toFixed(1)} B retained/entry`,
);
map = null;
// Small maps (one per queue, say) built by ascending sets: what each holds,
// its edge leaves' free slots included.
const small = [];
for (const size of [1, 2, 8, 20, 40]) {
  const start = collect();
  const maps = [];
  for (let index = 0; index < 10_000; index++) {
    let one = emptyMap();
    for (let key = 0; key < size; key++) one = one.set(key, null);
    maps.push(one);
  }
  small.push(`${size}: ${((collect() - start) / maps.length).toFixed(0)} B`);
  // Let them go before the next size's first collection.
  maps.length = 0;
}
console.log(`10,000 small maps by entries, retained per map: ${small.join(", ")}`);
