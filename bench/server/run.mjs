#!/usr/bin/env node
/**
 * Producers and workers in other processes over a socket: Tay's server
 * (`tay serve`, a child process, `Maximal`) answering `@tay/client` and
 * `RemoteWorker` over its Unix socket, beside BullMQ 6 on a private Redis 7
 * with `appendfsync always` (also its own process, over TCP loopback), in
 * the same run. Each case runs 1 or 4 processes (bench/server/child.mjs)
 * sharing 1, 16 or 256 concurrent producers, each producer awaiting its
 * insert before the next; the processing cases add workers in the same
 * processes and end once every job inserted is completed. Each process
 * warms up with `--warmup` inserts (default 3,000, another queue) before it is timed. Reports jobs/s,
 * p50/p99 of an insert, and the server's own CPU (utime+stime of its
 * process from /proc) per job and, for Tay, per HTTP request.
 *
 * With `--trees=A,B` (built checkouts), each tree's server, client and
 * workers run the Tay cases in turn (`--rounds` times), then BullMQ once:
 * before/after figures from the same run.
 *
 *   pnpm build && node bench/server/run.mjs [--jobs=N] [--out=FILE] [--trees=A,B] [--rounds=N]
 *     [--cases=I,J] [--warmup=N]
 *
 * TAY_BENCH_SERVER_NODE_ARGS (space-separated) are given to each Tay
 * server's node (`--trace-gc`, `--cpu-prof --cpu-prof-dir=DIR`, ...); its
 * output then goes to this process's stderr.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Client, Locate } from "../../packages/client/dist/index.js";
import { openBullmq } from "../peers/bullmq.mjs";
import { findRedisServer, freePort, startRedis } from "../peers/redis.mjs";

const argument = (name, fallback) => {
  const found = process.argv.find((value) => value.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
const jobsPerCase = Number(argument("jobs", "4000"));
// Inserts each producing process makes (on another queue) before it is
// timed, for every system alike. The default lets V8 optimize the server's
// and the clients' request paths (with 300, a 1,500-job case measured
// mostly unoptimized code: 750-850 us of server CPU per request against
// 370-395 us once warm, 2026-12-02); Redis itself needs none.
const warmup = Number(argument("warmup", "3000"));
const out = argument("out", undefined);
const here = new URL("../..", import.meta.url).pathname;
const trees = argument("trees", here)
  .split(",")
  .map((tree) => resolve(tree));
const rounds = Number(argument("rounds", "1"));
const childScript = new URL("./child.mjs", import.meta.url).pathname;
const serverNodeArgs = (process.env.TAY_BENCH_SERVER_NODE_ARGS ?? "")
  .split(" ")
  .filter((argument) => argument !== "");

/** Producers (and workers) in `processes` processes; workers 0: inserts only. */
const cases = [
  { processes: 1, producers: 1, workers: 0 },
  { processes: 1, producers: 16, workers: 0 },
  { processes: 4, producers: 16, workers: 0 },
  { processes: 1, producers: 256, workers: 0 },
  { processes: 4, producers: 256, workers: 0 },
  { processes: 1, producers: 16, workers: 16 },
  { processes: 4, producers: 16, workers: 16 },
];

// `--cases=5,6`: only these cases (indices into `cases`), e.g. the processing ones.
const chosen = argument("cases", undefined)?.split(",").map(Number);
const selected = cases
  .map((shape, index) => ({ shape, index }))
  .filter(({ index }) => chosen === undefined || chosen.includes(index));

