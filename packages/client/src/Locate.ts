/**
 * Where a store's server listens: the socket path its LOCK records, or,
 * when LOCK says nothing (a server that predates the field, LOCK caught
 * mid-rewrite), the path a server of this version would choose.
 *
 * A Unix socket's address holds at most 107 bytes (108 with its NUL on
 * Linux), so a deep data directory cannot hold its socket. The server then
 * listens in a private directory of the system's temporary directory,
 * named after a hash of the data directory's real path: a client given
 * the data directory finds it the same way, through LOCK or by computing
 * the same name (decision 2026-12-01, docs/server.md).
 */
import { createHash } from "node:crypto";
import { readFileSync, realpathSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import * as Shape from "./Shape.js";

/** The socket's name inside the data directory. */
export const socketName = "tay.sock";

/** The bearer token's file inside the data directory (0600). */
export const tokenName = "server-token";

/**
 * Bytes a socket path may have here: the kernel's 107, less what the
 * server's staging name (a private directory beside it) adds.
 */
export const socketPathBytesMax = 90;

const realPath = (directory: string): string => {
  try {
    return realpathSync(directory);
  } catch {
    return resolve(directory);
  }
};

const uid = (): string => {
  try {
    return String(userInfo().uid);
  } catch {
    return "user";
  }
};

/** The private directory of fallback sockets for this user (mode 0700). */
export const fallbackDirectory = (): string => join(tmpdir(), `tay-${uid()}`);

/**
 * The socket path a server of `directory` chooses: inside it when the path
 * fits, else in `fallbackDirectory()` under a hash of its real path.
 */
export const socketPathFor = (directory: string): string => {
  const inside = join(resolve(directory), socketName);
  if (Buffer.byteLength(inside) <= socketPathBytesMax) return inside;
  const digest = createHash("sha256").update(realPath(directory)).digest("hex").slice(0, 32);
  return join(fallbackDirectory(), `${digest}.sock`);
};

/** What LOCK says of the server holding the store, when it says it. */
export interface ServedAt {
  readonly socket: string;
  /** The TCP address (`host:port`), when it also listens on one. */
  readonly listen: string | null;
  /** The holder's pid. */
  readonly pid: number;
}

const lockShape = Shape.struct({
  pid: Shape.integer(),
  server: Shape.optional(
    Shape.struct({ socket: Shape.string, listen: Shape.optional(Shape.string) }),
  ),
});

/** LOCK's server field, or null when LOCK is missing, unreadable or names no server. */
export const servedAt = (directory: string): ServedAt | null => {
  let text: string;
  try {
    text = readFileSync(join(directory, "LOCK"), "utf8");
  } catch {
    return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const decoded = Shape.decode(lockShape, parsed, "LOCK");
  if (!decoded.ok || decoded.value.server === undefined) return null;
  const { server, pid } = decoded.value;
  return { socket: server.socket, listen: server.listen ?? null, pid };
};

/** The socket to try for `directory`: LOCK's, else the one a server would choose. */
export const socketOf = (directory: string): string =>
  servedAt(directory)?.socket ?? socketPathFor(directory);
