// The state's accessors and equality: `equals` compares what a history
// determines (ids, jobs, schedules, field by field, values structurally)
// and nothing derived, so equal histories fold to equal states.
import { type Event, State } from "@tay/core";
import { describe, expect, it } from "vitest";
import { checkpoint, completed, inserted, result, started, stateOf } from "./support/Given.js";

describe("State", () => {
  it("the initial state is empty", () => {
    expect(State.initialState.lastJobId).toBe(0);
    expect(State.jobCount(State.initialState)).toBe(0);
    expect([...State.schedules(State.initialState)]).toEqual([]);
  });

  it("reads jobs and schedules by id", () => {
    const state = stateOf([inserted(2), checkpoint("s")]);
    expect(State.job(state, 2)?.jobId).toBe(2);
    expect(State.job(state, 1)).toBeUndefined();
    expect(State.schedule(state, "s")?.revision).toBe(1);
    expect([...State.jobs(state)].map((job) => job.jobId)).toEqual([2]);
  });

  it("equal histories give equal states; values compare structurally", () => {
    const history = (value: Event.ResultRecorded["result"]) => [
      inserted(1, { args: new Map([["a", new Uint8Array([1, 2])]]) }),
      started(1),
      completed(1),
      result(1, value),
    ];
    expect(State.equals(stateOf(history([1, "x"])), stateOf(history([1, "x"])))).toBe(true);
    expect(State.equals(stateOf(history([1, "x"])), stateOf(history([1, "y"])))).toBe(false);
  });

  it.each([
    ["last_job_id", [inserted(2)], [inserted(3)]],
    ["a job field", [inserted(1, { priority: 1 })], [inserted(1, { priority: 2 })]],
    ["a job state", [inserted(1)], [inserted(1), started(1)]],
    ["a schedule field", [checkpoint("s")], [checkpoint("s", { nextDueAt: 9 })]],
    [
      "a definition",
      [checkpoint("s")],
      [checkpoint("s", { definition: { ...checkpoint("s").definition, args: 1 } })],
    ],
    [
      "membership",
      [inserted(1), checkpoint("s")],
      [inserted(1), checkpoint("s", { activeJobIds: [1] })],
    ],
  ])("differs by %s", (_, left, right) => {
    expect(State.equals(stateOf(left), stateOf(right))).toBe(false);
  });
});
