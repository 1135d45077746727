/**
 * The transition rules of EVENTS.md applied to a `Store`: the one place
 * where an event changes jobs, schedules, membership and last_job_id.
 *
 * Each function checks everything before it writes, and returns the reason
 * to refuse the event or undefined. Callers decide what a refusal does to
 * the store (a `Draft` is dropped; a generation fold stops).
 */
import {
  type DomainEvent,
  type Event,
  isSnapshotPart,
  isTerminal,
  type JobInserted,
  type JobInsertedV3,
  type JobRedriven,
  type JobSnapshot,
  type JobSnapshotV3,
  type JobStarted,
  type OccurrenceAdvanced,
  type QueueStateSet,
  type ScheduleCheckpoint,
  type ScheduleCheckpointV3,
  type ScheduleHistoricalCheckpoint,
} from "../Event.js";
import type { HistoryReason, InvalidField } from "../HistoryError.js";
import * as Job from "../Job.js";
import * as Limits from "../Limits.js";
import * as Queue from "../Queue.js";
import * as Schedule from "../Schedule.js";
import * as Fields from "./Fields.js";
import * as JobRecord from "./JobRecord.js";
import type { Store } from "./Store.js";
import { tagName } from "./Tag.js";

const field = (name: string): InvalidField => ({ _tag: "InvalidField", field: name });

const checkInsertedFields = (event: JobInserted | JobInsertedV3): InvalidField | undefined => {
  if (!Fields.isId(event.jobId)) return field("job_id");
  if (!Fields.isNameKind(event.queue)) return field("queue");
  if (!Fields.isNameKind(event.worker)) return field("worker");
  if (!Fields.isIntegerIn(event.priority, Limits.priorityMin, Limits.priorityMax)) {
    return field("priority");
  }
  if (!Fields.isIntegerIn(event.maxAttempts, Limits.maxAttemptsMin, Limits.maxAttemptsMax)) {
    return field("max_attempts");
  }
  if (!Fields.isTime(event.scheduledAt)) return field("scheduled_at");
  if (!Fields.isTime(event.insertedAt)) return field("inserted_at");
  if (event._tag === "JobInsertedV3") {
    if (event.uniqueKey !== null && !Fields.isNameKind(event.uniqueKey)) return field("unique_key");
    if (event.uniquePeriodMs !== null && !Fields.isId(event.uniquePeriodMs)) {
      return field("unique_period_ms");
    }
    if (event.timeoutMs !== null && !Fields.isId(event.timeoutMs)) return field("timeout_ms");
  }
  return undefined;
};

const checkJobEventFields = (event: Job.JobTransitionEvent): InvalidField | undefined => {
  if (!Fields.isId(event.jobId)) return field("job_id");
  if (!Fields.isTime(event.at)) return field("at");
  switch (event._tag) {
    case "JobStarted":
      return Number.isSafeInteger(event.attempt) ? undefined : field("attempt");
    case "JobFinished":
      if (event.outcome !== "completed" && event.outcome !== "discarded") return field("outcome");
      return Fields.isTextKindOrNull(event.error) ? undefined : field("error");
    case "JobCancelled":
      return Fields.isTextKindOrNull(event.reason) ? undefined : field("reason");
    case "JobRetried":
      if (!Fields.isTime(event.retryAt)) return field("retry_at");
      return Fields.isTextKind(event.error) ? undefined : field("error");
    case "JobRedriven":
      if (!Fields.isIntegerIn(event.maxAttempts, Limits.maxAttemptsMin, Limits.maxAttemptsMax)) {
        return field("max_attempts");
      }
      return Fields.isTextKindOrNull(event.reason) ? undefined : field("reason");
    default:
      return undefined;
  }
};

// Ids only grow: a (1,1) must name an id above every id seen so far.
const orderRefusal = (
  lastJobId: number,
  event: JobInserted | JobInsertedV3,
): HistoryReason | undefined =>
  event.jobId <= lastJobId
    ? { _tag: "JobIdNotIncreasing", jobId: event.jobId, lastJobId }
    : undefined;

