/**
 * Five-field cron expressions evaluated in UTC, without any clock or `Date`.
 *
 * Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
 * JAN-DEC), day of week (0-7 or SUN-SAT; 0 and 7 are Sunday). Each field is
 * a comma list of `*`, `N`, `N-M`, each optionally followed by `/STEP`
 * (`N/STEP` runs from N to the field's maximum). As in Vixie cron, when both
 * day fields are restricted (neither starts with `*`) a day matches if
 * either matches; otherwise both must match.
 *
 * @example
 * const cron = Cron.parse("*\/15 9-17 * * MON-FRI"); // Right(cron)
 * Cron.next(cron.right, 0); // the first matching minute after 1970-01-01T00:00Z
 */
import * as Either from "fp-ts/lib/Either.js";
import * as Limits from "./Limits.js";

/** A parsed expression: one membership table per field. */
export interface Cron {
  readonly minutes: ReadonlyArray<boolean>;
  readonly hours: ReadonlyArray<boolean>;
  readonly daysOfMonth: ReadonlyArray<boolean>;
  readonly months: ReadonlyArray<boolean>;
  /** Index 0..6, Sunday = 0 (7 is folded into 0). */
  readonly daysOfWeek: ReadonlyArray<boolean>;
  readonly dayOfMonthStar: boolean;
  readonly dayOfWeekStar: boolean;
}

/** Why an expression is refused, with the field it concerns. */
export interface CronError {
  readonly _tag: "CronError";
  readonly field: "expression" | FieldName;
  readonly detail: string;
}

type FieldName = "minute" | "hour" | "day-of-month" | "month" | "day-of-week";

interface FieldSpec {
  readonly name: FieldName;
  readonly min: number;
  readonly max: number;
  readonly names: ReadonlyArray<string>;
}

const monthNames = [
  "jan",
  "feb",
  "mar",
  "apr",
  "may",
  "jun",
  "jul",
  "aug",
  "sep",
  "oct",
  "nov",
  "dec",
];
const dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const specs: ReadonlyArray<FieldSpec> = [
  { name: "minute", min: 0, max: 59, names: [] },
  { name: "hour", min: 0, max: 23, names: [] },
  { name: "day-of-month", min: 1, max: 31, names: [] },
  { name: "month", min: 1, max: 12, names: monthNames },
  { name: "day-of-week", min: 0, max: 7, names: dayNames },
];

/** Longest expression accepted (it is stored as a `text` field). */
export const expressionLengthMax = 1024;

const failure = (field: CronError["field"], detail: string): CronError => ({
  _tag: "CronError",
  field,
  detail,
});

// A number of at most 4 digits, or a name of the field (case-insensitive).
const parseValue = (text: string, spec: FieldSpec): number | undefined => {
  if (/^[0-9]{1,4}$/.test(text)) {
    const value = Number.parseInt(text, 10);
    return value >= spec.min && value <= spec.max ? value : undefined;
  }
  const index = spec.names.indexOf(text.toLowerCase());
  if (index < 0) return undefined;
  // Month names start at 1; day names at 0 (Sunday).
  return spec.name === "month" ? index + 1 : index;
};

const parseItem = (item: string, spec: FieldSpec, table: Array<boolean>): string | undefined => {
  const slash = item.split("/");
  if (slash.length > 2) return `bad item "${item}"`;
  const [range = "", stepText] = slash;
  let step = 1;
  if (stepText !== undefined) {
    if (!/^[0-9]{1,4}$/.test(stepText)) return `bad step in "${item}"`;
    step = Number.parseInt(stepText, 10);
    if (step < 1) return `zero step in "${item}"`;
  }
  let low: number;
  let high: number;
  if (range === "*") {
    low = spec.min;
    high = spec.max;
  } else {
    const bounds = range.split("-");
    if (bounds.length > 2) return `bad range "${range}"`;
    const start = parseValue(bounds[0] ?? "", spec);
    if (start === undefined) return `bad value in "${item}"`;
    low = start;
    if (bounds.length === 2) {
      const end = parseValue(bounds[1] ?? "", spec);
      if (end === undefined) return `bad value in "${item}"`;
      if (end < start) return `reversed range "${range}"`;
      high = end;
    } else {
      high = stepText === undefined ? start : spec.max;
    }
  }
  for (let value = low; value <= high; value += step) table[value] = true;
  return undefined;
};

