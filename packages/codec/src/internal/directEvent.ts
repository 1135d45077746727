/**
 * Direct decoders for the most frequent events: the payload bytes of a job
 * event ((1,1) to (6,1), (10,2)), of a mutation made of them (8,1), or of a
 * snapshot part (7,1), the bulk of a compacted generation, read field by
 * field straight into the typed event, without building the intermediate
 * `Map` that `decodeValue` then `eventFromValue` go through.
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
import { decodeValueWithin, lastValueEnd, valueTags } from "./valueDecode.js";

type Value = CoreValue.Value;
type DomainEvent = CoreEvent.DomainEvent;

// The cursor of the payload being read. The codec is synchronous, so one
// cursor serves every call; `ok` turns false at the first field that is not
// what the fast path expects, and every reader after that does nothing.
let at = 0;
let ok = true;

const readU32 = (bytes: Uint8Array, offset: number): number =>
  (((bytes[offset] ?? 0) << 24) |
    ((bytes[offset + 1] ?? 0) << 16) |
    ((bytes[offset + 2] ?? 0) << 8) |
    (bytes[offset + 3] ?? 0)) >>>
  0;

/** The bytes of an ASCII wire key. */
const keyBytes = (key: string): Uint8Array => Uint8Array.from(key, (unit) => unit.charCodeAt(0));

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
  JobAvailable: ["at", "job_id"],
  JobStarted: ["at", "attempt", "job_id"],
  JobFinished: ["at", "error", "job_id", "outcome"],
  JobCancelled: ["at", "job_id", "reason"],
  JobRetried: ["at", "error", "job_id", "retry_at"],
  ResultRecorded: ["at", "job_id", "result"],
  SnapshotPart: ["jobs", "last_job_id", "part"],
  JobSnapshot: [
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
  type: keyBytes("type"),
  worker: keyBytes("worker"),
} as const;

/** A map header with exactly `count` entries. */
const map = (bytes: Uint8Array, end: number, count: number): void => {
  if (!ok) return;
  if (end - at < 5 || bytes[at] !== valueTags.map || readU32(bytes, at + 1) !== count) {
    ok = false;
    return;
  }
  at += 5;
};

/** The next key, which must be exactly `wire`. */
const field = (bytes: Uint8Array, end: number, wire: Uint8Array): void => {
  if (!ok) return;
  const length = wire.length;
  if (end - at < 4 + length || readU32(bytes, at) !== length) {
    ok = false;
    return;
  }
  const start = at + 4;
  for (let index = 0; index < length; index++) {
    if (bytes[start + index] !== wire[index]) {
      ok = false;
      return;
    }
  }
  at = start + length;
};

/** An integer in `min..max` (`min >= 0`). A negative or non-safe integer is left to the general path. */
const integer = (bytes: Uint8Array, end: number, min: number, max: number): number => {
  if (!ok) return 0;
  // 2^53-1 has 0x1fffff in its high half; a negative integer has its top bit set.
  const high = end - at < 9 || bytes[at] !== valueTags.integer ? -1 : readU32(bytes, at + 1);
  if (high < 0 || high > 0x1f_ffff) {
    ok = false;
    return 0;
  }
  const value = high * twoToThe32 + readU32(bytes, at + 5);
  if (value < min || value > max) {
    ok = false;
    return 0;
  }
  at += 9;
  return value;
};

const id = (bytes: Uint8Array, end: number): number =>
  integer(bytes, end, Limits.idMin, Limits.idMax);

const time = (bytes: Uint8Array, end: number): number =>
  integer(bytes, end, Limits.timeMin, Limits.timeMax);

/** A string of `bytesMin..bytesMax` bytes of well-formed UTF-8. */
const string = (bytes: Uint8Array, end: number, bytesMin: number, bytesMax: number): string => {
  if (!ok) return "";
  if (end - at < 5 || bytes[at] !== valueTags.string) {
    ok = false;
    return "";
  }
  const length = readU32(bytes, at + 1);
  const start = at + 5;
  if (length > end - start || length < bytesMin || length > bytesMax) {
    ok = false;
    return "";
  }
  // The same decoder (and cache) as the general path: the same string.
  const text = decodeUtf8(bytes, start, start + length);
  if (typeof text !== "string") {
    ok = false;
    return "";
  }
  at = start + length;
  return text;
};

