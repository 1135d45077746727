#!/usr/bin/env node
/**
 * One process of bench/postgres/run.mjs: one system (Tay's engine over
 * PostgreSQL, pg-boss or graphile-worker) on the database at URL, running
 * CONCURRENCY producers (`enqueue`: each awaits one insert after another
 * for SECONDS) or consumers (`process`: each fetches one job and completes
 * it, until the queue is empty; graphile-worker's runner until told to
 * stop). It prints `ready` once set up, waits for `go` on stdin, and ends
 * with `result JSON` (count, latencies in ms, Tay's contention counters).
 *
 *   node bench/postgres/child.mjs SYSTEM URL WORKLOAD CONCURRENCY SECONDS
 */
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";

const [system, url, workload, concurrencyText, secondsText] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
const seconds = Number(secondsText);
const queue = "bench";
// PgLog options for Tay's engines (JSON), for A/B runs of one option: TAY_BENCH_PG_OPTIONS='{"followIntervalMs":0}'.
const logOptions = JSON.parse(process.env.TAY_BENCH_PG_OPTIONS ?? "{}");
// Engine options likewise: TAY_BENCH_ENGINE_OPTIONS='{"conflictBackoffMs":0}'.
const engineOptions = JSON.parse(process.env.TAY_BENCH_ENGINE_OPTIONS ?? "{}");
const argsOf = (index) => ({ order: index, customer: "c-42", note: "benchmark job" });

const lines = createInterface({ input: process.stdin });
const waiting = new Map();
lines.on("line", (line) => {
  const resolve = waiting.get(line.trim());
  if (resolve !== undefined) {
    waiting.delete(line.trim());
    resolve();
  }
});
const told = (word) => new Promise((resolve) => waiting.set(word, resolve));

/** Runs `body(client)` in a transaction of its own on a connection of `pool`. */
const inTransaction = async (pool, body) => {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await body(client);
    await client.query("COMMIT");
  } finally {
    client.release();
  }
};
const say = (line) => process.stdout.write(`${line}\n`);

/**
 * A started pg-boss with a pool of `max` connections. The parent created the
 * schema and the queue; these processes only send, fetch and complete.
 */
const startedBoss = async (max) => {
  // pg-boss 10 (the last for Node 20) exports its class as the default.
  const bossModule = await import("pg-boss");
  const PgBoss = bossModule.PgBoss ?? bossModule.default;
  const boss = new PgBoss({ connectionString: url, max, supervise: false, schedule: false });
  boss.on("error", (error) => process.stderr.write(`pg-boss: ${error.message}\n`));
  await boss.start();
  return boss;
};

