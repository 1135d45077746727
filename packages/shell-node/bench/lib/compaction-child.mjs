// One compaction of the compaction benchmark in a fresh process (run with
// --expose-gc):
//
//   compaction-child.mjs <engine module> <directory>
//     opens the store in <directory> with the engine of <engine module> (a
//     built `@tay/shell-node` index.js: this tree's, or a baseline's),
//     terminal index on, then after two full collections compacts with a
//     day's retention (every job kept) while sampling the heap every
//     millisecond the event loop is free, and prints one JSON line: the
//     peak heap and heap + external above what the open held, the resident
//     peak before and after, the compaction's wall and CPU time and its report.
const [engineModule, directory] = process.argv.slice(2);
const { EnginePromises } = await import(engineModule);

const collect = () => {
  globalThis.gc?.();
  globalThis.gc?.();
};

const engine = await EnginePromises.open(directory, { timers: false, terminalIndex: true });
collect();
const before = process.memoryUsage();
const maxRssBefore = process.resourceUsage().maxRSS * 1024;
let peakHeap = before.heapUsed;
let peakHeld = before.heapUsed + before.external;
const sample = () => {
  const usage = process.memoryUsage();
  peakHeap = Math.max(peakHeap, usage.heapUsed);
  peakHeld = Math.max(peakHeld, usage.heapUsed + usage.external);
};
const sampler = setInterval(sample, 1);
const started = performance.now();
const cpu = process.cpuUsage();
const report = await engine.compact(86_400_000);
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
sample();
clearInterval(sampler);
const maxRssAfter = process.resourceUsage().maxRSS * 1024;
const retained = engine.state().terminal.size;
await engine.close();
console.log(
  JSON.stringify({
    heapBefore: before.heapUsed,
    heldBefore: before.heapUsed + before.external,
    peakHeapAbove: peakHeap - before.heapUsed,
    peakHeldAbove: peakHeld - (before.heapUsed + before.external),
    maxRssBefore,
    maxRssAfter,
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    retained,
    baseRecordCount: report.baseRecordCount,
    baseSegments: report.baseSegments,
  }),
);
