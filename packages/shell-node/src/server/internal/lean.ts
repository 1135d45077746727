/**
 * The lean path: the Unix socket's connections are read here first, and
 * the common request (a command or query of a fixed route, whole, with a
 * short known set of headers: internal/leanRequest.ts) is answered here,
 * one JSON answer in one socket write. node:http's `IncomingMessage`,
 * `ServerResponse`, their streams and events were the largest share of a
 * one-producer request's server JavaScript (docs/server.md, 2026-12-04).
 *
 * Anything else, at a request boundary, is handed to node:http with the
 * bytes not yet answered put back (`unshift`), and the connection is
 * node's from then on: streams, documents, parameters and queries, bodies
 * over the limit, `expect`, chunked bodies, and every malformed request,
 * which so gets the answer it gets today. A request left incomplete for
 * `incompleteMs` is handed over too, so a stalled client meets node's own
 * timeouts.
 */
// Any listening server: node:http's is one whatever its request and response classes.
import { STATUS_CODES } from "node:http";
import type { Server, Socket } from "node:net";
import { gathered } from "./gather.js";
import { errorJson, malformedRequestAnswer, parseBody } from "./http.js";
import { type Complete, parse } from "./leanRequest.js";
import type { Answer, Answering, Call, Route, Served } from "./routes.js";

/** How long a request may stay incomplete before node:http is given it (and its timeouts). */
export const incompleteMs = 1_000;

/** What the lean path serves with. */
export interface Lean {
  /** The routes it answers, by request line (`POST /v1/insert HTTP/1.1`). */
  readonly lines: ReadonlyMap<string, Route>;
  readonly served: Served;
  readonly bodyBytesMax: number;
  /** How long an idle connection is kept (node:http's `keepAliveTimeout`). */
  readonly keepAliveMs: number;
  /** Counts one answered request (tay_request_seconds). */
  readonly observe: (route: string, status: number, seconds: number) => void;
}

/** The request lines of `routes`' fixed paths (no `:param`), each with its route. */
export const linesOf = (routes: ReadonlyArray<Route>): Map<string, Route> => {
  const lines = new Map<string, Route>();
  for (const route of routes) {
    const line = `${route.method} ${route.path} HTTP/1.1`;
    if (!route.path.includes(":") && !lines.has(line)) lines.set(line, route);
  }
  return lines;
};

/**
 * Puts the lean path in front of `server`'s connections: node:http's own
 * connection listener is taken off and called for a connection handed
 * over. The server keeps listening, closing and tracking what it was
 * given as before; `closeAll` ends the connections the lean path holds.
 */
export const install = (server: Server, lean: Lean): { readonly closeAll: () => void } => {
  const nodeListeners = server.listeners("connection");
  server.removeAllListeners("connection");
  const held = new Set<Socket>();
  const handOver = (socket: Socket) => {
    held.delete(socket);
    for (const listener of nodeListeners) Reflect.apply(listener, server, [socket]);
  };
  server.on("connection", (socket: Socket) => {
    held.add(socket);
    socket.once("close", () => held.delete(socket));
    new LeanConnection(socket, lean, handOver).start();
  });
  return {
    closeAll: () => {
      for (const socket of held) socket.destroy();
      held.clear();
    },
  };
};

const noQuery = new URLSearchParams();
const noParams: ReadonlyArray<string> = [];

/** An answer to write, and whether the connection closes after it. */
interface Written {
  readonly status: number;
  /** The body's one line of JSON, its newline included. */
  readonly text: string;
  readonly close: boolean;
}

const refusal = (error: unknown, close: boolean): Written => {
  const { status, body } = errorJson(error);
  return { status, text: `${JSON.stringify(body)}\n`, close };
};

const isStreamed = (answer: Answer): answer is { readonly streamed: true } =>
  typeof answer === "object" && answer !== null && "streamed" in answer && answer.streamed === true;

/**
 * A lean request's answer, as node:http's path answers it (Server.ts):
 * a command waits for the gather first; a body that is no JSON closes the
 * connection after its refusal.
 */
const answerOf = async (
  route: Route,
  bytes: Buffer,
  session: string | undefined,
  response: Answering,
  served: Served,
): Promise<Written> => {
  try {
    if (route.method === "POST") await gathered();
    const body = parseBody(bytes, route.path);
    if (!body.ok) return refusal(body.error, true);
    const call: Call = {
      route: route.path,
      body: body.value,
      query: noQuery,
      params: noParams,
      session,
      response,
      stream: null,
    };
    const answer = await route.handle(call, served);
    if (isStreamed(answer)) throw new Error(`${route.path} streamed on the lean path`);
    // Written here, inside the guard: an answer that is no JSON is the server's defect, a 500.
    return { status: 200, text: `${JSON.stringify(answer)}\n`, close: false };
  } catch (error) {
    return refusal(error, false);
  }
};

// The status lines and fixed headers of each answer, made once per (status, close).
const heads = new Map<string, string>();

