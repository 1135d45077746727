/**
 * The engine's operations, defined once: each command as the core command
 * it issues at time `at` and how its caller's answer is read from the
 * state right after its records; each query as a read of the states. The
 * Effect face and the promise face are both built from these tables
 * (`faces.ts`), so they cannot drift apart.
 */
import {
  type Backoff,
  Commands,
  Decide,
  Event,
  type Job,
  Query,
  type Queue,
  type Schedule,
  State,
  type Value,
} from "@tay/core";
import { type AnswerOf, type Lane, Missing, type Waiting } from "./engineRequest.js";
import { type JobFilter, listJobs, type TerminalReader } from "./jobListing.js";

export type { Lane } from "./engineRequest.js";
export type { JobFilter, TerminalReader } from "./jobListing.js";

/** A command ready to queue, and how to read its caller's answer. */
export interface Issue<A> {
  readonly command: Commands.Command;
  readonly answerOf: AnswerOf<A>;
  /** A waiting claim: parked until it can start a job. */
  readonly waiting?: Waiting;
  /** Gives up a waiting claim that is still parked (see `NextJobsOptions`). */
  readonly signal?: AbortSignal;
}

/** How a waiting claim waits. */
export interface NextJobsOptions {
  /** At most this many jobs in all (default: the lanes' limits summed). */
  readonly limit?: number;
  /**
   * Gives up while the claim is still parked: the caller is then answered
   * with no job. Once a drain has started jobs for it, the claim is
   * answered with them whatever the signal says (the jobs are executing).
   */
  readonly signal?: AbortSignal;
  /**
   * Told, synchronously inside the drain that decides it, that the claim
   * started jobs: they are in a batch being made durable, and the claim is
   * answered with them once it is. (Over PostgreSQL, an append that
   * conflicts has its commands decided again, so a claim told this may
   * still wait again.) The worker runtime issues its next claim from
   * here, for room that frees up while this one's write is on its way,
   * instead of waiting for the answer (docs/worker.md, "Claims in flight").
   */
  readonly onDecided?: () => void;
}

/** How `fail` ends an attempt: `discard` ends the job whatever attempts are left. */
export interface FailOptions {
  readonly discard?: boolean;
  /** How long until the retry (default: core's policy, 1 s doubling to 1 h). */
  readonly backoff?: Backoff.Policy;
  /** Only this attempt (the one the caller claimed): `StaleAttempt` for any other. */
  readonly attempt?: number;
}

/** How `complete` ends an attempt. */
export interface CompleteOptions {
  /** Only this attempt (the one the caller claimed): `StaleAttempt` for any other. */
  readonly attempt?: number;
}

/**
 * A job as an insert answers it. A job whose unique key collided
 * (EVENTS-V3.md) is the existing job, with `duplicate: true`: nothing was
 * appended for it. A job actually inserted has no `duplicate` field.
 */
export type InsertedJob = Job.Job & { readonly duplicate?: true };

/** How `redrive` runs a discarded or cancelled job again. */
export interface RedriveOptions {
  /** Must exceed the job's attempt (default: its max_attempts, or attempt + 1 when used up). */
  readonly maxAttempts?: number;
  readonly reason?: string;
}

/** A queue's limits (EVENTS-V3.md (24,3)); a field left out is kept, null removes it. */
export interface QueueLimits {
  readonly concurrency?: number | null;
  readonly rateLimit?: { readonly count: number; readonly perMs: number } | null;
}

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

/**
 * The existing job a duplicate insert answers with, marked. Its fields
 * spelled out: a spread with an added key (`{ ...job, duplicate: true }`)
 * takes V8's slow path (~3 µs a duplicate), and a spread then marked builds
 * a dictionary object (~1 KB a duplicate, 2026-12-02); a literal is one
 * object of a fixed shape (the type makes a field left out an error).
 */
