// Model-based test with fast-check `commands` and `modelRun`: random command
// sequences run through the deciders and `evolve`, and through a deliberately
// naive reference model (plain arrays, no events, no indexes) written here;
// after every step the two states must agree and the invariants hold, and at
// the end `fold` of every decided record and every kept old state must still
// agree with the model. The model knows the schema-3 commands too (unique
// inserts, redrive, queue state with pause, concurrency and a rate limit,
// timeouts).
import {
  Cron,
  Decide,
  Event,
  Evolve,
  HistoryError,
  type Job,
  type Schedule,
  State,
  type Value,
} from "@tay/core";
import type { Commands } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { type Plan, stepV3 as step } from "./support/Plans.js";

// ---- the reference model -------------------------------------------------

interface ModelJob {
  jobId: number;
  queue: string;
  worker: string;
  args: Event.JobInserted["args"];
  priority: number;
  maxAttempts: number;
  attempt: number;
  state: Event.JobState;
  insertedAt: number;
  scheduledAt: number;
  attemptedAt: number | null;
  finishedAt: number | null;
  errors: Array<{ attempt: number; at: number; error: string }>;
  result: { value: Event.ResultRecorded["result"]; at: number } | null;
  scheduleId: string | null;
  uniqueKey: string | null;
  uniquePeriodMs: number | null;
  timeoutMs: number | null;
}

interface ModelQueue {
  queue: string;
  at: number;
  paused: boolean;
  concurrency: number | null;
  rateLimit: { count: number; perMs: number } | null;
}

interface ModelSchedule {
  scheduleId: string;
  definition: Event.ScheduleDefinition;
  revision: number;
  definitionRevision: number;
  registeredAt: number;
  nextDueAt: number;
  lastDueAt: number | null;
  cancelledAt: number | null;
  activeJobIds: Array<number>;
  membershipComplete: boolean;
}

interface Model {
  lastJobId: number;
  jobs: Array<ModelJob>;
  schedules: Array<ModelSchedule>;
  /** Queues not in the default state. */
  queues: Array<ModelQueue>;
  /** Every start of a queue while it had a rate limit (forgotten when the limit is removed). */
  starts: Array<{ queue: string; at: number }>;
}

type Outcome = { readonly rejected: string } | { readonly model: Model };

const terminal = (state: Event.JobState) =>
  state === "completed" || state === "discarded" || state === "cancelled";

const backoffMs = (attempt: number) => Math.min(3_600_000, 1_000 * 2 ** (attempt - 1));

const find = (model: Model, jobId: number) => model.jobs.find((job) => job.jobId === jobId);

const leaveSchedule = (model: Model, job: ModelJob) => {
  const schedule = model.schedules.find((candidate) => candidate.scheduleId === job.scheduleId);
  if (schedule !== undefined) {
    schedule.activeJobIds = schedule.activeJobIds.filter((id) => id !== job.jobId);
  }
  job.scheduleId = null;
};

const fail = (model: Model, job: ModelJob, now: number, error: string, discard: boolean) => {
  job.errors.push({ attempt: job.attempt, at: now, error });
  if (!discard && job.attempt < job.maxAttempts) {
    job.state = "retryable";
    job.scheduledAt = now + backoffMs(job.attempt);
  } else {
    job.state = "discarded";
    job.finishedAt = now;
    leaveSchedule(model, job);
  }
};

const insertJob = (
  model: Model,
  fields: Omit<
    ModelJob,
    | "jobId"
    | "attempt"
    | "state"
    | "attemptedAt"
    | "finishedAt"
    | "errors"
    | "result"
    | "scheduleId"
    | "uniqueKey"
    | "uniquePeriodMs"
    | "timeoutMs"
  > &
    Partial<Pick<ModelJob, "uniqueKey" | "uniquePeriodMs" | "timeoutMs">>,
) => {
  model.lastJobId += 1;
  const job: ModelJob = {
    jobId: model.lastJobId,
    ...fields,
    attempt: 0,
    state: fields.scheduledAt > fields.insertedAt ? "scheduled" : "available",
    attemptedAt: null,
    finishedAt: null,
    errors: [],
    result: null,
    scheduleId: null,
    uniqueKey: fields.uniqueKey ?? null,
    uniquePeriodMs: fields.uniquePeriodMs ?? null,
    timeoutMs: fields.timeoutMs ?? null,
  };
  model.jobs.push(job);
  return job;
};

