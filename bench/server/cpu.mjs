#!/usr/bin/env node
/**
 * The server's own CPU per insert, and nothing else: `tay serve` (a child
 * process, `Maximal`) answering `@tay/client` inserts from this process
 * at each concurrency; µs of the server's utime+stime per insert. For
 * profiling (`--prof-dir=DIR` runs the server with `--cpu-prof` there)
 * and for before/after comparisons of server changes (`--tay=A,B`: two
 * builds' `tay` executables, alternating for `--rounds`), robust to the
 * machine's load since it counts CPU, not time.
 *
 *   pnpm build && node bench/server/cpu.mjs [--jobs=N] [--producers=1,16,256]
 *     [--prof-dir=DIR] [--tay=BIN,BIN] [--rounds=N]
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Locate } from "../../packages/client/dist/index.js";

const argument = (name, fallback) => {
  const found = process.argv.find((value) => value.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
const jobs = Number(argument("jobs", "3000"));
const producersList = argument("producers", "1,16,256").split(",").map(Number);
const profDir = argument("prof-dir", undefined);
const rounds = Number(argument("rounds", "1"));
const tay = new URL("../../packages/cli/bin/tay.mjs", import.meta.url).pathname;

/** User and system CPU ms of `pid` (from /proc; USER_HZ 100). */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
};

const drive = async (client, producers, total) => {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (next < total) {
        next += 1;
        await client.insert({ queue: "bench", worker: "W", args: { n: next } });
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
};

/** One server (`tay` at `bin`) through every concurrency: a line each. */
const measure = async (bin, label) => {
  const directory = join(mkdtempSync(join(tmpdir(), "tay-bench-cpu-")), "data");
  const flags = profDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profDir}`];
  const server = spawn(process.execPath, [...flags, bin, "serve", directory, "--create"], {
    stdio: "ignore",
  });
  while (Locate.servedAt(directory) === null || !existsSync(Locate.socketOf(directory))) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const client = await Client.connect(directory);
  for (const producers of producersList) {
    await drive(client, producers, 300);
    const before = cpuMs(server.pid);
    const rate = await drive(client, producers, jobs);
    const after = cpuMs(server.pid);
    const user = ((after.user - before.user) * 1000) / jobs;
    const system = ((after.system - before.system) * 1000) / jobs;
    console.log(
      `${label} producers ${producers}: ${Math.round(rate)} jobs/s, server CPU ${(user + system).toFixed(1)} µs/insert (user ${user.toFixed(1)}, system ${system.toFixed(1)})`,
    );
  }
  await client.close();
  server.kill("SIGINT");
  await new Promise((resolve) => server.once("exit", resolve));
  rmSync(join(directory, ".."), { recursive: true, force: true });
};

// `--tay=A,B` compares servers built from two trees, alternating, `--rounds` times.
const bins = argument("tay", tay).split(",");
for (let round = 0; round < rounds; round += 1) {
  for (const [index, bin] of bins.entries())
    await measure(bin, bins.length > 1 ? `[${index}]` : "");
}
