/**
 * A direct encoder for the most frequent events: a job event ((1,1) to
 * (6,1), (1,3), (10,2)), a mutation made only of them (8,1), or a snapshot
 * part ((7,1), (7,3)), written field by
 * field straight into payload bytes, without the `Map` that `eventToValue`
 * builds, the read-back of `eventFromValue` and the key sort of
 * `encodeValue`.
 *
 * It is a fast path, never a second judge: it returns the bytes only for an
 * event that passes every check the general path applies to its pair (the
 * kind and range of each field, as `Payload.ts` declares them; an `args` or
 * `result` the value writer takes; a payload within the record limit), and
 * then exactly the bytes the general path writes. For anything else (a field
 * out of range or of another kind, a bigint, an empty mutation, a payload
 * too large, an exception) it returns `undefined`, whereupon `encodeEvent`
 * runs the general path, which refuses with its own error. So every refusal
 * still comes from one place; a differential property test
 * (test/internal/directEncode.test.ts) holds the two paths against each
 * other.
 *
 * The wire keys come from `directKeys` (internal/directEvent.ts), which its
 * own test checks against the declarations; the checks repeat the kinds of
 * `Payload.ts`.
 */
import { Event as CoreEvent, Value as CoreValue, Limits } from "@tay/core";
import { payloadBytesMax } from "../Record.js";
import { twoToThe32 } from "./bytes.js";
import { keep } from "./payloadArena.js";
import { directKeys } from "./directEvent.js";
import type { EncodedEvent } from "./eventTypes.js";
import { utf8LengthOf, writeUtf8, writeUtf8Measured } from "./utf8.js";
import { valueTags } from "./valueDecode.js";
import {
  initialWriterBytes,
  keptWriterBytesMax,
  newWriter,
  reserve,
  type Writer,
  writeValue,
} from "./valueEncode.js";

type Value = CoreValue.Value;

/** A wire key as it follows a map header: its u32 byte length, then its ASCII bytes. */
const keyChunk = (key: string): Uint8Array => {
  const chunk = new Uint8Array(4 + key.length);
  chunk[3] = key.length;
  for (let index = 0; index < key.length; index++) chunk[4 + index] = key.charCodeAt(index);
  return chunk;
};

/** The key chunks of a pair, in canonical order (the order of `directKeys`). */
const chunksOf = (keys: ReadonlyArray<string>): ReadonlyArray<Uint8Array> => keys.map(keyChunk);

const keys = {
  JobInserted: chunksOf(directKeys.JobInserted),
  JobInsertedV3: chunksOf(directKeys.JobInsertedV3),
  JobAvailable: chunksOf(directKeys.JobAvailable),
  JobStarted: chunksOf(directKeys.JobStarted),
  JobFinished: chunksOf(directKeys.JobFinished),
  JobCancelled: chunksOf(directKeys.JobCancelled),
  JobRetried: chunksOf(directKeys.JobRetried),
  ResultRecorded: chunksOf(directKeys.ResultRecorded),
  SnapshotPart: chunksOf(directKeys.SnapshotPart),
  JobSnapshot: chunksOf(directKeys.JobSnapshot),
  JobSnapshotV3: chunksOf(directKeys.JobSnapshotV3),
  JobError: chunksOf(directKeys.JobError),
  MutationPayload: chunksOf(directKeys.MutationPayload),
  MutationPayloadEntry: chunksOf(directKeys.MutationPayloadEntry),
} as const;

// The output of the payload being written. The codec is synchronous, so one
// writer serves every call; `busy` turns away a call made from inside
// another (an `args` map whose iterator encodes an event), which then takes
// the general path with its own buffer.
let writer: Writer = newWriter(initialWriterBytes);
let busy = false;

/** The key chunk at `index` of a pair's list (always present: the lists are fixed). */
const key = (chunks: ReadonlyArray<Uint8Array>, index: number): true => {
  const chunk = chunks[index] ?? keyChunk("");
  const length = chunk.length;
  reserve(writer, length);
  // Keys are a few bytes: a loop beats `set`'s native call.
  const { bytes, position } = writer;
  for (let at = 0; at < length; at++) bytes[position + at] = chunk[at] ?? 0;
  writer.position = position + length;
  return true;
};

