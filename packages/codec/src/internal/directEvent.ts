/**
 * Direct decoders for the most frequent events: the payload bytes of a job
 * event ((1,1) to (6,1), (1,3), (10,2)), of a mutation made of them (8,1),
 * or of a snapshot part ((7,1), (7,3)), the bulk of a compacted generation
 * and every entry of the terminal inspection index, read field by field
 * straight into the typed event, without building the intermediate `Map`
 * that `decodeValue` then `eventFromValue` go through.
 *
 * A direct decoder is a fast path, never a second judge: it returns the
 * event only for a payload that is exactly the canonical encoding of a
 * valid event of its pair (the declared keys, in canonical order, each
 * value of its declared kind and range, nothing after), and `undefined`
 * for anything else, whereupon `Event.decodeEvent` runs the general
 * decoder, which accepts or refuses with its own errors. So the direct
 * decoders cannot change any verdict, only its speed; a differential
 * property test (test/internal/directEvent.test.ts) checks that whatever
 * they accept, the general decoder accepts as the same event.
 *
 * The keys and kinds below repeat the declarations of `Payload.ts`; the
 * test also checks each key list against its declaration.
 */
import { Event as CoreEvent, Limits, type Value as CoreValue } from "@tay/core";
import { twoToThe32 } from "./bytes.js";
import { decodeUtf8 } from "./utf8.js";
import { decodeValueWithin, valueTags } from "./valueDecode.js";

type Value = CoreValue.Value;
type DomainEvent = CoreEvent.DomainEvent;

/**
 * Where one direct decode stands: the payload's bytes, the end of the range
 * being read, the position, and `ok`, which turns false at the first field
 * that is not what the fast path expects (every reader after that does
 * nothing). Each call has its own, and so has each inner payload of a
 * mutation, so a decode started from inside another cannot disturb it.
 */
class Cursor {
  readonly bytes: Uint8Array;
  readonly end: number;
  at: number;
  ok: boolean;

  constructor(bytes: Uint8Array, at: number, end: number) {
    this.bytes = bytes;
    this.end = end;
    this.at = at;
    this.ok = true;
  }
}

const readU32 = (bytes: Uint8Array, offset: number): number =>
  (((bytes[offset] ?? 0) << 24) |
    ((bytes[offset + 1] ?? 0) << 16) |
    ((bytes[offset + 2] ?? 0) << 8) |
    (bytes[offset + 3] ?? 0)) >>>
  0;

/** The bytes of an ASCII wire key. */
const keyBytes = (key: string): Uint8Array => Uint8Array.from(key, (unit) => unit.charCodeAt(0));

/** A (7,1) job's wire keys, in canonical order. */
const jobSnapshotKeys = [
  "args",
  "attempt",
  "attempted_at",
  "errors",
  "finished_at",
  "inserted_at",
  "job_id",
  "max_attempts",
  "priority",
  "queue",
  "scheduled_at",
  "state",
  "worker",
] as const;

/**
 * Wire keys of the pairs read here, in canonical (byte) order: the order a
 * canonical payload lists them in.
 */
export const directKeys = {
  JobInserted: [
    "args",
    "inserted_at",
    "job_id",
    "max_attempts",
    "priority",
    "queue",
    "scheduled_at",
    "worker",
  ],
  JobInsertedV3: [
    "args",
    "inserted_at",
    "job_id",
    "max_attempts",
    "priority",
    "queue",
    "scheduled_at",
    "timeout_ms",
    "unique_key",
    "unique_period_ms",
    "worker",
  ],
  JobAvailable: ["at", "job_id"],
  JobStarted: ["at", "attempt", "job_id"],
  JobFinished: ["at", "error", "job_id", "outcome"],
  JobCancelled: ["at", "job_id", "reason"],
  JobRetried: ["at", "error", "job_id", "retry_at"],
  ResultRecorded: ["at", "job_id", "result"],
  SnapshotPart: ["jobs", "last_job_id", "part"],
  JobSnapshot: jobSnapshotKeys,
  // (7,3)'s job: (7,1)'s keys with the three of schema 3 before `worker`.
  JobSnapshotV3: [
    ...jobSnapshotKeys.slice(0, -1),
    "timeout_ms",
    "unique_key",
    "unique_period_ms",
    "worker",
  ],
  JobError: ["at", "attempt", "error"],
  MutationPayload: ["events"],
  MutationPayloadEntry: ["payload", "schema", "type"],
} as const;

