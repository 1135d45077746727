#!/usr/bin/env node
/**
 * Event v3's costs (EVENTS-V3.md), each beside its baseline in the same
 * run, the variants alternating round by round so the machine's load falls
 * on both alike, each case on a fresh store through the promise face:
 *
 * 1. Unique inserts (a key per job, every tenth insert repeating the key
 *    before it: 10% duplicates, answered with the existing job) against
 *    plain inserts, with 1 and 256 producers each awaiting its insert:
 *    inserts answered per second and the ratio unique ÷ plain, with keys
 *    in order (`key-0`, `key-1`...) and in no order (as UUIDs would be).
 * 2. Claims at 32 workers (each claims one job, completes it, claims
 *    again) from a queue with a concurrency limit and a rate limit against
 *    an unlimited queue: jobs completed per second and the ratio. The
 *    limits are set not to bind (concurrency 64 > 32 workers, 100,000
 *    starts per second: 10,000 per 100 ms), so the ratio is the cost of checking them.
 *
 * Target, reported and not asserted: unique inserts at most 10% slower
 * than plain ones (ratio >= 0.90) at 1 and at 256 producers. Beside the
 * rates, which a loaded machine moves, each insert case reports the CPU
 * time per insert (`process.cpuUsage`, all threads) and the bytes
 * allocated on the V8 heap per insert (the used heap's growth between
 * collections, summed: `v8.GCProfiler`), which load moves far less. Prints
 * tables, then one JSON line.
 *
 *   npx tsc -b packages/core packages/codec packages/client packages/shell-node
 *   node --expose-gc packages/shell-node/bench/v3.bench.mjs
 *
 * BENCH_ROUNDS (default 3) sets the rounds, BENCH_SECONDS (2) the length
 * of a case, BENCH_DURABILITY (Maximal) the durability, BENCH_PRODUCERS
 * (1,256) the producer counts, BENCH_CLAIMS=0 skips the claims, BENCH_KEYS
 * (600,000) how many keys of each kind are made before anything is timed. ROOT runs
 * another build's engine (its packages/shell-node/dist) for A/B runs of two
 * builds with the same bench. The data goes to bench/tmp (TAY_BENCH_DIR to
 * change it) and is removed at the end.
 */
import { resolve } from "node:path";
import { Effect } from "effect";
import {
  allocationCounter,
  formatNumber,
  formatRatio,
  freshDirectory,
  machineLoad,
  makeArgs,
  median,
  now,
  printTable,
  removeDirectory,
  sleep,
} from "./lib/common.mjs";

const root = process.env.ROOT ?? resolve(new URL(".", import.meta.url).pathname, "../../..");
const { EnginePromises, Init, NodeDisk } = await import(
  `${root}/packages/shell-node/dist/index.js`
);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const producerCounts = (process.env.BENCH_PRODUCERS ?? "1,256").split(",").map(Number);
const withClaims = process.env.BENCH_CLAIMS !== "0";
const caseSeconds = Number(process.env.BENCH_SECONDS ?? 2);
const durability = process.env.BENCH_DURABILITY ?? "Maximal";
const args = makeArgs();
const target = 0.9;

/** A fresh store opened with `durability`; `close` closes and removes it. */
const freshEngine = async (name) => {
  const directory = freshDirectory(name);
  await Effect.runPromise(Effect.provide(Init.init(directory), NodeDisk.layer));
  const engine = await EnginePromises.open(directory, { durability });
  return {
    engine,
    close: async () => {
      await engine.close();
      removeDirectory(directory);
    },
  };
};

// ---------------------------------------------------------------- 1. inserts
// Two kinds of keys: `key-0`, `key-1`... (whose hashes rise with the
// index: each insert lands beside the last one in the unique index), and
// keys in no order (the index's bits scrambled, as UUIDs or hashes would
// be: each lookup lands anywhere in the index, 2026-12-03).
const sequentialKey = (index) => `key-${index}`;
const randomKey = (index) => `key-${(Math.imul(index, 0x9e3779b1) >>> 0).toString(16)}`;
// The keys are made before any case is timed (a producer's own cost, not
// the queue's: `toString(16)` alone was 0.4–0.7 µs an insert in profiles,
// 2026-12-04), every case running beside the same tables; an insert past
// the table makes its key as it goes.
const keysMade = Number(process.env.BENCH_KEYS ?? 600_000);
const keyTable = (keyOf) => {
  const table = Array.from({ length: keysMade }, (_, index) => keyOf(index));
  return (index) => table[index] ?? keyOf(index);
};
/** Every tenth insert repeats the previous key: a duplicate of a job that is still available. */
const keyed = (keyOf) => (index) => ({
  queue: "bench",
  worker: "W",
  args,
  uniqueKey: keyOf(index % 10 === 9 ? index - 1 : index),
});
const insertVariants = {
  plain: () => ({ queue: "bench", worker: "W", args }),
  unique: keyed(keyTable(sequentialKey)),
  random: keyed(keyTable(randomKey)),
};