/** A container header: its tag and a u32 count. */
const header = (tag: number, count: number): true => {
  reserve(writer, 5);
  const { bytes, position } = writer;
  bytes[position] = tag;
  bytes[position + 1] = count >>> 24;
  bytes[position + 2] = (count >>> 16) & 0xff;
  bytes[position + 3] = (count >>> 8) & 0xff;
  bytes[position + 4] = count & 0xff;
  writer.position = position + 5;
  return true;
};

/** Writes a u32 at `offset` (already reserved). */
const writeU32At = (offset: number, count: number): void => {
  const bytes = writer.bytes;
  bytes[offset] = count >>> 24;
  bytes[offset + 1] = (count >>> 16) & 0xff;
  bytes[offset + 2] = (count >>> 8) & 0xff;
  bytes[offset + 3] = count & 0xff;
};

/**
 * An integer in `min..max` (`min >= 0`, `max` at most 2^53-1), as the
 * general path's `payloadInteger` accepts it: a `number` that is an integer
 * in range (-0 included, written as 0). A bigint or anything else is left
 * to the general path.
 */
const integer = (input: unknown, min: number, max: number): boolean => {
  if (typeof input !== "number" || !Number.isInteger(input) || input < min || input > max) {
    return false;
  }
  reserve(writer, 9);
  const { bytes, position } = writer;
  const high = Math.floor(input / twoToThe32);
  const low = input - high * twoToThe32;
  bytes[position] = valueTags.integer;
  bytes[position + 1] = high >>> 24;
  bytes[position + 2] = (high >>> 16) & 0xff;
  bytes[position + 3] = (high >>> 8) & 0xff;
  bytes[position + 4] = high & 0xff;
  bytes[position + 5] = low >>> 24;
  bytes[position + 6] = (low >>> 16) & 0xff;
  bytes[position + 7] = (low >>> 8) & 0xff;
  bytes[position + 8] = low & 0xff;
  writer.position = position + 9;
  return true;
};

const id = (input: unknown): boolean => integer(input, Limits.idMin, Limits.idMax);

const time = (input: unknown): boolean => integer(input, Limits.timeMin, Limits.timeMax);

/**
 * A string of `bytesMin..bytesMax` UTF-8 bytes with no lone surrogate, as
 * `payloadString` accepts it. ASCII (the usual queue, worker and error) is
 * copied in the same pass that checks it; anything else is measured by
 * `utf8LengthOf` and written by `writeUtf8`, as the value writer does.
 */
const string = (input: unknown, bytesMin: number, bytesMax: number): boolean => {
  if (typeof input !== "string") return false;
  const units = input.length;
  // UTF-8 never takes fewer bytes than UTF-16 units.
  if (units > bytesMax) return false;
  if (units > shortStringUnitsMax) return longString(input, bytesMin, bytesMax);
  reserve(writer, 5 + units);
  const start = writer.position + 5;
  let bytes = writer.bytes;
  let index = 0;
  for (; index < units; index++) {
    const unit = input.charCodeAt(index);
    if (unit >= 0x80) break;
    bytes[start + index] = unit;
  }
  let length = units;
  if (index < units) {
    length = utf8LengthOf(input);
    // Negative: a lone surrogate, which the general path refuses.
    if (length < 0 || length > bytesMax) return false;
    reserve(writer, 5 + length);
    bytes = writer.bytes;
    writeUtf8(input, length, bytes, start);
  }
  if (length < bytesMin) return false;
  bytes[start - 5] = valueTags.string;
  writeU32At(start - 4, length);
  writer.position = start + length;
  return true;
};

/** Up to this many units a string is copied by the loop above; longer, natively. */
const shortStringUnitsMax = 48;

/** `string` for a long input: written by the platform's encoder, measured by what it wrote. */
const longString = (input: string, bytesMin: number, bytesMax: number): boolean => {
  reserve(writer, 5 + 3 * input.length);
  const start = writer.position + 5;
  const length = writeUtf8Measured(input, writer.bytes, start);
  if (length < 0 || length < bytesMin || length > bytesMax) return false;
  writer.bytes[start - 5] = valueTags.string;
  writeU32At(start - 4, length);
  writer.position = start + length;
  return true;
};

