#!/usr/bin/env node
/**
 * Memory and open time of a store whose jobs are mostly terminal (issue 19),
 * with the terminal inspection index (`terminalIndex: true`, a lean state)
 * and without it (the full state).
 *
 * Three stores are written straight into the log (`buildHistoryStore`: each
 * terminal job inserted, started and completed, three records; each active
 * job inserted only, one record; 200-byte args): "jobs" holds N jobs of
 * which A are active, "active" only the A active ones, "empty" none. Each
 * case runs in its own process (`lib/terminal-child.mjs`, --expose-gc) and
 * measures what the open holds after two full collections: live heap plus
 * off-heap buffers (a lean state's fact pages are typed arrays), and the
 * resident size, each less the same before the open. The split:
 *
 *   per terminal job = (held("jobs") - held("active")) / (N - A)
 *   per active job   = (held("active") - held("empty")) / A
 *
 * Open time (the index current, so the open resumes from the state image
 * the previous close wrote beside it) is set beside the baseline of
 * reading every segment file and running the codec's CRC-32C over it (a
 * warm page cache for both: the baseline runs first and again after), and
 * beside the open with the index directory deleted (rebuilt from the log,
 * every record folded), and beside the open of a copy of the store after a
 * crash (`--tail` jobs, 10,000 by default, inserted, claimed and completed
 * after an open, then an exit without a close: the open resumes from the
 * last image, folds the records after it and catches the index up;
 * BENCH_CRASH_PRODUCERS=P works them by P loops of one job at a time, a
 * store never idle, instead of batches of 1,000).
 *
 * Targets, reported and not asserted: <= 64 bytes of memory per terminal
 * job and <= 400 per active job with the index; open with a current index
 * <= 2x the read-and-CRC baseline.
 *
 *   pnpm build && node --expose-gc packages/shell-node/bench/terminal.bench.mjs \
 *     [--jobs 1000000] [--active 10000] [--tail 10000]
 *   (the full size: --jobs 10000000 --active 100000)
 *
 * Data goes to bench/tmp (TAY_BENCH_DIR to change it) and is removed at the
 * end; BENCH_TERMINAL_DIR=path keeps the stores there and reuses them on the
 * next run with the same sizes. Prints a table, then one JSON line.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Effect } from "effect";
import { NodeDisk, TerminalIndex } from "../dist/index.js";
import { benchRoot, formatNumber, machineLoad, makeArgs, removeDirectory } from "./lib/common.mjs";
import { buildHistoryStore, initTay } from "./lib/tay.mjs";

const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const jobs = option("jobs", 1_000_000);
const active = option("active", 10_000);
if (!(Number.isInteger(jobs) && Number.isInteger(active) && active > 0 && jobs > active)) {
  throw new Error(`--jobs ${jobs} --active ${active}: want integers with jobs > active > 0`);
}
const targets = { terminalBytes: 64, activeBytes: 400, openRatio: 2 };
// Jobs worked (three records each) between an open and a crash.
const tailJobs = option("tail", 10_000);
const kept = process.env.BENCH_TERMINAL_DIR;
const root = kept ?? join(benchRoot(), "terminal");
const child = new URL("./lib/terminal-child.mjs", import.meta.url).pathname;

// Room for the full state of the large store (the index off): several GB.
const heapFlag = `--max-old-space-size=${process.env.BENCH_TERMINAL_HEAP_MB ?? 16_384}`;

const runChild = (...args) => {
  const run = spawnSync(process.execPath, ["--expose-gc", heapFlag, child, ...args], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (run.status !== 0) {
    throw new Error(
      `terminal-child ${args.join(" ")} failed (${run.status ?? run.signal}): ${run.stderr}`,
    );
  }
  const lines = run.stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1] ?? "{}");
};

/** Builds the three stores (or reuses kept ones of the same sizes). */
const buildStores = async () => {
  const stores = {
    jobs: join(root, "jobs"),
    active: join(root, "active"),
    empty: join(root, "empty"),
  };
  const marker = join(root, "sizes.json");
  const sizes = JSON.stringify({ jobs, active });
  if (kept !== undefined && existsSync(marker) && readFileSync(marker, "utf8") === sizes) {
    return { stores, buildSeconds: null };
  }
  const started = performance.now();
  for (const directory of Object.values(stores)) removeDirectory(directory);
  removeDirectory(root);
  mkdirSync(root, { recursive: true });
  const args = makeArgs();
  await initTay(stores.empty);
  await buildHistoryStore(stores.active, { records: active, availableJobs: active, args });
  const terminalJobs = jobs - active;
  await buildHistoryStore(stores.jobs, {
    records: 3 * terminalJobs + active,
    availableJobs: active,
    args,
  });
  writeFileSync(marker, sizes);
  return { stores, buildSeconds: (performance.now() - started) / 1000 };
};

