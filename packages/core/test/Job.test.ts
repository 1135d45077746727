// The job record's helpers: a snapshot round trip keeps every field but the
// result and schedule (which other base records carry), and `transition`
// is the Either form of the table rows the fold applies.
import { Event, Job } from "@tay/core";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { inserted, retried, started, stateOf } from "./support/Given.js";

describe("Job", () => {
  const job = (() => {
    const found = stateOf([inserted(1, { args: [1, "a"] }), started(1), retried(1, 9, 2)]).jobs.get(
      1,
    );
    if (found === undefined) throw new Error("no job");
    return found;
  })();

  it("round-trips through its snapshot form", () => {
    expect(Job.fromSnapshot(Job.toSnapshot(job))).toEqual(job);
    expect(Job.toSnapshot(job)).toMatchObject({ state: "retryable", attempt: 1, scheduledAt: 9 });
  });

  it("fromInserted follows the (1,1) effect", () => {
    expect(Job.fromInserted(inserted(3, { scheduledAt: 5, insertedAt: 4 }))).toMatchObject({
      state: "scheduled",
      attempt: 0,
      errors: [],
      result: null,
      scheduleId: null,
    });
  });

  it("transition: Right with the new record, Left with the reason; the input is unchanged", () => {
    const made = Job.transition(job, Event.jobAvailable({ jobId: 1, at: 9 }));
    expect(Either.isRight(made) && made.right.state).toBe("available");
    expect(job.state).toBe("retryable");
    expect(Job.transition(job, Event.jobAvailable({ jobId: 1, at: 8 }))).toEqual(
      Either.left({ _tag: "NotDue", jobId: 1, scheduledAt: 9, at: 8 }),
    );
    expect(Job.step(job, started(1, 2))).toMatchObject({ _tag: "IllegalTransition" });
  });

  it("withSchedule, equals, isFinal", () => {
    const member = Job.withSchedule(job, "s");
    expect(member.scheduleId).toBe("s");
    expect(Job.equals(member, job)).toBe(false);
    expect(Job.equals(Job.withSchedule(member, null), job)).toBe(true);
    expect(Job.isFinal(job)).toBe(false);
  });
});
