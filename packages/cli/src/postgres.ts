/**
 * A store named by a `postgres://` (or `postgresql://`) URL instead of a
 * directory (docs/postgres.md, "The CLI"): the read commands open it with
 * `PgLog.open` (every row checked and folded; nothing written), the write
 * commands run the engine over it, `init` creates it, and `copy` moves a
 * directory's store into it with the same records under the same
 * sequences. The URL's store is the default one of schema `tay`.
 */
import { Generation, type HistoryError, State } from "@tay/core";
import { PgError, PgLog, PgSchema } from "@tay/log-postgres";
import {
  Batch,
  Described,
  type Disk,
  Engine,
  Import,
  type LogError,
  type Projection,
  StateProjection,
} from "@tay/shell-node";
import { Data, Effect, Either, type Scope } from "effect";
import { type InspectError, inspect, tapped } from "./inspect.js";
import * as Text from "./text.js";

/** Whether a command's store argument is a PostgreSQL URL rather than a directory. */
export const isUrl = (target: string): boolean => /^postgres(ql)?:\/\//i.test(target);

/** What opening and reading a PostgreSQL store can fail with. */
export type PgReadError = PgError.PgOpenError | PgError.HistoryRejected<HistoryError.HistoryError>;

/** The folded state and the report of a PostgreSQL store, opened for reading. */
export const inspectPg = (
  url: string,
  projection: Projection.Projection<
    Generation.Builder,
    HistoryError.HistoryError
  > = StateProjection.foldProjection,
): Effect.Effect<{ readonly state: State.State; readonly report: PgLog.PgReport }, PgReadError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const recovered = yield* PgLog.open(url, {}, projection);
      const finished = Generation.finish(recovered.state);
      if (finished._tag === "Left") {
        return yield* new PgError.HistoryRejected<HistoryError.HistoryError>({
          path: recovered.report.path,
          epoch: recovered.report.epoch,
          sequence: recovered.report.lastSequence,
          reason: finished.left,
        });
      }
      return { state: finished.right, report: recovered.report };
    }),
  );

/** The folded state of the store `target` names (a directory or a URL), for the read commands. */
export const inspectState = (
  target: string,
  projection: Projection.Projection<
    Generation.Builder,
    HistoryError.HistoryError
  > = StateProjection.foldProjection,
): Effect.Effect<{ readonly state: State.State }, InspectError | PgReadError, Disk.Disk> =>
  isUrl(target) ? inspectPg(target, projection) : inspect(target, projection);

/** The report's fields as `status` and `verify` print them. */
export const reportFields = (
  report: PgLog.PgReport,
  state: State.State,
): Array<readonly [string, string]> => [
  ["store id", report.storeId],
  ["epoch", `${report.epoch}`],
  ["records", `${report.records} (sequences ${report.firstSequence}..${report.lastSequence})`],
  ["bytes", `${report.bytes} (${Text.bytes(report.bytes)})`],
  ["jobs", `${State.jobCount(state)}`],
  ["schedules", `${state.schedules.size}`],
  ["synchronous_commit", report.synchronousCommit],
  ["checked in", Text.duration(report.openMs)],
];

/** The report as `--json` prints it. */
export const reportJson = (report: PgLog.PgReport, state: State.State) => ({
  path: report.path,
  store_id: report.storeId,
  epoch: report.epoch,
  records: report.records,
  first_sequence: report.firstSequence,
  last_sequence: report.lastSequence,
  bytes: report.bytes,
  jobs: State.jobCount(state),
  schedules: state.schedules.size,
  synchronous_commit: report.synchronousCommit,
  open_ms: report.openMs,
  orphaned_generations: report.orphanedGenerations.map((orphan) => ({
    epoch: orphan.epoch,
    kind: orphan.kind,
  })),
});

/**
 * The engine over the PostgreSQL store at `url` for the scope: no timers
 * (a command does what it names), and no rescue at open (other engines may
 * be running the jobs it would find executing).
 */
export const pgEngine = (
  url: string,
): Effect.Effect<
  Engine.EngineService<PgLog.PgKind>,
  PgReadError | Engine.EngineError<PgLog.PgKind> | Engine.OpenError,
  Scope.Scope
> =>
  Effect.flatMap(PgLog.open(url, {}, StateProjection.foldProjection), (recovered) =>
    Engine.fromLog(recovered, { timers: false, rescueOnOpen: false }),
  );

