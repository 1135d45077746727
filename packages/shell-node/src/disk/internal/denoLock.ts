/**
 * The lock file on Deno: a `Deno.FsFile` and its `tryLock(true)`, which is
 * flock(LOCK_EX|LOCK_NB) on the file's own open description (checked with
 * strace on Deno 2.9), so it excludes Node's and Bun's openers and a
 * second opener in this process. Deno cannot load the fs-ext addon and
 * reaches libc only with `--allow-ffi`; this needs only the read and write
 * permissions the store needs anyway. Deno's API is reached through
 * `dynamic.ts`: there are no types for it here.
 */
import * as Effect from "effect/Effect";
import { type DiskError, type DiskOperation, type LockHandle, LockHeld } from "../Disk.js";
import { invoke } from "./dynamic.js";
import { asErrno, closedHandle, toDiskError } from "./nodeDiskCall.js";

/** Permission bits of the lock file (before the umask). */
const fileMode = 0o644;

/** `Deno.SeekMode.Start`. */
const seekStart = 0;

/** A promise-returning call into Deno's API, its rejection a `DiskError`. */
const attempt = <A>(
  operation: DiskOperation,
  path: string,
  run: () => unknown,
  check: (value: unknown) => A,
): Effect.Effect<A, DiskError> =>
  Effect.tryPromise({
    try: async () => check(await run()),
    catch: (cause) => toDiskError(operation, path, asErrno(cause)),
  });

const ignoreValue = (): void => undefined;

const booleanOf = (value: unknown): boolean => {
  if (typeof value !== "boolean") throw new TypeError(`FsFile.tryLock returned ${String(value)}`);
  return value;
};

const writtenCount = (value: unknown): number => {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`FsFile.write returned ${String(value)}, not a byte count`);
  }
  return value;
};

/** truncate(0), seek to the start, and write until every byte is out. */
const rewrite = (
  file: unknown,
  path: string,
  contents: Uint8Array,
): Effect.Effect<void, DiskError> =>
  Effect.gen(function* () {
    yield* attempt("write", path, () => invoke(file, "truncate", 0), ignoreValue);
    yield* attempt("write", path, () => invoke(file, "seek", 0, seekStart), ignoreValue);
    let done = 0;
    while (done < contents.length) {
      const rest = contents.subarray(done);
      done += yield* attempt("write", path, () => invoke(file, "write", rest), writtenCount);
    }
  });

const close = (file: unknown): Effect.Effect<void> =>
  Effect.sync(() => {
    try {
      invoke(file, "close");
    } catch {
      // Already closed, or closing a handle whose lock is gone: nothing to keep.
    }
  });

const makeLockHandle = (file: unknown, path: string): LockHandle => {
  let released = false;
  return {
    path,
    describe: (contents) =>
      Effect.suspend(() =>
        released ? Effect.fail(closedHandle("write", path)) : rewrite(file, path, contents),
      ),
    release: () =>
      Effect.suspend(() => {
        if (released) return Effect.void;
        released = true;
        return attempt("unlock", path, () => invoke(file, "unlock"), ignoreValue).pipe(
          Effect.ensuring(close(file)),
        );
      }),
  };
};

/** Opens (creating) and tries the lock; `LockHeld` when another description holds it. */
export const lock =
  (deno: unknown) =>
  (path: string): Effect.Effect<LockHandle, DiskError | LockHeld> =>
    Effect.uninterruptible(
      Effect.gen(function* () {
        const options = { read: true, write: true, create: true, mode: fileMode };
        const file = yield* attempt(
          "lock",
          path,
          () => invoke(deno, "open", path, options),
          (value) => value,
        );
        const taken = yield* attempt(
          "lock",
          path,
          () => invoke(file, "tryLock", true),
          booleanOf,
        ).pipe(Effect.tapError(() => close(file)));
        if (!taken) {
          yield* close(file);
          return yield* Effect.fail(new LockHeld({ path }));
        }
        return makeLockHandle(file, path);
      }),
    );
