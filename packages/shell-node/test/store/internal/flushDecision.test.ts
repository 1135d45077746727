// Proves the writer's flush decision for every policy of the seed's vocabulary: nothing pending
// waits, a forced flush always writes, and each trigger (count, interval, minimum, safety valve)
// fires exactly at its threshold. Worked examples at and around each threshold.
import { describe, expect, it } from "@effect/vitest";
import { decide } from "../../../src/store/internal/flushDecision.js";
import * as StoreOptions from "../../../src/store/StoreOptions.js";

const at = (pendingRecords: number, now: number, forced = false) => ({
  pendingRecords,
  lastFlushAt: 1000,
  now,
  forced,
});

describe("decide", () => {
  it("waits with nothing pending, and flushes anything pending when forced", () => {
    for (const policy of [StoreOptions.Immediate, StoreOptions.Manual, StoreOptions.Batch(5)]) {
      expect(decide(policy, at(0, 5000, true))).toEqual({ _tag: "Wait" });
      expect(decide(policy, at(1, 1000, true))).toEqual({ _tag: "Now" });
    }
  });

  it("Immediate flushes at once; Manual never on its own", () => {
    expect(decide(StoreOptions.Immediate, at(1, 1000))).toEqual({ _tag: "Now" });
    expect(decide(StoreOptions.Manual, at(1_000_000, 1e9))).toEqual({ _tag: "Wait" });
  });

  it("Batch(n) at n records", () => {
    expect(decide(StoreOptions.Batch(3), at(2, 9999))).toEqual({ _tag: "Wait" });
    expect(decide(StoreOptions.Batch(3), at(3, 1000))).toEqual({ _tag: "Now" });
  });

  it("Interval(ms) once ms have passed since the last flush", () => {
    expect(decide(StoreOptions.Interval(50), at(1, 1049))).toEqual({ _tag: "At", at: 1050 });
    expect(decide(StoreOptions.Interval(50), at(1, 1050))).toEqual({ _tag: "Now" });
  });

  it("BatchOrInterval on whichever fires first", () => {
    const policy = StoreOptions.BatchOrInterval(3, 50);
    expect(decide(policy, at(3, 1000))).toEqual({ _tag: "Now" });
    expect(decide(policy, at(1, 1050))).toEqual({ _tag: "Now" });
    expect(decide(policy, at(2, 1010))).toEqual({ _tag: "At", at: 1050 });
  });

  it("BatchOrIntervalMin: the interval needs the minimum, the safety valve does not", () => {
    const policy = StoreOptions.BatchOrIntervalMin({
      batchRecords: 10,
      batchRecordsMin: 3,
      intervalMs: 50,
      intervalMsMax: 200,
    });
    expect(decide(policy, at(10, 1000))).toEqual({ _tag: "Now" });
    expect(decide(policy, at(3, 1050))).toEqual({ _tag: "Now" });
    expect(decide(policy, at(3, 1020))).toEqual({ _tag: "At", at: 1050 });
    expect(decide(policy, at(2, 1100))).toEqual({ _tag: "At", at: 1200 });
    expect(decide(policy, at(1, 1200))).toEqual({ _tag: "Now" });
  });
});
