/**
 * One engine of EngineRace.test.ts (several engines, one store): it loads
 * the BUILT dist, opens an engine over the PostgreSQL store at URL (no
 * rescue at open: the other engines' executing jobs are theirs), waits for
 * a line on stdin so every engine starts together, then runs ROUNDS rounds
 * of: insert a few jobs, claim some, complete half of what it claimed.
 * Each line it prints follows the durable answer it reports:
 *
 *   loaded                 its modules are loaded (it waits for `go` on stdin)
 *   conflicts N            after a round, when the engine's count of conflicts grew to N
 *   at WORKER ROUND STEP   a worker issues STEP (insert, claim, complete) of a round
 *   inserted JOB_ID        an acknowledged insert
 *   started JOB_ID ATTEMPT a job this engine started
 *   stats JSON             at the end: catch-ups, retries, the log's transactions
 *   closed                 the engine and its log closed (the process should exit now)
 *   waiting JSON           on SIGUSR2, or 5 s after `closed` if the process is still
 *                          alive: each worker's last step, the engine's counters and
 *                          the log's queue, and what keeps the process alive
 *
 * The progress lines let EngineRace.test.ts say, when a race outlives its
 * deadline, what each stuck engine was waiting on.
 *
 * With MAX_ROUNDS, each worker goes on past ROUNDS until `stop` comes on
 * stdin or it has run MAX_ROUNDS rounds: the race's parent says `stop` once
 * some engine reported a conflict, so the race is real however quick the
 * server's transactions are (one round trip each: three engines on a quiet
 * machine can otherwise finish ROUNDS without ever meeting).
 *
 *   node engine-child.mjs URL ROUNDS [WORKERS] [MAX_ROUNDS]
 */
const [url, roundsText = "20", workersText = "4", maxRoundsText] = process.argv.slice(2);
if (url === undefined) {
  process.stderr.write("usage: engine-child.mjs URL ROUNDS [WORKERS] [MAX_ROUNDS]\n");
  process.exit(2);
}
// Each worker's last step, and the engine once opened: what `waiting` reports.
const steps = new Map();
let opened;
/** What this process waits on now: printed on SIGUSR2 and when it outlives its close. */
const waiting = (why) => {
  const report = { why, steps: Object.fromEntries(steps) };
  try {
    if (opened !== undefined) {
      report.contention = opened.contention();
      report.writes = opened.log.writes();
      report.log = Effect.runSync(opened.log.stats());
    }
  } catch (error) {
    report.error = String(error);
  }
  report.resources = process.getActiveResourcesInfo();
  process.stdout.write(`waiting ${JSON.stringify(report)}\n`);
};
// Before anything is loaded: without a listener SIGUSR2 would end the process.
process.on("SIGUSR2", () => waiting("SIGUSR2"));

const { Effect } = await import("effect");
const { PgLog } = await import(new URL("../../dist/index.js", import.meta.url).href);
const { Engine, StateProjection } = await import("@tay/shell-node");

process.stdout.write("loaded\n");
// `go` starts the rounds; `stop` (or the end of stdin) ends the rounds past ROUNDS.
let stopped = false;
let heard = "";
await new Promise((resolve) => {
  process.stdin.on("data", (chunk) => {
    heard += chunk.toString();
    if (/^go$/m.test(heard)) resolve();
    if (/^stop$/m.test(heard)) stopped = true;
  });
  process.stdin.on("end", () => {
    stopped = true;
    resolve();
  });
});

const say = (line) => Effect.sync(() => process.stdout.write(`${line}\n`));
const step = (worker, index, name) =>
  Effect.zipRight(
    Effect.sync(() => steps.set(worker, `${index} ${name}`)),
    say(`at ${worker} ${index} ${name}`),
  );

const round = (engine, worker, index) =>
  Effect.gen(function* () {
    yield* step(worker, index, "insert");
    const jobs = yield* engine.insertMany(
      Array.from({ length: 3 }, (_, index) => ({
        queue: "race",
        worker: "W",
        args: `${process.pid}/${worker}/${index}`,
      })),
    );
    for (const job of jobs) yield* say(`inserted ${job.jobId}`);
    yield* step(worker, index, "claim");
    const claimed = yield* engine.claim("race", 2);
    for (const job of claimed) yield* say(`started ${job.jobId} ${job.attempt}`);
    for (const job of claimed.slice(0, 1)) {
      yield* step(worker, index, "complete");
      yield* engine.complete(job.jobId, undefined, { attempt: job.attempt });
    }
    yield* Effect.sync(() => steps.set(worker, `${index} done`));
  });

const program = Effect.scoped(
  Effect.gen(function* () {
    const recovered = yield* PgLog.open(url, {}, StateProjection.foldProjection);
    const engine = yield* Engine.fromLog(recovered, { timers: false, rescueOnOpen: false });
    opened = engine;
    const rounds = Number(roundsText);
    const maxRounds = maxRoundsText === undefined ? rounds : Number(maxRoundsText);
    let reported = 0;
    // After each round: a grown count of conflicts is reported to the parent.
    const report = Effect.suspend(() => {
      const { conflicts } = engine.contention();
      if (conflicts <= reported) return Effect.void;
      reported = conflicts;
      return say(`conflicts ${conflicts}`);
    });
    const worker = (worker) =>
      Effect.iterate(0, {
        while: (index) => index < rounds || (index < maxRounds && !stopped),
        body: (index) =>
          Effect.as(Effect.zipRight(round(engine, worker, index), report), index + 1),
      });
    yield* Effect.all(
      Array.from({ length: Number(workersText) }, (_, index) => worker(index)),
      { concurrency: "unbounded" },
    );
    yield* say(`stats ${JSON.stringify({ ...engine.contention(), ...engine.log.writes() })}`);
  }),
);

Effect.runPromiseExit(program).then((exit) => {
  // Its listeners would otherwise keep the process alive if the parent never ends stdin.
  process.stdin.destroy();
  if (exit._tag === "Failure") {
    process.stderr.write(`${String(exit.cause)}\n`);
    process.exit(1);
  }
  process.stdout.write("closed\n");
  // Unreferenced: it fires only if something else keeps the process alive after the close.
  setTimeout(() => waiting("alive 5 s after closed"), 5000).unref();
});
