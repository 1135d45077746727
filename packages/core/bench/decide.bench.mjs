// The cost of deciding inserts (Decide.insertJobsAfter), per job, for the
// args an application passes: a small map of canonical values, 200 bytes of
// JSON text, a batch of 100 such maps, and a map that is not canonical (its
// keys out of order, a -0 and a bigint inside), which the decider rewrites.
// Rates are per CPU second (the machine is shared); each case runs in
// rounds and reports the median. Run after `npx tsc -b packages/core`:
//   node packages/core/bench/decide.bench.mjs
// Prints a table, then one JSON line. Keeps itself under 30 s.
import { Commands, Decide } from "../dist/index.js";

const roundMs = Number(process.env.BENCH_ROUND_MS ?? 200);
const rounds = Number(process.env.BENCH_ROUNDS ?? 15);

const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

const now = 1_700_000_000_000;

const mapArgs = (index) =>
  new Map([
    ["account", `acct-${(index * 7919) % 100_000}`],
    ["amount", (index % 1000) + 0.25],
    ["currency", "EUR"],
    ["retry", index % 3 === 0],
  ]);

const textArgs = (index) =>
  JSON.stringify({ to: `user${index}@example.com`, template: "welcome", locale: "en" }).padEnd(
    200,
    " ",
  );

// Keys in insertion order, not UTF-8 order; a -0 and a safe bigint.
const unsortedArgs = (index) =>
  new Map([
    ["retry", index % 3 === 0],
    ["currency", "EUR"],
    ["amount", -0],
    ["account", BigInt(index)],
  ]);

const newJob = (args) => ({ queue: "billing", worker: "Billing.Charge", args });

/** Commands of `jobsPerCommand` jobs each, built before timing. */
const commands = (count, jobsPerCommand, argsOf) =>
  Array.from({ length: count }, (_, index) =>
    Commands.insertJobs({
      now,
      jobs: Array.from({ length: jobsPerCommand }, (_, job) =>
        newJob(argsOf(index * jobsPerCommand + job)),
      ),
    }),
  );

let sink = 0;

/** Jobs decided per CPU second: the median of `rounds` rounds of `roundMs`. */
const measure = (batch, jobsPerCommand) => {
  const pass = () => {
    for (let index = 0; index < batch.length; index++) {
      const decided = Decide.insertJobsAfter(index, batch[index]);
      sink ^= decided._tag === "Right" ? decided.right.length : 0;
    }
  };
  const warmupEnd = performance.now() + 300;
  while (performance.now() < warmupEnd) pass();
  const rates = [];
  for (let round = 0; round < rounds; round++) {
    let passes = 0;
    const started = cpuSeconds();
    const end = performance.now() + roundMs;
    while (performance.now() < end) {
      pass();
      passes++;
    }
    rates.push((passes * batch.length * jobsPerCommand) / (cpuSeconds() - started));
  }
  rates.sort((left, right) => left - right);
  return rates[Math.floor(rates.length / 2)];
};

const cases = [
  ["one job, 4-key map args", commands(2_000, 1, mapArgs), 1],
  ["one job, 200 B text args", commands(2_000, 1, textArgs), 1],
  ["100 jobs, 4-key map args", commands(20, 100, mapArgs), 100],
  ["one job, non-canonical map args", commands(2_000, 1, unsortedArgs), 1],
];

const rows = cases.map(([name, batch, jobsPerCommand]) => {
  const jobsPerSecond = measure(batch, jobsPerCommand);
  return {
    name,
    jobsPerSecond: Math.round(jobsPerSecond),
    nsPerJob: Math.round(1e9 / jobsPerSecond),
  };
});

console.log(
  `decide benchmark (node ${process.version}, ${rounds} rounds of ${roundMs} ms per case, median, per CPU second)\n`,
);
console.log(`${"case".padEnd(36)}${"jobs/s".padStart(14)}${"ns/job".padStart(10)}`);
for (const row of rows) {
  console.log(
    `${row.name.padEnd(36)}${row.jobsPerSecond.toLocaleString("en-US").padStart(14)}${String(row.nsPerJob).padStart(10)}`,
  );
}
console.log(JSON.stringify({ bench: "core.decide", node: process.version, rows, sink: sink & 1 }));
