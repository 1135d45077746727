/**
 * The engine: a durable job queue over the store and core's deciders.
 *
 * Commands wait in one queue. A drain (a microtask, so that the commands
 * issued in the same turn share it) hands them to the batch decider
 * (`internal/batchDecider.ts`), which decides each in order against the
 * running state, folds the accepted ones' records as one transient batch,
 * and queues all of them as one store submission (which assigns their
 * sequences in that order). Each caller resolves only once that submission
 * is durable as the store's policy asks, and fails with it. A rejected
 * command fails alone and appends nothing.
 *
 * Two states are kept. `decided` includes everything submitted, so the next
 * command decides against it (two claims never take the same job);
 * `committed` includes only batches whose durability has resolved, and is
 * what queries read: a query never shows a job that a crash could still
 * take back under the chosen policy.
 */
import {
  Commands,
  type Decide,
  Evolve,
  Generation,
  type Event,
  type HistoryError,
  type Job,
  Query,
  type Schedule,
  Snapshot,
  State,
  type Value,
} from "@tay/core";
import { Clock, Context, Deferred, Effect, Layer, type Scope } from "effect";
import * as E from "fp-ts/lib/Either.js";
import { Disk } from "../disk/Disk.js";
import * as Init from "../store/Init.js";
import * as Layout from "../store/Layout.js";
import type { EnginePromises } from "./EnginePromises.js";
import type { RecoveryReport } from "../store/Recovery.js";
import { foldProjection } from "../store/StateProjection.js";
import * as Store from "../store/Store.js";
import type { CompactionReport } from "../store/Store.js";
import { HistoryRejected, type InitError, type RecoveryError } from "../store/StoreError.js";
import type { StoreOptionsInput } from "../store/StoreOptions.js";
import { BatchDecider } from "./internal/batchDecider.js";
import {
  type AnswerOf,
  type EngineError,
  FiberRequest,
  Missing,
  type Pending,
  PromiseRequest,
  Rejected,
} from "./internal/engineRequest.js";
import { runToPromise } from "./internal/runToPromise.js";
import * as Writer from "../store/internal/writer.js";

export { Rejected };
export type { EngineError };

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

