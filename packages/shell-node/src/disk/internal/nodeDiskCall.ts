/**
 * Bridges `node:fs` callbacks to Effect and maps errno codes to the closed
 * `DiskErrorCode` union. Private to `NodeDisk` and its lock modules.
 */
import * as fs from "node:fs";
import * as Effect from "effect/Effect";
import { messageOf } from "../Described.js";
import { DiskError, type DiskErrorCode, type DiskOperation } from "../Disk.js";

/** The errno codes `DiskErrorCode` names as themselves. */
const namedCodes: ReadonlySet<string> = new Set<DiskErrorCode>([
  "ENOENT",
  "EEXIST",
  "ENOTDIR",
  "EISDIR",
  "ENOTEMPTY",
  "EACCES",
  "EROFS",
  "EIO",
  "ENOSPC",
  "EAGAIN",
  "EPERM",
  "EXDEV",
  "ENOTSUP",
]);

const isNamedCode = (code: string): code is Exclude<DiskErrorCode, "Other"> => namedCodes.has(code);

/** Codes that are another name of a code `DiskErrorCode` names (the same number on Linux). */
const synonyms: Readonly<Record<string, string>> = { EWOULDBLOCK: "EAGAIN", EOPNOTSUPP: "ENOTSUP" };

/** The errno code of a Node error; EWOULDBLOCK is EAGAIN, EOPNOTSUPP is ENOTSUP. */
export const errnoCode = (error: NodeJS.ErrnoException): string => {
  const code = error.code ?? "UNKNOWN";
  return synonyms[code] ?? code;
};

/** A `DiskError` for a failed syscall; unnamed codes become `Other` with the code in `detail`. */
export const toDiskError = (
  operation: DiskOperation,
  path: string,
  error: NodeJS.ErrnoException,
): DiskError => {
  const code = errnoCode(error);
  return new DiskError({
    operation,
    path,
    code: isNamedCode(code) ? code : "Other",
    detail: isNamedCode(code) ? error.message : `${code}: ${error.message}`,
  });
};

/**
 * Whether a `node:fs` callback reports a failure. Node passes `null` for
 * none; Deno 2.9 passes `undefined` from some calls (`fs.rename` and
 * `fs.unlink`), so both mean success.
 */
export const failed = (
  error: NodeJS.ErrnoException | null | undefined,
): error is NodeJS.ErrnoException => error !== null && error !== undefined;

/** Node's callback shape for calls that produce a value. */
export type Callback<A> = (error: NodeJS.ErrnoException | null | undefined, value: A) => void;

/**
 * Runs a callback-style `node:fs` call as an Effect failing with `DiskError`.
 * A synchronous throw (Node's argument validation: a programmer error) is a
 * defect, as `Effect.async` makes it.
 */
export const call = <A>(
  operation: DiskOperation,
  path: string,
  run: (callback: Callback<A>) => void,
): Effect.Effect<A, DiskError> =>
  Effect.async<A, DiskError>((resume) => {
    run((error, value) => {
      resume(
        failed(error) ? Effect.fail(toDiskError(operation, path, error)) : Effect.succeed(value),
      );
    });
  });

/** As `call`, for calls whose callback carries only an error. */
export const callVoid = (
  operation: DiskOperation,
  path: string,
  run: (callback: (error: NodeJS.ErrnoException | null | undefined) => void) => void,
): Effect.Effect<void, DiskError> =>
  call<void>(operation, path, (callback) => run((error) => callback(error, undefined)));

/** The error a handle reports once it is closed: its descriptor may belong to another file by now. */
export const closedHandle = (operation: DiskOperation, path: string): DiskError =>
  new DiskError({ operation, path, code: "Other", detail: "EBADF: the handle is closed" });

/** The message of anything thrown, for a `detail`. */

/**
 * Anything thrown by a synchronous fs call or a runtime's own file API as
 * an ErrnoException: its string `code` kept (Node's and Deno's errors carry
 * one), anything else becomes code-less (`Other` once mapped).
 */
export const asErrno = (error: unknown): NodeJS.ErrnoException => {
  const code: unknown =
    typeof error === "object" && error !== null ? Reflect.get(error, "code") : undefined;
  const result: NodeJS.ErrnoException = new Error(messageOf(error));
  if (typeof code === "string") result.code = code;
  return result;
};

/** close(2). */
export const closeDescriptor = (path: string, fd: number): Effect.Effect<void, DiskError> =>
  callVoid("close", path, (callback) => fs.close(fd, callback));

/** One `pwrite`; the count may be short. */
export const writeAt = (
  path: string,
  fd: number,
  position: number,
  bytes: Uint8Array,
): Effect.Effect<number, DiskError> =>
  call<number>("write", path, (callback) =>
    fs.write(fd, bytes, 0, bytes.length, position, (error, written) => callback(error, written)),
  );

/** `pwrite` in a loop until every byte is written (for the lock file's description). */
export const writeAllAt = (
  path: string,
  fd: number,
  position: number,
  bytes: Uint8Array,
): Effect.Effect<void, DiskError> =>
  Effect.gen(function* () {
    let done = 0;
    while (done < bytes.length) {
      done += yield* writeAt(path, fd, position + done, bytes.subarray(done));
    }
  });
