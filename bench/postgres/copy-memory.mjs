#!/usr/bin/env node
/**
 * `tay copy`'s memory as the store grows: for each size, a directory store
 * is built, then copied DIR -> URL and URL -> DIR by the `tay` binary in a
 * child process whose peak live heap (after a full collection every 200
 * ms) and peak RSS are recorded (`--import copy-memory-sampler.mjs`). Two shapes:
 *
 * - `schedule`: one schedule re-registered N times with 1 KiB of args:
 *   N records, a folded state of one schedule, so what grows is only
 *   what the copy holds of the history;
 * - `jobs`: N jobs inserted with 100 bytes of args: the state grows too
 *   (each fold holds every job);
 * - `completed` (`--shapes=completed`): N such jobs inserted, claimed and
 *   completed: the folds are lean (2026-12-03), so a finished job costs
 *   its facts, not its record.
 *
 * With `--baseline=PATH/bin/tay.mjs`, the same copies by another build
 * run alternately with this one, in the same run.
 *
 *   pnpm build && node bench/postgres/copy-memory.mjs --sizes=10000,100000 \
 *     --baseline=/work/main/packages/cli/bin/tay.mjs
 *
 * The server: TAY_PG_URL, else postgres://postgres@127.0.0.1:5432/postgres.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Effect } from "effect";
import pg from "pg";
import { Engine, Init, NodeDisk } from "../../packages/shell-node/dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const option = (name, fallback) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const sizes = option("sizes", "10000,100000").split(",").map(Number);
const shapes = option("shapes", "schedule,jobs").split(",");
const baseline = option("baseline", undefined);
const server = process.env.TAY_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const builds = [["this", join(here, "../../packages/cli/bin/tay.mjs")]];
if (baseline !== undefined) builds.push(["baseline", baseline]);

const admin = async (sql) => {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
};

let databases = 0;
const freshDatabase = async () => {
  const name = `tay_copy_memory_${process.pid}_${databases++}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
};

/** A directory store of `size` records of `shape`, written in drains of 1,000. */
const build = (directory, shape, size) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        yield* Init.init(directory);
        const engine = yield* Engine.open(directory, { timers: false, durability: "Throughput" });
        for (let from = 0; from < size; from += 1000) {
          const count = Math.min(1000, size - from);
          const issues = Array.from({ length: count }, (_, index) =>
            shape === "schedule"
              ? engine.registerSchedule("s", {
                  queue: "q",
                  worker: "W",
                  args: { n: from + index, text: "x".repeat(1024) },
                  priority: 0,
                  maxAttempts: 20,
                  everyMs: 3_600_000,
                  cron: null,
                  overlap: "allow",
                })
              : engine.insert({
                  queue: "q",
                  worker: "W",
                  args: { n: from + index, text: "x".repeat(100) },
                }),
          );
          yield* Effect.all(issues, { concurrency: "unbounded", discard: true });
          if (shape === "completed") {
            const claimed = yield* engine.claim("q", count);
            yield* Effect.all(
              claimed.map((job) => engine.complete(job.jobId, null)),
              { concurrency: "unbounded", discard: true },
            );
          }
        }
        yield* engine.close();
      }),
    ).pipe(Effect.provide(NodeDisk.layer)),
  );

/** Runs `tay copy` of one build under the sampler: its peak heap and RSS, MiB, and its time. */
const measured = (binary, source, target) => {
  const report = join(tmpdir(), `tay-copy-memory-${process.pid}.json`);
  const started = performance.now();
  execFileSync(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      join(here, "copy-memory-sampler.mjs"),
      binary,
      "copy",
      source,
      target,
    ],
    { env: { ...process.env, TAY_MEMORY_REPORT: report }, stdio: ["ignore", "ignore", "inherit"] },
  );
  const ms = performance.now() - started;
  const { peakHeap, maxRss } = JSON.parse(readFileSync(report, "utf8"));
  rmSync(report, { force: true });
  return { heapMiB: peakHeap / 2 ** 20, rssMiB: maxRss / 2 ** 10, ms };
};

const rows = [];
console.log(
  `load before: ${loadavg()
    .map((load) => load.toFixed(2))
    .join(" ")}`,
);
for (const shape of shapes) {
  for (const size of sizes) {
    const root = mkdtempSync(join(tmpdir(), "tay-copy-memory-"));
    const data = join(root, "data");
    await build(data, shape, size);
    for (const [name, binary] of builds) {
      const database = await freshDatabase();
      const out = measured(binary, data, database.url);
      const back = measured(binary, database.url, join(root, `back-${name}`));
      await admin(`DROP DATABASE ${database.name} WITH (FORCE)`);
      for (const [direction, figures] of [
        ["DIR -> URL", out],
        ["URL -> DIR", back],
      ]) {
        rows.push({ shape, size, build: name, direction, ...figures });
        console.log(
          `${shape.padEnd(8)} ${String(size).padStart(7)} ${name.padEnd(8)} ${direction}  heap ${figures.heapMiB.toFixed(1).padStart(7)} MiB  rss ${figures.rssMiB.toFixed(1).padStart(7)} MiB  ${(figures.ms / 1000).toFixed(1)} s`,
        );
      }
    }
    rmSync(root, { recursive: true, force: true });
  }
}
console.log(
  `load after: ${loadavg()
    .map((load) => load.toFixed(2))
    .join(" ")}`,
);
