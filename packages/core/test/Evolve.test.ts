// Every row of the job and schedule tables of EVENTS.md, legal and illegal,
// applied with `evolve` and with the generation fold. Each case states a
// history, one more record, and the state or the exact refusal reason.
// `Evolve.batch` is checked against `evolveAll` on random command runs cut
// into batches: same states and indexes, and published states never change.
import { Decide, Event, Evolve, Job, Query, State } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { type Plan, queues, steps } from "./support/Plans.js";
import {
  available,
  cancelled,
  checkpoint,
  completed,
  definition,
  delivered,
  discarded,
  given,
  inserted,
  result,
  retried,
  skipped,
  started,
  stateOf,
} from "./support/Given.js";

const jobOf = (state: State.State, jobId: number): Job.Job => {
  const job = State.job(state, jobId);
  if (job === undefined) throw new Error(`no job ${jobId}`);
  return job;
};

const scheduleOf = (state: State.State, scheduleId: string) => {
  const schedule = State.schedule(state, scheduleId);
  if (schedule === undefined) throw new Error(`no schedule ${scheduleId}`);
  return schedule;
};

// Histories that leave job 1 in each state.
const inState: Record<Event.JobState, ReadonlyArray<Event.Event>> = {
  scheduled: [inserted(1, { scheduledAt: 10 })],
  available: [inserted(1)],
  executing: [inserted(1), started(1)],
  retryable: [inserted(1), started(1), retried(1, 10)],
  completed: [inserted(1), started(1), completed(1)],
  discarded: [inserted(1), started(1), discarded(1)],
  cancelled: [inserted(1), cancelled(1)],
};

const allStates = Event.jobStates;

describe("(1,1) inserted", () => {
  it("creates an available job with attempt 0 when scheduled_at <= inserted_at", () => {
    const state = given()
      .apply(inserted(1, { scheduledAt: 5, insertedAt: 5 }))
      .accepts();
    expect(jobOf(state, 1)).toMatchObject({ state: "available", attempt: 0, errors: [] });
    expect(state.lastJobId).toBe(1);
  });

  it("creates a scheduled job when scheduled_at > inserted_at", () => {
    const state = given()
      .apply(inserted(1, { scheduledAt: 6, insertedAt: 5 }))
      .accepts();
    expect(jobOf(state, 1).state).toBe("scheduled");
  });

  it("accepts gaps: ids only need to increase", () => {
    const state = given(inserted(1)).apply(inserted(7)).accepts();
    expect(state.lastJobId).toBe(7);
  });

  it("refuses an id that exists", () => {
    given(inserted(1)).apply(inserted(1)).refuses("DuplicateJob", { jobId: 1 });
  });

  it("refuses an id below last_job_id", () => {
    given(inserted(5)).apply(inserted(3)).refuses("JobIdNotIncreasing", { jobId: 3, lastJobId: 5 });
  });

  it.each([
    ["job_id", inserted(0)],
    ["queue", inserted(1, { queue: "" })],
    ["queue", inserted(1, { queue: "q".repeat(256) })],
    ["worker", inserted(1, { worker: "é".repeat(128) })],
    ["priority", inserted(1, { priority: 10 })],
    ["priority", inserted(1, { priority: 0.5 })],
    ["max_attempts", inserted(1, { maxAttempts: 0 })],
    ["max_attempts", inserted(1, { maxAttempts: 1001 })],
    ["scheduled_at", inserted(1, { scheduledAt: -1 })],
    ["inserted_at", inserted(1, { insertedAt: 2 ** 53 })],
  ])("refuses a bad %s", (field, event) => {
    given().apply(event).refuses("InvalidField", { field });
  });
});

describe("(2,1) available", () => {
  it.each(["scheduled", "retryable"] as const)("when %s and due: becomes available", (from) => {
    const state = given(...inState[from])
      .apply(available(1, 10))
      .accepts();
    expect(jobOf(state, 1).state).toBe("available");
  });

  it("when scheduled but not yet due: NotDue", () => {
    given(...inState.scheduled)
      .apply(available(1, 9))
      .refuses("NotDue", { jobId: 1, scheduledAt: 10, at: 9 });
  });

  it("when retryable before retry_at: NotDue", () => {
    given(...inState.retryable)
      .apply(available(1, 9))
      .refuses("NotDue");
  });

  it.each(allStates.filter((state) => state !== "scheduled" && state !== "retryable"))(
    "when %s: IllegalTransition",
    (from) => {
      given(...inState[from])
        .apply(available(1, 100))
        .refuses("IllegalTransition", { jobId: 1, from, event: "JobAvailable" });
    },
  );

  it("for an unknown job: UnknownJob", () => {
    given().apply(available(1)).refuses("UnknownJob", { jobId: 1 });
  });
});

