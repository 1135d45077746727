// Proves the rule for durable writes on the caller's thread (docs/disk.md, "Durable writes on the
// caller's thread"): only a write the policy waits for (`Maximal`'s O_DSYNC write, of at most one
// page; `Segment`'s page-cache write, of at most 64 KiB), with nothing pending behind it, and not
// while held; a slow inline write spends its time from a budget that refills at a rate, and only
// an overdrawn budget holds the path off (until it has refilled to zero), which bounds the loop's
// time in slow writes over any span; a second write on the caller's thread in one turn of the
// event loop waits for the next, unless the policy's writes chain (within a budget). Pure, times
// passed in.
import { describe, expect, it } from "@effect/vitest";
import * as InlineWrite from "../../../src/store/internal/inlineWrite.js";
import { appendOptions, durabilityPolicies } from "../../../src/store/StoreOptions.js";

const small = { bytesMax: InlineWrite.inlineBytesMax, bytes: 130, pendingRecords: 0 };

describe("the inline write rule", () => {
  it("takes a lone small durable write", () => {
    expect(InlineWrite.mayInline(InlineWrite.makeRecord(), small)).toBe(true);
    const page = { ...small, bytes: InlineWrite.inlineBytesMax };
    expect(InlineWrite.mayInline(InlineWrite.makeRecord(), page)).toBe(true);
  });

  it("bounds each policy's inline batch: a page under Maximal, 64 KiB under Segment, none else", () => {
    expect(InlineWrite.bytesMaxFor("Maximal", true)).toBe(InlineWrite.inlineBytesMax);
    expect(InlineWrite.bytesMaxFor("Segment", false)).toBe(InlineWrite.inlineBufferedBytesMax);
    expect(InlineWrite.inlineBufferedBytesMax).toBe(64 * 1024);
    // Not durable on return; written inline by the handle itself; not a page-cache write.
    expect(InlineWrite.bytesMaxFor("Maximal", false)).toBe(0);
    expect(InlineWrite.bytesMaxFor("Throughput", false)).toBe(0);
    expect(InlineWrite.bytesMaxFor("Segment", true)).toBe(0);
    const buffered = { ...small, bytesMax: InlineWrite.inlineBufferedBytesMax };
    const record = InlineWrite.makeRecord();
    expect(InlineWrite.mayInline(record, { ...buffered, bytes: 64 * 1024 })).toBe(true);
    expect(InlineWrite.mayInline(record, { ...buffered, bytes: 64 * 1024 + 1 })).toBe(false);
  });

  it("leaves to the pool a write of a policy without the path, a larger one, or one with work behind it", () => {
    const record = InlineWrite.makeRecord();
    expect(InlineWrite.mayInline(record, { ...small, bytesMax: 0 })).toBe(false);
    expect(InlineWrite.mayInline(record, { ...small, bytes: 0, bytesMax: 0 })).toBe(false);
    expect(InlineWrite.mayInline(record, { ...small, bytes: InlineWrite.inlineBytesMax + 1 })).toBe(
      false,
    );
    expect(InlineWrite.mayInline(record, { ...small, pendingRecords: 1 })).toBe(false);
  });

  it("spends a slow write's time from the budget, and holds the path off only once it is overdrawn", () => {
    const record = InlineWrite.makeRecord();
    InlineWrite.note(record, 0, 0.4);
    expect(record).toMatchObject({ writes: 1, slow: 0, budgetMs: InlineWrite.slowBudgetMs });
    // The odd slow write of a healthy device: spent, not held.
    const slow = InlineWrite.inlineSlowMs + 1;
    InlineWrite.note(record, 10, 10 + slow);
    expect(record).toMatchObject({ writes: 2, slow: 1, slowestMs: slow, held: false });
    expect(record.budgetMs).toBeCloseTo(InlineWrite.slowBudgetMs - slow);
    expect(InlineWrite.mayInline(record, small)).toBe(true);
    // A write that overdraws it by 10 ms holds the path until 10 ms have refilled.
    const long = InlineWrite.slowBudgetMs + 10;
    InlineWrite.note(record, 20, 20 + long);
    expect(record.held).toBe(true);
    expect(InlineWrite.mayInline(record, small)).toBe(false);
    const overdrawn = -record.budgetMs;
    expect(overdrawn).toBeGreaterThan(10);
    const until = 20 + long + overdrawn / InlineWrite.slowBudgetRate;
    expect(record.heldUntil).toBeCloseTo(until);
    InlineWrite.lift(record, until - 1);
    expect(InlineWrite.mayInline(record, small)).toBe(false);
    InlineWrite.lift(record, until);
    expect(InlineWrite.mayInline(record, small)).toBe(true);
  });

  it("refills at its rate up to its capacity, never past it", () => {
    const record = InlineWrite.makeRecord();
    const slow = 10;
    InlineWrite.note(record, 0, slow);
    expect(record.budgetMs).toBe(InlineWrite.slowBudgetMs - slow);
    // 100 ms later 5 ms have come back (at 5%), then the next 10 are spent.
    InlineWrite.note(record, slow + 100, slow + 100 + slow);
    expect(record.budgetMs).toBeCloseTo(
      InlineWrite.slowBudgetMs - slow + 100 * InlineWrite.slowBudgetRate - slow,
    );
    // A long quiet spell refills it to its capacity only.
    InlineWrite.note(record, 1_000_000, 1_000_000 + slow);
    expect(record.budgetMs).toBe(InlineWrite.slowBudgetMs - slow);
  });

  it("bounds the loop's time in slow writes by the capacity and the rate over any span", () => {
    // A disk whose every write takes 30 ms, written inline whenever the rule lets it.
    const record = InlineWrite.makeRecord();
    const slow = 30;
    let time = 0;
    let waited = 0;
    const span = 60_000;
    while (time < span) {
      InlineWrite.lift(record, time);
      if (InlineWrite.mayInline(record, small)) {
        InlineWrite.note(record, time, time + slow);
        waited += slow;
        time += slow;
      } else {
        time += 1;
      }
    }
    // The bound, plus the one write that overdraws the budget.
    expect(waited).toBeLessThanOrEqual(
      InlineWrite.slowBudgetMs + InlineWrite.slowBudgetRate * span + slow,
    );
    // And the path is probed again: more than one write a hold's worth of time.
    expect(waited).toBeGreaterThan(InlineWrite.slowBudgetRate * span * 0.8);
  });

  it("plans at most one write per turn of the loop for a policy that does not chain", () => {
    const record = InlineWrite.makeRecord();
    expect(InlineWrite.turnPlan(record, 100, false)).toBe("Starts");
    expect(InlineWrite.turnPlan(record, 100, false)).toBe("NextTurn");
    InlineWrite.endTurn(record);
    expect(InlineWrite.turnPlan(record, 300, false)).toBe("Starts");
  });

  it("plans more writes in a turn, within the chain budget, for a policy that chains", () => {
    expect([
      InlineWrite.chains("Segment"),
      InlineWrite.chains("Throughput"),
      InlineWrite.chains("Maximal"),
    ]).toEqual([true, true, false]);
    const record = InlineWrite.makeRecord();
    const budget = InlineWrite.chainBudgetMs;
    expect(InlineWrite.turnPlan(record, 100, true)).toBe("Starts");
    expect(InlineWrite.turnPlan(record, 100 + budget, true)).toBe("Now");
    expect(InlineWrite.turnPlan(record, 100.01 + budget, true)).toBe("NextTurn");
    InlineWrite.endTurn(record);
    expect(InlineWrite.turnPlan(record, 200, true)).toBe("Starts");
  });

  it("counts the handle's own writes on the caller's thread only where it makes them", () => {
    expect([
      InlineWrite.handleWritesInline("Throughput"),
      InlineWrite.handleWritesInline("Segment"),
      InlineWrite.handleWritesInline("Maximal"),
    ]).toEqual([true, false, false]);
    for (const durability of durabilityPolicies) {
      expect(InlineWrite.handleWritesInline(durability)).toBe(
        appendOptions(durability).inlineWrites === true,
      );
    }
  });

  it("holds the path off while the budget is overdrawn, and leaves work behind it to the pool", () => {
    const record = InlineWrite.makeRecord();
    expect(InlineWrite.mayInline(record, small)).toBe(true);
    expect(InlineWrite.mayInline(record, { ...small, pendingRecords: 1 })).toBe(false);
    record.held = true;
    expect(InlineWrite.mayInline(record, small)).toBe(false);
  });
});
