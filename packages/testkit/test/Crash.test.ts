// Proves the fast-check face of the crash harness: `crashProperty` holds for a toy log store
// with a correct protocol, and for a buggy one it fails and shrinks the workload to one value.
import { describe, expect, it } from "vitest";
import * as fc from "fast-check";
import { appendLog, checkLog, setup } from "../../shell-node/test/support/toyLog.js";
import * as Crash from "../src/Crash.js";

describe("crashProperty", () => {
  const appended = fc.array(fc.integer({ min: 1, max: 1000 }), { maxLength: 6 });

  it("holds for the correct protocol", async () => {
    await fc.assert(
      Crash.crashProperty(appended, (generated) => ({
        workload: appendLog("correct", generated),
        check: checkLog,
        setup,
      })),
      { numRuns: 25 },
    );
  });

  it("shrinks a buggy protocol to a one-value workload", async () => {
    const result = await fc.check(
      Crash.crashProperty(appended, (generated) => ({
        workload: appendLog("acknowledgeBeforeSync", generated),
        check: checkLog,
        setup,
      })),
      { numRuns: 50, seed: 2026 },
    );
    expect(result.failed).toBe(true);
    expect(result.counterexample?.[0]).toHaveLength(1);
    expect(String(result.errorInstance)).toContain("cut point 3 (before sync /store/log");
  });
});