/**
 * The rule for a (1,1) on a store whose last_job_id is `lastJobId` (and
 * which therefore holds no job above it): the refusal, or undefined. It
 * reads nothing else of the store, which is what lets a runtime check an
 * insert, write it, and fold it later (`Evolve.checkInserts`). An id at or
 * below `lastJobId` is `JobIdNotIncreasing` here, where `inserted` names it
 * `DuplicateJob` when the store holds that job.
 */
export const insertRefusal = (lastJobId: number, event: JobInserted): HistoryReason | undefined =>
  checkInsertedFields(event) ?? orderRefusal(lastJobId, event);

/**
 * The job of `queue` other than `jobId` that holds `uniqueKey` against a job
 * inserted or redriven at `at`: one not terminal, or, with a period, one
 * that finished at or after `at - periodMs` (EVENTS-V3.md). Undefined when
 * the key is free.
 */
export const uniqueHolder = (
  store: Pick<Store, "getJob" | "uniqueHolders">,
  queue: string,
  uniqueKey: string,
  jobId: number,
  at: number,
  periodMs: number | null,
): number | undefined =>
  holderAmong(store.uniqueHolders(queue, uniqueKey), store, storeJob, jobId, at, periodMs);

const storeJob = (store: Pick<Store, "getJob">, jobId: number): Job.Job | undefined =>
  store.getJob(jobId);

/**
 * `uniqueHolder`'s rule over a key's `holders` (ascending ids), each read
 * with `getJob` from `source`: a decider passes its state and the index
 * entry it looked up itself, with no store object built per lookup.
 */
export const holderAmong = <S>(
  holders: ReadonlyArray<number>,
  source: S,
  getJob: (source: S, jobId: number) => Job.Job | undefined,
  jobId: number,
  at: number,
  periodMs: number | null,
): number | undefined => {
  for (const holderId of holders) {
    const holder = getJob(source, holderId);
    if (holder === undefined || holderId === jobId) continue;
    if (!isTerminal(holder.state)) return holderId;
    if (periodMs !== null && holder.finishedAt !== null && holder.finishedAt >= at - periodMs) {
      return holderId;
    }
  }
  return undefined;
};

/**
 * `insertRefusal` for a (1,1) or a (1,3): the fields and the order, which
 * read nothing of the store but its last_job_id. A (1,3)'s unique key is
 * the one part that reads more: its decider looks it up with the fold's
 * own rule (`holderAmong`), and the fold checks it again.
 */
export const pendingInsertRefusal = (
  lastJobId: number,
  event: JobInserted | JobInsertedV3,
): HistoryReason | undefined => checkInsertedFields(event) ?? orderRefusal(lastJobId, event);

const uniqueRefusal = (
  store: Store,
  event: JobInserted | JobInsertedV3,
): HistoryReason | undefined => {
  if (event._tag !== "JobInsertedV3" || event.uniqueKey === null) return undefined;
  const { queue, uniqueKey, jobId } = event;
  const heldBy = uniqueHolder(
    store,
    queue,
    uniqueKey,
    jobId,
    event.insertedAt,
    event.uniquePeriodMs,
  );
  return heldBy === undefined
    ? undefined
    : { _tag: "UniqueKeyTaken", jobId, queue, uniqueKey, heldBy };
};

const inserted = (store: Store, event: JobInserted | JobInsertedV3): HistoryReason | undefined => {
  const refusal = checkInsertedFields(event);
  if (refusal !== undefined) return refusal;
  if (store.getJob(event.jobId) !== undefined) return { _tag: "DuplicateJob", jobId: event.jobId };
  const order = orderRefusal(store.lastJobId, event) ?? uniqueRefusal(store, event);
  if (order !== undefined) return order;
  store.addJob(JobRecord.inserted(event));
  store.lastJobId = event.jobId;
  return undefined;
};

