/**
 * Arbitraries of legal Tay histories (EVENTS.md), and of single-record
 * corruptions of them labelled with the reason a correct fold must give.
 *
 * Histories are made by a small simulator of its own (plain objects, no
 * code from the fold), driven by fast-check choices, so they shrink well
 * and test the fold rather than agree with it by construction. Labels come
 * from `check`, a deliberately naive second reading of the tables; a
 * property then demands that `@tay/core`'s fold agrees with it.
 *
 * @example
 * fc.assert(fc.property(Histories.history({ canonicalBase: true }), (history) =>
 *   Either.isRight(Evolve.foldGeneration(history.base, history.tail))));
 */
import { Event, type HistoryError } from "@tay/core";
import fc from "fast-check";

/** What a generated history may contain. */
export interface Options {
  /** Steps simulated (each makes one record, or joins a mutation); default 40. */
  readonly size?: number;
  /** Queue names jobs go to; default ["default", "mail"]. */
  readonly queues?: ReadonlyArray<string>;
  /** How many schedule ids may exist; 0 for none; default 2. */
  readonly schedules?: number;
  /** Include the legacy events (7,2), (8,2) and (12,2); default false. */
  readonly legacy?: boolean;
  /** Group some events into (8,1) mutations; default true. */
  readonly mutations?: boolean;
  /** Start with a canonical base (parts, results, checkpoints); default false. */
  readonly canonicalBase?: boolean;
}

/** A generation: its canonical base and its live tail. */
export interface History {
  readonly base: ReadonlyArray<Event.Event>;
  readonly tail: ReadonlyArray<Event.Event>;
}

/** Every record of a history, base first. */
export const records = (history: History): ReadonlyArray<Event.Event> => [
  ...history.base,
  ...history.tail,
];

// ---- the simulator -----------------------------------------------------------

interface SimJob {
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
  errors: Array<Event.JobError>;
  result: { readonly value: Event.ResultRecorded["result"]; readonly at: number } | null;
  scheduleId: string | null;
}

interface SimSchedule {
  scheduleId: string;
  definition: Event.ScheduleDefinition;
  revision: number;
  definitionRevision: number;
  registeredAt: number;
  nextDueAt: number;
  lastDueAt: number | null;
  cancelledAt: number | null;
  active: Array<number>;
  complete: boolean;
}

interface Sim {
  now: number;
  lastJobId: number;
  jobs: Map<number, SimJob>;
  schedules: Map<string, SimSchedule>;
}

/** One simulated step: which action, which object, and small knobs. */
interface Choice {
  readonly action: number;
  readonly pick: number;
  readonly knob: number;
  readonly elapsedMs: number;
  readonly group: number;
}

const choice: fc.Arbitrary<Choice> = fc.record({
  action: fc.nat({ max: 1_000 }),
  pick: fc.nat({ max: 1_000 }),
  knob: fc.nat({ max: 1_000 }),
  elapsedMs: fc.nat({ max: 5 }),
  group: fc.nat({ max: 9 }),
});

const terminal = (state: Event.JobState): boolean =>
  state === "completed" || state === "discarded" || state === "cancelled";

const of = <T>(items: ReadonlyArray<T>, index: number): T | undefined =>
  items.length === 0 ? undefined : items[index % items.length];

const everyMs = 100;

const definitionOf = (queue: string, knob: number): Event.ScheduleDefinition => ({
  queue,
  worker: "Recurring",
  args: knob % 2 === 0 ? null : new Map([["n", knob]]),
  priority: knob % 10,
  maxAttempts: 1 + (knob % 3),
  everyMs: knob % 5 === 0 ? null : everyMs,
  cron: knob % 5 === 0 ? "* * * * *" : null,
  overlap: knob % 3 === 0 ? "skip" : "allow",
});

const checkpointOf = (schedule: SimSchedule): Event.ScheduleCheckpoint => ({
  _tag: "ScheduleCheckpoint",
  scheduleId: schedule.scheduleId,
  definition: schedule.definition,
  definitionRevision: schedule.definitionRevision,
  revision: schedule.revision,
  registeredAt: schedule.registeredAt,
  nextDueAt: schedule.nextDueAt,
  lastDueAt: schedule.lastDueAt,
  cancelledAt: schedule.cancelledAt,
  activeJobIds: [...schedule.active],
  membershipComplete: schedule.complete,
});

const leave = (sim: Sim, job: SimJob): void => {
  const schedule = job.scheduleId === null ? undefined : sim.schedules.get(job.scheduleId);
  if (schedule !== undefined) schedule.active = schedule.active.filter((id) => id !== job.jobId);
  job.scheduleId = null;
};

const setMembers = (sim: Sim, schedule: SimSchedule, members: ReadonlyArray<number>): void => {
  for (const jobId of schedule.active) {
    const job = sim.jobs.get(jobId);
    if (job !== undefined) job.scheduleId = null;
  }
  schedule.active = [...members].sort((left, right) => left - right);
  for (const jobId of schedule.active) {
    const job = sim.jobs.get(jobId);
    if (job !== undefined) job.scheduleId = schedule.scheduleId;
  }
};

