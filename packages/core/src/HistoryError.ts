/**
 * Why a history is refused: the closed, tagged set of reasons the fold can
 * give, and the error value that places the reason in the history.
 *
 * Every reason is plain data (numbers, strings, tags), so a `HistoryError`
 * can be logged, compared and serialised as it is.
 */
import type { Event, EventTag, FinishOutcome, JobState, OccurrenceOutcome } from "./Event.js";

/** An inserted job id already names a job of the state. */
export interface DuplicateJob {
  readonly _tag: "DuplicateJob";
  readonly jobId: number;
}

/** An inserted job id is not above every id ever inserted (`last_job_id`). */
export interface JobIdNotIncreasing {
  readonly _tag: "JobIdNotIncreasing";
  readonly jobId: number;
  readonly lastJobId: number;
}

/** An event names a job the state does not have. */
export interface UnknownJob {
  readonly _tag: "UnknownJob";
  readonly jobId: number;
}

/** A job event that its table does not allow from the job's state. */
export interface IllegalTransition {
  readonly _tag: "IllegalTransition";
  readonly jobId: number;
  readonly from: JobState;
  readonly event: EventTag;
}

/** A start whose attempt is not the previous attempt + 1. */
export interface AttemptMismatch {
  readonly _tag: "AttemptMismatch";
  readonly jobId: number;
  readonly expected: number;
  readonly actual: number;
}

/** A start beyond max_attempts, or a retry of the last allowed attempt. */
export interface AttemptsExhausted {
  readonly _tag: "AttemptsExhausted";
  readonly jobId: number;
  readonly attempt: number;
  readonly maxAttempts: number;
}

/** A job made available before its scheduled_at. */
export interface NotDue {
  readonly _tag: "NotDue";
  readonly jobId: number;
  readonly scheduledAt: number;
  readonly at: number;
}

/** A retry whose retry_at is before the failure's at. */
export interface RetryBeforeFailure {
  readonly _tag: "RetryBeforeFailure";
  readonly jobId: number;
  readonly at: number;
  readonly retryAt: number;
}

/** A finish whose error is not null exactly when the outcome is discarded. */
export interface OutcomeErrorMismatch {
  readonly _tag: "OutcomeErrorMismatch";
  readonly jobId: number;
  readonly outcome: FinishOutcome;
  readonly error: string | null;
}

/** A second result for the same job. */
export interface ResultAlreadyRecorded {
  readonly _tag: "ResultAlreadyRecorded";
  readonly jobId: number;
}

/** A schedule event (other than a registration or checkpoint) for an unknown schedule. */
export interface UnknownSchedule {
  readonly _tag: "UnknownSchedule";
  readonly scheduleId: string;
}

/** A schedule event whose revision is not current + 1 (or 1 when new). */
export interface RevisionConflict {
  readonly _tag: "RevisionConflict";
  readonly scheduleId: string;
  readonly expected: number;
  readonly actual: number;
}

/** An advance or cancellation of a cancelled schedule. */
export interface ScheduleIsCancelled {
  readonly _tag: "ScheduleIsCancelled";
  readonly scheduleId: string;
}

/** An advance whose due_at is not the schedule's next_due_at. */
export interface DueMismatch {
  readonly _tag: "DueMismatch";
  readonly scheduleId: string;
  readonly expected: number;
  readonly actual: number;
}

/** An advance whose next_due_at is not after its due_at. */
export interface NextDueNotAfterDue {
  readonly _tag: "NextDueNotAfterDue";
  readonly scheduleId: string;
  readonly dueAt: number;
  readonly nextDueAt: number;
}

/** A delivered occurrence without a job, or a skipped one with a job. */
export interface OccurrenceMismatch {
  readonly _tag: "OccurrenceMismatch";
  readonly scheduleId: string;
  readonly outcome: OccurrenceOutcome;
  readonly activeJobId: number | null;
}

/**
 * A job that cannot join a schedule's active set: it is terminal, or it
 * already belongs to another schedule (`memberOf`).
 */
export interface MembershipConflict {
  readonly _tag: "MembershipConflict";
  readonly scheduleId: string;
  readonly jobId: number;
  readonly memberOf: string | null;
  readonly terminal: boolean;
}

/** A schedule definition without exactly one of every_ms and cron, or with a bad cron. */
export interface InvalidDefinition {
  readonly _tag: "InvalidDefinition";
  readonly scheduleId: string;
  readonly detail: string;
}

/** A field outside its kind (id, time, name, text, range, ascending list). */
export interface InvalidField {
  readonly _tag: "InvalidField";
  readonly field: string;
}

/** A snapshot part (7,1) outside the leading parts of a canonical base. */
export interface SnapshotOutOfPlace {
  readonly _tag: "SnapshotOutOfPlace";
}

/** A record kind out of the canonical-base order (parts, results, checkpoints). */
export interface BaseOutOfOrder {
  readonly _tag: "BaseOutOfOrder";
  readonly expected:
    | "SnapshotPart"
    | "SnapshotPartV3"
    | "SnapshotPart, ResultRecorded or ScheduleCheckpoint"
    | "SnapshotPartV3, ResultRecorded or ScheduleCheckpoint"
    | "ResultRecorded or ScheduleCheckpoint"
    | "ScheduleCheckpoint or QueueStateSet"
    | "QueueStateSet";
  readonly found: EventTag;
}

/** A snapshot part whose number is not the next one. */
export interface PartOutOfOrder {
  readonly _tag: "PartOutOfOrder";
  readonly expected: number;
  readonly actual: number;
}

