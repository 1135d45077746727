/**
 * Structural equality of schedule definitions, used by `Schedule.equals` and
 * the deciders (a re-registration of an identical definition is a no-op).
 * Values compare with `Value.equals`; everything else by `===`. (The
 * equality of jobs and of schedules is `Job.equals` and `Schedule.equals`,
 * in the modules of their records.)
 */
import type { ScheduleDefinition } from "../Event.js";
import * as Value from "../Value.js";

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
