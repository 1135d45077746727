/**
 * The child of ProcessKill.test.ts. It loads the BUILT dist (as a user's process
 * would), then waits for a line on stdin before touching the store, so the
 * parent can start it early and let it load while another child runs. Then
 * it opens the engine under `Maximal` and inserts jobs forever from several
 * fibers, printing each job id on its own line only after its insert
 * resolved (so it is durable). The parent SIGKILLs it.
 *
 * A small rotation target makes most kills land near a rotation (create
 * the next segment, seal the previous one), the riskiest moment.
 *
 *   node kill-child.mjs DATA_DIR [FIBERS] [ROTATION_TARGET_BYTES]
 */
import { Effect } from "effect";

const [directory, fibersText = "8", rotationText] = process.argv.slice(2);
if (directory === undefined) {
  process.stderr.write("usage: kill-child.mjs DATA_DIR [FIBERS] [ROTATION_TARGET_BYTES]\n");
  process.exit(2);
}
const { Engine, NodeDisk } = await import(new URL("../../dist/index.js", import.meta.url).href);

await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

// stdout is a pipe: on Linux Node writes to pipes synchronously, so a line is
// in the pipe before the fiber inserts again.
const acknowledge = (jobId) => Effect.sync(() => process.stdout.write(`${jobId}\n`));

const inserter = (engine, fiber) =>
  Effect.forever(
    Effect.flatMap(engine.insert({ queue: "kill", worker: "W", args: `fiber ${fiber}` }), (job) =>
      acknowledge(job.jobId),
    ),
  );

const program = Effect.scoped(
  Effect.gen(function* () {
    const engine = yield* Engine.open(directory, {
      durability: "Maximal",
      ...(rotationText === undefined ? {} : { rotationTargetBytes: Number(rotationText) }),
    });
    const fibers = Number(fibersText);
    yield* Effect.all(
      Array.from({ length: fibers }, (_, fiber) => inserter(engine, fiber)),
      { concurrency: "unbounded" },
    );
  }),
).pipe(Effect.provide(NodeDisk.layer));

Effect.runPromise(program).catch((error) => {
  process.stderr.write(`kill-child failed: ${String(error)}\n`);
  process.exit(1);
});