const marked = (job: Job.Job): InsertedJob & { readonly duplicate: true } => ({
  jobId: job.jobId,
  queue: job.queue,
  worker: job.worker,
  args: job.args,
  priority: job.priority,
  maxAttempts: job.maxAttempts,
  attempt: job.attempt,
  state: job.state,
  insertedAt: job.insertedAt,
  scheduledAt: job.scheduledAt,
  attemptedAt: job.attemptedAt,
  finishedAt: job.finishedAt,
  errors: job.errors,
  result: job.result,
  scheduleId: job.scheduleId,
  uniqueKey: job.uniqueKey,
  uniquePeriodMs: job.uniquePeriodMs,
  timeoutMs: job.timeoutMs,
  duplicate: true,
});

/** The answers of an insert using schema-3 fields: duplicates marked (`Decide.insertAnswers`). */
const answeredJobs =
  (command: Commands.InsertJobs): AnswerOf<ReadonlyArray<InsertedJob>> =>
  (state, events) => {
    const jobs: Array<InsertedJob> = [];
    for (const answer of Decide.insertAnswers(state, command, events)) {
      if (answer === undefined) return new Missing("an inserted job has no answer");
      const job = jobOf(state, answer.jobId);
      if (job instanceof Missing) return job;
      jobs.push(answer.duplicate ? marked(job) : job);
    }
    return jobs;
  };

const firstOf =
  (answer: AnswerOf<ReadonlyArray<InsertedJob>>): AnswerOf<InsertedJob> =>
  (state, events) => {
    const jobs = answer(state, events);
    if (jobs instanceof Missing) return jobs;
    return jobs[0] ?? new Missing("insert decided no job");
  };

/**
 * The answer of a one-job insert using schema-3 fields. Inserted (its one
 * record is the (1,3) of its queue and key, as `Decide.insertAnswers`
 * reads it): that job, read without the lists `answeredJobs` builds (~0.5
 * KB an insert, 2026-12-02). A duplicate: the job holding its key
 * (`Decide.uniqueHolderOf`), marked.
 */
const answeredJob =
  (command: Commands.InsertJobs): AnswerOf<InsertedJob> =>
  (state, events) => {
    // Indexed, not destructured: a destructuring walks an iterator per answer.
    const job = command.jobs[0];
    const event = events[0];
    if (
      job !== undefined &&
      events.length === 1 &&
      event?._tag === "JobInsertedV3" &&
      event.queue === job.queue &&
      event.uniqueKey === (job.uniqueKey ?? null)
    ) {
      return jobOf(state, event.jobId);
    }
    // A duplicate: the job holding its key, read without `answeredJobs`'s lists.
    if (job !== undefined && events.length === 0 && command.jobs.length === 1) {
      const holder = Decide.uniqueHolderOf(state, job, command.now);
      const found =
        holder === undefined ? new Missing("a duplicate names no job") : jobOf(state, holder);
      return found instanceof Missing ? found : marked(found);
    }
    return firstOf(answeredJobs(command))(state, events);
  };

const insertIssue = (at: number, job: Commands.NewJob): Issue<InsertedJob> => {
  const command = Commands.insertJobs({ now: at, jobs: [job] });
  return {
    command,
    answerOf: Decide.insertUsesV3(command) ? answeredJob(command) : insertedJob,
  };
};

const insertManyIssue = (
  at: number,
  jobs: ReadonlyArray<Commands.NewJob>,
): Issue<ReadonlyArray<InsertedJob>> => {
  const command = Commands.insertJobs({ now: at, jobs });
  return {
    command,
    answerOf: Decide.insertUsesV3(command) ? answeredJobs(command) : insertedJobs,
  };
};

const queueStateOf =
  (queue: string): AnswerOf<Queue.QueueState | undefined> =>
  (state) =>
    State.queue(state, queue);
const insertedJobs: AnswerOf<ReadonlyArray<Job.Job>> = (state, events) =>
  jobsTouched(state, events, "JobInserted");
const startedJobs: AnswerOf<ReadonlyArray<Job.Job>> = (state, events) =>
  jobsTouched(state, events, "JobStarted");
