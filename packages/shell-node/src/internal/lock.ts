/**
 * Taking the store's LOCK: the flock, a fresh session description written
 * into it, and the `Locked` refusal that names the current holder.
 */
import { hostname } from "node:os";
import { Clock, Effect, Either, type Scope } from "effect";
import * as E from "fp-ts/lib/Either.js";
import { Disk, type DiskError, type LockHandle } from "../Disk.js";
import * as Entropy from "../Entropy.js";
import * as Layout from "../Layout.js";
import * as LockDescription from "../LockDescription.js";
import { Locked } from "../StoreError.js";

/** A held lock and the description this holder wrote into it. */
export interface HeldLock {
  readonly handle: LockHandle;
  readonly path: string;
  readonly holder: LockDescription.LockHolder;
  readonly description: Uint8Array;
}

/** LOCK's current holder as its contents describe it, `null` when unreadable. */
export const readHolder = (
  path: string,
): Effect.Effect<LockDescription.LockHolder | null, never, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const bytes = yield* Effect.either(disk.readFile(path));
    if (Either.isLeft(bytes)) return null;
    const holder = LockDescription.decode(bytes.right);
    return E.isRight(holder) ? holder.right : null;
  });

/**
 * Takes DATA_DIR/LOCK for the scope and describes this holder in it (pid,
 * host, a random session id, the time). Another holder is `Locked`, with its
 * description when readable. Released when the scope closes.
 */
export const acquire = (
  directory: string,
): Effect.Effect<HeldLock, Locked | DiskError, Disk | Scope.Scope> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const path = Layout.lockPath(directory);
    const handle = yield* Effect.acquireRelease(
      disk
        .lock(path)
        .pipe(
          Effect.catchTag("LockHeld", () =>
            Effect.flatMap(readHolder(path), (holder) => Effect.fail(new Locked({ path, holder }))),
          ),
        ),
      // Release failures cannot be acted on: the process is letting go anyway,
      // and the kernel drops a flock when its descriptor closes.
      (lock) => Effect.ignore(lock.release()),
    );
    const holder: LockDescription.LockHolder = {
      pid: process.pid,
      host: hostname(),
      session: yield* Entropy.sessionId,
      acquiredAt: yield* Clock.currentTimeMillis,
    };
    const description = LockDescription.encode(holder);
    yield* handle.describe(description);
    return { handle, path, holder, description };
  });

/** True when LOCK still holds exactly `lock.description` (the session is ours). */
export const stillOurs = (lock: HeldLock): Effect.Effect<boolean, never, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const bytes = yield* Effect.either(disk.readFile(lock.path));
    return Either.isRight(bytes) && equalBytes(bytes.right, lock.description);
  });

/** Byte-wise equality. */
export const equalBytes = (left: Uint8Array, right: Uint8Array): boolean => {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) {
    if (left[index] !== right[index]) return false;
  }
  return true;
};
