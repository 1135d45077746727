/**
 * The request bodies of the protocol, checked (docs/protocol.md): each
 * decoder names the field path of the first wrong or missing field. Values
 * (args, results) arrive in the wire's JSON form and become core's values;
 * their contents (sizes, names) are the deciders' to check, which refuse
 * with `InvalidField` and append nothing.
 */
import { Shape, Wire } from "@tay/client";
import type { Backoff, Commands, Job, Value } from "@tay/core";
import { Limits, Zone } from "@tay/core";
import * as Bulk from "../../engine/Bulk.js";
import { leaseMsMax, leaseMsMin } from "./leases.js";

/** A lease asked for: from `leaseMsMin` to `leaseMsMax`. */
const leaseMs = Shape.integer(leaseMsMin, leaseMsMax);

/** Jobs one request may insert. */
export const jobsPerRequestMax = 10_000;

const priority = Shape.integer(Limits.priorityMin, Limits.priorityMax);
const maxAttempts = Shape.integer(Limits.maxAttemptsMin, Limits.maxAttemptsMax);
const time = Shape.integer();
const jobId = Shape.integer(Limits.idMin, Limits.idMax);
const attempt = Shape.integer(1);

const newJobShape = Shape.struct({
  queue: Shape.string,
  worker: Shape.string,
  args: Shape.optional(Wire.value),
  priority: Shape.optional(priority),
  maxAttempts: Shape.optional(maxAttempts),
  scheduledAt: Shape.optional(time),
  uniqueKey: Shape.optional(Shape.string),
  uniquePeriodMs: Shape.optional(Shape.integer(1)),
  timeoutMs: Shape.optional(Shape.integer(1)),
});

/** A job to insert; absent args are null; the v3 fields (EVENTS-V3.md) only when given. */
export const newJob: Shape.Decoder<Commands.NewJob> = (input, path) => {
  const fields = newJobShape(input, path);
  return {
    queue: fields.queue,
    worker: fields.worker,
    args: fields.args ?? null,
    ...(fields.priority === undefined ? {} : { priority: fields.priority }),
    ...(fields.maxAttempts === undefined ? {} : { maxAttempts: fields.maxAttempts }),
    ...(fields.scheduledAt === undefined ? {} : { scheduledAt: fields.scheduledAt }),
    ...(fields.uniqueKey === undefined ? {} : { uniqueKey: fields.uniqueKey }),
    ...(fields.uniquePeriodMs === undefined ? {} : { uniquePeriodMs: fields.uniquePeriodMs }),
    ...(fields.timeoutMs === undefined ? {} : { timeoutMs: fields.timeoutMs }),
  };
};

export const insert = Shape.struct({ job: newJob });
export const insertMany = Shape.struct({ jobs: Shape.array(newJob, jobsPerRequestMax) });

export const claim = Shape.struct({
  queue: Shape.string,
  limit: Shape.optional(Shape.integer(1, Limits.decisionRecordsMax)),
  leaseMs: Shape.optional(leaseMs),
});

const lane = Shape.struct({
  queue: Shape.string,
  limit: Shape.integer(1, Limits.decisionRecordsMax),
});

/** A waiting claim's id, as its caller names it to give it up: 1 to 64 visible ASCII characters. */
const claimId: Shape.Decoder<string> = (input, path) =>
  typeof input === "string" && /^[\x21-\x7e]{1,64}$/.test(input)
    ? input
    : Shape.mismatch(path, "1 to 64 visible ASCII characters", input);

export const nextJobs = Shape.struct({
  lanes: Shape.array(lane, 1_000),
  limit: Shape.optional(Shape.integer(1, Limits.decisionRecordsMax)),
  /** How long to wait for a job before answering with none (default 25 s). */
  waitMs: Shape.optional(Shape.integer(0, 300_000)),
  leaseMs: Shape.optional(leaseMs),
  /** The claim's id, by which `/v1/give-up` gives it up (2026-12-06). */
  claim: Shape.optional(claimId),
});

export const giveUp = Shape.struct({ claim: claimId });

