/**
 * The protocol's JSON shapes (docs/protocol.md): payload values, jobs,
 * schedules, counts, committed events, rejections and errors, each with
 * its encoder (what the server writes) and its decoder (what the client
 * checks). Field names are core's (`jobId`, `maxAttempts`), so a job a
 * client gets back has the shape the embedded engine hands out.
 *
 * Values are JSON where JSON can say them: null, booleans, numbers,
 * strings, arrays, objects (maps, whose keys are data). Three tagged
 * one-member objects carry the rest, losslessly: `{"$bigint": "123"}` (an
 * integer beyond 2^53-1), `{"$bytes": "base64"}`, and `{"$map": {...}}`, a
 * map that would otherwise read as one of the tags (its one key is
 * `$bigint`, `$bytes` or `$map`).
 */
import { Buffer } from "node:buffer";
import { decodeEvent, encodeEvent } from "@tay/codec";
import {
  Event,
  type Job,
  type JobHistory,
  Limits,
  type Progress,
  type Query,
  type Queue,
  type Rejection,
  type Schedule,
  Value,
} from "@tay/core";
import * as Shape from "./Shape.js";

/**
 * How long the server waits for a startable job in one `/v1/next-jobs`
 * request unless asked otherwise: the server answers with none then, and
 * the client asks again.
 */
export const nextJobsWaitMsDefault = 25_000;

/** How often the server writes a comment on each event stream, however quiet: a client that hears nothing for several of these takes the stream for dead. */
export const streamPingMs = 15_000;

/** A JSON document. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | JsonObject;

/** A JSON object, built from entries (a key such as `__proto__` stays a member). */
export interface JsonObject {
  readonly [key: string]: Json;
}

const tags = new Set(["$bigint", "$bytes", "$map"]);

const objectOf = (entries: Iterable<readonly [string, Json]>): JsonObject =>
  Object.fromEntries(entries);

/** A map's members as JSON, escaped with `$map` when they would read as a tag. */
const mapJson = (entries: ReadonlyArray<readonly [string, Json]>): JsonObject => {
  const members = objectOf(entries);
  const [only] = entries;
  return entries.length === 1 && only !== undefined && tags.has(only[0])
    ? { $map: members }
    : members;
};

/** A value as JSON (depth is bounded by the value's own limit, 64). */
export const valueJson = (value: Value.Value): Json => {
  if (value === null) return null;
  switch (typeof value) {
    case "boolean":
    case "number":
    case "string":
      return value;
    case "bigint":
      return { $bigint: value.toString() };
    default:
      if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString("base64") };
      if (value instanceof Map) {
        return mapJson([...value].map(([key, item]): [string, Json] => [key, valueJson(item)]));
      }
      return Array.isArray(value) ? value.map(valueJson) : null;
  }
};

const isPlainObject = (input: object): boolean => {
  const prototype: unknown = Object.getPrototypeOf(input);
  return prototype === Object.prototype || prototype === null;
};

const valueExpected =
  "a value (null, boolean, number, string, bigint, bytes, array, plain object or Map)";

/**
 * A command's input value (plain objects or `Map`s for maps) as JSON, or
 * the path of the part that is no value (a function, a `Date`, `NaN`).
 */
export const inputJson: Shape.Decoder<Json> = (input, path) => inputAt(input, path, 0);

const inputAt = (input: unknown, path: string, depth: number): Json => {
  if (depth > Value.valueDepthMax) {
    return Shape.mismatch(path, `at most ${Value.valueDepthMax} levels of nesting`, input);
  }
  if (input === null || typeof input === "boolean" || typeof input === "string") return input;
  if (typeof input === "number") {
    return Number.isFinite(input) ? input : Shape.mismatch(path, "a finite number", input);
  }
  if (typeof input === "bigint") return { $bigint: input.toString() };
  if (typeof input !== "object") return Shape.mismatch(path, valueExpected, input);
  if (input instanceof Uint8Array) return { $bytes: Buffer.from(input).toString("base64") };
  if (Array.isArray(input)) {
    return input.map((item: unknown, index) => inputAt(item, `${path}[${index}]`, depth + 1));
  }
  const entries =
    input instanceof Map ? [...input.entries()] : isPlainObject(input) ? Object.entries(input) : [];
  if (!(input instanceof Map) && !isPlainObject(input)) {
    return Shape.mismatch(path, valueExpected, `an object of class ${input.constructor.name}`);
  }
  return mapJson(
    entries.map(([key, item]: [unknown, unknown]): [string, Json] => {
      if (typeof key !== "string") return Shape.mismatch(path, "a map with string keys", key);
      return [key, inputAt(item, `${path}.${key}`, depth + 1)];
    }),
  );
};