/** Snapshot parts that disagree on last_job_id, or a job above it. */
export interface LastJobIdConflict {
  readonly _tag: "LastJobIdConflict";
  readonly expected: number;
  readonly actual: number;
}

/** A schedule restored twice by one canonical base. */
export interface DuplicateSchedule {
  readonly _tag: "DuplicateSchedule";
  readonly scheduleId: string;
}

/** A snapshot job whose fields no legal history produces (`field` names the first). */
export interface InvalidSnapshotJob {
  readonly _tag: "InvalidSnapshotJob";
  readonly jobId: number;
  readonly field: string;
}

/** A mutation with no events. */
export interface EmptyMutation {
  readonly _tag: "EmptyMutation";
}

/** A snapshot part or mutation inside a mutation. */
export interface NestedRecord {
  readonly _tag: "NestedRecord";
  readonly found: string;
}

/** A generation that ended before its canonical base did. */
export interface BaseIncomplete {
  readonly _tag: "BaseIncomplete";
  readonly expected: number;
  readonly actual: number;
}

/** A value whose tag is none of the 20 events (only reachable from untyped input). */
export interface UnknownEvent {
  readonly _tag: "UnknownEvent";
  readonly found: string;
}

/** A (3,1) start of a job whose queue is paused (EVENTS-V3.md "Queue state"). */
export interface QueuePaused {
  readonly _tag: "QueuePaused";
  readonly jobId: number;
  readonly queue: string;
}

/** A (3,1) start on a queue whose executing jobs already number its concurrency. */
export interface ConcurrencyExceeded {
  readonly _tag: "ConcurrencyExceeded";
  readonly jobId: number;
  readonly queue: string;
  readonly concurrency: number;
}

/**
 * A (1,3) insert or a (20,3) redrive whose unique key another job of the
 * queue still holds (non-terminal, or finished within the insert's period).
 */
export interface UniqueKeyTaken {
  readonly _tag: "UniqueKeyTaken";
  readonly jobId: number;
  readonly queue: string;
  readonly uniqueKey: string;
  readonly heldBy: number;
}

/** A second (24,3) for the same queue in a canonical base. */
export interface DuplicateQueueState {
  readonly _tag: "DuplicateQueueState";
  readonly queue: string;
}

/** The closed set of reasons a history is refused. */
export type HistoryReason =
  | DuplicateJob
  | JobIdNotIncreasing
  | UnknownJob
  | IllegalTransition
  | AttemptMismatch
  | AttemptsExhausted
  | NotDue
  | RetryBeforeFailure
  | OutcomeErrorMismatch
  | ResultAlreadyRecorded
  | UnknownSchedule
  | RevisionConflict
  | ScheduleIsCancelled
  | DueMismatch
  | NextDueNotAfterDue
  | OccurrenceMismatch
  | MembershipConflict
  | InvalidDefinition
  | InvalidField
  | SnapshotOutOfPlace
  | BaseOutOfOrder
  | PartOutOfOrder
  | LastJobIdConflict
  | DuplicateSchedule
  | InvalidSnapshotJob
  | EmptyMutation
  | NestedRecord
  | BaseIncomplete
  | UnknownEvent
  | QueuePaused
  | ConcurrencyExceeded
  | UniqueKeyTaken
  | DuplicateQueueState;

/** The name of a reason. */
export type HistoryReasonTag = HistoryReason["_tag"];

/** Every reason tag, for exhaustive tests and labels. */
export const reasonTags: ReadonlyArray<HistoryReasonTag> = [
  "DuplicateJob",
  "JobIdNotIncreasing",
  "UnknownJob",
  "IllegalTransition",
  "AttemptMismatch",
  "AttemptsExhausted",
  "NotDue",
  "RetryBeforeFailure",
  "OutcomeErrorMismatch",
  "ResultAlreadyRecorded",
  "UnknownSchedule",
  "RevisionConflict",
  "ScheduleIsCancelled",
  "DueMismatch",
  "NextDueNotAfterDue",
  "OccurrenceMismatch",
  "MembershipConflict",
  "InvalidDefinition",
  "InvalidField",
  "SnapshotOutOfPlace",
  "BaseOutOfOrder",
  "PartOutOfOrder",
  "LastJobIdConflict",
  "DuplicateSchedule",
  "InvalidSnapshotJob",
  "EmptyMutation",
  "NestedRecord",
  "BaseIncomplete",
  "UnknownEvent",
  "QueuePaused",
  "ConcurrencyExceeded",
  "UniqueKeyTaken",
  "DuplicateQueueState",
];

/**
 * A refused history: where (`index` of the record in the folded sequence,
 * its record `sequence` when the caller gave one), which record (`event`;
 * null only for `BaseIncomplete`, which no record causes), which event
 * inside a mutation (`memberIndex`, null for a plain record) and why.
 */
export interface HistoryError {
  readonly _tag: "HistoryError";
  readonly index: number;
  readonly sequence: number | undefined;
  readonly event: Event | null;
  readonly memberIndex: number | null;
  readonly reason: HistoryReason;
}

/** Builds a `HistoryError`. */
export const historyError = (fields: Omit<HistoryError, "_tag">): HistoryError => ({
  _tag: "HistoryError",
  ...fields,
});

/** A one-line human description of an error, for logs and test failures. */
export const describe = (error: HistoryError): string => {
  const where =
    error.sequence === undefined ? `index ${error.index}` : `sequence ${error.sequence}`;
  const member = error.memberIndex === null ? "" : ` (mutation member ${error.memberIndex})`;
  const { _tag, ...details } = error.reason;
  const record = error.event === null ? "end of generation" : error.event._tag;
  return `${_tag} at ${where}${member} in ${record}: ${JSON.stringify(details)}`;
};