const key = {
  args: keyBytes("args"),
  at: keyBytes("at"),
  attempt: keyBytes("attempt"),
  attemptedAt: keyBytes("attempted_at"),
  error: keyBytes("error"),
  errors: keyBytes("errors"),
  finishedAt: keyBytes("finished_at"),
  jobs: keyBytes("jobs"),
  lastJobId: keyBytes("last_job_id"),
  part: keyBytes("part"),
  state: keyBytes("state"),
  events: keyBytes("events"),
  insertedAt: keyBytes("inserted_at"),
  jobId: keyBytes("job_id"),
  maxAttempts: keyBytes("max_attempts"),
  outcome: keyBytes("outcome"),
  payload: keyBytes("payload"),
  priority: keyBytes("priority"),
  queue: keyBytes("queue"),
  reason: keyBytes("reason"),
  result: keyBytes("result"),
  retryAt: keyBytes("retry_at"),
  scheduledAt: keyBytes("scheduled_at"),
  schema: keyBytes("schema"),
  timeoutMs: keyBytes("timeout_ms"),
  uniqueKey: keyBytes("unique_key"),
  uniquePeriodMs: keyBytes("unique_period_ms"),
  type: keyBytes("type"),
  worker: keyBytes("worker"),
} as const;

/** A map header with exactly `count` entries. */
const map = (cursor: Cursor, count: number): void => {
  if (!cursor.ok) return;
  const { bytes, at } = cursor;
  if (cursor.end - at < 5 || bytes[at] !== valueTags.map || readU32(bytes, at + 1) !== count) {
    cursor.ok = false;
    return;
  }
  cursor.at = at + 5;
};

/** The next key, which must be exactly `wire`. */
const field = (cursor: Cursor, wire: Uint8Array): void => {
  if (!cursor.ok) return;
  const { bytes, at } = cursor;
  const length = wire.length;
  if (cursor.end - at < 4 + length || readU32(bytes, at) !== length) {
    cursor.ok = false;
    return;
  }
  const start = at + 4;
  for (let index = 0; index < length; index++) {
    if (bytes[start + index] !== wire[index]) {
      cursor.ok = false;
      return;
    }
  }
  cursor.at = start + length;
};

/** An integer in `min..max` (`min >= 0`). A negative or non-safe integer is left to the general path. */
const integer = (cursor: Cursor, min: number, max: number): number => {
  if (!cursor.ok) return 0;
  const { bytes, at } = cursor;
  // 2^53-1 has 0x1fffff in its high half; a negative integer has its top bit set.
  const high = cursor.end - at < 9 || bytes[at] !== valueTags.integer ? -1 : readU32(bytes, at + 1);
  if (high < 0 || high > 0x1f_ffff) {
    cursor.ok = false;
    return 0;
  }
  // A value below 2^32 is returned as read, not through the multiplication:
  // V8 then hands out a small integer, not a heap number, and the state's
  // records keep such fields (ids, priority, attempts) unboxed (docs/core.md,
  // "Memory of an active job").
  const low = readU32(bytes, at + 5);
  const value = high === 0 ? low : high * twoToThe32 + low;
  if (value < min || value > max) {
    cursor.ok = false;
    return 0;
  }
  cursor.at = at + 9;
  return value;
};

const id = (cursor: Cursor): number => integer(cursor, Limits.idMin, Limits.idMax);

const time = (cursor: Cursor): number => integer(cursor, Limits.timeMin, Limits.timeMax);

/** A string of `bytesMin..bytesMax` bytes of well-formed UTF-8. */
const string = (cursor: Cursor, bytesMin: number, bytesMax: number): string => {
  if (!cursor.ok) return "";
  const { bytes, at, end } = cursor;
  if (end - at < 5 || bytes[at] !== valueTags.string) {
    cursor.ok = false;
    return "";
  }
  const length = readU32(bytes, at + 1);
  const start = at + 5;
  if (length > end - start || length < bytesMin || length > bytesMax) {
    cursor.ok = false;
    return "";
  }
  // The same decoder (and cache) as the general path: the same string.
  const text = decodeUtf8(bytes, start, start + length);
  if (typeof text !== "string") {
    cursor.ok = false;
    return "";
  }
  cursor.at = start + length;
  return text;
};

