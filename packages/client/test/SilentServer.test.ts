// A waiting claim against a server that stops answering without a word (its host died, or a
// path between lost the connection's state): TCP tells nothing on a connection nobody writes
// to, so the claim must give up by itself. The "server" here answers `/v1/status` (so that
// `connect` succeeds) and then reads every request and answers none. `nextJobs` rejects with
// `ConnectionFailed` (`ETIMEDOUT`) once `answerGraceMs` has passed after its `waitMs`, and the
// connection is dropped; before 2026-12-06 it waited forever.
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../src/index.js";

let silent: Server | undefined;
let port = 0;
const sockets = new Set<Socket>();
const closed: Array<Socket> = [];

const statusAnswer = (): string => {
  const body = JSON.stringify({ storeId: "silent" });
  return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
};

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => closed.push(socket));
    socket.on("data", (bytes: Buffer) => {
      if (bytes.toString("latin1").startsWith("GET /v1/status ")) socket.write(statusAnswer());
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
});