const heldBytes = (open) => open.heapBytes + open.externalBytes;

/** A case that may not fit in memory (the full state of a large store): null when it failed. */
const runChildOrNull = (...args) => {
  try {
    return runChild(...args);
  } catch (error) {
    console.log(`(${args.join(" ")} failed: ${String(error.message).split("\n")[0]})`);
    return null;
  }
};

const loadBefore = machineLoad();
const { stores, buildSeconds } = await buildStores();
const dropIndex = (directory) => removeDirectory(TerminalIndex.indexPath(directory));

// The baseline first (it also warms the page cache), then the opens.
const crcFirst = runChild("crc", stores.jobs);
dropIndex(stores.jobs);
const rebuildCold = runChild("open", stores.jobs, "on");
const current = [runChild("open", stores.jobs, "on"), runChild("open", stores.jobs, "on")];
// A crash some work after an open that resumed: the next open resumes from
// the same image and folds the records after it (a copy of the store).
const crashed = join(root, "crashed");
removeDirectory(crashed);
cpSync(stores.jobs, crashed, { recursive: true });
runChild("crash", crashed, String(tailJobs));
// The records the open after the crash folds: those after the image HEAD names.
const crashedHead = await Effect.runPromise(
  Effect.provide(TerminalIndex.peek(crashed), NodeDisk.layer),
);
const afterCrash = runChild("open", crashed, "on");
const foldedAfterCrash =
  "_tag" in crashedHead ? null : afterCrash.records - crashedHead.lastSequence;
removeDirectory(crashed);
const full = runChildOrNull("open", stores.jobs, "off");
const crcSecond = runChild("crc", stores.jobs);
dropIndex(stores.jobs);
const rebuild = runChild("open", stores.jobs, "on");
for (const directory of [stores.active, stores.empty]) {
  dropIndex(directory);
  runChild("open", directory, "on");
}
const activeOn = runChild("open", stores.active, "on");
const emptyOn = runChild("open", stores.empty, "on");
const activeOff = runChild("open", stores.active, "off");
const emptyOff = runChild("open", stores.empty, "off");
const loadAfter = machineLoad();

const jobsOn = current.reduce((best, open) => (open.seconds < best.seconds ? open : best));
const crc = crcSecond.seconds < crcFirst.seconds ? crcSecond : crcFirst;
const terminalJobs = jobs - active;
const split = (withJobs, withActive, empty) => ({
  terminalBytes: (heldBytes(withJobs) - heldBytes(withActive)) / terminalJobs,
  activeBytes: (heldBytes(withActive) - heldBytes(empty)) / active,
  terminalRssBytes: (withJobs.rssBytes - withActive.rssBytes) / terminalJobs,
  activeRssBytes: (withActive.rssBytes - empty.rssBytes) / active,
});
const lean = split(jobsOn, activeOn, emptyOn);
const whole = full === null ? null : split(full, activeOff, emptyOff);
const openRatio = jobsOn.seconds / crc.seconds;
// On a shared machine wall time counts other processes' turns: CPU time beside it.
const openCpuRatio = jobsOn.cpuSeconds / crc.cpuSeconds;
const verdict = (value, limit) => (value <= limit ? "met" : "MISSED");

if (jobsOn.jobs !== jobs || (full !== null && full.jobs !== jobs)) {
  throw new Error(`the opens counted ${jobsOn.jobs} and ${full?.jobs} jobs, not ${jobs}`);
}
if (rebuild.rebuilt === null || jobsOn.rebuilt !== null) {
  throw new Error("the index was not rebuilt when deleted, or rebuilt when current");
}
// A current index's open resumes from the state image the previous close wrote.
if (jobsOn.imageRefused !== null || rebuild.imageRefused === null) {
  throw new Error(
    `the current open did not resume from the state image (${jobsOn.imageRefused}), or the rebuild did`,
  );
}

