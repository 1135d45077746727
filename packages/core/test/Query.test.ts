// The query helpers agree with naive scans of every job and schedule, on
// states reached by random legal command sequences; the next wake-up time
// is the earliest pending job or active schedule.
import { Commands, Decide, Event, Evolve, Query, State } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { checkpoint, given, inserted, started } from "./support/Given.js";
import { insertedV3 } from "./support/GivenV3.js";

const queues = ["a", "b"];

const command = fc.oneof(
  fc
    .record({
      queue: fc.constantFrom(...queues),
      priority: fc.integer({ min: 0, max: 2 }),
      delay: fc.integer({ min: 0, max: 20 }),
    })
    .map(
      ({ queue, priority, delay }) =>
        (now: number) =>
          Commands.insertJobs({
            now,
            jobs: [{ queue, worker: "W", args: null, priority, scheduledAt: now + delay }],
          }),
    ),
  fc
    .constantFrom(...queues)
    .map((queue) => (now: number) => Commands.claimJobs({ now, queue, limit: 2 })),
  fc.constant((now: number) => Commands.makeDueAvailable({ now })),
  fc.constant((now: number) => Commands.rescueJobs({ now, startedBefore: now, error: "lost" })),
  fc.constant((now: number) => Commands.tick({ now })),
);

const run = (steps: ReadonlyArray<(now: number) => Commands.Command>): State.State => {
  let state = given(
    checkpoint("s", { nextDueAt: 30, definition: checkpoint("s").definition }),
  ).state;
  steps.forEach((step, index) => {
    const decision = Decide.decide(state, step(index * 10));
    if (Either.isLeft(decision)) return;
    const evolved = Evolve.evolveAll(state, decision.right);
    if (Either.isLeft(evolved)) throw new Error("decided records were refused");
    state = evolved.right;
  });
  return state;
};

describe("Query", () => {
  it("agrees with naive scans (property)", () => {
    fc.assert(
      fc.property(fc.array(command, { maxLength: 40 }), (steps) => {
        const state = run(steps);
        const jobs = [...State.jobs(state)];
        for (const queue of [...queues, "reports"]) {
          const counts = Query.countsOf(state, queue);
          for (const jobState of Event.jobStates) {
            const naive = jobs.filter((job) => job.queue === queue && job.state === jobState);
            expect(counts[jobState]).toBe(naive.length);
            expect(Query.jobsIn(state, jobState, queue)).toEqual(naive);
          }
          const claimOrder = jobs
            .filter((job) => job.queue === queue && job.state === "available")
            .sort(
              (x, y) =>
                x.priority - y.priority || x.scheduledAt - y.scheduledAt || x.jobId - y.jobId,
            );
          expect(Query.available(state, queue, 3)).toEqual(claimOrder.slice(0, 3));
        }
        for (const jobState of Event.jobStates) {
          expect(Query.jobsIn(state, jobState)).toEqual(
            jobs.filter((job) => job.state === jobState),
          );
          expect(Query.totals(state)[jobState]).toBe(
            jobs.filter((job) => job.state === jobState).length,
          );
        }
        const pending = jobs
          .filter((job) => job.state === "scheduled" || job.state === "retryable")
          .map((job) => job.scheduledAt);
        const due = [...State.schedules(state)]
          .filter((schedule) => schedule.cancelledAt === null)
          .map((schedule) => schedule.nextDueAt);
        const all = [...pending, ...due];
        expect(Query.nextWakeAt(state)).toBe(all.length === 0 ? null : Math.min(...all));
        expect([...Query.counts(state).keys()]).toEqual(Query.queues(state));
      }),
      { numRuns: 60 },
    );
  });

  it("next wake-up: null when nothing is pending", () => {
    expect(Query.nextWakeAt(State.initialState)).toBeNull();
    expect(Query.nextWakeAt(given(inserted(1, { scheduledAt: 9 })).state)).toBe(9);
    expect(Query.nextWakeAt(given(checkpoint("s", { nextDueAt: 7 })).state)).toBe(7);
    expect(
      Query.nextWakeAt(given(checkpoint("s", { nextDueAt: 7, cancelledAt: 1 })).state),
    ).toBeNull();
  });

  it("next wake-up: an executing attempt's timeout deadline plus the grace", () => {
    const state = given(insertedV3(1, { timeoutMs: 100 }), started(1, 1, 50)).state;
    expect(Query.nextTimeoutAt(state, 5)).toBe(155);
    expect(Query.nextWakeAt(state, 5)).toBe(155);
    expect(Query.nextWakeAt(state)).toBe(150);
  });

  it("available: at most the limit, in claim order, and none for a zero limit", () => {
    const state = given(inserted(1), inserted(2), inserted(3), inserted(4)).state;
    expect(Query.available(state, "default", 0)).toEqual([]);
    expect(Query.available(state, "default", 2).map((job) => job.jobId)).toEqual([1, 2]);
  });

  it("due schedules, available with a zero limit, unknown queues", () => {
    const state = given(checkpoint("s", { nextDueAt: 7 }), inserted(1), started(1)).state;
    expect(Query.dueSchedules(state, 6)).toEqual([]);
    expect(Query.dueSchedules(state, 7).map((schedule) => schedule.scheduleId)).toEqual(["s"]);
    expect(Query.available(state, "default", 0)).toEqual([]);
    expect(Query.countsOf(state, "none").executing).toBe(0);
    expect(Query.jobsIn(state, "executing", "default").map((job) => job.jobId)).toEqual([1]);
  });
});
