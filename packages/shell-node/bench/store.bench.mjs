#!/usr/bin/env node
/**
 * The store under its default durability (`Maximal`: every insert is
 * fdatasync'd before it resolves), on the repository's disk, beside the two
 * references measured in the same run on the same disk: (a) a raw Node loop
 * of write + fdatasync of the same bytes (the physical limit), (b) SQLite
 * (better-sqlite3 12, WAL, synchronous=FULL) inserting the same jobs as rows.
 * Then the open (recovery) time of a store holding 1,000,000 records.
 *
 * Targets, reported and not asserted: 256 concurrent inserters reach >= 50%
 * of the raw loop's bytes/s and >= 3x SQLite FULL's jobs/s; recovery of
 * 1,000,000 records in < 2 s. When one is missed, the phase is run again
 * under the CPU profiler and the top functions are printed (BENCH_PROFILE=0
 * skips this). Prints a table, then one JSON line.
 *
 *   npx tsc -b packages/core packages/codec packages/shell-node
 *   node --expose-gc packages/shell-node/bench/store.bench.mjs
 *
 * Sizes scale with BENCH_SCALE (default 1); the data goes to bench/tmp
 * (TAY_BENCH_DIR to change it) and is removed at the end.
 *
 * Recovery alone (no inserts, no raw loop, no SQLite), e.g. while working on
 * open: `BENCH_ONLY=recovery`. The inserts alone (Tay, the raw loop and
 * SQLite, no recovery store), e.g. while working on the write path:
 * `BENCH_ONLY=inserts`. `BENCH_RECOVERY_DIR=path` keeps the recovery
 * store at `path` and reuses it on the next run (it is built only when
 * `path` holds no store); `BENCH_RECOVERY_OPENS` sets the number of opens
 * (default 3). Each open reports wall and CPU time (user + system of the
 * child), since the machine is shared.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  benchRoot,
  describeDisk,
  formatNumber,
  formatRatio,
  freshDirectory,
  machineLoad,
  makeArgs,
  median,
  printTable,
  removeDirectory,
  runConcurrently,
} from "./lib/common.mjs";
import { openInChild, printProfile, profilePhase } from "./lib/profile.mjs";
import { rawAppendLoop } from "./lib/raw.mjs";
import { openSqlite } from "./lib/sqlite.mjs";
import {
  buildHistoryStore,
  countingDisk,
  describeHistoryStore,
  diskCounters,
  initTay,
  openTay,
} from "./lib/tay.mjs";

const scale = Number(process.env.BENCH_SCALE ?? 1);
const profileOnMiss = process.env.BENCH_PROFILE !== "0";
const recoveryOnly = process.env.BENCH_ONLY === "recovery";
const insertsOnly = process.env.BENCH_ONLY === "inserts";
if (process.env.BENCH_ONLY !== undefined && !recoveryOnly && !insertsOnly) {
  throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY}: only "recovery" and "inserts" are known`);
}
/** A kept recovery store (built once, reused, never removed), or undefined. */
const keptRecoveryDirectory = process.env.BENCH_RECOVERY_DIR;
const sized = (count) => Math.max(1, Math.round(count * scale));

/** Inserts per concurrency level: sized so that each case runs a few seconds. */
const insertCases = [
  { inserters: 1, jobs: sized(1_000) },
  { inserters: 16, jobs: sized(5_000) },
  { inserters: 256, jobs: sized(20_000) },
];
const recoveryRecords = sized(1_000_000);
const recoveryAvailableJobs = Math.min(10_000, Math.floor(recoveryRecords / 10));
const recoveryOpens = insertsOnly ? 0 : Number(process.env.BENCH_RECOVERY_OPENS ?? 3);
const targets = { rawBytesShare: 0.5, sqliteRatio: 3, recoverySeconds: 2 };
const queue = "bench";
const args = makeArgs();

