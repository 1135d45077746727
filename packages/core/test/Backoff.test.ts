// Retry backoff is exponential in the attempt, capped, and deterministic:
// the same attempt always gives the same whole-millisecond delay, and odd
// policies (negative, non-finite) never produce a time outside the range.
import { Backoff, Limits } from "@tay/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

describe("delayMs", () => {
  it("doubles from 1 s and caps at 1 h by default", () => {
    const delays = [1, 2, 3, 10, 12, 13, 1000].map((attempt) =>
      Backoff.delayMs(Backoff.defaultPolicy, attempt),
    );
    expect(delays).toEqual([1_000, 2_000, 4_000, 512_000, 2_048_000, 3_600_000, 3_600_000]);
  });

  it("is monotone, bounded by the cap and deterministic (property)", () => {
    fc.assert(
      fc.property(
        fc.record({
          baseMs: fc.double({ noNaN: false }),
          factor: fc.double({ noNaN: false }),
          capMs: fc.double({ noNaN: false }),
        }),
        fc.integer({ min: 1, max: 999 }),
        (policy, attempt) => {
          const delay = Backoff.delayMs(policy, attempt);
          expect(Number.isSafeInteger(delay) && delay >= 0).toBe(true);
          expect(delay).toBe(Backoff.delayMs(policy, attempt));
          const cap = Number.isFinite(policy.capMs) && policy.capMs > 0 ? policy.capMs : 0;
          expect(delay).toBeLessThanOrEqual(Math.max(cap, 0));
          if (policy.factor >= 1) {
            expect(Backoff.delayMs(policy, attempt + 1)).toBeGreaterThanOrEqual(delay);
          }
        },
      ),
    );
  });
});

describe("retryAt", () => {
  it("never passes the largest time", () => {
    expect(Backoff.retryAt(Backoff.defaultPolicy, 20, Limits.timeMax - 5)).toBe(Limits.timeMax);
    expect(Backoff.retryAt(Backoff.defaultPolicy, 1, 100)).toBe(1_100);
  });
});