const name = (cursor: Cursor): string => string(cursor, Limits.nameBytesMin, Limits.nameBytesMax);

const text = (cursor: Cursor): string => string(cursor, 0, Limits.textBytesMax);

/** True when the next value is null, which it then steps over. */
const skipNull = (cursor: Cursor): boolean => {
  if (cursor.ok && cursor.at < cursor.end && cursor.bytes[cursor.at] === valueTags.null) {
    cursor.at += 1;
    return true;
  }
  return false;
};

/** `text|null`. */
const textOrNull = (cursor: Cursor): string | null => (skipNull(cursor) ? null : text(cursor));

/**
 * Any value (`args`, `result`) inside `enclosingDepth` containers of the
 * payload (1 for a field of the payload's own map).
 */
const value = (cursor: Cursor, enclosingDepth = 1): Value => {
  if (!cursor.ok) return null;
  if (cursor.end - cursor.at >= 5 && cursor.bytes[cursor.at] === valueTags.string) {
    // The common case, a JSON text, without the general decoder's stack.
    return string(cursor, 0, Number.MAX_SAFE_INTEGER);
  }
  // The value decoder moves the cursor past the value it accepts.
  const decoded = decodeValueWithin(cursor.bytes, cursor, cursor.end, enclosingDepth, false);
  if (decoded._tag === "Left") {
    cursor.ok = false;
    return null;
  }
  return decoded.right;
};

/** `time|null`. */
const timeOrNull = (cursor: Cursor): number | null => (skipNull(cursor) ? null : time(cursor));

/**
 * A list header: its item count, or -1. Every item takes at least one byte,
 * so a count beyond the bytes left is left to the general path.
 */
const list = (cursor: Cursor): number => {
  if (!cursor.ok) return -1;
  const { bytes, at, end } = cursor;
  if (end - at < 5 || bytes[at] !== valueTags.list) {
    cursor.ok = false;
    return -1;
  }
  const count = readU32(bytes, at + 1);
  if (count > end - at - 5) {
    cursor.ok = false;
    return -1;
  }
  cursor.at = at + 5;
  return count;
};

/** A job's state: one of the seven names. */
const jobState = (cursor: Cursor): CoreEvent.JobState => {
  const found = string(cursor, 0, Limits.textBytesMax);
  const state = CoreEvent.jobStates.find((member) => member === found);
  if (state === undefined) {
    cursor.ok = false;
    return "available";
  }
  return state;
};

/** True when every field was as expected and the payload ends after the last one. */
const complete = (cursor: Cursor): boolean => cursor.ok && cursor.at === cursor.end;

/**
 * An insert: (1,1), or with `v3` a (1,3) (an insert with a unique key, a
 * unique period or a timeout), whose three fields of schema 3 come before
 * `worker`.
 */
function jobInserted(cursor: Cursor, v3: false): CoreEvent.JobInserted | undefined;
function jobInserted(cursor: Cursor, v3: true): CoreEvent.JobInsertedV3 | undefined;
function jobInserted(
  cursor: Cursor,
  v3: boolean,
): CoreEvent.JobInserted | CoreEvent.JobInsertedV3 | undefined {
  map(cursor, v3 ? 11 : 8);
  field(cursor, key.args);
  const args = value(cursor);
  field(cursor, key.insertedAt);
  const insertedAt = time(cursor);
  field(cursor, key.jobId);
  const jobId = id(cursor);
  field(cursor, key.maxAttempts);
  const maxAttempts = integer(cursor, Limits.maxAttemptsMin, Limits.maxAttemptsMax);
  field(cursor, key.priority);
  const priority = integer(cursor, Limits.priorityMin, Limits.priorityMax);
  field(cursor, key.queue);
  const queue = name(cursor);
  field(cursor, key.scheduledAt);
  const scheduledAt = time(cursor);
  const added = v3 ? v3Fields(cursor) : undefined;
  field(cursor, key.worker);
  const worker = name(cursor);
  if (!complete(cursor)) return undefined;
  // The declared field order, as the general decoder builds it.
  return added === undefined
    ? {
        _tag: "JobInserted",
        jobId,
        queue,
        worker,
        args,
        priority,
        maxAttempts,
        scheduledAt,
        insertedAt,
      }
    : {
        _tag: "JobInsertedV3",
        jobId,
        queue,
        worker,
        args,
        priority,
        maxAttempts,
        scheduledAt,
        insertedAt,
        uniqueKey: added.uniqueKey,
        uniquePeriodMs: added.uniquePeriodMs,
        timeoutMs: added.timeoutMs,
      };
}

