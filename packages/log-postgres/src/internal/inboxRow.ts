/**
 * An inbox row and the jobs it holds. An enqueue call is one row: its jobs
 * decided by the engine's own insert decider (as if after job id 0) and the
 * one record that decision makes, encoded by the codec (pair and payload),
 * so the row holds exactly what the log would hold but for the job ids.
 * Folding decodes the row back into the same `InsertJobs` command (its
 * `now` the enqueue time), which the engine decides again after its last
 * job id: the jobs of one call keep their order and stay one mutation.
 *
 * The row's key is a UUID of version 7 whose first 48 bits are the enqueue
 * time in ms and whose next 12 count calls within that ms: ordered by the
 * key, a process's calls fold in the order it made them.
 */
import { randomBytes } from "node:crypto";
import { decodeEvent, encodeEvent } from "@tay/codec";
import { Commands, Decide, type Event, type Rejection } from "@tay/core";
import type { Log } from "@tay/shell-node";
import * as Rows from "./rows.js";

/** A row's fields as the application's transaction writes them. */
export interface Encoded {
  readonly type: number;
  readonly schema: number;
  readonly payload: Uint8Array;
  readonly jobs: number;
}

/** Why a call's jobs cannot be enqueued: the field path and the reason. */
export interface Refusal {
  readonly field: string;
  readonly reason: string;
}

const counterMax = 0xfff;
let lastMs = 0;
let counter = 0;

/**
 * The next row key at `now`: a UUIDv7 never below the last one this
 * process made (a clock stepping back keeps the last time; 4,096 calls in
 * one ms move to the next ms).
 */
export const nextKey = (now: number): string => {
  let ms = Math.max(Math.trunc(now), lastMs);
  if (ms === lastMs) {
    counter += 1;
    if (counter > counterMax) {
      ms += 1;
      counter = 0;
    }
  } else {
    counter = 0;
  }
  lastMs = ms;
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** A rejection's field path and reason, as the engine's `Rejected` would say them. */
const refusalOf = (rejection: Rejection.Rejection): Refusal => {
  switch (rejection._tag) {
    case "InvalidField":
      return { field: rejection.field, reason: rejection.detail };
    case "TooLarge":
      return {
        field: "jobs",
        reason: `the record would be ${rejection.bytes} bytes, over ${rejection.limit}`,
      };
    default:
      return { field: "jobs", reason: rejection._tag };
  }
};

/** Fields an inbox job may not use: a unique key is decided against the engine's state. */
const unsupported = (jobs: ReadonlyArray<Commands.NewJob>): Refusal | undefined => {
  for (const [index, job] of jobs.entries()) {
    for (const field of ["uniqueKey", "uniquePeriodMs"] as const) {
      if (job[field] !== undefined) {
        return {
          field: `jobs[${index}].${field}`,
          reason:
            "unique keys are decided against the engine's state, which a transaction outside it cannot see: insert such jobs through the engine",
        };
      }
    }
  }
  return undefined;
};

/**
 * Decides `jobs` at `now` with the engine's insert decider (after job id
 * 0) and encodes the one record it makes; or the first field refused.
 */
export const encodeJobs = (
  now: number,
  jobs: ReadonlyArray<Commands.NewJob>,
): Encoded | Refusal => {
  const refused = unsupported(jobs);
  if (refused !== undefined) return refused;
  const decided = Decide.insertJobsAfter(0, Commands.insertJobs({ now, jobs }));
  if (decided._tag === "Left") return refusalOf(decided.left);
  const [record] = decided.right;
  if (record === undefined || decided.right.length !== 1) {
    return { field: "jobs", reason: "the insert decider made no single record" };
  }
  const encoded = encodeEvent(record);
  if (encoded._tag === "Left") return { field: "jobs", reason: encoded.left._tag };
  const { type, schema, payload } = encoded.right;
  return { type, schema, payload, jobs: jobs.length };
};

/** One job of a row's record: job id `index + 1`, no unique key. */
const newJob = (event: Event.Event, index: number): Commands.NewJob | string => {
  if (event._tag !== "JobInserted" && event._tag !== "JobInsertedV3") {
    return `holds ${event._tag}, not a job insertion`;
  }
  if (event.jobId !== index + 1) return `job ${index + 1} has job id ${event.jobId}`;
  const job = {
    queue: event.queue,
    worker: event.worker,
    args: event.args,
    priority: event.priority,
    maxAttempts: event.maxAttempts,
    scheduledAt: event.scheduledAt,
  };
  if (event._tag === "JobInserted") return job;
  if (event.uniqueKey !== null) return `job ${index + 1} has a unique key`;
  return event.timeoutMs === null ? job : { ...job, timeoutMs: event.timeoutMs };
};

/** The row's key, or undefined when even that is unreadable. */
export const keyOf = (row: unknown): string | undefined => {
  const id = Rows.text(Rows.field(row, "id"));
  return Rows.isRefused(id) ? undefined : id;
};

/**
 * A row read from the inbox as the command it holds, or why it cannot be
 * folded (kept in the inbox, marked with that reason). Every field is
 * untrusted: checked for its kind, then decoded by the codec.
 */
export const decodeRow = (row: unknown): Log.Incoming | string => {
  const key = keyOf(row);
  const now = Rows.integer(Rows.field(row, "enqueued_at"));
  const type = Rows.integer(Rows.field(row, "event_type"));
  const schema = Rows.integer(Rows.field(row, "event_schema"));
  const payload = Rows.bytes(Rows.field(row, "payload"));
  if (key === undefined) return "its id is not text";
  if (Rows.isRefused(now)) return `enqueued_at is ${now.found}`;
  if (Rows.isRefused(type) || Rows.isRefused(schema)) return "its event pair is not two integers";
  if (Rows.isRefused(payload)) return `its payload is ${payload.found}`;
  const event = decodeEvent(type, schema, payload);
  if (event._tag === "Left") return `its record does not decode: ${event.left._tag}`;
  const events = event.right._tag === "Mutation" ? event.right.events : [event.right];
  const jobs: Array<Commands.NewJob> = [];
  for (const [index, member] of events.entries()) {
    const job = newJob(member, index);
    if (typeof job === "string") return `its record ${job}`;
    jobs.push(job);
  }
  return { key, command: Commands.insertJobs({ now, jobs }) };
};