const loadBefore = machineLoad();
const disk = describeDisk(benchRoot());
console.log(
  `data on ${disk.source} (${disk.fsType}, mounted at ${disk.mountPoint}): ${disk.path}` +
    `\nload average before: ${loadBefore.load1.toFixed(2)} on ${loadBefore.cpus} cores`,
);
if (disk.warning !== null) console.log(`WARNING: ${disk.warning}`);

/** N inserts through the engine with `inserters` at once, on a fresh store; disk ops counted. */
const tayInserts = async ({ inserters, jobs }, name) => {
  const directory = freshDirectory(name);
  const counters = diskCounters();
  const layer = countingDisk(counters);
  await initTay(directory, layer);
  const tay = await openTay(directory, "Maximal", { disk: layer });
  // Warm-up at the case's own concurrency: V8 compiles each path as it is
  // first taken (the one-inserter path costs ~170 µs per insert while it is
  // compiled on background threads), and that is not the steady state.
  await runConcurrently(Math.min(jobs, sized(2_000)), inserters, () => tay.insert(queue, args));
  Object.assign(counters, diskCounters());
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  await runConcurrently(jobs, inserters, () => tay.insert(queue, args));
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStarted);
  const written = { ...counters };
  await tay.close();
  removeDirectory(directory);
  return {
    inserters,
    jobs,
    seconds,
    jobsPerSecond: jobs / seconds,
    bytesPerSecond: written.bytes / seconds,
    bytesPerJob: written.bytes / jobs,
    writes: written.writes,
    syncs: written.syncs,
    jobsPerSync: jobs / Math.max(1, written.syncs),
    // CPU time of this process per insert: robust to other processes' load.
    cpuMicrosPerJob: (cpu.user + cpu.system) / jobs,
  };
};

