#!/usr/bin/env node
/**
 * Where one producer's append goes: CPU time, not wall time (the shared
 * machine's load makes wall time noise). Each variant runs N appends of
 * one record one after another, alternated in rounds (A B C A B C ...), on
 * a database of its own, and reports per append: the p50 wall time, the
 * client's CPU (this process, `process.cpuUsage`) and the server's CPU
 * (every backend of the variant's database, from `/proc/PID/schedstat`,
 * nanoseconds on CPU; the server must run on this machine).
 *
 * Variants (raw statements on a `pg.Client`, no engine):
 * - script: the log's append as one text, simple protocol (sql.ts `appendScript`), with its notification;
 * - script-quiet: the same without the notification;
 * - pipeline: BEGIN, guard, INSERT, head, notification, COMMIT as named
 *   prepared statements with parameters on a `pipeline: true` client (one round trip);
 * - pipeline-quiet: the same without the notification;
 * - steps: the same statements one round trip each (prepared), for scale.
 * A listener (LISTEN on the store's channel, as every engine's follower) runs in each database.
 *
 *   node bench/postgres/append-cost.mjs --appends=2000 --rounds=4 --variants=script,pipeline
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Effect } from "effect";
import pg from "pg";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const sql = await import(join(root, "packages/log-postgres/dist/internal/sql.js"));
const { PgSchema } = await import("@tay/log-postgres");

const option = (name, fallback) => {
  const found = process.argv.find((argument) => argument.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
const appends = Number(option("appends", 1000));
const rounds = Number(option("rounds", 3));
const variants = option("variants", "script,script-quiet,pipeline,pipeline-quiet,steps").split(",");
const serverUrl = process.env.TAY_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const record = new Uint8Array(160).map((_, index) => (index * 37) & 0xff);

const admin = async (text) => {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
};

const onCpu = (pid) => {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
  } catch {
    return 0;
  }
};

/** Nanoseconds on CPU of every backend of `database` (the admin query's own backend aside). */
const serverCpu = async (database) => {
  const { rows } = await admin(
    `SELECT pid FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`,
  );
  return rows.reduce((sum, row) => sum + onCpu(row.pid), 0);
};

const setUp = async (variant) => {
  const name = `tay_cost_${variant.replace(/-/g, "_")}`;
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await Effect.runPromise(PgSchema.init(url.toString()));
  const options = "-c synchronous_commit=on";
  const client = new pg.Client({
    connectionString: url.toString(),
    options,
    pipeline: variant.startsWith("pipeline"),
  });
  await client.connect();
  const listener = new pg.Client({ connectionString: url.toString() });
  await listener.connect();
  const { rows } = await client.query("SELECT store_id FROM tay.tay_current");
  const storeId = rows[0].store_id;
  const channel = sql.channel(storeId);
  await listener.query(`LISTEN ${channel}`);
  let heard = 0;
  listener.on("notification", () => {
    heard += 1;
  });
  let boss;
  if (variant === "pgboss") {
    const bossModule = await import("pg-boss");
    const PgBoss = bossModule.PgBoss ?? bossModule.default;
    boss = new PgBoss({
      connectionString: url.toString(),
      max: 20,
      supervise: false,
      schedule: false,
    });
    await boss.start();
    await boss.createQueue("bench");
  }
  let engine;
  let children = [];
  if (variant.startsWith("tay")) {
    const { PgLog } = await import("@tay/log-postgres");
    const { Engine, StateProjection } = await import("@tay/shell-node");
    const { Scope } = await import("effect");
    const scope = await Effect.runPromise(Scope.make());
    engine = await Effect.runPromise(
      Scope.extend(
        Effect.gen(function* () {
          const recovered = yield* PgLog.open(
            url.toString(),
            variant === "tay-script" ? { oneTrip: "script" } : {},
            StateProjection.foldProjection,
          );
          return yield* Engine.fromLog(recovered, { timers: false, rescueOnOpen: false });
        }),
        scope,
      ),
    );
    // tay2, tay4: one or three more engines, idle, each in a process of its
    // own (the bench's child with no producer); -eager: told every
    // notification (followIntervalMs 0, as before 2026-12-02), -50: every 50 ms.
    const idle = variant.startsWith("tay2") ? 1 : variant.startsWith("tay4") ? 3 : 0;
    const followOptions = variant.endsWith("-eager")
      ? '{"followIntervalMs":0}'
      : variant.endsWith("-50")
        ? '{"followIntervalMs":50}'
        : "{}";
    const { spawn } = await import("node:child_process");
    children = Array.from({ length: idle }, () =>
      spawn(
        process.execPath,
        [join(here, "child.mjs"), "tay", url.toString(), "enqueue", "0", "3600"],
        {
          cwd: root,
          stdio: ["pipe", "pipe", "inherit"],
          env: { ...process.env, TAY_BENCH_PG_OPTIONS: followOptions },
        },
      ),
    );
    for (const child of children) {
      await new Promise((resolve) =>
        child.stdout.on("data", (chunk) => chunk.toString().includes("ready") && resolve()),
      );
      child.stdin.write("go\n");
    }
  }
  return {
    name,
    client,
    listener,
    boss,
    engine,
    children,
    storeId,
    channel,
    last: 0,
    heard: () => heard,
  };
};

