// What the terminal index has not written yet is served from memory, encoded as its entries, and
// memory lets go of an id only once the chunk that last set it is written: a job given a result, or
// let go of again, by a commit in a later chunk stays; everything else goes (docs/engine.md, "The
// terminal index's writes").
import { Event, Job } from "@tay/core";
import { describe, expect, it } from "vitest";
import { PendingTerminal } from "../../../src/engine/internal/pendingTerminal.js";

const completed = (jobId: number, attempt = 1): Job.Job =>
  Job.fromSnapshot({
    jobId,
    queue: "q",
    worker: "W",
    args: new Map([["jobId", jobId]]),
    priority: 0,
    maxAttempts: 3,
    attempt,
    state: "completed",
    insertedAt: 1_000,
    scheduledAt: 1_000,
    attemptedAt: 2_000,
    finishedAt: 3_000,
    errors: [],
  });

const result = (jobId: number, value: number) =>
  Event.resultRecorded({ jobId, result: value, at: 4_000 });

describe("what the terminal index has not written yet", () => {
  it("serves a job and a later result until the chunks that set them are written", () => {
    const pending = new PendingTerminal();
    expect(pending.add({ jobs: [completed(1), completed(2)], results: [] })).toBeUndefined();
    const first = pending.seal();
    // Job 1's result joins its pending record; job 3's is for a job written before.
    pending.add({ jobs: [], results: [result(1, 10), result(3, 30)] });
    expect(pending.openEntries).toBe(2);
    expect(pending.job(1)?.result).toEqual({ value: 10, at: 4_000 });
    expect(pending.job(2)?.result).toBeNull();
    expect(pending.job(2)?.args).toEqual(new Map([["jobId", 2]]));
    expect(pending.result(3)?.result).toBe(30);
    expect(pending.result(1)).toBeUndefined();
    expect(pending.size).toBe(4);
    // The first chunk written, the second not: job 1's result stays, served for the written job.
    if (first === undefined) throw new Error("nothing sealed");
    pending.written(first);
    expect(pending.job(1)).toBeUndefined();
    expect(pending.result(1)?.result).toBe(10);
    expect(pending.job(2)).toBeUndefined();
    expect(pending.size).toBe(2);
    const second = pending.seal();
    if (second === undefined) throw new Error("nothing sealed");
    expect(pending.seal()).toBeUndefined();
    pending.written(second);
    expect([pending.result(1), pending.result(3), pending.size]).toEqual([undefined, undefined, 0]);
  });

  it("keeps a job let go of again by a later chunk (redriven, then finished again)", () => {
    const pending = new PendingTerminal();
    pending.add({ jobs: [completed(5, 1)], results: [] });
    const once = pending.seal();
    pending.add({ jobs: [completed(5, 2)], results: [] });
    if (once === undefined) throw new Error("nothing sealed");
    pending.written(once);
    expect(pending.job(5)?.attempt).toBe(2);
    const again = pending.seal();
    if (again === undefined) throw new Error("nothing sealed");
    pending.written(again);
    expect(pending.job(5)).toBeUndefined();
  });

  it("lets go of every chunk sealed once a rebuild holds them, and of nothing after", () => {
    const pending = new PendingTerminal();
    pending.add({ jobs: [completed(1)], results: [] });
    pending.seal();
    pending.add({ jobs: [completed(2)], results: [result(7, 70)] });
    const dropped = pending.sealAll();
    expect(dropped).toHaveLength(2);
    pending.add({ jobs: [completed(3)], results: [] });
    for (const chunk of dropped) pending.written(chunk);
    expect([pending.job(1), pending.job(2), pending.result(7)]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(pending.job(3)?.jobId).toBe(3);
    expect(pending.size).toBe(1);
    // Written chunks are not held again: the next rebuild holds only the open one.
    expect(pending.sealAll()).toHaveLength(1);
  });

  it("adds nothing of a commit whose entries do not encode, and says why", () => {
    const pending = new PendingTerminal();
    const bad = { ...completed(8), args: Number.NaN };
    expect(pending.add({ jobs: [completed(9), bad], results: [] })).toMatch(/^job 8: /);
    expect([pending.job(9), pending.size, pending.openEntries, pending.seal()]).toEqual([
      undefined,
      0,
      0,
      undefined,
    ]);
  });
});
