// One cold open in a fresh process, so that no earlier open's heap or JIT
// state colours it: opens the data in `directory`, claims the first job (and
// completes it, so the next open has no orphan to rescue), closes, and prints
// one JSON line: seconds to ready (open resolved) and to the first claim,
// the CPU seconds (user + system, all threads) the open took, for Tay the
// recovery report's split, and memory: the heap the opened store holds (live
// heap after a full collection, less the same measure taken before the open,
// so the modules already loaded do not count), the off-heap buffers, and the
// process's peak resident size up to ready (the open's high-water mark).
// The heap is measured after the first claim, so the time to it holds no
// collection of the benchmark's own.
// Run with --expose-gc for the collections (`openInChild` does); without it
// the heap figures include garbage.
//
//   node packages/shell-node/bench/lib/open-child.mjs tay|sqlite <directory>
//
// TAY_BENCH_OPTIONS (JSON) adds engine options to Tay's open.
import { openSqlite } from "./sqlite.mjs";
import { openTay } from "./tay.mjs";

const [system, directory] = process.argv.slice(2);
if ((system !== "tay" && system !== "sqlite") || directory === undefined) {
  console.error("usage: open-child.mjs tay|sqlite <directory>");
  process.exit(2);
}
const collect = () => globalThis.gc?.();
collect();
const heapBefore = process.memoryUsage();
const started = performance.now();
const cpuStarted = process.cpuUsage();
// Engine options for Tay as JSON (e.g. '{"terminalIndex":false}'), from the caller's environment.
const options = JSON.parse(process.env.TAY_BENCH_OPTIONS ?? "{}");
const driver =
  system === "tay"
    ? await openTay(directory, "Maximal", { options })
    : openSqlite(directory, "FULL");
const readySeconds = (performance.now() - started) / 1000;
const readyCpu = process.cpuUsage(cpuStarted);
const readyCpuSeconds = (readyCpu.user + readyCpu.system) / 1e6;
// maxRSS is in KiB.
const peakRssBytes = process.resourceUsage().maxRSS * 1024;
const job = await driver.claim("bench");
const claimSeconds = (performance.now() - started) / 1000;
// The heap is measured after the first claim: the full collection it takes
// (~0.2-0.3 s for a million records' state) is the benchmark's own work,
// and before 2026-12-02 it was counted in the time to the first claim.
collect();
const heapReady = process.memoryUsage();
const heldHeapBytes = heapReady.heapUsed - heapBefore.heapUsed;
const heldExternalBytes = heapReady.external - heapBefore.external;
if (job !== undefined) await driver.complete(job);
await driver.close();
console.log(
  JSON.stringify({
    readySeconds,
    readyCpuSeconds,
    claimSeconds,
    claimed: job !== undefined,
    heldHeapBytes,
    heldExternalBytes,
    peakRssBytes,
    terminalIndex: driver.report?.terminalIndex ?? null,
    validateMs: driver.report?.validateMs,
    foldMs: driver.report?.foldMs,
    records: driver.report?.records,
    bytes: driver.report?.bytes,
  }),
);
