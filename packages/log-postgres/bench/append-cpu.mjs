#!/usr/bin/env node
/**
 * The client's CPU per awaited insert of Tay's engine over PostgreSQL with
 * the round trip taken out: the writer's batch is answered at once (the
 * guard moved the head, every INSERT wrote its rows) instead of being sent,
 * so what is measured is the engine, the log's writer and the Effect
 * runtime around them, with a warm JIT and no socket, no server and no
 * other process's load in the number. insert-trips.mjs measures the whole
 * path beside pg-boss; this one isolates the part the log's own code can
 * change. The store is real (open, recovery, the follower and the inbox
 * folder connect as usual; notifications are off, since no append reaches
 * the server). Needs the build (`pnpm build`) and a server (TAY_PG_URL).
 *
 *   node packages/log-postgres/bench/append-cpu.mjs --inserts=20000 --rounds=3
 *
 * Options: --inserts=N (measured per round, default 20,000), --warmup=N
 * (answered at once, before, default 3,000), --rounds=N (default 3; each
 * round's CPU is printed, then the median).
 */
import { performance } from "node:perf_hooks";
import { Effect, Exit, Scope } from "effect";
import pg from "pg";
import { Driver, PgLog, PgSchema } from "@tay/log-postgres";
import { Engine, StateProjection } from "@tay/shell-node";

const option = (name, fallback) => {
  const found = process.argv.find((argument) => argument.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
};
const inserts = Number(option("inserts", 20_000));
const warmup = Number(option("warmup", 3_000));
const rounds = Number(option("rounds", 3));
const serverUrl = process.env.TAY_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const admin = async (url, text) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
};

// The batch's answer as the server gives it when the guard moved the head:
// one row for the guard and for the head's last move, every row for each INSERT.
let answering = false;
const answered = (statements) =>
  statements.map((statement, index) => ({
    rows: [],
    affected:
      index === 0 || index === statements.length - 1 ? 1 : (statement.parameters.length - 3) / 2,
  }));
const driver = (url) => {
  const real = Driver.nodePg(url);
  return {
    connect: async () => {
      const session = await real.connect();
      if (Driver.isFailure(session) || session.batch === undefined) return session;
      const batch = session.batch;
      return {
        ...session,
        batch: async (statements) => (answering ? answered(statements) : batch(statements)),
      };
    },
  };
};

const name = `tay_append_cpu_${process.pid}`;
await admin(serverUrl, `CREATE DATABASE ${name}`);
const url = new URL(serverUrl);
url.pathname = `/${name}`;
try {
  await Effect.runPromise(PgSchema.init(url.toString()));
  const scope = await Effect.runPromise(Scope.make());
  const engine = await Effect.runPromise(
    Scope.extend(
      Effect.gen(function* () {
        const options = { driver, notifications: false };
        const recovered = yield* PgLog.open(
          url.toString(),
          options,
          StateProjection.foldProjection,
        );
        return yield* Engine.fromLog(recovered, { timers: false, rescueOnOpen: false });
      }),
      scope,
    ),
  );
  const insert = (index) =>
    engine.promises.insert({
      queue: "bench",
      worker: "W",
      args: { order: index, customer: "c-42", note: "benchmark job" },
    });
  // The first inserts go to the server: the batch's statements are prepared for real.
  for (let index = 0; index < 100; index++) await insert(index);
  answering = true;
  for (let index = 0; index < warmup; index++) await insert(index);
  const cpus = [];
  for (let round = 0; round < rounds; round++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let index = 0; index < inserts; index++) await insert(index);
    const used = process.cpuUsage(cpu);
    const wall = performance.now() - started;
    cpus.push((used.user + used.system) / inserts);
    console.log(
      `round ${round + 1}: ${inserts} awaited inserts, ${((wall * 1000) / inserts).toFixed(1)} µs wall, CPU ${cpus.at(-1).toFixed(1)} µs each`,
    );
  }
  cpus.sort((left, right) => left - right);
  console.log(`median CPU ${cpus[Math.floor(cpus.length / 2)].toFixed(1)} µs per awaited insert`);
  // What was answered at once never reached the table: the close must not wait on it.
  await Effect.runPromise(Scope.close(scope, Exit.void)).catch(() => undefined);
} finally {
  await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