/** How `fail` ends an attempt: `discard` ends the job whatever attempts are left. */
export interface FailOptions {
  readonly discard?: boolean;
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
  /**
   * The same commands and reads answered as promises (see
   * `EnginePromises`): for callers outside Effect, without a fiber per
   * command. Valid while the engine's scope is open.
   */
  readonly promises: EnginePromises;
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
    options?: FailOptions,
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

export { foldProjection };

const claimLimitDefault = 1;

// The assertion for the job or schedule a command has just touched.
const present = <A>(found: A | undefined, what: string): A | Missing =>
  found === undefined ? new Missing(`${what} missing after its own command`) : found;

const jobOf = (state: State.State, jobId: number) =>
  present(State.job(state, jobId), `job ${jobId}`);

/** The jobs a command's records touch (inserted ones, or started ones), from its state. */
const jobsTouched = (
  state: State.State,
  events: Decide.Decision,
  tag: "JobInserted" | "JobStarted",
): ReadonlyArray<Job.Job> | Missing => {
  const jobs: Array<Job.Job> = [];
  for (const event of events) {
    const members = event._tag === "Mutation" ? event.events : [event];
    for (const member of members) {
      if (member._tag !== tag) continue;
      const job = jobOf(state, member.jobId);
      if (job instanceof Missing) return job;
      jobs.push(job);
    }
  }
  return jobs;
};

const insertedJob: AnswerOf<Job.Job> = (state, events) => {
  const [event] = events;
  return event?._tag === "JobInserted"
    ? jobOf(state, event.jobId)
    : new Missing("insert decided no job");
};
const insertedJobs: AnswerOf<ReadonlyArray<Job.Job>> = (state, events) =>
  jobsTouched(state, events, "JobInserted");
const startedJobs: AnswerOf<ReadonlyArray<Job.Job>> = (state, events) =>
  jobsTouched(state, events, "JobStarted");
const theEvents: AnswerOf<Decide.Decision> = (_state, events) => events;

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

/** A command ready to queue, and how to read its caller's answer. */
interface Issue<A> {
  readonly command: Commands.Command;
  readonly answerOf: AnswerOf<A>;
}

const scheduleOf =
  (scheduleId: string): AnswerOf<Schedule.Schedule> =>
  (state) =>
    present(State.schedule(state, scheduleId), `schedule ${scheduleId}`);
const jobById =
  (jobId: number): AnswerOf<Job.Job> =>
  (state) =>
    jobOf(state, jobId);

/**
 * Every engine command, built at time `at`: shared by the Effect face and
 * the promise face, which differ only in how they wait.
 */
const issue = {
  insert: (at: number, job: Commands.NewJob): Issue<Job.Job> => ({
    command: Commands.insertJobs({ now: at, jobs: [job] }),
    answerOf: insertedJob,
  }),
  insertMany: (
    at: number,
    jobs: ReadonlyArray<Commands.NewJob>,
  ): Issue<ReadonlyArray<Job.Job>> => ({
    command: Commands.insertJobs({ now: at, jobs }),
    answerOf: insertedJobs,
  }),
  claim: (at: number, queue: string, limit = claimLimitDefault): Issue<ReadonlyArray<Job.Job>> => ({
    command: Commands.claimJobs({ now: at, queue, limit }),
    answerOf: startedJobs,
  }),
  complete: (at: number, jobId: number, result: Value.Value | undefined): Issue<Job.Job> => ({
    command:
      result === undefined
        ? Commands.completeJob({ now: at, jobId })
        : Commands.completeJob({ now: at, jobId, result }),
    answerOf: jobById(jobId),
  }),
  fail: (at: number, jobId: number, error: string, options: FailOptions = {}): Issue<Job.Job> => ({
    command:
      options.discard === undefined
        ? Commands.failJob({ now: at, jobId, error })
        : Commands.failJob({ now: at, jobId, error, discard: options.discard }),
    answerOf: jobById(jobId),
  }),
  cancel: (at: number, jobId: number, reason: string | undefined): Issue<Job.Job> => ({
    command: Commands.cancelJob({ now: at, jobId, reason: reason ?? null }),
    answerOf: jobById(jobId),
  }),
  registerSchedule: (
    at: number,
    scheduleId: string,
    definition: Event.ScheduleDefinition,
    expectedRevision: number | undefined,
  ): Issue<Schedule.Schedule> => ({
    command:
      expectedRevision === undefined
        ? Commands.registerSchedule({ now: at, scheduleId, definition })
        : Commands.registerSchedule({ now: at, scheduleId, definition, expectedRevision }),
    answerOf: scheduleOf(scheduleId),
  }),
  cancelSchedule: (
    at: number,
    scheduleId: string,
    expectedRevision: number | undefined,
  ): Issue<Schedule.Schedule> => ({
    command:
      expectedRevision === undefined
        ? Commands.cancelSchedule({ now: at, scheduleId })
        : Commands.cancelSchedule({ now: at, scheduleId, expectedRevision }),
    answerOf: scheduleOf(scheduleId),
  }),
  rescue: (at: number, startedBefore: number, error: string): Issue<Decide.Decision> => ({
    command: Commands.rescueJobs({ now: at, startedBefore, error }),
    answerOf: theEvents,
  }),
  makeDueAvailable: (at: number): Issue<Decide.Decision> => ({
    command: Commands.makeDueAvailable({ now: at }),
    answerOf: theEvents,
  }),
  tick: (at: number): Issue<Decide.Decision> => ({
    command: Commands.tick({ now: at }),
    answerOf: theEvents,
  }),
};

const isDelivered = (event: Event.DomainEvent) =>
  event._tag === "OccurrenceAdvanced" && event.outcome === "delivered";
const isSkipped = (event: Event.DomainEvent) =>
  event._tag === "OccurrenceAdvanced" && event.outcome === "skipped";

/** What a tick's two commands did. */
const tickReport = (promoted: Decide.Decision, occurrences: Decide.Decision): TickReport => ({
  madeAvailable: promoted.length,
  delivered: countTag(occurrences, isDelivered),
  skipped: countTag(occurrences, isSkipped),
});

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
    const writer = Writer.writerOf(store);
    if (writer === undefined) return yield* Effect.dieMessage("the store has no writer");
    // Commands wait in `queue`; `drain` hands everything waiting to the
    // decider, which decides it in order and queues the accepted commands'
    // records as ONE submission whose durability answers them all.
    const decisions = new BatchDecider(writer, finished.right, recovered.report.lastSequence);
    let queue: Array<Pending> = [];
    let drainScheduled = false;
    // A compaction holds the decider: nothing decides until the new base is in.
    let paused = false;
    let waitingForGate = false;