const jobAvailable = (cursor: Cursor): CoreEvent.JobAvailable | undefined => {
  map(cursor, 2);
  field(cursor, key.at);
  const at = time(cursor);
  field(cursor, key.jobId);
  const jobId = id(cursor);
  return complete(cursor) ? { _tag: "JobAvailable", jobId, at } : undefined;
};

const jobStarted = (cursor: Cursor): CoreEvent.JobStarted | undefined => {
  map(cursor, 3);
  field(cursor, key.at);
  const at = time(cursor);
  field(cursor, key.attempt);
  // A started attempt is at least 1 (Payload.ts, `attemptMade`).
  const attempt = integer(cursor, 1, Limits.maxAttemptsMax);
  field(cursor, key.jobId);
  const jobId = id(cursor);
  return complete(cursor) ? { _tag: "JobStarted", jobId, at, attempt } : undefined;
};

const jobFinished = (cursor: Cursor): CoreEvent.JobFinished | undefined => {
  map(cursor, 4);
  field(cursor, key.at);
  const at = time(cursor);
  field(cursor, key.error);
  const error = textOrNull(cursor);
  field(cursor, key.jobId);
  const jobId = id(cursor);
  field(cursor, key.outcome);
  const found = string(cursor, 0, Limits.textBytesMax);
  const outcome = found === "completed" || found === "discarded" ? found : undefined;
  if (!complete(cursor) || outcome === undefined) return undefined;
  return { _tag: "JobFinished", jobId, at, outcome, error };
};

const jobCancelled = (cursor: Cursor): CoreEvent.JobCancelled | undefined => {
  map(cursor, 3);
  field(cursor, key.at);
  const at = time(cursor);
  field(cursor, key.jobId);
  const jobId = id(cursor);
  field(cursor, key.reason);
  const reason = textOrNull(cursor);
  return complete(cursor) ? { _tag: "JobCancelled", jobId, at, reason } : undefined;
};

const jobRetried = (cursor: Cursor): CoreEvent.JobRetried | undefined => {
  map(cursor, 4);
  field(cursor, key.at);
  const at = time(cursor);
  field(cursor, key.error);
  const error = text(cursor);
  field(cursor, key.jobId);
  const jobId = id(cursor);
  field(cursor, key.retryAt);
  const retryAt = time(cursor);
  return complete(cursor) ? { _tag: "JobRetried", jobId, at, retryAt, error } : undefined;
};

const resultRecorded = (cursor: Cursor): CoreEvent.ResultRecorded | undefined => {
  map(cursor, 3);
  field(cursor, key.at);
  const at = time(cursor);
  field(cursor, key.jobId);
  const jobId = id(cursor);
  field(cursor, key.result);
  const result = value(cursor);
  return complete(cursor) ? { _tag: "ResultRecorded", jobId, result, at } : undefined;
};

/** One failed attempt of a snapshot job (depth 5 in its payload). */
const jobError = (cursor: Cursor): CoreEvent.JobError => {
  map(cursor, 3);
  field(cursor, key.at);
  const at = time(cursor);
  field(cursor, key.attempt);
  // A failed attempt is at least 1 (Payload.ts, `attemptMade`).
  const attempt = integer(cursor, 1, Limits.maxAttemptsMax);
  field(cursor, key.error);
  const error = text(cursor);
  return { attempt, at, error };
};

/** `name|null`. */
const nameOrNull = (cursor: Cursor): string | null => (skipNull(cursor) ? null : name(cursor));

/** `id|null`. */
const idOrNull = (cursor: Cursor): number | null => (skipNull(cursor) ? null : id(cursor));

/**
 * The three fields of schema 3 (`timeout_ms`, `unique_key`,
 * `unique_period_ms`, in canonical order), which (1,3) and a (7,3) job
 * place between `scheduled_at` or `state` and `worker`.
 */