describe("(3,1) started", () => {
  it("when available: executing with attempt + 1 and attempted_at", () => {
    const state = given(inserted(1))
      .apply(started(1, 1, 7))
      .accepts();
    expect(jobOf(state, 1)).toMatchObject({ state: "executing", attempt: 1, attemptedAt: 7 });
  });

  it("the second attempt after a retry", () => {
    const state = given(...inState.retryable, available(1, 10))
      .apply(started(1, 2, 11))
      .accepts();
    expect(jobOf(state, 1)).toMatchObject({ attempt: 2, attemptedAt: 11 });
  });

  it.each([0, 2, 3])("with attempt %i instead of 1: AttemptMismatch", (attempt) => {
    given(inserted(1))
      .apply(started(1, attempt))
      .refuses("AttemptMismatch", { expected: 1, actual: attempt });
  });

  it.each(allStates.filter((state) => state !== "available"))(
    "when %s: IllegalTransition",
    (from) => {
      given(...inState[from])
        .apply(started(1, 2))
        .refuses("IllegalTransition", { from });
    },
  );

  it("beyond max_attempts: AttemptsExhausted (only a hand-made record can be there)", () => {
    const job: Job.Job = { ...jobOf(stateOf([inserted(1, { maxAttempts: 1 })]), 1), attempt: 1 };
    const step = Job.transition(job, started(1, 2));
    expect(step).toEqual(
      Either.left({ _tag: "AttemptsExhausted", jobId: 1, attempt: 2, maxAttempts: 1 }),
    );
  });

  it("for an unknown job: UnknownJob", () => {
    given().apply(started(3)).refuses("UnknownJob", { jobId: 3 });
  });
});

describe("(4,1) finished", () => {
  it("when executing, completed: completed with finished_at", () => {
    const state = given(...inState.executing)
      .apply(completed(1, 9))
      .accepts();
    expect(jobOf(state, 1)).toMatchObject({ state: "completed", finishedAt: 9, errors: [] });
  });

  it("when executing, discarded: discarded, the error kept with its attempt", () => {
    const state = given(...inState.executing)
      .apply(discarded(1, "bad", 9))
      .accepts();
    expect(jobOf(state, 1)).toMatchObject({
      state: "discarded",
      finishedAt: 9,
      errors: [{ attempt: 1, at: 9, error: "bad" }],
    });
  });

  it("completed with an error: OutcomeErrorMismatch", () => {
    given(...inState.executing)
      .apply(Event.jobFinished({ jobId: 1, at: 0, outcome: "completed", error: "x" }))
      .refuses("OutcomeErrorMismatch", { outcome: "completed", error: "x" });
  });

  it("discarded without an error: OutcomeErrorMismatch", () => {
    given(...inState.executing)
      .apply(Event.jobFinished({ jobId: 1, at: 0, outcome: "discarded", error: null }))
      .refuses("OutcomeErrorMismatch", { outcome: "discarded", error: null });
  });

  it.each(allStates.filter((state) => state !== "executing"))(
    "when %s: IllegalTransition",
    (from) => {
      given(...inState[from])
        .apply(completed(1))
        .refuses("IllegalTransition", { from });
      given(...inState[from])
        .apply(discarded(1))
        .refuses("IllegalTransition", { from });
    },
  );

  it("with a bad outcome: InvalidField", () => {
    const event = { ...completed(1), outcome: "done" };
    // A value from untyped code: the fold must refuse it, not trust the type.
    given(...inState.executing)
      .apply(event as unknown as Event.Event)
      .refuses("InvalidField", { field: "outcome" });
  });
});

describe("(5,1) cancelled", () => {
  it.each(["scheduled", "available", "executing", "retryable"] as const)(
    "when %s: cancelled with finished_at",
    (from) => {
      const state = given(...inState[from])
        .apply(cancelled(1, 12))
        .accepts();
      expect(jobOf(state, 1)).toMatchObject({ state: "cancelled", finishedAt: 12 });
    },
  );

  it.each(["completed", "discarded", "cancelled"] as const)(
    "when %s: IllegalTransition",
    (from) => {
      given(...inState[from])
        .apply(cancelled(1))
        .refuses("IllegalTransition", { from, event: "JobCancelled" });
    },
  );

  it("with a text over 65,535 bytes: InvalidField", () => {
    given(inserted(1))
      .apply(Event.jobCancelled({ jobId: 1, at: 0, reason: "é".repeat(40_000) }))
      .refuses("InvalidField", { field: "reason" });
  });
});