type Action = (sim: Sim, pick: number, knob: number) => ReadonlyArray<Event.DomainEvent>;

const insert = (sim: Sim, queue: string, scheduledAt: number, knob: number): Event.JobInserted => {
  sim.lastJobId += 1 + (knob % 7 === 0 ? 2 : 0);
  const job: SimJob = {
    jobId: sim.lastJobId,
    queue,
    worker: "Worker",
    args: knob % 4 === 0 ? [knob, "x"] : knob,
    priority: knob % 10,
    maxAttempts: 1 + (knob % 3),
    attempt: 0,
    state: scheduledAt > sim.now ? "scheduled" : "available",
    insertedAt: sim.now,
    scheduledAt,
    attemptedAt: null,
    finishedAt: null,
    errors: [],
    result: null,
    scheduleId: null,
  };
  sim.jobs.set(job.jobId, job);
  return {
    _tag: "JobInserted",
    jobId: job.jobId,
    queue,
    worker: job.worker,
    args: job.args,
    priority: job.priority,
    maxAttempts: job.maxAttempts,
    scheduledAt,
    insertedAt: sim.now,
  };
};

const jobsIn = (sim: Sim, states: ReadonlyArray<Event.JobState>): Array<SimJob> =>
  [...sim.jobs.values()].filter((job) => states.includes(job.state));

// Each action returns its events, or none when its precondition fails.
const jobActions = (queues: ReadonlyArray<string>): ReadonlyArray<Action> => [
  (sim, pick, knob) => [
    insert(
      sim,
      of(queues, pick) ?? "default",
      knob % 3 === 0 ? sim.now + 1 + (knob % 20) : sim.now,
      knob,
    ),
  ],
  ...jobLifecycleActions,
];

// What happens to a job once inserted: due, started, finished, retried, cancelled, its result.
const jobLifecycleActions: ReadonlyArray<Action> = [
  (sim, pick) => {
    const job = of(jobsIn(sim, ["scheduled", "retryable"]), pick);
    if (job === undefined) return [];
    sim.now = Math.max(sim.now, job.scheduledAt);
    job.state = "available";
    return [{ _tag: "JobAvailable", jobId: job.jobId, at: sim.now }];
  },
  (sim, pick) => {
    const job = of(jobsIn(sim, ["available"]), pick);
    if (job === undefined) return [];
    job.state = "executing";
    job.attempt += 1;
    job.attemptedAt = sim.now;
    return [{ _tag: "JobStarted", jobId: job.jobId, at: sim.now, attempt: job.attempt }];
  },
  (sim, pick, knob) => {
    const job = of(jobsIn(sim, ["executing"]), pick);
    if (job === undefined) return [];
    job.finishedAt = sim.now;
    leave(sim, job);
    if (knob % 4 === 0) {
      job.state = "discarded";
      job.errors.push({ attempt: job.attempt, at: sim.now, error: "fatal" });
      return [
        {
          _tag: "JobFinished",
          jobId: job.jobId,
          at: sim.now,
          outcome: "discarded",
          error: "fatal",
        },
      ];
    }
    job.state = "completed";
    return [
      { _tag: "JobFinished", jobId: job.jobId, at: sim.now, outcome: "completed", error: null },
    ];
  },
  (sim, pick, knob) => {
    const job = of(
      jobsIn(sim, ["executing"]).filter((candidate) => candidate.attempt < candidate.maxAttempts),
      pick,
    );
    if (job === undefined) return [];
    job.state = "retryable";
    job.scheduledAt = sim.now + (knob % 10);
    job.errors.push({ attempt: job.attempt, at: sim.now, error: "flaky" });
    return [
      {
        _tag: "JobRetried",
        jobId: job.jobId,
        at: sim.now,
        retryAt: job.scheduledAt,
        error: "flaky",
      },
    ];
  },
  (sim, pick) => {
    const job = of(jobsIn(sim, ["scheduled", "available", "executing", "retryable"]), pick);
    if (job === undefined) return [];
    job.state = "cancelled";
    job.finishedAt = sim.now;
    leave(sim, job);
    return [{ _tag: "JobCancelled", jobId: job.jobId, at: sim.now, reason: null }];
  },
  (sim, pick, knob) => {
    const job = of(
      jobsIn(sim, ["completed"]).filter((candidate) => candidate.result === null),
      pick,
    );
    if (job === undefined) return [];
    job.result = { value: knob % 2 === 0 ? null : `r${knob}`, at: sim.now };
    return [{ _tag: "ResultRecorded", jobId: job.jobId, result: job.result.value, at: sim.now }];
  },
];

