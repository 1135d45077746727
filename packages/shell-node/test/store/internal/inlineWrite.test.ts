// Proves the rule for durable writes on the caller's thread (docs/disk.md, "Durable writes on the
// caller's thread"): only a write the policy waits for (`Maximal`'s O_DSYNC write, of at most one
// page; `Segment`'s page-cache write, of at most 64 KiB), with nothing pending behind it, and not
// while held; a slow inline write holds the path off for at
// least `inlineHoldMs` and until a write in the pool is fast again; a second inline write in one
// turn of the event loop waits for the next. Pure, times passed in.
import { describe, expect, it } from "@effect/vitest";
import * as InlineWrite from "../../../src/store/internal/inlineWrite.js";

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

  it("a slow inline write holds the path off until the hold passed and a pool write is fast", () => {
    const record = InlineWrite.makeRecord();
    InlineWrite.note(record, 0, 0.4);
    expect(InlineWrite.mayInline(record, small)).toBe(true);
    InlineWrite.note(record, 10, 10 + InlineWrite.inlineSlowMs + 1);
    expect(record).toMatchObject({ writes: 2, slow: 1, slowestMs: InlineWrite.inlineSlowMs + 1 });
    expect(InlineWrite.mayInline(record, small)).toBe(false);
    const slowEnd = 10 + InlineWrite.inlineSlowMs + 1;
    // A fast pool write inside the hold does not lift it.
    InlineWrite.notePoolStart(record, slowEnd + 1);
    InlineWrite.notePoolEnd(record, slowEnd + 1.5);
    expect(InlineWrite.mayInline(record, small)).toBe(false);
    // A slow pool write after the hold does not lift it either.
    const afterHold = slowEnd + InlineWrite.inlineHoldMs;
    InlineWrite.notePoolStart(record, afterHold);
    InlineWrite.notePoolEnd(record, afterHold + InlineWrite.inlineSlowMs + 1);
    expect(InlineWrite.mayInline(record, small)).toBe(false);
    // An answer with no pool write started (an inline write's own) lifts nothing.
    InlineWrite.notePoolEnd(record, afterHold + 10);
    expect(InlineWrite.mayInline(record, small)).toBe(false);
    // A fast one after the hold does.
    InlineWrite.notePoolStart(record, afterHold + 20);
    InlineWrite.notePoolEnd(record, afterHold + 20.5);
    expect(InlineWrite.mayInline(record, small)).toBe(true);
  });

  it("plans at most one inline write per turn of the loop", () => {
    const record = InlineWrite.makeRecord();
    expect(InlineWrite.plan(record, small)).toBe("Now");
    record.turnUsed = true;
    expect(InlineWrite.plan(record, small)).toBe("NextTurn");
    expect(InlineWrite.plan(record, { ...small, pendingRecords: 1 })).toBe("Pool");
    record.held = true;
    expect(InlineWrite.plan(record, small)).toBe("Pool");
  });

  it("doubles the hold while the disk stays slow, and starts over after a run of fast writes", () => {
    const record = InlineWrite.makeRecord();
    const slow = InlineWrite.inlineSlowMs + 1;
    const holds: Array<number> = [];
    let time = 0;
    for (let index = 0; index < 10; index++) {
      InlineWrite.note(record, time, time + slow);
      holds.push(record.heldUntil - (time + slow));
      time = record.heldUntil + 1;
      record.held = false;
    }
    expect(holds).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 6400, 6400, 6400]);
    for (let index = 0; index < InlineWrite.fastWritesToReset; index++) {
      InlineWrite.note(record, time, time + 0.3);
    }
    InlineWrite.note(record, time, time + slow);
    expect(record.heldUntil - (time + slow)).toBe(InlineWrite.inlineHoldMs);
  });
});