describe("(6,1) retried", () => {
  it("when executing with attempts left: retryable, scheduled_at = retry_at, error kept", () => {
    const state = given(...inState.executing)
      .apply(retried(1, 50, 5, "flaky"))
      .accepts();
    expect(jobOf(state, 1)).toMatchObject({
      state: "retryable",
      scheduledAt: 50,
      errors: [{ attempt: 1, at: 5, error: "flaky" }],
    });
  });

  it("retry_at = at is legal", () => {
    given(...inState.executing)
      .apply(retried(1, 5, 5))
      .accepts();
  });

  it("retry_at before at: RetryBeforeFailure", () => {
    given(...inState.executing)
      .apply(retried(1, 4, 5))
      .refuses("RetryBeforeFailure", { at: 5, retryAt: 4 });
  });

  it("on the last attempt: AttemptsExhausted", () => {
    given(inserted(1, { maxAttempts: 1 }), started(1))
      .apply(retried(1))
      .refuses("AttemptsExhausted", { attempt: 1, maxAttempts: 1 });
  });

  it.each(allStates.filter((state) => state !== "executing"))(
    "when %s: IllegalTransition",
    (from) => {
      given(...inState[from])
        .apply(retried(1, 100, 100))
        .refuses("IllegalTransition", { from });
    },
  );
});

describe("(10,2) result recorded", () => {
  it("when completed: the result is kept with the job", () => {
    const value = new Map([["ok", true]]);
    const state = given(...inState.completed)
      .apply(result(1, value, 3))
      .accepts();
    expect(jobOf(state, 1).result).toEqual({ value, at: 3 });
  });

  it("a second result: ResultAlreadyRecorded", () => {
    given(...inState.completed, result(1))
      .apply(result(1))
      .refuses("ResultAlreadyRecorded");
  });

  it.each(allStates.filter((state) => state !== "completed"))(
    "when %s: IllegalTransition",
    (from) => {
      given(...inState[from])
        .apply(result(1))
        .refuses("IllegalTransition", { from, event: "ResultRecorded" });
    },
  );

  it("for an unknown job: UnknownJob", () => {
    given().apply(result(9)).refuses("UnknownJob");
  });
});

const registered = (revision: number, overrides: Partial<Event.ScheduleRegistered> = {}) =>
  Event.scheduleRegistered({
    scheduleId: "s",
    revision,
    definition: definition(),
    registeredAt: 0,
    nextDueAt: 100,
    ...overrides,
  });

const advanced = (revision: number, dueAt = 100, nextDueAt = 200) =>
  Event.scheduleAdvanced({ scheduleId: "s", revision, dueAt, nextDueAt });

describe("(7,2) registered (legacy)", () => {
  it("a new schedule: revision 1, no occurrences, membership complete", () => {
    const state = given().apply(registered(1)).accepts();
    expect(scheduleOf(state, "s")).toMatchObject({
      revision: 1,
      definitionRevision: 1,
      nextDueAt: 100,
      lastDueAt: null,
      cancelledAt: null,
      activeJobIds: [],
      membershipComplete: true,
    });
  });

  it("an existing one keeps its occurrences and is no longer cancelled", () => {
    const history = [
      registered(1),
      inserted(1),
      delivered("s", 2, 100, 200, 1),
      Event.scheduleCancelled({ scheduleId: "s", revision: 3, at: 150 }),
    ];
    const state = given(...history)
      .apply(registered(4, { definition: definition({ everyMs: 5 }), nextDueAt: 300 }))
      .accepts();
    expect(scheduleOf(state, "s")).toMatchObject({
      revision: 4,
      definitionRevision: 4,
      nextDueAt: 300,
      lastDueAt: 100,
      cancelledAt: null,
      activeJobIds: [1],
    });
  });

  it.each([
    [0, "new with revision 2", [], 2],
    [1, "existing at 1 with revision 1", [registered(1)], 1],
    [1, "existing at 1 with revision 3", [registered(1)], 3],
  ] as const)("revision rule (%i): %s → RevisionConflict", (_, __, history, revision) => {
    given(...history)
      .apply(registered(revision))
      .refuses("RevisionConflict", { expected: history.length + 1, actual: revision });
  });

  it.each([
    ["both every_ms and cron", definition({ cron: "* * * * *" })],
    ["neither", definition({ everyMs: null })],
    ["a bad cron", definition({ everyMs: null, cron: "61 * * * *" })],
  ])("with %s: InvalidDefinition", (_, bad) => {
    given()
      .apply(registered(1, { definition: bad }))
      .refuses("InvalidDefinition");
  });
});

