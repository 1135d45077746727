// The client's event streams (`subscribe`, the worker session) fail with typed errors, never end
// as if the server had closed them: an error answer instead of a stream (a wrong token, a bad
// `from`) is its `ServerError`; the server's `error` event (a subscription from a sequence a
// compaction removed) is `Compacted`; a server killed mid-stream is `ConnectionFailed`. Before
// 2026-12-06 each of these ended the stream as a clean end does (the session's refusal was an
// untyped Error). Real servers: `tay serve` (the built CLI) in child processes.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Client, Locate } from "../src/index.js";

const tay = new URL("../../cli/bin/tay.mjs", import.meta.url).pathname;
let root = "";
const servers: Array<ChildProcess> = [];

const until = async (ready: () => boolean | Promise<boolean>): Promise<void> => {
  while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 50));
};

/** `tay serve` on a fresh store (also on a loopback port); resolves with its directory and TCP address. */
const serve = async (name: string) => {
  const directory = join(root, name);
  const child = spawn(
    process.execPath,
    [tay, "serve", directory, "--create", "--listen", "127.0.0.1:0"],
    { stdio: "ignore" },
  );
  servers.push(child);
  await until(
    () => Locate.servedAt(directory)?.listen != null && existsSync(Locate.socketOf(directory)),
  );
  const listen = Locate.servedAt(directory)?.listen ?? "";
  const [host = "", port = ""] = listen.split(":");
  return { directory, child, host, port: Number(port) };
};

/** The server's /metrics text, over its socket. */
const metricsOf = (directory: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const request = get(
      { socketPath: Locate.socketOf(directory), path: "/metrics" },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () => resolve(text));
      },
    );
    request.on("error", reject);
  });

/** The first thing a stream gives: an event, its end, or its error. */
const firstOf = async (stream: AsyncIterator<unknown>) => {
  try {
    const next = await stream.next();
    return next.done === true ? { ended: true } : { event: next.value };
  } catch (error) {
    return { error };
  }
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "tay-client-streams-"));
});
afterEach(async () => {
  for (const child of servers.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a client's event streams", () => {
  it("reject a wrong token with Unauthorized, the subscription and the session alike", async () => {
    const { host, port } = await serve("token");
    const client = new Client.Client({ host, port, token: "not-the-token" });
    const subscription = client.subscribe();
    const first = await firstOf(subscription);
    expect(first).toMatchObject({ error: { _tag: "Unauthorized", status: 401 } });
    await expect(client.openSession()).rejects.toMatchObject({ _tag: "Unauthorized", status: 401 });
    await client.close();
  }, 30_000);

  it("reject a from the server refuses with its InvalidRequest naming the field", async () => {
    const { directory } = await serve("from");
    const client = await Client.connect(directory);
    const first = await firstOf(client.subscribe({ from: 0 }));
    expect(first).toMatchObject({ error: { _tag: "InvalidRequest", status: 400 } });
    expect(String((first as { error: unknown }).error)).toMatch(/query\.from/);
    await client.close();
  }, 30_000);

  it("fail with Compacted when the events from a sequence were compacted away", async () => {
    const { directory } = await serve("compacted");
    const client = await Client.connect(directory);
    const job = await client.insert({ queue: "q", worker: "W", args: null });
    await client.cancel(job.jobId);
    await client.compact(0);
    const first = await firstOf(client.subscribe({ from: 1 }));
    expect(first).toMatchObject({ error: { _tag: "Compacted", status: 410 } });
    await client.close();
  }, 30_000);

  it("fail with ConnectionFailed when the server is killed mid-stream", async () => {
    const { directory, child } = await serve("killed");
    const client = await Client.connect(directory);
    // From the first sequence: a subscription from now could miss the insert that proves it open.
    const subscription = client.subscribe({ from: 1 });
    // An event read: the stream is open.
    const reading = firstOf(subscription);
    await client.insert({ queue: "q", worker: "W", args: null });
    expect(await reading).toMatchObject({ event: { event: { _tag: "JobInserted" } } });
    child.kill("SIGKILL");
    expect(await firstOf(subscription)).toMatchObject({ error: { _tag: "ConnectionFailed" } });
    await client.close();
  }, 30_000);

  it("still end when the client closes them, with no error", async () => {
    const { directory } = await serve("closed");
    const client = await Client.connect(directory);
    const subscription = client.subscribe();
    const reading = firstOf(subscription);
    setTimeout(() => subscription.close(), 200);
    expect(await reading).toEqual({ ended: true });
    await client.close();
  }, 30_000);

  it("keep a watch going across the server's restart, telling each event once", async () => {
    const { directory, child } = await serve("watched");
    // Reopened well after the server is back: what it commits meanwhile is read from the log.
    const client = await Client.connect(directory, { watchReconnectMs: 2_000 });
    const told: Array<Client.Committed> = [];
    const stopWatching = client.watch((committed) => told.push(...committed));
    // Inserted until one is told: the watch's stream is open from the next commit.
    const producer = await Client.connect(directory);
    await until(async () => {
      await producer.insert({ queue: "q", worker: "Before", args: null });
      return told.length > 0;
    });
    await producer.close();
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    const again = await serve("watched");
    const after = await Client.connect(again.directory);
    await after.insert({ queue: "q", worker: "After", args: null });
    expect(told.some(({ event }) => "worker" in event && event.worker === "After")).toBe(false);
    await until(() => told.some(({ event }) => "worker" in event && event.worker === "After"));
    const sequences = told.map(({ sequence, member }) => `${sequence}.${member}`);
    expect(new Set(sequences).size).toBe(sequences.length);
    // Nothing committed since the first one told was missed: the sequences run without a gap.
    const numbers = told.map(({ sequence }) => sequence);
    const first = numbers[0] ?? 0;
    expect(numbers).toEqual(numbers.map((_, index) => first + index));
    stopWatching();
    await after.close();
    await client.close();
  }, 30_000);

  it("end a whenEnded whose job ended in a gap a compaction removed while the server was away", async () => {
    const { directory, child } = await serve("gap");
    // Reopened well after the server is back, so the end and the compaction come first.
    const client = await Client.connect(directory, { watchReconnectMs: 2_000 });
    const job = await client.insert({ queue: "q", worker: "W", args: null });
    const ended = client.whenEnded(job.jobId);
    // Its watch has read the job and opened its stream: the server counts one subscriber.
    await until(async () => /tay_subscribers 1/.test(await metricsOf(directory)));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    const again = await serve("gap");
    const other = await Client.connect(again.directory);
    await other.cancel(job.jobId, "in the gap");
    // Kept (an hour's retention), but its events now stand in a new epoch: the watch's place is gone.
    await other.compact(3_600_000);
    await other.close();
    const job_ = await ended;
    expect(job_).toMatchObject({ jobId: job.jobId, state: "cancelled" });
    await client.close();
  }, 30_000);
});