const name = (bytes: Uint8Array, end: number): string =>
  string(bytes, end, Limits.nameBytesMin, Limits.nameBytesMax);

const text = (bytes: Uint8Array, end: number): string => string(bytes, end, 0, Limits.textBytesMax);

/** `text|null`. */
const textOrNull = (bytes: Uint8Array, end: number): string | null => {
  if (ok && at < end && bytes[at] === valueTags.null) {
    at += 1;
    return null;
  }
  return text(bytes, end);
};

/**
 * Any value (`args`, `result`) inside `enclosingDepth` containers of the
 * payload (1 for a field of the payload's own map).
 */
const value = (bytes: Uint8Array, end: number, enclosingDepth = 1): Value => {
  if (!ok) return null;
  if (end - at >= 5 && bytes[at] === valueTags.string) {
    // The common case, a JSON text, without the general decoder's stack.
    return string(bytes, end, 0, Number.MAX_SAFE_INTEGER);
  }
  const decoded = decodeValueWithin(bytes, at, end, enclosingDepth, false);
  if (decoded._tag === "Left") {
    ok = false;
    return null;
  }
  at = lastValueEnd();
  return decoded.right;
};

/** `time|null`. */
const timeOrNull = (bytes: Uint8Array, end: number): number | null => {
  if (ok && at < end && bytes[at] === valueTags.null) {
    at += 1;
    return null;
  }
  return time(bytes, end);
};

/**
 * A list header: its item count, or -1. Every item takes at least one byte,
 * so a count beyond the bytes left is left to the general path.
 */
const list = (bytes: Uint8Array, end: number): number => {
  if (!ok) return -1;
  if (end - at < 5 || bytes[at] !== valueTags.list) {
    ok = false;
    return -1;
  }
  const count = readU32(bytes, at + 1);
  if (count > end - at - 5) {
    ok = false;
    return -1;
  }
  at += 5;
  return count;
};

/** A job's state: one of the seven names. */
const jobState = (bytes: Uint8Array, end: number): CoreEvent.JobState => {
  const found = string(bytes, end, 0, Limits.textBytesMax);
  const state = CoreEvent.jobStates.find((member) => member === found);
  if (state === undefined) {
    ok = false;
    return "available";
  }
  return state;
};

/** True when every field was as expected and the payload ends after the last one. */
const complete = (end: number): boolean => ok && at === end;

const jobInserted = (bytes: Uint8Array, end: number): CoreEvent.JobInserted | undefined => {
  map(bytes, end, 8);
  field(bytes, end, key.args);
  const args = value(bytes, end);
  field(bytes, end, key.insertedAt);
  const insertedAt = time(bytes, end);
  field(bytes, end, key.jobId);
  const jobId = id(bytes, end);
  field(bytes, end, key.maxAttempts);
  const maxAttempts = integer(bytes, end, Limits.maxAttemptsMin, Limits.maxAttemptsMax);
  field(bytes, end, key.priority);
  const priority = integer(bytes, end, Limits.priorityMin, Limits.priorityMax);
  field(bytes, end, key.queue);
  const queue = name(bytes, end);
  field(bytes, end, key.scheduledAt);
  const scheduledAt = time(bytes, end);
  field(bytes, end, key.worker);
  const worker = name(bytes, end);
  if (!complete(end)) return undefined;
  // The declared field order, as the general decoder builds it.
  return {
    _tag: "JobInserted",
    jobId,
    queue,
    worker,
    args,
    priority,
    maxAttempts,
    scheduledAt,
    insertedAt,
  };
};

const jobAvailable = (bytes: Uint8Array, end: number): CoreEvent.JobAvailable | undefined => {
  map(bytes, end, 2);
  field(bytes, end, key.at);
  const at = time(bytes, end);
  field(bytes, end, key.jobId);
  const jobId = id(bytes, end);
  return complete(end) ? { _tag: "JobAvailable", jobId, at } : undefined;
};

const jobStarted = (bytes: Uint8Array, end: number): CoreEvent.JobStarted | undefined => {
  map(bytes, end, 3);
  field(bytes, end, key.at);
  const at = time(bytes, end);
  field(bytes, end, key.attempt);
  // A started attempt is at least 1 (Payload.ts, `attemptMade`).
  const attempt = integer(bytes, end, 1, Limits.maxAttemptsMax);
  field(bytes, end, key.jobId);
  const jobId = id(bytes, end);
  return complete(end) ? { _tag: "JobStarted", jobId, at, attempt } : undefined;
};