const statements = {
  guard:
    'UPDATE "tay".tay_current SET last_sequence = $3 WHERE store_id = $1 AND epoch = $2 AND last_sequence = $4',
  insert:
    'INSERT INTO "tay".tay_record (store_id, epoch, sequence, record) SELECT $1, $2, $3, $4 FROM "tay".tay_current WHERE store_id = $1 AND epoch = $2 AND last_sequence = $5',
  head: 'UPDATE "tay".tay_current SET last_sequence = $3 WHERE store_id = $1 AND epoch = $2 AND last_sequence = $4',
  notify: "SELECT pg_notify($1, $2)",
};

/**
 * Statements sent as one extended-protocol batch: Parse (first time) / Bind
 * / Execute for each, then one Sync: one implicit transaction, committed at
 * the Sync, one ReadyForQuery. A node-postgres Submittable.
 */
class Batch {
  constructor(statements, parsed, callback) {
    this.statements = statements;
    this.parsed = parsed;
    this.callback = callback;
    this.counts = [];
    this.error = undefined;
  }
  submit(connection) {
    connection.stream.cork?.();
    try {
      for (const statement of this.statements) {
        if (!this.parsed.has(statement.name)) {
          connection.parse({ text: statement.text, name: statement.name });
        }
        connection.bind({
          statement: statement.name,
          values: statement.values,
          valueMapper: undefined,
        });
        connection.execute({});
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }
  handleRowDescription() {}
  handleDataRow() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}
  handleCommandComplete(message) {
    const words = message.text.split(" ");
    this.counts.push(Number(words[words.length - 1]));
  }
  handleError(error) {
    this.error ??= error;
  }
  handleReadyForQuery() {
    if (this.error === undefined)
      for (const statement of this.statements) this.parsed.add(statement.name);
    this.callback(this.error, this.counts);
  }
}

const appendOnce = async (variant, setup) => {
  const expected = setup.last;
  const last = expected + 1;
  const quiet = variant.endsWith("quiet");
  if (variant === "pgboss") {
    await setup.boss.send("bench", { order: last, customer: "c-42", note: "benchmark job" });
    setup.last = last;
    return;
  }
  if (variant.startsWith("tay")) {
    await setup.engine.promises.insert({
      queue: "bench",
      worker: "W",
      args: { order: last, customer: "c-42", note: "benchmark job" },
    });
    setup.last = last;
    return;
  }
  if (variant === "select1") {
    await setup.client.query("SELECT 1");
    setup.last = last;
    return;
  }
  if (variant === "commit") {
    await setup.client.query(
      `UPDATE "tay".tay_current SET last_sequence = ${last} WHERE last_sequence = ${expected}`,
    );
    setup.last = last;
    return;
  }
  if (variant.startsWith("script")) {
    const texts = sql.appendScript("tay", {
      storeId: setup.storeId,
      epoch: 1,
      expected,
      last,
      chunks: [[{ sequence: last, bytes: record }]],
      ...(quiet ? {} : { notify: { channel: setup.channel, payload: `w:${last}` } }),
    });
    const results = await setup.client.query(sql.script(texts));
    if (results[0].rowCount !== 1) throw new Error("guard missed");
  } else {
    const marker = (2n ** 62n + BigInt(last)).toString();
    const { client } = setup;
    const bytes = Buffer.from(record);
    if (variant.startsWith("batch")) {
      const list = [
        {
          name: "g",
          text: statements.guard,
          values: [setup.storeId, "1", marker, String(expected)],
        },
        {
          name: "i",
          text: statements.insert,
          values: [setup.storeId, "1", String(last), bytes, marker],
        },
        { name: "h", text: statements.head, values: [setup.storeId, "1", String(last), marker] },
      ];
      if (!quiet)
        list.push({ name: "n", text: statements.notify, values: [setup.channel, `w:${last}`] });
      setup.parsed ??= new Set();
      const counts = await new Promise((resolve, reject) =>
        client.query(
          new Batch(list, setup.parsed, (error, counts) =>
            error ? reject(error) : resolve(counts),
          ),
        ),
      );
      if (counts[0] !== 1) throw new Error("guard missed");
      setup.last = last;
      return;
    }
    const queries = [
      client.query("BEGIN"),
      client.query({
        name: "g",
        text: statements.guard,
        values: [setup.storeId, 1, marker, expected],
      }),
      client.query({
        name: "i",
        text: statements.insert,
        values: [setup.storeId, 1, last, bytes, marker],
      }),
      client.query({ name: "h", text: statements.head, values: [setup.storeId, 1, last, marker] }),
    ];
    if (!quiet)
      queries.push(
        client.query({ name: "n", text: statements.notify, values: [setup.channel, `w:${last}`] }),
      );
    queries.push(client.query("COMMIT"));
    // "steps": the client is not pipelined, so each query waits for the one before.
    const results = await Promise.all(queries);
    if (results[1].rowCount !== 1) throw new Error("guard missed");
  }
  setup.last = last;
};

const main = async () => {
  const setups = {};
  for (const variant of variants) setups[variant] = await setUp(variant);
  const totals = Object.fromEntries(
    variants.map((variant) => [variant, { wall: [], client: 0, server: 0, other: 0, count: 0 }]),
  );
  // Round 0 warms up (the JIT, the first statements) and is not counted.
  for (let round = 0; round <= rounds; round++) {
    for (const variant of variants) {
      const setup = setups[variant];
      const serverBefore = await serverCpu(setup.name);
      const cpuBefore = process.cpuUsage();
      const childBefore = (setup.children ?? []).reduce((sum, child) => sum + onCpu(child.pid), 0);
      for (let index = 0; index < appends; index++) {
        const started = performance.now();
        await appendOnce(variant, setup);
        totals[variant].wall.push(performance.now() - started);
      }
      const cpu = process.cpuUsage(cpuBefore);
      const serverAfter = await serverCpu(setup.name);
      if (round === 0) {
        totals[variant].wall = [];
        continue;
      }
      totals[variant].client += cpu.user + cpu.system;
      const childAfter = (setup.children ?? []).reduce((sum, child) => sum + onCpu(child.pid), 0);
      totals[variant].other += (childAfter - childBefore) / 1000;
      totals[variant].server += (serverAfter - serverBefore) / 1000;
      totals[variant].count += appends;
    }
  }
  console.log(
    `appends ${appends} x ${rounds} rounds; load ${readFileSync("/proc/loadavg", "utf8").trim()}`,
  );
  console.log(
    "| variant | p50 ms | client µs/append | server µs/append | other engines µs/append | heard |",
  );
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const variant of variants) {
    const total = totals[variant];
    const sorted = total.wall.sort((a, b) => a - b);
    console.log(
      `| ${variant} | ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} | ${(total.client / total.count).toFixed(1)} | ${(total.server / total.count).toFixed(1)} | ${(total.other / total.count).toFixed(1)} | ${setups[variant].heard()} |`,
    );
  }
  for (const variant of variants) {
    const setup = setups[variant];
    await setup.client.end();
    await setup.listener.end();
    await setup.boss?.stop({ graceful: false });
    for (const child of setup.children ?? []) child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await admin(`DROP DATABASE IF EXISTS ${setup.name} WITH (FORCE)`);
  }
};

await main();
process.exit(0);