/** The schedules not cancelled. */
const activeSchedules = (sim: Sim) =>
  [...sim.schedules.values()].filter((s) => s.cancelledAt === null);

/** Registers (or re-registers) a schedule: a checkpoint (13,2), or a legacy (7,2). */
const registerSchedule = (
  sim: Sim,
  choices: { readonly queues: ReadonlyArray<string>; readonly scheduleIds: ReadonlyArray<string> },
  pick: number,
  knob: number,
  tag: "new" | "legacy",
) => {
  const { queues, scheduleIds } = choices;
  const scheduleId = of(scheduleIds, pick);
  if (scheduleId === undefined) return undefined;
  const current = sim.schedules.get(scheduleId);
  const revision = (current?.revision ?? 0) + 1;
  const schedule: SimSchedule = {
    scheduleId,
    definition: definitionOf(of(queues, knob) ?? "default", knob),
    revision,
    definitionRevision: revision,
    registeredAt: sim.now,
    nextDueAt: sim.now + 1 + (knob % 50),
    lastDueAt: current?.lastDueAt ?? null,
    cancelledAt: null,
    active: current?.active ?? [],
    complete: current?.complete ?? true,
  };
  sim.schedules.set(scheduleId, schedule);
  if (tag === "legacy") {
    const event: Event.ScheduleRegistered = {
      _tag: "ScheduleRegistered",
      scheduleId,
      revision,
      definition: schedule.definition,
      registeredAt: schedule.registeredAt,
      nextDueAt: schedule.nextDueAt,
    };
    return event;
  }
  return checkpointOf(schedule);
};

// A schedule's life once registered: delivered, skipped, cancelled, checkpointed.
const scheduleSteps: ReadonlyArray<Action> = [
  (sim, pick, knob) => {
    const schedule = of(activeSchedules(sim), pick);
    if (schedule === undefined) return [];
    const inserted = insert(sim, schedule.definition.queue, schedule.nextDueAt, knob);
    const job = sim.jobs.get(inserted.jobId);
    if (job !== undefined) job.scheduleId = schedule.scheduleId;
    schedule.revision += 1;
    schedule.active = [...schedule.active, inserted.jobId];
    const dueAt = schedule.nextDueAt;
    schedule.lastDueAt = dueAt;
    schedule.nextDueAt = dueAt + everyMs;
    return [
      inserted,
      {
        _tag: "OccurrenceAdvanced",
        scheduleId: schedule.scheduleId,
        revision: schedule.revision,
        dueAt,
        nextDueAt: schedule.nextDueAt,
        outcome: "delivered",
        activeJobId: inserted.jobId,
      },
    ];
  },
  (sim, pick) => {
    const schedule = of(activeSchedules(sim), pick);
    if (schedule === undefined) return [];
    schedule.revision += 1;
    const dueAt = schedule.nextDueAt;
    schedule.lastDueAt = dueAt;
    schedule.nextDueAt = dueAt + everyMs;
    return [
      {
        _tag: "OccurrenceAdvanced",
        scheduleId: schedule.scheduleId,
        revision: schedule.revision,
        dueAt,
        nextDueAt: schedule.nextDueAt,
        outcome: "skipped",
        activeJobId: null,
      },
    ];
  },
  (sim, pick) => {
    const schedule = of(activeSchedules(sim), pick);
    if (schedule === undefined) return [];
    schedule.revision += 1;
    schedule.cancelledAt = sim.now;
    return [
      {
        _tag: "ScheduleCancelled",
        scheduleId: schedule.scheduleId,
        revision: schedule.revision,
        at: sim.now,
      },
    ];
  },
  (sim, pick, knob) => {
    // A state checkpoint (13,2) of an existing schedule, sometimes with fewer members.
    const schedule = of([...sim.schedules.values()], pick);
    if (schedule === undefined) return [];
    schedule.revision += 1;
    if (knob % 3 === 0 && schedule.active.length > 0) {
      setMembers(sim, schedule, schedule.active.slice(1));
      schedule.complete = false;
    }
    return [checkpointOf(schedule)];
  },
];

// The legacy pairs (7,2), (8,2) and (12,2) of Event v2's first writers.
const legacyScheduleSteps: ReadonlyArray<Action> = [
  (sim, pick) => {
    const schedule = of(activeSchedules(sim), pick);
    if (schedule === undefined) return [];
    schedule.revision += 1;
    const dueAt = schedule.nextDueAt;
    schedule.lastDueAt = dueAt;
    schedule.nextDueAt = dueAt + everyMs;
    schedule.complete = false;
    return [
      {
        _tag: "ScheduleAdvanced",
        scheduleId: schedule.scheduleId,
        revision: schedule.revision,
        dueAt,
        nextDueAt: schedule.nextDueAt,
      },
    ];
  },
  (sim, pick) => {
    const schedule = of([...sim.schedules.values()], pick);
    if (schedule === undefined) return [];
    schedule.revision += 1;
    const activeJobId = schedule.active[0] ?? null;
    setMembers(sim, schedule, activeJobId === null ? [] : [activeJobId]);
    schedule.complete = false;
    return [
      {
        _tag: "ScheduleHistoricalCheckpoint",
        scheduleId: schedule.scheduleId,
        definition: schedule.definition,
        definitionRevision: schedule.definitionRevision,
        revision: schedule.revision,
        registeredAt: schedule.registeredAt,
        nextDueAt: schedule.nextDueAt,
        lastDueAt: schedule.lastDueAt,
        cancelledAt: schedule.cancelledAt,
        activeJobId,
      },
    ];
  },
];

