// The open of a 1M-record store with the terminal index (issue 19): each
// open in a fresh process (`openInChild`), alternating three cases round by
// round so that a change in the machine's load falls on all of them: the
// index missing (rebuilt during the open's one fold), the index current
// (left by the previous clean close) and `terminalIndex: false` (every job
// whole in memory: the engine before the index). Prints one line per
// open and the medians, with the load average before and after.
//
//   pnpm build && node packages/shell-node/bench/terminal-index.bench.mjs [ROUNDS]
//
// BENCH_RECOVERY_DIR keeps the built store for the next run (as store.bench.mjs);
// BENCH_CASES (e.g. "current,whole") runs only the cases named.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { freshDirectory, machineLoad, makeArgs, median } from "./lib/common.mjs";
import { openInChild } from "./lib/profile.mjs";
import { buildHistoryStore } from "./lib/tay.mjs";

const rounds = Number(process.argv[2] ?? 3);
const records = 1_000_000;
const kept = process.env.BENCH_RECOVERY_DIR;
const directory = kept ?? freshDirectory("terminal-index-bench");
const load = () => {
  const { load1, cpus } = machineLoad();
  return `${load1.toFixed(2)} on ${cpus} cores`;
};
console.log(`load average before: ${load()}`);
if (!(kept !== undefined && existsSync(join(directory, "CURRENT")))) {
  await buildHistoryStore(directory, { records, availableJobs: 10_000, args: makeArgs() });
}
const index = join(directory, "terminal-index");
// In this order: "current" follows an open with the index (an open without it appends past
// HEAD's sequence, and the next open with it rebuilds by a second fold).
const cases = {
  missing: () => {
    rmSync(index, { recursive: true, force: true });
    return {};
  },
  current: () => ({}),
  whole: () => ({ terminalIndex: false }),
};
// BENCH_CASES=current,whole runs only those cases.
const only = process.env.BENCH_CASES?.split(",");
for (const name of Object.keys(cases))
  if (only !== undefined && !only.includes(name)) delete cases[name];
const results = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  for (const [name, prepare] of Object.entries(cases)) {
    process.env.TAY_BENCH_OPTIONS = JSON.stringify(prepare());
    const opened = openInChild("tay", directory);
    results[name].push(opened);
    console.log(
      JSON.stringify({
        case: name,
        readySeconds: opened.readySeconds,
        validateMs: opened.validateMs,
        foldMs: opened.foldMs,
        heldHeapMB: (opened.heldHeapBytes + opened.heldExternalBytes) / 1e6,
        peakRssMB: opened.peakRssBytes / 1e6,
        rebuilt: opened.terminalIndex?.rebuilt ?? null,
      }),
    );
  }
}
for (const [name, opens] of Object.entries(results)) {
  const ready = median(opens.map((open) => open.readySeconds));
  const held = median(opens.map((open) => open.heldHeapBytes + open.heldExternalBytes)) / 1e6;
  const peak = median(opens.map((open) => open.peakRssBytes)) / 1e6;
  console.log(
    `${name}: ready ${ready.toFixed(2)} s, held ${held.toFixed(0)} MB, peak RSS ${peak.toFixed(0)} MB (median of ${opens.length})`,
  );
}
console.log(`load average after: ${load()}`);
if (kept === undefined) rmSync(directory, { recursive: true, force: true });
