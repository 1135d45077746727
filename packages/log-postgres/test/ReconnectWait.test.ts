// The wait before a reconnection grows with the attempt and never passes what a JavaScript timer
// takes: Effect's live clock never ends a longer sleep, so with both options at their bounds
// (reconnectDelayMs 3,600,000, reconnectAttemptsMax 1,000) a reconnection would wait forever.
import { Duration } from "effect";
import { describe, expect, it } from "vitest";
import { reconnectWait } from "../src/internal/session.js";

const timerMaxMs = 2 ** 31 - 1;

describe("reconnectWait", () => {
  it("is attempt + 1 times the delay, at most 2^31 - 1 ms", () => {
    expect(Duration.toMillis(reconnectWait(200, 0))).toBe(200);
    expect(Duration.toMillis(reconnectWait(200, 4))).toBe(1_000);
    expect(Duration.toMillis(reconnectWait(3_600_000, 595))).toBe(2_145_600_000);
    expect(Duration.toMillis(reconnectWait(3_600_000, 596))).toBe(timerMaxMs);
    expect(Duration.toMillis(reconnectWait(3_600_000, 999))).toBe(timerMaxMs);
  });
});
