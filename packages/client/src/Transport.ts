/**
 * HTTP/1.1 connections to a Tay server, over its Unix socket or TCP (with
 * the bearer token): JSON requests and answers on a pool of keep-alive
 * `node:net` connections (internal/exchange.ts), and event streams on
 * `node:http`. Node's modules only, which Bun and Deno provide too.
 *
 * Errors are tagged `Error`s, as the embedded engine's: the server's own
 * (`Rejected`, `InvalidRequest`, `StoreClosed`, ...: `_tag` and `message`
 * as the server said them), `ConnectionFailed` when the server cannot be
 * reached, `BadResponse` when its answer is not the protocol.
 */
import { Agent, type IncomingMessage, request as httpRequest } from "node:http";
import type { Rejection } from "@tay/core";
import { BadAnswer, type Endpoint, ExchangeFailed, Exchanges } from "./internal/exchange.js";
import * as Shape from "./Shape.js";
import * as Wire from "./Wire.js";

/** An error the server answered with: its tag, its one line, the rejection of a `Rejected`. */
export class ServerError extends Error {
  constructor(
    readonly _tag: string,
    message: string,
    readonly status: number,
    readonly rejection?: Rejection.Rejection,
    readonly field?: string,
  ) {
    super(message);
    this.name = _tag;
  }
}

/** The server could not be reached (no socket, refused, reset). */
export class ConnectionFailed extends Error {
  readonly _tag = "ConnectionFailed";
  constructor(
    readonly address: string,
    readonly code: string,
    detail: string,
  ) {
    super(`ConnectionFailed ${address}: ${code}: ${detail}; is a server running (tay serve)?`);
    this.name = "ConnectionFailed";
  }
}

/** The server's answer is not the protocol's. */
export class BadResponse extends Error {
  readonly _tag = "BadResponse";
  constructor(
    readonly route: string,
    readonly detail: string,
  ) {
    super(`BadResponse ${route}: ${detail}`);
    this.name = "BadResponse";
  }
}

/** A value given to a command that is no value (a function, a `Date`, `NaN`): nothing was sent. */
export class InvalidValue extends Error {
  readonly _tag = "InvalidValue";
  constructor(readonly error: Shape.ShapeError) {
    super(`InvalidValue: ${Shape.explain(error)}; nothing was sent`);
    this.name = "InvalidValue";
  }
}

const fieldOf = (error: unknown, field: string): unknown =>
  typeof error === "object" && error !== null ? Reflect.get(error, field) : undefined;

/**
 * Whether asking again would fail the same way forever: the server
 * refused the request itself (a 4xx other than 408 and 429: a wrong
 * token, an option it does not take, a route it does not have), or the
 * client was closed (`ConnectionFailed` `ECLOSED`). Everything else (the
 * server unreachable, restarting, closing or full: a connection failure,
 * a 5xx, 408, 429, an answer that is not the protocol, as a proxy's
 * during a restart) may pass. What the remote worker's claims and a
 * client's `watch` ask again on (2026-12-06).
 */
export const refusedForGood = (error: unknown): boolean => {
  const status = fieldOf(error, "status");
  if (typeof status === "number") {
    return status >= 400 && status < 500 && status !== 408 && status !== 429;
  }
  return fieldOf(error, "_tag") === "ConnectionFailed" && fieldOf(error, "code") === "ECLOSED";
};

/** Where the server is. */
export type Address =
  | { readonly socket: string }
  | { readonly host: string; readonly port: number; readonly token: string | undefined };

/** The address as errors name it: the socket's path, or host:port. */
export const addressText = (address: Address): string =>
  "socket" in address ? address.socket : `${address.host}:${address.port}`;

const errorCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "Error";

const endpointOf = (address: Address): Endpoint =>
  "socket" in address ? { socket: address.socket } : { host: address.host, port: address.port };

/**
 * How long an event stream may bring no byte before its connection is
 * dropped as dead: three of the server's pings (a comment every 15 s, sent
 * however quiet the stream). A server whose host died says nothing, and
 * TCP notices nothing on a connection the client never writes to.
 */
export const streamIdleMsDefault = 3 * Wire.streamPingMs;

export class Transport {
  // Event streams (few, long) go through node:http; JSON requests through `exchanges`.
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  private readonly exchanges: Exchanges;

  // The headers of every JSON request, made once rather than per request.
  private readonly authHeaders: Readonly<Record<string, string>>;
  private readonly typedHeaders: Readonly<Record<string, string>>;

