/**
 * The schedule record of the state and its legal transitions (EVENTS.md
 * "Schedules").
 *
 * A `Schedule` is immutable. The step functions here check what the
 * schedule itself decides (existence, revision, cancellation, due times,
 * definition); whether the jobs an event names may join its active set is
 * the fold's business, since it needs the jobs.
 */
import * as Either from "fp-ts/lib/Either.js";
import * as Due from "./Due.js";
import {
  isDefinitionV3,
  type OccurrenceAdvanced,
  type ScheduleAdvanced,
  type ScheduleCancelled,
  type ScheduleCheckpoint,
  type ScheduleCheckpointV3,
  type ScheduleDefinition,
  type ScheduleEvent,
  type ScheduleHistoricalCheckpoint,
  type ScheduleRegistered,
} from "./Event.js";
import type { HistoryReason, InvalidDefinition, InvalidField } from "./HistoryError.js";
import { definitionEquals } from "./internal/Equality.js";
import * as Fields from "./internal/Fields.js";
import * as Limits from "./Limits.js";

/** A schedule as the state holds it. */
export interface Schedule {
  readonly scheduleId: string;
  /** A v2 definition, or a v3 one (`Event.isDefinitionV3`) registered by a (13,3). */
  readonly definition: ScheduleDefinition;
  /** The CAS token: every schedule event carries revision + 1. */
  readonly revision: number;
  /** The revision at which the current definition was registered. */
  readonly definitionRevision: number;
  readonly registeredAt: number;
  readonly nextDueAt: number;
  readonly lastDueAt: number | null;
  readonly cancelledAt: number | null;
  /** Occurrences not yet terminal, strictly ascending. */
  readonly activeJobIds: ReadonlyArray<number>;
  /** Whether activeJobIds is known to be the whole set (false after legacy events). */
  readonly membershipComplete: boolean;
}

/** The revision the next event of a schedule must carry: current + 1, or 1 when new. */
export const nextRevision = (current: Schedule | undefined): number =>
  current === undefined ? 1 : current.revision + 1;

/** True unless the schedule is cancelled. */
export const isActive = (schedule: Schedule): boolean => schedule.cancelledAt === null;

const field = (name: string): InvalidField => ({ _tag: "InvalidField", field: name });

/** Checks the field kinds of a definition (names, ranges, overlap); not its recurrence. */
export const checkDefinitionFields = (definition: ScheduleDefinition): InvalidField | undefined => {
  if (!Fields.isNameKind(definition.queue)) return field("definition.queue");
  if (!Fields.isNameKind(definition.worker)) return field("definition.worker");
  if (!Fields.isIntegerIn(definition.priority, Limits.priorityMin, Limits.priorityMax)) {
    return field("definition.priority");
  }
  if (!Fields.isIntegerIn(definition.maxAttempts, Limits.maxAttemptsMin, Limits.maxAttemptsMax)) {
    return field("definition.max_attempts");
  }
  if (definition.everyMs !== null && !Fields.isId(definition.everyMs)) {
    return field("definition.every_ms");
  }
  if (definition.cron !== null && !Fields.isTextKind(definition.cron))
    return field("definition.cron");
  if (definition.overlap !== "allow" && definition.overlap !== "skip") {
    return field("definition.overlap");
  }
  if (!isDefinitionV3(definition)) return undefined;
  // The zone is only a name here: the fold never consults a zone database.
  if (!Fields.isNameKind(definition.timezone)) return field("definition.timezone");
  if (!["once", "skip", "all"].includes(definition.catchUp)) return field("definition.catch_up");
  if (definition.catchUpWindowMs !== null && !Fields.isId(definition.catchUpWindowMs)) {
    return field("definition.catch_up_window_ms");
  }
  return undefined;
};

/** Checks that a definition recurs: exactly one of every_ms and cron, and a cron that parses. */
export const checkRecurrence = (
  scheduleId: string,
  definition: ScheduleDefinition,
): InvalidDefinition | undefined => {
  const recurrence = Due.recurrence(definition);
  return Either.isLeft(recurrence)
    ? { _tag: "InvalidDefinition", scheduleId, detail: recurrence.left }
    : undefined;
};

const isAscendingIds = (ids: ReadonlyArray<number>): boolean => {
  let previous = 0;
  for (const id of ids) {
    if (!Fields.isId(id) || id <= previous) return false;
    previous = id;
  }
  return true;
};