describe("(8,2) advanced (legacy)", () => {
  it("advances last and next due, and makes membership incomplete", () => {
    const state = given(registered(1)).apply(advanced(2)).accepts();
    expect(scheduleOf(state, "s")).toMatchObject({
      revision: 2,
      lastDueAt: 100,
      nextDueAt: 200,
      membershipComplete: false,
    });
  });

  it("an unknown schedule: UnknownSchedule", () => {
    given().apply(advanced(1)).refuses("UnknownSchedule", { scheduleId: "s" });
  });

  it("a stale revision: RevisionConflict", () => {
    given(registered(1)).apply(advanced(1)).refuses("RevisionConflict", { expected: 2, actual: 1 });
  });

  it("a cancelled schedule: ScheduleIsCancelled", () => {
    given(registered(1), Event.scheduleCancelled({ scheduleId: "s", revision: 2, at: 0 }))
      .apply(advanced(3))
      .refuses("ScheduleIsCancelled");
  });

  it("due_at other than next_due_at: DueMismatch", () => {
    given(registered(1))
      .apply(advanced(2, 99, 200))
      .refuses("DueMismatch", { expected: 100, actual: 99 });
  });

  it("next_due_at not after due_at: NextDueNotAfterDue", () => {
    given(registered(1))
      .apply(advanced(2, 100, 100))
      .refuses("NextDueNotAfterDue");
  });
});

describe("(9,2) cancelled", () => {
  it("sets cancelled_at and the revision", () => {
    const state = given(checkpoint("s"))
      .apply(Event.scheduleCancelled({ scheduleId: "s", revision: 2, at: 7 }))
      .accepts();
    expect(scheduleOf(state, "s")).toMatchObject({ revision: 2, cancelledAt: 7 });
  });

  it("twice: ScheduleIsCancelled", () => {
    given(checkpoint("s"), Event.scheduleCancelled({ scheduleId: "s", revision: 2, at: 7 }))
      .apply(Event.scheduleCancelled({ scheduleId: "s", revision: 3, at: 8 }))
      .refuses("ScheduleIsCancelled");
  });

  it("an unknown schedule: UnknownSchedule", () => {
    given()
      .apply(Event.scheduleCancelled({ scheduleId: "s", revision: 1, at: 0 }))
      .refuses("UnknownSchedule");
  });

  it("a wrong revision: RevisionConflict", () => {
    given(checkpoint("s"))
      .apply(Event.scheduleCancelled({ scheduleId: "s", revision: 5, at: 0 }))
      .refuses("RevisionConflict", { expected: 2, actual: 5 });
  });
});

