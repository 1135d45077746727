/**
 * Loaded with `node --expose-gc --import` before the `tay` binary by
 * copy-memory.mjs: every 200 ms, a full collection and then the heap used
 * (what is live: the heap used between collections is mostly garbage
 * and grows with the allocation rate, not with what is held); at exit,
 * writes the peak of those and the peak RSS
 * (`process.resourceUsage().maxRSS`, KiB) to the file TAY_MEMORY_REPORT
 * names.
 */
import { writeFileSync } from "node:fs";

let peakHeap = 0;
const collect = typeof globalThis.gc === "function" ? globalThis.gc : () => undefined;
const sample = () => {
  collect();
  const used = process.memoryUsage().heapUsed;
  if (used > peakHeap) peakHeap = used;
};
setInterval(sample, 200).unref();
process.on("exit", () => {
  const report = process.env.TAY_MEMORY_REPORT;
  if (report !== undefined) {
    writeFileSync(report, JSON.stringify({ peakHeap, maxRss: process.resourceUsage().maxRSS }));
  }
});