const name = (input: unknown): boolean => string(input, Limits.nameBytesMin, Limits.nameBytesMax);

const text = (input: unknown): boolean => string(input, 0, Limits.textBytesMax);

/** `null`, for a nullable field. */
const nothing = (input: unknown): boolean => {
  if (input !== null) return false;
  reserve(writer, 1);
  writer.bytes[writer.position++] = valueTags.null;
  return true;
};

/** `text|null`. */
const textOrNull = (input: unknown): boolean => nothing(input) || text(input);

/** One of the members of an enumeration. */
const member = (input: unknown, members: ReadonlyArray<string>): boolean =>
  typeof input === "string" && members.includes(input) && text(input);

const outcomes: ReadonlyArray<string> = ["completed", "discarded"];

/** `value` (`args`, `result`): a field of the payload's map, so at depth 2. */
const value = (input: Value): boolean => writeValue(writer, input, 2) === undefined;

/** `args` of a snapshot part's job: payload map, `jobs` list, job map, so at depth 4. */
const jobValue = (input: Value): boolean => writeValue(writer, input, 4) === undefined;

// Each writer below reads every field of its event once, in canonical key
// order, and stops at the first one the general path would refuse.

// The fields (1,1) and (1,3) share, up to `scheduled_at`: the first seven
// keys of both lists, in the same canonical order.
const insertHead = (
  event: CoreEvent.JobInserted | CoreEvent.JobInsertedV3,
  chunks: ReadonlyArray<Uint8Array>,
): boolean =>
  key(chunks, 0) &&
  value(event.args) &&
  key(chunks, 1) &&
  time(event.insertedAt) &&
  key(chunks, 2) &&
  id(event.jobId) &&
  key(chunks, 3) &&
  integer(event.maxAttempts, Limits.maxAttemptsMin, Limits.maxAttemptsMax) &&
  key(chunks, 4) &&
  integer(event.priority, Limits.priorityMin, Limits.priorityMax) &&
  key(chunks, 5) &&
  name(event.queue) &&
  key(chunks, 6) &&
  time(event.scheduledAt);

const jobInserted = (event: CoreEvent.JobInserted): boolean => {
  const chunks = keys.JobInserted;
  return (
    header(valueTags.map, 8) && insertHead(event, chunks) && key(chunks, 7) && name(event.worker)
  );
};

/** `id|null`. */
const idOrNull = (input: unknown): boolean => nothing(input) || id(input);

/** `name|null`. */
const nameOrNull = (input: unknown): boolean => nothing(input) || name(input);

/** Two key chunks with a `null` between them: a nullable field's key, its null, the next key. */
const aroundNull = (before: Uint8Array | undefined, after: Uint8Array | undefined) => {
  const first = before ?? keyChunk("");
  const second = after ?? keyChunk("");
  const run = new Uint8Array(first.length + 1 + second.length);
  run.set(first, 0);
  run[first.length] = valueTags.null;
  run.set(second, first.length + 1);
  return [run];
};

// A keyed insert's usual `timeout_ms` and `unique_period_ms` are null: each
// is written with the keys on both sides as one constant run, two copies
// where there were three keys and a null (the unique insert's encoding was
// 0.3 µs over a plain one's, 2026-12-04).
const nullTimeout = aroundNull(keys.JobInsertedV3[7], keys.JobInsertedV3[8]);
const nullPeriod = aroundNull(keys.JobInsertedV3[9], keys.JobInsertedV3[10]);

// (1,3): the fields of (1,1), then the three of schema 3 before `worker`
// (`timeout_ms` < `unique_key` < `unique_period_ms` < `worker`).
const jobInsertedV3 = (event: CoreEvent.JobInsertedV3): boolean => {
  const chunks = keys.JobInsertedV3;
  return (
    header(valueTags.map, 11) &&
    insertHead(event, chunks) &&
    (event.timeoutMs === null
      ? key(nullTimeout, 0)
      : key(chunks, 7) && id(event.timeoutMs) && key(chunks, 8)) &&
    nameOrNull(event.uniqueKey) &&
    (event.uniquePeriodMs === null
      ? key(nullPeriod, 0)
      : key(chunks, 9) && id(event.uniquePeriodMs) && key(chunks, 10)) &&
    name(event.worker)
  );
};