const sameDefinition = (left: Event.ScheduleDefinition, right: Event.ScheduleDefinition) =>
  JSON.stringify(
    [...Object.entries(left)].map(([key, value]) => [
      key,
      value instanceof Map ? [...value] : value,
    ]),
  ) ===
  JSON.stringify(
    [...Object.entries(right)].map(([key, value]) => [
      key,
      value instanceof Map ? [...value] : value,
    ]),
  );

const nextOccurrence = (definition: Event.ScheduleDefinition, after: number, dueAt: number) => {
  if (definition.everyMs !== null) {
    const every = definition.everyMs;
    return dueAt + (Math.floor((after - dueAt) / every) + 1) * every;
  }
  const cron = Cron.parse(definition.cron ?? "");
  return Either.isRight(cron) ? Cron.next(cron.right, after) : null;
};

/**
 * The value the model keeps for a command's input: the plans carry only
 * scalars and maps of them (values as they are), so anything else is a
 * plan this model does not know.
 */
const modelValue = (input: Value.Input): Value.Value => {
  if (input === null || typeof input !== "object") return input;
  if (input instanceof Map) {
    return new Map([...input].map(([key, item]): [string, Value.Value] => [key, modelValue(item)]));
  }
  throw new Error("the plans make no args but scalars and maps");
};

// The reference semantics of every command, written directly on the model:
// one function per command, each changing the copy of the model `run` made.
const insertJobs = (model: Model, command: Commands.InsertJobs): Outcome => {
  const now = command.now;
  if (command.jobs.some((job) => job.priority !== undefined && job.priority > 9)) {
    return { rejected: "InvalidField" };
  }
  for (const job of command.jobs) {
    // A key another job of the queue holds: nothing inserted (a duplicate).
    const key = job.uniqueKey;
    const period = job.uniquePeriodMs ?? null;
    const held = model.jobs.some(
      (other) =>
        key !== undefined &&
        other.queue === job.queue &&
        other.uniqueKey === key &&
        (!terminal(other.state) ||
          (period !== null && other.finishedAt !== null && other.finishedAt >= now - period)),
    );
    if (held) continue;
    insertJob(model, {
      queue: job.queue,
      worker: job.worker,
      args: modelValue(job.args),
      priority: job.priority ?? 0,
      maxAttempts: job.maxAttempts ?? 20,
      insertedAt: now,
      scheduledAt: job.scheduledAt ?? now,
      uniqueKey: key ?? null,
      uniquePeriodMs: period,
      timeoutMs: job.timeoutMs ?? null,
    });
  }
  return { model };
};

const queueOf = (model: Model, queue: string) => model.queues.find((q) => q.queue === queue);

/** How many starts the queue's state allows now: the naive reading of EVENTS-V3.md. */
const startsAllowed = (model: Model, queue: string, now: number): number => {
  const state = queueOf(model, queue);
  if (state === undefined) return Number.POSITIVE_INFINITY;
  if (state.paused) return 0;
  const executing = model.jobs.filter((job) => job.queue === queue && job.state === "executing");
  let allowed =
    state.concurrency === null ? Number.POSITIVE_INFINITY : state.concurrency - executing.length;
  if (state.rateLimit !== null) {
    const { count, perMs } = state.rateLimit;
    const recent = model.starts.filter((start) => start.queue === queue && start.at > now - perMs);
    allowed = Math.min(allowed, count - recent.length);
  }
  return Math.max(0, allowed);
};

