/**
 * The event loop's next turn: what the writer defers a second inline write
 * to, and what work done in the background (a checkpoint's image) waits for
 * between its pieces, so that requests and commits are served between them.
 */
import * as Effect from "effect/Effect";

/**
 * Runs `run` after the loop's next poll (Node's and Bun's check phase); a
 * runtime without `setImmediate` gets a zero timer, which also lets the
 * loop turn first.
 */
export const afterPoll = (run: () => void): void => {
  if (typeof globalThis.setImmediate === "function") globalThis.setImmediate(run);
  else setTimeout(run, 0);
};

/** Resumes after the loop's next poll (`afterPoll`). */
export const nextLoopTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  afterPoll(() => resume(Effect.void));
});
