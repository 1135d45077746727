/**
 * The typed events of EVENTS.md and EVENTS-V3.md: 17 domain events and the
 * store's own records (snapshot parts of schemas 1 and 3, and the mutation),
 * each with its (type, schema) pair. The schema-3 events are separate tags
 * (`JobInsertedV3`, ...) because a tag names exactly one pair.
 *
 * Field names are the wire names in camelCase (`job_id` is `jobId`). These
 * are plain readonly data; validity against the state machine is the fold's
 * business, validity of field kinds is the codec's.
 */
import type { Value } from "./Value.js";

/** The seven job states. `completed`, `discarded` and `cancelled` are terminal. */
export type JobState =
  | "scheduled"
  | "available"
  | "executing"
  | "retryable"
  | "completed"
  | "discarded"
  | "cancelled";

export const jobStates: ReadonlyArray<JobState> = [
  "scheduled",
  "available",
  "executing",
  "retryable",
  "completed",
  "discarded",
  "cancelled",
];

/** True for the states nothing leaves. */
export const isTerminal = (state: JobState): boolean =>
  state === "completed" || state === "discarded" || state === "cancelled";

export type FinishOutcome = "completed" | "discarded";
export type OccurrenceOutcome = "delivered" | "skipped";
export type Overlap = "allow" | "skip";

/** A recurring schedule's definition: exactly one of `everyMs` and `cron` is set. */
export interface ScheduleDefinition {
  readonly queue: string;
  readonly worker: string;
  readonly args: Value;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly everyMs: number | null;
  readonly cron: string | null;
  readonly overlap: Overlap;
}

/** How a schedule of schema 3 catches up with occurrences it missed (EVENTS-V3.md). */
export type CatchUp = "once" | "skip" | "all";

export const catchUpPolicies: ReadonlyArray<CatchUp> = ["once", "skip", "all"];

/**
 * A schema-3 definition: the v2 definition plus the zone its cron is read
 * in and its catch-up policy. Carried only by (13,3).
 */
export interface ScheduleDefinitionV3 extends ScheduleDefinition {
  /** An IANA zone ("Europe/Berlin") or "UTC". */
  readonly timezone: string;
  readonly catchUp: CatchUp;
  readonly catchUpWindowMs: number | null;
}

/** True for a schema-3 definition (one that carries a zone and a catch-up policy). */
export const isDefinitionV3 = (
  definition: ScheduleDefinition | ScheduleDefinitionV3,
): definition is ScheduleDefinitionV3 => "timezone" in definition;

/** A queue's rate limit: at most `count` starts in any window of `perMs` milliseconds. */
export interface RateLimit {
  readonly count: number;
  readonly perMs: number;
}

/** One failed attempt kept with its job. */
export interface JobError {
  readonly attempt: number;
  readonly at: number;
  readonly error: string;
}

/** A job as a snapshot part carries it (no result: results follow as (10,2)). */
export interface JobSnapshot {
  readonly jobId: number;
  readonly queue: string;
  readonly worker: string;
  readonly args: Value;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly attempt: number;
  readonly state: JobState;
  readonly insertedAt: number;
  readonly scheduledAt: number;
  readonly attemptedAt: number | null;
  readonly finishedAt: number | null;
  readonly errors: ReadonlyArray<JobError>;
}

/** The three fields a schema-3 job adds (null when unused). */
export interface JobV3Fields {
  readonly uniqueKey: string | null;
  readonly uniquePeriodMs: number | null;
  readonly timeoutMs: number | null;
}

/** A job as a (7,3) snapshot part carries it. */
export interface JobSnapshotV3 extends JobSnapshot, JobV3Fields {}

/** (1,1) */
export interface JobInserted {
  readonly _tag: "JobInserted";
  readonly jobId: number;
  readonly queue: string;
  readonly worker: string;
  readonly args: Value;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly scheduledAt: number;
  readonly insertedAt: number;
}

/** (2,1) */
export interface JobAvailable {
  readonly _tag: "JobAvailable";
  readonly jobId: number;
  readonly at: number;
}

/** (3,1) */
export interface JobStarted {
  readonly _tag: "JobStarted";
  readonly jobId: number;
  readonly at: number;
  readonly attempt: number;
}

/** (4,1) */
export interface JobFinished {
  readonly _tag: "JobFinished";
  readonly jobId: number;
  readonly at: number;
  readonly outcome: FinishOutcome;
  readonly error: string | null;
}

/** (5,1) */
export interface JobCancelled {
  readonly _tag: "JobCancelled";
  readonly jobId: number;
  readonly at: number;
  readonly reason: string | null;
}

