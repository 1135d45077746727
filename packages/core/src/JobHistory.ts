/**
 * One job's history: which events of a log concern a job, and how a
 * record gives them. One definition for every reader that shows a history
 * (`tay job`, the server's `GET /v1/jobs/ID/history`, the client, the
 * dashboard), so they cannot answer differently (2026-12-07,
 * docs/core.md "A job's history").
 *
 * An event concerns a job when it names it (`job_id`), when a schedule's
 * occurrence delivered it (`active_job_id`), or when a schedule's
 * checkpoint lists it as a member. A snapshot part concerns the jobs it
 * holds: it is narrowed to the one asked about, so that after a
 * compaction a job's history starts with its state at the base.
 */
import type { AnySnapshotPart, DomainEvent, Event } from "./Event.js";

/** What a history holds: the domain events and snapshot parts (a mutation is opened). */
export type HistoryEvent = DomainEvent | AnySnapshotPart;

/** One entry of a job's history: a record, or one event of a mutation, that concerns it. */
export interface HistoryEntry {
  readonly sequence: number;
  /** The event's index inside its mutation, null for a record of its own. */
  readonly member: number | null;
  readonly event: HistoryEvent;
}

/** Whether a domain event concerns `jobId` (names it, or lists it as a schedule's member). */
export const concerns = (event: DomainEvent, jobId: number): boolean => {
  switch (event._tag) {
    case "JobInserted":
    case "JobAvailable":
    case "JobStarted":
    case "JobFinished":
    case "JobCancelled":
    case "JobRetried":
    case "ResultRecorded":
    case "JobInsertedV3":
    case "JobRedriven":
      return event.jobId === jobId;
    case "OccurrenceAdvanced":
    case "ScheduleHistoricalCheckpoint":
      return event.activeJobId === jobId;
    case "ScheduleCheckpoint":
    case "ScheduleCheckpointV3":
      return event.activeJobIds.includes(jobId);
    case "ScheduleRegistered":
    case "ScheduleAdvanced":
    case "ScheduleCancelled":
    case "QueueStateSet":
      return false;
    default: {
      const unknown: never = event;
      return Boolean(unknown);
    }
  }
};

// What almost every record of a large store gives a job's history: one
// shared empty list, not a new one per record looked at.
const noEntries: ReadonlyArray<HistoryEntry> = [];

/** A snapshot part narrowed to `jobId`'s job, or nothing when it does not hold it. */
const narrowed = (
  sequence: number,
  part: AnySnapshotPart,
  jobId: number,
): ReadonlyArray<HistoryEntry> => {
  if (!part.jobs.some((job) => job.jobId === jobId)) return noEntries;
  // Two branches for the two kinds of part, so that each keeps its own kind of job.
  const event: AnySnapshotPart =
    part._tag === "SnapshotPart"
      ? { ...part, jobs: part.jobs.filter((job) => job.jobId === jobId) }
      : { ...part, jobs: part.jobs.filter((job) => job.jobId === jobId) };
  return [{ sequence, member: null, event }];
};

/** The entries of the record at `sequence` that concern `jobId`, in order. */
export const entriesOf = (
  sequence: number,
  event: Event,
  jobId: number,
): ReadonlyArray<HistoryEntry> => {
  switch (event._tag) {
    case "Mutation": {
      const entries: Array<HistoryEntry> = [];
      event.events.forEach((inner, member) => {
        if (concerns(inner, jobId)) entries.push({ sequence, member, event: inner });
      });
      return entries.length === 0 ? noEntries : entries;
    }
    case "SnapshotPart":
    case "SnapshotPartV3":
      return narrowed(sequence, event, jobId);
    default:
      return concerns(event, jobId) ? [{ sequence, member: null, event }] : noEntries;
  }
};

/** The ids of the jobs a record inserts, the lowest and the highest. */
export interface InsertedIds {
  readonly first: number;
  readonly last: number;
}

/**
 * The ids of the jobs `event` inserts ((1,1) and (1,3), alone or in a
 * mutation); undefined when it inserts none. A snapshot part inserts
 * nothing here: it restates jobs of the base. Past a generation's base,
 * each insert's id is above every id before it (`JobIdNotIncreasing`), so
 * the record that inserted a job can be searched for by sequence: no
 * record before it concerns the job (2026-12-07, docs/core.md "A job's
 * history").
 */
export const insertedIds = (event: Event): InsertedIds | undefined => {
  switch (event._tag) {
    case "JobInserted":
    case "JobInsertedV3":
      return { first: event.jobId, last: event.jobId };
    case "Mutation": {
      let first = Number.POSITIVE_INFINITY;
      let last = Number.NEGATIVE_INFINITY;
      for (const inner of event.events) {
        if (inner._tag !== "JobInserted" && inner._tag !== "JobInsertedV3") continue;
        first = Math.min(first, inner.jobId);
        last = Math.max(last, inner.jobId);
      }
      return first <= last ? { first, last } : undefined;
    }
    default:
      return undefined;
  }
};
