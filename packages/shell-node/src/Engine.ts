/**
 * The engine: a durable job queue over the store and core's deciders.
 *
 * Every command runs the same three steps under one permit: decide against
 * the in-memory state, submit the decided records to the store (which
 * assigns their sequences in that order), then adopt the state the records
 * fold to. The caller's effect resolves only once the records are durable
 * as the store's policy asks. A rejected command appends nothing.
 *
 * Two states are kept. `decided` includes everything submitted, so the next
 * command decides against it (two claims never take the same job);
 * `committed` includes only batches whose durability has resolved, and is
 * what queries read: a query never shows a job that a crash could still
 * take back under the chosen policy.
 */
import {
  Commands,
  Decide,
  Evolve,
  Generation,
  type Event,
  type HistoryError,
  type Job,
  Query,
  type Rejection,
  type Schedule,
  Snapshot,
  State,
  type Value,
} from "@tay/core";
import { Clock, Context, Data, Effect, Layer, type Scope } from "effect";
import * as E from "fp-ts/lib/Either.js";
import { Disk } from "./Disk.js";
import * as Init from "./Init.js";
import * as Layout from "./Layout.js";
import type { Projection } from "./Projection.js";
import type { RecoveryReport } from "./Recovery.js";
import * as Store from "./Store.js";
import type { CompactionReport } from "./Store.js";
import {
  HistoryRejected,
  type InitError,
  type RecoveryError,
  type StoreError,
} from "./StoreError.js";
import type { StoreOptionsInput } from "./StoreOptions.js";

/** A command the deciders refused; `rejection` says why (`RevisionMismatch`, `JobNotFound`, ...). */
export class Rejected extends Data.TaggedError("Rejected")<{
  readonly command: Commands.CommandTag;
  readonly rejection: Rejection.Rejection;
}> {
  override get message(): string {
    return `${this.command} rejected: ${this.rejection._tag}`;
  }
}

/** What every engine command can fail with. */
export type EngineError = Rejected | StoreError;

/** What opening an engine can fail with. */
export type OpenError = RecoveryError | InitError | HistoryRejected<HistoryError.HistoryError>;

export interface EngineOptions extends StoreOptionsInput {
  /**
   * At open, every job still `executing` was claimed by a process that no
   * longer holds the lock: fail those attempts (retry or discard by the
   * usual rules) before serving. Default true.
   */
  readonly rescueOnOpen?: boolean;
  /**
   * Initialize the store first when `directory` holds none (missing, or
   * empty but for init debris), like LevelDB's `create_if_missing`. A
   * non-empty directory without a store is still refused (`NotEmpty`).
   * Default false.
   */
  readonly createIfMissing?: boolean;
}

/** Recovery report plus what the fold found. */
export interface EngineReport extends RecoveryReport {
  readonly jobs: Query.Counts;
  readonly schedules: number;
  readonly lastJobId: number;
  /** Jobs found executing at open and failed by the rescue. */
  readonly rescued: number;
}

/** What a `tick` did. */
export interface TickReport {
  readonly madeAvailable: number;
  readonly delivered: number;
  readonly skipped: number;
}

/** How to list jobs. */
export interface JobFilter {
  readonly queue?: string;
  readonly state?: Job.Job["state"];
  readonly limit?: number;
}