/** Checks the field kinds of any schedule event (before any state is consulted). */
export const checkFields = (event: ScheduleEvent): InvalidField | undefined => {
  if (!Fields.isNameKind(event.scheduleId)) return field("schedule_id");
  if (!Fields.isId(event.revision)) return field("revision");
  switch (event._tag) {
    case "ScheduleRegistered":
      if (!Fields.isTime(event.registeredAt)) return field("registered_at");
      if (!Fields.isTime(event.nextDueAt)) return field("next_due_at");
      return checkDefinitionFields(event.definition);
    case "ScheduleAdvanced":
    case "OccurrenceAdvanced":
      if (!Fields.isTime(event.dueAt)) return field("due_at");
      if (!Fields.isTime(event.nextDueAt)) return field("next_due_at");
      if (event._tag === "OccurrenceAdvanced") {
        if (event.outcome !== "delivered" && event.outcome !== "skipped") return field("outcome");
        if (event.activeJobId !== null && !Fields.isId(event.activeJobId)) {
          return field("active_job_id");
        }
      }
      return undefined;
    case "ScheduleCancelled":
      return Fields.isTime(event.at) ? undefined : field("at");
    case "ScheduleHistoricalCheckpoint":
    case "ScheduleCheckpoint":
    case "ScheduleCheckpointV3":
      if (!Fields.isId(event.definitionRevision) || event.definitionRevision > event.revision) {
        return field("definition_revision");
      }
      if (!Fields.isTime(event.registeredAt)) return field("registered_at");
      if (!Fields.isTime(event.nextDueAt)) return field("next_due_at");
      if (!Fields.isTimeOrNull(event.lastDueAt)) return field("last_due_at");
      if (!Fields.isTimeOrNull(event.cancelledAt)) return field("cancelled_at");
      if (event._tag === "ScheduleHistoricalCheckpoint") {
        if (event.activeJobId !== null && !Fields.isId(event.activeJobId)) {
          return field("active_job_id");
        }
      } else if (!isAscendingIds(event.activeJobIds)) {
        return field("active_job_ids");
      } else if (typeof event.membershipComplete !== "boolean") {
        return field("membership_complete");
      }
      return checkDefinitionFields(event.definition);
    default:
      return undefined;
  }
};

/** The revision-rule check of a tail schedule event. */
export const checkRevision = (
  scheduleId: string,
  current: Schedule | undefined,
  revision: number,
): HistoryReason | undefined => {
  const expected = nextRevision(current);
  return revision === expected
    ? undefined
    : { _tag: "RevisionConflict", scheduleId, expected, actual: revision };
};

/** (7,2) legacy registration: replaces the definition; keeps an existing schedule's occurrences. */
export const registered = (
  current: Schedule | undefined,
  event: ScheduleRegistered,
): Schedule | HistoryReason => {
  const refusal =
    checkRevision(event.scheduleId, current, event.revision) ??
    checkRecurrence(event.scheduleId, event.definition);
  if (refusal !== undefined) return refusal;
  return {
    scheduleId: event.scheduleId,
    definition: event.definition,
    revision: event.revision,
    definitionRevision: event.revision,
    registeredAt: event.registeredAt,
    nextDueAt: event.nextDueAt,
    lastDueAt: current === undefined ? null : current.lastDueAt,
    cancelledAt: null,
    activeJobIds: current === undefined ? [] : current.activeJobIds,
    membershipComplete: current === undefined ? true : current.membershipComplete,
  };
};

const checkAdvance = (
  current: Schedule | undefined,
  event: ScheduleAdvanced | OccurrenceAdvanced,
): HistoryReason | Schedule => {
  if (current === undefined) return { _tag: "UnknownSchedule", scheduleId: event.scheduleId };
  const refusal = checkRevision(event.scheduleId, current, event.revision);
  if (refusal !== undefined) return refusal;
  if (current.cancelledAt !== null)
    return { _tag: "ScheduleIsCancelled", scheduleId: event.scheduleId };
  if (event.dueAt !== current.nextDueAt) {
    return {
      _tag: "DueMismatch",
      scheduleId: event.scheduleId,
      expected: current.nextDueAt,
      actual: event.dueAt,
    };
  }
  if (event.nextDueAt <= event.dueAt) {
    return {
      _tag: "NextDueNotAfterDue",
      scheduleId: event.scheduleId,
      dueAt: event.dueAt,
      nextDueAt: event.nextDueAt,
    };
  }
  return current;
};

const advance = (current: Schedule, event: ScheduleAdvanced | OccurrenceAdvanced): Schedule => ({
  ...current,
  revision: event.revision,
  lastDueAt: event.dueAt,
  nextDueAt: event.nextDueAt,
});

const isReason = (value: Schedule | HistoryReason): value is HistoryReason => "_tag" in value;

/** (8,2) legacy advance: the occurrence's job was not recorded, so membership becomes incomplete. */
export const advanced = (
  current: Schedule | undefined,
  event: ScheduleAdvanced,
): Schedule | HistoryReason => {
  const checked = checkAdvance(current, event);
  return isReason(checked) ? checked : { ...advance(checked, event), membershipComplete: false };
};

/**
 * (11,2) delivered or skipped, schedule side: the advance rules and the
 * outcome/job agreement. The job's eligibility is checked by the fold.
 */