const headOf = (status: number, close: boolean, keepAliveMs: number): string => {
  const key = `${status}${close ? "c" : "k"}${keepAliveMs}`;
  let head = heads.get(key);
  if (head === undefined) {
    const connection = close
      ? "connection: close\r\n"
      : `connection: keep-alive\r\nkeep-alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n`;
    head = `HTTP/1.1 ${status} ${statusText(status)}\r\ncontent-type: application/json\r\n${connection}`;
    heads.set(key, head);
  }
  return head;
};

// node:http's own reason phrases, so a lean answer's status line reads as node's does.
const statusText = (status: number): string => STATUS_CODES[status] ?? "Unknown";

// The `date` header changes once a second: made once a second (as node:http does).
let dateSecond = -1;
let dateText = "";
const dateNow = (): string => {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
};

/** One connection while it is the lean path's: read, answered in order, one request at a time. */
class LeanConnection implements Answering {
  // Bytes read and not yet answered, from a request boundary.
  private pending: Buffer | undefined = undefined;
  private busy = false;
  private timeoutMs = 0;
  readonly writableFinished = false;

  constructor(
    private readonly socket: Socket,
    private readonly lean: Lean,
    private readonly handOver: (socket: Socket) => void,
  ) {}

  start(): void {
    this.socket.on("data", this.onData);
    this.socket.on("end", this.onEnd);
    this.socket.on("error", this.onError);
    this.socket.on("timeout", this.onTimeout);
    this.arm(this.lean.keepAliveMs);
  }

  /** A handler's `gone`: the connection closed before its answer. */
  get destroyed(): boolean {
    return this.socket.destroyed;
  }

  once(event: "close", listener: () => void): this {
    this.socket.once(event, listener);
    return this;
  }

  off(event: "close", listener: () => void): this {
    this.socket.off(event, listener);
    return this;
  }

  private readonly onData = (chunk: Buffer): void => {
    this.pending = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    if (!this.busy) {
      this.next();
      return;
    }
    // A client that pipelines without reading answers is read no further than one request ahead.
    if (this.pending.length > this.lean.bodyBytesMax + 2 * 4_096) this.socket.pause();
  };

  /** The client ended its side: as node:http does, end ours (an answer still due is not sent). */
  private readonly onEnd = (): void => {
    const pending = this.pending;
    this.pending = undefined;
    if (!this.socket.writable) return;
    // A request cut off by the end: node:http's parser refuses it so, through the server's clientError.
    if (pending !== undefined && !this.busy) this.socket.end(malformedRequestAnswer("Parse Error"));
    else this.socket.end();
  };

  private readonly onError = (): void => {
    this.socket.destroy();
  };

  private readonly onTimeout = (): void => {
    if (this.busy) return;
    if (this.pending === undefined) this.socket.destroy();
    else this.giveAway();
  };

  private arm(ms: number): void {
    if (this.timeoutMs === ms) return;
    this.timeoutMs = ms;
    this.socket.setTimeout(ms);
  }

  /** Answers the whole requests read, in order; hands over at the first that is not lean. */
  private next(): void {
    if (this.socket.isPaused()) this.socket.resume();
    const bytes = this.pending;
    if (bytes === undefined) {
      this.arm(this.lean.keepAliveMs);
      return;
    }
    const parsed = parse(bytes, this.lean.lines, this.lean.bodyBytesMax);
    if (parsed._tag === "HandOver") {
      this.giveAway();
      return;
    }
    if (parsed._tag === "Incomplete") {
      this.arm(incompleteMs);
      return;
    }
    this.arm(this.lean.keepAliveMs);
    this.pending = parsed.end < bytes.length ? bytes.subarray(parsed.end) : undefined;
    this.busy = true;
    void this.serve(parsed, bytes.subarray(parsed.bodyStart, parsed.end));
  }

  private async serve(request: Complete<Route>, body: Buffer): Promise<void> {
    const startedAt = performance.now();
    const route = request.entry;
    const written = await answerOf(route, body, request.session, this, this.lean.served);
    const close = written.close || request.close;
    if (!this.socket.writable) return;
    const text = written.text;
    this.socket.write(
      `${headOf(written.status, close, this.lean.keepAliveMs)}date: ${dateNow()}\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
    this.lean.observe(route.path, written.status, (performance.now() - startedAt) / 1000);
    if (close) {
      this.pending = undefined;
      this.socket.end();
      return;
    }
    // A client that does not read its answers is not read further until it does.
    if (this.socket.writableNeedDrain) {
      this.socket.pause();
      this.socket.once("drain", this.drained);
      return;
    }
    this.busy = false;
    this.next();
  }

  private readonly drained = (): void => {
    this.busy = false;
    this.next();
  };

  /** Hands the connection, and the bytes not yet answered, to node:http for good. */
  private giveAway(): void {
    const socket = this.socket;
    socket.off("data", this.onData);
    socket.off("end", this.onEnd);
    socket.off("error", this.onError);
    socket.off("timeout", this.onTimeout);
    socket.setTimeout(0);
    if (this.pending !== undefined) socket.unshift(this.pending);
    this.pending = undefined;
    this.handOver(socket);
  }
}