const jobAvailable = (event: CoreEvent.JobAvailable): boolean => {
  const chunks = keys.JobAvailable;
  return (
    header(valueTags.map, 2) &&
    key(chunks, 0) &&
    time(event.at) &&
    key(chunks, 1) &&
    id(event.jobId)
  );
};

const jobStarted = (event: CoreEvent.JobStarted): boolean => {
  const chunks = keys.JobStarted;
  return (
    header(valueTags.map, 3) &&
    key(chunks, 0) &&
    time(event.at) &&
    key(chunks, 1) &&
    // A started attempt is at least 1 (Payload.ts, `attemptMade`).
    integer(event.attempt, 1, Limits.maxAttemptsMax) &&
    key(chunks, 2) &&
    id(event.jobId)
  );
};

const jobFinished = (event: CoreEvent.JobFinished): boolean => {
  const chunks = keys.JobFinished;
  return (
    header(valueTags.map, 4) &&
    key(chunks, 0) &&
    time(event.at) &&
    key(chunks, 1) &&
    textOrNull(event.error) &&
    key(chunks, 2) &&
    id(event.jobId) &&
    key(chunks, 3) &&
    member(event.outcome, outcomes)
  );
};

const jobCancelled = (event: CoreEvent.JobCancelled): boolean => {
  const chunks = keys.JobCancelled;
  return (
    header(valueTags.map, 3) &&
    key(chunks, 0) &&
    time(event.at) &&
    key(chunks, 1) &&
    id(event.jobId) &&
    key(chunks, 2) &&
    textOrNull(event.reason)
  );
};

const jobRetried = (event: CoreEvent.JobRetried): boolean => {
  const chunks = keys.JobRetried;
  return (
    header(valueTags.map, 4) &&
    key(chunks, 0) &&
    time(event.at) &&
    key(chunks, 1) &&
    text(event.error) &&
    key(chunks, 2) &&
    id(event.jobId) &&
    key(chunks, 3) &&
    time(event.retryAt)
  );
};

const resultRecorded = (event: CoreEvent.ResultRecorded): boolean => {
  const chunks = keys.ResultRecorded;
  return (
    header(valueTags.map, 3) &&
    key(chunks, 0) &&
    time(event.at) &&
    key(chunks, 1) &&
    id(event.jobId) &&
    key(chunks, 2) &&
    value(event.result)
  );
};

/** One failed attempt of a snapshot's job: `{ at, attempt, error }`. */
const jobError = (input: CoreEvent.JobError): boolean => {
  if (typeof input !== "object" || input === null) return false;
  const chunks = keys.JobError;
  return (
    header(valueTags.map, 3) &&
    key(chunks, 0) &&
    time(input.at) &&
    key(chunks, 1) &&
    // A failed attempt is at least 1 (Payload.ts, `attemptMade`).
    integer(input.attempt, 1, Limits.maxAttemptsMax) &&
    key(chunks, 2) &&
    text(input.error)
  );
};

/** A list: an array whose every item `write` takes (a hole is `undefined`, refused). */
const listOf = <Item>(input: ReadonlyArray<Item>, write: (item: Item) => boolean): boolean => {
  const isList: boolean = Array.isArray(input);
  if (!isList) return false;
  header(valueTags.list, input.length);
  for (let index = 0; index < input.length; index++) {
    const item = input[index];
    if (item === undefined || !write(item)) return false;
  }
  return true;
};

const nullableTime = (input: unknown): boolean => nothing(input) || time(input);

/** The first five keys of a snapshot job, (7,1) or (7,3): `args` to `finished_at`. */
const jobSnapshotHead = (
  job: CoreEvent.JobSnapshot,
  chunks: ReadonlyArray<Uint8Array>,
  count: number,
): boolean =>
  header(valueTags.map, count) &&
  key(chunks, 0) &&
  jobValue(job.args) &&
  key(chunks, 1) &&
  integer(job.attempt, 0, Limits.maxAttemptsMax) &&
  key(chunks, 2) &&
  nullableTime(job.attemptedAt) &&
  key(chunks, 3) &&
  listOf(job.errors, jobError) &&
  key(chunks, 4) &&
  nullableTime(job.finishedAt);

