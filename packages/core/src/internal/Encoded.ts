/**
 * Encodability and size of values and records, as the codec will see them
 * (FORMAT.md "Payload value encoding"). Deciders use this so that every
 * event they emit encodes: the shell never meets an encode failure.
 *
 * Sizes of records are upper bounds: exact for values and strings, plus a
 * fixed allowance per event for its keys and scalar fields.
 */
import type { DomainEvent, Event } from "../Event.js";
import * as Value from "../Value.js";
import { utf8Length } from "./Fields.js";

/** Bytes allowed per event for map framing, keys and fixed-size fields (an over-estimate). */
export const eventOverheadBytes = 1024;

const int64Min = Value.int64Min;
const int64Max = Value.int64Max;

/**
 * The exact encoded size of a value, or a description of why the codec
 * would refuse it (too deep, non-finite float, int64 overflow, lone
 * surrogate, or something that is not a `Value` at all). Iterative, so a
 * deep or cyclic input cannot overflow the stack.
 */
export const valueSize = (root: Value.Value): number | string => {
  // Scalars (most args and results) need no stack.
  if (typeof root === "string") {
    const length = utf8Length(root);
    return length < 0 ? "a string with a lone surrogate" : 5 + length;
  }
  if (root === null || typeof root === "boolean") return 1;
  let bytes = 0;
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [
    { value: root, depth: 1 },
  ];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, depth } = item;
    if (depth > Value.valueDepthMax) return `nested deeper than ${Value.valueDepthMax}`;
    if (value === null || typeof value === "boolean") {
      bytes += 1;
    } else if (typeof value === "number") {
      if (!Number.isFinite(value)) return "a non-finite number";
      bytes += 9;
    } else if (typeof value === "bigint") {
      if (value < int64Min || value > int64Max) return "an integer outside int64";
      bytes += 9;
    } else if (typeof value === "string") {
      const length = utf8Length(value);
      if (length < 0) return "a string with a lone surrogate";
      bytes += 5 + length;
    } else if (value instanceof Uint8Array) {
      bytes += 5 + value.length;
    } else if (Array.isArray(value)) {
      bytes += 5;
      for (const element of value) stack.push({ value: element, depth: depth + 1 });
    } else if (value instanceof Map) {
      bytes += 5;
      for (const [key, element] of value) {
        if (typeof key !== "string") return "a map key that is not a string";
        const length = utf8Length(key);
        if (length < 0) return "a map key with a lone surrogate";
        bytes += 4 + length;
        stack.push({ value: element, depth: depth + 1 });
      }
    } else {
      return `a ${typeof value} that is not a Value`;
    }
    if (bytes > Number.MAX_SAFE_INTEGER / 2) return "too large";
  }
  return bytes;
};

const text = (value: string | null): number =>
  value === null ? 0 : Math.max(0, utf8Length(value));

const fixedValue = (value: Value.Value): number => {
  const size = valueSize(value);
  return typeof size === "number" ? size : 0;
};

const domainEventBytes = (event: DomainEvent): number => {
  switch (event._tag) {
    case "JobInserted":
      return text(event.queue) + text(event.worker) + fixedValue(event.args);
    case "JobFinished":
      return text(event.error);
    case "JobCancelled":
      return text(event.reason);
    case "JobRetried":
      return text(event.error);
    case "ResultRecorded":
      return fixedValue(event.result);
    case "ScheduleRegistered":
    case "ScheduleHistoricalCheckpoint":
    case "ScheduleCheckpoint": {
      const definition = event.definition;
      const members = event._tag === "ScheduleCheckpoint" ? event.activeJobIds.length * 9 : 0;
      return (
        text(event.scheduleId) +
        text(definition.queue) +
        text(definition.worker) +
        text(definition.cron) +
        fixedValue(definition.args) +
        members
      );
    }
    case "ScheduleAdvanced":
    case "ScheduleCancelled":
    case "OccurrenceAdvanced":
      return text(event.scheduleId);
    default:
      return 0;
  }
};

/** An upper bound of a record's payload size in bytes. */
export const recordBytes = (event: Event): number => {
  switch (event._tag) {
    case "Mutation":
      return event.events.reduce(
        (total, member) => total + eventOverheadBytes + domainEventBytes(member),
        eventOverheadBytes,
      );
    case "SnapshotPart":
      return event.jobs.reduce(
        (total, job) =>
          total +
          eventOverheadBytes +
          text(job.queue) +
          text(job.worker) +
          fixedValue(job.args) +
          job.errors.reduce((sum, error) => sum + 64 + text(error.error), 0),
        eventOverheadBytes,
      );
    default:
      return eventOverheadBytes + domainEventBytes(event);
  }
};
