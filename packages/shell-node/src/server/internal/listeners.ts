/**
 * Where the server listens: its Unix socket (mode 0600, created in a
 * private directory and renamed into place, so no other user can connect
 * in between) and, optionally, a TCP address.
 */
import { chmod, mkdir, mkdtemp, rename, rmdir, stat, unlink } from "node:fs/promises";
// Any listening server: node:http's is one whatever its request and response classes.
import type { Server } from "node:net";
import { basename, dirname, join } from "node:path";
import { Locate } from "@tay/client";
import { InvalidListen, ListenFailed } from "../ServerError.js";

/** A TCP address to listen on. */
export interface TcpAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * `PORT` (loopback, 127.0.0.1) or `HOST:PORT` (as named: `0.0.0.0:8080`
 * listens on every interface because the operator said so).
 */
export const parseListen = (value: string): TcpAddress | InvalidListen => {
  const match = /^(?:(\[[0-9a-fA-F:]+\]|[^:]+):)?([0-9]{1,5})$/.exec(value);
  const port = match === null ? Number.NaN : Number(match[2]);
  if (match === null || !(port >= 0 && port <= 65_535)) return new InvalidListen({ value });
  const host = (match[1] ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1");
  return { host, port };
};

const errorCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "Error";

const listenOn = (server: Server, target: string | TcpAddress): Promise<void> =>
  new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    server.once("error", failed);
    const done = () => {
      server.off("error", failed);
      resolve();
    };
    if (typeof target === "string") server.listen(target, done);
    else server.listen(target.port, target.host, done);
  });

/** Makes the fallback directory (0700), refusing one that is not this user's alone. */
const privateDirectory = async (path: string): Promise<void> => {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const info = await stat(path);
  if (
    (info.mode & 0o077) !== 0 ||
    (process.getuid !== undefined && info.uid !== process.getuid())
  ) {
    throw Object.assign(
      new Error(`${path} is not private to this user (mode ${(info.mode & 0o777).toString(8)})`),
      {
        code: "EPERM",
      },
    );
  }
};

/**
 * Listens on the Unix socket `path`: bound inside a fresh 0700 directory,
 * made 0600, then renamed to `path` (a stale socket there is replaced: the
 * store's lock proves no live server of this store owns it).
 */
export const listenSocket = async (server: Server, path: string): Promise<void> => {
  try {
    if (dirname(path) === Locate.fallbackDirectory()) await privateDirectory(dirname(path));
    const staging = await mkdtemp(join(dirname(path), `.${basename(path)}-`));
    const staged = join(staging, "s");
    await listenOn(server, staged);
    await chmod(staged, 0o600);
    await rename(staged, path);
    await rmdir(staging);
  } catch (error) {
    throw new ListenFailed({
      address: path,
      code: errorCode(error),
      detail: error instanceof Error ? error.message : String(error),
    });
  }
};

/** Listens on a TCP address; the port actually bound (0 picks one). */
export const listenTcp = async (server: Server, address: TcpAddress): Promise<number> => {
  try {
    await listenOn(server, address);
  } catch (error) {
    throw new ListenFailed({
      address: `${address.host}:${address.port}`,
      code: errorCode(error),
      detail: error instanceof Error ? error.message : String(error),
    });
  }
  const bound = server.address();
  return typeof bound === "object" && bound !== null ? bound.port : address.port;
};

/** Removes the socket file (the server has stopped); absent is fine. */
export const removeSocket = async (path: string): Promise<void> => {
  await unlink(path).catch(() => undefined);
};