if (afterCrash.imageRefused !== null || afterCrash.rebuilt !== null) {
  throw new Error(
    `the open after a crash did not resume and catch up (${afterCrash.imageRefused}; ${afterCrash.rebuilt})`,
  );
}

const mb = (bytes) => formatNumber(bytes / 1e6, 1);
console.log(
  `store: ${formatNumber(jobs)} jobs, ${formatNumber(active)} active, ${mb(crc.bytes)} MB of segments` +
    (buildSeconds === null ? " (kept)" : ` (built in ${buildSeconds.toFixed(1)} s)`),
);
console.log(
  `load: ${loadBefore.load1.toFixed(2)} before, ${loadAfter.load1.toFixed(2)} after (${loadAfter.cpus} CPUs)`,
);
const rows = [
  ["case", "open s", "cpu s", "heap+ext MB", "RSS MB"],
  ["read + CRC-32C", crc.seconds.toFixed(2), crc.cpuSeconds.toFixed(2), "", ""],
  ...[
    ["index on, current (state image)", jobsOn],
    [
      `index on, crashed (${formatNumber(3 * tailJobs)} worked, ${foldedAfterCrash === null ? "?" : formatNumber(foldedAfterCrash)} folded)`,
      afterCrash,
    ],
    ["index on, deleted (rebuild)", rebuild],
    ["index on, first open (rebuild)", rebuildCold],
    ...(full === null ? [] : [["index off (full state)", full]]),
  ].map(([name, open]) => [
    name,
    open.seconds.toFixed(2),
    open.cpuSeconds.toFixed(2),
    mb(heldBytes(open)),
    mb(open.rssBytes),
  ]),
];
for (const row of rows)
  console.log(row.map((cell, at) => (at === 0 ? cell.padEnd(44) : cell.padStart(12))).join(""));
console.log(
  `per terminal job: ${lean.terminalBytes.toFixed(1)} B heap+ext (${lean.terminalRssBytes.toFixed(1)} B RSS) with the index, ` +
    `${whole === null ? "(failed)" : whole.terminalBytes.toFixed(1)} B without; target <= ${targets.terminalBytes}: ${verdict(lean.terminalBytes, targets.terminalBytes)}`,
);
console.log(
  `per active job: ${lean.activeBytes.toFixed(1)} B heap+ext (${lean.activeRssBytes.toFixed(1)} B RSS) with the index, ` +
    `${whole === null ? "(failed)" : whole.activeBytes.toFixed(1)} B without; target <= ${targets.activeBytes}: ${verdict(lean.activeBytes, targets.activeBytes)}`,
);
console.log(
  `open, index current: ${openRatio.toFixed(2)}x read + CRC; target <= ${targets.openRatio}x: ${verdict(openRatio, targets.openRatio)}` +
    ` (CPU time: ${openCpuRatio.toFixed(2)}x)` +
    `; rebuild ${(rebuild.seconds / crc.seconds).toFixed(2)}x (CPU ${(rebuild.cpuSeconds / crc.cpuSeconds).toFixed(2)}x; ${rebuild.rebuilt})`,
);
console.log(
  JSON.stringify({
    bench: "terminal",
    jobs,
    active,
    buildSeconds,
    load: { before: loadBefore, after: loadAfter },
    crc,
    tailJobs,
    foldedAfterCrash,
    opens: {
      current: jobsOn,
      afterCrash,
      rebuild,
      rebuildCold,
      full,
      activeOn,
      emptyOn,
      activeOff,
      emptyOff,
    },
    perJob: { lean, full: whole },
    openRatio,
    openCpuRatio,
    met: {
      terminalBytes: lean.terminalBytes <= targets.terminalBytes,
      activeBytes: lean.activeBytes <= targets.activeBytes,
      openRatio: openRatio <= targets.openRatio,
    },
  }),
);
if (kept === undefined) removeDirectory(root);
