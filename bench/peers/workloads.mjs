// The five workloads of the comparison, written once against the driver
// shape of systems.mjs. Each case runs up to a number of jobs or a number of
// seconds, whichever comes first, and reports what was acknowledged.
import { makeArgs, now, percentile, sleep } from "../../packages/shell-node/bench/lib/common.mjs";

const queue = "bench";
const args = makeArgs();

/** Jobs/s and latency percentiles (ms) of a finished case. */
const summarize = ({ jobs, seconds, latencies }) => {
  const sorted = latencies.sort((left, right) => left - right);
  return {
    jobs,
    seconds,
    jobsPerSecond: jobs / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
  };
};

/**
 * Workload 1, one shape: `producers` lanes each awaiting its insert (or, when
 * `bulk` is set, one lane inserting `bulk` jobs per call) until `jobs` are
 * acknowledged or `seconds` have passed. Latency: per call, ack included.
 */
export const enqueue = async (driver, { producers, bulk, jobs, seconds }) => {
  const latencies = [];
  let issued = 0;
  let acknowledged = 0;
  const started = now();
  const deadline = started + seconds * 1000;
  const batch = bulk === undefined ? undefined : Array.from({ length: bulk }, () => args);
  const lane = async () => {
    while (issued < jobs && now() < deadline) {
      const count = batch === undefined ? 1 : Math.min(batch.length, jobs - issued);
      issued += count;
      const callStarted = now();
      if (batch === undefined) await driver.insert(queue, args);
      else await driver.insertMany(queue, batch.slice(0, count));
      latencies.push(now() - callStarted);
      acknowledged += count;
    }
  };
  await Promise.all(Array.from({ length: bulk === undefined ? producers : 1 }, lane));
  return summarize({ jobs: acknowledged, seconds: (now() - started) / 1000, latencies });
};

/** Inserts `jobs` jobs in calls of `bulk` (setup, not measured). */
export const prefill = async (driver, jobs, bulk = 1000, makeJobArgs = () => args) => {
  for (let done = 0; done < jobs; done += bulk) {
    const count = Math.min(bulk, jobs - done);
    await driver.insertMany(
      queue,
      Array.from({ length: count }, () => makeJobArgs()),
    );
  }
};

/**
 * Runs workers until `shouldStop()`: the driver's own worker when it has
 * one (BullMQ's Worker, Tay's worker runtime), or else the raw loop:
 * `concurrency` lanes each claiming one job and completing it (an empty
 * claim waits `idleMs` and tries again, as a polling worker does).
 * `onStart(args, id)` runs as a job starts (a handler's first line),
 * `onCompleted(id)` once its completion is acknowledged.
 */
const work = async (driver, { concurrency, shouldStop, onStart, onCompleted, idleMs = 1 }) => {
  if (driver.process !== undefined) {
    await driver.process({ concurrency, shouldStop, onStart, onCompleted });
    return;
  }
  const lane = async () => {
    while (!shouldStop()) {
      const job = await driver.claim(queue);
      if (job === undefined) {
        await sleep(idleMs);
        continue;
      }
      onStart(job.args, job.id);
      await driver.complete(job);
      onCompleted(job.id);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
};

/**
 * Workload 2: `jobs` jobs enqueued first (not measured), then processed
 * (claim + complete, no work in between) by `concurrency` in-process
 * workers until all are done or `seconds` have passed. Latency: claim
 * returned (or processor entered) to completion acknowledged. With
 * `warmUpJobs`, that many more are enqueued and processed first by the same
 * workers, untimed (the code paths run warm, as in a long-lived process).
 */
export const processJobs = async (driver, { concurrency, jobs, seconds, warmUpJobs = 0 }) => {
  await prefill(driver, jobs + warmUpJobs);
  // Workers stopping may finish a few more than asked: the timed part runs what is left.
  const left =
    warmUpJobs > 0
      ? jobs + warmUpJobs - (await warmUp(driver, concurrency, warmUpJobs, seconds))
      : jobs;
  const latencies = [];
  const startedAt = new Map();
  let completed = 0;
  let finishedAt;
  const started = now();
  const deadline = started + seconds * 1000;
  const shouldStop = () => {
    if (finishedAt === undefined && (completed >= left || now() >= deadline)) finishedAt = now();
    return finishedAt !== undefined;
  };
  await work(driver, {
    concurrency,
    shouldStop,
    onStart: (_args, id) => startedAt.set(id, now()),
    onCompleted: (id) => {
      if (finishedAt !== undefined) return;
      completed += 1;
      const at = startedAt.get(id);
      if (at !== undefined) latencies.push(now() - at);
      startedAt.delete(id);
    },
  });
  return summarize({
    jobs: completed,
    seconds: ((finishedAt ?? now()) - started) / 1000,
    latencies,
  });
};

/** Processes `jobs` of the queue untimed (or for at most `seconds`); answers how many completed. */
const warmUp = async (driver, concurrency, jobs, seconds) => {
  let completed = 0;
  const deadline = now() + seconds * 1000;
  await work(driver, {
    concurrency,
    shouldStop: () => completed >= jobs || now() >= deadline,
    onStart: () => {},
    onCompleted: () => {
      completed += 1;
    },
  });
  return completed;
};

/**
 * Workload 3: `producers` lanes inserting at `ratePerSecond` in all (each
 * paced to its share, never faster than its acks) while `concurrency`
 * workers run the jobs, for `seconds`. Latency: from a timestamp taken
 * just before the insert is called to one taken on the first line of the
 * handler (`onStart`), matched by job id (the insert's answer gives the
 * id; the handler may start before the producer sees that answer).
 * Reports inserted and completed per second and the backlog left.
 */
export const mixed = async (driver, { producers, concurrency, ratePerSecond, seconds }) => {
  const sentAt = new Map();
  const startedAt = new Map();
  let inserted = 0;
  let completed = 0;
  let stopped = false;
  const started = now();
  const deadline = started + seconds * 1000;
  const interval = (1000 * producers) / ratePerSecond;
  const producer = async (lane) => {
    let next = started + (lane * interval) / producers;
    while (now() < deadline) {
      const wait = next - now();
      if (wait > 0) await sleep(wait);
      if (now() >= deadline) break;
      next += interval;
      const sent = now();
      const answer = await driver.insert(queue, makeArgs(sent));
      sentAt.set(driver.idOfInserted(answer), sent);
      inserted += 1;
    }
  };
  const producing = Promise.all(Array.from({ length: producers }, (_, lane) => producer(lane)));
  const working = work(driver, {
    concurrency,
    shouldStop: () => stopped,
    onStart: (_args, id) => {
      if (!stopped) startedAt.set(id, now());
    },
    onCompleted: () => {
      if (!stopped) completed += 1;
    },
  });
  await producing;
  stopped = true;
  const elapsed = (now() - started) / 1000;
  await working;
  const latencies = [];
  for (const [id, at] of startedAt) {
    const sent = sentAt.get(id);
    if (sent !== undefined) latencies.push(at - sent);
  }
  const sorted = latencies.sort((left, right) => left - right);
  return {
    jobs: completed,
    seconds: elapsed,
    jobsPerSecond: completed / elapsed,
    insertedPerSecond: inserted / elapsed,
    backlog: inserted - completed,
    matched: latencies.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
  };
};