const scheduleActions = (
  queues: ReadonlyArray<string>,
  scheduleIds: ReadonlyArray<string>,
  legacy: boolean,
): ReadonlyArray<Action> => {
  const register =
    (tag: "new" | "legacy"): Action =>
    (sim, pick, knob) => {
      const event = registerSchedule(sim, { queues, scheduleIds }, pick, knob, tag);
      return event === undefined ? [] : [event];
    };
  const actions = [register("new"), ...scheduleSteps];
  return legacy ? [...actions, register("legacy"), ...legacyScheduleSteps] : actions;
};

// Plays choices into records: one record per step, except that with
// mutations a step may join the previous mutation, and a delivery is
// always one mutation (inserted + delivered) when mutations are on.
const play = (
  sim: Sim,
  choices: ReadonlyArray<Choice>,
  actions: ReadonlyArray<Action>,
  mutations: boolean,
): Array<Event.Event> => {
  const out: Array<Event.Event> = [];
  for (const step of choices) {
    sim.now += step.elapsedMs;
    // Try actions from the chosen one on, so every step makes progress.
    let events: ReadonlyArray<Event.DomainEvent> = [];
    for (let offset = 0; offset < actions.length && events.length === 0; offset++) {
      const action = actions[(step.action + offset) % actions.length];
      if (action !== undefined) events = action(sim, step.pick, step.knob);
    }
    if (events.length === 0) continue;
    const previous = out[out.length - 1];
    if (mutations && step.group === 0 && previous !== undefined && previous._tag === "Mutation") {
      out[out.length - 1] = { _tag: "Mutation", events: [...previous.events, ...events] };
    } else if (mutations && (events.length > 1 || step.group <= 2)) {
      out.push({ _tag: "Mutation", events });
    } else {
      out.push(...events);
    }
  }
  return out;
};

const snapshotJob = (job: SimJob): Event.JobSnapshot => ({
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
  errors: [...job.errors],
});

// A canonical base of the simulated state: some terminal jobs compacted
// away, the rest in 1..3 parts, then results, then every schedule.
const baseOf = (sim: Sim, cut: number): Array<Event.Event> => {
  for (const job of [...sim.jobs.values()]) {
    if (terminal(job.state) && (job.jobId + cut) % 3 === 0) sim.jobs.delete(job.jobId);
  }
  const jobs = [...sim.jobs.values()].sort((left, right) => left.jobId - right.jobId);
  const partCount = 1 + (cut % 3);
  const size = Math.max(1, Math.ceil(jobs.length / partCount));
  const parts: Array<Event.Event> = [];
  for (let part = 0; part === 0 || part * size < jobs.length; part++) {
    parts.push({
      _tag: "SnapshotPart",
      part,
      lastJobId: sim.lastJobId,
      jobs: jobs.slice(part * size, (part + 1) * size).map(snapshotJob),
    });
  }
  const results: Array<Event.Event> = jobs.flatMap((job) =>
    job.result === null
      ? []
      : [{ _tag: "ResultRecorded", jobId: job.jobId, result: job.result.value, at: job.result.at }],
  );
  const checkpoints = [...sim.schedules.values()].map(checkpointOf);
  return [...parts, ...results, ...checkpoints];
};

/** Legal histories: every one folds (to the simulator's state). */
export const history = (options: Options = {}): fc.Arbitrary<History> => {
  const size = options.size ?? 40;
  const queues = options.queues ?? ["default", "mail"];
  const scheduleIds = Array.from(
    { length: options.schedules ?? 2 },
    (_, index) => `schedule-${index}`,
  );
  const actions = [
    ...jobActions(queues),
    ...(scheduleIds.length === 0
      ? []
      : scheduleActions(queues, scheduleIds, options.legacy === true)),
  ];
  const mutations = options.mutations ?? true;
  return fc
    .record({
      prefix: fc.array(choice, { maxLength: size, size: "max" }),
      suffix: fc.array(choice, { maxLength: size, size: "max" }),
      cut: fc.nat({ max: 100 }),
    })
    .map(({ prefix, suffix, cut }) => {
      const sim: Sim = { now: 1_000, lastJobId: 0, jobs: new Map(), schedules: new Map() };
      if (options.canonicalBase !== true) {
        return { base: [], tail: play(sim, [...prefix, ...suffix], actions, mutations) };
      }
      play(sim, prefix, actions, mutations);
      const base = baseOf(sim, cut);
      return { base, tail: play(sim, suffix, actions, mutations) };
    });
};