const claimJobs = (model: Model, command: Commands.ClaimJobs): Outcome => {
  const now = command.now;
  const claimed = model.jobs
    .filter((job) => job.queue === command.queue && job.state === "available")
    .sort((a, b) => a.priority - b.priority || a.scheduledAt - b.scheduledAt || a.jobId - b.jobId)
    .slice(0, Math.min(command.limit, startsAllowed(model, command.queue, now)));
  const limited = queueOf(model, command.queue)?.rateLimit != null;
  for (const job of claimed) {
    job.state = "executing";
    job.attempt += 1;
    job.attemptedAt = now;
    if (limited) model.starts.push({ queue: job.queue, at: now });
  }
  return { model };
};

const redriveJob = (model: Model, command: Commands.RedriveJob): Outcome => {
  const job = find(model, command.jobId);
  if (job === undefined) return { rejected: "JobNotFound" };
  if (job.state !== "discarded" && job.state !== "cancelled") {
    return { rejected: "InvalidTransition" };
  }
  const maxAttempts =
    command.maxAttempts ?? (job.maxAttempts > job.attempt ? job.maxAttempts : job.attempt + 1);
  if (maxAttempts <= job.attempt || maxAttempts > 1000) return { rejected: "InvalidField" };
  const taken = model.jobs.some(
    (other) =>
      other !== job &&
      job.uniqueKey !== null &&
      other.queue === job.queue &&
      other.uniqueKey === job.uniqueKey &&
      !terminal(other.state),
  );
  if (taken) return { rejected: "UniqueKeyTaken" };
  job.state = "available";
  job.scheduledAt = command.now;
  job.finishedAt = null;
  job.maxAttempts = maxAttempts;
  return { model };
};

const setQueueState = (model: Model, command: Commands.SetQueueState): Outcome => {
  const before = queueOf(model, command.queue);
  const after: ModelQueue = {
    queue: command.queue,
    at: command.now,
    paused: command.paused ?? before?.paused ?? false,
    concurrency:
      command.concurrency === undefined ? (before?.concurrency ?? null) : command.concurrency,
    rateLimit:
      command.rateLimit === undefined
        ? (before?.rateLimit ?? null)
        : command.rateLimit === null
          ? null
          : { ...command.rateLimit },
  };
  const same =
    (before?.paused ?? false) === after.paused &&
    (before?.concurrency ?? null) === after.concurrency &&
    JSON.stringify(before?.rateLimit ?? null) === JSON.stringify(after.rateLimit);
  if (same) return { model };
  model.queues = model.queues.filter((queue) => queue !== before);
  if (after.paused || after.concurrency !== null || after.rateLimit !== null) {
    model.queues.push(after);
  }
  if (after.rateLimit === null) {
    model.starts = model.starts.filter((start) => start.queue !== command.queue);
  }
  return { model };
};

const timeoutJobs = (model: Model, command: Commands.TimeoutJobs): Outcome => {
  const now = command.now;
  const late = model.jobs
    .filter(
      (job) =>
        job.state === "executing" &&
        job.timeoutMs !== null &&
        (job.attemptedAt ?? 0) + job.timeoutMs + command.graceMs <= now,
    )
    // Earliest deadline first (`State.compareDeadlineOrder`): under a limit
    // the most overdue go first. (The model sorted by start time, which
    // differs when timeouts differ: found by seed -582644135, 2026-12-04.)
    .sort(
      (a, b) =>
        (a.attemptedAt ?? 0) + (a.timeoutMs ?? 0) - ((b.attemptedAt ?? 0) + (b.timeoutMs ?? 0)) ||
        a.jobId - b.jobId,
    )
    .slice(0, command.limit ?? 10_000);
  for (const job of late) fail(model, job, now, "timeout", false);
  return { model };
};

const finishJob = (model: Model, command: Commands.CompleteJob | Commands.FailJob): Outcome => {
  const now = command.now;
  const job = find(model, command.jobId);
  if (job === undefined) return { rejected: "JobNotFound" };
  if (job.state !== "executing") return { rejected: "InvalidTransition" };
  if (command._tag === "FailJob") {
    fail(model, job, now, command.error, command.discard === true);
  } else {
    job.state = "completed";
    job.finishedAt = now;
    if (command.result !== undefined) job.result = { value: modelValue(command.result), at: now };
    leaveSchedule(model, job);
  }
  return { model };
};

