#!/usr/bin/env node
/**
 * Tay over PostgreSQL beside pg-boss and graphile-worker, on the same
 * server in the same run, each system in a database of its own (made
 * afresh for every case). Each case runs 1, 2 or 4 processes of one system
 * (`child.mjs`: for Tay, engine processes sharing one store), with 1, 16 or
 * 256 producers or consumers split between them:
 *
 * - enqueue: each producer awaits one insert after another for --seconds;
 *   jobs/s, and p50/p99 of one insert;
 * - process: --jobs jobs inserted beforehand (in bulk), then each consumer
 *   fetches one job and completes it until none is left (graphile-worker,
 *   which has no public fetch, runs its own runner with that concurrency);
 *   jobs/s from the start to the last job, and p50/p99 of one fetch and
 *   completion.
 *
 * It reports Tay ÷ pg-boss at each point against the targets (≥ 1x
 * everywhere, ≥ 2x at 256 producers) and, for Tay, conflict retries per
 * committed batch as engines are added (commands decided again ÷ the logs'
 * committed transactions). Writes postgres-DATE.md and .json.
 *
 * The server: TAY_PG_URL, else the machine's (127.0.0.1:5432), else a
 * private one, as packages/log-postgres/scripts/postgres.sh finds or starts.
 *
 *   pnpm bench:postgres                       # build, then every case
 *   node bench/postgres/run.mjs --seconds=2 --jobs=1000 --processes=1,2 --producers=1,16
 *
 * Options: --seconds=S (enqueue case, default 3), --jobs=N (process case,
 * default 2000), --processes=1,2,4, --producers=1,16,256,
 * --systems=tay,tayinbox,pgboss,pgbosstx,graphile (pgbosstx: pg-boss sending
 * in the producer's transaction, the inbox's like),
 * --workloads=enqueue,process, --out=DIR.
 * BENCH_INBOX_NOTIFY=0: the inbox's producers enqueue with `notify: false`
 * (the engines then fold only at their poll).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const option = (name, fallback) => {
  const found = process.argv.find((argument) => argument.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
const list = (name, fallback) => option(name, fallback).split(",").filter(Boolean);
const seconds = Number(option("seconds", 3));
const jobs = Number(option("jobs", 2000));
const processCounts = list("processes", "1,2,4").map(Number);
const producerCounts = list("producers", "1,16,256").map(Number);
const systems = list("systems", "tay,tayinbox,pgboss,pgbosstx,graphile");
const workloads = list("workloads", "enqueue,process");
const outDirectory = option("out", join(root, "bench", "results"));
const queue = "bench";
const labels = {
  tay: "Tay (engines over PostgreSQL)",
  tayinbox: "Tay, enqueued in the producer's transaction (inbox)",
  pgboss: "pg-boss",
  pgbosstx: "pg-boss, sent in the producer's transaction",
  graphile: "graphile-worker",
};

const serverUrl =
  process.env.TAY_PG_URL ??
  execFileSync("bash", [join(root, "packages/log-postgres/scripts/postgres.sh")], {
    encoding: "utf8",
  }).trim();

const uptime = () => execFileSync("uptime", { encoding: "utf8" }).trim();

/** A statement on the server's admin connection. */
const admin = async (text) => {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
};

/** The system's own database, made afresh (only the benchmark's names are ever dropped). */
const freshDatabase = async (system) => {
  const name = `tay_bench_${system}`;
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
};

const argsOf = (index) => ({ order: index, customer: "c-42", note: "benchmark job" });