export const occurrence = (
  current: Schedule | undefined,
  event: OccurrenceAdvanced,
): Schedule | HistoryReason => {
  const checked = checkAdvance(current, event);
  if (isReason(checked)) return checked;
  if ((event.outcome === "delivered") !== (event.activeJobId !== null)) {
    return {
      _tag: "OccurrenceMismatch",
      scheduleId: event.scheduleId,
      outcome: event.outcome,
      activeJobId: event.activeJobId,
    };
  }
  const advanced = advance(checked, event);
  return event.activeJobId === null ? advanced : withMember(advanced, event.activeJobId);
};

/** (9,2): not cancelled. */
export const cancelled = (
  current: Schedule | undefined,
  event: ScheduleCancelled,
): Schedule | HistoryReason => {
  if (current === undefined) return { _tag: "UnknownSchedule", scheduleId: event.scheduleId };
  const refusal = checkRevision(event.scheduleId, current, event.revision);
  if (refusal !== undefined) return refusal;
  if (current.cancelledAt !== null)
    return { _tag: "ScheduleIsCancelled", scheduleId: event.scheduleId };
  return { ...current, revision: event.revision, cancelledAt: event.at };
};

/** The whole schedule a (12,2) sets: one active job at most, membership incomplete. */
export const fromHistoricalCheckpoint = (event: ScheduleHistoricalCheckpoint): Schedule => ({
  scheduleId: event.scheduleId,
  definition: event.definition,
  revision: event.revision,
  definitionRevision: event.definitionRevision,
  registeredAt: event.registeredAt,
  nextDueAt: event.nextDueAt,
  lastDueAt: event.lastDueAt,
  cancelledAt: event.cancelledAt,
  activeJobIds: event.activeJobId === null ? [] : [event.activeJobId],
  membershipComplete: false,
});

/** The whole schedule a (13,2) or (13,3) sets, as given. */
export const fromCheckpoint = (event: ScheduleCheckpoint | ScheduleCheckpointV3): Schedule => ({
  scheduleId: event.scheduleId,
  definition: event.definition,
  revision: event.revision,
  definitionRevision: event.definitionRevision,
  registeredAt: event.registeredAt,
  nextDueAt: event.nextDueAt,
  lastDueAt: event.lastDueAt,
  cancelledAt: event.cancelledAt,
  activeJobIds: event.activeJobIds,
  membershipComplete: event.membershipComplete,
});

/**
 * The checkpoint that restores this schedule exactly (used by snapshots and
 * registrations): a (13,3) when its definition is a v3 one, else a (13,2),
 * so a store that uses no v3 feature never holds a (13,3).
 */
export const toCheckpoint = (schedule: Schedule): ScheduleCheckpoint | ScheduleCheckpointV3 => {
  const definition = schedule.definition;
  return isDefinitionV3(definition)
    ? { ...toCheckpointV2(schedule), _tag: "ScheduleCheckpointV3", definition }
    : toCheckpointV2(schedule);
};

const toCheckpointV2 = (schedule: Schedule): ScheduleCheckpoint => ({
  _tag: "ScheduleCheckpoint",
  scheduleId: schedule.scheduleId,
  definition: schedule.definition,
  definitionRevision: schedule.definitionRevision,
  revision: schedule.revision,
  registeredAt: schedule.registeredAt,
  nextDueAt: schedule.nextDueAt,
  lastDueAt: schedule.lastDueAt,
  cancelledAt: schedule.cancelledAt,
  activeJobIds: schedule.activeJobIds,
  membershipComplete: schedule.membershipComplete,
});

/** The schedule with `jobId` added to its active set (kept ascending). */
export const withMember = (schedule: Schedule, jobId: number): Schedule => {
  const ids = schedule.activeJobIds;
  let index = ids.length;
  while (index > 0 && (ids[index - 1] ?? 0) > jobId) index--;
  if (ids[index - 1] === jobId) return schedule;
  return { ...schedule, activeJobIds: [...ids.slice(0, index), jobId, ...ids.slice(index)] };
};

/** The schedule with `jobId` removed from its active set (a member reached a terminal state). */
export const withoutMember = (schedule: Schedule, jobId: number): Schedule => ({
  ...schedule,
  activeJobIds: schedule.activeJobIds.filter((id) => id !== jobId),
});

/** Structural equality of two schedules (definitions by value). */
export const equals = (left: Schedule, right: Schedule): boolean =>
  left === right ||
  (left.scheduleId === right.scheduleId &&
    left.revision === right.revision &&
    left.definitionRevision === right.definitionRevision &&
    left.registeredAt === right.registeredAt &&
    left.nextDueAt === right.nextDueAt &&
    left.lastDueAt === right.lastDueAt &&
    left.cancelledAt === right.cancelledAt &&
    left.membershipComplete === right.membershipComplete &&
    left.activeJobIds.length === right.activeJobIds.length &&
    left.activeJobIds.every((id, index) => right.activeJobIds[index] === id) &&
    definitionEquals(left.definition, right.definition));