const parseField = (text: string, spec: FieldSpec): ReadonlyArray<boolean> | CronError => {
  const table: Array<boolean> = new Array<boolean>(spec.max + 1).fill(false);
  for (const item of text.split(",")) {
    const problem = parseItem(item, spec, table);
    if (problem !== undefined) return failure(spec.name, problem);
  }
  return table;
};

const isError = (value: ReadonlyArray<boolean> | CronError): value is CronError => "_tag" in value;

/**
 * Parses a five-field UTC cron expression; `Left(CronError)` names the
 * field and the problem when it is refused.
 */
export const parse = (expression: string): Either.Either<CronError, Cron> => {
  if (expression.length > expressionLengthMax)
    return Either.left(failure("expression", "too long"));
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) {
    return Either.left(failure("expression", `expected 5 fields, found ${fields.length}`));
  }
  const tables: Array<ReadonlyArray<boolean>> = [];
  for (let index = 0; index < 5; index++) {
    const spec = specs[index];
    const text = fields[index];
    if (spec === undefined || text === undefined)
      return Either.left(failure("expression", "fields"));
    const table = parseField(text, spec);
    if (isError(table)) return Either.left(table);
    tables.push(table);
  }
  const [minutes = [], hours = [], daysOfMonth = [], months = [], week = []] = tables;
  const daysOfWeek = week.slice(0, 7);
  if (week[7] === true) daysOfWeek[0] = true;
  return Either.right({
    minutes,
    hours,
    daysOfMonth,
    months,
    daysOfWeek,
    dayOfMonthStar: fields[2]?.startsWith("*") ?? false,
    dayOfWeekStar: fields[4]?.startsWith("*") ?? false,
  });
};

const minuteMs = 60_000;
const hourMs = 3_600_000;
const dayMs = 86_400_000;

/** Civil date (proleptic Gregorian, UTC) of a day count since 1970-01-01 (Hinnant's algorithm). */
export const civilFromDays = (
  days: number,
): { readonly year: number; readonly month: number; readonly day: number } => {
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
};

/** Day count since 1970-01-01 of a civil date (inverse of `civilFromDays`). */
export const daysFromCivil = (year: number, month: number, day: number): number => {
  const shiftedYear = month <= 2 ? year - 1 : year;
  const era = Math.floor(shiftedYear / 400);
  const yearOfEra = shiftedYear - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
};

/** How far `next` searches: one full Gregorian cycle, after which every pattern repeats. */
export const searchYearsMax = 400;

const dayMatches = (cron: Cron, day: number, weekday: number): boolean => {
  const byMonth = cron.daysOfMonth[day] === true;
  const byWeek = cron.daysOfWeek[weekday] === true;
  return cron.dayOfMonthStar || cron.dayOfWeekStar ? byMonth && byWeek : byMonth || byWeek;
};

/**
 * The first matching minute strictly after `after` (ms since the epoch,
 * UTC), or null when there is none within `searchYearsMax` years or before
 * `Limits.timeMax` (for example `0 0 30 2 *`, which never matches).
 */
export const next = (cron: Cron, after: number): number | null => {
  let time = Math.floor(after / minuteMs) * minuteMs + minuteMs;
  const startYear = civilFromDays(Math.floor(time / dayMs)).year;
  while (time <= Limits.timeMax) {
    const days = Math.floor(time / dayMs);
    const { year, month, day } = civilFromDays(days);
    if (year > startYear + searchYearsMax) return null;
    if (cron.months[month] !== true) {
      time =
        (month === 12 ? daysFromCivil(year + 1, 1, 1) : daysFromCivil(year, month + 1, 1)) * dayMs;
      continue;
    }
    if (!dayMatches(cron, day, (days + 4) % 7)) {
      time = (days + 1) * dayMs;
      continue;
    }
    const withinDay = time - days * dayMs;
    const hour = Math.floor(withinDay / hourMs);
    if (cron.hours[hour] !== true) {
      time = days * dayMs + (hour + 1) * hourMs;
      continue;
    }
    let minute = Math.floor((withinDay - hour * hourMs) / minuteMs);
    while (minute < 60 && cron.minutes[minute] !== true) minute++;
    if (minute === 60) {
      time = days * dayMs + (hour + 1) * hourMs;
      continue;
    }
    const found = days * dayMs + hour * hourMs + minute * minuteMs;
    return found <= Limits.timeMax ? found : null;
  }
  return null;
};