/** Creates the system's tables (and queue), with `prefill` jobs in bulk. */
const setups = {
  tay: async (url, prefill) => {
    const { Effect } = await import("effect");
    const { PgLog, PgSchema } = await import("@tay/log-postgres");
    const { Engine, StateProjection } = await import("@tay/shell-node");
    await Effect.runPromise(PgSchema.init(url));
    if (prefill === 0) return;
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const recovered = yield* PgLog.open(url, {}, StateProjection.foldProjection);
          const engine = yield* Engine.fromLog(recovered, { timers: false });
          for (let start = 0; start < prefill; start += 500) {
            const count = Math.min(500, prefill - start);
            yield* engine.insertMany(
              Array.from({ length: count }, (_, index) => ({
                queue,
                worker: "W",
                args: argsOf(start + index),
              })),
            );
          }
        }),
      ),
    );
  },
  tayinbox: (url, prefill) => setups.tay(url, prefill),
  pgbosstx: (url, prefill) => setups.pgboss(url, prefill),
  pgboss: async (url, prefill) => {
    // pg-boss 10 (the last for Node 20) exports its class as the default.
    const bossModule = await import("pg-boss");
    const PgBoss = bossModule.PgBoss ?? bossModule.default;
    const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false });
    boss.on("error", (error) => console.error(`pg-boss: ${error.message}`));
    await boss.start();
    await boss.createQueue(queue);
    for (let start = 0; start < prefill; start += 500) {
      const count = Math.min(500, prefill - start);
      // pg-boss 10: insert(jobs), each naming its queue.
      await boss.insert(
        Array.from({ length: count }, (_, index) => ({ name: queue, data: argsOf(start + index) })),
      );
    }
    await boss.stop({ graceful: false });
  },
  graphile: async (url, prefill) => {
    const { Logger, makeWorkerUtils } = await import("graphile-worker");
    const utils = await makeWorkerUtils({
      connectionString: url,
      logger: new Logger(() => () => {}),
    });
    await utils.migrate();
    for (let start = 0; start < prefill; start += 500) {
      const count = Math.min(500, prefill - start);
      await utils.addJobs(
        Array.from({ length: count }, (_, index) => ({
          identifier: queue,
          payload: argsOf(start + index),
        })),
      );
    }
    await utils.release();
  },
};

/** A count on the system's database. */
const countOf = async (url, text) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query(text)).rows[0].n);
  } finally {
    await client.end();
  }
};

/** graphile-worker's jobs not yet done (it deletes a job once completed). */
const graphileLeft = async (url) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query("SELECT count(*) AS n FROM graphile_worker._private_jobs");
    return Number(result.rows[0].n);
  } finally {
    await client.end();
  }
};