const cancelJob = (model: Model, command: Commands.CancelJob): Outcome => {
  const now = command.now;
  const job = find(model, command.jobId);
  if (job === undefined) return { rejected: "JobNotFound" };
  if (terminal(job.state)) return { rejected: "InvalidTransition" };
  job.state = "cancelled";
  job.finishedAt = now;
  leaveSchedule(model, job);
  return { model };
};

const rescueJobs = (model: Model, command: Commands.RescueJobs): Outcome => {
  const now = command.now;
  const orphans = model.jobs
    .filter((job) => job.state === "executing" && (job.attemptedAt ?? 0) < command.startedBefore)
    .sort((a, b) => (a.attemptedAt ?? 0) - (b.attemptedAt ?? 0) || a.jobId - b.jobId)
    .slice(0, command.limit ?? 10_000);
  for (const job of orphans) fail(model, job, now, command.error, false);
  return { model };
};

const makeDueAvailable = (model: Model, command: Commands.MakeDueAvailable): Outcome => {
  const now = command.now;
  const due = model.jobs
    .filter(
      (job) => (job.state === "scheduled" || job.state === "retryable") && job.scheduledAt <= now,
    )
    .sort((a, b) => a.scheduledAt - b.scheduledAt || a.jobId - b.jobId)
    .slice(0, command.limit ?? 10_000);
  for (const job of due) job.state = "available";
  return { model };
};

const registerSchedule = (model: Model, command: Commands.RegisterSchedule): Outcome => {
  const now = command.now;
  const current = model.schedules.find((schedule) => schedule.scheduleId === command.scheduleId);
  const actual = current?.revision ?? 0;
  if (command.expectedRevision !== undefined && command.expectedRevision !== actual) {
    return { rejected: "RevisionMismatch" };
  }
  const definition = { ...command.definition, args: modelValue(command.definition.args) };
  if ((definition.everyMs === null) === (definition.cron === null)) {
    return { rejected: "InvalidDefinition" };
  }
  if (
    current !== undefined &&
    current.cancelledAt === null &&
    sameDefinition(current.definition, definition)
  ) {
    return { model };
  }
  const nextDueAt = nextOccurrence(definition, now, now);
  if (nextDueAt === null) return { rejected: "InvalidDefinition" };
  const revision = actual + 1;
  const schedule: ModelSchedule = {
    scheduleId: command.scheduleId,
    definition,
    revision,
    definitionRevision: revision,
    registeredAt: now,
    nextDueAt,
    lastDueAt: current?.lastDueAt ?? null,
    cancelledAt: null,
    activeJobIds: current?.activeJobIds ?? [],
    membershipComplete: current?.membershipComplete ?? true,
  };
  model.schedules = [...model.schedules.filter((other) => other !== current), schedule];
  return { model };
};

const cancelSchedule = (model: Model, command: Commands.CancelSchedule): Outcome => {
  const now = command.now;
  const current = model.schedules.find((schedule) => schedule.scheduleId === command.scheduleId);
  if (current === undefined) return { rejected: "ScheduleNotFound" };
  if (current.cancelledAt !== null) return { rejected: "ScheduleAlreadyCancelled" };
  current.cancelledAt = now;
  current.revision += 1;
  return { model };
};

const tick = (model: Model, command: Commands.Tick): Outcome => {
  const now = command.now;
  const due = model.schedules
    .filter((schedule) => schedule.cancelledAt === null && schedule.nextDueAt <= now)
    .sort(
      (a, b) =>
        a.nextDueAt - b.nextDueAt ||
        (a.scheduleId < b.scheduleId ? -1 : a.scheduleId > b.scheduleId ? 1 : 0),
    )
    .slice(0, command.limit ?? 10_000);
  for (const schedule of due) {
    const dueAt = schedule.nextDueAt;
    const next = nextOccurrence(schedule.definition, Math.max(now, dueAt), dueAt);
    schedule.revision += 1;
    if (next === null) {
      schedule.cancelledAt = now;
      continue;
    }
    if (!(schedule.definition.overlap === "skip" && schedule.activeJobIds.length > 0)) {
      const { definition } = schedule;
      const job = insertJob(model, {
        queue: definition.queue,
        worker: definition.worker,
        args: definition.args,
        priority: definition.priority,
        maxAttempts: definition.maxAttempts,
        insertedAt: now,
        scheduledAt: dueAt,
      });
      job.scheduleId = schedule.scheduleId;
      schedule.activeJobIds = [...schedule.activeJobIds, job.jobId].sort((a, b) => a - b);
    }
    schedule.lastDueAt = dueAt;
    schedule.nextDueAt = next;
  }
  return { model };
};