const jobFinished = (bytes: Uint8Array, end: number): CoreEvent.JobFinished | undefined => {
  map(bytes, end, 4);
  field(bytes, end, key.at);
  const at = time(bytes, end);
  field(bytes, end, key.error);
  const error = textOrNull(bytes, end);
  field(bytes, end, key.jobId);
  const jobId = id(bytes, end);
  field(bytes, end, key.outcome);
  const found = string(bytes, end, 0, Limits.textBytesMax);
  const outcome = found === "completed" || found === "discarded" ? found : undefined;
  if (!complete(end) || outcome === undefined) return undefined;
  return { _tag: "JobFinished", jobId, at, outcome, error };
};

const jobCancelled = (bytes: Uint8Array, end: number): CoreEvent.JobCancelled | undefined => {
  map(bytes, end, 3);
  field(bytes, end, key.at);
  const at = time(bytes, end);
  field(bytes, end, key.jobId);
  const jobId = id(bytes, end);
  field(bytes, end, key.reason);
  const reason = textOrNull(bytes, end);
  return complete(end) ? { _tag: "JobCancelled", jobId, at, reason } : undefined;
};

const jobRetried = (bytes: Uint8Array, end: number): CoreEvent.JobRetried | undefined => {
  map(bytes, end, 4);
  field(bytes, end, key.at);
  const at = time(bytes, end);
  field(bytes, end, key.error);
  const error = text(bytes, end);
  field(bytes, end, key.jobId);
  const jobId = id(bytes, end);
  field(bytes, end, key.retryAt);
  const retryAt = time(bytes, end);
  return complete(end) ? { _tag: "JobRetried", jobId, at, retryAt, error } : undefined;
};

const resultRecorded = (bytes: Uint8Array, end: number): CoreEvent.ResultRecorded | undefined => {
  map(bytes, end, 3);
  field(bytes, end, key.at);
  const at = time(bytes, end);
  field(bytes, end, key.jobId);
  const jobId = id(bytes, end);
  field(bytes, end, key.result);
  const result = value(bytes, end);
  return complete(end) ? { _tag: "ResultRecorded", jobId, result, at } : undefined;
};

/** One failed attempt of a snapshot job (depth 5 in its payload). */
const jobError = (bytes: Uint8Array, end: number): CoreEvent.JobError => {
  map(bytes, end, 3);
  field(bytes, end, key.at);
  const at = time(bytes, end);
  field(bytes, end, key.attempt);
  // A failed attempt is at least 1 (Payload.ts, `attemptMade`).
  const attempt = integer(bytes, end, 1, Limits.maxAttemptsMax);
  field(bytes, end, key.error);
  const error = text(bytes, end);
  return { attempt, at, error };
};

/** A job of a snapshot part (a map at depth 3 of its payload). */
const jobSnapshot = (bytes: Uint8Array, end: number): CoreEvent.JobSnapshot => {
  map(bytes, end, 13);
  field(bytes, end, key.args);
  const args = value(bytes, end, 3);
  field(bytes, end, key.attempt);
  // 0 until the job first starts (Payload.ts, `attemptCount`).
  const attempt = integer(bytes, end, 0, Limits.maxAttemptsMax);
  field(bytes, end, key.attemptedAt);
  const attemptedAt = timeOrNull(bytes, end);
  field(bytes, end, key.errors);
  const errorCount = list(bytes, end);
  const errors: CoreEvent.JobError[] = [];
  for (let index = 0; index < errorCount && ok; index++) errors.push(jobError(bytes, end));
  field(bytes, end, key.finishedAt);
  const finishedAt = timeOrNull(bytes, end);
  field(bytes, end, key.insertedAt);
  const insertedAt = time(bytes, end);
  field(bytes, end, key.jobId);
  const jobId = id(bytes, end);
  field(bytes, end, key.maxAttempts);
  const maxAttempts = integer(bytes, end, Limits.maxAttemptsMin, Limits.maxAttemptsMax);
  field(bytes, end, key.priority);
  const priority = integer(bytes, end, Limits.priorityMin, Limits.priorityMax);
  field(bytes, end, key.queue);
  const queue = name(bytes, end);
  field(bytes, end, key.scheduledAt);
  const scheduledAt = time(bytes, end);
  field(bytes, end, key.state);
  const state = jobState(bytes, end);
  field(bytes, end, key.worker);
  const worker = name(bytes, end);
  // The declared field order, as the general decoder builds it.
  return {
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
  };
};

