// Tay through its public engine, driven from plain promises as a Node
// application would (the engine's promise face), and its jobs run by the
// worker runtime (`Worker.start`), plus what the benchmarks need around
// it: a Disk layer that counts writes and syncs, a count of the Effect
// fibers made, and a builder that writes a long legal history straight
// into the store.
import { Effect, Layer } from "effect";
import { Disk, EnginePromises, Init, NodeDisk, Projection, Worker } from "../../dist/index.js";
// The raw store, not public API: the history builder appends records the
// deciders did not produce (a legal history, written fast).
import * as Store from "../../dist/store/Store.js";
import { directoryBytes } from "./common.mjs";

export const tayDurabilities = ["Maximal", "Segment", "Throughput"];

/** Counters of the counting disk: writes, bytes written, data syncs, directory syncs. */
export const diskCounters = () => ({ writes: 0, bytes: 0, syncs: 0, directorySyncs: 0 });

/** NodeDisk with every file write and sync counted into `counters`. */
export const countingDisk = (counters) => {
  const inner = NodeDisk.make;
  const wrap = (handle) => ({
    ...handle,
    write: (position, bytes) =>
      Effect.tap(handle.write(position, bytes), (written) =>
        Effect.sync(() => {
          counters.writes += 1;
          counters.bytes += written;
          // An O_DSYNC write (Maximal's segments) is a write and a sync in one call.
          if (handle.dataSync) counters.syncs += 1;
        }),
      ),
    sync: () =>
      Effect.tap(
        handle.sync(),
        Effect.sync(() => {
          counters.syncs += 1;
        }),
      ),
  });
  return Layer.succeed(Disk.Disk, {
    ...inner,
    open: (path, mode, options) => Effect.map(inner.open(path, mode, options), wrap),
    // Segments are created with their header in one step; the handle then appends.
    create: (path, bytes) =>
      Effect.map(inner.create(path, bytes), (handle) => {
        counters.writes += 1;
        counters.bytes += bytes.length;
        return wrap(handle);
      }),
    syncDirectory: (path) =>
      Effect.tap(
        inner.syncDirectory(path),
        Effect.sync(() => {
          counters.directorySyncs += 1;
        }),
      ),
  });
};

/**
 * Effect fibers made in this process so far (runtime fibers take their
 * ids from one global counter: effect/Fiber/Id/_fiberCounter). The
 * difference over a case, divided by its jobs, is fibers per job.
 */
export const fibersMade = () =>
  globalThis["effect/GlobalValue"]?.get(Symbol.for("effect/Fiber/Id/_fiberCounter"))?.current ??
  Number.NaN;

/**
 * Runs jobs of `queue` with the worker runtime (`Worker.start` on
 * `opened`, `concurrency` handlers at once) until `shouldStop()`, checked
 * at each completion and every 20 ms, then closes the worker. The handler
 * of worker "W" calls `onStart(args, jobId)` on its first line and returns
 * at once (or, given `work`, once `work()` settles); `onCompleted(jobId)` runs when the worker reports the job
 * completed (its completion durable). Rejects, after the close, if any
 * attempt ended otherwise (failed, stale, unrecorded): a benchmark must not
 * count work that was not done. `workerModule` is another build's `Worker`
 * module, for an A/B of two builds.
 */
export const runWorker = async (
  opened,
  { queue, concurrency, shouldStop, onStart, onCompleted, work, workerModule = Worker },
) => {
  let stop;
  let stopping = false;
  const stopped = new Promise((resolveStop) => {
    stop = () => {
      stopping = true;
      resolveStop();
    };
  });
  const failures = [];
  const worker = await workerModule.start(opened, {
    queues: { [queue]: concurrency },
    handlers: {
      W: async (job) => {
        onStart(job.args, job.jobId);
        if (work !== undefined) await work();
      },
    },
    onEvent: (event) => {
      if (event._tag === "Completed") {
        onCompleted(event.job.jobId);
        if (shouldStop()) stop();
      } else if (stopping && event.error === "interrupted") {
        // A job whose claim was decided as the worker closed is failed, never run (docs/worker.md):
        // the case is over, and it is not counted.
      } else if (event._tag !== "Started") {
        // Halted (the engine refused a claim) names no job.
        failures.push(`${event._tag} job ${event.job?.jobId ?? "-"}: ${event.error ?? ""}`);
      }
    },
  });
  const poll = setInterval(() => {
    if (shouldStop()) stop();
  }, 20);
  await stopped;
  clearInterval(poll);
  const report = await worker.close();
  if (failures.length > 0) {
    throw new Error(
      `the worker runtime ended ${failures.length} attempt(s) otherwise: ${failures[0]}`,
    );
  }
  return report;
};

/** Initializes a store in `directory` (which must be empty or missing). */
export const initTay = (directory, disk = NodeDisk.layer) =>
  Effect.runPromise(Effect.provide(Init.init(directory), disk));

/**
 * Opens the engine on the store in `directory` with `durability`, for as
 * long as the returned driver is not closed. `options` are further engine
 * options (flush policy...). Returns the driver the workloads use: its
 * `process` runs jobs with the worker runtime, and `claim` + `complete`
 * are the raw engine loop a workload drives by hand when `loop` is "raw"
 * (the driver then has no `process`).
 */
