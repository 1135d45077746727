/**
 * Bridges `node:fs` callbacks to Effect and maps errno codes to the closed
 * `DiskErrorCode` union. Private to `NodeDisk`.
 */
import { Effect } from "effect";
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

/** Node's callback shape for calls that produce a value. */
export type Callback<A> = (error: NodeJS.ErrnoException | null, value: A) => void;

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
        error === null ? Effect.succeed(value) : Effect.fail(toDiskError(operation, path, error)),
      );
    });
  });

/** As `call`, for calls whose callback carries only an error. */
export const callVoid = (
  operation: DiskOperation,
  path: string,
  run: (callback: (error: NodeJS.ErrnoException | null) => void) => void,
): Effect.Effect<void, DiskError> =>
  call<void>(operation, path, (callback) => run((error) => callback(error, undefined)));

/** The error a handle reports once it is closed: its descriptor may belong to another file by now. */
export const closedHandle = (operation: DiskOperation, path: string): DiskError =>
  new DiskError({ operation, path, code: "Other", detail: "EBADF: the handle is closed" });
