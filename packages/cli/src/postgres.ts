/**
 * A store named by a `postgres://` (or `postgresql://`) URL instead of a
 * directory (docs/postgres.md, "The CLI"): the read commands open it with
 * `PgLog.open` (every row checked and folded; nothing written), the write
 * commands run the engine over it, `init` creates it, and `copy` moves a
 * directory's store into it with the same records under the same
 * sequences. The URL's store is the default one of schema `tay`.
 */
import { type Event, Generation, type HistoryError, State } from "@tay/core";
import { PgCopy, PgError, PgLog } from "@tay/log-postgres";
import {
  Batch,
  CopyCheck,
  Described,
  type Disk,
  Engine,
  Import,
  type LogError,
  type Projection,
  StateProjection,
} from "@tay/shell-node";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type * as Scope from "effect/Scope";
import {
  type InspectError,
  type Inspected,
  inspect,
  inspectOnce,
  retryTransient,
  tapped,
} from "./inspect.js";
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

/** True when the lease of a compaction open found had run out by open's clock. */
const runOut = (report: PgLog.PgReport, held: PgLog.CompactionHeld): boolean =>
  held.expiresAt < report.openedAt;

/** The compaction lease as `status` prints it. */
const compactionText = (report: PgLog.PgReport): string => {
  const held = report.compaction;
  if (held === undefined) return "none running";
  const until = Text.time(held.expiresAt);
  return runOut(report, held)
    ? `none running: ${Text.printable(held.label)} held the lease until ${until} and stopped renewing it; the next compaction takes it over and removes what it staged`
    : `running: ${Text.printable(held.label)}, lease until ${until}`;
};

/** A generation other than the current one, as `status` prints it. */
const orphanText = (report: PgLog.PgReport, orphan: PgLog.OrphanedGeneration): string => {
  const held = report.compaction;
  const staging =
    orphan.kind === "Staged" &&
    orphan.epoch === report.epoch + 1 &&
    held !== undefined &&
    !runOut(report, held);
  return staging
    ? "Staged: being written by the running compaction"
    : `${orphan.kind}: removed by the next compaction`;
};

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
  ["compaction", compactionText(report)],
  ...report.orphanedGenerations.map((orphan): readonly [string, string] => [
    `generation ${orphan.epoch}`,
    orphanText(report, orphan),
  ]),
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
  compaction:
    report.compaction === undefined
      ? null
      : {
          holder: report.compaction.label,
          lease_expires_at: report.compaction.expiresAt,
          run_out: runOut(report, report.compaction),
        },
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

/** What a copy and its source are called when they differ. */
const names: CopyCheck.CopyNames = { copy: "the copy", source: "the source" };

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

/** The events of `page`, encoded, under their own sequences. */
const recordsOf = (
  page: ReadonlyArray<Projection.Entry>,
): Either.Either<Array<Batch.PendingRecord>, LogError.UnencodableEvent> =>
  Either.map(Batch.prepare(page.map((entry) => entry.event)), (prepared) => {
    for (const [index, record] of prepared.records.entries()) {
      record.sequence = page[index]?.sequence ?? 0;
    }
    return prepared.records;
  });

/**
 * Copies the store in the directory `source` into a new PostgreSQL store
 * at `target`, a page at a time (one batch of the source's scan, at most
 * 1,024 records; memory never holds the history): generation 1 there
 * starts where the source's current generation starts (same first
 * sequence and base record count), and every record of it is written
 * under its own sequence, re-encoded from its event (the codec's encoding
 * is canonical: the same bytes, which the tests compare), in the
 * transaction that creates the store (`PgCopy.importGeneration`). Before
 * that transaction commits, the rows are read back and folded: the state
 * must equal the source's (`CopyMismatch` otherwise, and nothing is
 * left). The source is only read; an inspection that caught a live
 * writer mid-append starts the whole copy again.
 */