const jobStep = (store: Store, event: Job.JobTransitionEvent): HistoryReason | undefined => {
  const refusal = checkJobEventFields(event);
  if (refusal !== undefined) return refusal;
  const job = store.getJob(event.jobId);
  if (job === undefined) return { _tag: "UnknownJob", jobId: event.jobId };
  const illegal = Job.check(job, event) ?? queueRefusal(store, job, event);
  if (illegal !== undefined) return illegal;
  // Read before the change: the builder's store updates `job` in place.
  const memberOf = job.scheduleId;
  store.changeJob(job, event);
  // A member that reaches a terminal state leaves its schedule's active set.
  // (Only finishes and cancellations lead to a terminal state.)
  if (memberOf !== null && (event._tag === "JobFinished" || event._tag === "JobCancelled")) {
    const schedule = store.getSchedule(memberOf);
    if (schedule !== undefined) {
      store.putSchedule(schedule, Schedule.withoutMember(schedule, job.jobId));
    }
  }
  return undefined;
};

/** EVENTS-V3.md: no start on a paused queue or beyond its concurrency. */
const startRefusal = (store: Store, job: Job.Job, event: JobStarted): HistoryReason | undefined => {
  const state = store.getQueue(job.queue);
  if (state === undefined) return undefined;
  if (state.paused) return { _tag: "QueuePaused", jobId: event.jobId, queue: job.queue };
  const concurrency = state.concurrency;
  if (concurrency !== null && store.executingIn(job.queue) >= concurrency) {
    return { _tag: "ConcurrencyExceeded", jobId: event.jobId, queue: job.queue, concurrency };
  }
  return undefined;
};

/** EVENTS-V3.md: a redriven job's unique key must be free of other non-terminal jobs. */
const redriveRefusal = (
  store: Store,
  job: Job.Job,
  event: JobRedriven,
): HistoryReason | undefined => {
  if (job.uniqueKey === null) return undefined;
  // "No other non-terminal job": the period does not apply to a redrive.
  const heldBy = uniqueHolder(store, job.queue, job.uniqueKey, job.jobId, event.at, null);
  return heldBy === undefined
    ? undefined
    : {
        _tag: "UniqueKeyTaken",
        jobId: job.jobId,
        queue: job.queue,
        uniqueKey: job.uniqueKey,
        heldBy,
      };
};

const queueRefusal = (
  store: Store,
  job: Job.Job,
  event: Job.JobTransitionEvent,
): HistoryReason | undefined => {
  if (event._tag === "JobStarted") return startRefusal(store, job, event);
  if (event._tag === "JobRedriven") return redriveRefusal(store, job, event);
  return undefined;
};

/** (24,3): the queue's whole state replaced (the default is kept as no entry). */
const queueState = (
  store: Store,
  event: QueueStateSet,
  inBase: boolean,
): HistoryReason | undefined => {
  const refusal = Queue.checkFields(event);
  if (refusal !== undefined) return refusal;
  if (inBase && store.getQueue(event.queue) !== undefined) {
    return { _tag: "DuplicateQueueState", queue: event.queue };
  }
  store.putQueue(event.queue, Queue.isDefault(event) ? undefined : Queue.fromEvent(event));
  return undefined;
};

/** Checks that every listed job may be an active occurrence of `scheduleId`. */
const checkMembers = (
  store: Store,
  scheduleId: string,
  jobIds: ReadonlyArray<number>,
): HistoryReason | undefined => {
  for (const jobId of jobIds) {
    const job = store.getJob(jobId);
    if (job === undefined) return { _tag: "UnknownJob", jobId };
    const terminal = Job.isFinal(job);
    if (terminal || (job.scheduleId !== null && job.scheduleId !== scheduleId)) {
      return { _tag: "MembershipConflict", scheduleId, jobId, memberOf: job.scheduleId, terminal };
    }
  }
  return undefined;
};

/** Replaces a schedule wholesale and moves the membership back-pointers to match. */
const setSchedule = (
  store: Store,
  current: Schedule.Schedule | undefined,
  next: Schedule.Schedule,
): void => {
  const members = new Set(next.activeJobIds);
  if (current !== undefined) {
    for (const jobId of current.activeJobIds) {
      const job = store.getJob(jobId);
      if (job !== undefined && !members.has(jobId) && job.scheduleId === next.scheduleId) {
        store.setMembership(job, null);
      }
    }
  }
  for (const jobId of next.activeJobIds) {
    const job = store.getJob(jobId);
    if (job !== undefined && job.scheduleId !== next.scheduleId) {
      store.setMembership(job, next.scheduleId);
    }
  }
  store.putSchedule(current, next);
};