const v3Fields = (cursor: Cursor): CoreEvent.JobV3Fields => {
  field(cursor, key.timeoutMs);
  const timeoutMs = idOrNull(cursor);
  field(cursor, key.uniqueKey);
  const uniqueKey = nameOrNull(cursor);
  field(cursor, key.uniquePeriodMs);
  const uniquePeriodMs = idOrNull(cursor);
  return { uniqueKey, uniquePeriodMs, timeoutMs };
};

/**
 * A job of a snapshot part (a map at depth 3 of its payload): of a (7,1)
 * part, or with `v3` of a (7,3) part, whose jobs hold the three fields of
 * schema 3 before `worker`.
 */
function jobSnapshot(cursor: Cursor, v3: false): CoreEvent.JobSnapshot;
function jobSnapshot(cursor: Cursor, v3: true): CoreEvent.JobSnapshotV3;
function jobSnapshot(cursor: Cursor, v3: boolean): CoreEvent.JobSnapshot | CoreEvent.JobSnapshotV3 {
  map(cursor, v3 ? 16 : 13);
  field(cursor, key.args);
  const args = value(cursor, 3);
  field(cursor, key.attempt);
  // 0 until the job first starts (Payload.ts, `attemptCount`).
  const attempt = integer(cursor, 0, Limits.maxAttemptsMax);
  field(cursor, key.attemptedAt);
  const attemptedAt = timeOrNull(cursor);
  field(cursor, key.errors);
  const errorCount = list(cursor);
  const errors: CoreEvent.JobError[] = [];
  for (let index = 0; index < errorCount && cursor.ok; index++) errors.push(jobError(cursor));
  field(cursor, key.finishedAt);
  const finishedAt = timeOrNull(cursor);
  field(cursor, key.insertedAt);
  const insertedAt = time(cursor);
  field(cursor, key.jobId);
  const jobId = id(cursor);
  field(cursor, key.maxAttempts);
  const maxAttempts = integer(cursor, Limits.maxAttemptsMin, Limits.maxAttemptsMax);
  field(cursor, key.priority);
  const priority = integer(cursor, Limits.priorityMin, Limits.priorityMax);
  field(cursor, key.queue);
  const queue = name(cursor);
  field(cursor, key.scheduledAt);
  const scheduledAt = time(cursor);
  field(cursor, key.state);
  const state = jobState(cursor);
  const added = v3 ? v3Fields(cursor) : undefined;
  field(cursor, key.worker);
  const worker = name(cursor);
  // The declared field order, as the general decoder builds it. Two literals, not a spread of
  // one into the other: one allocation each (the terminal index's every entry is read through
  // the second).
  return added === undefined
    ? {
        jobId,
        queue,
        worker,
        args,
        priority,
        maxAttempts,
        attempt,
        state,
        insertedAt,
        scheduledAt,
        attemptedAt,
        finishedAt,
        errors,
      }
    : {
        jobId,
        queue,
        worker,
        args,
        priority,
        maxAttempts,
        attempt,
        state,
        insertedAt,
        scheduledAt,
        attemptedAt,
        finishedAt,
        errors,
        uniqueKey: added.uniqueKey,
        uniquePeriodMs: added.uniquePeriodMs,
        timeoutMs: added.timeoutMs,
      };
}

/** The `last_job_id` and `part` that follow a part's jobs. */
const partTail = (cursor: Cursor) => {
  field(cursor, key.lastJobId);
  const lastJobId = integer(cursor, 0, Number.MAX_SAFE_INTEGER);
  field(cursor, key.part);
  const part = integer(cursor, 0, Number.MAX_SAFE_INTEGER);
  return { lastJobId, part };
};

/** (7,1): a part of a canonical base, up to thousands of jobs. */
const snapshotPart = (cursor: Cursor): CoreEvent.SnapshotPart | undefined => {
  map(cursor, 3);
  field(cursor, key.jobs);
  const jobCount = list(cursor);
  const jobs: CoreEvent.JobSnapshot[] = [];
  for (let index = 0; index < jobCount && cursor.ok; index++) jobs.push(jobSnapshot(cursor, false));
  const { lastJobId, part } = partTail(cursor);
  return complete(cursor) ? { _tag: "SnapshotPart", part, lastJobId, jobs } : undefined;
};

/**
 * (7,3): a part whose jobs carry the fields of schema 3; also each entry
 * of the terminal inspection index (a one-job part), read for every
 * completed job a compaction keeps or a listing shows.
 */