/** (6,1) */
export interface JobRetried {
  readonly _tag: "JobRetried";
  readonly jobId: number;
  readonly at: number;
  readonly retryAt: number;
  readonly error: string;
}

/** (1,3): an insertion with the schema-3 fields. */
export interface JobInsertedV3 extends JobV3Fields {
  readonly _tag: "JobInsertedV3";
  readonly jobId: number;
  readonly queue: string;
  readonly worker: string;
  readonly args: Value;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly scheduledAt: number;
  readonly insertedAt: number;
}

/** (20,3): a discarded or cancelled job runs again, keeping its history. */
export interface JobRedriven {
  readonly _tag: "JobRedriven";
  readonly jobId: number;
  readonly at: number;
  readonly maxAttempts: number;
  readonly reason: string | null;
}

/** (24,3): a queue's whole state. */
export interface QueueStateSet {
  readonly _tag: "QueueStateSet";
  readonly queue: string;
  readonly at: number;
  readonly paused: boolean;
  readonly concurrency: number | null;
  readonly rateLimit: RateLimit | null;
}

/** (7,2) legacy, read only. */
export interface ScheduleRegistered {
  readonly _tag: "ScheduleRegistered";
  readonly scheduleId: string;
  readonly revision: number;
  readonly definition: ScheduleDefinition;
  readonly registeredAt: number;
  readonly nextDueAt: number;
}

/** (8,2) legacy, read only. */
export interface ScheduleAdvanced {
  readonly _tag: "ScheduleAdvanced";
  readonly scheduleId: string;
  readonly revision: number;
  readonly dueAt: number;
  readonly nextDueAt: number;
}

/** (9,2) */
export interface ScheduleCancelled {
  readonly _tag: "ScheduleCancelled";
  readonly scheduleId: string;
  readonly revision: number;
  readonly at: number;
}

/** (10,2) */
export interface ResultRecorded {
  readonly _tag: "ResultRecorded";
  readonly jobId: number;
  readonly result: Value;
  readonly at: number;
}

/** (11,2) */
export interface OccurrenceAdvanced {
  readonly _tag: "OccurrenceAdvanced";
  readonly scheduleId: string;
  readonly revision: number;
  readonly dueAt: number;
  readonly nextDueAt: number;
  readonly outcome: OccurrenceOutcome;
  readonly activeJobId: number | null;
}

/** (12,2) legacy, read only. */
export interface ScheduleHistoricalCheckpoint {
  readonly _tag: "ScheduleHistoricalCheckpoint";
  readonly scheduleId: string;
  readonly definition: ScheduleDefinition;
  readonly definitionRevision: number;
  readonly revision: number;
  readonly registeredAt: number;
  readonly nextDueAt: number;
  readonly lastDueAt: number | null;
  readonly cancelledAt: number | null;
  readonly activeJobId: number | null;
}

/** (13,2) registration / state / checkpoint. */
export interface ScheduleCheckpoint {
  readonly _tag: "ScheduleCheckpoint";
  readonly scheduleId: string;
  readonly definition: ScheduleDefinition;
  readonly definitionRevision: number;
  readonly revision: number;
  readonly registeredAt: number;
  readonly nextDueAt: number;
  readonly lastDueAt: number | null;
  readonly cancelledAt: number | null;
  /** Strictly ascending. */
  readonly activeJobIds: ReadonlyArray<number>;
  readonly membershipComplete: boolean;
}

/** (13,3) registration / state / checkpoint with a schema-3 definition. */
export interface ScheduleCheckpointV3 {
  readonly _tag: "ScheduleCheckpointV3";
  readonly scheduleId: string;
  readonly definition: ScheduleDefinitionV3;
  readonly definitionRevision: number;
  readonly revision: number;
  readonly registeredAt: number;
  readonly nextDueAt: number;
  readonly lastDueAt: number | null;
  readonly cancelledAt: number | null;
  /** Strictly ascending. */
  readonly activeJobIds: ReadonlyArray<number>;
  readonly membershipComplete: boolean;
}

/** (7,3) snapshot part whose jobs carry the schema-3 fields: only in a canonical base. */
export interface SnapshotPartV3 {
  readonly _tag: "SnapshotPartV3";
  readonly part: number;
  readonly lastJobId: number;
  readonly jobs: ReadonlyArray<JobSnapshotV3>;
}

/** (7,1) Store-v2 snapshot part: only in a canonical base. */
export interface SnapshotPart {
  readonly _tag: "SnapshotPart";
  readonly part: number;
  readonly lastJobId: number;
  readonly jobs: ReadonlyArray<JobSnapshot>;
}

/** (8,1) Store-v2 mutation: an atomic batch of domain events. */
export interface Mutation {
  readonly _tag: "Mutation";
  readonly events: ReadonlyArray<DomainEvent>;
}

