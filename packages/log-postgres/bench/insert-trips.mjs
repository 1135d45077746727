#!/usr/bin/env node
/**
 * What one awaited insert costs in round trips and server work, Tay's
 * engine over PostgreSQL beside pg-boss's `send` (the 1 producer case of
 * bench/postgres/run.mjs): wall time hides these behind the shared
 * machine's load, counts do not. Every `pg.Client#query` call of this
 * process is one round trip (node-postgres sends a batch of prepared
 * statements, the log's append, as one `query` of a Submittable with one
 * Sync); they are counted by session (the writer, the follower, the inbox
 * folder, pg-boss's pool) and by first word, beside the server's
 * committed transactions, WAL records and bytes, and tuples written, read
 * from its statistics before and after (each system in a database of its
 * own). Needs the build (`pnpm build`).
 *
 *   node packages/log-postgres/bench/insert-trips.mjs --inserts=2000 --systems=tay,pgboss
 *
 * Options: --inserts=N (counted, default 2,000), --warmup=N (before, default
 * 300), --systems=tay,pgboss, --follow-interval-ms=N (Tay's, default the
 * log's 50), --texts (count by statement text, not only its first word).
 */
import { performance } from "node:perf_hooks";
import pg from "pg";

const option = (name, fallback) => {
  const found = process.argv.find((argument) => argument.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
const inserts = Number(option("inserts", 2000));
const warmup = Number(option("warmup", 300));
const systems = option("systems", "tay,pgboss").split(",");
// Tay's `followIntervalMs` (default 50): how often its notifications may go, inline or on their own.
const followIntervalMs = option("follow-interval-ms", undefined);
const logOptions =
  followIntervalMs === undefined ? {} : { followIntervalMs: Number(followIntervalMs) };
const serverUrl = process.env.TAY_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const queue = "bench";
const argsOf = (index) => ({ order: index, customer: "c-42", note: "benchmark job" });

// Every round trip of this process, by the client that made it and the text's first word.
const counts = new Map();
const clientNames = new WeakMap();
let sessions = 0;
const verbose = process.argv.includes("--texts");
let counting = false;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  if (counting) {
    const text = (typeof config === "string" ? config : (config?.text ?? "")).trim();
    // The log's append is a Submittable without a text: its statements are counted as one.
    const verb =
      text === "" ? `batch of ${config?.statements?.length ?? "?"}` : text.split(/\s/)[0];
    if (!clientNames.has(this)) clientNames.set(this, `session ${++sessions}`);
    const key = `${clientNames.get(this)}: ${verb}${verbose ? ` ${text.slice(0, 90)}` : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return query.call(this, config, ...rest);
};

const admin = async (url, text) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
};

const serverStats = async (url, database) => {
  const [row] = await admin(
    url,
    `SELECT d.xact_commit, d.tup_inserted, d.tup_updated, d.tup_deleted, d.tup_fetched, w.wal_records, w.wal_bytes FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = '${database}'`,
  );
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)]));
};

const fresh = async (system) => {
  const name = `tay_trips_${system}`;
  await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
};

const openers = {
  tay: async (url) => {
    const { Effect, Exit, Scope } = await import("effect");
    const { PgLog, PgSchema } = await import("@tay/log-postgres");
    const { Engine, StateProjection } = await import("@tay/shell-node");
    await Effect.runPromise(PgSchema.init(url));
    const scope = await Effect.runPromise(Scope.make());
    const engine = await Effect.runPromise(
      Scope.extend(
        Effect.gen(function* () {
          const recovered = yield* PgLog.open(url, logOptions, StateProjection.foldProjection);
          return yield* Engine.fromLog(recovered, { timers: false, rescueOnOpen: false });
        }),
        scope,
      ),
    );
    return {
      insert: (index) => engine.promises.insert({ queue, worker: "W", args: argsOf(index) }),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
    };
  },
  pgboss: async (url) => {
    const bossModule = await import("pg-boss");
    const PgBoss = bossModule.PgBoss ?? bossModule.default;
    const boss = new PgBoss({ connectionString: url, max: 20, supervise: false, schedule: false });
    await boss.start();
    await boss.createQueue(queue);
    return {
      insert: (index) => boss.send(queue, argsOf(index)),
      close: () => boss.stop({ graceful: false }),
    };
  },
};

for (const system of systems) {
  const { name, url } = await fresh(system);
  const driver = await openers[system](url);
  for (let index = 0; index < warmup; index++) await driver.insert(index);
  // One insert a second later flushes the warm-up's statistics (a busy backend's, at most once a second).
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await driver.insert(warmup);
  await new Promise((resolve) => setTimeout(resolve, 100));
  counts.clear();
  const before = await serverStats(url, name);
  counting = true;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const latencies = [];
  for (let index = 0; index < inserts; index++) {
    const sent = performance.now();
    await driver.insert(warmup + 1 + index);
    latencies.push(performance.now() - sent);
  }
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - started;
  counting = false;
  // A backend flushes its statistics at most once a second while busy, and whole on exit.
  await driver.close();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const after = await serverStats(url, name);
  const per = (value) => (value / inserts).toFixed(2);
  console.log(
    `${system}: ${inserts} awaited inserts, ${(wall / inserts).toFixed(3)} ms each, client CPU ${((used.user + used.system) / inserts).toFixed(0)} µs each`,
  );
  // The mean is what the throughput sees: a tail far above the median shows there.
  latencies.sort((left, right) => left - right);
  const at = (fraction) =>
    latencies[Math.min(latencies.length - 1, Math.floor(fraction * latencies.length))].toFixed(2);
  const over = (ms) => latencies.filter((latency) => latency > ms).length;
  console.log(
    `  latency ms: p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)}; over 2 ms: ${over(2)}, taking ${latencies
      .filter((latency) => latency > 2)
      .reduce((sum, latency) => sum + latency, 0)
      .toFixed(0)} of ${wall.toFixed(0)} ms`,
  );
  for (const [key, value] of [...counts].sort()) console.log(`  ${key}: ${per(value)} per insert`);
  const total = [...counts.values()].reduce((sum, value) => sum + value, 0);
  console.log(`  round trips in all: ${per(total)} per insert`);
  // The statistics reads and the close count a few transactions: negligible over thousands.
  for (const key of Object.keys(after)) {
    console.log(`  server ${key}: ${per(after[key] - before[key])} per insert`);
  }
  await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
