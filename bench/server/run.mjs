#!/usr/bin/env node
/**
 * Producers over a socket: Tay's server (`tay serve`, a child process,
 * `Maximal`) answering `@tay/client` inserts over its Unix socket, beside
 * BullMQ 6 on a private Redis 7 with `appendfsync always` (also a separate
 * process, over TCP loopback), in the same run, with 1, 16 and 256
 * concurrent producers in this process. Each producer awaits its insert
 * before the next. Reports jobs/s, p50/p99 of an insert, and the server's
 * own CPU per insert (utime+stime of its process from /proc).
 *
 *   pnpm build && node bench/server/run.mjs [--jobs=N] [--out=FILE]
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Locate } from "../../packages/client/dist/index.js";
import { openBullmq } from "../peers/bullmq.mjs";
import { findRedisServer, freePort, startRedis } from "../peers/redis.mjs";

const argument = (name, fallback) => {
  const found = process.argv.find((value) => value.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
const jobsPerCase = Number(argument("jobs", "4000"));
const out = argument("out", undefined);
const concurrencies = [1, 16, 256];
const tay = new URL("../../packages/cli/bin/tay.mjs", import.meta.url).pathname;
const ticks = 100; // USER_HZ on Linux

const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
};

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/** `producers` producers insert `total` jobs between them, each awaiting its own. */
const drive = async (insert, producers, total) => {
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (next < total) {
        next += 1;
        const at = performance.now();
        await insert({ n: next });
        latencies.push(performance.now() - at);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((left, right) => left - right);
  return {
    jobsPerSecond: total / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
};

const until = async (ready) => {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 50));
};

const runTay = async () => {
  const directory = join(mkdtempSync(join(tmpdir(), "tay-bench-server-")), "data");
  const server = spawn(process.execPath, [tay, "serve", directory, "--create"], {
    stdio: "ignore",
  });
  await until(() => Locate.servedAt(directory) !== null && existsSync(Locate.socketOf(directory)));
  const client = await Client.connect(directory);
  const rows = [];
  for (const producers of concurrencies) {
    await drive((args) => client.insert({ queue: "bench", worker: "W", args }), producers, 200);
    const before = cpuMs(server.pid);
    const measured = await drive(
      (args) => client.insert({ queue: "bench", worker: "W", args }),
      producers,
      jobsPerCase,
    );
    const serverCpuUsPerInsert = ((cpuMs(server.pid) - before) * 1000) / jobsPerCase;
    rows.push({
      system: "Tay server (Maximal, Unix socket)",
      producers,
      ...measured,
      serverCpuUsPerInsert,
    });
  }
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
  const bull = await openBullmq({ port, directory, appendfsync: "always", queueName: "bench" });
  const rows = [];
  for (const producers of concurrencies) {
    await drive((args) => bull.insert("bench", args), producers, 200);
    const before = cpuMs(redis.child.pid);
    const measured = await drive((args) => bull.insert("bench", args), producers, jobsPerCase);
    const serverCpuUsPerInsert = ((cpuMs(redis.child.pid) - before) * 1000) / jobsPerCase;
    rows.push({
      system: "BullMQ (appendfsync always, TCP)",
      producers,
      ...measured,
      serverCpuUsPerInsert,
    });
  }
  await bull.close();
  await redis.stop();
  rmSync(directory, { recursive: true, force: true });
  return rows;
};

const tayRows = await runTay();
const bullRows = await runBullmq();
const lines = [
  `# Producers over a socket (${new Date().toISOString().slice(0, 10)})`,
  "",
  `${jobsPerCase} awaited inserts per case after 200 of warm-up, producers in the benchmark's process, each server in its own; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} at the end (2 shared cores).`,
  "",
  "| system | producers | jobs/s | p50 ms | p99 ms | server CPU µs/insert | Tay ÷ BullMQ |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
];
for (const row of [...tayRows, ...bullRows]) {
  const peer = bullRows.find((other) => other.producers === row.producers);
  const ratio =
    row.system.startsWith("Tay") && peer !== undefined
      ? `${(row.jobsPerSecond / peer.jobsPerSecond).toFixed(2)}x`
      : "";
  lines.push(
    `| ${row.system} | ${row.producers} | ${Math.round(row.jobsPerSecond)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.serverCpuUsPerInsert.toFixed(1)} | ${ratio} |`,
  );
}
console.log(lines.join("\n"));
if (out !== undefined) writeFileSync(out, `${lines.join("\n")}\n`);
process.exit(0);
