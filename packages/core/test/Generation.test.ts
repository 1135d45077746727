// The canonical-base rules of EVENTS.md ("Store-v2 records") and the
// incremental generation API: parts in order with one last_job_id, then
// results, then checkpoints; every misplaced record refused with its index
// and sequence; a failed builder stays failed.
import { Event, Evolve, Generation, HistoryError, State } from "@tay/core";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { checkpoint, completed, inserted, result, started, stateOf } from "./support/Given.js";

const job = (jobId: number, overrides: Partial<Event.JobSnapshot> = {}): Event.JobSnapshot => ({
  jobId,
  queue: "default",
  worker: "W",
  args: null,
  priority: 0,
  maxAttempts: 3,
  attempt: 0,
  state: "available",
  insertedAt: 0,
  scheduledAt: 0,
  attemptedAt: null,
  finishedAt: null,
  errors: [],
  ...overrides,
});

const part = (index: number, lastJobId: number, jobs: ReadonlyArray<Event.JobSnapshot>) =>
  Event.snapshotPart({ part: index, lastJobId, jobs });

const completedJob = (jobId: number) =>
  job(jobId, { state: "completed", attempt: 1, attemptedAt: 1, finishedAt: 2 });

const refusal = (base: ReadonlyArray<Event.Event>, tail: ReadonlyArray<Event.Event> = []) => {
  const folded = Evolve.foldGeneration(base, tail);
  if (Either.isRight(folded)) throw new Error("the generation folded");
  return folded.left;
};