/** Each system as the same four operations. */
const systems = {
  tay: async () => {
    const { Effect, Exit, Scope } = await import("effect");
    const { PgLog } = await import("@tay/log-postgres");
    const { Engine, StateProjection } = await import("@tay/shell-node");
    const scope = await Effect.runPromise(Scope.make());
    const engine = await Effect.runPromise(
      Scope.extend(
        Effect.gen(function* () {
          const recovered = yield* PgLog.open(url, logOptions, StateProjection.foldProjection);
          return yield* Engine.fromLog(recovered, {
            timers: false,
            rescueOnOpen: false,
            ...engineOptions,
          });
        }),
        scope,
      ),
    );
    const api = engine.promises;
    // Another engine appending first is not a failure of the benchmark: issue it again.
    const again = async (operation) => {
      for (;;) {
        try {
          return await operation();
        } catch (error) {
          if (error?._tag !== "ContentionExhausted") throw error;
        }
      }
    };
    return {
      enqueue: (index) => again(() => api.insert({ queue, worker: "W", args: argsOf(index) })),
      take: async () => {
        const [job] = await again(() => api.claim(queue, 1));
        if (job === undefined) return false;
        await again(() => api.complete(job.jobId, null, { attempt: job.attempt }));
        return true;
      },
      stats: () => ({ ...engine.contention(), ...engine.log.writes() }),
      inbox: () => engine.log.inbox(),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
    };
  },
  // Tay's engine, with producers that enqueue in transactions of their own (the inbox).
  tayinbox: async () => {
    const tay = await systems.tay();
    const { default: pg } = await import("pg");
    const { Inbox } = await import("@tay/log-postgres");
    // 10 connections a process: 4 processes stay under the server's 100 with the engines' own.
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    const inboxOptions = process.env.BENCH_INBOX_NOTIFY === "0" ? { notify: false } : {};
    return {
      ...tay,
      enqueue: (index) =>
        inTransaction(pool, (client) =>
          Inbox.enqueueInTransaction(
            client,
            { queue, worker: "W", args: argsOf(index) },
            inboxOptions,
          ),
        ),
      stats: () => ({ ...tay.stats(), ...tay.inbox() }),
      close: async () => {
        await pool.end();
        await tay.close();
      },
    };
  },
  pgboss: async () => {
    const boss = await startedBoss(20);
    return {
      enqueue: (index) => boss.send(queue, argsOf(index)),
      take: async () => {
        const [job] = await boss.fetch(queue);
        if (job === undefined) return false;
        await boss.complete(queue, job.id);
        return true;
      },
      stats: () => ({}),
      close: () => boss.stop({ graceful: false }),
    };
  },
  // pg-boss with producers that send in transactions of their own (its `db` option), the
  // like of the inbox: `BEGIN; send; COMMIT` on a pool of 10 connections a process.
  pgbosstx: async () => {
    // Its own pool serves only its start: the sends run on the producers' connections.
    const boss = await startedBoss(2);
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    return {
      enqueue: (index) =>
        inTransaction(pool, (client) => {
          const db = { executeSql: (text, values) => client.query(text, values) };
          return boss.send(queue, argsOf(index), { db });
        }),
      stats: () => ({}),
      close: async () => {
        await pool.end();
        await boss.stop({ graceful: false });
      },
    };
  },
  graphile: async () => {
    const { Logger, makeWorkerUtils, run } = await import("graphile-worker");
    const logger = new Logger(() => () => {});
    // Only producers need the utilities' pool (the server allows 100 connections in all).
    const utils =
      workload === "enqueue" ? await makeWorkerUtils({ connectionString: url, logger }) : undefined;
    let completed = 0;
    return {
      enqueue: (index) => utils.addJob(queue, argsOf(index)),
      // graphile-worker has no public fetch: its runner takes the jobs.
      runner: () =>
        run({
          connectionString: url,
          concurrency,
          maxPoolSize: Math.min(20, concurrency + 2),
          noHandleSignals: true,
          pollInterval: 200,
          logger,
          taskList: {
            [queue]: async () => {
              completed += 1;
            },
          },
        }),
      completed: () => completed,
      stats: () => ({}),
      close: async () => utils?.release(),
    };
  },
};

/** Producers: each awaits one insert after another until the time is up. */
const enqueueLoop = async (driver) => {
  const latencies = [];
  const stopAt = performance.now() + seconds * 1000;
  let next = 0;
  const producer = async () => {
    while (performance.now() < stopAt) {
      const started = performance.now();
      await driver.enqueue(next++);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, producer));
  // A process without producers still runs (an engine that only follows the others).
  const left = stopAt - performance.now();
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
  return { count: latencies.length, latencies };
};

/** Consumers: each fetches one job and completes it, until the queue is empty. */
const processLoop = async (driver) => {
  const latencies = [];
  const consumer = async () => {
    for (;;) {
      const started = performance.now();
      if (!(await driver.take())) return;
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, consumer));
  return { count: latencies.length, latencies };
};

/** graphile-worker's runner, from `go` until the parent says `stop`. */
const runnerLoop = async (driver) => {
  if (concurrency === 0) {
    await told("stop");
    return { count: 0, latencies: [] };
  }
  const runner = await driver.runner();
  await told("stop");
  await runner.stop();
  return { count: driver.completed(), latencies: [] };
};

const driver = await systems[system]();
say("ready");
await told("go");
const result =
  workload === "enqueue"
    ? await enqueueLoop(driver)
    : driver.runner !== undefined
      ? await runnerLoop(driver)
      : await processLoop(driver);
// After the close, which drains the engine's last batch (its folded rows count).
await driver.close();
const stats = driver.stats();
// Exit once the line is written: a pipe's write is asynchronous, and exiting
// at once cut a long result (16 producers on a quiet machine, ~200 KB of
// latencies) mid-line.
process.stdout.write(`result ${JSON.stringify({ ...result, stats })}\n`, () => process.exit(0));