/** A snapshot job's keys from `inserted_at` to `state` (chunks 5 to 11 of both kinds). */
const jobSnapshotMiddle = (
  job: CoreEvent.JobSnapshot,
  chunks: ReadonlyArray<Uint8Array>,
): boolean =>
  key(chunks, 5) &&
  time(job.insertedAt) &&
  key(chunks, 6) &&
  id(job.jobId) &&
  key(chunks, 7) &&
  integer(job.maxAttempts, Limits.maxAttemptsMin, Limits.maxAttemptsMax) &&
  key(chunks, 8) &&
  integer(job.priority, Limits.priorityMin, Limits.priorityMax) &&
  key(chunks, 9) &&
  name(job.queue) &&
  key(chunks, 10) &&
  time(job.scheduledAt) &&
  key(chunks, 11) &&
  member(job.state, CoreEvent.jobStates);

/** A (7,1) job, in the canonical order of its thirteen keys. */
const jobSnapshot = (job: CoreEvent.JobSnapshot): boolean => {
  if (typeof job !== "object" || job === null) return false;
  const chunks = keys.JobSnapshot;
  return (
    jobSnapshotHead(job, chunks, 13) &&
    jobSnapshotMiddle(job, chunks) &&
    key(chunks, 12) &&
    name(job.worker)
  );
};

/** A (7,3) job, in the canonical order of its sixteen keys. */
const jobSnapshotV3 = (job: CoreEvent.JobSnapshotV3): boolean => {
  if (typeof job !== "object" || job === null) return false;
  const chunks = keys.JobSnapshotV3;
  return (
    jobSnapshotHead(job, chunks, 16) &&
    jobSnapshotMiddle(job, chunks) &&
    key(chunks, 12) &&
    idOrNull(job.timeoutMs) &&
    key(chunks, 13) &&
    nameOrNull(job.uniqueKey) &&
    key(chunks, 14) &&
    idOrNull(job.uniquePeriodMs) &&
    key(chunks, 15) &&
    name(job.worker)
  );
};

/**
 * A snapshot part, `{ jobs, last_job_id, part }`: (7,3) because the
 * terminal index writes one for every job that leaves memory, (7,1)
 * because a compaction's base is made of them (2026-12-07: its jobs went
 * through the general encoder, 1.2 s of the 1,000,000-job compaction).
 */
const snapshotPartOf = <Job>(
  event: { readonly jobs: ReadonlyArray<Job>; readonly lastJobId: number; readonly part: number },
  job: (job: Job) => boolean,
): boolean => {
  const chunks = keys.SnapshotPart;
  return (
    header(valueTags.map, 3) &&
    key(chunks, 0) &&
    listOf(event.jobs, job) &&
    key(chunks, 1) &&
    integer(event.lastJobId, 0, CoreValue.safeIntegerMax) &&
    key(chunks, 2) &&
    integer(event.part, 0, CoreValue.safeIntegerMax)
  );
};

/** The pair of a tag written here, or undefined for any other tag. */
const directPairOf = (tag: unknown): CoreEvent.Pair | undefined => {
  switch (tag) {
    case "JobInserted":
    case "JobInsertedV3":
    case "JobAvailable":
    case "JobStarted":
    case "JobFinished":
    case "JobCancelled":
    case "JobRetried":
    case "ResultRecorded":
      return CoreEvent.pairs[tag];
    default:
      return undefined;
  }
};

/** Writes the payload of a job event at the writer's position; false for any other event. */
const domainEvent = (event: CoreEvent.DomainEvent): boolean => {
  switch (event._tag) {
    case "JobInserted":
      return jobInserted(event);
    case "JobInsertedV3":
      return jobInsertedV3(event);
    case "JobAvailable":
      return jobAvailable(event);
    case "JobStarted":
      return jobStarted(event);
    case "JobFinished":
      return jobFinished(event);
    case "JobCancelled":
      return jobCancelled(event);
    case "JobRetried":
      return jobRetried(event);
    case "ResultRecorded":
      return resultRecorded(event);
    default:
      return false;
  }
};