/** Starts one child; resolves `ready`, then `result` once it printed its result. */
const startChild = (system, url, workload, concurrency) => {
  const child = spawn(
    process.execPath,
    [join(here, "child.mjs"), system, url, workload, String(concurrency), String(seconds)],
    { cwd: root, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  let onReady = () => {};
  const ready = new Promise((resolve) => {
    onReady = resolve;
  });
  child.stdout.on("data", (chunk) => {
    stdout += chunk.toString();
    if (stdout.includes("ready\n")) onReady();
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk.toString();
  });
  const result = new Promise((resolve, reject) => {
    child.on("close", (code) => {
      const line = stdout.split("\n").find((text) => text.startsWith("result "));
      if (line === undefined) {
        reject(new Error(`${system} child ended with ${code}: ${stderr.slice(-2000)}`));
        return;
      }
      resolve({ ...JSON.parse(line.slice(7)), finishedAt: performance.now() });
    });
  });
  return { ready, result, tell: (word) => child.stdin.write(`${word}\n`) };
};

/** `total` split over `parts` as evenly as possible (the first get one more). */
const split = (total, parts) =>
  Array.from(
    { length: parts },
    (_, index) => Math.floor(total / parts) + (index < total % parts ? 1 : 0),
  );

const percentile = (sorted, fraction) =>
  sorted.length === 0
    ? null
    : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];

/** One case: a fresh database, `processes` children, their results merged. */
const runCase = async (system, workload, processes, concurrency) => {
  const database = await freshDatabase(system);
  await setups[system](database.url, workload === "process" ? jobs : 0);
  const children = split(concurrency, processes).map((share) =>
    startChild(system, database.url, workload, share),
  );
  await Promise.all(children.map((child) => child.ready));
  const started = performance.now();
  for (const child of children) child.tell("go");
  let ended;
  if (workload === "process" && system === "graphile") {
    while ((await graphileLeft(database.url)) > 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    ended = performance.now();
    for (const child of children) child.tell("stop");
  }
  const results = await Promise.all(children.map((child) => child.result));
  ended ??= Math.max(...results.map((result) => result.finishedAt));
  // The inbox's rows the engines had not folded when they closed.
  const inboxLeft =
    system === "tayinbox"
      ? await countOf(database.url, "SELECT count(*) AS n FROM tay.tay_inbox")
      : undefined;
  await admin(`DROP DATABASE IF EXISTS ${database.name} WITH (FORCE)`);
  const latencies = results.flatMap((result) => result.latencies).sort((a, b) => a - b);
  const count = results.reduce((sum, result) => sum + result.count, 0);
  const elapsed = workload === "enqueue" ? seconds : (ended - started) / 1000;
  const stats = results.map((result) => result.stats);
  const sum = (key) => stats.reduce((total, entry) => total + (entry[key] ?? 0), 0);
  return {
    system,
    workload,
    processes,
    concurrency,
    count,
    seconds: elapsed,
    jobsPerSecond: count / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    ...(system === "tay" || system === "tayinbox"
      ? {
          inboxLeft,
          folded: sum("folded"),
          committed: sum("committed"),
          conflicted: sum("conflicted"),
          retried: sum("retried"),
          exhausted: sum("exhausted"),
          turns: sum("turns"),
        }
      : {}),
  };
};

const fixed = (value, digits = 1) => (value === null ? "—" : value.toFixed(digits));
const table = (header, rows) =>
  [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`]
    .concat(rows.map((row) => `| ${row.join(" | ")} |`))
    .join("\n");

const report = (results, before, after, startedAt, wallSeconds) => {
  const find = (system, workload, processes, concurrency) =>
    results.find(
      (result) =>
        result.system === system &&
        result.workload === workload &&
        result.processes === processes &&
        result.concurrency === concurrency,
    );
  const sections = workloads.map((workload) => {
    const rows = [];
    for (const processes of processCounts) {
      for (const concurrency of producerCounts) {
        const boss = find("pgboss", workload, processes, concurrency);
        const bossInTransaction = find("pgbosstx", workload, processes, concurrency);
        for (const system of systems) {
          const result = find(system, workload, processes, concurrency);
          if (result === undefined) continue;
          const ratio =
            system.startsWith("tay") && boss !== undefined
              ? result.jobsPerSecond / boss.jobsPerSecond
              : null;
          // The inbox beside its like too: pg-boss sending in the producer's transaction.
          const likeRatio =
            system === "tayinbox" && bossInTransaction !== undefined
              ? `; ${(result.jobsPerSecond / bossInTransaction.jobsPerSecond).toFixed(2)}x in-transaction`
              : "";
          const target = concurrency >= 256 ? 2 : 1;
          rows.push([
            labels[system],
            processes,
            concurrency,
            result.count,
            fixed(result.jobsPerSecond, 0),
            fixed(result.p50, 2),
            fixed(result.p99, 2),
            ratio === null ? "" : `${ratio.toFixed(2)}x${likeRatio}`,
            ratio === null ? "" : `≥ ${target}x ${ratio >= target ? "met" : "missed"}`,
          ]);
        }
      }
    }
    const who = workload === "enqueue" ? "producers" : "consumers";
    return `## ${workload}\n\n${table(
      ["system", "processes", who, "jobs", "jobs/s", "p50 ms", "p99 ms", "Tay ÷ pg-boss", "target"],
      rows,
    )}`;
  });
  const contention = results
    .filter((result) => result.system.startsWith("tay"))
    .map((result) => [
      labels[result.system],
      result.workload,
      result.processes,
      result.concurrency,
      result.committed,
      result.conflicted,
      result.retried,
      result.exhausted,
      result.turns,
      result.committed === 0 ? "—" : (result.retried / result.committed).toFixed(2),
      result.system === "tayinbox" ? result.folded : "",
      result.system === "tayinbox" ? result.inboxLeft : "",
    ]);
  return [
    `# Tay over PostgreSQL beside pg-boss and graphile-worker (${startedAt.slice(0, 10)})`,
    "",
    `\`node bench/postgres/run.mjs ${process.argv.slice(2).join(" ")}\` (${wallSeconds.toFixed(0)} s): enqueue cases ${seconds} s each, process cases ${jobs} jobs each; ${cpus().length} cores; server ${new URL(serverUrl).host}.`,
    "",
    `\`uptime\` before: \`${before}\`  `,
    `\`uptime\` after: \`${after}\``,
    "",
    "Each system in a database of its own, made afresh for every case; 1, 2 or 4 processes of the system, producers (or consumers) split between them. Tay's processes are engines over one store (`synchronous_commit=on`); pg-boss sends, fetches and completes one job at a time (pools of 20 connections); graphile-worker adds with `addJob` and processes with its runner (pool of up to 20; its p50/p99 are not measured: it has no public fetch). The inbox row: producers run `BEGIN; Inbox.enqueueInTransaction; COMMIT` on pools of 10 connections per process while the engines fold; its jobs/s are committed enqueue transactions, and the table below says how many rows the engines had folded when the case ended. Its like: pg-boss sending in the producer's transaction (`BEGIN; send(..., { db }); COMMIT`, pools of 10 connections per process), when it ran; the inbox's ratio to it follows its ratio to pg-boss's plain `send` (the target stays against the plain `send`).",
    "",
    ...sections.flatMap((section) => [section, ""]),
    "## Tay: conflicts as engines are added",
    "",
    "Retries per committed batch: commands decided again after `AppendConflict` ÷ the engines' committed transactions.",
    "",
    table(
      [
        "system",
        "workload",
        "engines",
        "producers/consumers",
        "committed",
        "conflicted",
        "decided again",
        "exhausted",
        "turns",
        "retries per committed batch",
        "inbox rows folded",
        "inbox rows left at close",
      ],
      contention,
    ),
    "",
  ].join("\n");
};

