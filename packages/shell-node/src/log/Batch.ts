/**
 * A batch of records ready to append: each event encoded once (its pair,
 * its payload, its record size), its sequence left for the log to assign.
 * Encoding is the codec's and the same for every log, so the engine
 * prepares a command's records, checks them against the log's budget, and
 * only then folds the command: an event that cannot be encoded refuses its
 * command before anything changes.
 */
import type { Event } from "@tay/core";
import {
  type EventEncodeError,
  encodeEvent,
  explainEncodeError,
  payloadBytesMax,
  recordSize,
} from "@tay/codec";
import * as Either from "effect/Either";
import { UnencodableEvent } from "./LogError.js";

/**
 * A record to append: pair and payload encoded, the sequence written once,
 * by the log, when it queues the record.
 */
export interface PendingRecord {
  sequence: number;
  readonly event: Event.Event;
  readonly type: number;
  readonly schema: number;
  readonly payload: Uint8Array;
  /** Encoded record size in bytes (header, payload, CRC). */
  readonly size: number;
}

/** A batch's records and their total size in bytes. */
export interface Batch {
  readonly records: Array<PendingRecord>;
  readonly bytes: number;
  /**
   * The keys of the log's incoming jobs (`Log.incoming`) whose records this
   * batch holds: the log takes them out of their source in the same
   * transaction, or fails the append with `AppendConflict`.
   */
  readonly consumed?: ReadonlyArray<string>;
}

/**
 * The job a refused event is about, as a prefix of its explanation: its
 * `jobId`, or in a snapshot part the job at the value path's `jobs[n]`
 * (a compaction's base holds many; the batch index alone names none).
 */
const subjectOf = (event: Event.Event, error: EventEncodeError | undefined): string => {
  if ("jobId" in event) return `job ${event.jobId}: `;
  if (!("jobs" in event) || error?._tag !== "EventPayloadUnencodable") return "";
  if (error.error._tag === "Defect") return "";
  const [field, at] = error.error.path;
  const job = field === "jobs" && typeof at === "number" ? event.jobs[at] : undefined;
  return job === undefined ? "" : `job ${job.jobId}: `;
};

/** Encodes one event as a pending record (sequence not yet assigned), or says why it cannot. */
export const encodeOne = (event: Event.Event, index: number): PendingRecord | UnencodableEvent => {
  const result = encodeEvent(event);
  if (result._tag === "Left") {
    const detail = `${subjectOf(event, result.left)}${explainEncodeError(result.left)}`;
    return new UnencodableEvent({ index, reason: result.left, detail });
  }
  const { type, schema, payload } = result.right;
  if (payload.length > payloadBytesMax) {
    return new UnencodableEvent({
      index,
      reason: { _tag: "PayloadTooLarge", bytes: payload.length, limit: payloadBytesMax },
      detail: `${subjectOf(event, undefined)}a payload of ${payload.length} bytes, more than ${payloadBytesMax}`,
    });
  }
  return { sequence: 0, event, type, schema, payload, size: recordSize(payload.length) };
};

/**
 * Encodes `events` as one batch, sequences not yet assigned (pure). Fails
 * with `UnencodableEvent` naming the first event the codec refuses.
 */
export const prepare = (
  events: ReadonlyArray<Event.Event>,
): Either.Either<Batch, UnencodableEvent> => {
  const prepared = prepareOrRefuse(events);
  return prepared instanceof UnencodableEvent ? Either.left(prepared) : Either.right(prepared);
};

/**
 * `prepare` without the `Either`, for the engine's per-command path. A
 * command of one record (an insert, most commands) gets a list of exactly
 * one place: an empty list's first push reserves 17 (~130 bytes more a
 * command, docs/engine.md, 2026-12-04).
 */
export const prepareOrRefuse = (events: ReadonlyArray<Event.Event>): Batch | UnencodableEvent => {
  const first = events[0];
  if (events.length === 1 && first !== undefined) {
    const record = encodeOne(first, 0);
    return record instanceof UnencodableEvent ? record : { records: [record], bytes: record.size };
  }
  const records: Array<PendingRecord> = [];
  let bytes = 0;
  for (let index = 0; index < events.length; index++) {
    const event = events[index];
    if (event === undefined) continue;
    const record = encodeOne(event, index);
    if (record instanceof UnencodableEvent) return record;
    records.push(record);
    bytes += record.size;
  }
  return { records, bytes };
};