/** A payload within the record limit, as the general path checks it. */
const fits = (start: number): boolean => writer.position - start <= payloadBytesMax;

/**
 * (8,1): `{ events: [{ payload, schema, type }, ...] }`, each inner payload
 * written in place and its length filled in after it.
 */
const mutation = (event: CoreEvent.Mutation): boolean => {
  const events: ReadonlyArray<CoreEvent.DomainEvent> = event.events;
  // An empty mutation, or one from untyped code that is no array or has
  // holes, is the general path's.
  const isList: boolean = Array.isArray(events);
  if (!isList || events.length === 0) return false;
  const envelope = keys.MutationPayload;
  const entry = keys.MutationPayloadEntry;
  header(valueTags.map, 1);
  key(envelope, 0);
  header(valueTags.list, events.length);
  for (let index = 0; index < events.length; index++) {
    const inner: CoreEvent.DomainEvent | undefined = events[index];
    if (typeof inner !== "object" || inner === null) return false;
    const pair = directPairOf(inner._tag);
    if (pair === undefined) return false;
    header(valueTags.map, 3);
    key(entry, 0);
    reserve(writer, 5);
    const lengthAt = writer.position + 1;
    writer.bytes[writer.position] = valueTags.bytes;
    writer.position += 5;
    const payloadStart = writer.position;
    // No limit check here: an inner payload beyond it makes the whole one so.
    if (!domainEvent(inner)) return false;
    writeU32At(lengthAt, writer.position - payloadStart);
    key(entry, 1);
    integer(pair.schema, 0, 255);
    key(entry, 2);
    integer(pair.type, 0, 255);
  }
  return true;
};

/**
 * The pair and canonical payload bytes of `event` when it is a job event
 * ((1,1) to (6,1), (10,2)) or a mutation of them that the general path of
 * `encodeEvent` would accept, byte for byte what that path writes;
 * `undefined` for any other event, and for any event that path would
 * refuse (it then gives the refusal). Never throws: an exception is an
 * `undefined`, and the general path reports it.
 */
export const encodeEventDirect = (event: CoreEvent.Event): EncodedEvent | undefined =>
  withDirectPayload(event, keptPayload);

const keptPayload = (pair: CoreEvent.Pair, bytes: Uint8Array, length: number): EncodedEvent => ({
  type: pair.type,
  schema: pair.schema,
  payload: keep(bytes, length),
});

/**
 * `use` of the pair and payload `encodeEventDirect` would give, the payload
 * as `bytes[0, length)` of the encoder's own buffer, valid only during the
 * call: what frames the payload straight into a caller's buffer, without
 * `keep`'s copy (`Record.appendRecord`). `undefined` where
 * `encodeEventDirect` gives it, and when `use` throws.
 */
export const withDirectPayload = <R>(
  event: CoreEvent.Event,
  use: (pair: CoreEvent.Pair, bytes: Uint8Array, length: number) => R,
): R | undefined => {
  if (busy || typeof event !== "object" || event === null) return undefined;
  busy = true;
  try {
    writer.position = 0;
    let pair: CoreEvent.Pair | undefined;
    let written = false;
    if (event._tag === "Mutation") {
      pair = CoreEvent.pairs.Mutation;
      written = mutation(event);
    } else if (event._tag === "SnapshotPartV3") {
      pair = CoreEvent.pairs.SnapshotPartV3;
      written = snapshotPartOf(event, jobSnapshotV3);
    } else if (event._tag === "SnapshotPart") {
      pair = CoreEvent.pairs.SnapshotPart;
      written = snapshotPartOf(event, jobSnapshot);
    } else {
      pair = directPairOf(event._tag);
      written = pair !== undefined && domainEvent(event);
    }
    if (!written || pair === undefined || !fits(0)) return undefined;
    return use(pair, writer.bytes, writer.position);
  } catch {
    return undefined;
  } finally {
    // A buffer grown for one huge payload is not held on to.
    if (writer.bytes.length > keptWriterBytesMax) writer = newWriter(initialWriterBytes);
    busy = false;
  }
};
