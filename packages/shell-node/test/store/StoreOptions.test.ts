// Proves options resolve to the documented defaults and that every out-of-range value is refused
// by name rather than silently clamped. Worked examples over each field and flush policy.
import { Either } from "effect";
import { describe, expect, it } from "@effect/vitest";
import * as StoreOptions from "../../src/store/StoreOptions.js";

const gigabyte = 1_073_741_824;

describe("StoreOptions.resolve", () => {
  it("fills the defaults: Maximal, Immediate, 64 MiB rotation", () => {
    expect(StoreOptions.resolve({}, gigabyte)).toEqual(Either.right(StoreOptions.defaults));
    expect(StoreOptions.defaults).toMatchObject({
      durability: "Maximal",
      flush: { _tag: "Immediate" },
      rotationTargetBytes: 64 * 1024 * 1024,
    });
    const partial = StoreOptions.resolve({ budgets: { historyRecords: 5 } }, gigabyte);
    expect(partial).toMatchObject({
      right: { budgets: { ...StoreOptions.defaultBudgets, historyRecords: 5 } },
    });
  });

  it("refuses each out-of-range value by name", () => {
    const refused = (input: StoreOptions.StoreOptionsInput) => {
      const resolved = StoreOptions.resolve(input, gigabyte);
      return Either.isLeft(resolved) ? resolved.left.option : "accepted";
    };
    expect(refused({ rotationTargetBytes: gigabyte + 1 })).toBe("rotationTargetBytes");
    expect(refused({ rotationTargetBytes: 0 })).toBe("rotationTargetBytes");
    expect(refused({ storeBytesMax: -1 })).toBe("storeBytesMax");
    expect(refused({ pendingBytesMax: 1.5 })).toBe("pendingBytesMax");
    expect(refused({ writeBytesMax: 0 })).toBe("writeBytesMax");
    expect(refused({ budgets: { bytesDecoded: -1 } })).toBe("budgets.bytesDecoded");
    expect(refused({ flush: StoreOptions.Batch(0) })).toBe("flush.batchRecords");
    expect(refused({ flush: StoreOptions.Interval(-5) })).toBe("flush.intervalMs");
    expect(refused({ flush: StoreOptions.BatchOrInterval(10, 0) })).toBe("flush.intervalMs");
    expect(
      refused({
        flush: StoreOptions.BatchOrIntervalMin({
          batchRecords: 10,
          batchRecordsMin: 2,
          intervalMs: 100,
          intervalMsMax: 50,
        }),
      }),
    ).toBe("flush.intervalMsMax");
    expect(refused({ rotationTargetBytes: gigabyte, flush: StoreOptions.Manual })).toBe("accepted");
  });
});

describe("StoreOptions.appendOptions", () => {
  // O_DSYNC only under Maximal; writes on the caller's thread only under Throughput, whose files
  // are never synced (a write to a file being synced could wait for its writeback).
  it("opens the active segment with O_DSYNC under Maximal, inline writes under Throughput", () => {
    expect(StoreOptions.appendOptions("Maximal")).toEqual({ dataSync: true, inlineWrites: false });
    expect(StoreOptions.appendOptions("Segment")).toEqual({ dataSync: false, inlineWrites: false });
    expect(StoreOptions.appendOptions("Throughput")).toEqual({
      dataSync: false,
      inlineWrites: true,
    });
  });
});