    const drain = (): void => {
      drainScheduled = false;
      if (paused || queue.length === 0) return;
      const admitted = Writer.admission(writer.state);
      if (admitted._tag === "Gated") {
        // A compaction of the store (not through the engine) holds its gate.
        if (!waitingForGate) {
          waitingForGate = true;
          Effect.runFork(
            Effect.zipRight(
              Deferred.await(admitted.gate),
              Effect.sync(() => {
                waitingForGate = false;
                schedule();
              }),
            ),
          );
        }
        return;
      }
      const requests = queue;
      queue = [];
      if (admitted._tag === "Refused") {
        for (const request of requests) request.refuse(admitted.error);
        return;
      }
      try {
        decisions.decide(requests);
      } catch (defect) {
        // Nothing was queued (queueing is the last step): every caller of
        // this drain not answered yet dies with the bug.
        for (const request of requests) request.die(defect);
      }
    };

    const schedule = (): void => {
      if (drainScheduled || paused) return;
      drainScheduled = true;
      // A microtask: the commands issued in this turn join the same batch.
      queueMicrotask(drain);
    };

    const execute = <A>({ command, answerOf }: Issue<A>) =>
      Effect.async<A, EngineError>((resume) => {
        queue.push(new FiberRequest(command, answerOf, resume));
        schedule();
      });
    const submit = <A>({ command, answerOf }: Issue<A>) =>
      new Promise<A>((resolve, reject) => {
        queue.push(new PromiseRequest(command, answerOf, resolve, reject));
        schedule();
      });

    const now = Clock.currentTimeMillis;
    // The promise face reads the clock of the context the engine was opened in.
    const clock = yield* Effect.clock;
    const nowMillis = () => clock.unsafeCurrentTimeMillis();

    const rescue = (startedBefore: number, error: string) =>
      Effect.flatMap(now, (at) =>
        Effect.map(execute(issue.rescue(at, startedBefore, error)), (events) => events.length),
      );

    let rescued = 0;
    if (options.rescueOnOpen ?? true) {
      const orphans = Query.jobsIn(decisions.decided, "executing").length;
      if (orphans > 0) {
        // Every executing job is an orphan: the lock proves no other writer.
        rescued = yield* rescue(Number.MAX_SAFE_INTEGER, orphanError);
      }
    }

    const report: EngineReport = {
      ...recovered.report,
      jobs: Query.totals(decisions.committed),
      schedules: decisions.committed.schedules.size,
      lastJobId: decisions.committed.lastJobId,
      rescued,
    };

    const compactions = yield* Effect.makeSemaphore(1);
    const compact = (retentionMs: number): Effect.Effect<CompactionReport, EngineError> =>
      compactions.withPermits(1)(
        Effect.gen(function* () {
          const at = yield* now;
          // Decide what is already queued, then hold the decider: no
          // command decides against a state the new base would not contain.
          yield* Effect.sync(() => {
            drain();
            paused = true;
          });
          return yield* Effect.gen(function* () {
            const base = Snapshot.snapshot(decisions.decided, { now: at, retentionMs });
            const compacted = yield* store.compact(base);
            const folded = Evolve.foldGeneration(base, []);
            if (E.isLeft(folded)) {
              return yield* Effect.die(`snapshot does not fold: ${folded.left.reason._tag}`);
            }
            decisions.rebase(folded.right);
            return compacted;
          }).pipe(
            Effect.ensuring(
              Effect.sync(() => {
                paused = false;
                schedule();
              }),
            ),
          );
        }),
      );

