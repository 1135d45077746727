/**
 * Read-only access for the read commands: `Recovery.inspect` (no lock, no
 * writer) with core's fold, so `status`, `verify`, `jobs`, `job`,
 * `schedules` and `dump` work while another process holds the store.
 *
 * A live writer may be caught mid-append (the active segment ends inside a
 * record: `IncompleteTail`) or mid-compaction (a generation's files vanish:
 * `MissingEntry`, `ENOENT`); those are retried a few times before being
 * reported, since a real torn tail or missing file stays put.
 */
import { Generation, type HistoryError, type State } from "@tay/core";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Schedule from "effect/Schedule";
import { type Disk, type Projection, Recovery, StateProjection, StoreError } from "@tay/shell-node";

/** Attempts after the first when the store looks mid-write. */
export const transientRetries = 4;

/** Pause between those attempts. */
export const transientRetryMs = 50;

/** The folded state and the recovery report of a read-only inspection. */
export interface Inspected {
  readonly state: State.State;
  readonly report: Recovery.RecoveryReport;
}

/** What a read-only inspection can fail with: a fault, or the fold's refusal. */
export type InspectError =
  | StoreError.RecoveryError
  | StoreError.HistoryRejected<HistoryError.HistoryError>;

/** Failures a live writer can cause in a reader; worth another look. */
export const isTransient = (error: { readonly _tag: string }): boolean =>
  error._tag === "IncompleteTail" ||
  error._tag === "MissingEntry" ||
  (error._tag === "DiskError" && "code" in error && error.code === "ENOENT");

/** Retries `effect` while it fails transiently. */
export const retryTransient = <A, X extends { readonly _tag: string }, R>(
  effect: Effect.Effect<A, X, R>,
): Effect.Effect<A, X, R> =>
  Effect.retry(effect, {
    schedule: Schedule.spaced(Duration.millis(transientRetryMs)),
    times: transientRetries,
    while: isTransient,
  });

/**
 * Core's fold (`projection`, the whole fold by default), also calling `onRecord` with every record it accepts (in
 * order) and `onStart` whenever an inspection (re)starts, so a retried
 * inspection's collector can be reset.
 */
export const tapped = (
  onStart: () => void,
  onRecord: (entry: Projection.Entry) => void,
  projection: Projection.Projection<
    Generation.Builder,
    HistoryError.HistoryError
  > = StateProjection.foldProjection,
): Projection.Projection<Generation.Builder, HistoryError.HistoryError> => ({
  start: (manifest) => {
    onStart();
    return projection.start(manifest);
  },
  apply: (builder, sequence, event) => {
    const applied = projection.apply(builder, sequence, event);
    if (applied._tag === "Right") onRecord({ sequence, event });
    return applied;
  },
});

/**
 * Validates and folds the store in `directory` without the lock: the
 * state and the report, or the first fault (a refused fold included, as
 * `StoreError.HistoryRejected` with core's `HistoryError`).
 */
export const inspect = (
  directory: string,
  projection: Projection.Projection<
    Generation.Builder,
    HistoryError.HistoryError
  > = StateProjection.foldProjection,
  records: "checked" | "onTrust" = "checked",
): Effect.Effect<Inspected, InspectError, Disk.Disk> =>
  retryTransient(inspectOnce(directory, projection, undefined, records));

/**
 * `inspect` once, without retrying, running `afterBatch` after each batch
 * folded (at most 1,024 records): `tay copy` writes the batch out there.
 */
export const inspectOnce = <X = never>(
  directory: string,
  projection: Projection.Projection<Generation.Builder, HistoryError.HistoryError>,
  afterBatch?: () => Effect.Effect<void, X, Disk.Disk>,
  records: "checked" | "onTrust" = "checked",
): Effect.Effect<Inspected, InspectError | X, Disk.Disk> =>
  Effect.gen(function* () {
    const inspection = yield* Recovery.inspect(directory, {}, projection, afterBatch, records);
    const finished = Generation.finish(inspection.state);
    if (finished._tag === "Left") {
      return yield* new StoreError.HistoryRejected<HistoryError.HistoryError>({
        path: directory,
        offset: 0,
        sequence: inspection.report.lastSequence,
        reason: finished.left,
      });
    }
    return { state: finished.right, report: inspection.report };
  });
