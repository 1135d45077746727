/**
 * When a schedule is due: the first due time of a registration and the next
 * one after an occurrence, for fixed intervals and for UTC cron.
 *
 * Intervals run on a fixed grid anchored at the first due time (no drift);
 * cron uses `Cron.next`. Missed occurrences are coalesced: the next due time
 * after an occurrence is the first grid point strictly after both the
 * occurrence and `now` (see docs/core.md).
 */
import * as Either from "fp-ts/lib/Either.js";
import * as Cron from "./Cron.js";
import { isDefinitionV3, type ScheduleDefinition } from "./Event.js";
import * as Limits from "./Limits.js";
import * as Zone from "./Zone.js";

/**
 * How a definition recurs, once validated. A cron is read in `zone` ("UTC"
 * for v2 definitions; a v3 definition's `timezone`); intervals ignore zones.
 */
export type Recurrence =
  | { readonly _tag: "Interval"; readonly everyMs: number }
  | { readonly _tag: "Cron"; readonly cron: Cron.Cron; readonly zone: string };

/**
 * The recurrence of a definition: `Left(detail)` unless exactly one of
 * every_ms and cron is set and the cron parses.
 */
export const recurrence = (definition: ScheduleDefinition): Either.Either<string, Recurrence> => {
  const { everyMs, cron } = definition;
  if ((everyMs === null) === (cron === null)) {
    return Either.left("exactly one of every_ms and cron must be set");
  }
  if (everyMs !== null) {
    return Number.isSafeInteger(everyMs) && everyMs >= Limits.idMin
      ? Either.right({ _tag: "Interval", everyMs })
      : Either.left("every_ms must be an integer 1..2^53-1");
  }
  const parsed = Cron.parse(cron ?? "");
  return Either.isLeft(parsed)
    ? Either.left(`cron ${parsed.left.field}: ${parsed.left.detail}`)
    : Either.right({
        _tag: "Cron",
        cron: parsed.right,
        // The zone is not checked here: the fold calls this too, and never
        // consults a zone database (an unknown zone has no occurrence).
        zone: isDefinitionV3(definition) ? definition.timezone : "UTC",
      });
};

/**
 * The first occurrence strictly after `after`, for `after >= dueAt` (what
 * every caller passes: an occurrence at `dueAt` is the current one): for an
 * interval, on the grid of `dueAt`. An interval never answers `dueAt`
 * itself, even for an earlier `after` (its first step is one interval on);
 * a cron answers its next minute after `after` whatever `dueAt` is.
 */
export const after = (recurrence: Recurrence, dueAt: number, after: number): number | null => {
  if (recurrence._tag === "Cron") return Zone.next(recurrence.cron, recurrence.zone, after);
  const steps = Math.max(1, Math.floor((after - dueAt) / recurrence.everyMs) + 1);
  const due = dueAt + steps * recurrence.everyMs;
  return due <= Limits.timeMax ? due : null;
};

/** The first occurrence at or after `at`, on the grid of `dueAt` for an interval (`dueAt` itself when `at <= dueAt`). */
export const atOrAfter = (recurrence: Recurrence, dueAt: number, at: number): number | null =>
  at <= dueAt ? dueAt : after(recurrence, dueAt, at - 1);

/** The first due time of a schedule registered at `now`: now + every_ms, or the next cron minute after now; null when beyond the time range. */
export const first = (recurrence: Recurrence, now: number): number | null => {
  if (recurrence._tag === "Cron") return Zone.next(recurrence.cron, recurrence.zone, now);
  const due = now + recurrence.everyMs;
  return due <= Limits.timeMax ? due : null;
};

/**
 * The due time after an occurrence due at `dueAt`, evaluated at `now`: the
 * first time of the recurrence strictly after both (so occurrences missed
 * while nobody ticked are coalesced into the one being delivered); null when
 * beyond the time range.
 */
export const following = (recurrence: Recurrence, dueAt: number, now: number): number | null => {
  const after = Math.max(now, dueAt);
  if (recurrence._tag === "Cron") return Zone.next(recurrence.cron, recurrence.zone, after);
  const steps = Math.floor((after - dueAt) / recurrence.everyMs) + 1;
  const due = dueAt + steps * recurrence.everyMs;
  return due <= Limits.timeMax && due > after ? due : null;
};
