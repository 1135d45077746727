/**
 * Recovery as a report: what validating a store found, and `inspect`, the
 * same validation as `open` but without the lock and without a writer — for
 * `tay verify` and `tay status` while another process writes.
 *
 * Validation follows EVENTS.md "Recovery (open)": marker, pointer,
 * manifest, the `segments/` entries, every segment header and footer, every
 * record and sequence, every event decoded and folded by the caller's
 * projection. The first fault stops it with a typed error naming the file,
 * offset and sequence. There is no scan-ahead, no torn-tail truncation, no
 * deletion of staged generations: nothing is written.
 */
import * as Effect from "effect/Effect";
import type { Disk } from "../disk/Disk.js";
import { formatStoreId, segmentFileBytesMax } from "./internal/codec.js";
import { classifyRoot, type Validated, validate, validateOnTrust } from "./internal/recovery.js";
import type { Projection } from "../log/Projection.js";
import { type HistoryRejected, InvalidOption, type RecoveryError } from "./StoreError.js";
import { resolve, type StoreOptionsInput } from "./StoreOptions.js";

import type { OrphanedGeneration } from "./internal/recovery.js";

export type { OrphanedGeneration } from "./internal/recovery.js";

/** What recovery found, for operators and the engine's own report. */
export interface RecoveryReport {
  readonly path: string;
  /** Printed STORE_ID. */
  readonly storeId: string;
  readonly epoch: number;
  readonly parentEpoch: number;
  readonly baseRecordCount: number;
  /** Segment files validated. */
  readonly segments: number;
  /** Records validated and folded (base and tail). */
  readonly records: number;
  readonly firstSequence: number;
  /** `firstSequence - 1` when the generation holds no record. */
  readonly lastSequence: number;
  /** Bytes of the generation's segment files. */
  readonly bytes: number;
  /** Time spent reading and checking, ms. */
  readonly validateMs: number;
  /** Time spent decoding events and folding, ms. */
  readonly foldMs: number;
  /** Generations under `epochs/` other than CURRENT's: reported, never deleted by open. */
  readonly orphanedGenerations: ReadonlyArray<OrphanedGeneration>;
  /**
   * `epochs/EPOCH/SEGMENT.tmp` of the current generation when present: the
   * leftover of a segment creation a crash interrupted (FORMAT.md,
   * "Creating a segment"). Ignored, never read as part of the generation;
   * the next segment creation removes it. Null when absent.
   */
  readonly stagedSegment: string | null;
}

/** An inspection's result: the projection's state and the report. */
export interface Inspection<S> {
  readonly state: S;
  readonly report: RecoveryReport;
}

/** The report of a validation. */
export const reportOf = <S>(validated: Validated<S>): RecoveryReport => ({
  path: validated.directory,
  storeId: formatStoreId(validated.marker.storeId),
  epoch: validated.manifest.epoch,
  parentEpoch: validated.manifest.parentEpoch,
  baseRecordCount: validated.manifest.baseRecordCount,
  segments: validated.segments.length,
  records: validated.records,
  firstSequence: validated.manifest.firstSequence,
  lastSequence: validated.lastSequence,
  bytes: validated.bytes,
  validateMs: validated.validateMs,
  foldMs: validated.foldMs,
  orphanedGenerations: validated.orphans,
  stagedSegment: validated.stagedSegment,
});

/**
 * Validates the store in `directory` and folds it with `projection`,
 * without taking the lock and without activating a writer. Only the budgets
 * of `options` matter here. Fails like `open` (minus `Locked` and the
 * activation checks); writes nothing.
 *
 * While another process appends, the active segment may end inside a record
 * being written, which this reports as `IncompleteTail`: retry.
 *
 * `afterBatch` runs after each batch of at most 1,024 records is folded,
 * before the next is read, so a caller can write out what its projection
 * collected (`tay copy DIR URL` a page at a time); its error ends the
 * inspection.
 *
 * `records` (2026-12-04): `"checked"` (the default) checks every record's
 * own CRCs (`tay verify`, `dump`, `copy`); `"onTrust"` reads sealed
 * segments' records on trust of their segment CRC and, on any failure,
 * inspects again record by record, whose outcome is the answer, as the
 * engine's open does (docs/store.md, "Record CRCs at open"): the read
 * commands that only answer from the state (`status`, `jobs`, `job`).
 * The projection starts again for the second try, and `afterBatch` runs
 * again from the first batch: a caller whose `afterBatch` writes keeps
 * `"checked"`.
 */
export const inspect = <S, E, X = never, R = never>(
  directory: string,
  options: StoreOptionsInput,
  projection: Projection<S, E>,
  afterBatch?: () => Effect.Effect<void, X, R>,
  records: "checked" | "onTrust" = "checked",
): Effect.Effect<Inspection<S>, RecoveryError | HistoryRejected<E> | X, Disk | R> =>
  Effect.gen(function* () {
    const resolved = resolve(options, segmentFileBytesMax);
    if (resolved._tag === "Left") {
      const { option, value } = resolved.left;
      return yield* new InvalidOption({ path: directory, option, value });
    }
    yield* classifyRoot(directory);
    const { budgets } = resolved.right;
    const validated = yield* records === "checked"
      ? validate(directory, budgets, projection, afterBatch)
      : validateOnTrust(directory, budgets, projection, afterBatch);
    return { state: validated.state, report: reportOf(validated) };
  });