const theEvents: AnswerOf<Decide.Decision> = (_state, events) => events;
const eventCount: AnswerOf<number> = (_state, events) => events.length;

const scheduleOf =
  (scheduleId: string): AnswerOf<Schedule.Schedule> =>
  (state) =>
    present(State.schedule(state, scheduleId), `schedule ${scheduleId}`);
const jobById =
  (jobId: number): AnswerOf<Job.Job> =>
  (state, _, left) =>
    present(
      State.job(state, jobId) ?? left?.jobs.find((job) => job.jobId === jobId),
      `job ${jobId}`,
    );

/**
 * Every engine command, issued at time `at`. A face gives each to its
 * callers without the `at` (it reads its clock), as a fiber's Effect or as
 * a promise; both resolve once the command's records are durable.
 */
export const commands = {
  /**
   * Inserts one job; answers it as inserted. With a `uniqueKey` that a job
   * of the queue holds (not terminal, or finished within `uniquePeriodMs`),
   * appends nothing and answers that job with `duplicate: true`.
   */
  insert: (at: number, job: Commands.NewJob): Issue<InsertedJob> => insertIssue(at, job),
  /**
   * Inserts several jobs atomically (one mutation); answers them in order,
   * each duplicate on its own (the others are inserted together).
   */
  insertMany: (
    at: number,
    jobs: ReadonlyArray<Commands.NewJob>,
  ): Issue<ReadonlyArray<InsertedJob>> => insertManyIssue(at, jobs),
  /** Runs a discarded or cancelled job again, keeping its history (EVENTS-V3.md (20,3)). */
  redrive: (at: number, jobId: number, options: RedriveOptions = {}): Issue<Job.Job> => ({
    command: Commands.redriveJob({
      now: at,
      jobId,
      reason: options.reason ?? null,
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    }),
    answerOf: jobById(jobId),
  }),
  /** Pauses a queue: claims start nothing from it (running jobs go on). Answers its state. */
  pauseQueue: (at: number, queue: string): Issue<Queue.QueueState | undefined> => ({
    command: Commands.setQueueState({ now: at, queue, paused: true }),
    answerOf: queueStateOf(queue),
  }),
  /** Resumes a paused queue, keeping its limits; answers its state (undefined: the default). */
  resumeQueue: (at: number, queue: string): Issue<Queue.QueueState | undefined> => ({
    command: Commands.setQueueState({ now: at, queue, paused: false }),
    answerOf: queueStateOf(queue),
  }),
  /** Sets a queue's concurrency and rate limit; answers its state. */
  setQueueLimits: (
    at: number,
    queue: string,
    limits: QueueLimits,
  ): Issue<Queue.QueueState | undefined> => ({
    command: Commands.setQueueState({
      now: at,
      queue,
      ...(limits.concurrency === undefined ? {} : { concurrency: limits.concurrency }),
      ...(limits.rateLimit === undefined
        ? {}
        : {
            rateLimit:
              limits.rateLimit === null
                ? null
                : { count: limits.rateLimit.count, perMs: limits.rateLimit.perMs },
          }),
    }),
    answerOf: queueStateOf(queue),
  }),
  /** Starts up to `limit` (default 1) available jobs of `queue` in claim order; may be none. */
  claim: (at: number, queue: string, limit = claimLimitDefault): Issue<ReadonlyArray<Job.Job>> => ({
    command: Commands.claimJobs({ now: at, queue, limit }),
    answerOf: startedJobs,
  }),
  /**
   * Completes an executing job, recording `result` with it when given; with
   * `attempt`, only if that is still the job's current attempt.
   */
  complete: (
    at: number,
    jobId: number,
    result?: Value.Input,
    options: CompleteOptions = {},
  ): Issue<Job.Job> => ({
    command: Commands.completeJob({
      now: at,
      jobId,
      ...(result === undefined ? {} : { result }),
      ...(options.attempt === undefined ? {} : { attempt: options.attempt }),
    }),
    answerOf: jobById(jobId),
  }),
  /**
   * Fails an executing job: retried after the backoff, or discarded when
   * attempts are spent (or `discard`); with `attempt`, only if that is
   * still the job's current attempt.
   */
  fail: (at: number, jobId: number, error: string, options: FailOptions = {}): Issue<Job.Job> => ({
    command: Commands.failJob({
      now: at,
      jobId,
      error,
      ...(options.discard === undefined ? {} : { discard: options.discard }),
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.attempt === undefined ? {} : { attempt: options.attempt }),
    }),
    answerOf: jobById(jobId),
  }),
  /** Cancels a job that is not terminal. */
  cancel: (at: number, jobId: number, reason?: string): Issue<Job.Job> => ({
    command: Commands.cancelJob({ now: at, jobId, reason: reason ?? null }),
    answerOf: jobById(jobId),
  }),
  /** Registers or re-registers a schedule; `expectedRevision` 0 means "must be new". */
  registerSchedule: (
    at: number,
    scheduleId: string,
    definition: Commands.ScheduleDefinitionInput,
    expectedRevision?: number,
  ): Issue<Schedule.Schedule> => ({
    command:
      expectedRevision === undefined
        ? Commands.registerSchedule({ now: at, scheduleId, definition })
        : Commands.registerSchedule({ now: at, scheduleId, definition, expectedRevision }),
    answerOf: scheduleOf(scheduleId),
  }),
  /** Cancels a schedule (optionally only at `expectedRevision`). */
  cancelSchedule: (
    at: number,
    scheduleId: string,
    expectedRevision?: number,
  ): Issue<Schedule.Schedule> => ({
    command:
      expectedRevision === undefined
        ? Commands.cancelSchedule({ now: at, scheduleId })
        : Commands.cancelSchedule({ now: at, scheduleId, expectedRevision }),
    answerOf: scheduleOf(scheduleId),
  }),
  /**
   * Starts up to `limit` jobs from `lanes` (each lane at most its own
   * limit), waiting until at least one can start: answered as soon as a
   * drain makes a job of one of its queues available (an insert, a due
   * retry or occurrence once timed transitions run). Lanes take turns
   * being first. Answers the started jobs, or none if `signal` gave up.
   */
  nextJobs: (
    at: number,
    lanes: ReadonlyArray<Lane>,
    options: NextJobsOptions = {},
  ): Issue<ReadonlyArray<Job.Job>> => {
    const limit = options.limit ?? lanes.reduce((sum, lane) => sum + lane.limit, 0);
    return {
      command: Commands.claimJobs({ now: at, queue: lanes[0]?.queue ?? "", limit }),
      answerOf: startedJobs,
      waiting: { lanes, limit, rotation: 0, decided: options.onDecided },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
  },
  /** Fails every job executing since before `startedBefore` (stuck workers); answers how many. */
  rescue: (at: number, startedBefore: number, error: string): Issue<number> => ({
    command: Commands.rescueJobs({ now: at, startedBefore, error }),
    answerOf: eventCount,
  }),
};