/** The copy does not hold what its source holds; nothing more was written. */
export class CopyMismatch extends Data.TaggedError("CopyMismatch")<{
  readonly path: string;
  readonly detail: string;
}> {
  get description(): Described.Description {
    return Described.describe("CopyMismatch", this.path, this.detail);
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** What `copy` can fail with. */
export type CopyError =
  | InspectError
  | PgReadError
  | PgError.PgLogError
  | PgError.StoreExists
  | LogError.UnencodableEvent
  | Import.ImportError
  | Disk.DiskError
  | CopyMismatch;

/** What `copy` reports. */
export interface CopyReport {
  readonly source: string;
  readonly target: string;
  readonly storeId: string;
  readonly firstSequence: number;
  readonly lastSequence: number;
  readonly baseRecordCount: number;
  readonly records: number;
  readonly jobs: number;
  readonly schedules: number;
}

/**
 * Copies the store in the directory `source` into a new PostgreSQL store
 * at `target`: generation 1 there starts where the source's current
 * generation starts (same first sequence and base record count), and every
 * record of it is written under its own sequence in the transaction that
 * creates the store, re-encoded from its event (the codec's encoding is
 * canonical: the same bytes, which the tests compare). Then the copy is opened and folded: its state must equal the
 * source's (`CopyMismatch` otherwise). The source is only read.
 */
export const copyToPg = (
  source: string,
  target: string,
): Effect.Effect<CopyReport, CopyError, Disk.Disk> =>
  Effect.gen(function* () {
    const entries: Array<Projection.Entry> = [];
    const inspected = yield* inspect(
      source,
      tapped(
        () => {
          entries.length = 0;
        },
        (entry) => entries.push(entry),
      ),
    );
    const { firstSequence, baseRecordCount, lastSequence } = inspected.report;
    const prepared = Batch.prepare(entries.map((entry) => entry.event));
    if (Either.isLeft(prepared)) return yield* Effect.fail(prepared.left);
    const records = prepared.right.records;
    for (const [index, record] of records.entries()) record.sequence = firstSequence + index;
    const made = yield* PgSchema.init(target, {}, { firstSequence, baseRecordCount, records });
    const copied = yield* inspectPg(target);
    const mismatch =
      copied.report.lastSequence !== lastSequence
        ? `the copy ends at sequence ${copied.report.lastSequence}, the source at ${lastSequence}`
        : State.equals(copied.state, inspected.state)
          ? undefined
          : "the copy folds to another state than the source";
    if (mismatch !== undefined)
      return yield* new CopyMismatch({ path: made.path, detail: mismatch });
    return {
      source,
      target: made.path,
      storeId: made.storeId,
      firstSequence,
      lastSequence,
      baseRecordCount,
      records: entries.length,
      jobs: State.jobCount(copied.state),
      schedules: copied.state.schedules.size,
    };
  });

/**
 * Copies the PostgreSQL store at `source` into a new store in the
 * directory `target` (missing, or empty but for a LOCK; otherwise
 * `NotEmpty` before anything is read): generation 1 there starts where the
 * source's current generation starts (same first sequence and base record
 * count) and holds every record under its own sequence, written by
 * `Import.importGeneration` (re-encoded from its event: the codec's
 * encoding is canonical, the same bytes, which the tests compare), then
 * inspected and compared with the source's state (`CopyMismatch`
 * otherwise). The source is only read (one snapshot, as `tay verify`).
 */
export const copyFromPg = (
  source: string,
  target: string,
): Effect.Effect<CopyReport, CopyError, Disk.Disk> =>
  Effect.gen(function* () {
    yield* Import.checkTarget(target);
    const entries: Array<Projection.Entry> = [];
    const inspected = yield* inspectPg(
      source,
      tapped(
        () => {
          entries.length = 0;
        },
        (entry) => entries.push(entry),
      ),
    );
    const { firstSequence, baseRecordCount, lastSequence, path } = inspected.report;
    const imported = yield* Import.importGeneration(target, {
      firstSequence,
      baseRecordCount,
      events: entries.map((entry) => entry.event),
    });
    const mismatch =
      imported.lastSequence !== lastSequence
        ? `the copy ends at sequence ${imported.lastSequence}, the source at ${lastSequence}`
        : State.equals(imported.state, inspected.state)
          ? undefined
          : "the copy folds to another state than the source";
    if (mismatch !== undefined) return yield* new CopyMismatch({ path: target, detail: mismatch });
    return {
      source: path,
      target,
      storeId: imported.storeId,
      firstSequence,
      lastSequence,
      baseRecordCount,
      records: entries.length,
      jobs: State.jobCount(imported.state),
      schedules: imported.state.schedules.size,
    };
  });
