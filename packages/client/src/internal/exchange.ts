/**
 * JSON requests over a pool of keep-alive HTTP/1.1 connections, written
 * and read directly on `node:net` sockets. Node's `http` client (an
 * `Agent`, a `ClientRequest` and an `IncomingMessage` stream per request)
 * was most of a one-producer insert's time over the socket: against the
 * same `tay serve`, a request written as one socket write and its answer
 * parsed here took 0.74–2.0 ms at p50 where `node:http` took 1.5–3.3 ms
 * (2026-12-02, load 10–13, docs/benchmarks.md). Server-Sent Event streams
 * stay on `node:http` (Transport.open): they are few and long.
 *
 * Only what a Tay server sends is understood: a status line, headers with
 * `content-length` (every JSON answer has one) or else a body that ends
 * when the server closes (Node's own 4xx for a request it cannot parse),
 * and `connection: close`. Anything else is a `BadAnswer`, the connection
 * is dropped, and the caller's promise rejects: nothing is guessed.
 *
 * A connection idle longer than `idleMsMax` is closed rather than reused:
 * the server closes idle connections after 5 s (Server.ts), and a request
 * written on a connection the server is closing would be lost with no way
 * to tell whether it was done.
 */
import { connect, type Socket } from "node:net";

/** Where to connect. */
export type Endpoint =
  | { readonly socket: string }
  | { readonly host: string; readonly port: number };

/** A whole answer. */
export interface Answer {
  readonly status: number;
  readonly body: string;
}

/** The connection failed before the whole answer arrived. */
export class ExchangeFailed extends Error {
  readonly _tag = "ExchangeFailed";
  constructor(
    readonly code: string,
    detail: string,
  ) {
    super(detail);
    this.name = "ExchangeFailed";
  }
}

/** What arrived is not an HTTP/1.1 answer this client understands. */
export class BadAnswer extends Error {
  readonly _tag = "BadAnswer";
  constructor(detail: string) {
    super(detail);
    this.name = "BadAnswer";
  }
}

/** Kept below the server's 5 s keep-alive timeout. */
export const idleMsMax = 4_000;

const headerEnd = Buffer.from("\r\n\r\n");

/** An answer's head: its status, its body's length if stated, whether the server closes after it. */
interface Head {
  readonly status: number;
  readonly length: number | undefined;
  readonly close: boolean;
  /** Bytes of the head, its blank line included. */
  readonly size: number;
}

