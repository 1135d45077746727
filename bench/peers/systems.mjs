// The systems compared, each at the durability settings measured, behind
// one driver shape: insert, insertMany, claim + complete (or a BullMQ
// Worker), count, compact, bytesOnDisk, restart (the process that holds the
// data stops and starts again on the same data) and shutdown.
import { openSqlite } from "../../packages/shell-node/bench/lib/sqlite.mjs";
import { initTay, openTay } from "../../packages/shell-node/bench/lib/tay.mjs";
import { openBullmq } from "./bullmq.mjs";
import { freePort, startRedis } from "./redis.mjs";

/**
 * Durability classes, so that every figure stands beside its promise:
 * `sync`: an acknowledged job survives power loss (fsync before the ack);
 * `window`: it survives a process crash, a power loss may take the last
 * acknowledged jobs (how many differs: see `promise`);
 * `none`: nothing is ever synced by the workload.
 */
export const settings = [
  {
    id: "tay-maximal",
    system: "Tay",
    setting: "Maximal",
    durabilityClass: "sync",
    promise: "fdatasync of each batch before its acks (group commit)",
  },
  {
    id: "tay-segment",
    system: "Tay",
    setting: "Segment",
    durabilityClass: "window",
    promise: "written before the ack; synced when a 64 MiB segment is sealed and at close",
  },
  {
    id: "tay-throughput",
    system: "Tay",
    setting: "Throughput",
    durabilityClass: "none",
    promise: "written before the ack; never synced",
  },
  {
    id: "sqlite-full",
    system: "SQLite",
    setting: "WAL, synchronous=FULL",
    durabilityClass: "sync",
    promise: "WAL fsync at every commit",
  },
  {
    id: "sqlite-normal",
    system: "SQLite",
    setting: "WAL, synchronous=NORMAL",
    durabilityClass: "window",
    promise: "WAL written at commit, synced at checkpoints (every ~1000 pages)",
  },
  {
    id: "bullmq-always",
    system: "BullMQ",
    setting: "appendfsync always",
    durabilityClass: "sync",
    promise: "AOF fsync before replies (per event-loop iteration)",
  },
  {
    id: "bullmq-everysec",
    system: "BullMQ",
    setting: "appendfsync everysec",
    durabilityClass: "window",
    promise: "AOF written before replies, fsynced once a second",
  },
];

/**
 * The raw engine loop at a Tay setting: the same engine and durability,
 * its jobs run by the workload's own lanes (claim + complete, or poll when
 * nothing is available) instead of the worker runtime. Measured beside the
 * runtime, at the same concurrency, as its baseline.
 */
export const rawLoopOf = (setting) => ({
  ...setting,
  id: `${setting.id}-loop`,
  setting: `${setting.setting}, raw engine loop`,
  durability: setting.setting,
  loop: "raw",
  runtimeId: setting.id,
});

/** The Tay setting of the same durability class (for "Tay ÷ this" at equal promises). */
export const taySettingFor = (durabilityClass) =>
  ({ sync: "tay-maximal", window: "tay-segment", none: "tay-throughput" })[durabilityClass];

const tayDriver = async (directory, durability, fresh, loop) => {
  if (fresh) await initTay(directory);
  const tay = await openTay(directory, durability, { loop });
  return {
    ...tay,
    restart: async () => {
      await tay.close();
      return tayDriver(directory, durability, false, loop);
    },
    shutdown: () => tay.close(),
    bytesWritten: async () => (await tay.stats()).bytes,
  };
};

const sqliteDriver = (directory, synchronous) => {
  const sqlite = openSqlite(directory, synchronous);
  return {
    ...sqlite,
    restart: async () => {
      await sqlite.close();
      return sqliteDriver(directory, synchronous);
    },
    shutdown: () => sqlite.close(),
  };
};

const bullmqDriver = async (directory, appendfsync, redisPath, port) => {
  const redis = await startRedis({ path: redisPath, port, directory, appendfsync });
  const bullmq = await openBullmq({ port, directory, appendfsync, queueName: "bench" });
  return {
    ...bullmq,
    redis,
    readySeconds: redis.readySeconds,
    /** SIGKILL of redis-server (a crash), then a start on the same AOF. */
    restart: async () => {
      await bullmq.close();
      await redis.kill();
      return bullmqDriver(directory, appendfsync, redisPath, port);
    },
    shutdown: async () => {
      await bullmq.close();
      await redis.stop();
    },
  };
};

/**
 * Starts `setting` on the empty directory `directory` (fresh data) and
 * returns its driver. `redisPath` is needed for BullMQ. A Tay setting runs
 * jobs with the worker runtime, or with the raw loop for `rawLoopOf` one.
 */
export const startSystem = async (setting, directory, { redisPath } = {}) => {
  switch (setting.system) {
    case "Tay":
      return tayDriver(
        directory,
        setting.durability ?? setting.setting,
        true,
        setting.loop ?? "runtime",
      );
    case "SQLite":
      return sqliteDriver(directory, setting.id === "sqlite-full" ? "FULL" : "NORMAL");
    case "BullMQ":
      return bullmqDriver(
        directory,
        setting.id === "bullmq-always" ? "always" : "everysec",
        redisPath,
        await freePort(),
      );
    default:
      throw new Error(`unknown system ${setting.system}`);
  }
};
