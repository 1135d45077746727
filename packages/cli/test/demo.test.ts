// The demo's program in this process: a store that fails mid-run stops the demo at once with the
// store's own error line (not at the end of --duration), and closing its worker leaves no job
// executing even when a claim was decided as the close began. The first runs `Cli.run` over a
// fault disk that starts failing writes once the jobs are inserted; the second opens a real store
// and closes a worker while a claim it parked is being started.
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { Query } from "@tay/core";
import { Engine, NodeDisk, Worker } from "@tay/shell-node";
import { FaultDisk } from "@tay/shell-node/testing";
import { Effect, Layer } from "effect";
import * as Cli from "../src/Cli.js";
import { demoQueue, demoWorker } from "../src/demo.js";

/** `Cli.run(argv)` over `disk`, calling `onOut` with all of stdout so far after each write. */
const runOn = (
  disk: FaultDisk.FaultDisk,
  argv: ReadonlyArray<string>,
  onOut: (stdout: string) => void,
) => {
  let stdout = "";
  let stderr = "";
  const terminal: Cli.TerminalService = {
    out: (text) =>
      Effect.sync(() => {
        stdout += text;
        onOut(stdout);
      }),
    err: (text) =>
      Effect.sync(() => {
        stderr += text;
      }),
    isTerminal: false,
    interrupted: Effect.never,
    wasInterrupted: Effect.succeed(false),
  };
  return Cli.run(argv).pipe(
    Effect.provide(Layer.merge(FaultDisk.layer(disk), Layer.succeed(Cli.Terminal, terminal))),
    Effect.map((status) => ({ status, stdout, stderr })),
  );
};

describe("tay demo, in process", () => {
  it.live("stops at once with the store's error line when its writes start failing", () =>
    Effect.gen(function* () {
      const disk = FaultDisk.make();
      let injected = false;
      const startedAt = Date.now();
      const run = yield* runOn(
        disk,
        ["demo", "/data", "--jobs", "200", "--duration", "30s"],
        (out) => {
          if (!injected && out.includes("inserted 200 job(s)")) {
            injected = true;
            disk.inject(FaultDisk.fail("write", "EIO"));
          }
        },
      );
      expect(injected).toBe(true);
      expect(run.status).toBe(1);
      // The store's own line, as for any writing command whose store fails.
      expect(run.stderr).toMatch(
        /^tay: WriterFailed \/data\/\S+\.tay: the writer stopped: write \S+ failed with EIO[^\n]*\n$/,
      );
      // At once, not at the end of --duration.
      expect(Date.now() - startedAt).toBeLessThan(15_000);
      expect(run.stdout).not.toContain("stopped:");
    }),
  );

  it.scopedLive(
    "closing the worker leaves no job executing, a claim decided at the close too",
    () =>
      Effect.gen(function* () {
        const directory = yield* Effect.acquireRelease(
          Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tay-demo-close-"))),
          (made) => Effect.promise(() => fs.rm(made, { recursive: true, force: true })),
        );
        const engine = yield* Engine.open(path.join(directory, "data"), { createIfMissing: true });
        const worker = yield* Worker.run(engine, {
          queues: { [demoQueue]: 1 },
          handlers: { [demoWorker]: () => "done" },
        });
        // The worker's claim parks; the insert's drain then starts the job for it, and the close
        // begins before that batch is durable (two microtasks: the drain has decided by then).
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));
        const inserted = engine.promises.insert({ queue: demoQueue, worker: demoWorker, args: 1 });
        yield* Effect.promise(() => Promise.resolve());
        yield* Effect.promise(() => Promise.resolve());
        yield* worker.close();
        const { jobId } = yield* Effect.promise(() => inserted);
        expect(Query.jobsIn(yield* engine.state(), "executing")).toEqual([]);
        // It ran before the close, or was failed after it as the worker fails a job it interrupts
        // (retried by the next run).
        const job = yield* engine.job(jobId);
        expect(
          job?.state === "completed" ||
            (job?.state === "retryable" && job.errors[0]?.error === "interrupted"),
        ).toBe(true);
      }).pipe(Effect.provide(NodeDisk.layer)),
  );
});
