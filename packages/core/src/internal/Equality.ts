/**
 * Structural equality of schedule definitions, used by `Schedule.equals` and
 * the deciders (a re-registration of an identical definition is a no-op).
 * Values compare with `Value.equals`; everything else by `===`. (The
 * equality of jobs and of schedules is `Job.equals` and `Schedule.equals`,
 * in the modules of their records.)
 */
import { isDefinitionV3, type ScheduleDefinition } from "../Event.js";
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
    v3Equals(left, right) &&
    Value.equals(left.args, right.args));

// A v2 definition never equals a v3 one, even in UTC with catch-up "once":
// they are written as different pairs.
const v3Equals = (left: ScheduleDefinition, right: ScheduleDefinition): boolean => {
  const leftV3 = isDefinitionV3(left);
  const rightV3 = isDefinitionV3(right);
  if (!leftV3 || !rightV3) return leftV3 === rightV3;
  return (
    left.timezone === right.timezone &&
    left.catchUp === right.catchUp &&
    left.catchUpWindowMs === right.catchUpWindowMs
  );
};