const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** A child process of the case, its lines as they come. */
const startChild = (config) => {
  const child = spawn(process.execPath, [childScript, JSON.stringify(config)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return { child, next, exited, say: (line) => child.stdin.write(`${line}\n`) };
};

/**
 * Runs one case against a system: `completed()` counts the case queue's
 * completed jobs, `serverPid` is the server's process, `requests()` the
 * requests it answered (or undefined).
 */
const runCase = async (system, shape, index) => {
  const queue = `bench${index}`;
  const jobs = Math.floor(jobsPerCase / shape.processes);
  const children = Array.from({ length: shape.processes }, () =>
    startChild({
      ...system.config,
      queue,
      producers: Math.max(1, shape.producers / shape.processes),
      workers: shape.workers / shape.processes,
      jobs,
      warmup,
    }),
  );
  for (const child of children) await child.next();
  const total = jobs * shape.processes;
  const completedBefore = shape.workers === 0 ? 0 : await system.completed(queue);
  const cpuBefore = cpuMs(system.serverPid);
  const requestsBefore = await system.requests();
  const started = performance.now();
  for (const child of children) child.say("go");
  const latencies = (await Promise.all(children.map((child) => child.next()))).flatMap(
    (line) => line.latencies,
  );
  if (shape.workers > 0) {
    while ((await system.completed(queue)) < completedBefore + total) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuMs(system.serverPid) - cpuBefore;
  const requestsAfter = await system.requests();
  for (const child of children) child.say("stop");
  await Promise.all(children.map((child) => child.exited));
  latencies.sort((left, right) => left - right);
  return {
    system: system.label,
    ...shape,
    jobsPerSecond: total / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuUsPerJob: (cpu * 1000) / total,
    cpuUsPerRequest:
      requestsBefore === undefined ? undefined : (cpu * 1000) / (requestsAfter - requestsBefore),
  };
};

/** Requests the Tay server answered so far, from its `/metrics`. */
const requestsOf = (socketPath) => () =>
  new Promise((resolve, reject) => {
    request({ socketPath, path: "/metrics" }, (response) => {
      const chunks = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        let sum = 0;
        for (const found of text.matchAll(/^tay_request_seconds_count\{[^}]*\} (\d+)$/gm)) {
          sum += Number(found[1]);
        }
        resolve(sum);
      });
    })
      .on("error", reject)
      .end();
  });

const runTay = async (tree, label) => {
  const directory = join(mkdtempSync(join(tmpdir(), "tay-bench-server-")), "data");
  const tay = join(tree, "packages/cli/bin/tay.mjs");
  const server = spawn(process.execPath, [...serverNodeArgs, tay, "serve", directory, "--create"], {
    // The server's own output (a `--trace-gc` line, say) goes to stderr: stdout is the report.
    stdio: serverNodeArgs.length === 0 ? "ignore" : ["ignore", 2, 2],
  });
  while (Locate.servedAt(directory) === null || !existsSync(Locate.socketOf(directory))) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const client = await Client.connect(directory);
  for (let n = 0; n < 200; n += 1) await client.insert({ queue: "warm", worker: "W", args: null });
  const system = {
    label,
    config: { system: "tay", directory, tree },
    serverPid: server.pid,
    requests: requestsOf(Locate.socketOf(directory)),
    completed: async (queue) => (await client.counts()).get(queue)?.completed ?? 0,
  };
  const rows = [];
  for (const { shape, index } of selected) rows.push(await runCase(system, shape, index));
  await client.close();
  server.kill("SIGTERM");
  await new Promise((resolve) => server.once("exit", resolve));
  rmSync(join(directory, ".."), { recursive: true, force: true });
  return rows;
};

const runBullmq = async () => {
  const { path, missing } = findRedisServer();
  if (path === undefined) {
    console.log(`BullMQ skipped: ${missing}`);
    return [];
  }
  const directory = mkdtempSync(join(tmpdir(), "tay-bench-redis-"));
  const port = await freePort();
  const redis = await startRedis({ path, port, directory, appendfsync: "always" });
  const warm = await openBullmq({ port, directory, appendfsync: "always", queueName: "warm" });
  for (let n = 0; n < 200; n += 1) await warm.insert("warm", null);
  await warm.close();
  const counters = new Map();
  const system = {
    label: "BullMQ (appendfsync always, TCP)",
    config: { system: "bullmq", port, directory },
    serverPid: redis.child.pid,
    requests: async () => undefined,
    completed: async (queue) => {
      if (!counters.has(queue)) {
        counters.set(
          queue,
          await openBullmq({ port, directory, appendfsync: "always", queueName: queue }),
        );
      }
      return counters.get(queue).countIn("completed");
    },
  };
  const rows = [];
  for (const { shape, index } of selected) rows.push(await runCase(system, shape, index));
  for (const counter of counters.values()) await counter.close();
  await redis.stop();
  rmSync(directory, { recursive: true, force: true });
  return rows;
};