const bigintText = /^-?(0|[1-9][0-9]*)$/;
const base64Text = /^[A-Za-z0-9+/]*={0,2}$/;

const taggedValue = (
  members: Readonly<Record<string, unknown>>,
  path: string,
  depth: number,
): Value.Value | undefined => {
  const keys = Object.keys(members);
  const [tag] = keys;
  if (keys.length !== 1 || tag === undefined || !tags.has(tag)) return undefined;
  const inner = members[tag];
  if (tag === "$map") return mapValue(Shape.record(inner, `${path}.$map`), `${path}.$map`, depth);
  const text = Shape.string(inner, `${path}.${tag}`);
  if (tag === "$bigint") {
    return bigintText.test(text)
      ? BigInt(text)
      : Shape.mismatch(`${path}.$bigint`, "a decimal integer", text);
  }
  return base64Text.test(text) && text.length % 4 === 0
    ? new Uint8Array(Buffer.from(text, "base64"))
    : Shape.mismatch(`${path}.$bytes`, "base64", text);
};

const mapValue = (
  members: Readonly<Record<string, unknown>>,
  path: string,
  depth: number,
): Value.Value =>
  new Map(
    Object.entries(members).map(([key, item]): [string, Value.Value] => [
      key,
      valueAt(item, `${path}.${key}`, depth + 1),
    ]),
  );

const valueAt = (input: unknown, path: string, depth: number): Value.Value => {
  if (depth > Value.valueDepthMax) {
    return Shape.mismatch(path, `at most ${Value.valueDepthMax} levels of nesting`, input);
  }
  if (input === null || typeof input === "boolean" || typeof input === "string") return input;
  if (typeof input === "number") return Shape.number(input, path);
  if (Array.isArray(input)) {
    return input.map((item: unknown, index) => valueAt(item, `${path}[${index}]`, depth + 1));
  }
  const members = Shape.record(input, path);
  return taggedValue(members, path, depth) ?? mapValue(members, path, depth);
};

/** A value from its JSON (objects become `Map`s, the tags their values). */
export const value: Shape.Decoder<Value.Value> = (input, path) => valueAt(input, path, 0);

/** A job as JSON: core's fields, its values in the wire's form. */
export const jobJson = (job: Job.Job): JsonObject => ({
  jobId: job.jobId,
  queue: job.queue,
  worker: job.worker,
  args: valueJson(job.args),
  priority: job.priority,
  maxAttempts: job.maxAttempts,
  attempt: job.attempt,
  state: job.state,
  insertedAt: job.insertedAt,
  scheduledAt: job.scheduledAt,
  attemptedAt: job.attemptedAt,
  finishedAt: job.finishedAt,
  errors: job.errors.map((error) => ({ attempt: error.attempt, at: error.at, error: error.error })),
  result: job.result === null ? null : { value: valueJson(job.result.value), at: job.result.at },
  scheduleId: job.scheduleId,
  uniqueKey: job.uniqueKey,
  uniquePeriodMs: job.uniquePeriodMs,
  timeoutMs: job.timeoutMs,
});

const count = Shape.integer();
const time = Shape.integer();
export const jobState = Shape.literal(...Event.jobStates);

const jobError = Shape.struct({ attempt: count, at: time, error: Shape.string });
const jobResult = Shape.struct({ value, at: time });

/** A job from its JSON. */
export const job: Shape.Decoder<Job.Job> = Shape.struct({
  jobId: count,
  queue: Shape.string,
  worker: Shape.string,
  args: value,
  priority: count,
  maxAttempts: count,
  attempt: count,
  state: jobState,
  insertedAt: time,
  scheduledAt: time,
  attemptedAt: Shape.nullable(time),
  finishedAt: Shape.nullable(time),
  errors: Shape.array(jobError),
  result: Shape.nullable(jobResult),
  scheduleId: Shape.nullable(Shape.string),
  uniqueKey: Shape.nullable(Shape.string),
  uniquePeriodMs: Shape.nullable(count),
  timeoutMs: Shape.nullable(count),
});

export const jobs = Shape.array(job);

