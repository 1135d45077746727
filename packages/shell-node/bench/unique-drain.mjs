#!/usr/bin/env node
/**
 * The unique insert's cost in the engine's decider alone, without a disk:
 * `BatchDecider` over a log that keeps nothing and settles each append
 * once the drain's late fold has run, fed drains of 256 one-job inserts
 * built by the engine's own `commands.insert`, as 256 producers would.
 * Plain inserts beside keyed ones (keys in no order, every tenth repeating
 * the one before: 10% duplicates, as v3.bench.mjs), alternating round by
 * round. The keys are made before the clock starts: what an application
 * pays to build its key is not Tay's (in v3.bench.mjs the keys are built
 * inside the measured loop, ~0.3-0.6 µs an insert on this machine).
 *
 * Reports per insert the CPU time (`process.cpuUsage`) and the bytes
 * allocated on the V8 heap (`v8.GCProfiler`, as v3.bench.mjs counts them),
 * medians of the rounds, and keyed minus plain. Without a disk's threads
 * and waits the figures move far less with the machine's load than
 * v3.bench.mjs's; bytes hardly at all.
 *
 *   npx tsc -b packages/core packages/codec packages/client packages/shell-node
 *   node --expose-gc packages/shell-node/bench/unique-drain.mjs
 *
 * BENCH_DRAINS (300) drains per case, BENCH_ROUNDS (5); ROOT runs another
 * build (its packages/*\/dist) for A/B runs. Prints a table, then one JSON line.
 */
import { resolve } from "node:path";
import { allocationCounter, makeArgs, median, printTable } from "./lib/common.mjs";

const root = process.env.ROOT ?? resolve(new URL(".", import.meta.url).pathname, "../../..");
const dist = `${root}/packages/shell-node/dist`;
const { State } = await import(`${root}/packages/core/dist/index.js`);
const { UniqueIndex } = await import(`${root}/packages/core/dist/internal/UniqueIndex.js`);
const { BatchDecider } = await import(`${dist}/engine/internal/batchDecider.js`);
const { PromiseRequest } = await import(`${dist}/engine/internal/engineRequest.js`);
const { commands } = await import(`${dist}/engine/internal/operations.js`);
const Ticket = await import(`${dist}/log/Ticket.js`);

const drains = Number(process.env.BENCH_DRAINS ?? 300);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const width = 256;
const args = makeArgs();

// A state of its own per case: `State.initialState`'s unique index is one
// value shared by every fold from it, so a second case would first undo
// the first one's keys.
const freshState = () => ({
  ...State.initialState,
  indexes: { ...State.initialState.indexes, unique: UniqueIndex.empty() },
});

const keys = Array.from(
  { length: drains * width },
  (_, index) => `key-${(Math.imul(index, 0x9e3779b1) >>> 0).toString(16)}`,
);
const variants = {
  plain: () => ({ queue: "bench", worker: "W", args }),
  keyed: (index) => ({
    queue: "bench",
    worker: "W",
    args,
    uniqueKey: keys[index % 10 === 9 ? index - 1 : index],
  }),
};

/** A log that keeps nothing: each append's ticket settles when `settle` is called. */
const nullLog = () => {
  let last = 0;
  let ticket;
  return {
    log: {
      view: undefined,
      lastSequence: () => last,
      admission: () => ({ _tag: "Open" }),
      overBudget: () => undefined,
      append: (batch) => {
        last += batch.records.length;
        ticket = Ticket.make(last);
        return ticket;
      },
    },
    settle: () => Ticket.settle(ticket, undefined),
  };
};

/** `count` drains of `width` inserts of `variant` on a fresh decider: CPU µs and bytes per insert. */
const insertCase = async (variant, count) => {
  const { log, settle } = nullLog();
  let at = 1_700_000_000_000;
  const decider = new BatchDecider(log, freshState(), 0, () => at);
  const job = variants[variant];
  let next = 0;
  const answered = () => {};
  const failed = (reason) => {
    throw reason;
  };
  const allocated = allocationCounter();
  const cpu = process.cpuUsage();
  for (let drain = 0; drain < count; drain++) {
    const requests = new Array(width);
    for (let index = 0; index < width; index++) {
      const issue = commands.insert(at, job(next++));
      requests[index] = new PromiseRequest(
        issue.command,
        issue.answerOf,
        undefined,
        answered,
        failed,
      );
    }
    decider.decide(requests);
    // The late fold runs in a microtask queued by `decide`.
    await null;
    settle();
    at += 1;
  }
  const { user, system } = process.cpuUsage(cpu);
  return { cpuMicros: (user + system) / next, bytes: allocated().bytes / next };
};

// Unmeasured: the first cases would otherwise pay for compiling the engine.
for (const variant of Object.keys(variants)) await insertCase(variant, 50);
const measured = { plain: [], keyed: [] };
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? ["plain", "keyed"] : ["keyed", "plain"];
  for (const variant of order) {
    globalThis.gc?.();
    measured[variant].push(await insertCase(variant, drains));
  }
}
const figure = (variant, field) => median(measured[variant].map((each) => each[field]));
const extra = (field) =>
  median(measured.keyed.map((each, round) => each[field] - measured.plain[round][field]));
const results = {
  benchmark: "unique-drain",
  root,
  drains,
  rounds,
  cpuMicrosPerInsert: { plain: figure("plain", "cpuMicros"), keyed: figure("keyed", "cpuMicros") },
  bytesPerInsert: { plain: figure("plain", "bytes"), keyed: figure("keyed", "bytes") },
  keyedExtra: { cpuMicros: extra("cpuMicros"), bytes: extra("bytes") },
};
console.log(
  `\nThe decider alone, ${drains} drains of ${width} inserts, ${rounds} rounds (medians)`,
);
printTable([
  ["per insert", "plain", "keyed", "keyed - plain (median of rounds)"],
  [
    "CPU µs",
    results.cpuMicrosPerInsert.plain.toFixed(2),
    results.cpuMicrosPerInsert.keyed.toFixed(2),
    results.keyedExtra.cpuMicros.toFixed(2),
  ],
  [
    "bytes allocated",
    results.bytesPerInsert.plain.toFixed(0),
    results.bytesPerInsert.keyed.toFixed(0),
    results.keyedExtra.bytes.toFixed(0),
  ],
]);
console.log(`\n${JSON.stringify(results)}`);
