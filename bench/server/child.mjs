#!/usr/bin/env node
/**
 * One process of the benchmark's producers and workers (bench/server/run.mjs
 * starts 1 or 4 of them): connects to the system under test (a Tay server
 * over its Unix socket through `@tay/client` and `RemoteWorker`, or BullMQ
 * over TCP), starts its workers, then on `go` (a line on stdin) runs its
 * producers, each awaiting its insert before the next, and prints one JSON
 * line with the insert latencies (ms); on `stop` it closes and exits.
 *
 *   node bench/server/child.mjs '{"system":"tay","directory":...,"producers":4,"jobs":750,"workers":0}'
 *
 * With `"tree": DIR`, the client and `RemoteWorker` are DIR's build.
 */
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { openBullmq } from "../peers/bullmq.mjs";

const config = JSON.parse(process.argv[2]);
const { queue } = config;
// The checkout whose client and worker run (`tree`, default this one): each build its own.
const tree = config.tree ?? new URL("../..", import.meta.url).pathname;
const { Client } = await import(pathToFileURL(join(tree, "packages/client/dist/index.js")).href);
const { RemoteWorker } = await import(
  pathToFileURL(join(tree, "packages/shell-node/dist/index.js")).href
);

/** The system's insert and its workers, opened. */
const open = async () => {
  if (config.system === "tay") {
    const client = await Client.connect(config.directory);
    const worker =
      config.workers === 0
        ? undefined
        : await RemoteWorker.start(client, {
            queues: { [queue]: config.workers },
            handlers: { W: async () => null },
          });
    return {
      insert: (args) => client.insert({ queue, worker: "W", args }),
      warm: (args) => client.insert({ queue: "warm", worker: "W", args }),
      close: async () => {
        await worker?.close();
        await client.close();
      },
    };
  }
  const bull = await openBullmq({
    port: config.port,
    directory: config.directory,
    appendfsync: "always",
    queueName: queue,
  });
  let stopping = false;
  let warmQueue;
  const processing =
    config.workers === 0
      ? Promise.resolve()
      : bull.process({
          concurrency: config.workers,
          shouldStop: () => stopping,
          onStart: () => {},
          onCompleted: () => {},
        });
  return {
    insert: (args) => bull.insert(queue, args),
    warm: async (args) => {
      warmQueue ??= await openBullmq({
        port: config.port,
        directory: config.directory,
        appendfsync: "always",
        queueName: "warm",
      });
      return warmQueue.insert("warm", args);
    },
    close: async () => {
      stopping = true;
      await processing;
      await warmQueue?.close();
      await bull.close();
    },
  };
};

const produce = async (insert) => {
  const latencies = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: config.producers }, async () => {
      while (next < config.jobs) {
        next += 1;
        const at = performance.now();
        await insert({ n: next });
        latencies.push(performance.now() - at);
      }
    }),
  );
  return latencies;
};

const system = await open();
// Warm this process's (and the server's) path at the case's concurrency before it is timed.
const warm = config.warmup ?? 0;
await Promise.all(
  Array.from({ length: Math.min(config.producers, warm) }, async (_, producer) => {
    for (let n = producer; n < warm; n += config.producers) await system.warm({ n });
  }),
);
const lines = createInterface({ input: process.stdin });
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for await (const line of lines) {
  if (line === "go") {
    const latencies = await produce(system.insert);
    process.stdout.write(`${JSON.stringify({ latencies })}\n`);
  } else if (line === "stop") {
    break;
  }
}
await system.close();
process.exit(0);