/**
 * How long after `started.at + timeout_ms` the engine fails an attempt
 * still executing (EVENTS-V3.md's grace): the worker aborts its handler at
 * the deadline itself, and this leaves it time to report the failure first.
 */
export const timeoutGraceMs = 5_000;

/**
 * The commands of a tick, at one time, in the order it issues them: due
 * jobs first, then due occurrences, then timeouts. Each is its own batch, so
 * a tick that fails may have committed the ones before (the crash and fault
 * workloads replay this very list).
 */
export const tickIssues = (
  at: number,
): readonly [Issue<Decide.Decision>, Issue<Decide.Decision>, Issue<Decide.Decision>] => [
  { command: Commands.makeDueAvailable({ now: at }), answerOf: theEvents },
  { command: Commands.tick({ now: at }), answerOf: theEvents },
  { command: Commands.timeoutJobs({ now: at, graceMs: timeoutGraceMs }), answerOf: theEvents },
];

/** What a `tick` did. */
export interface TickReport {
  readonly madeAvailable: number;
  readonly delivered: number;
  readonly skipped: number;
  /** Attempts failed for outliving their `timeout_ms` plus `timeoutGraceMs`. */
  readonly timedOut: number;
}

const countMembers = (
  events: ReadonlyArray<Event.Event>,
  predicate: (event: Event.DomainEvent) => boolean,
): number => {
  let total = 0;
  for (const event of events) {
    if (event._tag === "Mutation") total += event.events.filter(predicate).length;
    else if (!Event.isSnapshotPart(event) && predicate(event)) total += 1;
  }
  return total;
};