export const openTay = async (
  directory,
  durability,
  { disk = NodeDisk.layer, options = {}, loop = "runtime" } = {},
) => {
  const openedAt = performance.now();
  // Opened and driven as a Node application not written with Effect would:
  // the promise face, no fiber per command.
  const promises = await EnginePromises.open(directory, { ...options, durability, disk });
  const openSeconds = (performance.now() - openedAt) / 1000;
  const { engine } = promises;
  const run = (effect) => Effect.runPromise(effect);
  return {
    system: "Tay",
    setting: durability,
    /** The opened engine's promise face itself (and its Effect face as `engine`). */
    promises,
    engine,
    openSeconds,
    report: engine.report,
    insert: (queue, args) => promises.insert({ queue, worker: "W", args }),
    /** The id of the job an `insert` resolved with. */
    idOfInserted: (job) => job.jobId,
    insertMany: (queue, argsList) =>
      promises.insertMany(argsList.map((args) => ({ queue, worker: "W", args }))),
    claim: async (queue) => {
      const [job] = await promises.claim(queue, 1);
      return job === undefined ? undefined : { id: job.jobId, args: job.args };
    },
    complete: (job) => promises.complete(job.id),
    ...(loop === "raw"
      ? {}
      : {
          /** The worker runtime (see `runWorker`) on queue "bench". */
          process: ({ concurrency, shouldStop, onStart, onCompleted }) =>
            runWorker(promises, {
              queue: "bench",
              concurrency,
              shouldStop,
              onStart,
              onCompleted,
            }),
        }),
    /** Jobs in the committed state, whatever their state. */
    count: async () => {
      let total = 0;
      for (const counts of promises.counts().values()) {
        total += Object.values(counts).reduce((sum, value) => sum + value, 0);
      }
      return total;
    },
    countIn: async (state) => {
      let total = 0;
      for (const counts of promises.counts().values()) total += counts[state] ?? 0;
      return total;
    },
    /** Compaction: a new generation holding the state (completed jobs retained for a day). */
    compact: () => promises.compact(24 * 60 * 60 * 1000),
    stats: () => run(engine.log.stats()),
    bytesOnDisk: () => directoryBytes(directory),
    close: () => promises.close(),
  };
};

/**
 * The job counts of the history `queueHistory` writes for `records` and
 * `availableJobs` (what `buildHistoryStore` returns), without writing it:
 * for a kept store that is reused.
 */
export const describeHistoryStore = ({ records, availableJobs }) => {
  const completedJobs = Math.floor((records - availableJobs) / 3);
  const extra = records - availableJobs - completedJobs * 3;
  return { completedJobs, availableJobs: availableJobs + extra };
};

/**
 * The events of a legal queue history of `records` records: jobs inserted
 * in blocks of `block`, then started, then completed (three records per
 * job), the last `availableJobs` jobs only inserted, all of it in the hour
 * before `startedAt`'s default (so a compaction retaining a day keeps every
 * job). Yields arrays of at most `chunkRecords` events, so the caller never
 * holds the whole history; returns the job counts.
 */
export function* queueHistory({
  records,
  availableJobs,
  args,
  block = 1000,
  chunkRecords = 10_000,
  startedAt = Date.now() - 3_600_000 - 3 * records,
}) {
  const { completedJobs, availableJobs: insertedOnly } = describeHistoryStore({
    records,
    availableJobs,
  });
  let chunk = [];
  const push = function* (event) {
    chunk.push(event);
    if (chunk.length >= chunkRecords) {
      yield chunk;
      chunk = [];
    }
  };
  const inserted = (jobId) => ({
    _tag: "JobInserted",
    jobId,
    queue: "bench",
    worker: "W",
    args,
    priority: 0,
    maxAttempts: 20,
    scheduledAt: startedAt + jobId,
    insertedAt: startedAt + jobId,
  });
  let jobId = 0;
  while (jobId < completedJobs) {
    const first = jobId + 1;
    const last = Math.min(completedJobs, jobId + block);
    for (let id = first; id <= last; id++) yield* push(inserted(id));
    for (let id = first; id <= last; id++) {
      yield* push({ _tag: "JobStarted", jobId: id, at: startedAt + id + 1, attempt: 1 });
    }
    for (let id = first; id <= last; id++) {
      yield* push({
        _tag: "JobFinished",
        jobId: id,
        at: startedAt + id + 2,
        outcome: "completed",
        error: null,
      });
    }
    jobId = last;
  }
  for (let index = 0; index < insertedOnly; index++) {
    jobId += 1;
    yield* push(inserted(jobId));
  }
  if (chunk.length > 0) yield chunk;
  return { completedJobs, availableJobs: insertedOnly };
}

/**
 * Writes the history of `queueHistory` into a new store in `directory` with
 * `Throughput` durability and large appends (straight `store.append`, the
 * deciders are not involved), then closes it (which syncs nothing) and syncs
 * nothing else: the caller only reopens it. Returns the jobs it holds.
 */
export const buildHistoryStore = async (directory, history) => {
  await initTay(directory);
  const events = queueHistory(history);
  const write = Effect.gen(function* () {
    const { store } = yield* Store.open(directory, { durability: "Throughput" }, Projection.count);
    let step = events.next();
    while (step.done !== true) {
      yield* store.append(step.value);
      step = events.next();
    }
    yield* store.sync();
    return step.value;
  });
  return Effect.runPromise(Effect.provide(Effect.scoped(write), NodeDisk.layer));
};