// ---- corruptions ---------------------------------------------------------------

/** The single-record changes a corruption makes. */
export type CorruptionKind = "drop" | "duplicate" | "reorder" | "revision" | "jobId" | "state";

/** Every corruption kind, for `fc.constantFrom`. */
export const corruptionKinds: ReadonlyArray<CorruptionKind> = [
  "drop",
  "duplicate",
  "reorder",
  "revision",
  "jobId",
  "state",
];

/** What a correct fold must answer for a corrupted history. */
export type Label = HistoryError.HistoryReasonTag | "still-legal";

/** A history with one record changed, and the answer its fold must give. */
export interface Corrupted {
  readonly original: History;
  readonly kind: CorruptionKind;
  /** Position of the changed record in base + tail. */
  readonly index: number;
  /** The records after the change; the first `baseRecordCount` form the base. */
  readonly records: ReadonlyArray<Event.Event>;
  readonly baseRecordCount: number;
  readonly expected: Label;
}

const withRevision = (event: Event.Event, delta: number): Event.Event | undefined => {
  switch (event._tag) {
    case "ScheduleRegistered":
    case "ScheduleAdvanced":
    case "ScheduleCancelled":
    case "OccurrenceAdvanced":
    case "ScheduleHistoricalCheckpoint":
    case "ScheduleCheckpoint":
      return event.revision + delta >= 1
        ? { ...event, revision: event.revision + delta }
        : undefined;
    case "Mutation": {
      const index = event.events.findIndex((member) => withRevision(member, delta) !== undefined);
      const member = event.events[index];
      const changed = member === undefined ? undefined : withRevision(member, delta);
      if (changed === undefined || changed._tag === "Mutation" || Event.isSnapshotPart(changed)) {
        return undefined;
      }
      return { ...event, events: event.events.map((old, at) => (at === index ? changed : old)) };
    }
    default:
      return undefined;
  }
};

const withJobId = (event: Event.Event, jobId: number): Event.Event | undefined => {
  switch (event._tag) {
    case "JobInserted":
    case "JobAvailable":
    case "JobStarted":
    case "JobFinished":
    case "JobCancelled":
    case "JobRetried":
    case "ResultRecorded":
      return event.jobId === jobId ? undefined : { ...event, jobId };
    case "OccurrenceAdvanced":
      return event.activeJobId === null || event.activeJobId === jobId
        ? undefined
        : { ...event, activeJobId: jobId };
    case "SnapshotPart": {
      const first = event.jobs[0];
      if (first === undefined || first.jobId === jobId) return undefined;
      return { ...event, jobs: [{ ...first, jobId }, ...event.jobs.slice(1)] };
    }
    case "Mutation": {
      const index = event.events.findIndex((member) => withJobId(member, jobId) !== undefined);
      const member = event.events[index];
      const changed = member === undefined ? undefined : withJobId(member, jobId);
      if (changed === undefined || changed._tag === "Mutation" || Event.isSnapshotPart(changed)) {
        return undefined;
      }
      return { ...event, events: event.events.map((old, at) => (at === index ? changed : old)) };
    }
    default:
      return undefined;
  }
};

const states: ReadonlyArray<Event.JobState> = [
  "scheduled",
  "available",
  "executing",
  "retryable",
  "completed",
  "discarded",
  "cancelled",
];

const withState = (event: Event.Event, knob: number): Event.Event | undefined => {
  switch (event._tag) {
    case "JobFinished":
      return { ...event, outcome: event.outcome === "completed" ? "discarded" : "completed" };
    case "OccurrenceAdvanced":
      return { ...event, outcome: event.outcome === "delivered" ? "skipped" : "delivered" };
    case "ScheduleCheckpoint":
    case "ScheduleHistoricalCheckpoint":
      return { ...event, cancelledAt: event.cancelledAt === null ? event.registeredAt : null };
    case "SnapshotPart": {
      const first = event.jobs[0];
      if (first === undefined) return undefined;
      const others = states.filter((state) => state !== first.state);
      const state = of(others, knob) ?? "cancelled";
      return { ...event, jobs: [{ ...first, state }, ...event.jobs.slice(1)] };
    }
    case "Mutation": {
      const index = event.events.findIndex((member) => withState(member, knob) !== undefined);
      const member = event.events[index];
      const changed = member === undefined ? undefined : withState(member, knob);
      if (changed === undefined || changed._tag === "Mutation" || Event.isSnapshotPart(changed)) {
        return undefined;
      }
      return { ...event, events: event.events.map((old, at) => (at === index ? changed : old)) };
    }
    default:
      return undefined;
  }
};