export const copyToPg = (
  source: string,
  target: string,
): Effect.Effect<CopyReport, CopyError, Disk.Disk> =>
  retryTransient(
    Effect.gen(function* () {
      let inspected: Inspected | undefined;
      let copied: State.State | undefined;
      const page: Array<Projection.Entry> = [];
      const produce = (sink: PgCopy.RecordSink) =>
        Effect.gen(function* () {
          const drain = () =>
            Effect.gen(function* () {
              const records = recordsOf(page.splice(0));
              if (Either.isLeft(records)) return yield* Effect.fail(records.left);
              yield* sink.write(records.right);
            });
          // Lean, as the copy's fold below: the two states are compared.
          const collect = tapped(
            () => {
              page.length = 0;
            },
            (entry) => page.push(entry),
            StateProjection.leanFoldProjection,
          );
          inspected = yield* inspectOnce(source, collect, drain);
          yield* drain();
          return inspected.report;
        });
      const imported = yield* PgCopy.importGeneration(target, {}, produce, {
        projection: StateProjection.leanFoldProjection,
        verify: (builder, lastSequence) => {
          const finished = Generation.finish(builder);
          copied = finished._tag === "Right" ? finished.right : undefined;
          const mismatch = CopyCheck.copyMismatch(
            { lastSequence, state: copied },
            {
              lastSequence: inspected?.report.lastSequence ?? Number.NaN,
              state: inspected?.state,
            },
            names,
          );
          return mismatch === undefined
            ? Effect.void
            : Effect.fail(new CopyMismatch({ path: target, detail: mismatch }));
        },
      });
      const state = copied;
      return {
        source,
        target: imported.path,
        storeId: imported.storeId,
        firstSequence: imported.firstSequence,
        lastSequence: imported.lastSequence,
        baseRecordCount: imported.baseRecordCount,
        records: imported.records,
        jobs: state === undefined ? 0 : State.jobCount(state),
        schedules: state === undefined ? 0 : state.schedules.size,
      };
    }),
  );

/**
 * Copies the PostgreSQL store at `source` into a new store in the
 * directory `target` (missing, or empty but for a LOCK; otherwise
 * `NotEmpty` before anything is read), a page at a time (`pageRecords`
 * rows of one REPEATABLE READ snapshot, as `tay verify` reads; memory
 * never holds the history): generation 1 there starts where the source's
 * current generation starts (same first sequence and base record count)
 * and holds every record under its own sequence, written by
 * `Import.importPages` as the pages arrive (re-encoded from its event:
 * the codec's encoding is canonical, the same bytes, which the tests
 * compare; folded as written; the written store inspected and compared
 * with that fold), and must end where the source ends (`CopyMismatch`
 * otherwise). The store is built in a staging directory beside
 * `target` and renamed onto it once verified (`CopyStaging`): a failure
 * removes the staging directory, a crash leaves at most it, never a part
 * of a store at `target`. The source is only read.
 */
export const copyFromPg = (
  source: string,
  target: string,
): Effect.Effect<CopyReport, CopyError, Disk.Disk> =>
  Effect.gen(function* () {
    yield* Import.checkTarget(target);
    let report: PgLog.PgReport | undefined;
    const imported = yield* Import.importPages(target, (sink) =>
      Effect.gen(function* () {
        let start: Import.GenerationStart | undefined;
        let begun = false;
        let written = 0;
        const page: Array<Event.Event> = [];
        // Collects the page's events; the fold is the import's, as it writes.
        const collect: Projection.Projection<null, never> = {
          start: (manifest) => {
            start = manifest;
            page.length = 0;
            return null;
          },
          apply: (state, _sequence, event) => {
            page.push(event);
            return Either.right(state);
          },
        };
        const drain = () =>
          Effect.gen(function* () {
            if (!begun) {
              if (start === undefined) return yield* Effect.dieMessage("copy: no generation read");
              yield* sink.begin(start);
              begun = true;
            }
            written += page.length;
            yield* sink.write(page.splice(0));
          });
        const read = yield* PgCopy.read(source, {}, collect, drain);
        report = read.report;
        // Checked before the import publishes: a mismatch leaves nothing.
        const copied = read.report.firstSequence + written - 1;
        // The states are compared by the import itself, before it publishes.
        const mismatch = CopyCheck.endMismatch(copied, read.report.lastSequence, names);
        if (mismatch !== undefined) {
          return yield* new CopyMismatch({ path: target, detail: mismatch });
        }
      }),
    );
    const lastSequence = imported.lastSequence;
    return {
      source: report?.path ?? source,
      target,
      storeId: imported.storeId,
      firstSequence: imported.firstSequence,
      lastSequence,
      baseRecordCount: imported.baseRecordCount,
      records: imported.lastSequence - imported.firstSequence + 1,
      jobs: State.jobCount(imported.state),
      schedules: imported.state.schedules.size,
    };
  });
