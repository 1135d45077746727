#!/usr/bin/env node
/**
 * The server's own CPU per job, and nothing else: `tay serve` (a child
 * process, `Maximal`) answering `@tay/client` from this process at each
 * concurrency; µs of the server's utime+stime per insert, and with
 * `--workers=N` per processed job (inserted by the producers, claimed,
 * completed by a `RemoteWorker` of N slots in this process). For
 * profiling (`--prof-dir=DIR` runs the server with `--cpu-prof` there)
 * and for before/after comparisons (`--trees=A,B`: two built checkouts,
 * each server with its own client and worker, alternating for
 * `--rounds`), robust to the machine's load since it counts CPU, not time.
 * The client's CPU per job (this process's `process.cpuUsage`: the client
 * and, with `--workers`, the worker runtime) is reported beside it.
 * `--command=heartbeat` sends `/v1/heartbeat` (of an attempt no one holds)
 * instead of inserts: the request path (HTTP, routing, the gather, the
 * metrics, the answer) without the engine's decision and durable write,
 * which otherwise dominate and hide it.
 *
 *   pnpm build && node bench/server/cpu.mjs [--jobs=N] [--producers=1,16,256]
 *     [--workers=N] [--prof-dir=DIR] [--trees=DIR,DIR] [--rounds=N] [--command=heartbeat]
 */
import { spawn } from "node:child_process";
import { request } from "node:http";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const argument = (name, fallback) => {
  const found = process.argv.find((value) => value.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
const jobs = Number(argument("jobs", "3000"));
const producersList = argument("producers", "1,16,256").split(",").map(Number);
const workers = Number(argument("workers", "0"));
const profDir = argument("prof-dir", undefined);
const rounds = Number(argument("rounds", "1"));
const heartbeats = argument("command", "insert") === "heartbeat";
const here = new URL("../..", import.meta.url).pathname;

/** User and system CPU ms of `pid` (from /proc; USER_HZ 100). */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
};

/** Requests the server answered so far, by route (its `/metrics`). */
const requestsOf = (socketPath) =>
  new Promise((resolve, reject) => {
    request({ socketPath, path: "/metrics" }, (response) => {
      const chunks = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        const byRoute = new Map();
        for (const found of text.matchAll(
          /^tay_request_seconds_count\{route="([^"]*)",[^}]*\} (\d+)$/gm,
        )) {
          byRoute.set(found[1], (byRoute.get(found[1]) ?? 0) + Number(found[2]));
        }
        resolve(byRoute);
      });
    })
      .on("error", reject)
      .end();
  });

/** Requests per job by route between two readings, the busiest first. */
const perJob = (before, after, total) =>
  [...after]
    .map(([route, count]) => [route, (count - (before.get(route) ?? 0)) / total])
    .filter(([route, count]) => count > 0 && route !== "/metrics")
    .sort((left, right) => right[1] - left[1])
    .map(([route, count]) => `${route} ${count.toFixed(2)}`)
    .join(", ");

const drive = async (client, queue, producers, total) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (next < total) {
        next += 1;
        if (heartbeats) await client.heartbeat(1, 1);
        else await client.insert({ queue, worker: "W", args: { n: next } });
      }
    }),
  );
};

const until = async (ready) => {
  while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 20));
};

/** Runs `total` jobs through (inserted; processed when there are workers); the rate. */
const timed = async (client, queue, producers, total) => {
  const started = performance.now();
  await drive(client, queue, producers, total);
  if (workers > 0) {
    await until(async () => ((await client.counts()).get(queue)?.completed ?? 0) >= total);
  }
  return total / ((performance.now() - started) / 1000);
};

/** One server of the tree `tree` through every concurrency: a line each. */
const measure = async (tree, label) => {
  const { Client, Locate } = await import(
    pathToFileURL(join(tree, "packages/client/dist/index.js")).href
  );
  const { RemoteWorker } = await import(
    pathToFileURL(join(tree, "packages/shell-node/dist/index.js")).href
  );
  const directory = join(mkdtempSync(join(tmpdir(), "tay-bench-cpu-")), "data");
  const flags = profDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profDir}`];
  const bin = join(tree, "packages/cli/bin/tay.mjs");
  const server = spawn(process.execPath, [...flags, bin, "serve", directory, "--create"], {
    stdio: "ignore",
  });
  await until(() => Locate.servedAt(directory) !== null && existsSync(Locate.socketOf(directory)));
  const client = await Client.connect(directory);
  for (const [index, producers] of producersList.entries()) {
    const queue = `bench${index}`;
    const worker =
      workers === 0
        ? undefined
        : await RemoteWorker.start(client, {
            queues: { [queue]: workers, [`${queue}warm`]: workers },
            handlers: { W: async () => null },
          });
    await timed(client, `${queue}warm`, producers, 300);
    const socket = Locate.socketOf(directory);
    const requestsBefore = await requestsOf(socket);
    const before = cpuMs(server.pid);
    const clientBefore = process.cpuUsage();
    const rate = await timed(client, queue, producers, jobs);
    const clientCpu = process.cpuUsage(clientBefore);
    const after = cpuMs(server.pid);
    const requests = perJob(requestsBefore, await requestsOf(socket), jobs);
    await worker?.close();
    const user = ((after.user - before.user) * 1000) / jobs;
    const system = ((after.system - before.system) * 1000) / jobs;
    const what = heartbeats
      ? "heartbeat"
      : workers === 0
        ? "insert"
        : `job (${workers} worker slots)`;
    console.log(
      `${label} producers ${producers}: ${Math.round(rate)} jobs/s, server CPU ${(user + system).toFixed(1)} µs/${what} (user ${user.toFixed(1)}, system ${system.toFixed(1)}), client CPU ${((clientCpu.user + clientCpu.system) / jobs).toFixed(1)} µs (user ${(clientCpu.user / jobs).toFixed(1)}, system ${(clientCpu.system / jobs).toFixed(1)}); requests per job: ${requests}`,
    );
  }
  await client.close();
  server.kill("SIGINT");
  await new Promise((resolve) => server.once("exit", resolve));
  rmSync(join(directory, ".."), { recursive: true, force: true });
};

// `--trees=A,B` compares builds of two checkouts, alternating, `--rounds` times.
const trees = argument("trees", here)
  .split(",")
  .map((tree) => resolve(tree));
for (let round = 0; round < rounds; round += 1) {
  for (const [index, tree] of trees.entries()) {
    await measure(tree, trees.length > 1 ? `round ${round + 1} [${index}] ${tree}` : "");
  }
}
process.exit(0);
