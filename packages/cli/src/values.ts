/**
 * Parsers for option values: durations (`30s`, `15m`, `2h`, `7d`, or ms),
 * sizes (`512KiB`, `32MiB`, or bytes),
 * times (ISO-8601 or ms since the epoch), bounded integers, and job
 * arguments given as JSON. Each returns an `Either` with a one-line reason,
 * so the caller can name the option in its usage error.
 */
import { Limits, Value } from "@tay/core";
import * as Either from "effect/Either";

const durationUnits: { readonly [Unit in "ms" | "s" | "m" | "h" | "d"]: number } = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const durationPattern = /^(\d+)(ms|s|m|h|d)?$/;

/**
 * A duration in ms: an integer with an optional unit `ms`, `s`, `m`, `h` or
 * `d` (a bare integer is ms). Refuses anything else and results beyond 2^53-1.
 *
 * @example parseDuration("7d") // Right(604800000)
 */
export const parseDuration = (text: string): Either.Either<number, string> => {
  const match = durationPattern.exec(text.trim());
  const digits = match?.[1];
  if (match === null || digits === undefined) {
    return Either.left(`${JSON.stringify(text)} is not a duration (like 30s, 15m, 2h, 7d, or ms)`);
  }
  const unit = match[2];
  const factor =
    unit === "s" || unit === "m" || unit === "h" || unit === "d" || unit === "ms"
      ? durationUnits[unit]
      : 1;
  const ms = Number(digits) * factor;
  return Number.isSafeInteger(ms)
    ? Either.right(ms)
    : Either.left(`${text} is too long a duration`);
};

const byteUnits: { readonly [Unit in "KiB" | "MiB" | "GiB"]: number } = {
  KiB: 1024,
  MiB: 1024 * 1024,
  GiB: 1024 * 1024 * 1024,
};

const bytesPattern = /^(\d+)(KiB|MiB|GiB)?$/;

/**
 * A size in bytes within `[min, max]`: an integer with an optional unit
 * `KiB`, `MiB` or `GiB` (powers of 1024; a bare integer is bytes). `4MB` and
 * `4M` are refused rather than guessed at (decimal or binary?).
 *
 * @example parseBytes(1024, 2 ** 30)("32MiB") // Right(33554432)
 */
export const parseBytes =
  (min: number, max: number) =>
  (text: string): Either.Either<number, string> => {
    const match = bytesPattern.exec(text.trim());
    const digits = match?.[1];
    if (match === null || digits === undefined) {
      return Either.left(
        `${JSON.stringify(text)} is not a size (like 4194304, 512KiB, 32MiB, 1GiB)`,
      );
    }
    const unit = match[2];
    const factor = unit === "KiB" || unit === "MiB" || unit === "GiB" ? byteUnits[unit] : 1;
    const bytes = Number(digits) * factor;
    return Number.isSafeInteger(bytes) && bytes >= min && bytes <= max
      ? Either.right(bytes)
      : Either.left(`${text} is not in ${min}..${max} bytes`);
  };

// A date, optionally a time and a zone: what Date.parse reads reliably.
const isoPattern =
  /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A time in ms since the Unix epoch: an integer (ms) or an ISO-8601 date or
 * date-time (without a zone it is read as UTC, like a bare date).
 *
 * @example parseTime("2026-12-01T09:00:00Z") // Right(1796115600000)
 */
export const parseTime = (text: string): Either.Either<number, string> => {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const ms = Number(trimmed);
    return ms <= Limits.timeMax ? Either.right(ms) : Either.left(`${text} is beyond 2^53-1 ms`);
  }
  if (!isoPattern.test(trimmed)) {
    return Either.left(`${JSON.stringify(text)} is not a time (ISO-8601, or ms since the epoch)`);
  }
  // Date.parse reads a date-time without a zone as local time: pin it to UTC.
  const needsZone = /T|\s/.test(trimmed) && !/(Z|[+-]\d{2}:?\d{2})$/.test(trimmed);
  const normalized = trimmed.replace(" ", "T");
  const ms = Date.parse(needsZone ? `${normalized}Z` : normalized);
  return Number.isFinite(ms) && ms >= 0
    ? Either.right(ms)
    : Either.left(`${JSON.stringify(text)} is not a valid time at or after 1970-01-01`);
};

/** An integer in `[min, max]` written in decimal. */
export const parseInteger = (
  text: string,
  min: number,
  max: number,
): Either.Either<number, string> => {
  const trimmed = text.trim();
  if (!/^-?\d+$/.test(trimmed)) return Either.left(`${JSON.stringify(text)} is not an integer`);
  const value = Number(trimmed);
  return Number.isSafeInteger(value) && value >= min && value <= max
    ? Either.right(value)
    : Either.left(`${text} is not in ${min}..${max}`);
};

/**
 * A payload value from JSON: objects become maps (every key is data, so
 * `__proto__` is an ordinary key), arrays lists, numbers integers when they
 * are safe integers and floats otherwise. Nesting beyond what a job's args
 * may hold (`Value.argsDepthMax`, 61: the codec's 64 less the 3 levels a
 * snapshot part keeps them under) is refused here rather than by the
 * deciders.
 */
export const parseJsonValue = (text: string): Either.Either<Value.Value, string> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    return Either.left(`not JSON: ${detail}`);
  }
  return toValue(parsed, 1);
};

/**
 * An option that may remove a setting: `none` is null (removed), anything
 * else what `parse` makes of it.
 *
 * @example noneOr(parseDuration)("none") // Right(null)
 */
export const noneOr =
  <A>(parse: (text: string) => Either.Either<A, string>) =>
  (text: string): Either.Either<A | null, string> =>
    text === "none" ? Either.right(null) : parse(text);

/** Deepest nesting accepted (a job's args' bound: a scalar at top level has depth 1). */
export const jsonDepthMax = Value.argsDepthMax;

const toValue = (input: unknown, depth: number): Either.Either<Value.Value, string> => {
  if (depth > jsonDepthMax) return Either.left(`nested deeper than ${jsonDepthMax} levels`);
  if (input === null || typeof input === "boolean" || typeof input === "string") {
    return Either.right(input);
  }
  if (typeof input === "number") return Either.right(Object.is(input, -0) ? 0 : input);
  if (Array.isArray(input)) {
    const items: Array<Value.Value> = [];
    for (const item of input) {
      const converted = toValue(item, depth + 1);
      if (Either.isLeft(converted)) return converted;
      items.push(converted.right);
    }
    return Either.right(items);
  }
  if (typeof input === "object") {
    const entries = new Map<string, Value.Value>();
    for (const [key, item] of Object.entries(input)) {
      const converted = toValue(item, depth + 1);
      if (Either.isLeft(converted)) return converted;
      entries.set(key, converted.right);
    }
    return Either.right(entries);
  }
  return Either.left(`unsupported JSON value ${typeof input}`);
};