export const complete = Shape.struct({
  jobId,
  result: Shape.optional(Wire.value),
  attempt: Shape.optional(attempt),
});

const backoff: Shape.Decoder<Backoff.Policy> = Shape.struct({
  baseMs: Shape.integer(),
  factor: Shape.number,
  capMs: Shape.integer(),
});

export const fail = Shape.struct({
  jobId,
  error: Shape.string,
  attempt: Shape.optional(attempt),
  discard: Shape.optional(Shape.boolean),
  backoff: Shape.optional(backoff),
});

/** One end of an attempt in a batch: a complete or a fail, as their own routes take them. */
export type End =
  | { readonly complete: Shape.Decoded<typeof complete> }
  | { readonly fail: Shape.Decoded<typeof fail> };

/** `{ complete: {...} }` or `{ fail: {...} }`, exactly one of them. */
export const end: Shape.Decoder<End> = (input, path) => {
  const members = Shape.record(input, path);
  const hasComplete = Object.hasOwn(members, "complete");
  if (hasComplete === Object.hasOwn(members, "fail")) {
    return Shape.mismatch(path, 'an object with exactly one of "complete" and "fail"', input);
  }
  return hasComplete
    ? { complete: complete(members.complete, `${path}.complete`) }
    : { fail: fail(members.fail, `${path}.fail`) };
};

export const endBatch = Shape.struct({ ends: Shape.array(end, jobsPerRequestMax) });

export const cancel = Shape.struct({ jobId, reason: Shape.optional(Shape.string) });

const definitionShape = Shape.struct({
  queue: Shape.string,
  worker: Shape.string,
  args: Shape.optional(Wire.value),
  priority: Shape.optional(priority),
  maxAttempts: Shape.optional(maxAttempts),
  everyMs: Shape.optional(Shape.integer(1)),
  cron: Shape.optional(Shape.string),
  overlap: Shape.optional(Shape.literal("allow", "skip")),
  timezone: Shape.optional(Shape.string),
  catchUp: Shape.optional(Wire.catchUp),
});

/**
 * A zone the server's runtime knows (core's `Zone`, what the decider asks
 * too): refused here, as a request, so the refusal names the field.
 */
const timezone: Shape.Decoder<string> = (input, path) => {
  const zone = Shape.string(input, path);
  return Zone.isKnownZone(zone) ? zone : Shape.mismatch(path, 'an IANA time zone or "UTC"', input);
};

/** `catchUpWindowMs`: absent (the engine's default), null (no window) or 1.. ms. */
const catchUpWindowMs = (members: Readonly<Record<string, unknown>>, path: string) =>
  Object.hasOwn(members, "catchUpWindowMs")
    ? Shape.nullable(Shape.integer(1))(members.catchUpWindowMs, `${path}.catchUpWindowMs`)
    : undefined;

/**
 * A schedule's definition; defaults as the CLI's (priority 0, 20 attempts,
 * overlap allow). The v3 fields (`timezone`, `catchUp`, `catchUpWindowMs`)
 * are passed on only when given, as the engine's `registerSchedule` takes
 * them: any of them makes the registration a (13,3) (EVENTS-V3.md).
 */
export const definition: Shape.Decoder<Commands.ScheduleDefinitionInput & { args: Value.Value }> = (
  input,
  path,
) => {
  const fields = definitionShape(input, path);
  const members = Shape.record(input, path);
  const zone =
    fields.timezone === undefined ? undefined : timezone(fields.timezone, `${path}.timezone`);
  const window = catchUpWindowMs(members, path);
  return {
    queue: fields.queue,
    worker: fields.worker,
    args: fields.args ?? null,
    priority: fields.priority ?? 0,
    maxAttempts: fields.maxAttempts ?? 20,
    everyMs: fields.everyMs ?? null,
    cron: fields.cron ?? null,
    overlap: fields.overlap ?? "allow",
    ...(zone === undefined ? {} : { timezone: zone }),
    ...(fields.catchUp === undefined ? {} : { catchUp: fields.catchUp }),
    ...(window === undefined ? {} : { catchUpWindowMs: window }),
  };
};