/** A running attempt's progress (core's `Progress`) as JSON. */
export const progressJson = (progress: Progress.Progress): JsonObject => ({
  jobId: progress.jobId,
  attempt: progress.attempt,
  value: valueJson(progress.value),
  at: progress.at,
  bytes: progress.bytes,
});

/** A running attempt's progress from its JSON. */
export const progress: Shape.Decoder<Progress.Progress> = Shape.struct({
  jobId: count,
  attempt: count,
  value,
  at: time,
  bytes: count,
});

/**
 * A job as an insert answers it (EVENTS-V3.md): when its unique key named
 * a job of the queue that holds it, that existing job with `duplicate:
 * true` (nothing was appended); a job actually inserted has no marker.
 */
export type InsertedJob = Job.Job & { readonly duplicate?: true };

/** An insert's answer as JSON: the job, and `"duplicate": true` only on a duplicate. */
export const insertedJobJson = (inserted: InsertedJob): JsonObject =>
  inserted.duplicate === true ? { ...jobJson(inserted), duplicate: true } : jobJson(inserted);

const duplicateMarker = Shape.struct({ duplicate: Shape.optional(Shape.boolean) });

/** An insert's answer from its JSON. */
export const insertedJob: Shape.Decoder<InsertedJob> = (input, path) => {
  const decoded = job(input, path);
  return duplicateMarker(input, path).duplicate === true
    ? { ...decoded, duplicate: true }
    : decoded;
};

export const insertedJobs = Shape.array(insertedJob);

/** A queue's state (EVENTS-V3.md (24,3)) as JSON. */
export const queueStateJson = (state: Queue.QueueState): JsonObject => ({
  queue: state.queue,
  at: state.at,
  paused: state.paused,
  concurrency: state.concurrency,
  rateLimit:
    state.rateLimit === null
      ? null
      : { count: state.rateLimit.count, perMs: state.rateLimit.perMs },
});

/** A rate limit: at most `count` starts in any window of `perMs`. */
export const rateLimit = Shape.struct({
  count: Shape.integer(Limits.rateCountMin, Limits.rateCountMax),
  perMs: Shape.integer(Limits.ratePerMsMin, Limits.ratePerMsMax),
});

/** A queue's state from its JSON. */
export const queueState: Shape.Decoder<Queue.QueueState> = Shape.struct({
  queue: Shape.string,
  at: time,
  paused: Shape.boolean,
  concurrency: Shape.nullable(Shape.integer(1)),
  rateLimit: Shape.nullable(rateLimit),
});

/** A schedule definition as JSON; a v3 one (EVENTS-V3.md) adds its zone and catch-up policy. */
export const definitionJson = (definition: Event.ScheduleDefinition): JsonObject => ({
  queue: definition.queue,
  worker: definition.worker,
  args: valueJson(definition.args),
  priority: definition.priority,
  maxAttempts: definition.maxAttempts,
  everyMs: definition.everyMs,
  cron: definition.cron,
  overlap: definition.overlap,
  ...(Event.isDefinitionV3(definition)
    ? {
        timezone: definition.timezone,
        catchUp: definition.catchUp,
        catchUpWindowMs: definition.catchUpWindowMs,
      }
    : {}),
});

/** A schedule's catch-up policy (EVENTS-V3.md): "once", "skip" or "all". */
export const catchUp = Shape.literal(...Event.catchUpPolicies);

const definitionV2 = Shape.struct({
  queue: Shape.string,
  worker: Shape.string,
  args: value,
  priority: count,
  maxAttempts: count,
  everyMs: Shape.nullable(count),
  cron: Shape.nullable(Shape.string),
  overlap: Shape.literal("allow", "skip"),
});

const definitionV3 = Shape.struct({
  timezone: Shape.string,
  catchUp,
  catchUpWindowMs: Shape.nullable(count),
});

/** A definition from its JSON: a v3 one when it carries a `timezone`. */
export const definition: Shape.Decoder<Event.ScheduleDefinition> = (input, path) => {
  const v2: Event.ScheduleDefinition = definitionV2(input, path);
  const members = Shape.record(input, path);
  return Object.hasOwn(members, "timezone") ? { ...v2, ...definitionV3(input, path) } : v2;
};