const run = (before: Model, command: Commands.Command): Outcome => {
  const model: Model = structuredClone(before);
  switch (command._tag) {
    case "InsertJobs":
      return insertJobs(model, command);
    case "ClaimJobs":
      return claimJobs(model, command);
    case "CompleteJob":
    case "FailJob":
      return finishJob(model, command);
    case "CancelJob":
      return cancelJob(model, command);
    case "RescueJobs":
      return rescueJobs(model, command);
    case "MakeDueAvailable":
      return makeDueAvailable(model, command);
    case "RegisterSchedule":
      return registerSchedule(model, command);
    case "CancelSchedule":
      return cancelSchedule(model, command);
    case "Tick":
      return tick(model, command);
    case "RedriveJob":
      return redriveJob(model, command);
    case "SetQueueState":
      return setQueueState(model, command);
    case "TimeoutJobs":
      return timeoutJobs(model, command);
  }
};

// ---- comparing -------------------------------------------------------------

const viewOfJob = (job: Job.Job): ModelJob => ({
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
  errors: job.errors.map((error) => ({ ...error })),
  result: job.result === null ? null : { ...job.result },
  scheduleId: job.scheduleId,
  uniqueKey: job.uniqueKey,
  uniquePeriodMs: job.uniquePeriodMs,
  timeoutMs: job.timeoutMs,
});

const viewOfSchedule = (schedule: Schedule.Schedule): ModelSchedule => ({
  ...schedule,
  activeJobIds: [...schedule.activeJobIds],
});

/** The state as the model sees it; the start log is the model's own and is not compared. */
const viewOf = (state: State.State): Omit<Model, "starts"> => ({
  lastJobId: state.lastJobId,
  jobs: [...State.jobs(state)].map(viewOfJob),
  schedules: [...State.schedules(state)].map(viewOfSchedule),
  queues: [...state.queues.values()].map((queue) => ({
    ...queue,
    rateLimit: queue.rateLimit === null ? null : { ...queue.rateLimit },
  })),
});

const sorted = ({ starts: _starts, ...model }: Model): Omit<Model, "starts"> => ({
  ...model,
  queues: [...model.queues].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0)),
  jobs: [...model.jobs].sort((a, b) => a.jobId - b.jobId),
  schedules: [...model.schedules].sort((a, b) =>
    a.scheduleId < b.scheduleId ? -1 : a.scheduleId > b.scheduleId ? 1 : 0,
  ),
});

const scheduleIdsOf = (records: ReadonlyArray<Event.Event>): Array<string> =>
  records.flatMap((record) =>
    record._tag === "Mutation"
      ? scheduleIdsOf(record.events)
      : "scheduleId" in record
        ? [record.scheduleId]
        : [],
  );

