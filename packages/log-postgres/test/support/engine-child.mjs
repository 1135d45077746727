/**
 * One engine of EngineRace.test.ts (several engines, one store): it loads
 * the BUILT dist, opens an engine over the PostgreSQL store at URL (no
 * rescue at open: the other engines' executing jobs are theirs), waits for
 * a line on stdin so every engine starts together, then runs ROUNDS rounds
 * of: insert a few jobs, claim some, complete half of what it claimed.
 * Each line it prints follows the durable answer it reports:
 *
 *   inserted JOB_ID        an acknowledged insert
 *   started JOB_ID ATTEMPT a job this engine started
 *   stats JSON             at the end: catch-ups, retries, the log's transactions
 *
 *   node engine-child.mjs URL ROUNDS [WORKERS]
 */
import { Effect } from "effect";

const [url, roundsText = "20", workersText = "4"] = process.argv.slice(2);
if (url === undefined) {
  process.stderr.write("usage: engine-child.mjs URL ROUNDS [WORKERS]\n");
  process.exit(2);
}
const { PgLog } = await import(new URL("../../dist/index.js", import.meta.url).href);
const { Engine, StateProjection } = await import("@tay/shell-node");

await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

const say = (line) => Effect.sync(() => process.stdout.write(`${line}\n`));

const round = (engine, worker) =>
  Effect.gen(function* () {
    const jobs = yield* engine.insertMany(
      Array.from({ length: 3 }, (_, index) => ({
        queue: "race",
        worker: "W",
        args: `${process.pid}/${worker}/${index}`,
      })),
    );
    for (const job of jobs) yield* say(`inserted ${job.jobId}`);
    const claimed = yield* engine.claim("race", 2);
    for (const job of claimed) yield* say(`started ${job.jobId} ${job.attempt}`);
    for (const job of claimed.slice(0, 1)) {
      yield* engine.complete(job.jobId, undefined, { attempt: job.attempt });
    }
  });

const program = Effect.scoped(
  Effect.gen(function* () {
    const recovered = yield* PgLog.open(url, {}, StateProjection.foldProjection);
    const engine = yield* Engine.fromLog(recovered, { timers: false, rescueOnOpen: false });
    const rounds = Number(roundsText);
    yield* Effect.all(
      Array.from({ length: Number(workersText) }, (_, worker) =>
        Effect.repeatN(round(engine, worker), rounds - 1),
      ),
      { concurrency: "unbounded" },
    );
    yield* say(`stats ${JSON.stringify({ ...engine.contention(), ...engine.log.writes() })}`);
  }),
);

Effect.runPromiseExit(program).then((exit) => {
  if (exit._tag === "Failure") {
    process.stderr.write(`${String(exit.cause)}\n`);
    process.exit(1);
  }
});