/** A schedule as JSON. */
export const scheduleJson = (schedule: Schedule.Schedule): JsonObject => ({
  scheduleId: schedule.scheduleId,
  definition: definitionJson(schedule.definition),
  revision: schedule.revision,
  definitionRevision: schedule.definitionRevision,
  registeredAt: schedule.registeredAt,
  nextDueAt: schedule.nextDueAt,
  lastDueAt: schedule.lastDueAt,
  cancelledAt: schedule.cancelledAt,
  activeJobIds: [...schedule.activeJobIds],
  membershipComplete: schedule.membershipComplete,
});

export const schedule: Shape.Decoder<Schedule.Schedule> = Shape.struct({
  scheduleId: Shape.string,
  definition,
  revision: count,
  definitionRevision: count,
  registeredAt: time,
  nextDueAt: time,
  lastDueAt: Shape.nullable(time),
  cancelledAt: Shape.nullable(time),
  activeJobIds: Shape.array(count),
  membershipComplete: Shape.boolean,
});

export const schedules = Shape.array(schedule);

/** Counts by queue as JSON: `{ "email": { "available": 3, ... } }`. */
export const countsJson = (counts: ReadonlyMap<string, Query.Counts>): JsonObject =>
  objectOf([...counts].map(([queue, byState]): [string, Json] => [queue, { ...byState }]));

const byState: Shape.Decoder<Query.Counts> = Shape.struct({
  scheduled: count,
  available: count,
  executing: count,
  retryable: count,
  completed: count,
  discarded: count,
  cancelled: count,
});

export const counts: Shape.Decoder<ReadonlyMap<string, Query.Counts>> = (input, path) =>
  new Map(
    Object.entries(Shape.record(input, path)).map(([queue, item]): [string, Query.Counts] => [
      queue,
      byState(item, `${path}.${queue}`),
    ]),
  );

/**
 * Any in-memory event field as JSON, for readers (the dashboard, `curl`):
 * values in the wire's form, records as objects. Not for decoding back:
 * the payload is (see `committedJson`).
 */
export const fieldsJson = (input: unknown, depth = 0): Json => {
  if (depth > Value.valueDepthMax + 2) return null;
  if (input === null || typeof input === "boolean" || typeof input === "string") return input;
  if (typeof input === "number") return Number.isFinite(input) ? input : null;
  if (typeof input === "bigint") return { $bigint: input.toString() };
  if (typeof input !== "object") return null;
  if (input instanceof Uint8Array) return { $bytes: Buffer.from(input).toString("base64") };
  if (Array.isArray(input)) return input.map((item: unknown) => fieldsJson(item, depth + 1));
  const entries: Array<[string, unknown]> =
    input instanceof Map ? [...input] : Object.entries(input);
  return objectOf(
    entries
      .filter(([key]) => key !== "_tag")
      .map(([key, item]): [string, Json] => [String(key), fieldsJson(item, depth + 1)]),
  );
};

/** One committed domain event: its sequence, its index in a mutation, the event. */
export interface CommittedEvent {
  readonly sequence: number;
  readonly member: number;
  readonly event: Event.DomainEvent;
}

/**
 * One entry of a job's history (core's `JobHistory`): a committed domain
 * event, or the snapshot part of a compaction's base narrowed to the job.
 * `member` is the event's index in its mutation, 0 for a record of its
 * own (as in the committed stream).
 */
export interface HistoryEvent {
  readonly sequence: number;
  readonly member: number;
  readonly event: JobHistory.HistoryEvent;
}

/**
 * A committed event as JSON: its pair and its canonical payload (base64),
 * which the client decodes with the codec (no second decoder to drift),
 * and its tag for readers such as `curl`.
 */
export const committedJson = (committed: CommittedEvent | HistoryEvent): JsonObject => {
  const encoded = encodeEvent(committed.event);
  if (encoded._tag === "Left") {
    return { sequence: committed.sequence, member: committed.member, event: committed.event._tag };
  }
  return {
    sequence: committed.sequence,
    member: committed.member,
    event: committed.event._tag,
    type: encoded.right.type,
    schema: encoded.right.schema,
    payload: Buffer.from(encoded.right.payload).toString("base64"),
    fields: fieldsJson(committed.event),
  };
};

const committedShape = Shape.struct({
  sequence: count,
  member: count,
  type: Shape.integer(0, 65_535),
  schema: Shape.integer(0, 65_535),
  payload: Shape.string,
});