export interface EngineService {
  readonly report: EngineReport;
  readonly store: Store.Store;
  /** Inserts one job; returns it as inserted. */
  readonly insert: (job: Commands.NewJob) => Effect.Effect<Job.Job, EngineError>;
  /** Inserts several jobs atomically (one mutation). */
  readonly insertMany: (
    jobs: ReadonlyArray<Commands.NewJob>,
  ) => Effect.Effect<ReadonlyArray<Job.Job>, EngineError>;
  /** Starts up to `limit` available jobs of `queue` in claim order; may return none. */
  readonly claim: (
    queue: string,
    limit?: number,
  ) => Effect.Effect<ReadonlyArray<Job.Job>, EngineError>;
  /** Completes an executing job, recording `result` with it when given. */
  readonly complete: (jobId: number, result?: Value.Value) => Effect.Effect<Job.Job, EngineError>;
  /** Fails an executing job: retried after the backoff, or discarded when attempts are spent. */
  readonly fail: (
    jobId: number,
    error: string,
    options?: { readonly discard?: boolean },
  ) => Effect.Effect<Job.Job, EngineError>;
  /** Cancels a job that is not terminal. */
  readonly cancel: (jobId: number, reason?: string) => Effect.Effect<Job.Job, EngineError>;
  /** Registers or re-registers a schedule; `expectedRevision` 0 means "must be new". */
  readonly registerSchedule: (
    scheduleId: string,
    definition: Event.ScheduleDefinition,
    expectedRevision?: number,
  ) => Effect.Effect<Schedule.Schedule, EngineError>;
  /** Cancels a schedule (optionally only at `expectedRevision`). */
  readonly cancelSchedule: (
    scheduleId: string,
    expectedRevision?: number,
  ) => Effect.Effect<Schedule.Schedule, EngineError>;
  /** Makes due jobs available and delivers or skips due schedule occurrences. */
  readonly tick: () => Effect.Effect<TickReport, EngineError>;
  /** Fails every job executing since before `startedBefore` (stuck workers). */
  readonly rescue: (startedBefore: number, error: string) => Effect.Effect<number, EngineError>;
  /** Writes a new generation without terminal jobs finished before now - retentionMs. */
  readonly compact: (retentionMs: number) => Effect.Effect<CompactionReport, EngineError>;
  /** The committed state (only durable batches). */
  readonly state: () => Effect.Effect<State.State>;
  readonly job: (jobId: number) => Effect.Effect<Job.Job | undefined>;
  readonly jobs: (filter?: JobFilter) => Effect.Effect<ReadonlyArray<Job.Job>>;
  readonly schedule: (scheduleId: string) => Effect.Effect<Schedule.Schedule | undefined>;
  readonly schedules: () => Effect.Effect<ReadonlyArray<Schedule.Schedule>>;
  readonly counts: () => Effect.Effect<ReadonlyMap<string, Query.Counts>>;
  /** The earliest time a `tick` has work to do, or null. */
  readonly nextWakeAt: () => Effect.Effect<number | null>;
}

/** The engine as an Effect service. */
export class Engine extends Context.Tag("@tay/shell-node/Engine")<Engine, EngineService>() {}

/** The error a rescued orphan's attempt records. */
export const orphanError = "orphaned: the process that claimed this job stopped";

/** Core's incremental fold as a store projection. */
export const foldProjection: Projection<Generation.Builder, HistoryError.HistoryError> = {
  start: (manifest) => Generation.start(manifest.baseRecordCount),
  apply: (builder, sequence, event) =>
    E.map(() => builder)(Generation.apply(builder, sequence, event)),
};

const claimLimitDefault = 1;

// A decided record that the fold refuses is a bug in the deciders, not an
// operating error: nothing has been written yet, and we stop loudly (a defect).
const adopt = (
  state: State.State,
  events: ReadonlyArray<Event.Event>,
): Effect.Effect<State.State> => {
  const next = Evolve.evolveAll(state, events);
  return E.isLeft(next)
    ? Effect.dieMessage(`decider produced an illegal record: ${next.left.reason._tag}`)
    : Effect.succeed(next.right);
};

// The same assertion for the job or schedule a command has just touched.
const present = <A>(found: A | undefined, what: string): Effect.Effect<A> =>
  found === undefined
    ? Effect.dieMessage(`${what} missing after its own command`)
    : Effect.succeed(found);

// Only the marker's absence triggers init: a directory with STORE-V2 but no
// CURRENT is an interrupted init, which open must refuse, not redo.
const initIfMissing = (directory: string): Effect.Effect<void, InitError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const marker = yield* Effect.either(disk.stat(Layout.markerPath(directory)));
    if (marker._tag === "Right") return;
    if (marker.left.code !== "ENOENT") return yield* marker.left;
    yield* Init.init(directory);
  });

/**
 * Opens the engine on an initialised store directory for the scope: recovery
 * (validate, fold), the optional rescue of orphaned jobs, then service.
 */
