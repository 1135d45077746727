/**
 * Structural equality of the state's records, used by `State.equals` and
 * the deciders (a re-registration of an identical definition is a no-op).
 * Values compare with `Value.equals`; everything else by `===`.
 */
import type { JobError, ScheduleDefinition } from "../Event.js";
import type { Job, JobResult } from "../Job.js";
import type { Schedule } from "../Schedule.js";
import * as Value from "../Value.js";

const errorsEqual = (left: ReadonlyArray<JobError>, right: ReadonlyArray<JobError>): boolean =>
  left.length === right.length &&
  left.every((error, index) => {
    const other = right[index];
    return (
      other !== undefined &&
      error.attempt === other.attempt &&
      error.at === other.at &&
      error.error === other.error
    );
  });

const resultsEqual = (left: JobResult | null, right: JobResult | null): boolean =>
  left === null || right === null
    ? left === right
    : left.at === right.at && Value.equals(left.value, right.value);

/** Field-by-field equality of two jobs. */
export const jobEquals = (left: Job, right: Job): boolean =>
  left === right ||
  (left.jobId === right.jobId &&
    left.queue === right.queue &&
    left.worker === right.worker &&
    left.priority === right.priority &&
    left.maxAttempts === right.maxAttempts &&
    left.attempt === right.attempt &&
    left.state === right.state &&
    left.insertedAt === right.insertedAt &&
    left.scheduledAt === right.scheduledAt &&
    left.attemptedAt === right.attemptedAt &&
    left.finishedAt === right.finishedAt &&
    left.scheduleId === right.scheduleId &&
    errorsEqual(left.errors, right.errors) &&
    resultsEqual(left.result, right.result) &&
    Value.equals(left.args, right.args));

/** Field-by-field equality of two definitions. */
export const definitionEquals = (left: ScheduleDefinition, right: ScheduleDefinition): boolean =>
  left === right ||
  (left.queue === right.queue &&
    left.worker === right.worker &&
    left.priority === right.priority &&
    left.maxAttempts === right.maxAttempts &&
    left.everyMs === right.everyMs &&
    left.cron === right.cron &&
    left.overlap === right.overlap &&
    Value.equals(left.args, right.args));

/** Field-by-field equality of two schedules. */
export const scheduleEquals = (left: Schedule, right: Schedule): boolean =>
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