/** (7,1): a part of a canonical base, up to thousands of jobs. */
const snapshotPart = (bytes: Uint8Array, end: number): CoreEvent.SnapshotPart | undefined => {
  map(bytes, end, 3);
  field(bytes, end, key.jobs);
  const jobCount = list(bytes, end);
  const jobs: CoreEvent.JobSnapshot[] = [];
  for (let index = 0; index < jobCount && ok; index++) jobs.push(jobSnapshot(bytes, end));
  field(bytes, end, key.lastJobId);
  const lastJobId = integer(bytes, end, 0, Number.MAX_SAFE_INTEGER);
  field(bytes, end, key.part);
  const part = integer(bytes, end, 0, Number.MAX_SAFE_INTEGER);
  return complete(end) ? { _tag: "SnapshotPart", part, lastJobId, jobs } : undefined;
};

/** One of the domain events read directly, from `bytes[at..end)`. */
const domainEvent = (
  type: number,
  schema: number,
  bytes: Uint8Array,
  end: number,
): DomainEvent | undefined => {
  if (schema === 1) {
    switch (type) {
      case 1:
        return jobInserted(bytes, end);
      case 2:
        return jobAvailable(bytes, end);
      case 3:
        return jobStarted(bytes, end);
      case 4:
        return jobFinished(bytes, end);
      case 5:
        return jobCancelled(bytes, end);
      case 6:
        return jobRetried(bytes, end);
      default:
        return undefined;
    }
  }
  return schema === 2 && type === 10 ? resultRecorded(bytes, end) : undefined;
};

/**
 * A mutation whose every inner event is read directly. Its envelope is
 * `{ events: [{ payload, schema, type }, ...] }` with at least one event;
 * each inner payload is its own value (depth counts from its own root), and
 * must fill its bytes exactly.
 */
const mutation = (bytes: Uint8Array, end: number): CoreEvent.Mutation | undefined => {
  map(bytes, end, 1);
  field(bytes, end, key.events);
  if (!ok || end - at < 5 || bytes[at] !== valueTags.list) return undefined;
  const count = readU32(bytes, at + 1);
  // An empty mutation is refused; every entry takes far more than a byte.
  if (count === 0 || count > end - at - 5) return undefined;
  at += 5;
  const events: DomainEvent[] = [];
  for (let index = 0; index < count; index++) {
    map(bytes, end, 3);
    field(bytes, end, key.payload);
    if (!ok || end - at < 5 || bytes[at] !== valueTags.bytes) return undefined;
    const length = readU32(bytes, at + 1);
    const payloadStart = at + 5;
    if (length > end - payloadStart) return undefined;
    const payloadEnd = payloadStart + length;
    at = payloadEnd;
    field(bytes, end, key.schema);
    const innerSchema = integer(bytes, end, 0, 255);
    field(bytes, end, key.type);
    const innerType = integer(bytes, end, 0, 255);
    if (!ok) return undefined;
    const after = at;
    at = payloadStart;
    const inner = domainEvent(innerType, innerSchema, bytes, payloadEnd);
    if (inner === undefined || !complete(payloadEnd)) return undefined;
    events.push(inner);
    at = after;
  }
  return complete(end) ? CoreEvent.mutation(events) : undefined;
};

/**
 * The event of pair (type, schema) whose payload is `bytes[start..end)`,
 * when the payload is exactly the canonical encoding of a valid event of a
 * pair read directly; `undefined` for any other pair or any other bytes
 * (the general decoder then decides). Throws only on a bug.
 */
export const decodeEventDirect = (
  type: number,
  schema: number,
  bytes: Uint8Array,
  start: number,
  end: number,
): CoreEvent.Event | undefined => {
  at = start;
  ok = true;
  if (schema === 1 && type === 7) return snapshotPart(bytes, end);
  return type === 8 && schema === 1 ? mutation(bytes, end) : domainEvent(type, schema, bytes, end);
};