    const listJobs = (filter: JobFilter = {}): ReadonlyArray<Job.Job> => {
      const all =
        filter.state === undefined
          ? [...State.jobs(decisions.committed)].filter(
              (job) => filter.queue === undefined || job.queue === filter.queue,
            )
          : Query.jobsIn(decisions.committed, filter.state, filter.queue);
      return filter.limit === undefined ? all : all.slice(0, filter.limit);
    };

    const promises: EnginePromises = {
      insert: (job) => submit(issue.insert(nowMillis(), job)),
      insertMany: (jobs) => submit(issue.insertMany(nowMillis(), jobs)),
      claim: (queueName, limit) => submit(issue.claim(nowMillis(), queueName, limit)),
      complete: (jobId, result) => submit(issue.complete(nowMillis(), jobId, result)),
      fail: (jobId, error, failOptions) =>
        submit(issue.fail(nowMillis(), jobId, error, failOptions)),
      cancel: (jobId, reason) => submit(issue.cancel(nowMillis(), jobId, reason)),
      registerSchedule: (scheduleId, definition, expectedRevision) =>
        submit(issue.registerSchedule(nowMillis(), scheduleId, definition, expectedRevision)),
      cancelSchedule: (scheduleId, expectedRevision) =>
        submit(issue.cancelSchedule(nowMillis(), scheduleId, expectedRevision)),
      tick: async () => {
        const at = nowMillis();
        const promoted = await submit(issue.makeDueAvailable(at));
        return tickReport(promoted, await submit(issue.tick(at)));
      },
      rescue: async (startedBefore, error) =>
        (await submit(issue.rescue(nowMillis(), startedBefore, error))).length,
      compact: (retentionMs) => runToPromise(compact(retentionMs)),
      state: () => decisions.committed,
      job: (jobId) => State.job(decisions.committed, jobId),
      jobs: listJobs,
      schedule: (scheduleId) => State.schedule(decisions.committed, scheduleId),
      schedules: () => [...State.schedules(decisions.committed)],
      counts: () => Query.counts(decisions.committed),
      nextWakeAt: () => Query.nextWakeAt(decisions.decided),
    };

    const service: EngineService = {
      report,
      store,
      promises,
      insert: (job) => Effect.flatMap(now, (at) => execute(issue.insert(at, job))),
      insertMany: (jobs) => Effect.flatMap(now, (at) => execute(issue.insertMany(at, jobs))),
      claim: (queueName, limit) =>
        Effect.flatMap(now, (at) => execute(issue.claim(at, queueName, limit))),
      complete: (jobId, result) =>
        Effect.flatMap(now, (at) => execute(issue.complete(at, jobId, result))),
      fail: (jobId, error, failOptions) =>
        Effect.flatMap(now, (at) => execute(issue.fail(at, jobId, error, failOptions))),
      cancel: (jobId, reason) =>
        Effect.flatMap(now, (at) => execute(issue.cancel(at, jobId, reason))),
      registerSchedule: (scheduleId, definition, expectedRevision) =>
        Effect.flatMap(now, (at) =>
          execute(issue.registerSchedule(at, scheduleId, definition, expectedRevision)),
        ),
      cancelSchedule: (scheduleId, expectedRevision) =>
        Effect.flatMap(now, (at) =>
          execute(issue.cancelSchedule(at, scheduleId, expectedRevision)),
        ),
      tick: () =>
        Effect.gen(function* () {
          const at = yield* now;
          const promoted = yield* execute(issue.makeDueAvailable(at));
          const occurrences = yield* execute(issue.tick(at));
          return tickReport(promoted, occurrences);
        }),
      rescue,
      compact,
      state: () => Effect.sync(promises.state),
      job: (jobId) => Effect.sync(() => promises.job(jobId)),
      jobs: (filter) => Effect.sync(() => listJobs(filter)),
      schedule: (scheduleId) => Effect.sync(() => promises.schedule(scheduleId)),
      schedules: () => Effect.sync(promises.schedules),
      counts: () => Effect.sync(promises.counts),
      nextWakeAt: () => Effect.sync(promises.nextWakeAt),
    };
    return service;
  });

/** A scoped layer providing `Engine` for the store in `directory`. */
export const layer = (
  directory: string,
  options: EngineOptions = {},
): Layer.Layer<Engine, OpenError | EngineError, Disk> =>
  Layer.scoped(Engine, open(directory, options));