const main = async () => {
  const before = uptime();
  const startedAt = new Date().toISOString();
  const began = performance.now();
  console.log(`server ${new URL(serverUrl).host}; ${before}`);
  const results = [];
  // Points outer, systems inner: the systems of one point run under the same load.
  for (const workload of workloads) {
    for (const processes of processCounts) {
      for (const concurrency of producerCounts) {
        for (const system of systems) {
          // The inbox (and pg-boss's like of it) changes how jobs are enqueued, not processed.
          if ((system === "tayinbox" || system === "pgbosstx") && workload === "process") continue;
          const result = await runCase(system, workload, processes, concurrency);
          results.push(result);
          console.log(
            `${workload} ${system} processes=${processes} concurrency=${concurrency}: ${result.jobsPerSecond.toFixed(0)} jobs/s, p50 ${fixed(result.p50, 2)} ms, p99 ${fixed(result.p99, 2)} ms` +
              (system.startsWith("tay")
                ? `, committed ${result.committed}, decided again ${result.retried}, exhausted ${result.exhausted}, turns ${result.turns}`
                : ""),
          );
        }
      }
    }
  }
  const after = uptime();
  const wallSeconds = (performance.now() - began) / 1000;
  mkdirSync(outDirectory, { recursive: true });
  const stamp = startedAt.slice(0, 10);
  const loads = { before, after, loadavg: loadavg() };
  writeFileSync(
    join(outDirectory, `postgres-${stamp}.json`),
    `${JSON.stringify({ startedAt, loads, seconds, jobs, results }, null, 2)}\n`,
  );
  writeFileSync(
    join(outDirectory, `postgres-${stamp}.md`),
    report(results, before, after, startedAt, wallSeconds),
  );
  console.log(`wrote ${join(outDirectory, `postgres-${stamp}.md`)}`);
};

await main();
