// What the terminal index has not written yet is served from memory, and memory lets go of an id
// only once the last commit that set it is written: a job given a result, or let go of again, by a
// commit queued behind the written batch stays; everything else goes (docs/engine.md, "The
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
  it("serves a job and a later result until the commits that set them are written", () => {
    const pending = new PendingTerminal();
    const first = { jobs: [completed(1), completed(2)], results: [] };
    expect(pending.add(first)).toBe(1);
    // Job 1's result joins its pending record; job 3's is for a job written before.
    const second = { jobs: [], results: [result(1, 10), result(3, 30)] };
    expect(pending.add(second)).toBe(2);
    expect(pending.job(1)?.result).toEqual({ value: 10, at: 4_000 });
    expect(pending.job(2)?.result).toBeNull();
    expect(pending.result(3)?.result).toBe(30);
    expect(pending.size).toBe(3);
    // Commit 1 written, commit 2 not: job 1 was set again by 2 and stays; job 2 goes.
    pending.written([first], 1);
    expect(pending.job(1)?.result).toEqual({ value: 10, at: 4_000 });
    expect(pending.job(2)).toBeUndefined();
    expect(pending.size).toBe(2);
    pending.written([second], 2);
    expect(pending.job(1)).toBeUndefined();
    expect(pending.result(3)).toBeUndefined();
    expect(pending.size).toBe(0);
  });

  it("keeps a job let go of again by a later commit (redriven, then finished again)", () => {
    const pending = new PendingTerminal();
    const once = { jobs: [completed(5, 1)], results: [] };
    const again = { jobs: [completed(5, 2)], results: [] };
    pending.add(once);
    pending.add(again);
    pending.written([once], 1);
    expect(pending.job(5)?.attempt).toBe(2);
    pending.written([again], 2);
    expect(pending.job(5)).toBeUndefined();
  });

  it("lets go of everything up to a commit once a rebuild holds it, and nothing after", () => {
    const pending = new PendingTerminal();
    pending.add({ jobs: [completed(1)], results: [] });
    pending.add({ jobs: [completed(2)], results: [result(7, 70)] });
    pending.add({ jobs: [completed(3)], results: [] });
    pending.writtenUpTo(2);
    expect([pending.job(1), pending.job(2), pending.result(7)]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(pending.job(3)?.jobId).toBe(3);
    expect(pending.commits).toBe(3);
  });
});
