// The state's accessors and equality: `equals` compares what a history
// determines (ids, jobs, schedules, field by field, values structurally)
// and nothing derived, so equal histories fold to equal states.
import { type Event, State } from "@tay/core";
import { describe, expect, it } from "vitest";
import {
  checkpoint,
  completed,
  evolveAll,
  inserted,
  result,
  retried,
  started,
  stateOf,
} from "./support/Given.js";
import { insertedV3 } from "./support/GivenV3.js";

/**
 * Whether every job and schedule index of `state` is a keys-only map
 * (docs/core.md, 2026-12-04, issue 19), valid and of `sizes` entries:
 * available (all queues), pending, executing, deadlines, due.
 */
const keysOnlyIndexes = (state: State.State, sizes: ReadonlyArray<number>): boolean => {
  const { available, pending, executing, deadlines, due } = state.indexes;
  const queues = [...available.values()];
  const indexes = [...queues, pending, executing, deadlines, due];
  const availableSize = queues.reduce((sum, queue) => sum + queue.size, 0);
  const found = [availableSize, pending.size, executing.size, deadlines.size, due.size];
  return (
    indexes.every((index) => index.isKeysOnly() && index.isValid()) &&
    found.every((size, at) => size === sizes[at])
  );
};

describe("State", () => {
  it("the initial state is empty", () => {
    expect(State.initialState.lastJobId).toBe(0);
    expect(State.jobCount(State.initialState)).toBe(0);
    expect([...State.schedules(State.initialState)]).toEqual([]);
  });

  it("keeps its job and schedule indexes keys-only: folded whole, and evolved one record at a time", () => {
    expect(keysOnlyIndexes(State.initialState, [0, 0, 0, 0, 0])).toBe(true);
    // Folded: the indexes built whole from the jobs (`buildState`).
    const folded = stateOf([
      inserted(1),
      inserted(2, { queue: "other" }),
      inserted(3),
      started(3),
      insertedV3(4, { timeoutMs: 1_000 }),
      started(4),
      inserted(5),
      started(5),
      retried(5),
      checkpoint("s"),
    ]);
    expect(keysOnlyIndexes(folded, [2, 1, 2, 1, 1])).toBe(true);
    // Evolved: each index updated in place (`Store.index`), a new queue's index made empty.
    const evolved = evolveAll(folded, [
      inserted(6, { queue: "third" }),
      insertedV3(7, { timeoutMs: 1_000 }),
      started(7),
      inserted(8, { scheduledAt: 50 }),
      checkpoint("t"),
    ]);
    expect(keysOnlyIndexes(evolved, [3, 2, 3, 2, 2])).toBe(true);
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
