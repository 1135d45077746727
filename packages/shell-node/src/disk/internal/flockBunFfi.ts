/**
 * `flock` on Bun, through `bun:ffi` into the C library. Bun cannot load
 * the `fs-ext` addon (built for Node's ABI), and its `node:fs` descriptors
 * are the kernel's, so libc's `flock(fd, op)` locks them as Node's does.
 * The error number is read right after the call, on the same thread
 * (`__errno_location` on Linux, `__error` on macOS).
 */
import { constants } from "node:os";
import * as Effect from "effect/Effect";
import { DiskError, type DiskOperation } from "../Disk.js";
import { invoke, member } from "./dynamic.js";
import type { Flock } from "./flock.js";
import { messageOf } from "../Described.js";
import { toDiskError } from "./nodeDiskCall.js";

/** flock(2) operations (the same numbers on Linux and macOS). */
const lockExclusive = 2;
const lockNonBlocking = 4;
const lockUnlock = 8;

/** Where libc is and how it names its errno accessor, per platform. */
const libraries: ReadonlyArray<{ readonly file: string; readonly errno: string }> = [
  { file: "libc.so.6", errno: "__errno_location" }, // glibc
  { file: "libc.so", errno: "__errno_location" }, // musl
  { file: "libSystem.B.dylib", errno: "__error" }, // macOS
];

/** The two C functions, bound: `flock` and a reader of this thread's errno. */
interface LibC {
  readonly flock: (fd: number, operation: number) => number;
  readonly errno: () => number;
}

const numberOf = (value: unknown, what: string): number => {
  if (typeof value !== "number" && typeof value !== "bigint") {
    throw new TypeError(`${what} returned ${typeof value}, not a number`);
  }
  return Number(value);
};

const bind = (ffi: unknown, file: string, errnoSymbol: string): LibC => {
  const library = invoke(ffi, "dlopen", file, {
    flock: { args: ["i32", "i32"], returns: "i32" },
    [errnoSymbol]: { args: [], returns: "ptr" },
  });
  const symbols = member(library, "symbols");
  const read = member(ffi, "read");
  return {
    flock: (fd, operation) => numberOf(invoke(symbols, "flock", fd, operation), "flock"),
    errno: () => numberOf(invoke(read, "i32", invoke(symbols, errnoSymbol), 0), "errno"),
  };
};

/** The first C library that opens, or the reason none did. */
const openLibC = (ffi: unknown): LibC => {
  const failures: Array<string> = [];
  for (const { file, errno } of libraries) {
    try {
      return bind(ffi, file, errno);
    } catch (cause) {
      failures.push(`${file}: ${messageOf(cause)}`);
    }
  }
  throw new Error(`no C library with flock: ${failures.join("; ")}`);
};

/** errno numbers by name, to name a failure as Node would. */
const errnoName = (errno: number): string =>
  Object.entries(constants.errno).find(([, number]) => number === errno)?.[0] ?? `errno ${errno}`;

/** A failed `flock`, named and mapped as Node names and maps a failed syscall. */
const failure = (operation: DiskOperation, path: string, errno: number): DiskError => {
  const name = errnoName(errno);
  return toDiskError(
    operation,
    path,
    Object.assign(new Error(`${name}: flock failed`), { code: name }),
  );
};

const make = (libc: LibC): Flock => ({
  tryExclusive: (path, fd) =>
    Effect.suspend(() => {
      if (libc.flock(fd, lockExclusive | lockNonBlocking) === 0) return Effect.succeed(true);
      const errno = libc.errno();
      return errno === constants.errno.EWOULDBLOCK || errno === constants.errno.EAGAIN
        ? Effect.succeed(false)
        : Effect.fail(failure("lock", path, errno));
    }),
  unlock: (path, fd) =>
    Effect.suspend(() =>
      libc.flock(fd, lockUnlock) === 0
        ? Effect.void
        : Effect.fail(failure("unlock", path, libc.errno())),
    ),
});

/** Binds libc's `flock` through `bun:ffi`; a `DiskError` naming `path` when it cannot. */
export const load = (path: string): Effect.Effect<Flock, DiskError> => {
  // A computed specifier: no bundler or type checker for Node looks for `bun:ffi`.
  const specifier = ["bun", "ffi"].join(":");
  return Effect.tryPromise({
    try: async () => make(openLibC(await import(specifier))),
    catch: (cause) =>
      new DiskError({
        operation: "lock",
        path,
        code: "Other",
        detail: `flock through bun:ffi is not available: ${messageOf(cause)}`,
      }),
  });
};
