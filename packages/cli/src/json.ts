/**
 * The CLI's JSON shapes: payload values, jobs, schedules and records, with
 * the wire's snake_case field names (EVENTS.md), so `--json` output reads
 * like the format it came from.
 *
 * Values: bytes become base64 strings, integers beyond 2^53-1 (bigint)
 * decimal strings, maps JSON objects. Map keys are data: objects are built
 * from entries (`Object.fromEntries` defines own properties), so a key such
 * as `__proto__` is an ordinary member of the output and never a prototype.
 */
import { Buffer } from "node:buffer";
import { eventToValue } from "@tay/codec";
import { Event, type Job, type Schedule, type Value } from "@tay/core";

/** A JSON document. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | JsonObject;

/** A JSON object (built from entries, never from a prototype chain). */
export interface JsonObject {
  readonly [key: string]: Json;
}

/** An object from entries: `__proto__` and friends stay own data members. */
export const object = (entries: Iterable<readonly [string, Json]>): JsonObject =>
  Object.fromEntries(entries);

/**
 * A payload value as JSON. Depth is bounded by the codec (64), so recursion
 * here cannot run away.
 */
export const value = (input: Value.Value): Json => {
  if (input === null) return null;
  switch (typeof input) {
    case "boolean":
    case "number":
    case "string":
      return input;
    case "bigint":
      return input.toString();
    default:
      if (input instanceof Uint8Array) return Buffer.from(input).toString("base64");
      if (input instanceof Map) {
        return object([...input].map(([key, item]): [string, Json] => [key, value(item)]));
      }
      return Array.isArray(input) ? input.map(value) : null;
  }
};

/** A job with its wire field names, its errors, result and schedule. */
export const job = (job: Job.Job): JsonObject => ({
  job_id: job.jobId,
  queue: job.queue,
  worker: job.worker,
  args: value(job.args),
  priority: job.priority,
  max_attempts: job.maxAttempts,
  attempt: job.attempt,
  state: job.state,
  inserted_at: job.insertedAt,
  scheduled_at: job.scheduledAt,
  attempted_at: job.attemptedAt,
  finished_at: job.finishedAt,
  errors: job.errors.map((error) => ({
    attempt: error.attempt,
    at: error.at,
    error: error.error,
  })),
  result: job.result === null ? null : { value: value(job.result.value), at: job.result.at },
  schedule_id: job.scheduleId,
  unique_key: job.uniqueKey,
  unique_period_ms: job.uniquePeriodMs,
  timeout_ms: job.timeoutMs,
});

/**
 * A schedule definition with its wire field names; a schema-3 one
 * (EVENTS-V3.md) adds its zone and catch-up policy.
 */
export const definition = (definition: Event.ScheduleDefinition): JsonObject => ({
  queue: definition.queue,
  worker: definition.worker,
  args: value(definition.args),
  priority: definition.priority,
  max_attempts: definition.maxAttempts,
  every_ms: definition.everyMs,
  cron: definition.cron,
  overlap: definition.overlap,
  ...(Event.isDefinitionV3(definition)
    ? {
        timezone: definition.timezone,
        catch_up: definition.catchUp,
        catch_up_window_ms: definition.catchUpWindowMs,
      }
    : {}),
});

/** A schedule with its wire field names. */
export const schedule = (schedule: Schedule.Schedule): JsonObject => ({
  schedule_id: schedule.scheduleId,
  definition: definition(schedule.definition),
  revision: schedule.revision,
  definition_revision: schedule.definitionRevision,
  registered_at: schedule.registeredAt,
  next_due_at: schedule.nextDueAt,
  last_due_at: schedule.lastDueAt,
  cancelled_at: schedule.cancelledAt,
  active_job_ids: [...schedule.activeJobIds],
  membership_complete: schedule.membershipComplete,
});

/** Any record's event: its pair, its tag and its wire fields. */
export const event = (input: Event.Event): JsonObject => {
  const { type, schema } = Event.pairs[input._tag];
  return { type, schema, event: input._tag, fields: fields(input) };
};

/**
 * An event's fields by their wire names. A mutation's are its inner events,
 * each as `{type, schema, event, fields}`.
 */
export const fields = (input: Event.Event): Json =>
  input._tag === "Mutation" ? { events: input.events.map(event) } : value(eventToValue(input));

/** One record of `tay dump`: `{sequence, type, schema, event, fields}`. */
export const record = (sequence: number, input: Event.Event): JsonObject => ({
  sequence,
  ...event(input),
});

/** One line of JSON. */
export const line = (document: Json): string => JSON.stringify(document);