export type JobEvent =
  | JobInserted
  | JobInsertedV3
  | JobAvailable
  | JobStarted
  | JobFinished
  | JobCancelled
  | JobRetried
  | JobRedriven;

export type ScheduleEvent =
  | ScheduleRegistered
  | ScheduleAdvanced
  | ScheduleCancelled
  | OccurrenceAdvanced
  | ScheduleHistoricalCheckpoint
  | ScheduleCheckpoint
  | ScheduleCheckpointV3;

/**
 * The events a mutation may carry: the 13 of the two tables of EVENTS.md
 * and the four of EVENTS-V3.md.
 */
export type DomainEvent = JobEvent | ScheduleEvent | ResultRecorded | QueueStateSet;

/** A snapshot part of either schema. */
export type AnySnapshotPart = SnapshotPart | SnapshotPartV3;

/** Everything a record of the log can hold: the 20 pairs. */
export type Event = DomainEvent | AnySnapshotPart | Mutation;

/** True for a snapshot part of either schema ((7,1) or (7,3)). */
export const isSnapshotPart = (event: Event): event is AnySnapshotPart =>
  event._tag === "SnapshotPart" || event._tag === "SnapshotPartV3";

export type EventTag = Event["_tag"];

/**
 * True for the events that end a job's attempt: finished, retried,
 * cancelled (a rescue and a timeout are one of the first two). What
 * runtimes watching commits react to: a handler to abort, a lease or a
 * progress report to let go.
 */
export const endsAnAttempt = (event: Event): event is JobFinished | JobRetried | JobCancelled =>
  event._tag === "JobCancelled" || event._tag === "JobRetried" || event._tag === "JobFinished";

/** A (type, schema) pair of the record header. */
export interface Pair {
  readonly type: number;
  readonly schema: number;
}

/** The (type, schema) pair of every event, as EVENTS.md assigns them. */
export const pairs: { readonly [Tag in EventTag]: Pair } = {
  JobInserted: { type: 1, schema: 1 },
  JobAvailable: { type: 2, schema: 1 },
  JobStarted: { type: 3, schema: 1 },
  JobFinished: { type: 4, schema: 1 },
  JobCancelled: { type: 5, schema: 1 },
  JobRetried: { type: 6, schema: 1 },
  SnapshotPart: { type: 7, schema: 1 },
  Mutation: { type: 8, schema: 1 },
  ScheduleRegistered: { type: 7, schema: 2 },
  ScheduleAdvanced: { type: 8, schema: 2 },
  ScheduleCancelled: { type: 9, schema: 2 },
  ResultRecorded: { type: 10, schema: 2 },
  OccurrenceAdvanced: { type: 11, schema: 2 },
  ScheduleHistoricalCheckpoint: { type: 12, schema: 2 },
  ScheduleCheckpoint: { type: 13, schema: 2 },
  JobInsertedV3: { type: 1, schema: 3 },
  JobRedriven: { type: 20, schema: 3 },
  QueueStateSet: { type: 24, schema: 3 },
  ScheduleCheckpointV3: { type: 13, schema: 3 },
  SnapshotPartV3: { type: 7, schema: 3 },
};

export const eventTags: ReadonlyArray<EventTag> = [
  "JobInserted",
  "JobAvailable",
  "JobStarted",
  "JobFinished",
  "JobCancelled",
  "JobRetried",
  "SnapshotPart",
  "Mutation",
  "ScheduleRegistered",
  "ScheduleAdvanced",
  "ScheduleCancelled",
  "ResultRecorded",
  "OccurrenceAdvanced",
  "ScheduleHistoricalCheckpoint",
  "ScheduleCheckpoint",
  "JobInsertedV3",
  "JobRedriven",
  "QueueStateSet",
  "ScheduleCheckpointV3",
  "SnapshotPartV3",
];

/** The tags of schema 3 (EVENTS-V3.md): writers emit them only when a v3 feature is used. */
export const schema3Tags: ReadonlyArray<EventTag> = [
  "JobInsertedV3",
  "JobRedriven",
  "QueueStateSet",
  "ScheduleCheckpointV3",
  "SnapshotPartV3",
];

/** Tags that writers never emit (read from older stores only). */
export const legacyTags: ReadonlyArray<EventTag> = [
  "ScheduleRegistered",
  "ScheduleAdvanced",
  "ScheduleHistoricalCheckpoint",
];

/** The tag of a (type, schema) pair, or undefined for an unknown pair. */
export const tagOf = (type: number, schema: number): EventTag | undefined =>
  eventTags.find((tag) => pairs[tag].type === type && pairs[tag].schema === schema);

