/**
 * HTTP plumbing of the server: reading a bounded JSON body, writing one
 * JSON answer, and the answer for every error (a refusal of the request,
 * an engine refusal, a failure of the store, a defect), always one line of
 * JSON: `{"error": {"_tag", "message", ...}}`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Json, JsonObject } from "@tay/client";
import * as Described from "../../disk/Described.js";
import { BodyTooLarge, MalformedJson, type RequestError } from "../ServerError.js";

/** A body read and parsed, or why not. */
export type Body =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: MalformedJson | BodyTooLarge };

/**
 * Reads the body up to `limit` bytes and parses it as JSON (an empty body
 * is `null`). Over the limit, the rest is not read: the answer closes the
 * connection.
 */
export const readBody = (request: IncomingMessage, route: string, limit: number): Promise<Body> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = [];
    let length = 0;
    let done = false;
    const finish = (body: Body) => {
      if (done) return;
      done = true;
      resolve(body);
    };
    request.on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        finish({ ok: false, error: new BodyTooLarge({ route, limit }) });
        request.pause();
        return;
      }
      chunks.push(chunk);
    });
    request.on("error", () =>
      finish({ ok: false, error: new MalformedJson({ route, detail: "the body was cut off" }) }),
    );
    request.on("end", () => {
      if (done) return;
      finish(
        parseBody(
          chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks),
          route,
        ),
      );
    });
  });

/**
 * The body, if all of it has arrived: by the check phase after its arrival
 * a body that came with its head has been parsed into the request's
 * buffer, and is taken in one `read()` without the `data` and `end` events
 * (and the promise) of reading it as a stream. Undefined while more is to
 * come (or someone already reads it): `readBody` then.
 */
export const takeBody = (
  request: IncomingMessage,
  route: string,
  limit: number,
): Body | undefined => {
  if (!request.complete || request.readableFlowing !== null || request.readableDidRead) {
    return undefined;
  }
  if (request.readableLength > limit) {
    request.pause();
    return { ok: false, error: new BodyTooLarge({ route, limit }) };
  }
  if (request.readableLength === 0) return { ok: true, value: null };
  const bytes: unknown = request.read();
  // Bytes unless someone set an encoding on the request, which nothing here does.
  if (!Buffer.isBuffer(bytes)) {
    return {
      ok: false,
      error: new MalformedJson({ route, detail: "the body was not read as bytes" }),
    };
  }
  return parseBody(bytes, route);
};

// One decoder for every body: a decode without `stream` starts afresh.
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A whole body's JSON (an empty body is `null`), or why it is none. */
export const parseBody = (bytes: Buffer, route: string): Body => {
  if (bytes.length === 0) return { ok: true, value: null };
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, error: new MalformedJson({ route, detail: "it is not UTF-8" }) };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const detail = error instanceof Error ? error.message : "unparseable";
    return { ok: false, error: new MalformedJson({ route, detail }) };
  }
};

/** Writes `body` as the whole answer, one line of JSON. */
export const sendJson = (response: ServerResponse, status: number, body: Json): void => {
  if (response.headersSent || response.destroyed) return;
  const text = `${JSON.stringify(body)}\n`;
  // A flat list of names and values: Node copies an object's headers into one first.
  response.writeHead(status, [
    "content-type",
    "application/json",
    "content-length",
    String(Buffer.byteLength(text)),
  ]);
  response.end(text);
};

/** An error's JSON: its tag, its one-line message, and the fields a program switches on. */
export const errorJson = (
  error: unknown,
): { readonly status: number; readonly body: JsonObject } => {
  if (isRequestError(error)) {
    const field = error._tag === "InvalidRequest" ? { field: error.field } : {};
    return {
      status: error.status,
      body: { error: { _tag: error._tag, message: error.message, ...field } },
    };
  }
  if (isTagged(error)) {
    const message = Described.describes(error) ? Described.message(error) : String(error.message);
    const rejection = rejectionOf(error);
    return {
      status: statusOf(error._tag),
      body: {
        error: { _tag: error._tag, message, ...(rejection === undefined ? {} : { rejection }) },
      },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    status: 500,
    body: { error: { _tag: "Defect", message: `Defect: ${Described.oneLine(message)}` } },
  };
};

const requestTags = new Set([
  "MalformedJson",
  "BodyTooLarge",
  "UnknownRoute",
  "MethodNotAllowed",
  "InvalidRequest",
  "Unauthorized",
]);

const isRequestError = (error: unknown): error is RequestError =>
  isTagged(error) && requestTags.has(error._tag) && "status" in error;

const isTagged = (error: unknown): error is { readonly _tag: string; readonly message: unknown } =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string";

/** A `Rejected`'s rejection as JSON (core's rejections hold strings and numbers only). */
const rejectionOf = (error: object): JsonObject | undefined => {
  if (!("rejection" in error) || typeof error.rejection !== "object" || error.rejection === null) {
    return undefined;
  }
  const fields: Record<string, Json> = {};
  for (const [key, value] of Object.entries(error.rejection)) {
    if (typeof value === "string" || typeof value === "number") fields[key] = value;
  }
  return fields;
};

/** The status of an engine error: refusals are the caller's, the rest the server's. */
export const statusOf = (tag: string): number => {
  switch (tag) {
    case "Rejected":
      return 409;
    case "InvalidArgument":
      return 400;
    // What was asked for (a subscription's `from`) was removed by a compaction.
    case "Compacted":
      return 410;
    case "PendingFull":
    case "StoreClosed":
    case "WriterFailed":
    case "Overloaded":
    case "Unhealthy":
      return 503;
    default:
      return 500;
  }
};

/** Answers `error` as its JSON. */
export const sendError = (response: ServerResponse, error: unknown): void => {
  const { status, body } = errorJson(error);
  sendJson(response, status, body);
};

/**
 * The whole answer to bytes that are no HTTP request (node:http's parser
 * refused them with `reason`): a 400 with one typed JSON line, and the
 * connection closed.
 */
export const malformedRequestAnswer = (reason: string): string => {
  const { body } = errorJson({ _tag: "MalformedRequest", message: `MalformedRequest: ${reason}` });
  const text = `${JSON.stringify(body)}\n`;
  return `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`;
};
