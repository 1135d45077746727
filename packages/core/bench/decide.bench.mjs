// The cost of deciding inserts (Decide.insertJobsAfter), per job, for the
// args an application passes: a small map of canonical values, 200 bytes of
// JSON text, a batch of 100 such maps, and a map that is not canonical (its
// keys out of order, a -0 and a bigint inside), which the decider rewrites;
// then the same data as plain objects (an object literal, JSON.parse's
// objects), which the decider turns into maps. Rates are per CPU second
// (the machine is shared); each case runs in rounds and reports the median.
// The plain-object cases are also run paired with their map case (short
// slices alternating in one process, so that the machine's load falls on
// both alike) and report the median ratio of their times against the
// target `plainOverMapMax`. Run after `npx tsc -b packages/core`:
//   node packages/core/bench/decide.bench.mjs
// Prints two tables, then one JSON line. Takes about 40 s.
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

// The same data as `mapArgs`, as an object literal (keys in UTF-8 order already).
const plainArgs = (index) => ({
  account: `acct-${(index * 7919) % 100_000}`,
  amount: (index % 1000) + 0.25,
  currency: "EUR",
  retry: index % 3 === 0,
});

// As JSON.parse gives it from a request body: keys in the body's order, not UTF-8 order.
const parsedArgs = (index) =>
  JSON.parse(
    `{"to": "user${index}@example.com", "template": "welcome", "locale": "en", "attempt": ${index % 5}}`,
  );

const parsedMapArgs = (index) => {
  const parsed = parsedArgs(index);
  return new Map(Object.keys(parsed).map((key) => [key, parsed[key]]));
};

// The same data as `unsortedArgs`, as an object literal.
const unsortedPlainArgs = (index) => ({
  retry: index % 3 === 0,
  currency: "EUR",
  amount: -0,
  account: BigInt(index),
});

/** The most a plain object's insert may cost against the same data as a map (median ratio). */
const plainOverMapMax = 1.3;

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
  ["one job, 4-key plain object args", commands(2_000, 1, plainArgs), 1],
  ["one job, JSON.parse object args", commands(2_000, 1, parsedArgs), 1],
  ["100 jobs, 4-key plain object args", commands(20, 100, plainArgs), 100],
  ["one job, non-canonical plain object", commands(2_000, 1, unsortedPlainArgs), 1],
];

/**
 * The time of deciding `plain` against `map` (the same jobs): both run in
 * alternating slices of a few passes, each round's ratio is its CPU time
 * for `plain` over that for `map`, and the median round is reported.
 */
const pairedRatio = (map, plain) => {
  const passOf = (batch) => () => {
    for (let index = 0; index < batch.length; index++) {
      const decided = Decide.insertJobsAfter(index, batch[index]);
      sink ^= decided._tag === "Right" ? decided.right.length : 0;
    }
  };
  const passes = [passOf(map), passOf(plain)];
  const timeOf = (pass, count) => {
    const started = cpuSeconds();
    for (let time = 0; time < count; time++) pass();
    return cpuSeconds() - started;
  };
  for (const pass of passes) timeOf(pass, 20);
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    const spent = [0, 0];
    // Alternate which goes first, so that neither always runs on a warmer cache.
    for (let slice = 0; slice < 4; slice++) {
      const order = (round + slice) % 2 === 0 ? [0, 1] : [1, 0];
      for (const which of order) spent[which] += timeOf(passes[which], 5);
    }
    ratios.push(spent[1] / spent[0]);
  }
  ratios.sort((left, right) => left - right);
  return ratios[Math.floor(ratios.length / 2)];
};

const pairs = [
  ["4-key object / 4-key map", commands(2_000, 1, mapArgs), commands(2_000, 1, plainArgs)],
  [
    "JSON.parse object / same map",
    commands(2_000, 1, parsedMapArgs),
    commands(2_000, 1, parsedArgs),
  ],
  ["100 jobs: objects / maps", commands(20, 100, mapArgs), commands(20, 100, plainArgs)],
  [
    "non-canonical: object / map",
    commands(2_000, 1, unsortedArgs),
    commands(2_000, 1, unsortedPlainArgs),
  ],
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
const ratios = pairs.map(([name, map, plain]) => ({
  name,
  plainOverMap: Number(pairedRatio(map, plain).toFixed(3)),
}));
console.log(`\n${"paired (plain object over map, median)".padEnd(40)}${"ratio".padStart(8)}`);
for (const { name, plainOverMap } of ratios) {
  console.log(`${name.padEnd(40)}${plainOverMap.toFixed(2).padStart(8)}`);
}
const met = ratios.every(({ plainOverMap }) => plainOverMap <= plainOverMapMax);
console.log(`\ntarget: plain objects <= ${plainOverMapMax}x maps: ${met ? "met" : "MISSED"}`);
console.log(
  JSON.stringify({
    bench: "core.decide",
    node: process.version,
    rows,
    ratios,
    targets: { plainOverMapMax, met },
    sink: sink & 1,
  }),
);
