/**
 * Core's incremental fold (`Generation`) as a store projection: what the
 * engine recovers into, what `verify` and `copy-prefix` fold with. The
 * projection's state is a `Generation.Builder`; `Generation.finish` turns
 * it into the `State` once the whole generation has been applied.
 */
import { Generation, type HistoryError } from "@tay/core";
import { formatStoreId } from "@tay/codec";
import * as Either from "effect/Either";
import type { Manifest, Projection, Resumed } from "../log/Projection.js";
import * as TerminalIndex from "./TerminalIndex.js";

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

/**
 * The lean fold resumed from the state image HEAD names (docs/store.md,
 * "The state image"): a builder that already folded the records through
 * the image's last sequence, with the segments that must hold them; or
 * why not, in one line: no image, HEAD not current for this generation,
 * the image of another generation, or core refusing it.
 */
export const resumeLean = (
  found: TerminalIndex.Found,
  image: TerminalIndex.DecodedImage | string,
  manifest: Manifest,
  /** Collect what the records after the image let go of (`Generation.takeLeft`). */
  collectLeft = false,
): Resumed<Generation.Builder> | string => {
  if (typeof image === "string") return image;
  const storeId = formatStoreId(manifest.storeId);
  if (
    "_tag" in found ||
    TerminalIndex.staleBefore(found, storeId, manifest.epoch) !== undefined ||
    found.lastSequence !== image.lastSequence ||
    image.storeId !== storeId ||
    image.epoch !== manifest.epoch ||
    image.firstSequence !== manifest.firstSequence ||
    image.baseRecordCount !== manifest.baseRecordCount
  ) {
    return "the image is of another generation or HEAD";
  }
  const records = image.lastSequence - image.firstSequence + 1;
  const resumed = Generation.resume(image.image, records, manifest.baseRecordCount, {
    lean: true,
    collectLeft,
  });
  // Core's result is an fp-ts Either.
  if (resumed._tag === "Left") return `core refused the image: ${resumed.left.reason._tag}`;
  return { state: resumed.right, through: image.lastSequence, segments: image.segments };
};

/**
 * `leanFoldProjection`, resuming from the state image when `resumeLean`
 * takes it (a reader at rest: `tay status`, `tay jobs`).
 */
export const resumingLeanFold = (
  found: TerminalIndex.Found,
  image: TerminalIndex.DecodedImage | string,
): Projection<Generation.Builder, HistoryError.HistoryError> => ({
  ...leanFoldProjection,
  resume: (manifest) => {
    const resumed = resumeLean(found, image, manifest);
    return typeof resumed === "string" ? undefined : resumed;
  },
});
