// What a remote worker does when its claims fail, against real servers (`tay serve`, the built
// CLI, in child processes): a failure that may pass (nothing serves the store) is told as
// `ClaimFailed` and asked again every `reconnectMs`, and the worker claims once the server is
// back; a refusal for good (a wrong token's 401) or a closed client halts it (`Halted`, told
// once) instead of asking again forever, unseen, as it did before 2026-12-06; a close during
// the pause between two tries does not wait it out; `handleSignals` is honored, as
// `Worker.start` honors it (the remote `start` ignored it).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect as connectTcp, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { Client, Locate } from "@tay/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as RemoteWorker from "../../src/server/RemoteWorker.js";
import type * as Worker from "../../src/worker/Worker.js";

const tay = new URL("../../../cli/bin/tay.mjs", import.meta.url).pathname;
let root = "";
const servers: Array<ChildProcess> = [];

const until = async (ready: () => boolean | Promise<boolean>): Promise<void> => {
  while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 50));
};

/** `tay serve` on `name`'s store, also on a loopback port; its directory, host and port. */
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
  const [host = "", port = ""] = (Locate.servedAt(directory)?.listen ?? "").split(":");
  return { directory, child, host, port: Number(port) };
};

/** Stops a server cleanly and waits for its exit. */
const stop = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "tay-remote-failures-"));
});
afterEach(async () => {
  for (const child of servers.splice(0)) await stop(child);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A worker of one queue whose handler completes at once, its events kept. */
const startWorker = (
  client: RemoteWorker.RemoteClient,
  events: Array<Worker.WorkerEvent>,
  options: { readonly reconnectMs?: number; readonly handleSignals?: boolean } = {},
) =>
  RemoteWorker.start(client, {
    queues: { work: 1 },
    handlers: { Quick: async () => "done" },
    onEvent: (event) => events.push(event),
    ...options,
  });

const tags = (events: ReadonlyArray<Worker.WorkerEvent>) => events.map((event) => event._tag);

describe("a remote worker whose claims fail", () => {
  it("tells each failure that may pass as ClaimFailed and claims once the server is back", async () => {
    const first = await serve("down");
    const client = await Client.connect(first.directory);
    await stop(first.child);
    const events: Array<Worker.WorkerEvent> = [];
    const worker = await startWorker(client, events, { reconnectMs: 100 });
    await until(() => events.length >= 3);
    const [failed] = events;
    expect(failed).toMatchObject({ _tag: "ClaimFailed", retryInMs: 100 });
    expect(failed?._tag === "ClaimFailed" && failed.cause).toMatchObject({
      _tag: "ConnectionFailed",
    });
    const again = await serve("down");
    const producer = await Client.connect(again.directory);
    const quick = await producer.insert({ queue: "work", worker: "Quick", args: null });
    await until(async () => (await producer.job(quick.jobId))?.state === "completed");
    expect(tags(events)).not.toContain("Halted");
    await worker.close();
    await client.close();
    await producer.close();
  }, 30_000);

  it("halts on a wrong token, told once, instead of asking again forever", async () => {
    const { directory, host, port } = await serve("token");
    const client = new Client.Client({ host, port, token: "not-the-token" });
    const events: Array<Worker.WorkerEvent> = [];
    const worker = await startWorker(client, events, { reconnectMs: 20 });
    await until(() => events.length >= 1);
    // Twenty pauses later, nothing more was told: the claims stopped.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(tags(events)).toEqual(["Halted"]);
    const [halted] = events;
    expect(halted?._tag === "Halted" && halted.cause).toMatchObject({
      _tag: "Unauthorized",
      status: 401,
    });
    // The store is as it was: a producer with the token still inserts, nothing was claimed.
    const producer = await Client.connect(directory);
    const job = await producer.insert({ queue: "work", worker: "Quick", args: null });
    expect((await producer.job(job.jobId))?.state).toBe("available");
    await worker.close();
    await client.close();
    await producer.close();
  }, 30_000);

  it("halts when its client was closed under it", async () => {
    const { directory } = await serve("closed-client");
    const client = await Client.connect(directory);
    await client.close();
    const events: Array<Worker.WorkerEvent> = [];
    const worker = await startWorker(client, events, { reconnectMs: 20 });
    await until(() => events.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(tags(events)).toEqual(["Halted"]);
    const [halted] = events;
    expect(halted?._tag === "Halted" && halted.cause).toMatchObject({ code: "ECLOSED" });
    await worker.close();
  }, 30_000);

  it("closes during the pause between two tries without waiting it out", async () => {
    const first = await serve("pause");
    const client = await Client.connect(first.directory);
    await stop(first.child);
    const events: Array<Worker.WorkerEvent> = [];
    const worker = await startWorker(client, events, { reconnectMs: 60_000 });
    await until(() => events.length >= 1);
    const started = Date.now();
    await worker.close();
    expect(Date.now() - started).toBeLessThan(10_000);
    await client.close();
  }, 30_000);

  it("closes at once while its session opens against a server that says nothing", async () => {
    // Accepts connections and never answers: a host that died behind a live socket.
    const path = join(root, "silent.sock");
    const held: Array<Socket> = [];
    const silent = createServer((socket) => {
      held.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(path, resolve));
    const client = new Client.Client({ socket: path });
    const events: Array<Worker.WorkerEvent> = [];
    const worker = await startWorker(client, events);
    await until(() => held.length > 0);
    const started = Date.now();
    await worker.close();
    // The session's open waits for the stream's first byte up to streamIdleMs (45 s).
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(events).toEqual([]);
    await client.close();
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }, 60_000);

  it("refuses a reconnectMs or leaseMs out of range (the server's, for a lease) before anything starts", async () => {
    const { directory } = await serve("options");
    const client = await Client.connect(directory);
    await expect(startWorker(client, [], { reconnectMs: 0 })).rejects.toMatchObject({
      _tag: "InvalidWorkerOption",
      option: "reconnectMs",
    });
    await expect(
      RemoteWorker.start(client, { queues: { work: 1 }, handlers: {}, leaseMs: 1.5 }),
    ).rejects.toMatchObject({ _tag: "InvalidWorkerOption", option: "leaseMs" });
    // Under the server's least lease: every claim would be refused.
    await expect(
      RemoteWorker.start(client, { queues: { work: 1 }, handlers: {}, leaseMs: 999 }),
    ).rejects.toMatchObject({ _tag: "InvalidWorkerOption", option: "leaseMs" });
    await client.close();
  }, 30_000);
});

describe("a remote worker started with handleSignals", () => {
  it("closes on SIGTERM, as an embedded one does, and stops listening once closed", async () => {
    const { directory } = await serve("signals");
    const client = await Client.connect(directory);
    const before = process.listeners("SIGTERM");
    const worker = await startWorker(client, [], { handleSignals: true });
    const added = process.listeners("SIGTERM").filter((listener) => !before.includes(listener));
    expect(added).toHaveLength(1);
    // What the signal would call, called directly: the test process is not signalled.
    const [onSignal] = added;
    onSignal?.("SIGTERM");
    await until(() => process.listeners("SIGTERM").length === before.length);
    expect(process.listeners("SIGINT").some((listener) => added.includes(listener))).toBe(false);
    // Closed: a job inserted now stays available.
    const job = await client.insert({ queue: "work", worker: "Quick", args: null });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await client.job(job.jobId))?.state).toBe("available");
    await worker.close();
    await client.close();
  }, 30_000);
});

/**
 * A TCP proxy to `port` whose `blip` refuses new connections and cuts the open ones, except
 * the session streams' (their first bytes are `GET /v1/session`): a reset pooled connection,
 * the session alive. `restore` listens again on the same port.
 */
const proxyTo = async (port: number) => {
  const open = new Map<Socket, { readonly session: boolean; readonly upstream: Socket }>();
  const accept = (socket: Socket) => {
    socket.once("data", (first: Buffer) => {
      const upstream = connectTcp({ host: "127.0.0.1", port });
      open.set(socket, { session: first.toString().startsWith("GET /v1/session"), upstream });
      upstream.write(first);
      socket.pipe(upstream).pipe(socket);
      const drop = () => {
        open.delete(socket);
        socket.destroy();
        upstream.destroy();
      };
      socket.on("error", drop).on("close", drop);
      upstream.on("error", drop).on("close", drop);
    });
  };
  let listener = createServer(accept);
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const address = listener.address();
  const proxyPort = typeof address === "object" && address !== null ? address.port : 0;
  return {
    port: proxyPort,
    blip: () => {
      // Not waited for: `close` calls back once every connection ended, the session's too.
      listener.close();
      for (const [socket, { session, upstream }] of open) {
        if (session) continue;
        socket.destroy();
        upstream.destroy();
      }
    },
    restore: async () => {
      listener = createServer(accept);
      await new Promise<void>((resolve) => listener.listen(proxyPort, "127.0.0.1", resolve));
    },
    close: () => {
      for (const [socket, { upstream }] of open) {
        socket.destroy();
        upstream.destroy();
      }
      listener.close();
    },
  };
};

describe("a remote worker whose end cannot be sent", () => {
  // Until 2026-12-06 the end failed at once (`Unrecorded`): the job stayed executing until its
  // lease ran out, then ran again.
  it("sends it again once the connection is back: the job completes on its attempt", async () => {
    const { directory, host, port } = await serve("end-again");
    const token = readFileSync(join(directory, "server-token"), "utf8").trim();
    const proxy = await proxyTo(port);
    const client = new Client.Client({ host, port: proxy.port, token });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const events: Array<Worker.WorkerEvent> = [];
    const worker = await RemoteWorker.start(client, {
      queues: { work: 1 },
      reconnectMs: 100,
      handlers: { Held: () => held.then(() => "done") },
      onEvent: (event) => events.push(event),
    });
    const producer = await Client.connect(directory);
    const job = await producer.insert({ queue: "work", worker: "Held", args: null });
    await until(async () => (await producer.job(job.jobId))?.state === "executing");
    proxy.blip();
    release();
    // The end fails (refused, or cut) and waits; the connection comes back.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await proxy.restore();
    await until(async () => (await producer.job(job.jobId))?.state === "completed");
    const done = await producer.job(job.jobId);
    expect([done?.attempt, done?.errors]).toEqual([1, []]);
    expect(events.map((event) => event._tag)).toContain("Completed");
    expect(events.map((event) => event._tag)).not.toContain("Unrecorded");
    await worker.close();
    await client.close();
    await producer.close();
    proxy.close();
  }, 30_000);

  it("sends it again no longer than a close gives the handlers", async () => {
    const { directory, host, port } = await serve("end-closing");
    const token = readFileSync(join(directory, "server-token"), "utf8").trim();
    const proxy = await proxyTo(port);
    const client = new Client.Client({ host, port: proxy.port, token });
    const events: Array<Worker.WorkerEvent> = [];
    const worker = await RemoteWorker.start(client, {
      queues: { work: 1 },
      reconnectMs: 100,
      handlers: { Brief: () => new Promise((resolve) => setTimeout(() => resolve("done"), 300)) },
      onEvent: (event) => events.push(event),
    });
    const producer = await Client.connect(directory);
    const job = await producer.insert({ queue: "work", worker: "Brief", args: null });
    await until(async () => (await producer.job(job.jobId))?.state === "executing");
    // Cut for good: the end is sent again and again, until the close's time runs out.
    proxy.blip();
    const started = Date.now();
    await worker.close({ timeoutMs: 1_000 });
    // Without the close's bound it was sent again for the whole lease (30 s).
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(events.map((event) => event._tag)).toContain("Unrecorded");
    await client.close();
    await producer.close();
    proxy.close();
  }, 60_000);
});
