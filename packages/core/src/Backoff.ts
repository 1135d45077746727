/**
 * Retry delays: exponential in the attempt with a cap, and no jitter, so
 * the same attempt always gives the same delay (deciders stay pure).
 *
 * @example
 * Backoff.delayMs(Backoff.defaultPolicy, 1); // 1_000
 * Backoff.delayMs(Backoff.defaultPolicy, 3); // 4_000
 */
import * as Limits from "./Limits.js";

/** delay(attempt) = min(capMs, baseMs * factor^(attempt - 1)). */
export interface Policy {
  readonly baseMs: number;
  readonly factor: number;
  readonly capMs: number;
}

/** 1 s, doubling, capped at 1 h. */
export const defaultPolicy: Policy = { baseMs: 1_000, factor: 2, capMs: 3_600_000 };

/**
 * The delay before retrying after failed attempt `attempt` (>= 1), in ms: a
 * whole number in [0, capMs]. Non-finite or negative policy numbers count as 0.
 */
export const delayMs = (policy: Policy, attempt: number): number => {
  const base = clampNonNegative(policy.baseMs);
  const cap = clampNonNegative(policy.capMs);
  const factor = clampNonNegative(policy.factor);
  const exponent = Math.max(0, Math.min(attempt, Limits.maxAttemptsMax) - 1);
  const raw = base * factor ** exponent;
  return Math.floor(Number.isFinite(raw) ? Math.min(raw, cap) : cap);
};

/** The retry time after a failure at `at`: at + delay, capped at the largest time. */
export const retryAt = (policy: Policy, attempt: number, at: number): number =>
  Math.min(Limits.timeMax, at + delayMs(policy, attempt));

const clampNonNegative = (value: number): number =>
  Number.isFinite(value) && value > 0 ? Math.min(value, Limits.timeMax) : 0;
