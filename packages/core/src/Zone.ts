/**
 * Cron in a time zone (EVENTS-V3.md "Time zones"): the fields are read as
 * wall-clock times of the zone. A local time that does not exist (the
 * spring-forward gap) fires at the first instant after the gap; a local
 * time that occurs twice (fall back) fires once, at the earlier instant.
 *
 * Zone data comes from the runtime (`Intl.DateTimeFormat`): only writers
 * (the deciders) compute due times, so the fold never depends on it. No
 * clock is read; the same runtime data gives the same answers.
 */
import * as Cron from "./Cron.js";
import * as Limits from "./Limits.js";

const minuteMs = 60_000;
/** Wider than any UTC offset (the widest are +14:00 and -12:00). */
const offsetSpanMs = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

const formatterOf = (zone: string): Intl.DateTimeFormat | undefined => {
  const known = formatters.get(zone);
  if (known !== undefined) return known;
  try {
    const made = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, made);
    return made;
  } catch {
    // An unknown zone: Intl throws a RangeError; the caller gets undefined.
    return undefined;
  }
};

/** True when the runtime knows `zone` ("UTC" always). */
export const isKnownZone = (zone: string): boolean =>
  zone === "UTC" || formatterOf(zone) !== undefined;

/**
 * The zone's offset from UTC at instant `at` (local wall clock minus UTC,
 * in ms), or undefined for a zone the runtime does not know.
 */
export const offsetAt = (zone: string, at: number): number | undefined => {
  if (zone === "UTC") return 0;
  const formatter = formatterOf(zone);
  if (formatter === undefined) return undefined;
  const parts = formatter.formatToParts(new Date(at));
  const part = (type: Intl.DateTimeFormatPartTypes): number =>
    Number(parts.find((candidate) => candidate.type === type)?.value ?? Number.NaN);
  const local = Date.UTC(
    part("year"),
    part("month") - 1,
    part("day"),
    part("hour"),
    part("minute"),
    part("second"),
  );
  // Seconds of the instant itself are dropped by the wall clock's own.
  return local - (at - (((at % 1000) + 1000) % 1000));
};

/**
 * The instant a wall-clock time `local` (ms, as if the zone were UTC) has in
 * `zone`: the earlier of two in a fall-back overlap, the end of the gap in a
 * spring-forward gap.
 */
export const instantOf = (zone: string, local: number): number | undefined => {
  const before = offsetAt(zone, local - offsetSpanMs);
  const after = offsetAt(zone, local + offsetSpanMs);
  if (before === undefined || after === undefined) return undefined;
  const candidates = [local - before, local - after].filter(
    (instant) => offsetAt(zone, instant) === local - instant,
  );
  if (candidates.length > 0) return Math.min(...candidates);
  // A gap: the first instant whose offset is the later one.
  let low = local - before;
  let high = local - after;
  if (low > high) [low, high] = [high, low];
  while (high - low > minuteMs) {
    const middle = low + Math.floor((high - low) / 2 / minuteMs) * minuteMs;
    if (offsetAt(zone, middle) === after) high = middle;
    else low = middle;
  }
  return high;
};

/**
 * The first instant strictly after `after` whose wall clock in `zone`
 * matches `cron`, by the rules above; null beyond the time range or for an
 * unknown zone. In "UTC" it is `Cron.next`.
 */
export const next = (cron: Cron.Cron, zone: string, after: number): number | null => {
  if (zone === "UTC") return Cron.next(cron, after);
  const offset = offsetAt(zone, after);
  if (offset === undefined) return null;
  let local = after + offset;
  // A bounded walk: each step moves to a later local match.
  for (let step = 0; step < 4; step++) {
    const match = Cron.next(cron, local);
    if (match === null) return null;
    const instant = instantOf(zone, match);
    if (instant === undefined || instant > Limits.timeMax) return null;
    if (instant > after) return instant;
    // The local match maps to an instant already passed (the second pass of
    // a fall-back hour, or a gap already fired): look after it.
    local = match;
  }
  return null;
};