/** `producers` each awaiting one insert after another for `caseSeconds`: inserts/s. */
const insertCase = async (variant, producers, seconds = caseSeconds) => {
  const { engine, close } = await freshEngine(`v3-insert-${variant}-${producers}`);
  const job = insertVariants[variant];
  let next = 0;
  let duplicates = 0;
  const deadline = now() + seconds * 1000;
  const producer = async () => {
    while (now() < deadline) {
      const answer = await engine.insert(job(next++));
      if (answer.duplicate === true) duplicates += 1;
    }
  };
  const allocated = allocationCounter();
  const cpu = process.cpuUsage();
  const started = now();
  await Promise.all(Array.from({ length: producers }, producer));
  const elapsed = (now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  const { bytes } = allocated();
  await close();
  return {
    perSecond: next / elapsed,
    duplicates: duplicates / Math.max(1, next),
    cpuMicros: (user + system) / next,
    bytes: bytes / next,
  };
};

// ---------------------------------------------------------------- 2. claims
const claimWorkers = 32;
const claimJobs = 60_000;
const limits = { concurrency: 64, rateLimit: { count: 10_000, perMs: 100 } };

/** 32 workers claiming and completing from a filled queue for `caseSeconds`: jobs/s. */
const claimCase = async (variant) => {
  const { engine, close } = await freshEngine(`v3-claim-${variant}`);
  for (let done = 0; done < claimJobs; done += 5_000) {
    await engine.insertMany(
      Array.from({ length: 5_000 }, () => ({ queue: "bench", worker: "W", args })),
    );
  }
  if (variant === "limited") await engine.setQueueLimits("bench", limits);
  let completed = 0;
  let empty = 0;
  const deadline = now() + caseSeconds * 1000;
  const started = now();
  const worker = async () => {
    while (now() < deadline) {
      const [job] = await engine.claim("bench", 1);
      if (job === undefined) {
        empty += 1;
        await sleep(1);
        continue;
      }
      await engine.complete(job.jobId);
      completed += 1;
    }
  };
  await Promise.all(Array.from({ length: claimWorkers }, worker));
  const seconds = (now() - started) / 1000;
  await close();
  return { perSecond: completed / seconds, empty };
};

// ---------------------------------------------------------------- run
const results = { inserts: {}, claims: {} };
// Unmeasured: the first cases would otherwise pay for compiling the engine.
const variants = ["plain", "unique", "random"];
for (const variant of variants) await insertCase(variant, 256, 1);
for (const producers of producerCounts) {
  const perSecond = { plain: [], unique: [], random: [] };
  const cpu = { plain: [], unique: [], random: [] };
  const bytes = { plain: [], unique: [], random: [] };
  const ratio = { unique: [], random: [] };
  let duplicateShare = 0;
  for (let round = 0; round < rounds; round += 1) {
    // Rotate which variant goes first.
    const order = variants.map((_, at) => variants[(at + round) % variants.length]);
    const measured = {};
    for (const variant of order) measured[variant] = await insertCase(variant, producers);
    for (const variant of variants) {
      perSecond[variant].push(measured[variant].perSecond);
      cpu[variant].push(measured[variant].cpuMicros);
      bytes[variant].push(measured[variant].bytes);
    }
    for (const keys of ["unique", "random"]) {
      ratio[keys].push(measured[keys].perSecond / measured.plain.perSecond);
    }
    duplicateShare = measured.unique.duplicates;
  }
  const medians = (values) =>
    Object.fromEntries(variants.map((variant) => [variant, median(values[variant])]));
  results.inserts[producers] = {
    ...medians(perSecond),
    ratio: median(ratio.unique),
    ratioRandom: median(ratio.random),
    duplicateShare,
    cpuMicrosPerInsert: medians(cpu),
    bytesPerInsert: medians(bytes),
  };
}
if (withClaims) {
  const perRound = { unlimited: [], limited: [], ratio: [], emptyClaims: 0 };
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? ["unlimited", "limited"] : ["limited", "unlimited"];
    const measured = {};
    for (const variant of order) measured[variant] = await claimCase(variant);
    perRound.unlimited.push(measured.unlimited.perSecond);
    perRound.limited.push(measured.limited.perSecond);
    perRound.ratio.push(measured.limited.perSecond / measured.unlimited.perSecond);
    perRound.emptyClaims += measured.limited.empty;
  }
  results.claims = {
    workers: claimWorkers,
    limits,
    unlimited: median(perRound.unlimited),
    limited: median(perRound.limited),
    ratio: median(perRound.ratio),
    emptyClaimsLimited: perRound.emptyClaims,
  };
}

console.log(`\nEvent v3 costs (${durability}, ${rounds} rounds of ${caseSeconds} s, medians)`);
const triple = (values, digits) =>
  variants.map((variant) => values[variant].toFixed(digits)).join(", ");
printTable([
  [
    "inserts",
    "plain/s",
    "unique/s (keys in order, in no order)",
    "unique ÷ plain (in order, no order)",
    `target >= ${target}`,
    "CPU µs/insert plain, in order, no order",
    "bytes/insert plain, in order, no order",
  ],
  ...Object.entries(results.inserts).map(([producers, row]) => [
    `${producers} producer(s)`,
    formatNumber(row.plain),
    `${formatNumber(row.unique)}, ${formatNumber(row.random)}`,
    `${formatRatio(row.ratio)}, ${formatRatio(row.ratioRandom)}`,
    Math.min(row.ratio, row.ratioRandom) >= target ? "met" : "missed",
    triple(row.cpuMicrosPerInsert, 1),
    triple(row.bytesPerInsert, 0),
  ]),
]);
console.log("");
if (withClaims)
  printTable([
    ["claims", "unlimited jobs/s", "limited jobs/s", "limited ÷ unlimited"],
    [
      `${claimWorkers} workers`,
      formatNumber(results.claims.unlimited),
      formatNumber(results.claims.limited),
      formatRatio(results.claims.ratio),
    ],
  ]);
console.log(
  JSON.stringify({
    benchmark: "v3",
    root,
    durability,
    load: machineLoad(),
    ...results,
  }),
);
