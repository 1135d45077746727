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

/**
 * The exact encoded size of a value, or why the codec would refuse it (too
 * deep, non-finite float, int64 overflow, lone surrogate, or something that
 * is not a `Value` at all). The size of its canonical form, which is the
 * same: canonicalization changes kinds (-0, safe bigints) and order, never
 * lengths.
 */
export const valueSize = (root: Value.Value): number | string => {
  const canonical = Value.canonical(root);
  return canonical._tag === "Canonical" ? canonical.bytes : canonical.detail;
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
    case "JobInsertedV3":
      return (
        text(event.queue) + text(event.worker) + text(event.uniqueKey) + fixedValue(event.args)
      );
    case "JobRedriven":
      return text(event.reason);
    case "QueueStateSet":
      return text(event.queue);
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
    case "ScheduleCheckpoint":
    case "ScheduleCheckpointV3": {
      const definition = event.definition;
      const members =
        event._tag === "ScheduleCheckpoint" || event._tag === "ScheduleCheckpointV3"
          ? event.activeJobIds.length * 9
          : 0;
      const zone = event._tag === "ScheduleCheckpointV3" ? text(event.definition.timezone) : 0;
      return (
        text(event.scheduleId) +
        zone +
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
    case "SnapshotPartV3":
      return event.jobs.reduce(
        (total, job) =>
          total +
          eventOverheadBytes +
          text(job.queue) +
          text(job.worker) +
          ("uniqueKey" in job ? text(job.uniqueKey) : 0) +
          fixedValue(job.args) +
          job.errors.reduce((sum, error) => sum + 64 + text(error.error), 0),
        eventOverheadBytes,
      );
    default:
      return eventOverheadBytes + domainEventBytes(event);
  }
};
