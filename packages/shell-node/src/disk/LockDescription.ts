/**
 * The informative contents of `DATA_DIR/LOCK`: who holds the store.
 *
 * The lock itself is the `flock` on the file; these bytes only tell an
 * operator (and a refused opener's `Locked` error) which process holds it,
 * and let the holder prove, before it activates a writer, that the file it
 * locked is still the one in the directory (the session id). One line of
 * JSON, so `cat LOCK` is readable.
 */ import * as Either from "effect/Either";

/** A lock holder as described in LOCK. */
export interface LockHolder {
  /** Operating-system process id of the holder. */
  readonly pid: number;
  /** Host name of the holder's machine. */
  readonly host: string;
  /** Random id of this opening (32 hex digits), fresh for every open. */
  readonly session: string;
  /** When the lock was taken, ms since the Unix epoch. */
  readonly acquiredAt: number;
  /**
   * Where the holder serves the store to other processes (`tay serve`,
   * `Server.serve`), when it does: clients and the CLI find the socket
   * here. Absent in LOCKs written before the field, and by holders that
   * do not serve (2026-12-01: added, optional, so old and new readers
   * read each other's LOCKs).
   */
  readonly server?: LockServer;
}

/** The server of a lock holder: its Unix socket, and its TCP address when it has one. */
export interface LockServer {
  readonly socket: string;
  readonly listen?: string;
}

/** Bytes a LOCK description may have; larger contents are not parsed. */
export const descriptionBytesMax = 4096;

/** Why LOCK's contents are not a description. */
export type LockDescriptionErrorReason = "TooLarge" | "NotUtf8" | "NotJson" | "Shape";

/** LOCK's contents are not a description, and why. */
export interface LockDescriptionError {
  readonly _tag: "LockDescriptionError";
  readonly reason: LockDescriptionErrorReason;
}

const serverJson = (server: LockServer) => ({
  socket: server.socket,
  ...(server.listen === undefined ? {} : { listen: server.listen }),
});

/** The LOCK bytes for `holder`: one line of JSON. */
export const encode = (holder: LockHolder): Uint8Array =>
  new TextEncoder().encode(
    `${JSON.stringify({
      pid: holder.pid,
      host: holder.host,
      session: holder.session,
      acquiredAt: holder.acquiredAt,
      ...(holder.server === undefined ? {} : { server: serverJson(holder.server) }),
    })}\n`,
  );

const failure = (reason: LockDescriptionErrorReason): Either.Either<never, LockDescriptionError> =>
  Either.left({ _tag: "LockDescriptionError", reason });

const parseJson = (text: string): Either.Either<unknown, LockDescriptionError> => {
  // JSON.parse is the one call here that throws; the guard keeps it at the edge.
  try {
    return Either.right(JSON.parse(text));
  } catch {
    return failure("NotJson");
  }
};

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The `server` member, when it has the shape (a string socket, an optional string address). */
const serverOf = (input: unknown): LockServer | undefined => {
  if (!isRecord(input)) return undefined;
  const { socket, listen } = input;
  if (typeof socket !== "string" || (listen !== undefined && typeof listen !== "string")) {
    return undefined;
  }
  return listen === undefined ? { socket } : { socket, listen };
};

/**
 * Parses LOCK's contents (untrusted: any process may have written them).
 * Returns a `LockDescriptionError` for oversized, non-UTF-8, non-JSON or
 * wrongly shaped contents; never throws.
 */
export const decode = (bytes: Uint8Array): Either.Either<LockHolder, LockDescriptionError> => {
  if (bytes.length > descriptionBytesMax) return failure("TooLarge");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return failure("NotUtf8");
  }
  return Either.flatMap(parseJson(text), (value) => {
    if (!isRecord(value)) return failure("Shape");
    const { pid, host, session, acquiredAt, server } = value;
    if (
      typeof pid !== "number" ||
      !Number.isSafeInteger(pid) ||
      typeof host !== "string" ||
      typeof session !== "string" ||
      typeof acquiredAt !== "number" ||
      !Number.isSafeInteger(acquiredAt)
    ) {
      return failure("Shape");
    }
    if (server === undefined) return Either.right({ pid, host, session, acquiredAt });
    const served = serverOf(server);
    return served === undefined
      ? failure("Shape")
      : Either.right({ pid, host, session, acquiredAt, server: served });
  });
};
