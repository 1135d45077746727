#!/usr/bin/env node
/**
 * Event v3's costs (EVENTS-V3.md), each beside its baseline in the same
 * run, the variants alternating round by round so the machine's load falls
 * on both alike, each case on a fresh store through the promise face:
 *
 * 1. Unique inserts (a key per job, every tenth insert repeating the key
 *    before it: 10% duplicates, answered with the existing job) against
 *    plain inserts, with 1 and 256 producers each awaiting its insert:
 *    inserts answered per second and the ratio unique ÷ plain.
 * 2. Claims at 32 workers (each claims one job, completes it, claims
 *    again) from a queue with a concurrency limit and a rate limit against
 *    an unlimited queue: jobs completed per second and the ratio. The
 *    limits are set not to bind (concurrency 64 > 32 workers, 100,000
 *    starts per second: 10,000 per 100 ms), so the ratio is the cost of checking them.
 *
 * Target, reported and not asserted: unique inserts at most 10% slower
 * than plain ones (ratio >= 0.90) at 1 and at 256 producers. Prints tables,
 * then one JSON line.
 *
 *   npx tsc -b packages/core packages/codec packages/client packages/shell-node
 *   node --expose-gc packages/shell-node/bench/v3.bench.mjs
 *
 * BENCH_ROUNDS (default 3) sets the rounds, BENCH_SECONDS (2) the length
 * of a case, BENCH_DURABILITY (Maximal) the durability. The data goes to
 * bench/tmp (TAY_BENCH_DIR to change it) and is removed at the end.
 */
import { EnginePromises, Init, NodeDisk } from "../dist/index.js";
import { Effect } from "effect";
import {
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

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
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
const insertVariants = {
  plain: () => ({ queue: "bench", worker: "W", args }),
  // Every tenth insert repeats the previous key: a duplicate of a job that is still available.
  unique: (index) => ({
    queue: "bench",
    worker: "W",
    args,
    uniqueKey: `key-${index % 10 === 9 ? index - 1 : index}`,
  }),
};

/** `producers` each awaiting one insert after another for `caseSeconds`: inserts/s. */
const insertCase = async (variant, producers) => {
  const { engine, close } = await freshEngine(`v3-insert-${variant}-${producers}`);
  const job = insertVariants[variant];
  let next = 0;
  let duplicates = 0;
  const deadline = now() + caseSeconds * 1000;
  const started = now();
  const producer = async () => {
    while (now() < deadline) {
      const answer = await engine.insert(job(next++));
      if (answer.duplicate === true) duplicates += 1;
    }
  };
  await Promise.all(Array.from({ length: producers }, producer));
  const seconds = (now() - started) / 1000;
  await close();
  return { perSecond: next / seconds, duplicates: duplicates / Math.max(1, next) };
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
for (const producers of [1, 256]) {
  const perRound = { plain: [], unique: [], ratio: [] };
  for (let round = 0; round < rounds; round += 1) {
    // Alternate which variant goes first.
    const order = round % 2 === 0 ? ["plain", "unique"] : ["unique", "plain"];
    const measured = {};
    for (const variant of order) measured[variant] = await insertCase(variant, producers);
    perRound.plain.push(measured.plain.perSecond);
    perRound.unique.push(measured.unique.perSecond);
    perRound.ratio.push(measured.unique.perSecond / measured.plain.perSecond);
    perRound.duplicates = measured.unique.duplicates;
  }
  results.inserts[producers] = {
    plain: median(perRound.plain),
    unique: median(perRound.unique),
    ratio: median(perRound.ratio),
    duplicateShare: perRound.duplicates,
  };
}
{
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
printTable([
  ["inserts", "plain/s", "unique/s", "unique ÷ plain", `target >= ${target}`],
  ...Object.entries(results.inserts).map(([producers, row]) => [
    `${producers} producer(s)`,
    formatNumber(row.plain),
    formatNumber(row.unique),
    formatRatio(row.ratio),
    row.ratio >= target ? "met" : "missed",
  ]),
]);
console.log("");
printTable([
  ["claims", "unlimited jobs/s", "limited jobs/s", "limited ÷ unlimited"],
  [
    `${claimWorkers} workers`,
    formatNumber(results.claims.unlimited),
    formatNumber(results.claims.limited),
    formatRatio(results.claims.ratio),
  ],
]);
console.log(JSON.stringify({ benchmark: "v3", durability, load: machineLoad(), ...results }));
