/**
 * Taking a store's lock file: the flock, a fresh session description
 * written into it, the `Locked` refusal that names the current holder, and
 * the check that the session is still ours before a writer activates.
 */
import { Buffer } from "node:buffer";
import { hostname } from "node:os";
import * as Clock from "effect/Clock";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type * as Scope from "effect/Scope";
import * as Described from "./Described.js";
import { Disk, type DiskError, type LockHandle } from "./Disk.js";
import * as Entropy from "./Entropy.js";
import * as LockDescription from "./LockDescription.js";

const isoTime = (ms: number): string => {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms} ms` : date.toISOString();
};

/** Another holder (this process or another) has the store's lock. */
export class Locked extends Data.TaggedError("Locked")<{
  readonly path: string;
  /** The lock file's informative contents, when readable. */
  readonly holder: LockDescription.LockHolder | null;
}> {
  get description(): Described.Description {
    const { holder } = this;
    return Described.describe(
      "Locked",
      this.path,
      holder === null
        ? "another process holds the store's lock"
        : `held by pid ${holder.pid} on ${holder.host} since ${isoTime(holder.acquiredAt)} (session ${holder.session})`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * Between locking and activation, the lock file's contents stopped being
 * this open's description: the file was replaced or rewritten, so the flock
 * may no longer guard the store.
 */
export class LockSessionLost extends Data.TaggedError("LockSessionLost")<{
  readonly path: string;
  readonly session: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "LockSessionLost",
      this.path,
      `LOCK was replaced or rewritten while opening (session ${this.session}); nothing was written, retry`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

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
    return Either.isRight(holder) ? holder.right : null;
  });

/**
 * Takes the lock file at `path` (DATA_DIR/LOCK) for the scope and describes this holder in it (pid,
 * host, a random session id, the time). Another holder is `Locked`, with its
 * description when readable. Released when the scope closes.
 */
export const acquire = (
  path: string,
): Effect.Effect<HeldLock, Locked | DiskError, Disk | Scope.Scope> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
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

/**
 * True when LOCK still holds exactly `lock.description` (the session is
 * ours); false when it holds anything else or is gone. A read that fails
 * otherwise (EIO, EACCES...) fails with its `DiskError`: that is no proof
 * the file was replaced, and calling it `LockSessionLost` would send the
 * operator looking for another process instead of at the disk.
 */
export const stillOurs = (lock: HeldLock): Effect.Effect<boolean, DiskError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const bytes = yield* Effect.either(disk.readFile(lock.path));
    if (Either.isLeft(bytes)) {
      return bytes.left.code === "ENOENT" ? false : yield* Effect.fail(bytes.left);
    }
    return Buffer.from(bytes.right).equals(lock.description);
  });
