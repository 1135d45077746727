// A waiting claim against a server that stops answering without a word (its host died, or a
// path between lost the connection's state): TCP tells nothing on a connection nobody writes
// to, so the claim must give up by itself. The "server" here answers `/v1/status` (so that
// `connect` succeeds) and then reads every request and answers none. `nextJobs` rejects with
// `ConnectionFailed` (`ETIMEDOUT`) once `answerGraceMs` has passed after its `waitMs`, and the
// connection is dropped; before 2026-12-06 it waited forever. Likewise an event stream that
// brings no byte (not even the server's 15 s ping) for `streamIdleMs` is dropped: the worker
// session then opens anew, and a subscription throws; a socket kept alive for the next stream
// carries no timer of the last one. An event that is not the protocol's fails its stream
// with `BadResponse` (until 2026-12-06 it was dropped without a word).
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../src/index.js";
import { events, Transport } from "../src/Transport.js";

let silent: Server | undefined;
let port = 0;
const sockets = new Set<Socket>();
const closed: Array<Socket> = [];

const statusAnswer = (): string => {
  const body = JSON.stringify({ storeId: "silent" });
  return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
};

let sessionsOpened = 0;

/** A session stream's head and its first event, after which the "server" says nothing more. */
const sessionOpening = (count: number): string =>
  "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: keep-alive\r\n\r\n" +
  `event: session\ndata: ${JSON.stringify({ session: `s${count}` })}\n\n`;

/** A whole event stream of one event, its length stated: the connection stays open for reuse. */
const shortBody = `event: short\ndata: ${JSON.stringify({ done: true })}\n\n`;
const shortStream = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: ${shortBody.length}\r\nconnection: keep-alive\r\n\r\n${shortBody}`;

/** A progress stream whose one event is not the protocol's (no `attempt`). */
const malformedProgress =
  "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" +
  `event: progress\ndata: ${JSON.stringify({ jobId: 1, value: 5, at: 0, bytes: 9 })}\n\n`;

/** Events in the burst a reader falls behind on: far more than a socket's buffers hold. */
const burstEvents = 300;

/** An event stream's head and `burstEvents` events of 1 KiB each, then nothing more. */
const burst = (): string => {
  const pad = "x".repeat(1_024);
  let text = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
  for (let index = 0; index < burstEvents; index++) {
    text += `event: burst\ndata: ${JSON.stringify({ index, pad })}\n\n`;
  }
  return text;
};

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => closed.push(socket));
    socket.on("data", (bytes: Buffer) => {
      const request = bytes.toString("latin1");
      if (request.startsWith("GET /v1/status ")) socket.write(statusAnswer());
      if (request.startsWith("GET /v1/burst ")) socket.write(burst());
      if (request.startsWith("GET /v1/short ")) socket.write(shortStream);
      if (request.startsWith("GET /v1/progress/stream ")) socket.write(malformedProgress);
      if (request.startsWith("GET /v1/session ")) {
        sessionsOpened += 1;
        socket.write(sessionOpening(sessionsOpened));
      }
    });
  });
  await new Promise<void>((resolve) => silent?.listen(0, "127.0.0.1", resolve));
  const address = silent.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent?.close(resolve));
});

describe("a waiting claim against a server that stopped answering", () => {
  it("rejects with ConnectionFailed ETIMEDOUT after waitMs and the grace, and drops its connection", async () => {
    const client = await Client.connect(`http://127.0.0.1:${port}`);
    const closedBefore = closed.length;
    const claim = client.nextJobs([{ queue: "q", limit: 1 }], { waitMs: 100, answerGraceMs: 200 });
    await expect(claim).rejects.toMatchObject({ _tag: "ConnectionFailed", code: "ETIMEDOUT" });
    await expect(claim).rejects.toThrow(/no answer to \/v1\/next-jobs 300 ms after it was sent/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed.length).toBeGreaterThan(closedBefore);
    await client.close();
  }, 20_000);

  it("answers no job, without an error, when the caller's signal gives the wait up first", async () => {
    const client = await Client.connect(`http://127.0.0.1:${port}`);
    const controller = new AbortController();
    const claim = client.nextJobs([{ queue: "q", limit: 1 }], {
      waitMs: 60_000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    await expect(claim).resolves.toEqual([]);
    await client.close();
  }, 20_000);

  it("drops a session stream that brings no byte for streamIdleMs, and the next claim opens another", async () => {
    const client = await Client.connect(`http://127.0.0.1:${port}`, { streamIdleMs: 200 });
    const before = sessionsOpened;
    expect(await client.openSession()).toBe(`s${before + 1}`);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await client.openSession()).toBe(`s${before + 2}`);
    await client.close();
  }, 20_000);

  it("ends a subscription that brings no byte for streamIdleMs with ConnectionFailed ETIMEDOUT", async () => {
    const client = await Client.connect(`http://127.0.0.1:${port}`, { streamIdleMs: 200 });
    const subscription = client.subscribe();
    await expect(subscription.next()).rejects.toMatchObject({
      _tag: "ConnectionFailed",
      code: "ETIMEDOUT",
    });
    await client.close();
  }, 20_000);

  it("fails an event stream with BadResponse on an event that is not the protocol's", async () => {
    const client = await Client.connect(`http://127.0.0.1:${port}`, { streamIdleMs: 2_000 });
    const stream = client.progressStream();
    await expect(stream.next()).rejects.toMatchObject({
      _tag: "BadResponse",
      route: "/v1/progress/stream",
    });
    await expect(client.progressStream().next()).rejects.toThrow(/attempt/);
    await client.close();
  }, 20_000);

  it("keeps a stream whose reader is behind (bytes wait unread), and drops it once silent", async () => {
    const transport = new Transport({ host: "127.0.0.1", port, token: undefined }, 200);
    const stream = events(await transport.open("GET", "/v1/burst", undefined));
    let read = 0;
    const reading = (async () => {
      for await (const _event of stream) {
        read += 1;
        // The reader stalls past the idle bound with most of the burst unread.
        if (read === 1) await new Promise((resolve) => setTimeout(resolve, 700));
      }
    })();
    await expect(reading).rejects.toMatchObject({ _tag: "ConnectionFailed", code: "ETIMEDOUT" });
    expect(read).toBe(burstEvents);
    transport.close();
  }, 20_000);

  it("leaves no idle timer on a socket kept alive after its stream ended", async () => {
    const transport = new Transport({ host: "127.0.0.1", port, token: undefined }, 200);
    const used = new Set<unknown>();
    let timeoutListeners = 0;
    for (let stream = 0; stream < 12; stream++) {
      const response = await transport.open("GET", "/v1/short", undefined);
      // Taken now: a response lets go of its socket once it ended.
      const socket = response.socket;
      for await (const _event of events(response)) {
        // One event, then the stream's stated length ends it.
      }
      used.add(socket);
      await new Promise((resolve) => setImmediate(resolve));
      // Node's agent keeps one listener of its own.
      timeoutListeners = (socket?.listeners("timeout") ?? []).filter(
        (listener) => listener.name === "idle",
      ).length;
    }
    // The twelve streams went over one socket, which carries no stream's timer after it.
    expect(used.size).toBe(1);
    expect(used.has(null)).toBe(false);
    expect(timeoutListeners).toBe(0);
    transport.close();
  }, 20_000);
});