/** A committed entry's pair and payload decoded by the codec, at `path`. */
const committedEvent = (input: unknown, path: string) => {
  const fields = committedShape(input, path);
  const bytes = new Uint8Array(Buffer.from(fields.payload, "base64"));
  const decoded = decodeEvent(fields.type, fields.schema, bytes);
  if (decoded._tag === "Left") {
    return Shape.mismatch(`${path}.payload`, "a canonical event payload", decoded.left._tag);
  }
  return { sequence: fields.sequence, member: fields.member, event: decoded.right };
};

export const committed: Shape.Decoder<CommittedEvent> = (input, path) => {
  const { sequence, member, event } = committedEvent(input, path);
  if (
    event._tag === "Mutation" ||
    event._tag === "SnapshotPart" ||
    event._tag === "SnapshotPartV3"
  ) {
    return Shape.mismatch(`${path}.payload`, "a domain event", event._tag);
  }
  return { sequence, member, event };
};

/** An entry of a job's history: a domain event or a snapshot part, never a mutation. */
export const historyEvent: Shape.Decoder<HistoryEvent> = (input, path) => {
  const { sequence, member, event } = committedEvent(input, path);
  if (event._tag === "Mutation") {
    return Shape.mismatch(`${path}.payload`, "a domain event or a snapshot part", event._tag);
  }
  return { sequence, member, event };
};

const jobId = count;
const scheduleId = Shape.string;
const commandTag = Shape.literal(
  "InsertJobs",
  "ClaimJobs",
  "CompleteJob",
  "FailJob",
  "CancelJob",
  "RescueJobs",
  "MakeDueAvailable",
  "Tick",
  "RegisterSchedule",
  "CancelSchedule",
);

const rejectionShapes = {
  JobNotFound: Shape.struct({ jobId }),
  InvalidTransition: Shape.struct({ jobId, from: jobState, command: commandTag }),
  ScheduleNotFound: Shape.struct({ scheduleId }),
  ScheduleAlreadyCancelled: Shape.struct({ scheduleId }),
  RevisionMismatch: Shape.struct({ scheduleId, expected: count, actual: count }),
  InvalidDefinition: Shape.struct({ scheduleId, detail: Shape.string }),
  InvalidField: Shape.struct({ field: Shape.string, detail: Shape.string }),
  TooLarge: Shape.struct({ bytes: count, limit: count }),
  IdsExhausted: Shape.struct({ lastJobId: count, requested: count }),
  StaleAttempt: Shape.struct({
    jobId,
    attempt: count,
    currentAttempt: count,
    state: jobState,
  }),
} as const;

const rejectionTag = Shape.literal(
  ...(Object.keys(rejectionShapes) as ReadonlyArray<keyof typeof rejectionShapes>),
);

/** A rejection from its JSON (core's `Rejection`, field for field). */
export const rejection: Shape.Decoder<Rejection.Rejection> = (input, path) => {
  const members = Shape.record(input, path);
  const tag = Shape.field(members, "_tag", rejectionTag, path);
  // Each tag's decoder checks exactly that rejection's fields.
  return { _tag: tag, ...rejectionShapes[tag](members, path) } as Rejection.Rejection;
};

/** An error answer's body: `{"error": {"_tag", "message", ...}}`. */
export const errorBody = Shape.struct({
  error: Shape.struct({
    _tag: Shape.string,
    message: Shape.string,
    rejection: Shape.optional(Shape.record),
    field: Shape.optional(Shape.string),
  }),
});

/**
 * A stream's `error` event, its last: the server's subscription failed
 * (`Compacted`, ...). `status` is what a request failing so would have
 * been answered with (absent from servers before 2026-12-06).
 */
export const streamError = Shape.struct({
  _tag: Shape.string,
  message: Shape.string,
  status: Shape.optional(Shape.integer(100, 599)),
});

/** A job to insert as a request sends it. */
export interface NewJobJson extends JsonObject {
  readonly queue: string;
  readonly worker: string;
  readonly args: Json;
}

/** What a compaction did (`/v1/compact`'s answer). */
export const compaction = Shape.struct({
  epoch: Shape.integer(),
  parentEpoch: Shape.integer(),
  firstSequence: Shape.integer(),
  baseRecordCount: Shape.integer(),
  baseSegments: Shape.integer(),
  removedEpochs: Shape.array(Shape.integer()),
  notRemoved: Shape.array(Shape.struct({ epoch: Shape.integer(), error: Shape.string })),
  pauseMs: Shape.number,
  jobsKept: Shape.integer(),
  jobsDropped: Shape.integer(),
});

/** What a compaction did, as the client gives it. */
export type Compaction = Shape.Decoded<typeof compaction>;