/** The pair of an event. */
export const pairOf = (event: Event): Pair => pairs[event._tag];

// Constructors: each takes the fields without the tag, so call sites read
// like the table rows of EVENTS.md.
type Fields<E extends Event> = Omit<E, "_tag">;

// The three most frequent events list their fields rather than spreading
// them: one object of a fixed shape, built several times faster.
export const jobInserted = (fields: Fields<JobInserted>): JobInserted => ({
  _tag: "JobInserted",
  jobId: fields.jobId,
  queue: fields.queue,
  worker: fields.worker,
  args: fields.args,
  priority: fields.priority,
  maxAttempts: fields.maxAttempts,
  scheduledAt: fields.scheduledAt,
  insertedAt: fields.insertedAt,
});
export const jobAvailable = (fields: Fields<JobAvailable>): JobAvailable => ({
  _tag: "JobAvailable",
  jobId: fields.jobId,
  at: fields.at,
});
export const jobStarted = (fields: Fields<JobStarted>): JobStarted => ({
  _tag: "JobStarted",
  jobId: fields.jobId,
  at: fields.at,
  attempt: fields.attempt,
});
export const jobFinished = (fields: Fields<JobFinished>): JobFinished => ({
  _tag: "JobFinished",
  jobId: fields.jobId,
  at: fields.at,
  outcome: fields.outcome,
  error: fields.error,
});
export const jobCancelled = (fields: Fields<JobCancelled>): JobCancelled => ({
  _tag: "JobCancelled",
  jobId: fields.jobId,
  at: fields.at,
  reason: fields.reason,
});
export const jobRetried = (fields: Fields<JobRetried>): JobRetried => ({
  _tag: "JobRetried",
  jobId: fields.jobId,
  at: fields.at,
  retryAt: fields.retryAt,
  error: fields.error,
});
export const scheduleRegistered = (fields: Fields<ScheduleRegistered>): ScheduleRegistered => ({
  _tag: "ScheduleRegistered",
  ...fields,
});
export const scheduleAdvanced = (fields: Fields<ScheduleAdvanced>): ScheduleAdvanced => ({
  _tag: "ScheduleAdvanced",
  ...fields,
});
export const scheduleCancelled = (fields: Fields<ScheduleCancelled>): ScheduleCancelled => ({
  _tag: "ScheduleCancelled",
  ...fields,
});
export const resultRecorded = (fields: Fields<ResultRecorded>): ResultRecorded => ({
  _tag: "ResultRecorded",
  jobId: fields.jobId,
  result: fields.result,
  at: fields.at,
});
export const occurrenceAdvanced = (fields: Fields<OccurrenceAdvanced>): OccurrenceAdvanced => ({
  _tag: "OccurrenceAdvanced",
  ...fields,
});
export const scheduleHistoricalCheckpoint = (
  fields: Fields<ScheduleHistoricalCheckpoint>,
): ScheduleHistoricalCheckpoint => ({ _tag: "ScheduleHistoricalCheckpoint", ...fields });
export const scheduleCheckpoint = (fields: Fields<ScheduleCheckpoint>): ScheduleCheckpoint => ({
  _tag: "ScheduleCheckpoint",
  ...fields,
});
export const snapshotPart = (fields: Fields<SnapshotPart>): SnapshotPart => ({
  _tag: "SnapshotPart",
  ...fields,
});
export const jobInsertedV3 = (fields: Fields<JobInsertedV3>): JobInsertedV3 => ({
  _tag: "JobInsertedV3",
  jobId: fields.jobId,
  queue: fields.queue,
  worker: fields.worker,
  args: fields.args,
  priority: fields.priority,
  maxAttempts: fields.maxAttempts,
  scheduledAt: fields.scheduledAt,
  insertedAt: fields.insertedAt,
  uniqueKey: fields.uniqueKey,
  uniquePeriodMs: fields.uniquePeriodMs,
  timeoutMs: fields.timeoutMs,
});
export const jobRedriven = (fields: Fields<JobRedriven>): JobRedriven => ({
  _tag: "JobRedriven",
  ...fields,
});
export const queueStateSet = (fields: Fields<QueueStateSet>): QueueStateSet => ({
  _tag: "QueueStateSet",
  ...fields,
});
export const scheduleCheckpointV3 = (
  fields: Fields<ScheduleCheckpointV3>,
): ScheduleCheckpointV3 => ({ _tag: "ScheduleCheckpointV3", ...fields });
export const snapshotPartV3 = (fields: Fields<SnapshotPartV3>): SnapshotPartV3 => ({
  _tag: "SnapshotPartV3",
  ...fields,
});
export const mutation = (events: ReadonlyArray<DomainEvent>): Mutation => ({
  _tag: "Mutation",
  events,
});