  constructor(
    readonly address: Address,
    /** How long an event stream may bring no byte before it is taken for dead (`streamIdleMsDefault`). */
    private readonly streamIdleMs: number = streamIdleMsDefault,
  ) {
    this.authHeaders = this.auth();
    this.typedHeaders = { ...this.authHeaders, "content-type": "application/json" };
    this.exchanges = new Exchanges(
      endpointOf(address),
      "socket" in address ? "localhost" : `${address.host}:${address.port}`,
    );
  }

  private auth(): Record<string, string> {
    return "token" in this.address && this.address.token !== undefined
      ? { authorization: `Bearer ${this.address.token}` }
      : {};
  }

  private options(method: string, path: string, headers: Record<string, string>) {
    const auth = this.auth();
    const where =
      "socket" in this.address
        ? { socketPath: this.address.socket }
        : { host: this.address.host, port: this.address.port };
    return { ...where, method, path, agent: this.agent, headers: { ...auth, ...headers } };
  }

  /** Opens a request; resolves with the response once its headers arrived. */
  open(
    method: string,
    path: string,
    body: string | undefined,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<IncomingMessage> {
    const typed = body === undefined ? {} : { "content-type": "application/json" };
    return new Promise((resolve, reject) => {
      let answered: IncomingMessage | undefined;
      const sent = httpRequest(this.options(method, path, { ...typed, ...headers }), (response) => {
        answered = response;
        resolve(response);
      });
      sent.on("error", (error) => {
        reject(
          signal?.aborted === true
            ? error
            : new ConnectionFailed(addressText(this.address), errorCode(error), error.message),
        );
      });
      // The socket's idle timer, from the request to the stream's end: any byte (an event, a
      // ping) restarts it. Before the answer's head it fails the open, after it the stream;
      // unless the reader is behind (bytes wait unread: the socket is paused for the reader,
      // not silent), then it only starts again. On the socket itself: a request forwards
      // only its socket's first timeout.
      sent.once("socket", (socket) => {
        const idle = () => {
          if (answered !== undefined && answered.readableLength > 0) {
            socket.setTimeout(this.streamIdleMs);
            return;
          }
          const detail = `${path}: no byte in ${this.streamIdleMs} ms from a server that pings every 15 s; the stream was dropped`;
          const error = new ConnectionFailed(addressText(this.address), "ETIMEDOUT", detail);
          if (answered === undefined) sent.destroy(error);
          else answered.destroy(error);
        };
        socket.setTimeout(this.streamIdleMs);
        socket.on("timeout", idle);
        // A socket kept alive for another request takes neither along.
        sent.once("close", () => {
          socket.off("timeout", idle);
          socket.setTimeout(0);
        });
      });
      if (signal !== undefined) {
        if (signal.aborted) sent.destroy();
        const abort = () => sent.destroy();
        signal.addEventListener("abort", abort, { once: true });
        // A signal outlives many requests (a worker's claims): each takes its listener away.
        sent.once("close", () => signal.removeEventListener("abort", abort));
      }
      sent.end(body);
    });
  }

  /** A JSON request and its checked answer; an error answer rejects with its `ServerError`. */
  json<A>(
    method: string,
    path: string,
    body: Wire.Json | undefined,
    decoder: Shape.Decoder<A>,
    options: { readonly headers?: Record<string, string>; readonly signal?: AbortSignal } = {},
  ): Promise<A> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    return this.jsonText(method, path, text, decoder, options);
  }

  /** `json` with the body already serialized (a batch laid out from its jobs' texts). */
  async jsonText<A>(
    method: string,
    path: string,
    text: string | undefined,
    decoder: Shape.Decoder<A>,
    options: { readonly headers?: Record<string, string>; readonly signal?: AbortSignal } = {},
  ): Promise<A> {
    const base = text === undefined ? this.authHeaders : this.typedHeaders;
    const headers = options.headers === undefined ? base : { ...base, ...options.headers };
    const answer = await this.exchanges
      .request(method, path, headers, text, options.signal)
      .catch((error: unknown) => {
        throw error instanceof ExchangeFailed && options.signal?.aborted !== true
          ? new ConnectionFailed(addressText(this.address), error.code, error.message)
          : error instanceof BadAnswer
            ? new BadResponse(path, error.message)
            : error;
      });
    const parsed = parseJson(answer.body, path);
    if (answer.status >= 400) throw serverError(parsed, path, answer.status);
    const decoded = Shape.decode(decoder, parsed, "answer");
    if (!decoded.ok) throw new BadResponse(path, Shape.explain(decoded.error));
    return decoded.value;
  }

