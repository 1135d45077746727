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
  // Lines are found with indexOf rather than split: no array, no string per line but the headers'.
  const text = bytes.toString("latin1", 0, end);
  const firstEnd = text.indexOf("\r\n");
  const first = firstEnd < 0 ? text : text.slice(0, firstEnd);
  const statusLine = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(first);
  if (statusLine === null)
    return new BadAnswer(`not an HTTP/1.1 status line: ${JSON.stringify(first)}`);
  let length: number | undefined;
  let close = false;
  for (let start = firstEnd; start >= 0; ) {
    const next = text.indexOf("\r\n", start + 2);
    const line = text.slice(start + 2, next < 0 ? text.length : next);
    start = next;
    const colon = line.indexOf(":");
    if (colon <= 0) return new BadAnswer(`not a header line: ${JSON.stringify(line)}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    if (name === "content-length") {
      const value = line.slice(colon + 1).trim();
      if (!/^\d{1,15}$/.test(value))
        return new BadAnswer(`content-length ${JSON.stringify(value)}`);
      length = Number(value);
    } else if (name === "transfer-encoding") {
      const value = line.slice(colon + 1).trim();
      return new BadAnswer(
        `transfer-encoding ${JSON.stringify(value)} (a JSON answer states its length)`,
      );
    } else if (name === "connection") {
      close = line
        .slice(colon + 1)
        .toLowerCase()
        .split(",")
        .some((token: string) => token.trim() === "close");
    }
  }
  return { status: Number(statusLine[1]), length, close, size: end + headerEnd.length };
};

/** What a connection's reader settles a request with. */
type Outcome = { readonly answer: Answer; readonly keep: boolean } | Error;

/** The request a connection carries now: whom to answer, and its abort listener. */
interface Pending {
  readonly settle: (outcome: Outcome) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
}

const codeOf = (error: Error): string =>
  "code" in error && typeof error.code === "string" ? error.code : "Error";

/**
 * One keep-alive connection and its one reader, attached when it connects
 * and kept for its life: a request sets `pending` and the reader settles
 * it. Listeners added and removed per request (four of them, each a
 * closure, and a buffer) cost the one-producer path more CPU than the
 * parse; a connection idle (`pending` undefined) that is sent anything is
 * dropped, never read as the next answer.
 */
class Connection {
  private buffered: Buffer | undefined = undefined;
  private head: Head | undefined = undefined;
  private pending: Pending | undefined = undefined;
  /** When the connection last became idle. */
  since = 0;

  constructor(
    readonly socket: Socket,
    private readonly gone: (connection: Connection) => void,
  ) {
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("end", () => this.onEnd());
    socket.on("close", () => this.onEnd());
    socket.on("error", (error: Error) => this.onError(error));
  }

  /** Sends `request`; resolves with its answer and whether the connection can be kept. */
  send(request: string, signal: AbortSignal | undefined): Promise<Outcome> {
    return new Promise((resolve) => {
      const onAbort =
        signal === undefined
          ? undefined
          : () => this.settle(new ExchangeFailed("ABORT_ERR", "the request was aborted"));
      this.pending = { settle: resolve, signal, onAbort };
      if (signal !== undefined && onAbort !== undefined) {
        if (signal.aborted) return onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
      }
      this.socket.write(request);
    });
  }

  private settle(outcome: Outcome): void {
    const pending = this.pending;
    this.pending = undefined;
    this.buffered = undefined;
    this.head = undefined;
    if (pending === undefined) return;
    if (pending.onAbort !== undefined)
      pending.signal?.removeEventListener("abort", pending.onAbort);
    if (outcome instanceof Error) this.socket.destroy();
    pending.settle(outcome);
  }

  private onData(chunk: Buffer): void {
    // Bytes nobody asked for: never to be read as the next request's answer.
    if (this.pending === undefined) {
      this.socket.destroy();
      return;
    }
    const buffered = this.buffered === undefined ? chunk : Buffer.concat([this.buffered, chunk]);
    this.buffered = buffered;
    if (this.head === undefined) {
      const parsed = parseHead(buffered);
      if (parsed === undefined) return;
      if (parsed instanceof BadAnswer) {
        this.settle(parsed);
        return;
      }
      this.head = parsed;
    }
    const head = this.head;
    if (head.length === undefined) return;
    const have = buffered.length - head.size;
    if (have < head.length) return;
    if (have > head.length) {
      this.settle(new BadAnswer("bytes after the answer's body"));
      return;
    }
    const body = buffered.toString("utf8", head.size);
    this.settle({ answer: { status: head.status, body }, keep: !head.close });
  }

  private onEnd(): void {
    const head = this.head;
    const buffered = this.buffered;
    if (this.pending === undefined) this.gone(this);
    else if (head !== undefined && head.length === undefined && buffered !== undefined) {
      const body = buffered.toString("utf8", head.size);
      this.settle({ answer: { status: head.status, body }, keep: false });
    } else
      this.settle(
        new ExchangeFailed("ECONNRESET", "the connection closed before the answer ended"),
      );
  }

  private onError(error: Error): void {
    if (this.pending === undefined) this.gone(this);
    else this.settle(new ExchangeFailed(codeOf(error), error.message));
  }
}

export class Exchanges {
  private idle: Array<Connection> = [];
  private readonly busy = new Set<Connection>();
  private closed = false;
  private readonly forget = (connection: Connection): void => {
    const index = this.idle.indexOf(connection);
    if (index >= 0) this.idle.splice(index, 1);
  };

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
    const connection = this.take() ?? (await this.connect());
    const text = body ?? "";
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.host}\r\ncontent-length: ${Buffer.byteLength(text)}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    this.busy.add(connection);
    connection.socket.ref();
    const outcome = await connection.send(`${head}\r\n${text}`, signal);
    this.busy.delete(connection);
    if (outcome instanceof Error) throw outcome;
    if (outcome.keep && !this.closed) this.release(connection);
    else connection.socket.destroy();
    return outcome.answer;
  }

  /** Closes every connection, idle or busy (a busy one's request fails). */
  close(): void {
    this.closed = true;
    for (const { socket } of this.idle) socket.destroy();
    for (const { socket } of this.busy) socket.destroy();
    this.idle = [];
  }

  /** The most recently idled connection still fresh enough to reuse; older ones are closed. */
  private take(): Connection | undefined {
    const now = Date.now();
    for (let idle = this.idle.pop(); idle !== undefined; idle = this.idle.pop()) {
      if (!idle.socket.destroyed && now - idle.since < this.idleMs) return idle;
      idle.socket.destroy();
    }
    return undefined;
  }

  private release(connection: Connection): void {
    // An idle connection does not keep the process alive, as with node:http's Agent.
    connection.socket.unref();
    connection.since = Date.now();
    this.idle.push(connection);
  }

  private connect(): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket =
        "socket" in this.endpoint
          ? connect(this.endpoint.socket)
          : connect({ host: this.endpoint.host, port: this.endpoint.port, noDelay: true });
      const onError = (error: Error) => reject(new ExchangeFailed(codeOf(error), error.message));
      socket.once("error", onError);
      socket.once("connect", () => {
        socket.off("error", onError);
        resolve(new Connection(socket, this.forget));
      });
    });
  }
}
