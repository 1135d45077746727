/**
 * The requests the lean path (internal/lean.ts) answers itself, read from
 * the bytes at a request boundary: a request line found whole in its table
 * (`POST /v1/insert HTTP/1.1`: no query, no parameter, no stream), headers
 * of a short known list each at most once, a `host`, a `content-length`
 * within the body limit (none is 0; a GET has no body). Anything else, a
 * malformed request included, is `HandOver`: node:http reads it as it
 * reads every request, so its answers (400, 404, 413 ...) stay node's and
 * the server's, byte for byte. This reader only has to be right about what
 * it takes, not about what it refuses.
 */

/** Bytes the head of a lean request may have; a longer one is node:http's to take or refuse. */
export const headBytesMax = 4_096;

/** A whole request the lean path takes: its line's entry and where its body lies. */
export interface Complete<R> {
  readonly _tag: "Complete";
  readonly entry: R;
  /** The `x-tay-session` header, if sent. */
  readonly session: string | undefined;
  /** The client asked to close the connection after the answer (`connection: close`). */
  readonly close: boolean;
  readonly bodyStart: number;
  /** Where the request ends: the next one, pipelined, starts here. */
  readonly end: number;
}

/** What the bytes at a request boundary are. */
export type Parsed<R> =
  | Complete<R>
  | { readonly _tag: "Incomplete" }
  | { readonly _tag: "HandOver" };

const incomplete = { _tag: "Incomplete" } as const;
const handOver = { _tag: "HandOver" } as const;

const headEnd = Buffer.from("\r\n\r\n");

// Visible ASCII, space and tab; and CR only before LF, LF only after CR.
const strayByte = /[^\t\x20-\x7e\r\n]|\r(?!\n)|(?<!\r)\n/;
const decimal = /^[0-9]{1,10}$/;

/** The headers of a request, as far as the lean path cares. */
interface Headers {
  host: boolean;
  length: number | undefined;
  close: boolean | undefined;
  session: string | undefined;
}

// Headers a lean request may carry: those the client and curl send. Each
// other (transfer-encoding, expect, upgrade, authorization ...) hands over.
const ignored = new Set(["content-type", "accept", "user-agent"]);

/** Takes one header line into `headers`; false if the request is not a lean one. */
const takeHeader = (headers: Headers, line: string): boolean => {
  const colon = line.indexOf(":");
  if (colon <= 0) return false;
  const name = line.slice(0, colon).toLowerCase();
  const value = line.slice(colon + 1).trim();
  switch (name) {
    case "host":
      if (headers.host) return false;
      headers.host = true;
      return true;
    case "content-length":
      if (headers.length !== undefined || !decimal.test(value)) return false;
      headers.length = Number(value);
      return true;
    case "connection": {
      const token = value.toLowerCase();
      if (headers.close !== undefined || (token !== "close" && token !== "keep-alive")) {
        return false;
      }
      headers.close = token === "close";
      return true;
    }
    case "x-tay-session":
      if (headers.session !== undefined) return false;
      headers.session = value;
      return true;
    default:
      return ignored.has(name);
  }
};

/** The head's headers (the lines after the request line), or undefined to hand over. */
const headersOf = (head: string, from: number): Headers | undefined => {
  const headers: Headers = { host: false, length: undefined, close: undefined, session: undefined };
  let start = from;
  while (start < head.length) {
    const next = head.indexOf("\r\n", start);
    const stop = next < 0 ? head.length : next;
    if (!takeHeader(headers, head.slice(start, stop))) return undefined;
    start = stop + 2;
  }
  return headers.host ? headers : undefined;
};

/**
 * What the bytes at a request boundary hold: a whole lean request (its
 * entry in `lines`, keyed by the request line), not all of one yet, or
 * something node:http must read. `bytes` starts at the boundary.
 */
export const parse = <R>(
  bytes: Buffer,
  lines: ReadonlyMap<string, R>,
  bodyBytesMax: number,
): Parsed<R> => {
  const end = bytes.indexOf(headEnd);
  if (end < 0) return bytes.length > headBytesMax ? handOver : incomplete;
  if (end > headBytesMax) return handOver;
  const head = bytes.toString("latin1", 0, end);
  if (strayByte.test(head)) return handOver;
  const lineEnd = head.indexOf("\r\n");
  const line = lineEnd < 0 ? head : head.slice(0, lineEnd);
  const entry = lines.get(line);
  if (entry === undefined) return handOver;
  const headers = lineEnd < 0 ? undefined : headersOf(head, lineEnd + 2);
  if (headers === undefined) return handOver;
  const length = headers.length ?? 0;
  if (length > bodyBytesMax || (length > 0 && line.startsWith("GET "))) return handOver;
  const bodyStart = end + headEnd.length;
  if (bytes.length < bodyStart + length) return incomplete;
  return {
    _tag: "Complete",
    entry,
    session: headers.session,
    close: headers.close === true,
    bodyStart,
    end: bodyStart + length,
  };
};
