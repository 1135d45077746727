/**
 * The engine's backpressure, as the worker meets it: a command refused
 * because the engine is full for now (its command queue, `Overloaded`, or
 * its log's bytes waiting for the disk, `PendingFull`). Such a refusal did
 * nothing, so the worker issues the same command again once the engine
 * has caught up, instead of ending its claims (they would never start) or
 * leaving a finished job executing (its completion lost until a rescue).
 */

/** Whether `refusal` is the engine's backpressure: nothing was done, and the same command may be issued again. */
export const isBackpressure = (refusal: unknown): boolean =>
  typeof refusal === "object" &&
  refusal !== null &&
  "_tag" in refusal &&
  (refusal._tag === "Overloaded" || refusal._tag === "PendingFull");

/** The longest a wait for room lasts without a commit: the command is issued again then anyway. */
export const roomWaitMaxMs = 50;

/**
 * A wait for room: resolves at the engine's next commit (a commit is what
 * frees queued commands and pending bytes), or after `roomWaitMaxMs`.
 */
export const roomWait = (watch: (listener: () => void) => () => void) => (): Promise<void> =>
  new Promise<void>((resolve) => {
    let unwatch = (): void => {};
    const done = (): void => {
      clearTimeout(timer);
      unwatch();
      resolve();
    };
    const timer = setTimeout(done, roomWaitMaxMs);
    unwatch = watch(done);
  });