const uptime = () => execFileSync("uptime", { encoding: "utf8" }).trim();
const uptimeLineBefore = uptime();
const loadBefore = load();
const uptimeBefore = readFileSync("/proc/uptime", "utf8");
const tayRows = [];
for (let round = 0; round < rounds; round += 1) {
  for (const [index, tree] of trees.entries()) {
    const label =
      trees.length === 1
        ? "Tay server (Maximal, Unix socket)"
        : `Tay [${index}] round ${round + 1}`;
    tayRows.push(...(await runTay(tree, label)));
  }
}
const bullRows = await runBullmq();
const loadAfter = load();
const uptimeLineAfter = uptime();

const sameShape = (left, right) =>
  left.processes === right.processes &&
  left.producers === right.producers &&
  left.workers === right.workers;
const ratioOf = (row) => {
  const peer = bullRows.find((other) => sameShape(other, row));
  return peer === undefined ? undefined : row.jobsPerSecond / peer.jobsPerSecond;
};
const x = (ratio) => (ratio === undefined ? "-" : `${ratio.toFixed(2)}x`);
const targetRow = (label, goal, rows) =>
  `| ${label} | ≥ ${goal}x | ${rows.map((row) => `${x(ratioOf(row))} (${row.processes} process${row.processes === 1 ? "" : "es"})`).join(", ")} | ${rows.length === 0 ? "not run" : rows.every((row) => (ratioOf(row) ?? 0) >= goal) ? "met" : "missed"} |`;
const inserting = (producers) =>
  tayRows.filter((row) => row.producers === producers && row.workers === 0);
const treeLines = trees.map((tree, index) => `- [${index}] \`${tree}\``);

const lines = [
  `# Producers and workers over a socket (${new Date().toISOString().slice(0, 10)})`,
  "",
  "| target (issue 14) | goal | Tay ÷ BullMQ `appendfsync always`, jobs/s | |",
  "| --- | ---: | --- | --- |",
  targetRow("1 producer", 1, inserting(1)),
  targetRow("256 producers", 2, inserting(256)),
  "",
  ...(trees.length > 1 ? ["Trees:", "", ...treeLines, ""] : []),
  `\`uptime\` before: \`${uptimeLineBefore}\`  `,
  `\`uptime\` after: \`${uptimeLineAfter}\``,
  "",
  `\`node bench/server/run.mjs --jobs=${jobsPerCase}\`: ${jobsPerCase} jobs per case, producers (and workers) in 1 or 4 processes of their own beside the server's, each server in its own process; load average ${loadBefore} before and ${loadAfter} after (2 shared cores; uptime ${uptimeBefore.split(" ")[0]} s at the start). Each process warms up with ${warmup} inserts on another queue first. A processing case (workers > 0) ends when every job inserted is completed; its p50/p99 are the inserts'. Server CPU is the server process's utime+stime (Redis's for BullMQ) over the case.`,
  "",
  "| system | processes | producers | workers | jobs/s | p50 ms | p99 ms | server CPU µs/job | server CPU µs/request | Tay ÷ BullMQ |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
];
for (const row of [...tayRows, ...bullRows]) {
  const ratio = row.system.startsWith("Tay") ? x(ratioOf(row)) : "";
  const perRequest = row.cpuUsPerRequest === undefined ? "" : row.cpuUsPerRequest.toFixed(1);
  lines.push(
    `| ${row.system} | ${row.processes} | ${row.producers} | ${row.workers} | ${Math.round(row.jobsPerSecond)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.cpuUsPerJob.toFixed(1)} | ${perRequest} | ${ratio} |`,
  );
}
console.log(lines.join("\n"));
if (out !== undefined) writeFileSync(out, `${lines.join("\n")}\n`);
process.exit(0);