describe("(11,2) delivered or skipped", () => {
  it("delivered: advances and adds the job to active_job_ids", () => {
    const state = given(checkpoint("s"), inserted(1))
      .apply(delivered("s", 2, 60_000, 120_000, 1))
      .accepts();
    expect(scheduleOf(state, "s")).toMatchObject({
      revision: 2,
      lastDueAt: 60_000,
      nextDueAt: 120_000,
      activeJobIds: [1],
      membershipComplete: true,
    });
    expect(jobOf(state, 1).scheduleId).toBe("s");
  });

  it("skipped: advances without a job", () => {
    const state = given(checkpoint("s"))
      .apply(skipped("s", 2, 60_000, 120_000))
      .accepts();
    expect(scheduleOf(state, "s")).toMatchObject({ lastDueAt: 60_000, activeJobIds: [] });
  });

  it.each([
    ["a finished member", completed(2)],
    ["a discarded member", discarded(2)],
  ])("%s leaves active_job_ids", (_, finish) => {
    const history = [checkpoint("s"), inserted(1), inserted(2)];
    const state = given(
      ...history,
      delivered("s", 2, 60_000, 120_000, 1),
      delivered("s", 3, 120_000, 180_000, 2),
      started(2),
    )
      .apply(finish)
      .accepts();
    expect(scheduleOf(state, "s").activeJobIds).toEqual([1]);
    expect(jobOf(state, 2).scheduleId).toBeNull();
  });

  it("a cancelled member leaves active_job_ids", () => {
    const state = given(checkpoint("s"), inserted(1), delivered("s", 2, 60_000, 120_000, 1))
      .apply(cancelled(1))
      .accepts();
    expect(scheduleOf(state, "s").activeJobIds).toEqual([]);
  });

  it("delivered without a job: OccurrenceMismatch", () => {
    given(checkpoint("s"))
      .apply(
        Event.occurrenceAdvanced({ ...skipped("s", 2, 60_000, 120_000), outcome: "delivered" }),
      )
      .refuses("OccurrenceMismatch", { outcome: "delivered", activeJobId: null });
  });

  it("skipped with a job: OccurrenceMismatch", () => {
    given(checkpoint("s"), inserted(1))
      .apply(
        Event.occurrenceAdvanced({ ...delivered("s", 2, 60_000, 120_000, 1), outcome: "skipped" }),
      )
      .refuses("OccurrenceMismatch");
  });

  it("an unknown job: UnknownJob", () => {
    given(checkpoint("s"))
      .apply(delivered("s", 2, 60_000, 120_000, 4))
      .refuses("UnknownJob");
  });

  it("a terminal job: MembershipConflict", () => {
    given(checkpoint("s"), inserted(1), cancelled(1))
      .apply(delivered("s", 2, 60_000, 120_000, 1))
      .refuses("MembershipConflict", { jobId: 1, terminal: true });
  });

  it("a job of another schedule: MembershipConflict", () => {
    given(checkpoint("s"), checkpoint("t"), inserted(1), delivered("t", 2, 60_000, 120_000, 1))
      .apply(delivered("s", 2, 60_000, 120_000, 1))
      .refuses("MembershipConflict", { jobId: 1, memberOf: "t", terminal: false });
  });

  it("a job already active in the same schedule: MembershipConflict", () => {
    given(checkpoint("s"), inserted(1), delivered("s", 2, 60_000, 120_000, 1))
      .apply(delivered("s", 3, 120_000, 180_000, 1))
      .refuses("MembershipConflict", { memberOf: "s" });
  });

  it.each([
    ["UnknownSchedule", [], delivered("s", 1, 60_000, 120_000, 1)],
    ["RevisionConflict", [checkpoint("s")], delivered("s", 3, 60_000, 120_000, 1)],
    ["DueMismatch", [checkpoint("s")], delivered("s", 2, 60_001, 120_000, 1)],
    ["NextDueNotAfterDue", [checkpoint("s")], delivered("s", 2, 60_000, 59_000, 1)],
    [
      "ScheduleIsCancelled",
      [checkpoint("s", { cancelledAt: 5 })],
      delivered("s", 2, 60_000, 120_000, 1),
    ],
  ] as const)("the advance rules: %s", (reason, history, event) => {
    given(inserted(1), ...history)
      .apply(event)
      .refuses(reason);
  });
});

describe("(12,2) historical checkpoint (legacy)", () => {
  const historical = (
    revision: number,
    activeJobId: number | null,
    overrides: Partial<Event.ScheduleHistoricalCheckpoint> = {},
  ) =>
    Event.scheduleHistoricalCheckpoint({
      scheduleId: "s",
      definition: definition(),
      definitionRevision: 1,
      revision,
      registeredAt: 0,
      nextDueAt: 100,
      lastDueAt: 40,
      cancelledAt: null,
      activeJobId,
      ...overrides,
    });

  it("sets the whole schedule, active_job_ids = {active_job_id}, membership incomplete", () => {
    const state = given(inserted(1)).apply(historical(1, 1)).accepts();
    expect(scheduleOf(state, "s")).toMatchObject({
      revision: 1,
      lastDueAt: 40,
      activeJobIds: [1],
      membershipComplete: false,
    });
    expect(jobOf(state, 1).scheduleId).toBe("s");
  });

  it("without a job: no occurrences", () => {
    const state = given().apply(historical(1, null)).accepts();
    expect(scheduleOf(state, "s").activeJobIds).toEqual([]);
  });

  it("follows the revision rule in the tail", () => {
    given(checkpoint("s")).apply(historical(1, null)).refuses("RevisionConflict");
  });

  it("a terminal job: MembershipConflict", () => {
    given(inserted(1), cancelled(1)).apply(historical(1, 1)).refuses("MembershipConflict");
  });

  it("definition_revision above revision: InvalidField", () => {
    given()
      .apply(historical(1, null, { definitionRevision: 2 }))
      .refuses("InvalidField", { field: "definition_revision" });
  });
});

