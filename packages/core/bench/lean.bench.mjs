// Memory and per-completion cost of a lean state (docs/core.md, "Memory
// bounded by active jobs"): (1) a generation fold of N jobs, each inserted
// with 200-byte args, started and completed, streamed into the builder (no
// records kept), the builder dropped: the heap plus the typed-array pages
// (process.memoryUsage().arrayBuffers) after two GCs, less the same before,
// divided by N; target at most 64 bytes a terminal job; and the fold's CPU
// time (3N records, args generated on the way). (2) On a lean state
// of N facts and 10,000 executing jobs: the time of one completion through
// `Evolve.evolveAll` on the previous state (a copy per completion, as a
// reader-visible state is published), and through one `Evolve.batch` (the
// engine's path: a run's own nodes and pages written in place): CPU time,
// the median of 5 rounds of 10,000 completions each, after a warm-up round.
//
//   npx tsc -b packages/core
//   node --expose-gc packages/core/bench/lean.bench.mjs [N ...]
//
// TAY_CORE_DIST=path/to/dist runs it against another build of core (an A/B).
// Prints a table, then one JSON line.
import { Evolve, Generation, State } from "../dist/index.js";

const core =
  process.env.TAY_CORE_DIST === undefined
    ? { Evolve, Generation, State }
    : await import(`${process.env.TAY_CORE_DIST}/index.js`);
const sizes = process.argv.slice(2).map(Number);
const jobCounts = sizes.length > 0 ? sizes : [200_000, 1_000_000];
const executingJobs = 10_000;
const targetBytesPerTerminalJob = 64;
const queues = ["default", "mail", "reports", "media"];

const collect = () => {
  globalThis.gc?.();
  globalThis.gc?.();
};
const held = () => {
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, arrayBuffers: usage.arrayBuffers };
};

const argsOf = (jobId) => `${jobId}:`.padEnd(200, "x");

/** Folds `completed` finished jobs then `executing` started ones; the builder is dropped. */
const leanState = (completed, executing) => {
  const builder = core.Generation.start(0, { lean: true });
  const apply = (event) => {
    const result = core.Generation.apply(builder, undefined, event);
    if (result._tag === "Left") throw new Error(JSON.stringify(result.left));
  };
  const at = 1_700_000_000_000;
  const insert = (jobId) =>
    apply({
      _tag: "JobInserted",
      jobId,
      queue: queues[jobId % queues.length],
      worker: "SendEmail",
      args: argsOf(jobId),
      priority: 0,
      maxAttempts: 3,
      scheduledAt: at,
      insertedAt: at,
    });
  for (let jobId = 1; jobId <= completed; jobId++) {
    insert(jobId);
    apply({ _tag: "JobStarted", jobId, at: at + 1, attempt: 1 });
    apply({ _tag: "JobFinished", jobId, at: at + 2, outcome: "completed", error: null });
  }
  for (let jobId = completed + 1; jobId <= completed + executing; jobId++) {
    insert(jobId);
    apply({ _tag: "JobStarted", jobId, at: at + 1, attempt: 1 });
  }
  const finished = core.Generation.finish(builder);
  if (finished._tag === "Left") throw new Error(JSON.stringify(finished.left));
  return finished.right;
};

const memoryCase = (jobs) => {
  collect();
  const before = held();
  const cpu = process.cpuUsage();
  const state = leanState(jobs, 0);
  const used = process.cpuUsage(cpu);
  collect();
  const after = held();
  const heapBytes = after.heap - before.heap;
  const pageBytes = after.arrayBuffers - before.arrayBuffers;
  const perJob = (heapBytes + pageBytes) / jobs;
  if (core.State.jobCount(state) !== jobs) throw new Error("the fold lost jobs");
  const foldCpuSeconds = (used.user + used.system) / 1e6;
  return { jobs, heapBytes, pageBytes, bytesPerTerminalJob: perJob, foldCpuSeconds };
};

const rounds = 5;
const median = (values) => [...values].sort((left, right) => left - right)[values.length >> 1];

const finishEvent = (jobId) => ({
  _tag: "JobFinished",
  jobId,
  at: 1_700_000_000_100,
  outcome: "completed",
  error: null,
});

const completionCase = (facts) => {
  const state = leanState(facts, executingJobs);
  const ids = Array.from({ length: executingJobs }, (_, index) => facts + 1 + index);
  const timed = (run) => {
    collect();
    // CPU time, not wall time: the machine is shared, and a wall clock
    // counts the time other processes held the core.
    const started = process.cpuUsage();
    const last = run();
    const used = process.cpuUsage(started);
    const ns = ((used.user + used.system) * 1000) / ids.length;
    if (last.terminal.size !== facts + executingJobs) throw new Error("a completion was lost");
    return ns;
  };
  const evolve = () => {
    let current = state;
    for (const jobId of ids) {
      const next = core.Evolve.evolveAll(current, [finishEvent(jobId)]);
      if (next._tag === "Left") throw new Error(JSON.stringify(next.left));
      current = next.right;
    }
    return current;
  };
  const batch = () => {
    const run = core.Evolve.batch(state);
    let current = state;
    for (const jobId of ids) {
      const next = run.evolveAll([finishEvent(jobId)]);
      if (next._tag === "Left") throw new Error(JSON.stringify(next.left));
      current = next.right;
    }
    return current;
  };
  // A warm-up round, then rounds alternating the two paths: the median of each.
  timed(evolve);
  timed(batch);
  const evolveNs = [];
  const batchNs = [];
  for (let round = 0; round < rounds; round++) {
    evolveNs.push(timed(evolve));
    batchNs.push(timed(batch));
  }
  return {
    facts,
    evolveNsPerCompletion: median(evolveNs),
    batchNsPerCompletion: median(batchNs),
  };
};

const memory = jobCounts.map(memoryCase);
const completions = jobCounts.map(completionCase);
const pad = (text, width) => String(text).padStart(width);
console.log(
  `${pad("jobs", 10)} ${pad("heap B", 12)} ${pad("pages B", 10)} ${pad("B/job", 7)} ${pad("target", 10)} ${pad("fold CPU s", 10)}`,
);
for (const row of memory) {
  const met = row.bytesPerTerminalJob <= targetBytesPerTerminalJob ? "met" : "MISSED";
  console.log(
    `${pad(row.jobs, 10)} ${pad(row.heapBytes, 12)} ${pad(row.pageBytes, 10)} ${pad(row.bytesPerTerminalJob.toFixed(1), 7)} ${pad(`${met} <=${targetBytesPerTerminalJob}`, 10)} ${pad(row.foldCpuSeconds.toFixed(2), 10)}`,
  );
}
console.log(
  `${pad("facts", 10)} ${pad("evolve CPU ns/completion", 26)} ${pad("batch CPU ns/completion", 26)}`,
);
for (const row of completions) {
  console.log(
    `${pad(row.facts, 10)} ${pad(row.evolveNsPerCompletion.toFixed(0), 26)} ${pad(row.batchNsPerCompletion.toFixed(0), 26)}`,
  );
}
console.log(JSON.stringify({ bench: "core-lean", memory, completions }));
