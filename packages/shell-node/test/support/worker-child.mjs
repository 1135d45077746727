/**
 * The child of WorkerKill.test.ts. It loads the BUILT dist (as a user's
 * process would), then waits for a line on stdin before touching the store,
 * so the parent can start it early and let it load while another child runs.
 * Then it opens the engine under `Maximal` (which rescues the jobs the last
 * child left executing, and prints how many: `rescued N`) and runs a worker
 * with `Worker.start` until the parent SIGKILLs it.
 *
 * Each job's args say how long its handler takes and whether its first
 * attempt fails. The child prints `completed JOB ATTEMPT` only from the
 * worker's Completed event, which is told once the completion is durable (the
 * engine answered the fenced complete, under Maximal): a printed line is an
 * acknowledged completion, and a completion the kill cut off before its line
 * is at most unacknowledged, never lost once printed. It prints `retried JOB
 * ATTEMPT` the same way for a planned failure.
 *
 *   node worker-child.mjs DATA_DIR CONCURRENCY
 */
const [directory, concurrencyText = "8"] = process.argv.slice(2);
if (directory === undefined) {
  process.stderr.write("usage: worker-child.mjs DATA_DIR [CONCURRENCY]\n");
  process.exit(2);
}
const { EnginePromises, Worker } = await import(
  new URL("../../dist/index.js", import.meta.url).href
);

await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

// stdout is a pipe: on Linux Node writes to pipes synchronously, so a line is
// in the pipe before the worker records anything more.
const print = (line) => process.stdout.write(`${line}\n`);

/** The handler's failure of a job's first attempt, when its args ask for one (the parent knows it). */
const plannedFailure = (jobId) => `planned failure of job ${jobId}`;

const opened = await EnginePromises.open(directory, { durability: "Maximal" });
print(`rescued ${opened.report.rescued}`);

await Worker.start(opened, {
  queues: { kill: Number(concurrencyText) },
  backoff: { baseMs: 1, factor: 1, capMs: 1 },
  handlers: {
    Kill: async (job) => {
      if (job.args.failFirst && job.attempt === 1) throw new Error(plannedFailure(job.jobId));
      await new Promise((resolve) => setTimeout(resolve, job.args.ms));
      return `done ${job.jobId}.${job.attempt}`;
    },
  },
  onEvent: (event) => {
    if (event._tag === "Completed") print(`completed ${event.job.jobId} ${event.job.attempt}`);
    if (event._tag === "Retried") print(`retried ${event.job.jobId} ${event.job.attempt}`);
    if (event._tag === "Unrecorded" || event._tag === "Discarded") {
      print(`${event._tag.toLowerCase()} ${event.job.jobId} ${event.job.attempt} ${event.error}`);
    }
  },
});
