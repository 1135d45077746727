// The client's own HTTP/1.1 exchanges (src/internal/exchange.ts) against a scripted `node:net`
// server: answers cut anywhere, answers without a length, connections the server closes, garbage,
// aborts and stale idle connections. What it answers must be exactly what was sent, and anything it
// does not understand a typed failure, never a guess.
import { createServer, type Server, type Socket } from "node:net";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { type Answer, BadAnswer, ExchangeFailed, Exchanges } from "../src/internal/exchange.js";

/** A server whose every request gets `reply(request, socket)`; counts connections. */
const scripted = async (reply: (request: string, socket: Socket, index: number) => void) => {
  let connections = 0;
  let requests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    let buffered = "";
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      const request = buffered.slice(0, end + 4 + length);
      buffered = buffered.slice(end + 4 + length);
      requests += 1;
      reply(request, socket, requests);
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  open.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return {
    exchanges: (idleMs?: number) => {
      const made = new Exchanges({ host: "127.0.0.1", port }, `127.0.0.1:${port}`, idleMs);
      open.push(() => made.close());
      return made;
    },
    connections: () => connections,
  };
};

const open: Array<() => void> = [];
afterEach(() => {
  for (const close of open.splice(0)) close();
});

const answer = (status: number, body: string, extra = "") =>
  `HTTP/1.1 ${status} X\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

/** Writes `bytes` in pieces cut at `cuts`, one write per tick. */
const writeCut = async (socket: Socket, bytes: Buffer, cuts: ReadonlyArray<number>) => {
  const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    if (cut > from) socket.write(bytes.subarray(from, cut));
    from = cut;
    await new Promise((resolve) => setImmediate(resolve));
  }
};

describe("exchanges", () => {
  it("answers exactly what was sent, however the answer is cut (property)", async () => {
    let next: { bytes: Buffer; cuts: ReadonlyArray<number> } | undefined;
    const server = await scripted((_request, socket) => {
      if (next !== undefined) void writeCut(socket, next.bytes, next.cuts);
    });
    const exchanges = server.exchanges();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary", maxLength: 300 }),
        fc.integer({ min: 200, max: 599 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (body, status, cuts) => {
          next = { bytes: Buffer.from(answer(status, body), "utf8"), cuts };
          const got: Answer = await exchanges.request("POST", "/v1/x", {}, "{}");
          expect(got).toEqual({ status, body });
        },
      ),
      { numRuns: 100 },
    );
    // One connection kept for every request.
    expect(server.connections()).toBe(1);
  });

  it("sends the request's method, path, headers and body with its length", async () => {
    let seen = "";
    const server = await scripted((request, socket) => {
      seen = request;
      socket.write(answer(200, "{}"));
    });
    const body = JSON.stringify({ name: "é€😀" });
    await server.exchanges().request("POST", "/v1/insert", { authorization: "Bearer t" }, body);
    // The server's copy is read as latin1 (one character per byte): compare bytes.
    expect(Buffer.from(seen, "latin1").toString("utf8")).toBe(
      `POST /v1/insert HTTP/1.1\r\nhost: ${seen.split("\r\n")[1]?.slice(6)}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nauthorization: Bearer t\r\n\r\n${body}`,
    );
  });

  it("opens a new connection after an answer with connection: close", async () => {
    for (const header of ["connection: close", "Connection: keep-alive, Close"]) {
      const server = await scripted((_request, socket) => {
        // Left open by the server: the client itself must not send on it again.
        socket.write(answer(200, "{}", `${header}\r\n`));
      });
      const exchanges = server.exchanges();
      for (let index = 0; index < 3; index++) {
        expect(await exchanges.request("GET", "/", {}, undefined)).toEqual({
          status: 200,
          body: "{}",
        });
      }
      expect([header, server.connections()]).toEqual([header, 3]);
    }
  });

  it("reads an answer without a length up to the server's close (Node's own 4xx)", async () => {
    const server = await scripted((_request, socket) => {
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nno");
    });
    expect(await server.exchanges().request("GET", "/", {}, undefined)).toEqual({
      status: 400,
      body: "no",
    });
  });

  it("fails with ExchangeFailed when the server closes mid-answer, and recovers after", async () => {
    const server = await scripted((_request, socket, index) => {
      if (index === 1) socket.end(answer(200, "{}").slice(0, -1));
      else socket.write(answer(200, "{}"));
    });
    const exchanges = server.exchanges();
    const failed = await exchanges.request("GET", "/", {}, undefined).catch((error) => error);
    expect(failed).toBeInstanceOf(ExchangeFailed);
    expect(failed.code).toBe("ECONNRESET");
    expect(await exchanges.request("GET", "/", {}, undefined)).toEqual({ status: 200, body: "{}" });
    expect(server.connections()).toBe(2);
  });

  it("refuses what it does not understand with BadAnswer and drops the connection", async () => {
    for (const reply of [
      "SMTP 220 hello\r\n\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno colon here\r\ncontent-length: 2\r\n\r\n{}",
      "HTTP/1.1 200 OK\r\n: no name\r\ncontent-length: 2\r\n\r\n{}",
      "HTTP/1.1 2000 OK\r\ncontent-length: 2\r\n\r\n{}",
      `${answer(200, "{}")}extra`,
    ]) {
      const server = await scripted((_request, socket) => socket.write(reply));
      const exchanges = server.exchanges();
      const failed = await exchanges.request("GET", "/", {}, undefined).catch((error) => error);
      expect(failed, reply).toBeInstanceOf(BadAnswer);
    }
  });

  it("fails an aborted request and does not reuse its connection", async () => {
    const server = await scripted((request, socket) => {
      if (!request.startsWith("POST /slow")) socket.write(answer(200, "{}"));
    });
    const exchanges = server.exchanges();
    const controller = new AbortController();
    const slow = exchanges.request("POST", "/slow", {}, "{}", controller.signal);
    setTimeout(() => controller.abort(), 20);
    const failed = await slow.catch((error) => error);
    expect(failed).toBeInstanceOf(ExchangeFailed);
    expect(failed.code).toBe("ABORT_ERR");
    expect(await exchanges.request("GET", "/", {}, undefined)).toEqual({ status: 200, body: "{}" });
    expect(server.connections()).toBe(2);
  });

  it("does not reuse a connection idle past its limit, closed by the server, or sent to unasked", async () => {
    const sockets: Array<Socket> = [];
    const server = await scripted((_request, socket) => {
      sockets.push(socket);
      socket.write(answer(200, "{}"));
    });
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const stale = server.exchanges(30);
    await stale.request("GET", "/", {}, undefined);
    await sleep(60);
    await stale.request("GET", "/", {}, undefined);
    expect(server.connections()).toBe(2);
    // Within the limit: the server closes the idle one, so the next request opens a new one.
    const kept = server.exchanges();
    await kept.request("GET", "/", {}, undefined);
    expect(server.connections()).toBe(3);
    sockets.at(-1)?.destroy();
    await sleep(30);
    await kept.request("GET", "/", {}, undefined);
    expect(server.connections()).toBe(4);
    // Bytes nobody asked for: the connection is dropped, never read as the next answer.
    sockets.at(-1)?.write(answer(500, '{"stale":true}'));
    await sleep(30);
    expect(await kept.request("GET", "/", {}, undefined)).toEqual({ status: 200, body: "{}" });
    expect(server.connections()).toBe(5);
    // And kept otherwise.
    await kept.request("GET", "/", {}, undefined);
    expect(server.connections()).toBe(5);
  });
});