export const open = (
  directory: string,
  options: EngineOptions = {},
): Effect.Effect<EngineService, OpenError | EngineError, Disk | Scope.Scope> =>
  Effect.gen(function* () {
    if (options.createIfMissing === true) yield* initIfMissing(directory);
    const recovered = yield* Store.open(directory, options, foldProjection);
    const finished = Generation.finish(recovered.state);
    if (E.isLeft(finished)) {
      return yield* new HistoryRejected<HistoryError.HistoryError>({
        path: directory,
        offset: 0,
        sequence: recovered.report.lastSequence,
        reason: finished.left,
      });
    }
    const { store } = recovered;
    let decided = finished.right;
    let committed = { state: decided, lastSequence: recovered.report.lastSequence };
    const permit = yield* Effect.makeSemaphore(1);

    // Decide, submit, adopt under the permit; await durability outside it so
    // that the next command can join the same group commit.
    const run = (command: Commands.Command) =>
      Effect.gen(function* () {
        const submitted = yield* permit.withPermits(1)(
          Effect.gen(function* () {
            const decision = Decide.decide(decided, command);
            if (E.isLeft(decision)) {
              return yield* new Rejected({ command: command._tag, rejection: decision.left });
            }
            const events = decision.right;
            if (events.length === 0) return { state: decided, events, durable: Effect.void };
            const next = yield* adopt(decided, events);
            const ticket = yield* store.submit(events);
            decided = next;
            const lastSequence = ticket.lastSequence;
            const durable = Effect.tap(ticket.durable, () =>
              Effect.sync(() => {
                // Batches resolve in order, but their waiters may run out of
                // order: keep the newest.
                if (lastSequence > committed.lastSequence)
                  committed = { state: next, lastSequence };
              }),
            );
            return { state: next, events, durable };
          }),
        );
        yield* submitted.durable;
        return submitted;
      });

    const now = Clock.currentTimeMillis;
    const jobOf = (state: State.State, jobId: number) =>
      present(State.job(state, jobId), `job ${jobId}`);
    const jobsOf = (state: State.State, jobIds: ReadonlyArray<number>) =>
      Effect.forEach(jobIds, (jobId) => jobOf(state, jobId));
    const scheduleOf = (state: State.State, scheduleId: string) =>
      present(State.schedule(state, scheduleId), `schedule ${scheduleId}`);
    const insertedIds = (events: ReadonlyArray<Event.Event>): Array<number> =>
      events.flatMap((event) => {
        if (event._tag === "JobInserted") return [event.jobId];
        if (event._tag === "Mutation") {
          return event.events.flatMap((inner) =>
            inner._tag === "JobInserted" ? [inner.jobId] : [],
          );
        }
        return [];
      });
    const startedIds = (events: ReadonlyArray<Event.Event>): Array<number> =>
      events.flatMap((event) => (event._tag === "JobStarted" ? [event.jobId] : []));
    const countTag = (
      events: ReadonlyArray<Event.Event>,
      predicate: (event: Event.DomainEvent) => boolean,
    ) =>
      events.reduce(
        (total, event) =>
          total +
          (event._tag === "Mutation"
            ? event.events.filter(predicate).length
            : event._tag === "SnapshotPart"
              ? 0
              : predicate(event)
                ? 1
                : 0),
        0,
      );

    const insertMany = (jobs: ReadonlyArray<Commands.NewJob>) =>
      Effect.gen(function* () {
        const result = yield* run(Commands.insertJobs({ now: yield* now, jobs }));
        return yield* jobsOf(result.state, insertedIds(result.events));
      });

    const rescue = (startedBefore: number, error: string) =>
      Effect.gen(function* () {
        const result = yield* run(Commands.rescueJobs({ now: yield* now, startedBefore, error }));
        return result.events.length;
      });

    let rescued = 0;
    if (options.rescueOnOpen ?? true) {
      const orphans = Query.jobsIn(decided, "executing").length;
      if (orphans > 0) {
        // Every executing job is an orphan: the lock proves no other writer.
        rescued = yield* rescue(Number.MAX_SAFE_INTEGER, orphanError);
      }
    }

    const report: EngineReport = {
      ...recovered.report,
      jobs: Query.totals(committed.state),
      schedules: committed.state.schedules.size,
      lastJobId: committed.state.lastJobId,
      rescued,
    };

    const service: EngineService = {
      report,
      store,
      insert: (job) =>
        Effect.flatMap(insertMany([job]), (jobs) => {
          const [inserted] = jobs;
          return inserted === undefined
            ? Effect.die("insert decided no job")
            : Effect.succeed(inserted);
        }),
      insertMany,
      claim: (queue, limit = claimLimitDefault) =>
        Effect.gen(function* () {
          const result = yield* run(Commands.claimJobs({ now: yield* now, queue, limit }));
          return yield* jobsOf(result.state, startedIds(result.events));
        }),
      complete: (jobId, result) =>
        Effect.gen(function* () {
          const command =
            result === undefined
              ? Commands.completeJob({ now: yield* now, jobId })
              : Commands.completeJob({ now: yield* now, jobId, result });
          const ran = yield* run(command);
          return yield* jobOf(ran.state, jobId);
        }),
      fail: (jobId, error, failOptions = {}) =>
        Effect.gen(function* () {
          const command =
            failOptions.discard === undefined
              ? Commands.failJob({ now: yield* now, jobId, error })
              : Commands.failJob({ now: yield* now, jobId, error, discard: failOptions.discard });
          const ran = yield* run(command);
          return yield* jobOf(ran.state, jobId);
        }),
      cancel: (jobId, reason) =>
        Effect.gen(function* () {
          const ran = yield* run(
            Commands.cancelJob({ now: yield* now, jobId, reason: reason ?? null }),
          );
          return yield* jobOf(ran.state, jobId);
        }),
      registerSchedule: (scheduleId, definition, expectedRevision) =>
        Effect.gen(function* () {
          const command =
            expectedRevision === undefined
              ? Commands.registerSchedule({ now: yield* now, scheduleId, definition })
              : Commands.registerSchedule({
                  now: yield* now,
                  scheduleId,
                  definition,
                  expectedRevision,
                });
          const ran = yield* run(command);
          return yield* scheduleOf(ran.state, scheduleId);
        }),
      cancelSchedule: (scheduleId, expectedRevision) =>
        Effect.gen(function* () {
          const command =
            expectedRevision === undefined
              ? Commands.cancelSchedule({ now: yield* now, scheduleId })
              : Commands.cancelSchedule({ now: yield* now, scheduleId, expectedRevision });
          const ran = yield* run(command);
          return yield* scheduleOf(ran.state, scheduleId);
        }),
      tick: () =>
        Effect.gen(function* () {
          const at = yield* now;
          const promoted = yield* run(Commands.makeDueAvailable({ now: at }));
          const occurrences = yield* run(Commands.tick({ now: at }));
          return {
            madeAvailable: promoted.events.length,
            delivered: countTag(
              occurrences.events,
              (event) => event._tag === "OccurrenceAdvanced" && event.outcome === "delivered",
            ),
            skipped: countTag(
              occurrences.events,
              (event) => event._tag === "OccurrenceAdvanced" && event.outcome === "skipped",
            ),
          };
        }),
      rescue,
      compact: (retentionMs) =>
        // The permit keeps commands from deciding against a state that the
        // new generation's base would not contain.
        permit.withPermits(1)(
          Effect.gen(function* () {
            const base = Snapshot.snapshot(decided, { now: yield* now, retentionMs });
            const compacted = yield* store.compact(base);
            const folded = Evolve.foldGeneration(base, []);
            if (E.isLeft(folded)) {
              return yield* Effect.die(`snapshot does not fold: ${folded.left.reason._tag}`);
            }
            decided = folded.right;
            committed = { state: folded.right, lastSequence: committed.lastSequence };
            return compacted;
          }),
        ),
      state: () => Effect.sync(() => committed.state),
      job: (jobId) => Effect.sync(() => State.job(committed.state, jobId)),
      jobs: (filter = {}) =>
        Effect.sync(() => {
          const all =
            filter.state === undefined
              ? [...State.jobs(committed.state)].filter(
                  (job) => filter.queue === undefined || job.queue === filter.queue,
                )
              : Query.jobsIn(committed.state, filter.state, filter.queue);
          return filter.limit === undefined ? all : all.slice(0, filter.limit);
        }),
      schedule: (scheduleId) => Effect.sync(() => State.schedule(committed.state, scheduleId)),
      schedules: () => Effect.sync(() => [...State.schedules(committed.state)]),
      counts: () => Effect.sync(() => Query.counts(committed.state)),
      nextWakeAt: () => Effect.sync(() => Query.nextWakeAt(decided)),
    };
    return service;
  });

/** A scoped layer providing `Engine` for the store in `directory`. */
export const layer = (
  directory: string,
  options: EngineOptions = {},
): Layer.Layer<Engine, OpenError | EngineError, Disk> =>
  Layer.scoped(Engine, open(directory, options));