const change = (
  kind: CorruptionKind,
  record: Event.Event,
  knob: number,
  lastJobId: number,
): Event.Event | undefined => {
  switch (kind) {
    case "revision":
      return withRevision(record, knob % 2 === 0 ? 1 : -1);
    case "jobId":
      return withJobId(record, 1 + (knob % Math.max(1, lastJobId + 2)));
    case "state":
      return withState(record, knob);
    default:
      return undefined;
  }
};

const lastJobIdOf = (all: ReadonlyArray<Event.Event>): number =>
  all.reduce((highest, record) => {
    if (record._tag === "JobInserted") return Math.max(highest, record.jobId);
    if (record._tag === "SnapshotPart") return Math.max(highest, record.lastJobId);
    if (record._tag === "Mutation") return Math.max(highest, lastJobIdOf(record.events));
    return highest;
  }, 0);

/** Applies one corruption at (or, for changes, from) `position`. */
export const corrupt = (
  original: History,
  kind: CorruptionKind,
  position: number,
  knob: number,
): Omit<Corrupted, "expected"> => {
  const all = records(original);
  const baseRecordCount = original.base.length;
  const unchanged = { original, kind, index: 0, records: all, baseRecordCount };
  if (all.length === 0) return unchanged;
  const start = position % all.length;
  switch (kind) {
    case "drop":
      return { ...unchanged, index: start, records: all.filter((_, at) => at !== start) };
    case "duplicate":
      return {
        ...unchanged,
        index: start,
        records: all.flatMap((record, at) => (at === start ? [record, record] : [record])),
      };
    case "reorder": {
      if (all.length < 2) return unchanged;
      const first = Math.min(start, all.length - 2);
      const swapped = [...all];
      const [left, right] = [swapped[first], swapped[first + 1]];
      if (left === undefined || right === undefined) return unchanged;
      swapped[first] = right;
      swapped[first + 1] = left;
      return { ...unchanged, index: first, records: swapped };
    }
    default: {
      const lastJobId = lastJobIdOf(all);
      for (let offset = 0; offset < all.length; offset++) {
        const at = (start + offset) % all.length;
        const record = all[at];
        const changed = record === undefined ? undefined : change(kind, record, knob, lastJobId);
        if (changed !== undefined) {
          return {
            ...unchanged,
            index: at,
            records: all.map((old, i) => (i === at ? changed : old)),
          };
        }
      }
      return unchanged;
    }
  }
};

/** Corrupted histories, each labelled by `check`. */
export const corrupted = (options: Options = {}): fc.Arbitrary<Corrupted> =>
  fc
    .record({
      original: history(options),
      kind: fc.constantFrom(...corruptionKinds),
      position: fc.nat(),
      knob: fc.nat({ max: 1_000 }),
    })
    .map(({ original, kind, position, knob }) => {
      const result = corrupt(original, kind, position, knob);
      return { ...result, expected: check(result.records, result.baseRecordCount) };
    });

// ---- the reference checker -------------------------------------------------------

interface RefJob {
  state: Event.JobState;
  attempt: number;
  maxAttempts: number;
  scheduledAt: number;
  hasResult: boolean;
  scheduleId: string | null;
}

interface RefSchedule {
  revision: number;
  nextDueAt: number;
  cancelled: boolean;
  active: Array<number>;
}

interface Ref {
  lastJobId: number;
  jobs: Map<number, RefJob>;
  schedules: Map<string, RefSchedule>;
}

type Verdict = HistoryError.HistoryReasonTag | undefined;

const validDefinition = (definition: Event.ScheduleDefinition): boolean =>
  (definition.everyMs === null) !== (definition.cron === null);

const canJoin = (ref: Ref, scheduleId: string, ids: ReadonlyArray<number>): Verdict => {
  for (const id of ids) {
    const job = ref.jobs.get(id);
    if (job === undefined) return "UnknownJob";
    if (terminal(job.state) || (job.scheduleId !== null && job.scheduleId !== scheduleId)) {
      return "MembershipConflict";
    }
  }
  return undefined;
};

const replaceSchedule = (ref: Ref, scheduleId: string, schedule: RefSchedule): void => {
  for (const id of ref.schedules.get(scheduleId)?.active ?? []) {
    const job = ref.jobs.get(id);
    if (job !== undefined && job.scheduleId === scheduleId) job.scheduleId = null;
  }
  for (const id of schedule.active) {
    const job = ref.jobs.get(id);
    if (job !== undefined) job.scheduleId = scheduleId;
  }
  ref.schedules.set(scheduleId, schedule);
};

const ascending = (ids: ReadonlyArray<number>): boolean =>
  ids.every((id, at) => at === 0 || (ids[at - 1] ?? 0) < id);

