// A remote worker outlives its server's restart: `tay serve` runs in a child process that is
// stopped and started again on the same store while the worker runs. After the restart the
// worker's client opens a new session, so a cancel of a job it claims from the new server
// still aborts the running handler; and a worker whose first claim found the server down
// claims once it is back (its state "reconnecting" meanwhile, "running" after); and a handler running across the restart is aborted once its
// heartbeat finds its lease gone (the new server rescued the attempt). Before 2026-12-06 the client kept its first session promise for
// good: after a restart every claim named a session the server no longer knew (no cancel
// reached a handler again), and a session that failed to open failed every claim after it.
// Before 2026-12-07 a handler running across the restart whose job this worker claimed again
// (attempt 2) before a heartbeat asked for attempt 1 was never aborted (attempts were kept by
// job id alone): the third test's occasional timeout under load, the fourth's every time.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Locate } from "@tay/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as RemoteWorker from "../../src/server/RemoteWorker.js";

const tay = new URL("../../../cli/bin/tay.mjs", import.meta.url).pathname;
let root = "";
let server: ChildProcess | undefined;

const until = async (ready: () => boolean | Promise<boolean>): Promise<void> => {
  while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 50));
};

/** Starts `tay serve` on `directory` and waits until its socket is there. */
const serve = async (directory: string): Promise<void> => {
  server = spawn(process.execPath, [tay, "serve", directory, "--create"], { stdio: "ignore" });
  await until(() => Locate.servedAt(directory) !== null && existsSync(Locate.socketOf(directory)));
};

/** Stops the server (a clean close) and waits for its exit. */
const stop = async (): Promise<void> => {
  const running = server;
  server = undefined;
  if (running === undefined || running.exitCode !== null) return;
  const exited = new Promise((resolve) => running.once("exit", resolve));
  running.kill("SIGTERM");
  await exited;
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "tay-remote-restart-"));
});
afterEach(stop);
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Registry = { Quick: null; Slow: null };

/** The aborts of `Slow` handlers: how many, and each one's attempt. */
interface Aborts {
  count: number;
  readonly attempts: Array<number>;
}

const noAborts = (): Aborts => ({ count: 0, attempts: [] });

/** A worker whose `Slow` handler runs until aborted, counting the aborts. */
const startWorker = (client: Client.Client, aborts: Aborts, leaseMs?: number) =>
  RemoteWorker.start<Registry>(client, {
    queues: { work: 2 },
    ...(leaseMs === undefined ? {} : { leaseMs }),
    handlers: {
      Quick: async () => "done",
      Slow: (job, context) =>
        new Promise((_resolve, reject) =>
          context.signal.addEventListener("abort", () => {
            aborts.count += 1;
            aborts.attempts.push(job.attempt);
            reject(new Error("aborted"));
          }),
        ),
    },
  });

describe("a remote worker across its server's restart", () => {
  it("opens a new session: a cancel still aborts the handler of a job claimed after it", async () => {
    const directory = join(root, "restarted");
    await serve(directory);
    const client = await Client.connect(directory);
    const aborts = noAborts();
    const worker = await startWorker(client, aborts);
    const producer = await Client.connect(directory);
    const first = await producer.insert({ queue: "work", worker: "Quick", args: null });
    await until(async () => (await producer.job(first.jobId))?.state === "completed");
    await producer.close();
    await stop();
    await serve(directory);
    const again = await Client.connect(directory);
    const slow = await again.insert({ queue: "work", worker: "Slow", args: null });
    await until(async () => (await again.job(slow.jobId))?.state === "executing");
    await again.cancel(slow.jobId);
    await until(() => aborts.count === 1);
    expect((await again.job(slow.jobId))?.state).toBe("cancelled");
    await worker.close();
    await client.close();
    await again.close();
  }, 30_000);

  it("claims once the server is back when its first claim found it down", async () => {
    const directory = join(root, "down-at-first-claim");
    await serve(directory);
    const client = await Client.connect(directory);
    await stop();
    const worker = await startWorker(client, noAborts());
    // The claim loop's first tries (one a second) fail while nothing serves the store.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(worker.state()).toBe("reconnecting");
    await serve(directory);
    const producer = await Client.connect(directory);
    const quick = await producer.insert({ queue: "work", worker: "Quick", args: null });
    await until(async () => (await producer.job(quick.jobId))?.state === "completed");
    expect(worker.state()).toBe("running");
    await worker.close();
    await client.close();
    await producer.close();
  }, 30_000);

  /**
   * A worker (leases of `leaseMs`, heartbeats every third of it) running a `Slow` job on a
   * server in `directory`, then that server stopped and started again.
   */
  const slowAcrossRestart = async (directory: string, leaseMs: number) => {
    await serve(directory);
    const client = await Client.connect(directory);
    const aborts = noAborts();
    const worker = await startWorker(client, aborts, leaseMs);
    const producer = await Client.connect(directory);
    const slow = await producer.insert({ queue: "work", worker: "Slow", args: null });
    await until(async () => (await producer.job(slow.jobId))?.state === "executing");
    await producer.close();
    await stop();
    await serve(directory);
    const again = await Client.connect(directory);
    const close = async () => {
      await worker.close();
      await client.close();
      await again.close();
    };
    return { aborts, jobId: slow.jobId, again, close };
  };

  it("aborts a handler running across the restart once its heartbeat finds the lease gone", async () => {
    // Heartbeats every second.
    const { aborts, jobId, again, close } = await slowAcrossRestart(
      join(root, "running-across"),
      3_000,
    );
    await until(() => aborts.attempts.includes(1));
    await again.cancel(jobId);
    await close();
  }, 30_000);

  it("aborts the handler of the attempt before the restart after it claimed the job's next attempt", async () => {
    // Heartbeats every 3 s: the rescued job is claimed again (attempt 2) before the first one
    // after the restart asks for attempt 1. Both were kept by job id alone until 2026-12-07,
    // so attempt 2 took attempt 1's place and attempt 1's handler ran on, never aborted.
    const { aborts, jobId, again, close } = await slowAcrossRestart(
      join(root, "claimed-again"),
      9_000,
    );
    await until(async () => {
      const job = await again.job(jobId);
      return job?.state === "executing" && job.attempt === 2;
    });
    await until(() => aborts.attempts.includes(1));
    expect(aborts.attempts).toEqual([1]);
    await again.cancel(jobId);
    await until(() => aborts.attempts.includes(2));
    await close();
  }, 30_000);
});