describe("a canonical base", () => {
  it("restores jobs, last_job_id, results and schedules", () => {
    const base = [
      part(0, 9, [job(1), completedJob(2)]),
      part(1, 9, [job(5, { state: "executing", attempt: 1, attemptedAt: 3 })]),
      result(2, "done", 2),
      checkpoint("s", { revision: 7, definitionRevision: 4, activeJobIds: [5] }),
    ];
    const folded = Evolve.foldGeneration(base, []);
    if (Either.isLeft(folded)) throw new Error(HistoryError.describe(folded.left));
    const state = folded.right;
    expect(state.lastJobId).toBe(9);
    expect(State.jobCount(state)).toBe(3);
    expect(State.job(state, 2)?.result).toEqual({ value: "done", at: 2 });
    expect(State.job(state, 5)?.scheduleId).toBe("s");
    expect(State.schedule(state, "s")).toMatchObject({ revision: 7, activeJobIds: [5] });
  });

  it("keeps last_job_id: the tail may not reuse a dropped id", () => {
    expect(refusal([part(0, 9, [])], [inserted(9)]).reason).toEqual({
      _tag: "JobIdNotIncreasing",
      jobId: 9,
      lastJobId: 9,
    });
    expect(Either.isRight(Evolve.foldGeneration([part(0, 9, [])], [inserted(10)]))).toBe(true);
  });

  it("restores sparse and unordered ids, and finds every one of them", () => {
    const ids = [9_000, 3, 7_000, 1, 2 ** 40, 6_000, 4];
    const base = [
      part(
        0,
        2 ** 40,
        ids.map((jobId) => job(jobId)),
      ),
    ];
    const tail = ids.map((jobId) => started(jobId));
    const folded = Evolve.foldGeneration(base, tail);
    if (Either.isLeft(folded)) throw new Error(HistoryError.describe(folded.left));
    expect(
      [...State.jobs(folded.right)].map((restored) => [restored.jobId, restored.state]),
    ).toEqual([...ids].sort((left, right) => left - right).map((jobId) => [jobId, "executing"]));
    for (const jobId of ids) {
      expect(
        refusal([part(0, 2 ** 40, [...ids.map((other) => job(other)), job(jobId)])]).reason,
      ).toEqual({
        _tag: "DuplicateJob",
        jobId,
      });
    }
  });

  it("an empty base is the initial state", () => {
    const folded = Evolve.foldGeneration([], []);
    expect(Either.isRight(folded) && State.equals(folded.right, State.initialState)).toBe(true);
  });

  it("a base must start with part 0", () => {
    expect(refusal([result(1)]).reason).toMatchObject({
      _tag: "BaseOutOfOrder",
      expected: "SnapshotPart",
      found: "ResultRecorded",
    });
    expect(refusal([checkpoint("s")]).reason._tag).toBe("BaseOutOfOrder");
    expect(refusal([part(1, 0, [])]).reason).toEqual({
      _tag: "PartOutOfOrder",
      expected: 0,
      actual: 1,
    });
  });

  it("parts are numbered in order", () => {
    const error = refusal([part(0, 0, []), part(2, 0, [])]);
    expect(error.reason).toEqual({ _tag: "PartOutOfOrder", expected: 1, actual: 2 });
    expect(error.index).toBe(1);
  });

  it("all parts carry one last_job_id", () => {
    expect(refusal([part(0, 4, []), part(1, 5, [])]).reason).toEqual({
      _tag: "LastJobIdConflict",
      expected: 4,
      actual: 5,
    });
  });

  it("a job above last_job_id is refused", () => {
    expect(refusal([part(0, 1, [job(2)])]).reason).toEqual({
      _tag: "LastJobIdConflict",
      expected: 1,
      actual: 2,
    });
  });

  it("a job twice is refused", () => {
    expect(refusal([part(0, 2, [job(1)]), part(1, 2, [job(1)])]).reason).toEqual({
      _tag: "DuplicateJob",
      jobId: 1,
    });
  });

  it.each([
    ["finished_at", job(1, { finishedAt: 3 })],
    ["finished_at", job(1, { state: "completed", attempt: 1, attemptedAt: 1 })],
    ["attempted_at", job(1, { attempt: 1 })],
    ["attempt", job(1, { attempt: 4 })],
    ["attempt", job(1, { state: "executing" })],
    ["attempt", job(1, { state: "retryable" })],
    ["attempt", job(1, { state: "available", attempt: 3, attemptedAt: 1, maxAttempts: 3 })],
    ["state", job(1, { state: "scheduled", scheduledAt: 0 })],
    ["priority", job(1, { priority: 10 })],
    ["queue", job(1, { queue: "" })],
    [
      "errors",
      job(1, {
        state: "retryable",
        attempt: 1,
        attemptedAt: 1,
        errors: [{ attempt: 2, at: 1, error: "x" }],
      }),
    ],
  ])("a job no history produces is refused (%s)", (field, bad) => {
    expect(refusal([part(0, 5, [bad])]).reason).toEqual({
      _tag: "InvalidSnapshotJob",
      jobId: 1,
      field,
    });
  });

  it("results come after the parts and before the checkpoints", () => {
    const error = refusal([part(0, 2, [completedJob(2)]), checkpoint("s"), result(2)]);
    expect(error.reason).toMatchObject({
      _tag: "BaseOutOfOrder",
      expected: "ScheduleCheckpoint or QueueStateSet",
    });
    expect(error.index).toBe(2);
  });

  it("a part after a result is out of place", () => {
    expect(refusal([part(0, 2, [completedJob(2)]), result(2), part(1, 2, [])]).reason).toEqual({
      _tag: "SnapshotOutOfPlace",
    });
  });

  it("a result must name a completed job without a result", () => {
    expect(refusal([part(0, 1, [job(1)]), result(1)]).reason._tag).toBe("IllegalTransition");
    expect(refusal([part(0, 2, [completedJob(2)]), result(2), result(2)]).reason._tag).toBe(
      "ResultAlreadyRecorded",
    );
  });

  it("restores a schedule at any revision, but each schedule once", () => {
    expect(
      Either.isRight(
        Evolve.foldGeneration([part(0, 0, []), checkpoint("s", { revision: 40 })], []),
      ),
    ).toBe(true);
    expect(refusal([part(0, 0, []), checkpoint("s"), checkpoint("s")]).reason).toEqual({
      _tag: "DuplicateSchedule",
      scheduleId: "s",
    });
  });

  it("checks membership of a restored schedule", () => {
    expect(refusal([part(0, 0, []), checkpoint("s", { activeJobIds: [1] })]).reason._tag).toBe(
      "UnknownJob",
    );
    expect(
      refusal([part(0, 2, [completedJob(2)]), checkpoint("s", { activeJobIds: [2] })]).reason._tag,
    ).toBe("MembershipConflict");
    expect(
      refusal([
        part(0, 1, [job(1)]),
        checkpoint("s", { activeJobIds: [1] }),
        checkpoint("t", { activeJobIds: [1] }),
      ]).reason,
    ).toMatchObject({ _tag: "MembershipConflict", memberOf: "s" });
  });

  it.each([
    ["a tail event", inserted(1)],
    ["a mutation", Event.mutation([inserted(1)])],
    [
      "a legacy checkpoint",
      Event.scheduleHistoricalCheckpoint({
        scheduleId: "s",
        definition: checkpoint("s").definition,
        definitionRevision: 1,
        revision: 1,
        registeredAt: 0,
        nextDueAt: 1,
        lastDueAt: null,
        cancelledAt: null,
        activeJobId: null,
      }),
    ],
  ])("%s inside the base is out of order", (_, event) => {
    expect(refusal([part(0, 1, []), event]).reason._tag).toBe("BaseOutOfOrder");
  });

  it("checkpoints follow the revision rule again in the tail", () => {
    const base = [part(0, 0, []), checkpoint("s", { revision: 5 })];
    expect(refusal(base, [checkpoint("s", { revision: 5 })]).reason).toMatchObject({
      _tag: "RevisionConflict",
      expected: 6,
    });
  });

  it("a snapshot part in the tail is out of place", () => {
    const error = refusal([part(0, 0, [])], [part(1, 0, [])]);
    expect(error.reason._tag).toBe("SnapshotOutOfPlace");
    expect(error.index).toBe(1);
  });
});