describe("(13,2) registration / checkpoint in the tail", () => {
  it("a new registration is revision 1, definition_revision 1", () => {
    const state = given().apply(checkpoint("s")).accepts();
    expect(scheduleOf(state, "s")).toMatchObject({ revision: 1, definitionRevision: 1 });
  });

  it("replaces the state as given; dropped members lose their schedule", () => {
    const history = [
      checkpoint("s"),
      inserted(1),
      inserted(2),
      delivered("s", 2, 60_000, 120_000, 1),
    ];
    const state = given(...history)
      .apply(checkpoint("s", { revision: 3, activeJobIds: [2], membershipComplete: false }))
      .accepts();
    expect(scheduleOf(state, "s")).toMatchObject({ activeJobIds: [2], membershipComplete: false });
    expect(jobOf(state, 1).scheduleId).toBeNull();
    expect(jobOf(state, 2).scheduleId).toBe("s");
  });

  it("a new schedule with revision 2: RevisionConflict", () => {
    given()
      .apply(checkpoint("s", { revision: 2 }))
      .refuses("RevisionConflict", { expected: 1 });
  });

  it("a listed job that does not exist: UnknownJob", () => {
    given()
      .apply(checkpoint("s", { activeJobIds: [1] }))
      .refuses("UnknownJob", { jobId: 1 });
  });

  it("a listed job of another schedule: MembershipConflict", () => {
    given(checkpoint("t"), inserted(1), delivered("t", 2, 60_000, 120_000, 1))
      .apply(checkpoint("s", { activeJobIds: [1] }))
      .refuses("MembershipConflict", { memberOf: "t" });
  });

  it("ids not strictly ascending: InvalidField", () => {
    given(inserted(1), inserted(2))
      .apply(checkpoint("s", { activeJobIds: [2, 1] }))
      .refuses("InvalidField", { field: "active_job_ids" });
  });

  it("a bad definition: InvalidDefinition or InvalidField", () => {
    given()
      .apply(checkpoint("s", { definition: definition({ everyMs: null, cron: "* * *" }) }))
      .refuses("InvalidDefinition");
    given()
      .apply(checkpoint("s", { definition: definition({ overlap: "never" as Event.Overlap }) }))
      .refuses("InvalidField", { field: "definition.overlap" });
  });
});

describe("Store-v2 records in the tail", () => {
  it("a snapshot part: SnapshotOutOfPlace", () => {
    given()
      .apply(Event.snapshotPart({ part: 0, lastJobId: 0, jobs: [] }))
      .refuses("SnapshotOutOfPlace");
  });

  it("a mutation applies its events in order", () => {
    const state = given()
      .apply(Event.mutation([inserted(1), started(1), completed(1), result(1)]))
      .accepts();
    expect(jobOf(state, 1).result?.value).toBe(42);
  });

  it("a mutation is all or nothing: its 3rd event refused leaves the state as before", () => {
    const before = stateOf([inserted(1)]);
    const batch = Event.mutation([inserted(2), started(2), started(1, 5)]);
    const evolved = Evolve.evolve(before, batch);
    expect(Either.isLeft(evolved) && evolved.left).toMatchObject({
      memberIndex: 2,
      reason: { _tag: "AttemptMismatch" },
    });
    // The old state is untouched and still folds on.
    expect(State.job(before, 2)).toBeUndefined();
    expect(before.lastJobId).toBe(1);
    expect(Either.isRight(Evolve.evolve(before, started(1)))).toBe(true);
  });

  it("an empty mutation: EmptyMutation", () => {
    given().apply(Event.mutation([])).refuses("EmptyMutation");
  });

  it("a record nested in a mutation: NestedRecord", () => {
    // Only untyped code can build this; the fold must still refuse it.
    const nested = Event.mutation([Event.mutation([inserted(1)]) as unknown as Event.DomainEvent]);
    given().apply(nested).refuses("NestedRecord", { found: "Mutation" });
  });

  it("a value that is no event: UnknownEvent", () => {
    const unknown = { _tag: "JobExploded", jobId: 1 } as unknown as Event.Event;
    given().apply(unknown).refuses("UnknownEvent", { found: "JobExploded" });
  });
});