  /**
   * The events of the stream at `path` (`/v1/events`, `/v1/session`), as
   * they arrive, ending when the server ends the stream. Every way it can
   * fail is a typed error: an error answer instead of a stream (a wrong
   * token, a bad `from`) is its `ServerError`, as a JSON request's is; an
   * `error` event (the server's subscription failed, `Compacted`) is a
   * `ServerError` too; a connection dropped before the stream's end (the
   * server killed) is `ConnectionFailed`. Before 2026-12-06 an error
   * answer or an `error` event ended the stream as if the server had
   * closed it. Aborting `signal` rejects with the abort's own error.
   */
  async *stream(path: string, signal: AbortSignal): AsyncGenerator<ServerEvent> {
    const response = await this.open("GET", path, undefined, {}, signal);
    const failed = (error: unknown): unknown =>
      signal.aborted || error instanceof ConnectionFailed || !(error instanceof Error)
        ? error
        : new ConnectionFailed(addressText(this.address), errorCode(error), error.message);
    const status = response.statusCode ?? 0;
    if (status !== 200) {
      const body = await answerText(response, path).catch((error: unknown) => {
        throw failed(error);
      });
      throw streamRefusal(body, path, status);
    }
    try {
      for await (const message of events(response)) {
        if (message.event === "error") throw streamError(message.data, path);
        yield message;
      }
    } catch (error) {
      throw error instanceof ServerError ? error : failed(error);
    }
  }

  /** Closes the connections (a request still out fails with `ConnectionFailed`). */
  close(): void {
    this.exchanges.close();
    this.agent.destroy();
  }
}

const parseJson = (text: string, path: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    throw new BadResponse(path, "the answer is not JSON");
  }
};

/** The most of an error answer to a stream request that is read: the server's are one line. */
const refusalBytesMax = 65_536;

/** The whole body of an error answer to a stream request (`BadResponse` past `refusalBytesMax`). */
const answerText = async (response: IncomingMessage, path: string): Promise<string> => {
  const chunks: Array<Buffer> = [];
  let length = 0;
  for await (const chunk of response) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    length += bytes.length;
    if (length > refusalBytesMax) {
      response.destroy();
      throw new BadResponse(path, `an error answer over ${refusalBytesMax} bytes`);
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString("utf8");
};

/** The error a stream request was answered with instead of its stream. */
const streamRefusal = (body: string, path: string, status: number): Error => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return new BadResponse(path, `status ${status} instead of a stream, and not JSON`);
  }
  return serverError(parsed, path, status);
};

/**
 * The `ServerError` of a stream's `error` event (`{_tag, message,
 * status}`; a server before 2026-12-06 sent no status: 500 then).
 */
const streamError = (data: unknown, path: string): Error => {
  const decoded = Shape.decode(Wire.streamError, data, "error");
  if (!decoded.ok) return new BadResponse(path, Shape.explain(decoded.error));
  const { _tag, message, status } = decoded.value;
  return new ServerError(_tag, message, status ?? 500);
};

/** The `ServerError` of an error answer's body (`BadResponse` when it is not one). */
export const serverError = (parsed: unknown, path: string, status: number): Error => {
  const decoded = Shape.decode(Wire.errorBody, parsed, "answer");
  if (!decoded.ok)
    return new BadResponse(path, `status ${status}: ${Shape.explain(decoded.error)}`);
  const { error } = decoded.value;
  const rejection =
    error.rejection === undefined
      ? undefined
      : Shape.decode(Wire.rejection, error.rejection, "rejection");
  return new ServerError(
    error._tag,
    error.message,
    status,
    rejection?.ok === true ? rejection.value : undefined,
    error.field,
  );
};

/** One Server-Sent Event. */
export interface ServerEvent {
  readonly event: string;
  readonly data: unknown;
}

/**
 * The events of a stream's response, as they arrive; ends when the
 * response ends. Comments (`: ping`) are skipped.
 */
export async function* events(response: IncomingMessage): AsyncGenerator<ServerEvent> {
  let buffered = "";
  for await (const chunk of response) {
    buffered += chunk instanceof Buffer ? chunk.toString("utf8") : String(chunk);
    for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const parsed = parseEvent(block);
      if (parsed !== undefined) yield parsed;
    }
  }
}

const parseEvent = (block: string): ServerEvent | undefined => {
  let event = "message";
  const data: Array<string> = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  if (data.length === 0) return undefined;
  try {
    return { event, data: JSON.parse(data.join("\n")) };
  } catch {
    return undefined;
  }
};