const snapshotPartV3 = (cursor: Cursor): CoreEvent.SnapshotPartV3 | undefined => {
  map(cursor, 3);
  field(cursor, key.jobs);
  const jobCount = list(cursor);
  const jobs: CoreEvent.JobSnapshotV3[] = [];
  for (let index = 0; index < jobCount && cursor.ok; index++) jobs.push(jobSnapshot(cursor, true));
  const { lastJobId, part } = partTail(cursor);
  return complete(cursor) ? { _tag: "SnapshotPartV3", part, lastJobId, jobs } : undefined;
};

/** One of the domain events read directly, from the cursor to its end. */
const domainEvent = (type: number, schema: number, cursor: Cursor): DomainEvent | undefined => {
  if (schema === 1) {
    switch (type) {
      case 1:
        return jobInserted(cursor, false);
      case 2:
        return jobAvailable(cursor);
      case 3:
        return jobStarted(cursor);
      case 4:
        return jobFinished(cursor);
      case 5:
        return jobCancelled(cursor);
      case 6:
        return jobRetried(cursor);
      default:
        return undefined;
    }
  }
  if (schema === 3 && type === 1) return jobInserted(cursor, true);
  return schema === 2 && type === 10 ? resultRecorded(cursor) : undefined;
};

/**
 * One entry of a mutation's `events`, `{ payload, schema, type }`, whose
 * inner event is read directly: read with a cursor of its own over the
 * payload's bytes, which it must fill exactly (its depth counts from its own
 * root). `undefined` when anything is not as the fast path expects.
 */
const mutationEntry = (cursor: Cursor): DomainEvent | undefined => {
  map(cursor, 3);
  field(cursor, key.payload);
  const { bytes, at, end } = cursor;
  if (!cursor.ok || end - at < 5 || bytes[at] !== valueTags.bytes) return undefined;
  const length = readU32(bytes, at + 1);
  const payloadStart = at + 5;
  if (length > end - payloadStart) return undefined;
  const payloadEnd = payloadStart + length;
  cursor.at = payloadEnd;
  field(cursor, key.schema);
  const innerSchema = integer(cursor, 0, 255);
  field(cursor, key.type);
  const innerType = integer(cursor, 0, 255);
  if (!cursor.ok) return undefined;
  const payload = new Cursor(bytes, payloadStart, payloadEnd);
  const inner = domainEvent(innerType, innerSchema, payload);
  return inner !== undefined && complete(payload) ? inner : undefined;
};

/**
 * A mutation whose every inner event is read directly. Its envelope is
 * `{ events: [{ payload, schema, type }, ...] }` with at least one event.
 */
const mutation = (cursor: Cursor): CoreEvent.Mutation | undefined => {
  map(cursor, 1);
  field(cursor, key.events);
  const { bytes, at, end } = cursor;
  if (!cursor.ok || end - at < 5 || bytes[at] !== valueTags.list) return undefined;
  const count = readU32(bytes, at + 1);
  // An empty mutation is refused; every entry takes far more than a byte.
  if (count === 0 || count > end - at - 5) return undefined;
  cursor.at = at + 5;
  const events: DomainEvent[] = [];
  for (let index = 0; index < count; index++) {
    const inner = mutationEntry(cursor);
    if (inner === undefined) return undefined;
    events.push(inner);
  }
  return complete(cursor) ? CoreEvent.mutation(events) : undefined;
};

/**
 * The event of pair (type, schema) whose payload is `bytes[start..end)`,
 * when the payload is exactly the canonical encoding of a valid event of a
 * pair read directly; `undefined` for any other pair or any other bytes
 * (the general decoder then decides). Throws only on a bug. Every call
 * reads with a cursor of its own: nothing is kept between calls.
 */
export const decodeEventDirect = (
  type: number,
  schema: number,
  bytes: Uint8Array,
  start: number,
  end: number,
): CoreEvent.Event | undefined => {
  const cursor = new Cursor(bytes, start, end);
  if (type === 7) {
    if (schema === 1) return snapshotPart(cursor);
    if (schema === 3) return snapshotPartV3(cursor);
  }
  return type === 8 && schema === 1 ? mutation(cursor) : domainEvent(type, schema, cursor);
};