describe("evolve", () => {
  it("keeps old states valid (persistent)", () => {
    const first = stateOf([inserted(1), inserted(2)]);
    const second = Evolve.evolve(first, started(1));
    expect(Either.isRight(second)).toBe(true);
    expect(jobOf(first, 1).state).toBe("available");
    expect(first.indexes.available.get("default")?.size).toBe(2);
  });

  it("reports index 0 and no sequence", () => {
    const refused = Evolve.evolve(State.initialState, started(1));
    expect(Either.isLeft(refused) && refused.left).toMatchObject({
      _tag: "HistoryError",
      index: 0,
      sequence: undefined,
      memberIndex: null,
    });
  });

  it("evolveAll reports the index of the refused record", () => {
    const refused = Evolve.evolveAll(State.initialState, [inserted(1), inserted(1)]);
    expect(Either.isLeft(refused) && refused.left.index).toBe(1);
  });
});

/** Everything a state shows, indexes included, as plain data. */
const view = (state: State.State) => ({
  lastJobId: state.lastJobId,
  jobs: [...State.jobs(state)].map((job) => ({ ...job })),
  schedules: [...State.schedules(state)].map((schedule) => ({ ...schedule })),
  counts: [...Query.counts(state)],
  available: queues.map((queue) => Query.available(state, queue, 1_000).map((job) => job.jobId)),
  pending: [...state.indexes.pending.keys()].map((job) => job.jobId),
  executing: [...state.indexes.executing.keys()].map((job) => job.jobId),
  due: [...state.indexes.due.keys()].map((schedule) => schedule.scheduleId),
  nextWakeAt: Query.nextWakeAt(state),
  valid:
    state.indexes.pending.isValid() &&
    state.indexes.executing.isValid() &&
    state.indexes.available.isValid() &&
    [...state.indexes.available.values()].every((queue) => queue.isValid()),
  // The job and schedule indexes stay keys-only through batches (docs/core.md, 2026-12-04).
  keysOnly: [
    state.indexes.pending,
    state.indexes.executing,
    state.indexes.deadlines,
    state.indexes.due,
    ...state.indexes.available.values(),
  ].every((index) => index.isKeysOnly() && index.isValid()),
});

describe("Evolve.batch", () => {
  it("agrees with evolveAll and never changes a published state (property)", () => {
    fc.assert(
      fc.property(
        steps(60),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 20 }),
        (plans, cuts) => {
          let persistent = State.initialState;
          let published = State.initialState;
          let run = Evolve.batch(published);
          let current = published;
          let left = cuts[0] ?? 1;
          let cut = 0;
          const kept: Array<[State.State, ReturnType<typeof view>]> = [];
          let now = 1_000;
          for (const { plan, elapsedMs } of plans) {
            now += elapsedMs;
            const world = {
              jobs: [...State.jobs(current)],
              schedules: [...State.schedules(current)],
            };
            const command = plan(world, now);
            // Both paths decide the same: the batch's state is the same state.
            const decision = Decide.decide(current, command);
            expect(decision).toEqual(Decide.decide(persistent, command));
            if (Either.isLeft(decision)) continue;
            const next = Evolve.evolveAll(persistent, decision.right);
            const batched = run.evolveAll(decision.right);
            expect(Either.isRight(next) && Either.isRight(batched)).toBe(true);
            if (Either.isLeft(next) || Either.isLeft(batched)) return;
            persistent = next.right;
            current = batched.right;
            const seen = view(current);
            expect(seen).toEqual(view(persistent));
            // Not only alike: valid, and keys-only where they should be.
            expect(seen.valid && seen.keysOnly).toBe(true);
            left -= 1;
            if (left === 0) {
              // End of a batch: publish its last state and start the next one.
              published = current;
              kept.push([published, view(published)]);
              cut += 1;
              left = cuts[cut % cuts.length] ?? 1;
              run = Evolve.batch(published);
            }
          }
          for (const [state, seen] of kept) expect(view(state)).toEqual(seen);
          expect(view(current)).toEqual(view(persistent));
          expect(State.equals(current, persistent)).toBe(true);
        },
      ),
      { numRuns: 80 },
    );
  });

  it("leaves its start state untouched", () => {
    const start = stateOf([inserted(1), inserted(2), started(1)]);
    const before = view(start);
    const run = Evolve.batch(start);
    for (let jobId = 3; jobId < 40; jobId++) {
      expect(Either.isRight(run.evolveAll([inserted(jobId)]))).toBe(true);
    }
    expect(Either.isRight(run.evolveAll([started(2), completed(1)]))).toBe(true);
    expect(view(start)).toEqual(before);
  });

  it("reports a refusal like evolveAll", () => {
    const run = Evolve.batch(State.initialState);
    const refused = run.evolveAll([inserted(1), inserted(1)]);
    expect(Either.isLeft(refused) && refused.left).toMatchObject({ index: 1, sequence: undefined });
  });
});

