/**
 * `flock` on Node, through the `fs-ext` addon. Imported on first use, so
 * that loading the shell never loads the addon (which Bun and Deno refuse),
 * and an addon that did not build fails the lock, not the import.
 */
import * as Effect from "effect/Effect";
import { DiskError } from "../Disk.js";
import type { Flock } from "./flock.js";
import { messageOf } from "../Described.js";
import { callVoid, errnoCode, toDiskError } from "./nodeDiskCall.js";

/** The part of fs-ext used here. */
type FsExt = Pick<typeof import("fs-ext"), "flock">;

const unavailable = (path: string, cause: unknown): DiskError =>
  new DiskError({
    operation: "lock",
    path,
    code: "Other",
    detail: `the fs-ext addon (flock on Node) could not be loaded: ${messageOf(cause)}`,
  });

const make = (fsExt: FsExt): Flock => ({
  tryExclusive: (path, fd) =>
    Effect.async<boolean, DiskError>((resume) => {
      fsExt.flock(fd, "exnb", (error) => {
        if (error === null) return resume(Effect.succeed(true));
        if (errnoCode(error) === "EAGAIN") return resume(Effect.succeed(false));
        return resume(Effect.fail(toDiskError("lock", path, error)));
      });
    }),
  unlock: (path, fd) => callVoid("unlock", path, (callback) => fsExt.flock(fd, "un", callback)),
});

/** Loads fs-ext and returns its `flock`; a `DiskError` naming `path` when the addon cannot load. */
export const load = (path: string): Effect.Effect<Flock, DiskError> =>
  Effect.tryPromise({
    try: () => import("fs-ext"),
    catch: (cause) => unavailable(path, cause),
  }).pipe(Effect.map((module) => make(module.default)));