describe("the incremental API", () => {
  it("names the sequence of a refused record and stays failed", () => {
    const builder = Generation.start(1);
    expect(Either.isRight(Generation.apply(builder, 41, part(0, 0, [])))).toBe(true);
    const refused = Generation.apply(builder, 42, started(1));
    expect(Either.isLeft(refused) && refused.left).toMatchObject({
      index: 1,
      sequence: 42,
      reason: { _tag: "UnknownJob", jobId: 1 },
    });
    // Poisoned: even a legal record and finish return the first error.
    const later = Generation.apply(builder, 43, inserted(1));
    expect(Either.isLeft(later) && later.left.sequence).toBe(42);
    const finished = Generation.finish(builder);
    expect(Either.isLeft(finished) && finished.left.sequence).toBe(42);
  });

  it("a generation that ends inside its base is BaseIncomplete", () => {
    const builder = Generation.start(3);
    Generation.apply(builder, 1, part(0, 0, []));
    const finished = Generation.finish(builder);
    expect(Either.isLeft(finished) && finished.left).toMatchObject({
      event: null,
      reason: { _tag: "BaseIncomplete", expected: 3, actual: 1 },
    });
    expect(Either.isLeft(finished) && HistoryError.describe(finished.left)).toContain(
      "BaseIncomplete",
    );
  });

  it("agrees with fold and evolve, and finish can be called again", () => {
    const events = [inserted(1), started(1), completed(1), result(1), inserted(2)];
    const builder = Generation.start(0);
    for (const [index, event] of events.slice(0, 3).entries()) {
      Generation.apply(builder, index + 1, event);
    }
    const middle = Generation.finish(builder);
    for (const [index, event] of events.slice(3).entries()) {
      Generation.apply(builder, index + 4, event);
    }
    const end = Generation.finish(builder);
    expect(builder.recordsApplied).toBe(5);
    // The first published state did not change when the builder went on.
    expect(Either.isRight(middle) && State.equals(middle.right, stateOf(events.slice(0, 3)))).toBe(
      true,
    );
    expect(Either.isRight(middle) && middle.right.jobs.get(1)?.result).toBeNull();
    expect(Either.isRight(end) && State.equals(end.right, stateOf(events))).toBe(true);
  });
});