/** What a tick's commands did (the decisions of `tickIssues`, in order). */
export const tickReport = (
  promoted: Decide.Decision,
  occurrences: Decide.Decision,
  timedOut: Decide.Decision,
): TickReport => ({
  timedOut: timedOut.length,
  madeAvailable: promoted.length,
  delivered: countMembers(
    occurrences,
    (event) => event._tag === "OccurrenceAdvanced" && event.outcome === "delivered",
  ),
  skipped: countMembers(
    occurrences,
    (event) => event._tag === "OccurrenceAdvanced" && event.outcome === "skipped",
  ),
});

/** The states a query may read. */
export interface States {
  /** Only durable batches: what every query shows. */
  readonly committed: State.State;
  /** Everything decided: when the next timed transition is due. */
  readonly decided: State.State;
  /**
   * The whole records of the jobs `committed` holds as facts (a lean state
   * over a terminal index); absent for a full state.
   */
  readonly terminal?: TerminalReader;
}

/** A job of the committed state: whole, or read from the index when held as facts. */
const jobIn = (states: States, jobId: number): Job.Job | undefined => {
  const found = State.job(states.committed, jobId);
  if (found !== undefined || states.terminal === undefined) return found;
  return State.fact(states.committed, jobId) === undefined ? undefined : states.terminal(jobId);
};

/** Every engine query: synchronous reads of the committed state. */
export const queries = {
  /**
   * The committed state (only durable batches). With the terminal index
   * (the default for a directory's store) it is lean: completed jobs
   * without a unique key are in `terminal` as facts, not in `jobs`; read
   * them with `job` and `jobs`.
   */
  state: (states: States): State.State => states.committed,
  /**
   * One job as committed, or undefined; a completed job that left memory is
   * read from the terminal index (whose failure after open it throws).
   */
  job: (states: States, jobId: number): Job.Job | undefined => jobIn(states, jobId),
  /**
   * Committed jobs, optionally of one queue and state, at most `limit`,
   * ascending by id; completed jobs that left memory are read from the
   * terminal index (whose failure after open it throws).
   */
  jobs: (states: States, filter?: JobFilter): ReadonlyArray<Job.Job> =>
    listJobs(states.committed, filter, states.terminal),
  /** One schedule as committed, or undefined. */
  schedule: (states: States, scheduleId: string): Schedule.Schedule | undefined =>
    State.schedule(states.committed, scheduleId),
  /** Every committed schedule. */
  schedules: (states: States): ReadonlyArray<Schedule.Schedule> => [
    ...State.schedules(states.committed),
  ],
  /** Job counts per queue and state. */
  counts: (states: States): ReadonlyMap<string, Query.Counts> => Query.counts(states.committed),
  /** A queue's committed state (EVENTS-V3.md), or undefined for the default: unpaused, no limits. */
  queue: (states: States, queue: string): Queue.QueueState | undefined =>
    State.queue(states.committed, queue),
  /** Every queue whose committed state is not the default. */
  queues: (states: States): ReadonlyArray<Queue.QueueState> => [
    ...states.committed.queues.values(),
  ],
  /** The earliest time a `tick` has work to do, or null. */
  nextWakeAt: (states: States): number | null => Query.nextWakeAt(states.decided, timeoutGraceMs),
};