// Invariants of every reachable state, checked on the real one.
const checkInvariants = (
  state: State.State,
  before: State.State,
  records: ReadonlyArray<Event.Event>,
) => {
  const jobs = [...State.jobs(state)];
  // last_job_id >= every id.
  for (const job of jobs) expect(job.jobId).toBeLessThanOrEqual(state.lastJobId);
  // No job in two states: every index holds exactly the jobs of its state.
  const ids = (items: Iterable<Job.Job>) =>
    [...items].map((job) => job.jobId).sort((a, b) => a - b);
  const idsIn = (...states: ReadonlyArray<Event.JobState>) =>
    jobs.filter((job) => states.includes(job.state)).map((job) => job.jobId);
  const availableIds = [...state.indexes.available.values()].flatMap((index) => [...index.keys()]);
  expect(ids(availableIds)).toEqual(idsIn("available"));
  expect(ids(state.indexes.pending.keys())).toEqual(idsIn("scheduled", "retryable"));
  expect(ids(state.indexes.executing.keys())).toEqual(idsIn("executing"));
  // active_job_ids hold only non-terminal members, each in one schedule.
  const members = new Map<number, string>();
  for (const schedule of State.schedules(state)) {
    for (const jobId of schedule.activeJobIds) {
      const job = State.job(state, jobId);
      expect(job !== undefined && !Event.isTerminal(job.state)).toBe(true);
      expect(job?.scheduleId).toBe(schedule.scheduleId);
      expect(members.has(jobId)).toBe(false);
      members.set(jobId, schedule.scheduleId);
    }
  }
  for (const job of jobs) expect(job.scheduleId).toBe(members.get(job.jobId) ?? null);
  // Revisions strictly increase, by one per schedule event.
  const touched = scheduleIdsOf(records);
  for (const schedule of State.schedules(state)) {
    const previous = State.schedule(before, schedule.scheduleId)?.revision ?? 0;
    const events = touched.filter((id) => id === schedule.scheduleId).length;
    expect(schedule.revision).toBe(previous + events);
  }
};

// ---- the commands ----------------------------------------------------------

/** The model side of `fc.modelRun`: the naive model and the clock. */
interface ModelSide {
  model: Model;
  now: number;
}

/** The real side: the persistent state, every decided record, every state kept. */
interface RealSide {
  state: State.State;
  readonly records: Array<Event.Event>;
  readonly kept: Array<readonly [State.State, Model]>;
}

/** One step: time passes, then a planned command runs on both sides. */
class Step implements fc.Command<ModelSide, RealSide> {
  private description = "not run";

  constructor(
    private readonly plan: Plan,
    private readonly elapsedMs: number,
  ) {}

  check(): boolean {
    return true;
  }

  run(side: ModelSide, real: RealSide): void {
    side.now += this.elapsedMs;
    const command = this.plan({ jobs: side.model.jobs, schedules: side.model.schedules }, side.now);
    this.description = JSON.stringify(command, (_, value) =>
      value instanceof Map ? [...value] : value,
    );
    const expected = run(side.model, command);
    const decision = Decide.decide(real.state, command);
    if ("rejected" in expected) {
      expect(Either.isLeft(decision) && decision.left._tag).toBe(expected.rejected);
      return;
    }
    if (Either.isLeft(decision)) {
      throw new Error(`${command._tag} rejected: ${JSON.stringify(decision.left)}`);
    }
    const evolved = Evolve.evolveAll(real.state, decision.right);
    if (Either.isLeft(evolved)) throw new Error(HistoryError.describe(evolved.left));
    checkInvariants(evolved.right, real.state, decision.right);
    real.state = evolved.right;
    side.model = expected.model;
    expect(viewOf(real.state)).toEqual(sorted(side.model));
    real.records.push(...decision.right);
    real.kept.push([real.state, side.model]);
  }

  toString(): string {
    return `+${this.elapsedMs}ms ${this.description}`;
  }
}

const stepCommand = step.map(({ plan, elapsedMs }) => new Step(plan, elapsedMs));

describe("deciders + evolve against a naive model", () => {
  it("agree after every step (fast-check commands)", () => {
    fc.assert(
      fc.property(fc.commands([stepCommand], { maxCommands: 60, size: "max" }), (commands) => {
        const side: ModelSide = {
          model: { lastJobId: 0, jobs: [], schedules: [], queues: [], starts: [] },
          now: 1_000,
        };
        const real: RealSide = { state: State.initialState, records: [], kept: [] };
        fc.modelRun(() => ({ model: side, real }), commands);
        // The whole history folds to the same state.
        const folded = Evolve.fold(real.records);
        expect(Either.isRight(folded) && State.equals(folded.right, real.state)).toBe(true);
        // Old states were never changed by later steps.
        for (const [oldState, oldModel] of real.kept) {
          expect(viewOf(oldState)).toEqual(sorted(oldModel));
        }
      }),
      { numRuns: 120 },
    );
  });
});
