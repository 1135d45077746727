// BullMQ 6 on the private Redis, used the way its documentation shows:
// one `Queue` (one connection, commands pipelined) for producers, a `Worker`
// with `concurrency` for processing. Completed jobs are kept
// (`removeOnComplete: false`), like the retained completed jobs of the
// other systems.
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { directoryBytes } from "../../packages/shell-node/bench/lib/common.mjs";

export const bullmqSettings = ["always", "everysec"];

const connectionOf = (port) => ({ host: "127.0.0.1", port, maxRetriesPerRequest: null });

/** Job states whose counts add up to every job BullMQ holds. */
const jobStates = [
  "waiting",
  "active",
  "completed",
  "failed",
  "delayed",
  "prioritized",
  "waiting-children",
  "paused",
];

/**
 * The BullMQ driver for queue `queueName` on the Redis at `port` whose
 * data lives in `directory`, labelled with its `appendfsync` setting.
 */
export const openBullmq = async ({ port, directory, appendfsync, queueName }) => {
  const connection = connectionOf(port);
  const queue = new Queue(queueName, {
    connection,
    defaultJobOptions: { removeOnComplete: false, removeOnFail: false },
  });
  await queue.waitUntilReady();
  const admin = new Redis(connection);
  return {
    system: "BullMQ",
    setting: `appendfsync ${appendfsync}`,
    queue,
    insert: (_queueName, args) => queue.add("W", args),
    /** The id of the job an `insert` resolved with (`Job.id`, as the processor sees it). */
    idOfInserted: (job) => job.id,
    insertMany: (_queueName, argsList) =>
      queue.addBulk(argsList.map((args) => ({ name: "W", data: args }))),
    /**
     * Runs a Worker with `concurrency` until `shouldStop()` (checked at each
     * completion and every 20 ms). `onStart(args, id)` runs on the
     * processor's first line, `onCompleted(id)` once BullMQ reports it
     * completed. Resolves once the worker is closed.
     */
    process: ({ concurrency, shouldStop, onStart, onCompleted }) =>
      new Promise((resolveProcess, reject) => {
        let closing = false;
        const worker = new Worker(
          queueName,
          async (job) => {
            onStart(job.data, job.id);
          },
          { connection, concurrency, autorun: true },
        );
        const finish = () => {
          if (closing) return;
          closing = true;
          clearInterval(poll);
          worker.close().then(() => resolveProcess(), reject);
        };
        const poll = setInterval(() => {
          if (shouldStop()) finish();
        }, 20);
        worker.on("completed", (job) => {
          onCompleted(job.id);
          if (shouldStop()) finish();
        });
        worker.on("error", (error) => {
          clearInterval(poll);
          reject(error);
        });
      }),
    count: async () => {
      const counts = await queue.getJobCounts(...jobStates);
      return Object.values(counts).reduce((sum, value) => sum + value, 0);
    },
    countIn: async (state) => (await queue.getJobCounts(state))[state] ?? 0,
    /**
     * Compaction for Redis: BGREWRITEAOF, waiting until the rewrite is done.
     * An automatic rewrite (auto-aof-rewrite-percentage) may be running
     * already: that one finishes first, then ours runs on the final data.
     */
    compact: async () => {
      const rewriteIdle = async () => {
        for (;;) {
          const info = await admin.info("persistence");
          if (
            info.includes("aof_rewrite_in_progress:0") &&
            info.includes("aof_rewrite_scheduled:0")
          ) {
            return;
          }
          await new Promise((resolveWait) => setTimeout(resolveWait, 50));
        }
      };
      await rewriteIdle();
      await admin.bgrewriteaof();
      await rewriteIdle();
    },
    bytesOnDisk: () => directoryBytes(directory),
    close: async () => {
      await queue.close();
      admin.disconnect();
    },
  };
};