const checkpoint = (
  store: Store,
  event: ScheduleCheckpoint | ScheduleCheckpointV3 | ScheduleHistoricalCheckpoint,
  inBase: boolean,
): HistoryReason | undefined => {
  const refusal = Schedule.checkFields(event);
  if (refusal !== undefined) return refusal;
  const current = store.getSchedule(event.scheduleId);
  if (inBase) {
    if (current !== undefined) return { _tag: "DuplicateSchedule", scheduleId: event.scheduleId };
  } else {
    const conflict = Schedule.checkRevision(event.scheduleId, current, event.revision);
    if (conflict !== undefined) return conflict;
  }
  const next =
    event._tag === "ScheduleHistoricalCheckpoint"
      ? Schedule.fromHistoricalCheckpoint(event)
      : Schedule.fromCheckpoint(event);
  const invalid =
    Schedule.checkRecurrence(event.scheduleId, event.definition) ??
    checkMembers(store, event.scheduleId, next.activeJobIds);
  if (invalid !== undefined) return invalid;
  setSchedule(store, current, next);
  return undefined;
};

const occurrence = (store: Store, event: OccurrenceAdvanced): HistoryReason | undefined => {
  const current = store.getSchedule(event.scheduleId);
  const next = Schedule.occurrence(current, event);
  if ("_tag" in next) return next;
  if (event.activeJobId !== null) {
    const jobId = event.activeJobId;
    const job = store.getJob(jobId);
    if (job === undefined) return { _tag: "UnknownJob", jobId };
    const terminal = Job.isFinal(job);
    if (terminal || job.scheduleId !== null) {
      return {
        _tag: "MembershipConflict",
        scheduleId: event.scheduleId,
        jobId,
        memberOf: job.scheduleId,
        terminal,
      };
    }
    store.setMembership(job, event.scheduleId);
  }
  store.putSchedule(current, next);
  return undefined;
};

const scheduleStep = (
  store: Store,
  event: Exclude<DomainEvent, Job.JobTransitionEvent | JobInserted | JobInsertedV3 | QueueStateSet>,
): HistoryReason | undefined => {
  if (
    event._tag === "ScheduleHistoricalCheckpoint" ||
    event._tag === "ScheduleCheckpoint" ||
    event._tag === "ScheduleCheckpointV3"
  ) {
    return checkpoint(store, event, false);
  }
  const refusal = Schedule.checkFields(event);
  if (refusal !== undefined) return refusal;
  const current = store.getSchedule(event.scheduleId);
  let next: Schedule.Schedule | HistoryReason;
  switch (event._tag) {
    case "ScheduleRegistered":
      next = Schedule.registered(current, event);
      break;
    case "ScheduleAdvanced":
      next = Schedule.advanced(current, event);
      break;
    case "ScheduleCancelled":
      next = Schedule.cancelled(current, event);
      break;
    case "OccurrenceAdvanced":
      return occurrence(store, event);
    default:
      return { _tag: "UnknownEvent", found: tagName(event) };
  }
  if ("_tag" in next) return next;
  store.putSchedule(current, next);
  return undefined;
};

/**
 * Applies one event of the two tables (a live-tail event, or a mutation
 * member) to the store; the reason to refuse it, or undefined.
 */
export const applyDomain = (store: Store, event: DomainEvent): HistoryReason | undefined => {
  const reason = applyDomainEvent(store, event);
  // Only the four schema-3 domain events have these tags; (7,3) is noted by the base.
  if (
    reason === undefined &&
    (event._tag === "JobInsertedV3" ||
      event._tag === "JobRedriven" ||
      event._tag === "QueueStateSet" ||
      event._tag === "ScheduleCheckpointV3")
  ) {
    store.schema3 = true;
  }
  return reason;
};

