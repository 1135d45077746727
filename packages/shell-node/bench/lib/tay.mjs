// Tay through its public engine, driven from plain promises as a Node
// application would (the engine's promise face), plus what the
// benchmarks need around it: a Disk layer that counts writes and syncs, and
// a builder that writes a long legal history straight into the store.
import { Effect, Layer } from "effect";
import { Disk, EnginePromises, Init, NodeDisk, Projection } from "../../dist/index.js";
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

/** Initializes a store in `directory` (which must be empty or missing). */
export const initTay = (directory, disk = NodeDisk.layer) =>
  Effect.runPromise(Effect.provide(Init.init(directory), disk));

/**
 * Opens the engine on the store in `directory` with `durability`, for as
 * long as the returned driver is not closed. `options` are further engine
 * options (flush policy...). Returns the driver the workloads use.
 */
export const openTay = async (
  directory,
  durability,
  { disk = NodeDisk.layer, options = {} } = {},
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
    engine,
    openSeconds,
    report: engine.report,
    insert: (queue, args) => promises.insert({ queue, worker: "W", args }),
    insertMany: (queue, argsList) =>
      promises.insertMany(argsList.map((args) => ({ queue, worker: "W", args }))),
    claim: async (queue) => {
      const [job] = await promises.claim(queue, 1);
      return job === undefined ? undefined : { id: job.jobId, args: job.args };
    },
    complete: (job) => promises.complete(job.id),
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