/** SQLite FULL: `jobs` rows, `perTransaction` rows per transaction. */
const sqliteInserts = async (jobs, perTransaction) => {
  const directory = freshDirectory("store-bench-sqlite");
  const sqlite = openSqlite(directory, "FULL");
  const started = performance.now();
  if (perTransaction === 1) {
    for (let index = 0; index < jobs; index++) await sqlite.insert(queue, args);
  } else {
    const batch = Array.from({ length: perTransaction }, () => args);
    for (let done = 0; done < jobs; done += perTransaction) {
      await sqlite.insertMany(queue, batch.slice(0, Math.min(perTransaction, jobs - done)));
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const count = await sqlite.count();
  await sqlite.close();
  removeDirectory(directory);
  if (count !== jobs) throw new Error(`SQLite holds ${count} rows, ${jobs} inserted`);
  return { jobs, perTransaction, seconds, jobsPerSecond: jobs / seconds };
};

const tay = [];
const rawIdeal = [];
const rawSame = [];
const sqliteBatched = [];
let sqliteSingle;
if (!recoveryOnly) {
  // Warm-up: JIT the engine's paths on a throwaway store.
  await tayInserts({ inserters: 16, jobs: sized(1_000) }, "store-bench-warmup");

  for (const insertCase of insertCases) {
    const measured = await tayInserts(insertCase, "store-bench-tay");
    tay.push(measured);
    const rawDirectory = freshDirectory("store-bench-raw");
    const recordBytes = Math.round(measured.bytesPerJob);
    // The limit: every sync carries `inserters` records, as many as can wait together.
    rawIdeal.push(
      rawAppendLoop({
        directory: rawDirectory,
        recordBytes,
        records: insertCase.jobs,
        batch: insertCase.inserters,
        sync: true,
      }),
    );
    // The same number of write+fdatasync of the same bytes as the store issued.
    rawSame.push(
      rawAppendLoop({
        directory: rawDirectory,
        recordBytes,
        records: insertCase.jobs,
        batch: Math.max(1, Math.round(measured.jobsPerSync)),
        sync: true,
      }),
    );
    removeDirectory(rawDirectory);
  }
  sqliteSingle = await sqliteInserts(sized(1_000), 1);
  for (const { inserters, jobs } of insertCases.slice(1)) {
    sqliteBatched.push(await sqliteInserts(jobs, inserters));
  }
}

// Recovery: a store of `recoveryRecords` records written once with
// Throughput and large appends, then opened (validate + fold + ready) several times.
const recoveryDirectory = keptRecoveryDirectory ?? freshDirectory("store-bench-recovery");
const buildStarted = performance.now();
const reused =
  keptRecoveryDirectory !== undefined && existsSync(join(recoveryDirectory, "CURRENT"));
const recoveryHistory = { records: recoveryRecords, availableJobs: recoveryAvailableJobs, args };
const built =
  reused || insertsOnly
    ? describeHistoryStore(recoveryHistory)
    : await buildHistoryStore(recoveryDirectory, recoveryHistory);
const buildSeconds = (performance.now() - buildStarted) / 1000;
// Each open runs in a fresh process: an earlier open's heap (the last
// engine stays reachable for a while after close) would slow the next fold.
const opens = [];
for (let attempt = 0; attempt < recoveryOpens; attempt++) {
  const opened = openInChild("tay", recoveryDirectory);
  opens.push({
    seconds: opened.readySeconds,
    cpuSeconds: opened.readyCpuSeconds,
    claimSeconds: opened.claimSeconds,
    validateMs: opened.validateMs,
    foldMs: opened.foldMs,
    records: opened.records,
    bytes: opened.bytes,
    heldHeapBytes: opened.heldHeapBytes,
    heldExternalBytes: opened.heldExternalBytes,
    peakRssBytes: opened.peakRssBytes,
  });
}
const recoverySeconds = median(opens.map((open) => open.seconds));
const recoveryBytes = opens[0]?.bytes ?? 0;
// What the opened store holds in memory, against what its log holds on disk
// (measured in the same run): heap and off-heap buffers after a full
// collection, per job in the state and as a multiple of the log's bytes.
const recoveryJobs = built.completedJobs + built.availableJobs;
const heldBytes = median(opens.map((open) => open.heldHeapBytes + open.heldExternalBytes));
const peakRssBytes = median(opens.map((open) => open.peakRssBytes));
const memory = {
  jobs: recoveryJobs,
  heldBytes: Math.round(heldBytes),
  bytesPerJob: Math.round(heldBytes / recoveryJobs),
  logRatio: heldBytes / recoveryBytes,
  peakRssBytes: Math.round(peakRssBytes),
};
// Each open claims and completes one job, adding records after the built ones.
if (opens.some((open) => open.records < recoveryRecords)) {
  throw new Error(`recovery read ${opens[0]?.records} records, ${recoveryRecords} written`);
}

const loadAfter = machineLoad();
const mb = (bytesPerSecond) => formatNumber(bytesPerSecond / 1e6, 2);
const verdict = (met) => (met ? "met" : "MISSED");
const checks = [];
let rawShare = Number.NaN;
let sqliteRatio = Number.NaN;
const tay256 = tay[tay.length - 1];
if (!recoveryOnly) {
  const raw256 = rawIdeal[rawIdeal.length - 1];
  rawShare = tay256.bytesPerSecond / raw256.bytesPerSecond;
  sqliteRatio = tay256.jobsPerSecond / sqliteSingle.jobsPerSecond;

  console.log("\ndurable inserts (200-byte args), same disk, same run\n");
  printTable([
    ["case", "jobs/s", "MB/s", "writes", "syncs", "jobs/sync", "Tay vs this (Tay rows: CPU)"],
    ...tay.map((row) => [
      `Tay Maximal, ${row.inserters} inserter(s)`,
      formatNumber(row.jobsPerSecond),
      mb(row.bytesPerSecond),
      formatNumber(row.writes),
      formatNumber(row.syncs),
      formatNumber(row.jobsPerSync, 1),
      `CPU ${formatNumber(row.cpuMicrosPerJob)} µs/job`,
    ]),
    ...rawIdeal.map((row, index) => [
      `raw write+fdatasync, ${insertCases[index].inserters} record(s)/sync`,
      formatNumber(row.recordsPerSecond),
      mb(row.bytesPerSecond),
      formatNumber(row.writes),
      formatNumber(row.writes),
      formatNumber(insertCases[index].inserters, 1),
      `${formatNumber((100 * tay[index].bytesPerSecond) / row.bytesPerSecond, 1)}% of bytes/s`,
    ]),
    ...rawSame.map((row, index) => [
      `raw, Tay's ${insertCases[index].inserters}-inserter write count`,
      formatNumber(row.recordsPerSecond),
      mb(row.bytesPerSecond),
      formatNumber(row.writes),
      formatNumber(row.writes),
      formatNumber(insertCases[index].jobs / row.writes, 1),
      `${formatNumber((100 * tay[index].bytesPerSecond) / row.bytesPerSecond, 1)}% of bytes/s`,
    ]),
    [
      "SQLite FULL, 1 transaction per insert",
      formatNumber(sqliteSingle.jobsPerSecond),
      "",
      "",
      "",
      "1.0",
      `${formatRatio(tay256.jobsPerSecond / sqliteSingle.jobsPerSecond)} (256 inserters)`,
    ],
    ...sqliteBatched.map((row, index) => [
      `SQLite FULL, ${row.perTransaction} inserts per transaction`,
      formatNumber(row.jobsPerSecond),
      "",
      "",
      "",
      formatNumber(row.perTransaction, 1),
      formatRatio(tay[index + 1].jobsPerSecond / row.jobsPerSecond),
    ]),
  ]);
  checks.push(
    [
      `256 inserters >= ${targets.rawBytesShare * 100}% of raw bytes/s`,
      `${formatNumber(rawShare * 100, 1)}%`,
      verdict(rawShare >= targets.rawBytesShare),
    ],
    [
      `256 inserters >= ${targets.sqliteRatio}x SQLite FULL`,
      formatRatio(sqliteRatio),
      verdict(sqliteRatio >= targets.sqliteRatio),
    ],
  );
}

if (!insertsOnly) {
  console.log(
    `\nrecovery: ${formatNumber(recoveryRecords)} records, ${mb(recoveryBytes)} MB ` +
      `(${formatNumber(built.completedJobs)} jobs completed, ${formatNumber(built.availableJobs)} available), ` +
      (reused ? `reused from ${recoveryDirectory}` : `built in ${buildSeconds.toFixed(1)} s`),
  );
  printTable([
    [
      "open (fresh process)",
      "ready s",
      "ready CPU s",
      "first claim s",
      "validate ms",
      "fold ms",
      "held MB",
      "peak RSS MB",
    ],
    ...opens.map((open, index) => [
      `#${index + 1}`,
      open.seconds.toFixed(3),
      open.cpuSeconds.toFixed(3),
      open.claimSeconds.toFixed(3),
      formatNumber(open.validateMs),
      formatNumber(open.foldMs),
      mb(open.heldHeapBytes + open.heldExternalBytes),
      mb(open.peakRssBytes),
    ]),
  ]);
  console.log(
    `memory: the open store holds ${mb(memory.heldBytes)} MB for ` +
      `${formatNumber(memory.jobs)} jobs (${formatNumber(memory.bytesPerJob)} bytes/job), ` +
      `${formatRatio(memory.logRatio)} the log's ${mb(recoveryBytes)} MB; ` +
      `peak RSS during open ${mb(memory.peakRssBytes)} MB`,
  );
  checks.push([
    `recovery of ${formatNumber(recoveryRecords)} records < ${targets.recoverySeconds} s`,
    `${recoverySeconds.toFixed(2)} s`,
    verdict(recoverySeconds < targets.recoverySeconds),
  ]);
}
console.log("");
printTable([["target", "measured", "verdict"], ...checks]);
console.log(
  `load average after: ${loadAfter.load1.toFixed(2)} (before ${loadBefore.load1.toFixed(2)}); ` +
    "figures are wall-clock on a shared machine",
);

// Where the time goes, for each missed target.
const profiles = {};
if (
  profileOnMiss &&
  !recoveryOnly &&
  (rawShare < targets.rawBytesShare || sqliteRatio < targets.sqliteRatio)
) {
  const directory = freshDirectory("store-bench-profile");
  await initTay(directory);
  const profiled = await openTay(directory, "Maximal");
  const jobs = Math.min(tay256.jobs, sized(5_000));
  const { summary } = await profilePhase(
    () => runConcurrently(jobs, 256, () => profiled.insert(queue, args)),
    join(benchRoot(), "store-bench-inserts.cpuprofile"),
  );
  await profiled.close();
  removeDirectory(directory);
  profiles.inserts256 = summary;
  printProfile(`${formatNumber(jobs)} Maximal inserts, 256 inserters`, summary);
}
if (profileOnMiss && recoverySeconds >= targets.recoverySeconds) {
  const profileDirectory = freshDirectory("store-bench-recovery-profile");
  const { profile, profilePath } = openInChild("tay", recoveryDirectory, profileDirectory);
  if (profile !== undefined) {
    profiles.recovery = profile;
    printProfile(
      `open of ${formatNumber(recoveryRecords)} records (node --cpu-prof, ${profilePath})`,
      profile,
    );
  }
}
if (keptRecoveryDirectory === undefined) removeDirectory(recoveryDirectory);

console.log(
  JSON.stringify({
    bench: "shell-node.store",
    disk: { source: disk.source, fsType: disk.fsType, path: disk.path },
    load: { before: loadBefore.load1, after: loadAfter.load1, cpus: loadBefore.cpus },
    inserts: tay.map((row, index) => ({
      inserters: row.inserters,
      jobs: row.jobs,
      jobsPerSecond: Math.round(row.jobsPerSecond),
      bytesPerSecond: Math.round(row.bytesPerSecond),
      bytesPerJob: Math.round(row.bytesPerJob),
      syncs: row.syncs,
      cpuMicrosPerJob: Math.round(row.cpuMicrosPerJob),
      rawBytesPerSecond: Math.round(rawIdeal[index].bytesPerSecond),
      rawSameWritesBytesPerSecond: Math.round(rawSame[index].bytesPerSecond),
    })),
    sqliteFull: recoveryOnly
      ? undefined
      : {
          singleJobsPerSecond: Math.round(sqliteSingle.jobsPerSecond),
          batched: sqliteBatched.map((row) => ({
            perTransaction: row.perTransaction,
            jobsPerSecond: Math.round(row.jobsPerSecond),
          })),
        },
    recovery: {
      records: recoveryRecords,
      bytes: recoveryBytes,
      seconds: Math.round(recoverySeconds * 1000) / 1000,
      cpuSeconds: Math.round(median(opens.map((open) => open.cpuSeconds)) * 1000) / 1000,
      opens: opens.map((open) => Math.round(open.seconds * 1000) / 1000),
      memory,
    },
    targets: {
      rawBytesShare: recoveryOnly
        ? undefined
        : {
            target: targets.rawBytesShare,
            measured: rawShare,
            met: rawShare >= targets.rawBytesShare,
          },
      sqliteRatio: recoveryOnly
        ? undefined
        : {
            target: targets.sqliteRatio,
            measured: sqliteRatio,
            met: sqliteRatio >= targets.sqliteRatio,
          },
      recoverySeconds: {
        target: targets.recoverySeconds,
        measured: recoverySeconds,
        met: recoverySeconds < targets.recoverySeconds,
      },
    },
    profiles,
  }),
);
