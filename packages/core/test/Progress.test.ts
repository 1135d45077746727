// A running attempt's progress: accepted only for the attempt a job executes now, in canonical
// form and within its bound; refused with the rejection a late `complete` gets otherwise.
import { type Event, Progress, Value } from "@tay/core";
import * as Either from "fp-ts/lib/Either.js";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  available,
  cancelled,
  completed,
  inserted,
  retried,
  started,
  stateOf,
} from "./support/Given.js";

const report = (fields: Partial<Progress.Report> = {}): Progress.Report => ({
  jobId: 1,
  attempt: 1,
  value: 50,
  at: 7,
  ...fields,
});

const sizeOf = (value: Value.Value): number => {
  const canonical = Value.canonical(value);
  return canonical._tag === "Canonical" ? canonical.bytes : -1;
};

const executing = stateOf([inserted(1), started(1, 1)]);

describe("Progress.report", () => {
  it("holds a value of the attempt the job executes, in canonical form, with its size", () => {
    const held = Progress.report(executing, report({ value: { done: 3, of: 10 } }));
    expect(held).toEqual(
      Either.right({
        jobId: 1,
        attempt: 1,
        value: new Map([
          ["done", 3],
          ["of", 10],
        ]),
        at: 7,
        bytes: sizeOf(
          new Map([
            ["done", 3],
            ["of", 10],
          ]),
        ),
      }),
    );
  });

  it("refuses another attempt, or a job that is not executing, as StaleAttempt", () => {
    expect(Progress.report(executing, report({ attempt: 2 }))).toEqual(
      Either.left({
        _tag: "StaleAttempt",
        jobId: 1,
        attempt: 2,
        currentAttempt: 1,
        state: "executing",
      }),
    );
    for (const [events, state] of [
      [[inserted(1)], "available"],
      [[inserted(1), started(1), completed(1)], "completed"],
      [[inserted(1), started(1), retried(1)], "retryable"],
      [[inserted(1), started(1), cancelled(1)], "cancelled"],
    ] as const) {
      const refused = Progress.report(stateOf(events), report());
      expect(refused).toEqual(
        Either.left({
          _tag: "StaleAttempt",
          jobId: 1,
          attempt: 1,
          currentAttempt: state === "available" ? 0 : 1,
          state,
        }),
      );
    }
  });

  it("refuses a job the state does not have, and fields out of their kinds", () => {
    expect(Progress.report(executing, report({ jobId: 2 }))).toEqual(
      Either.left({ _tag: "JobNotFound", jobId: 2 }),
    );
    expect(Progress.report(executing, report({ attempt: 0 }))).toMatchObject(
      Either.left({ _tag: "InvalidField", field: "attempt" }),
    );
    expect(Progress.report(executing, report({ at: -1 }))).toMatchObject(
      Either.left({ _tag: "InvalidField", field: "at" }),
    );
  });

  it("names the path inside the value that is not one, and refuses one past 64 KiB", () => {
    expect(
      Progress.report(executing, report({ value: { step: { at: new Date(0) } } })),
    ).toMatchObject(Either.left({ _tag: "InvalidField", field: "progress.step.at" }));
    const big = "x".repeat(Progress.progressBytesMax);
    expect(Progress.report(executing, report({ value: big }))).toEqual(
      Either.left({
        _tag: "TooLarge",
        bytes: Progress.progressBytesMax + 5,
        limit: Progress.progressBytesMax,
      }),
    );
    const fits = "x".repeat(Progress.progressBytesMax - 5);
    expect(Either.isRight(Progress.report(executing, report({ value: fits })))).toBe(true);
  });
});

describe("Progress.isCurrent", () => {
  it("is true exactly while the job executes the attempt the report was taken for", () => {
    // Histories of one job: each prefix's state against a report taken at each attempt.
    const steps: ReadonlyArray<Event.Event> = [
      inserted(1, { maxAttempts: 3 }),
      started(1, 1),
      retried(1, 0),
      available(1),
      started(1, 2),
      completed(1),
    ];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: steps.length }),
        fc.integer({ min: 1, max: 3 }),
        (length, attempt) => {
          const state = stateOf(steps.slice(0, length));
          const progress: Progress.Progress = { jobId: 1, attempt, value: 1, at: 0, bytes: 9 };
          const job = state.jobs.get(1);
          const running = job?.state === "executing" && job.attempt === attempt;
          expect(Progress.isCurrent(state, progress)).toBe(running);
          expect(Either.isRight(Progress.report(state, report({ attempt })))).toBe(running);
        },
      ),
    );
  });
});
