/**
 * `flock(2)` on a descriptor, as each runtime reaches it: the one part of
 * the disk that `node:fs` does not provide. Node loads the `fs-ext` addon,
 * Bun calls libc through `bun:ffi`; Deno locks its own file handles
 * (`denoLock.ts`). All of them take the same kernel lock, so openers on
 * different runtimes exclude each other.
 */
import type * as Effect from "effect/Effect";
import type { DiskError } from "../Disk.js";

/** `flock` on descriptors of `node:fs`. */
export interface Flock {
  /**
   * LOCK_EX|LOCK_NB: `true` when taken, `false` when another open file
   * description holds it (EWOULDBLOCK); anything else is a `DiskError`.
   */
  readonly tryExclusive: (path: string, fd: number) => Effect.Effect<boolean, DiskError>;
  /** LOCK_UN. */
  readonly unlock: (path: string, fd: number) => Effect.Effect<void, DiskError>;
}