const revision = Shape.optional(Shape.integer());

export const registerSchedule = Shape.struct({
  scheduleId: Shape.string,
  definition,
  expectedRevision: revision,
});

export const cancelSchedule = Shape.struct({
  scheduleId: Shape.string,
  expectedRevision: revision,
});

export const redrive = Shape.struct({
  jobId,
  maxAttempts: Shape.optional(maxAttempts),
  reason: Shape.optional(Shape.string),
});

export const queue = Shape.struct({ queue: Shape.string });

/** `redriveAll`: which jobs (states discarded or cancelled), and how each runs again. */
export const redriveAll = Shape.struct({
  queue: Shape.optional(Shape.string),
  states: Shape.optional(Shape.array(Shape.literal(...Bulk.endedStates))),
  limit: Shape.optional(Shape.integer(0)),
  maxAttempts: Shape.optional(maxAttempts),
  reason: Shape.optional(Shape.string),
});

/** `cancelAll`: which jobs (states not terminal), and why. */
export const cancelAll = Shape.struct({
  queue: Shape.optional(Shape.string),
  states: Shape.optional(Shape.array(Shape.literal(...Bulk.activeStates))),
  limit: Shape.optional(Shape.integer(0)),
  reason: Shape.optional(Shape.string),
});

/** A member that may be absent (kept), null (removed) or a value (set). */
const settable =
  <A>(decoder: Shape.Decoder<A>): Shape.Decoder<A | null | undefined> =>
  (input, path) =>
    input === undefined ? undefined : input === null ? null : decoder(input, path);

/** `setQueueLimits`: a limit left out is kept, null removes it. */
export const queueLimits = (input: unknown, path: string) => {
  const members = Shape.record(input, path);
  const field = <A>(name: string, decoder: Shape.Decoder<A>) =>
    settable(decoder)(Object.hasOwn(members, name) ? members[name] : undefined, `${path}.${name}`);
  return {
    queue: Shape.field(members, "queue", Shape.string, path),
    concurrency: field("concurrency", Shape.integer(1)),
    rateLimit: field("rateLimit", Wire.rateLimit),
  };
};

export const rescue = Shape.struct({ startedBefore: time, error: Shape.string });

export const compact = Shape.struct({ retentionMs: Shape.integer() });

export const heartbeat = Shape.struct({
  jobId,
  attempt,
  leaseMs: Shape.optional(leaseMs),
});

export const progress = Shape.struct({ jobId, attempt, progress: Wire.value });

const filterShape = Shape.struct({
  queue: Shape.optional(Shape.string),
  state: Shape.optional(Wire.jobState),
  limit: Shape.optional(Shape.integer()),
  after: Shape.optional(Shape.integer()),
  before: Shape.optional(Shape.integer()),
  order: Shape.optional(Shape.literal("asc", "desc")),
});

/** The query of `GET /v1/jobs` (`?queue=&state=&limit=&after=&before=&order=asc|desc`). */
export const jobFilter: Shape.Decoder<{
  readonly queue: string | undefined;
  readonly state: Job.Job["state"] | undefined;
  readonly limit: number | undefined;
  readonly after: number | undefined;
  readonly before: number | undefined;
  readonly order: "asc" | "desc" | undefined;
}> = (input, path) => {
  if (!(input instanceof URLSearchParams)) return Shape.mismatch(path, "a query", input);
  const integer = (name: string) => {
    const text = input.get(name);
    return text === null ? undefined : integerText(text);
  };
  return filterShape(
    {
      queue: input.get("queue") ?? undefined,
      state: input.get("state") ?? undefined,
      limit: integer("limit"),
      after: integer("after"),
      before: integer("before"),
      order: input.get("order") ?? undefined,
    },
    path,
  );
};

/** A decimal text as a number when it is one (else the text, for the error to name). */
export const integerText = (text: string): number | string =>
  /^(0|[1-9][0-9]{0,15})$/.test(text) ? Number(text) : text;