/** The state after deciding and folding `plans` from the initial state. */
const stateAfter = (plans: ReadonlyArray<{ readonly plan: Plan; readonly elapsedMs: number }>) => {
  let state = State.initialState;
  let now = 1_000;
  for (const { plan, elapsedMs } of plans) {
    now += elapsedMs;
    const world = { jobs: [...State.jobs(state)], schedules: [...State.schedules(state)] };
    const decision = Decide.decide(state, plan(world, now));
    if (Either.isLeft(decision)) continue;
    const next = Evolve.evolveAll(state, decision.right);
    if (Either.isRight(next)) state = next.right;
  }
  return state;
};

// A (1,1) near the state's last id, its fields now and then out of bounds.
const insertNear = (lastJobId: number) =>
  fc
    .record({
      offset: fc.integer({ min: -3, max: 3 }),
      broken: fc.constantFrom(undefined, "queue", "priority", "maxAttempts", "scheduledAt"),
    })
    .map(({ offset, broken }) =>
      inserted(Math.max(1, lastJobId + offset), {
        ...(broken === "queue" ? { queue: "" } : {}),
        ...(broken === "priority" ? { priority: 10 } : {}),
        ...(broken === "maxAttempts" ? { maxAttempts: 0 } : {}),
        ...(broken === "scheduledAt" ? { scheduledAt: -1 } : {}),
      }),
    );

describe("Evolve.checkInserts", () => {
  it("accepts an insert-only record exactly when evolve does, on any state (property)", () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        steps(30).chain((plans) => {
          const state = stateAfter(plans);
          const insert = insertNear(state.lastJobId);
          const record = fc.oneof(
            insert,
            fc.array(insert, { minLength: 2, maxLength: 4 }).map(Event.mutation),
            // Runs of fresh ids: the common case, several accepted in a row.
            fc
              .integer({ min: 1, max: 4 })
              .map((count) =>
                Event.mutation(
                  Array.from({ length: count + 1 }, (_, index) =>
                    inserted(state.lastJobId + index + 1),
                  ),
                ),
              ),
          );
          return fc.tuple(fc.constant(state), record);
        }),
        ([state, record]) => {
          const checked = Evolve.checkInserts(state.lastJobId, record);
          const folded = Evolve.evolve(state, record);
          switch (checked._tag) {
            case "Accepted":
              accepted++;
              expect(Either.isRight(folded) && folded.right.lastJobId).toBe(checked.lastJobId);
              break;
            case "Refused": {
              refused++;
              expect(Either.isLeft(folded)).toBe(true);
              if (Either.isRight(folded)) return;
              expect(checked.error.memberIndex).toBe(folded.left.memberIndex);
              expect(checked.error.index).toBe(0);
              // The one difference: an old id that names a job of the state.
              if (folded.left.reason._tag === "DuplicateJob") {
                expect(checked.error.reason._tag).toBe("JobIdNotIncreasing");
              } else {
                expect(checked.error.reason).toEqual(folded.left.reason);
              }
              break;
            }
            case "DependsOnState":
              throw new Error("an insert-only record depends on the state");
          }
        },
      ),
      { numRuns: 300 },
    );
    // The samples reach both verdicts often.
    expect(accepted).toBeGreaterThan(50);
    expect(refused).toBeGreaterThan(50);
  });

  it("leaves every other record to evolve", () => {
    const others: ReadonlyArray<Event.Event> = [
      started(1),
      completed(1),
      Event.mutation([]),
      Event.mutation([inserted(5), started(5)]),
      Event.mutation([started(5), inserted(6)]),
    ];
    for (const record of others) {
      expect(Evolve.checkInserts(4, record)).toEqual({ _tag: "DependsOnState" });
    }
    expect(Evolve.checkInserts(4, inserted(5))).toEqual({ _tag: "Accepted", lastJobId: 5 });
    expect(Evolve.checkInserts(4, Event.mutation([inserted(5), inserted(9)]))).toEqual({
      _tag: "Accepted",
      lastJobId: 9,
    });
    const twice = Evolve.checkInserts(4, Event.mutation([inserted(5), inserted(5)]));
    expect(twice._tag === "Refused" && [twice.error.memberIndex, twice.error.reason]).toEqual([
      1,
      { _tag: "JobIdNotIncreasing", jobId: 5, lastJobId: 5 },
    ]);
  });
});