const checkpointVerdict = (
  ref: Ref,
  event: Event.ScheduleCheckpoint | Event.ScheduleHistoricalCheckpoint,
  inBase: boolean,
): Verdict => {
  if (event.definitionRevision > event.revision) return "InvalidField";
  const active =
    event._tag === "ScheduleCheckpoint"
      ? event.activeJobIds
      : event.activeJobId === null
        ? []
        : [event.activeJobId];
  if (!ascending(active)) return "InvalidField";
  const current = ref.schedules.get(event.scheduleId);
  if (inBase && current !== undefined) return "DuplicateSchedule";
  if (!inBase && event.revision !== (current?.revision ?? 0) + 1) return "RevisionConflict";
  if (!validDefinition(event.definition)) return "InvalidDefinition";
  const conflict = canJoin(ref, event.scheduleId, active);
  if (conflict !== undefined) return conflict;
  replaceSchedule(ref, event.scheduleId, {
    revision: event.revision,
    nextDueAt: event.nextDueAt,
    cancelled: event.cancelledAt !== null,
    active: [...active],
  });
  return undefined;
};

const jobVerdict = (ref: Ref, event: Event.DomainEvent & { readonly jobId: number }): Verdict => {
  const job = ref.jobs.get(event.jobId);
  if (job === undefined) return "UnknownJob";
  switch (event._tag) {
    case "JobAvailable":
      if (job.state !== "scheduled" && job.state !== "retryable") return "IllegalTransition";
      if (event.at < job.scheduledAt) return "NotDue";
      job.state = "available";
      return undefined;
    case "JobStarted":
      if (job.state !== "available") return "IllegalTransition";
      if (event.attempt !== job.attempt + 1) return "AttemptMismatch";
      if (event.attempt > job.maxAttempts) return "AttemptsExhausted";
      job.state = "executing";
      job.attempt = event.attempt;
      return undefined;
    case "JobFinished":
      if (job.state !== "executing") return "IllegalTransition";
      if ((event.outcome === "completed") !== (event.error === null)) return "OutcomeErrorMismatch";
      job.state = event.outcome;
      break;
    case "JobCancelled":
      if (terminal(job.state)) return "IllegalTransition";
      job.state = "cancelled";
      break;
    case "JobRetried":
      if (job.state !== "executing") return "IllegalTransition";
      if (job.attempt >= job.maxAttempts) return "AttemptsExhausted";
      if (event.retryAt < event.at) return "RetryBeforeFailure";
      job.state = "retryable";
      job.scheduledAt = event.retryAt;
      return undefined;
    case "ResultRecorded":
      if (job.state !== "completed") return "IllegalTransition";
      if (job.hasResult) return "ResultAlreadyRecorded";
      job.hasResult = true;
      return undefined;
    default:
      return undefined;
  }
  // Finished or cancelled: the job leaves its schedule.
  const schedule = job.scheduleId === null ? undefined : ref.schedules.get(job.scheduleId);
  if (schedule !== undefined) schedule.active = schedule.active.filter((id) => id !== event.jobId);
  job.scheduleId = null;
  return undefined;
};

const advanceVerdict = (
  ref: Ref,
  event: Event.ScheduleAdvanced | Event.OccurrenceAdvanced | Event.ScheduleCancelled,
): Verdict => {
  const schedule = ref.schedules.get(event.scheduleId);
  if (schedule === undefined) return "UnknownSchedule";
  if (event.revision !== schedule.revision + 1) return "RevisionConflict";
  if (schedule.cancelled) return "ScheduleIsCancelled";
  if (event._tag === "ScheduleCancelled") {
    schedule.revision = event.revision;
    schedule.cancelled = true;
    return undefined;
  }
  if (event.dueAt !== schedule.nextDueAt) return "DueMismatch";
  if (event.nextDueAt <= event.dueAt) return "NextDueNotAfterDue";
  if (event._tag === "OccurrenceAdvanced") {
    if ((event.outcome === "delivered") !== (event.activeJobId !== null))
      return "OccurrenceMismatch";
    if (event.activeJobId !== null) {
      const job = ref.jobs.get(event.activeJobId);
      if (job === undefined) return "UnknownJob";
      if (terminal(job.state) || job.scheduleId !== null) return "MembershipConflict";
      job.scheduleId = event.scheduleId;
      schedule.active = [...schedule.active, event.activeJobId].sort((left, right) => left - right);
    }
  }
  schedule.revision = event.revision;
  schedule.nextDueAt = event.nextDueAt;
  return undefined;
};

