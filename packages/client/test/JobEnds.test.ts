// JobEnds' contract with its source, over a source driven by hand (the
// engine's and the client's are tested for real in shell-node's
// JobEnd.test.ts and Client.test.ts): a call reads its job only once the
// watch is ready (else an end committed between the read and the stream's
// start is missed), a watch that fails rejects the calls waiting on it,
// only batches that finish or cancel a waited job (also inside a mutation)
// cause a read, and close rejects every waiting call.
import { Event, Job } from "@tay/core";
import { describe, expect, it } from "vitest";
import { JobEnds, UnknownJob } from "../src/JobEnds.js";

const jobIn = (jobId: number, state: Job.Job["state"]): Job.Job => {
  const inserted = Job.fromInserted(
    Event.jobInserted({
      jobId,
      queue: "q",
      worker: "W",
      args: null,
      priority: 0,
      maxAttempts: 1,
      insertedAt: 0,
      scheduledAt: 0,
    }),
  );
  return { ...inserted, state };
};

/** A source whose readiness, jobs and batches the test drives. */
const handSource = () => {
  let listener: ((events: ReadonlyArray<Event.Event>) => void) | undefined;
  let onMissed: (() => void) | undefined;
  let open: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  const states = new Map<number, Job.Job["state"]>();
  const reads: Array<number> = [];
  let watches = 0;
  const source = {
    watch: (told: (events: ReadonlyArray<Event.Event>) => void, missed: () => void) => {
      watches += 1;
      listener = told;
      onMissed = missed;
      const ready = new Promise<void>((resolve, reject) => {
        open = { resolve, reject };
      });
      return {
        ready,
        stop: () => {
          watches -= 1;
          listener = undefined;
        },
      };
    },
    job: (jobId: number) => {
      reads.push(jobId);
      const state = states.get(jobId);
      return state === undefined ? undefined : jobIn(jobId, state);
    },
  };
  return {
    source,
    states,
    reads,
    watches: () => watches,
    ready: () => open?.resolve(),
    fail: (error: unknown) => open?.reject(error),
    tell: (events: ReadonlyArray<Event.Event>) => listener?.(events),
    missed: () => onMissed?.(),
  };
};

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("JobEnds", () => {
  it("reads a job only once its watch is ready, and only on its end", async () => {
    const hand = handSource();
    const ends = new JobEnds(hand.source);
    hand.states.set(1, "executing");
    const waited = ends.whenEnded(1);
    await tick();
    expect(hand.reads).toEqual([]);
    hand.ready();
    await tick();
    expect(hand.reads).toEqual([1]);
    // A retry and another job's end cause no read.
    hand.tell([Event.jobRetried({ jobId: 1, at: 1, error: "x", retryAt: 2 })]);
    hand.tell([Event.jobCancelled({ jobId: 2, at: 1, reason: null })]);
    expect(hand.reads).toEqual([1]);
    hand.states.set(1, "completed");
    hand.tell([
      Event.mutation([Event.jobFinished({ jobId: 1, at: 3, outcome: "completed", error: null })]),
    ]);
    expect((await waited).state).toBe("completed");
    expect(hand.reads).toEqual([1, 1]);
    expect(hand.watches()).toBe(0);
  });

  it("rejects the calls of a watch that fails, an unknown job, and every call at close", async () => {
    const hand = handSource();
    const ends = new JobEnds(hand.source);
    const first = ends.whenEnded(1);
    hand.fail(new Error("no stream"));
    await expect(first).rejects.toThrow("no stream");
    expect(ends.waiting).toBe(0);
    const unknown = ends.whenEnded(7);
    hand.ready();
    await expect(unknown).rejects.toBeInstanceOf(UnknownJob);
    hand.states.set(3, "available");
    const open = [ends.whenEnded(3), ends.whenEnded(3)];
    hand.ready();
    await tick();
    ends.close(new Error("closed"));
    for (const call of open) await expect(call).rejects.toThrow("closed");
    expect(ends.waiting).toBe(0);
    expect(hand.watches()).toBe(0);
  });

  it("reads every waiting job again when its watch may have missed commits", async () => {
    const hand = handSource();
    const ends = new JobEnds(hand.source);
    hand.states.set(1, "executing");
    hand.states.set(2, "available");
    const first = ends.whenEnded(1);
    const second = ends.whenEnded(2);
    hand.ready();
    await tick();
    expect(hand.reads).toEqual([1, 2]);
    // Job 1 ended in a gap the watch never told (its place was compacted away).
    hand.states.set(1, "discarded");
    hand.missed();
    expect((await first).state).toBe("discarded");
    expect(hand.reads).toEqual([1, 2, 1, 2]);
    expect(ends.waiting).toBe(1);
    ends.close(new Error("closed"));
    await expect(second).rejects.toThrow("closed");
  });
});
