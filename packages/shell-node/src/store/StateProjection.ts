/**
 * Core's incremental fold (`Generation`) as a store projection: what the
 * engine recovers into, what `verify` and `copy-prefix` fold with. The
 * projection's state is a `Generation.Builder`; `Generation.finish` turns
 * it into the `State` once the whole generation has been applied.
 */
import { Generation, type HistoryError } from "@tay/core";
import { Either } from "effect";
import type { Projection } from "../log/Projection.js";

/** Core's incremental fold as a store projection. */
export const foldProjection: Projection<Generation.Builder, HistoryError.HistoryError> = {
  start: (manifest) => Generation.start(manifest.baseRecordCount),
  // Runs once per record at open: no closure per call, the Left passes as is.
  apply: (builder, sequence, event) => {
    const applied = Generation.apply(builder, sequence, event);
    // The one place core's result (an fp-ts Either) becomes the shell's.
    return applied._tag === "Left" ? Either.left(applied.left) : Either.right(builder);
  },
};

/**
 * The same fold into a lean state (`Generation.start(n, { lean: true })`):
 * completed jobs without a unique key are held as facts only, their whole
 * records being the terminal index's (`TerminalIndex`).
 */
export const leanFoldProjection: Projection<Generation.Builder, HistoryError.HistoryError> = {
  start: (manifest) => Generation.start(manifest.baseRecordCount, { lean: true }),
  apply: foldProjection.apply,
};