const domainVerdict = (ref: Ref, event: Event.DomainEvent): Verdict => {
  switch (event._tag) {
    case "JobInserted":
      if (ref.jobs.has(event.jobId)) return "DuplicateJob";
      if (event.jobId <= ref.lastJobId) return "JobIdNotIncreasing";
      ref.lastJobId = event.jobId;
      ref.jobs.set(event.jobId, {
        state: event.scheduledAt > event.insertedAt ? "scheduled" : "available",
        attempt: 0,
        maxAttempts: event.maxAttempts,
        scheduledAt: event.scheduledAt,
        hasResult: false,
        scheduleId: null,
      });
      return undefined;
    case "ScheduleRegistered": {
      const current = ref.schedules.get(event.scheduleId);
      if (event.revision !== (current?.revision ?? 0) + 1) return "RevisionConflict";
      if (!validDefinition(event.definition)) return "InvalidDefinition";
      ref.schedules.set(event.scheduleId, {
        revision: event.revision,
        nextDueAt: event.nextDueAt,
        cancelled: false,
        active: current?.active ?? [],
      });
      return undefined;
    }
    case "ScheduleAdvanced":
    case "OccurrenceAdvanced":
    case "ScheduleCancelled":
      return advanceVerdict(ref, event);
    case "ScheduleCheckpoint":
    case "ScheduleHistoricalCheckpoint":
      return checkpointVerdict(ref, event, false);
    // This reference knows the pairs of EVENTS.md only; its histories never
    // hold a schema-3 event (core's own tests judge those).
    case "JobInsertedV3":
    case "JobRedriven":
    case "QueueStateSet":
    case "ScheduleCheckpointV3":
      return "UnknownEvent";
    default:
      return jobVerdict(ref, event);
  }
};

// The shapes a snapshot job can have after a legal history.
const snapshotVerdict = (job: Event.JobSnapshot, lastJobId: number): Verdict => {
  if (job.jobId > lastJobId) return "LastJobIdConflict";
  const isTerminal = terminal(job.state);
  const errorsOk = job.errors.every(
    (error, at) =>
      error.attempt >= 1 &&
      error.attempt <= job.attempt &&
      (at === 0 || (job.errors[at - 1]?.attempt ?? 0) < error.attempt),
  );
  const shapeOk =
    job.attempt <= job.maxAttempts &&
    (job.finishedAt !== null) === isTerminal &&
    (job.attemptedAt !== null) === job.attempt > 0 &&
    errorsOk &&
    (job.state === "scheduled"
      ? job.attempt === 0 && job.scheduledAt > job.insertedAt
      : job.state === "available"
        ? job.attempt < job.maxAttempts
        : job.state === "retryable"
          ? job.attempt >= 1 && job.attempt < job.maxAttempts
          : job.state === "cancelled" || job.attempt >= 1);
  return shapeOk ? undefined : "InvalidSnapshotJob";
};

/**
 * The reference answer for a generation: the reason tag of the first
 * refused record, or "still-legal". A second, naive reading of EVENTS.md
 * (field kinds are assumed valid, as the generators keep them).
 */
export const check = (all: ReadonlyArray<Event.Event>, baseRecordCount: number): Label => {
  const ref: Ref = { lastJobId: 0, jobs: new Map(), schedules: new Map() };
  let phase: "parts" | "results" | "checkpoints" = "parts";
  let nextPart = 0;
  for (let index = 0; index < all.length; index++) {
    const record = all[index];
    if (record === undefined) continue;
    let verdict: Verdict;
    if (index < baseRecordCount) {
      switch (record._tag) {
        case "SnapshotPart":
          if (phase !== "parts") verdict = "SnapshotOutOfPlace";
          else if (record.part !== nextPart) verdict = "PartOutOfOrder";
          else if (nextPart > 0 && record.lastJobId !== ref.lastJobId)
            verdict = "LastJobIdConflict";
          else {
            ref.lastJobId = record.lastJobId;
            nextPart += 1;
            for (const job of record.jobs) {
              verdict =
                snapshotVerdict(job, ref.lastJobId) ??
                (ref.jobs.has(job.jobId) ? "DuplicateJob" : undefined);
              if (verdict !== undefined) break;
              ref.jobs.set(job.jobId, {
                state: job.state,
                attempt: job.attempt,
                maxAttempts: job.maxAttempts,
                scheduledAt: job.scheduledAt,
                hasResult: false,
                scheduleId: null,
              });
            }
          }
          break;
        case "ResultRecorded":
          if (nextPart === 0 || phase === "checkpoints") verdict = "BaseOutOfOrder";
          else {
            phase = "results";
            verdict = domainVerdict(ref, record);
          }
          break;
        case "ScheduleCheckpoint":
          if (nextPart === 0) verdict = "BaseOutOfOrder";
          else {
            phase = "checkpoints";
            verdict = checkpointVerdict(ref, record, true);
          }
          break;
        default:
          verdict = "BaseOutOfOrder";
      }
    } else if (Event.isSnapshotPart(record)) {
      verdict = "SnapshotOutOfPlace";
    } else if (record._tag === "Mutation") {
      if (record.events.length === 0) verdict = "EmptyMutation";
      for (const member of record.events) {
        verdict = domainVerdict(ref, member);
        if (verdict !== undefined) break;
      }
    } else {
      verdict = domainVerdict(ref, record);
    }
    if (verdict !== undefined) return verdict;
  }
  return all.length < baseRecordCount ? "BaseIncomplete" : "still-legal";
};