/** The head at the start of `bytes`: undefined while incomplete. */
export const parseHead = (bytes: Buffer): Head | BadAnswer | undefined => {
  const end = bytes.indexOf(headerEnd);
  if (end < 0)
    return bytes.length > 65_536 ? new BadAnswer("the answer's head is over 64 KiB") : undefined;
  const lines = bytes.subarray(0, end).toString("latin1").split("\r\n");
  const statusLine = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? "");
  if (statusLine === null)
    return new BadAnswer(`not an HTTP/1.1 status line: ${JSON.stringify(lines[0])}`);
  let length: number | undefined;
  let close = false;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) return new BadAnswer(`not a header line: ${JSON.stringify(line)}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-length") {
      if (!/^\d{1,15}$/.test(value))
        return new BadAnswer(`content-length ${JSON.stringify(value)}`);
      length = Number(value);
    } else if (name === "transfer-encoding") {
      return new BadAnswer(
        `transfer-encoding ${JSON.stringify(value)} (a JSON answer states its length)`,
      );
    } else if (name === "connection") {
      close = value
        .toLowerCase()
        .split(",")
        .some((token) => token.trim() === "close");
    }
  }
  return { status: Number(statusLine[1]), length, close, size: end + headerEnd.length };
};

/** One request on `socket`: resolves with its whole answer and whether the connection can be kept. */
const exchange = (
  socket: Socket,
  request: string,
  signal: AbortSignal | undefined,
): Promise<{ readonly answer: Answer; readonly keep: boolean }> =>
  new Promise((resolve, reject) => {
    let buffered: Buffer = Buffer.alloc(0);
    let head: Head | undefined;
    const settle = (outcome: { answer: Answer; keep: boolean } | Error) => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("error", onError);
      socket.off("close", onEnd);
      signal?.removeEventListener("abort", onAbort);
      if (outcome instanceof Error) {
        socket.destroy();
        reject(outcome);
      } else resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      if (head === undefined) {
        const parsed = parseHead(buffered);
        if (parsed === undefined) return;
        if (parsed instanceof BadAnswer) return settle(parsed);
        head = parsed;
      }
      if (head.length === undefined) return;
      const have = buffered.length - head.size;
      if (have < head.length) return;
      if (have > head.length) return settle(new BadAnswer("bytes after the answer's body"));
      const body = buffered.subarray(head.size).toString("utf8");
      settle({ answer: { status: head.status, body }, keep: !head.close });
    };
    const onEnd = () => {
      if (head !== undefined && head.length === undefined) {
        settle({
          answer: { status: head.status, body: buffered.subarray(head.size).toString("utf8") },
          keep: false,
        });
      } else
        settle(new ExchangeFailed("ECONNRESET", "the connection closed before the answer ended"));
    };
    const onError = (error: Error) => {
      const code = "code" in error && typeof error.code === "string" ? error.code : "Error";
      settle(new ExchangeFailed(code, error.message));
    };
    const onAbort = () => settle(new ExchangeFailed("ABORT_ERR", "the request was aborted"));
    socket.on("data", onData);
    socket.on("end", onEnd);
    socket.on("close", onEnd);
    socket.on("error", onError);
    if (signal !== undefined) {
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
    }
    socket.write(request);
  });

/** An idle connection and when it became idle. */
interface Idle {
  readonly socket: Socket;
  readonly since: number;
  /** Drops the connection if the server sends anything while no request is out. */
  readonly unasked: () => void;
}

export class Exchanges {
  private idle: Array<Idle> = [];
  private readonly busy = new Set<Socket>();
  private closed = false;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly host: string,
    private readonly idleMs: number = idleMsMax,
  ) {}

  /** Sends one request (`headers` as `name: value` lines) and resolves with its whole answer. */
  async request(
    method: string,
    path: string,
    headers: Readonly<Record<string, string>>,
    body: string | undefined,
    signal?: AbortSignal,
  ): Promise<Answer> {
    if (this.closed) throw new ExchangeFailed("ECLOSED", "the client was closed");
    const socket = this.take() ?? (await this.connect());
    const text = body ?? "";
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.host}\r\ncontent-length: ${Buffer.byteLength(text)}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    this.busy.add(socket);
    socket.ref();
    try {
      const { answer, keep } = await exchange(socket, `${head}\r\n${text}`, signal);
      if (keep && !this.closed) this.release(socket);
      else socket.destroy();
      return answer;
    } finally {
      this.busy.delete(socket);
    }
  }

  /** Closes every connection, idle or busy (a busy one's request fails). */
  close(): void {
    this.closed = true;
    for (const { socket } of this.idle) socket.destroy();
    for (const socket of this.busy) socket.destroy();
    this.idle = [];
  }

  /** The most recently idled connection still fresh enough to reuse; older ones are closed. */
  private take(): Socket | undefined {
    const now = Date.now();
    for (let idle = this.idle.pop(); idle !== undefined; idle = this.idle.pop()) {
      idle.socket.off("data", idle.unasked);
      if (!idle.socket.destroyed && now - idle.since < this.idleMs) return idle.socket;
      idle.socket.destroy();
    }
    return undefined;
  }

  private release(socket: Socket): void {
    // An idle connection does not keep the process alive, as with node:http's Agent.
    socket.unref();
    const unasked = () => socket.destroy();
    socket.on("data", unasked);
    this.idle.push({ socket, since: Date.now(), unasked });
  }

  private connect(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket =
        "socket" in this.endpoint
          ? connect(this.endpoint.socket)
          : connect({ host: this.endpoint.host, port: this.endpoint.port, noDelay: true });
      const onError = (error: Error) => {
        const code = "code" in error && typeof error.code === "string" ? error.code : "Error";
        reject(new ExchangeFailed(code, error.message));
      };
      socket.once("error", onError);
      socket.once("connect", () => {
        socket.off("error", onError);
        // An idle connection the server closes (or that fails) leaves the pool.
        socket.on("close", () => this.forget(socket));
        socket.on("error", () => this.forget(socket));
        resolve(socket);
      });
    });
  }

  private forget(socket: Socket): void {
    this.idle = this.idle.filter((idle) => idle.socket !== socket);
  }
}