const applyDomainEvent = (store: Store, event: DomainEvent): HistoryReason | undefined => {
  switch (event._tag) {
    case "JobInserted":
    case "JobInsertedV3":
      return inserted(store, event);
    case "JobRedriven":
    case "JobAvailable":
    case "JobStarted":
    case "JobFinished":
    case "JobCancelled":
    case "JobRetried":
    case "ResultRecorded":
      return jobStep(store, event);
    case "ScheduleRegistered":
    case "ScheduleAdvanced":
    case "ScheduleCancelled":
    case "OccurrenceAdvanced":
    case "ScheduleHistoricalCheckpoint":
    case "ScheduleCheckpoint":
    case "ScheduleCheckpointV3":
      return scheduleStep(store, event);
    case "QueueStateSet":
      return queueState(store, event, false);
    default:
      return { _tag: "UnknownEvent", found: tagName(event) };
  }
};

/** Applies a (13,2) or (13,3) of a canonical base: any revision, each schedule once, membership checked. */
export const applyBaseCheckpoint = (
  store: Store,
  event: ScheduleCheckpoint | ScheduleCheckpointV3,
): HistoryReason | undefined => {
  const reason = checkpoint(store, event, true);
  if (reason === undefined && event._tag === "ScheduleCheckpointV3") store.schema3 = true;
  return reason;
};

/** Applies a (24,3) of a canonical base: each queue once. */
export const applyBaseQueueState = (
  store: Store,
  event: QueueStateSet,
): HistoryReason | undefined => {
  const reason = queueState(store, event, true);
  if (reason === undefined) store.schema3 = true;
  return reason;
};

/** Adds the jobs of a snapshot part (its last_job_id already checked by the caller). */
export const applySnapshotJobs = (
  store: Store,
  jobs: ReadonlyArray<JobSnapshot | JobSnapshotV3>,
  lastJobId: number,
): HistoryReason | undefined => {
  for (const snapshot of jobs) {
    const refusal = Job.checkSnapshot(snapshot, lastJobId);
    if (refusal !== undefined) return refusal;
    if (store.getJob(snapshot.jobId) !== undefined) {
      return { _tag: "DuplicateJob", jobId: snapshot.jobId };
    }
    const restored = JobRecord.restored(snapshot);
    // Uniqueness holds in a base too: the jobs restored so far are the generation's.
    if (restored.uniqueKey !== null && !isTerminal(restored.state)) {
      const { queue, uniqueKey, jobId } = restored;
      const heldBy = uniqueHolder(store, queue, uniqueKey, jobId, 0, null);
      if (heldBy !== undefined) return { _tag: "UniqueKeyTaken", jobId, queue, uniqueKey, heldBy };
    }
    store.addJob(restored);
  }
  return undefined;
};

/** Where a refusal happened inside a mutation (null for a plain record). */
export interface Refusal {
  readonly reason: HistoryReason;
  readonly memberIndex: number | null;
}

/**
 * Applies a live-tail record: a domain event, or a mutation's members in
 * order. A snapshot part here is out of place. On a refusal the store may
 * hold part of a mutation; callers drop or poison it.
 */
export const applyTailRecord = (store: Store, event: Event): Refusal | undefined => {
  switch (event._tag) {
    case "SnapshotPart":
    case "SnapshotPartV3":
      return { reason: { _tag: "SnapshotOutOfPlace" }, memberIndex: null };
    case "Mutation": {
      if (event.events.length === 0)
        return { reason: { _tag: "EmptyMutation" }, memberIndex: null };
      for (let index = 0; index < event.events.length; index++) {
        const member = event.events[index];
        if (member === undefined) continue;
        const tag: string = member._tag;
        if (isSnapshotPart(member) || tag === "Mutation") {
          return { reason: { _tag: "NestedRecord", found: tag }, memberIndex: index };
        }
        const reason = applyDomain(store, member);
        if (reason !== undefined) return { reason, memberIndex: index };
      }
      return undefined;
    }
    default: {
      const reason = applyDomain(store, event);
      return reason === undefined ? undefined : { reason, memberIndex: null };
    }
  }
};
