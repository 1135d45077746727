// The deciders as specifications: given a history, when a command is
// decided, then exactly these records (which must also be legal for
// `evolve`), or a typed rejection. Grouped by command and by state.
import { Backoff, Commands, Decide, Event, Limits, Query, State, Value } from "@tay/core";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { recordBytes } from "../src/internal/Encoded.js";
import {
  available,
  cancelled,
  checkpoint,
  completed,
  definition,
  delivered,
  given,
  inserted,
  result,
  retried,
  started,
  stateOf,
} from "./support/Given.js";

const newJob = (overrides: Partial<Commands.NewJob> = {}): Commands.NewJob => ({
  queue: "default",
  worker: "W",
  args: null,
  ...overrides,
});

const insertBlob = (size: number, fields: Partial<Commands.NewJob>): Commands.InsertJobs =>
  Commands.insertJobs({ now: 0, jobs: [newJob({ ...fields, args: new Uint8Array(size) })] });

const answeredRecords = (command: Commands.InsertJobs) => {
  const decision = Decide.insertJobsAnswered(State.initialState, command);
  return Either.isRight(decision) ? Either.right(decision.right.records) : decision;
};

/** The refusal of args deeper than `Value.argsDepthMax`. */
const argsTooDeep =
  "a value nested deeper than 61 levels is not encodable here: the records that keep it hold it 3 level(s) down, and a record nests at most 64";

describe("InsertJobs", () => {
  it("decides from last_job_id alone: states with the same last id decide alike", () => {
    const states = [
      stateOf([inserted(4)]),
      stateOf([inserted(1), started(1), completed(1), inserted(3), inserted(4, { queue: "b" })]),
      stateOf([inserted(2), started(2), inserted(4, { priority: 9 }), started(4)]),
    ];
    const one = Commands.insertJobs({ now: 100, jobs: [newJob()] });
    const commands = [
      one,
      Commands.insertJobs({ now: 100, jobs: [newJob({ priority: 2 }), newJob({ queue: "b" })] }),
      Commands.insertJobs({ now: 100, jobs: [newJob({ queue: "" })] }),
      Commands.insertJobs({ now: -1, jobs: [newJob()] }),
      Commands.insertJobs({ now: 100, jobs: [] }),
    ];
    for (const command of commands) {
      const after = Decide.insertJobsAfter(4, command);
      for (const state of states) {
        expect(state.lastJobId).toBe(4);
        expect(Decide.insertJobs(state, command)).toEqual(after);
        expect(Decide.decide(state, command)).toEqual(after);
      }
    }
    const exhausted = Decide.insertJobsAfter(Limits.idMax, one);
    expect(Either.isLeft(exhausted) && exhausted.left._tag).toBe("IdsExhausted");
  });

  it("one job: one (1,1) with the next id, defaults filled in", () => {
    given(inserted(4))
      .when(Commands.insertJobs({ now: 100, jobs: [newJob()] }))
      .then(
        Event.jobInserted({
          jobId: 5,
          queue: "default",
          worker: "W",
          args: null,
          priority: Commands.priorityDefault,
          maxAttempts: Commands.maxAttemptsDefault,
          scheduledAt: 100,
          insertedAt: 100,
        }),
      );
  });

  it("several jobs: one mutation with consecutive ids", () => {
    const state = given()
      .when(
        Commands.insertJobs({
          now: 1,
          jobs: [newJob({ priority: 3 }), newJob({ scheduledAt: 50, maxAttempts: 1 })],
        }),
      )
      .then(
        Event.mutation([
          inserted(1, { priority: 3, maxAttempts: 20, scheduledAt: 1, insertedAt: 1 }),
          inserted(2, { maxAttempts: 1, scheduledAt: 50, insertedAt: 1 }),
        ]),
      );
    expect(State.job(state, 2)?.state).toBe("scheduled");
  });

  it.each([
    ["now", Commands.insertJobs({ now: -1, jobs: [newJob()] })],
    ["jobs", Commands.insertJobs({ now: 0, jobs: [] })],
    ["jobs[0].queue", Commands.insertJobs({ now: 0, jobs: [newJob({ queue: "" })] })],
    [
      "jobs[0].worker",
      Commands.insertJobs({ now: 0, jobs: [newJob({ worker: "w".repeat(256) })] }),
    ],
    ["jobs[0].queue", Commands.insertJobs({ now: 0, jobs: [newJob({ queue: "q\udc00" })] })],
    ["jobs[0].priority", Commands.insertJobs({ now: 0, jobs: [newJob({ priority: -1 })] })],
    ["jobs[0].maxAttempts", Commands.insertJobs({ now: 0, jobs: [newJob({ maxAttempts: 0 })] })],
    ["jobs[0].scheduledAt", Commands.insertJobs({ now: 0, jobs: [newJob({ scheduledAt: 0.5 })] })],
    [
      "jobs[1].args",
      Commands.insertJobs({ now: 0, jobs: [newJob(), newJob({ args: Number.NaN })] }),
    ],
    ["jobs[0].args", Commands.insertJobs({ now: 0, jobs: [newJob({ args: 2n ** 64n })] })],
  ])("refuses a bad %s: InvalidField", (field, command) => {
    given().when(command).rejects("InvalidField", { field });
  });

  it("refuses args nested deeper than a snapshot part can keep, naming the first value too deep", () => {
    // 61 levels: a snapshot part keeps a job's args 3 levels down, and a record nests 64 at most.
    const nested = (depth: number): Value.Value => {
      let value: Value.Value = null;
      for (let level = 1; level < depth; level++) value = [value];
      return value;
    };
    const deepest = Decide.decide(
      State.initialState,
      Commands.insertJobs({ now: 0, jobs: [newJob({ args: nested(Value.argsDepthMax) })] }),
    );
    expect(Either.isRight(deepest)).toBe(true);
    given()
      .when(
        Commands.insertJobs({ now: 0, jobs: [newJob({ args: nested(Value.argsDepthMax + 1) })] }),
      )
      .rejects("InvalidField", {
        field: `jobs[0].args${"[0]".repeat(61)}`,
        detail: argsTooDeep,
      });
  });

  it("refuses a record over the payload bound: TooLarge", () => {
    const args = new Uint8Array(Limits.payloadBytesMax);
    given()
      .when(Commands.insertJobs({ now: 0, jobs: [newJob({ args })] }))
      .rejects("TooLarge", { limit: Limits.payloadBytesMax });
  });

  it("sizes the record as the record check does, for one job or several", () => {
    const big = new Uint8Array(Limits.payloadBytesMax - 1500);
    // Jobs whose args are values already, so that the events can be built from them.
    const valued = (args: Value.Value, fields: Partial<Commands.NewJob> = {}) => ({
      ...newJob(fields),
      args,
    });
    const cases = [
      [valued(new Uint8Array(Limits.payloadBytesMax), { queue: "é-queue" })],
      [valued("x".repeat(300), { worker: "Wörker" }), valued(big)],
      [valued(big), valued(new Map([["k", big]]))],
    ];
    for (const jobs of cases) {
      const members = jobs.map((job, index) =>
        Event.jobInserted({
          jobId: index + 1,
          queue: job.queue,
          worker: job.worker,
          args: job.args,
          priority: 0,
          maxAttempts: 20,
          scheduledAt: 0,
          insertedAt: 0,
        }),
      );
      const record = members.length === 1 && members[0] ? members[0] : Event.mutation(members);
      const bytes = recordBytes(record);
      expect(bytes).toBeGreaterThan(Limits.payloadBytesMax);
      expect(Decide.decide(State.initialState, Commands.insertJobs({ now: 0, jobs }))).toEqual(
        Either.left({ _tag: "TooLarge", bytes, limit: Limits.payloadBytesMax }),
      );
    }
    // Just under the bound: accepted.
    const fits = new Uint8Array(Limits.payloadBytesMax - 1100);
    expect(
      Either.isRight(
        Decide.decide(
          State.initialState,
          Commands.insertJobs({ now: 0, jobs: [newJob({ args: fits })] }),
        ),
      ),
    ).toBe(true);
  });

  it("accepts a record of exactly the payload bound, and refuses one byte more", () => {
    // Each decision's one record, its blob of `size` bytes; the bound is hit
    // by filling the blob with what the record lacks at size 0.
    const decisions: ReadonlyArray<
      (size: number) => Either.Either<unknown, ReadonlyArray<Event.Event>>
    > = [
      (size) => Decide.insertJobsAfter(0, insertBlob(size, {})),
      (size) => answeredRecords(insertBlob(size, {})),
      (size) => answeredRecords(insertBlob(size, { uniqueKey: "k" })),
      (size) =>
        Decide.completeJob(
          stateOf([inserted(1), started(1)]),
          Commands.completeJob({ now: 0, jobId: 1, result: new Uint8Array(size) }),
        ),
    ];
    for (const decide of decisions) {
      const empty = decide(0);
      const [record] = Either.isRight(empty) ? empty.right : [];
      if (record === undefined) throw new Error("no record");
      const size = Limits.payloadBytesMax - recordBytes(record);
      const exact = decide(size);
      const [full] = Either.isRight(exact) ? exact.right : [];
      expect(full === undefined ? undefined : recordBytes(full)).toBe(Limits.payloadBytesMax);
      expect(Either.isLeft(decide(size + 1))).toBe(true);
    }
  });

  it("uses ids up to 2^53-1 itself", () => {
    expect(
      Decide.insertJobsAfter(Limits.idMax - 1, Commands.insertJobs({ now: 0, jobs: [newJob()] })),
    ).toEqual(Either.right([inserted(Limits.idMax, { maxAttempts: 20 })]));
  });

  it("refuses ids past 2^53-1: IdsExhausted", () => {
    given(inserted(Limits.idMax))
      .when(Commands.insertJobs({ now: 0, jobs: [newJob()] }))
      .rejects("IdsExhausted", { lastJobId: Limits.idMax });
  });
});

describe("ClaimJobs", () => {
  it("starts available jobs in (priority, scheduled_at, job_id) order, up to the limit", () => {
    given(
      inserted(1, { priority: 2 }),
      inserted(2, { priority: 0, scheduledAt: 5, insertedAt: 5 }),
      inserted(3, { priority: 0, scheduledAt: 1, insertedAt: 5 }),
      inserted(4, { priority: 0, scheduledAt: 5, insertedAt: 5 }),
      inserted(5, { queue: "other" }),
    )
      .when(Commands.claimJobs({ now: 9, queue: "default", limit: 3 }))
      .then(
        Event.jobStarted({ jobId: 3, at: 9, attempt: 1 }),
        Event.jobStarted({ jobId: 2, at: 9, attempt: 1 }),
        Event.jobStarted({ jobId: 4, at: 9, attempt: 1 }),
      );
  });

  it("skips jobs that are not available, and starts a retried job at its next attempt", () => {
    given(
      inserted(1, { scheduledAt: 50 }),
      inserted(2),
      started(2),
      retried(2, 10),
      available(2, 10),
      inserted(3),
      started(3),
    )
      .when(Commands.claimJobs({ now: 20, queue: "default", limit: 10 }))
      .then(Event.jobStarted({ jobId: 2, at: 20, attempt: 2 }));
  });

  it("an empty queue: an empty decision", () => {
    given(inserted(1))
      .when(Commands.claimJobs({ now: 0, queue: "empty", limit: 5 }))
      .then();
  });

  it("refuses a limit outside 1..decisionRecordsMax", () => {
    given()
      .when(Commands.claimJobs({ now: 0, queue: "q", limit: 0 }))
      .rejects("InvalidField", {
        field: "limit",
      });
  });
});

describe("CompleteJob", () => {
  describe("when executing", () => {
    it("without a result: one (4,1) completed", () => {
      given(inserted(1), started(1))
        .when(Commands.completeJob({ now: 5, jobId: 1 }))
        .then(completed(1, 5));
    });

    it("with a result: one mutation [(4,1), (10,2)]", () => {
      const state = given(inserted(1), started(1))
        .when(Commands.completeJob({ now: 5, jobId: 1, result: "ok" }))
        .then(Event.mutation([completed(1, 5), result(1, "ok", 5)]));
      expect(State.job(state, 1)?.result).toEqual({ value: "ok", at: 5 });
    });

    it("a null result is still recorded", () => {
      given(inserted(1), started(1))
        .when(Commands.completeJob({ now: 5, jobId: 1, result: null }))
        .then(Event.mutation([completed(1, 5), result(1, null, 5)]));
    });
  });

  it("when available: InvalidTransition", () => {
    given(inserted(1))
      .when(Commands.completeJob({ now: 5, jobId: 1 }))
      .rejects("InvalidTransition", { jobId: 1, from: "available", command: "CompleteJob" });
  });

  it("for an unknown job: JobNotFound", () => {
    given()
      .when(Commands.completeJob({ now: 5, jobId: 1 }))
      .rejects("JobNotFound", { jobId: 1 });
  });
});

describe("FailJob", () => {
  it("with attempts left: retried at now + backoff(attempt)", () => {
    given(inserted(1), started(1))
      .when(Commands.failJob({ now: 100, jobId: 1, error: "flaky" }))
      .then(retried(1, 100 + Backoff.delayMs(Backoff.defaultPolicy, 1), 100, "flaky"));
  });

  it("uses the given backoff policy", () => {
    given(inserted(1), started(1))
      .when(
        Commands.failJob({
          now: 100,
          jobId: 1,
          error: "e",
          backoff: { baseMs: 10, factor: 3, capMs: 1000 },
        }),
      )
      .then(retried(1, 110, 100, "e"));
  });

  it("on the last attempt: discarded", () => {
    given(inserted(1, { maxAttempts: 1 }), started(1))
      .when(Commands.failJob({ now: 100, jobId: 1, error: "fatal" }))
      .then(Event.jobFinished({ jobId: 1, at: 100, outcome: "discarded", error: "fatal" }));
  });

  it("with discard set: discarded at once", () => {
    given(inserted(1), started(1))
      .when(Commands.failJob({ now: 100, jobId: 1, error: "fatal", discard: true }))
      .then(Event.jobFinished({ jobId: 1, at: 100, outcome: "discarded", error: "fatal" }));
  });

  it("when not executing: InvalidTransition", () => {
    given(inserted(1))
      .when(Commands.failJob({ now: 1, jobId: 1, error: "e" }))
      .rejects("InvalidTransition");
  });

  it("an error text over 65,535 bytes: InvalidField", () => {
    given(inserted(1), started(1))
      .when(Commands.failJob({ now: 1, jobId: 1, error: "x".repeat(65_536) }))
      .rejects("InvalidField", { field: "error" });
  });
});

describe("attempt fencing", () => {
  describe("CompleteJob with its attempt", () => {
    it("when that attempt is executing: completed as without it", () => {
      given(inserted(1), started(1))
        .when(Commands.completeJob({ now: 5, jobId: 1, attempt: 1 }))
        .then(completed(1, 5));
    });

    it("for an earlier attempt, the job claimed again: StaleAttempt", () => {
      given(
        inserted(1),
        started(1),
        retried(1, 10, 5, "timeout"),
        available(1, 10),
        started(1, 2, 11),
      )
        .when(Commands.completeJob({ now: 12, jobId: 1, attempt: 1 }))
        .rejects("StaleAttempt", {
          jobId: 1,
          attempt: 1,
          currentAttempt: 2,
          state: "executing",
        });
    });

    it("when the job was cancelled under its worker: StaleAttempt, not InvalidTransition", () => {
      given(inserted(1), started(1), cancelled(1, 3))
        .when(Commands.completeJob({ now: 5, jobId: 1, attempt: 1, result: "late" }))
        .rejects("StaleAttempt", { attempt: 1, currentAttempt: 1, state: "cancelled" });
    });

    it("an attempt out of range: InvalidField", () => {
      given(inserted(1), started(1))
        .when(Commands.completeJob({ now: 5, jobId: 1, attempt: 0 }))
        .rejects("InvalidField", { field: "attempt" });
    });

    it("for an unknown job: JobNotFound", () => {
      given()
        .when(Commands.completeJob({ now: 5, jobId: 1, attempt: 1 }))
        .rejects("JobNotFound", { jobId: 1 });
    });
  });

  describe("FailJob with its attempt", () => {
    it("when that attempt is executing: retried as without it", () => {
      given(inserted(1), started(1))
        .when(Commands.failJob({ now: 100, jobId: 1, error: "flaky", attempt: 1 }))
        .then(retried(1, 100 + Backoff.delayMs(Backoff.defaultPolicy, 1), 100, "flaky"));
    });

    it("after a rescue failed that attempt already: StaleAttempt", () => {
      given(inserted(1), started(1), retried(1, 10, 5, "orphaned"))
        .when(Commands.failJob({ now: 6, jobId: 1, error: "late", attempt: 1 }))
        .rejects("StaleAttempt", { attempt: 1, currentAttempt: 1, state: "retryable" });
    });
  });
});

describe("CancelJob", () => {
  it.each([
    ["scheduled", [inserted(1, { scheduledAt: 9 })]],
    ["available", [inserted(1)]],
    ["executing", [inserted(1), started(1)]],
    ["retryable", [inserted(1), started(1), retried(1)]],
  ] as const)("when %s: one (5,1)", (_, history) => {
    given(...history)
      .when(Commands.cancelJob({ now: 3, jobId: 1, reason: "no longer needed" }))
      .then(Event.jobCancelled({ jobId: 1, at: 3, reason: "no longer needed" }));
  });

  it.each([
    ["completed", [inserted(1), started(1), completed(1)]],
    ["cancelled", [inserted(1), cancelled(1)]],
  ] as const)("when %s: InvalidTransition", (from, history) => {
    given(...history)
      .when(Commands.cancelJob({ now: 3, jobId: 1, reason: null }))
      .rejects("InvalidTransition", { from });
  });
});

describe("RescueJobs", () => {
  it("fails executing jobs started before the cut-off, oldest first", () => {
    given(
      inserted(1),
      inserted(2, { maxAttempts: 1 }),
      inserted(3),
      started(1, 1, 20),
      started(2, 1, 10),
      started(3, 1, 30),
    )
      .when(Commands.rescueJobs({ now: 100, startedBefore: 30, error: "orphaned" }))
      .then(
        Event.jobFinished({ jobId: 2, at: 100, outcome: "discarded", error: "orphaned" }),
        retried(1, 100 + Backoff.delayMs(Backoff.defaultPolicy, 1), 100, "orphaned"),
      );
  });

  it("respects the limit", () => {
    given(inserted(1), inserted(2), started(1), started(2))
      .when(Commands.rescueJobs({ now: 5, startedBefore: 5, error: "orphaned", limit: 1 }))
      .then(retried(1, 5 + 1_000, 5, "orphaned"));
  });
});

describe("MakeDueAvailable", () => {
  it("makes due scheduled and retryable jobs available, by scheduled_at", () => {
    given(
      inserted(1, { scheduledAt: 30 }),
      inserted(2, { scheduledAt: 10 }),
      inserted(3),
      started(3),
      retried(3, 20),
      inserted(4, { scheduledAt: 99 }),
    )
      .when(Commands.makeDueAvailable({ now: 30 }))
      .then(available(2, 30), available(3, 30), available(1, 30));
  });

  it("respects the limit and decides nothing when nothing is due", () => {
    given(inserted(1, { scheduledAt: 30 }), inserted(2, { scheduledAt: 10 }))
      .when(Commands.makeDueAvailable({ now: 30, limit: 1 }))
      .then(available(2, 30));
    given(inserted(1, { scheduledAt: 30 }))
      .when(Commands.makeDueAvailable({ now: 29 }))
      .then();
  });
});

describe("RegisterSchedule", () => {
  it("a new schedule: (13,2) revision 1, first due after now", () => {
    given()
      .when(Commands.registerSchedule({ now: 1_000, scheduleId: "s", definition: definition() }))
      .then(checkpoint("s", { registeredAt: 1_000, nextDueAt: 61_000 }));
  });

  it("a cron schedule: first due at the next matching minute (UTC)", () => {
    given()
      .when(
        Commands.registerSchedule({
          now: 0,
          scheduleId: "s",
          definition: definition({ everyMs: null, cron: "30 2 * * *" }),
        }),
      )
      .then(
        checkpoint("s", {
          definition: definition({ everyMs: null, cron: "30 2 * * *" }),
          nextDueAt: (2 * 60 + 30) * 60_000,
        }),
      );
  });

  it("re-registering a new definition: revision + 1, keeps last_due_at and occurrences", () => {
    const changed = definition({ everyMs: 5_000 });
    given(checkpoint("s"), inserted(1), delivered("s", 2, 60_000, 120_000, 1))
      .when(
        Commands.registerSchedule({
          now: 70_000,
          scheduleId: "s",
          definition: changed,
          expectedRevision: 2,
        }),
      )
      .then(
        checkpoint("s", {
          definition: changed,
          revision: 3,
          definitionRevision: 3,
          registeredAt: 70_000,
          nextDueAt: 75_000,
          lastDueAt: 60_000,
          activeJobIds: [1],
        }),
      );
  });

  it("re-registering the same definition of an active schedule decides nothing", () => {
    given(checkpoint("s"))
      .when(Commands.registerSchedule({ now: 5, scheduleId: "s", definition: definition() }))
      .then();
  });

  it("re-registering a cancelled schedule revives it", () => {
    given(checkpoint("s", { cancelledAt: 3 }))
      .when(Commands.registerSchedule({ now: 5, scheduleId: "s", definition: definition() }))
      .then(
        checkpoint("s", { revision: 2, definitionRevision: 2, registeredAt: 5, nextDueAt: 60_005 }),
      );
  });

  it.each([
    [0, 1],
    [2, 1],
  ])("expectedRevision %i at revision %i: RevisionMismatch", (expected, actual) => {
    given(checkpoint("s"))
      .when(
        Commands.registerSchedule({
          now: 5,
          scheduleId: "s",
          definition: definition({ everyMs: 7 }),
          expectedRevision: expected,
        }),
      )
      .rejects("RevisionMismatch", { expected, actual });
  });

  it("expectedRevision 0 creates only when new", () => {
    given()
      .when(
        Commands.registerSchedule({
          now: 0,
          scheduleId: "s",
          definition: definition(),
          expectedRevision: 0,
        }),
      )
      .then(checkpoint("s"));
  });

  it.each([
    ["both", definition({ cron: "* * * * *" })],
    ["neither", definition({ everyMs: null })],
    ["a bad cron", definition({ everyMs: null, cron: "* * * *" })],
    ["a cron that never matches", definition({ everyMs: null, cron: "0 0 30 2 *" })],
  ])("%s: InvalidDefinition", (_, bad) => {
    given()
      .when(Commands.registerSchedule({ now: 0, scheduleId: "s", definition: bad }))
      .rejects("InvalidDefinition", { scheduleId: "s" });
  });

  it("fields the codec refuses: InvalidField", () => {
    given()
      .when(
        Commands.registerSchedule({
          now: 0,
          scheduleId: "s",
          definition: definition({ priority: 12 }),
        }),
      )
      .rejects("InvalidField", { field: "definition.priority" });
    given()
      .when(Commands.registerSchedule({ now: 0, scheduleId: "", definition: definition() }))
      .rejects("InvalidField", { field: "scheduleId" });
    given()
      .when(
        Commands.registerSchedule({
          now: 0,
          scheduleId: "s",
          definition: definition({ queue: "\ud800" }),
        }),
      )
      .rejects("InvalidField", { field: "definition.queue" });
  });
});

describe("CancelSchedule", () => {
  it("an active schedule: (9,2) revision + 1", () => {
    given(checkpoint("s"))
      .when(Commands.cancelSchedule({ now: 9, scheduleId: "s", expectedRevision: 1 }))
      .then(Event.scheduleCancelled({ scheduleId: "s", revision: 2, at: 9 }));
  });

  it("rejections: not found, already cancelled, revision mismatch", () => {
    given()
      .when(Commands.cancelSchedule({ now: 9, scheduleId: "s" }))
      .rejects("ScheduleNotFound");
    given(checkpoint("s", { cancelledAt: 1 }))
      .when(Commands.cancelSchedule({ now: 9, scheduleId: "s" }))
      .rejects("ScheduleAlreadyCancelled");
    given(checkpoint("s"))
      .when(Commands.cancelSchedule({ now: 9, scheduleId: "s", expectedRevision: 3 }))
      .rejects("RevisionMismatch", { expected: 3, actual: 1 });
  });
});

describe("Tick", () => {
  it("delivers a due occurrence: one mutation [(1,1), (11,2) delivered]", () => {
    const state = given(inserted(1), checkpoint("s", { nextDueAt: 60_000 }))
      .when(Commands.tick({ now: 60_500 }))
      .then(
        Event.mutation([
          inserted(2, {
            queue: "reports",
            worker: "Report",
            scheduledAt: 60_000,
            insertedAt: 60_500,
          }),
          delivered("s", 2, 60_000, 120_000, 2),
        ]),
      );
    expect(State.schedule(state, "s")?.activeJobIds).toEqual([2]);
  });

  it("nothing due: an empty decision", () => {
    given(checkpoint("s", { nextDueAt: 60_000 }))
      .when(Commands.tick({ now: 59_999 }))
      .then();
  });

  it("overlap skip with an active occurrence: (11,2) skipped", () => {
    given(
      checkpoint("s", { definition: definition({ overlap: "skip" }), nextDueAt: 60_000 }),
      inserted(1),
      delivered("s", 2, 60_000, 120_000, 1),
    )
      .when(Commands.tick({ now: 120_000 }))
      .then(
        Event.occurrenceAdvanced({
          scheduleId: "s",
          revision: 3,
          dueAt: 120_000,
          nextDueAt: 180_000,
          outcome: "skipped",
          activeJobId: null,
        }),
      );
  });

  it("overlap skip delivers again once the occurrence is terminal", () => {
    const decision = given(
      checkpoint("s", { definition: definition({ overlap: "skip" }), nextDueAt: 60_000 }),
      inserted(1),
      delivered("s", 2, 60_000, 120_000, 1),
      started(1),
      completed(1),
    ).when(Commands.tick({ now: 120_000 }));
    const state = decision.then(
      Event.mutation([
        inserted(2, {
          queue: "reports",
          worker: "Report",
          scheduledAt: 120_000,
          insertedAt: 120_000,
        }),
        delivered("s", 3, 120_000, 180_000, 2),
      ]),
    );
    expect(Query.countsOf(state, "reports").available).toBe(1);
  });

  it("coalesces missed occurrences: one delivery, next due after now", () => {
    given(checkpoint("s", { nextDueAt: 60_000 }))
      .when(Commands.tick({ now: 60_000 * 10 + 5 }))
      .then(
        Event.mutation([
          inserted(1, {
            queue: "reports",
            worker: "Report",
            scheduledAt: 60_000,
            insertedAt: 600_005,
          }),
          delivered("s", 2, 60_000, 660_000, 1),
        ]),
      );
  });

  it("several due schedules: earliest first, consecutive job ids; cancelled ones never", () => {
    given(
      checkpoint("b", { nextDueAt: 10 }),
      checkpoint("a", { nextDueAt: 20 }),
      checkpoint("c", { nextDueAt: 5, cancelledAt: 1 }),
    )
      .when(Commands.tick({ now: 30 }))
      .then(
        Event.mutation([
          inserted(1, { queue: "reports", worker: "Report", scheduledAt: 10, insertedAt: 30 }),
          delivered("b", 2, 10, 60_010, 1),
        ]),
        Event.mutation([
          inserted(2, { queue: "reports", worker: "Report", scheduledAt: 20, insertedAt: 30 }),
          delivered("a", 2, 20, 60_020, 2),
        ]),
      );
  });

  it("a schedule with no representable next occurrence is cancelled", () => {
    const last = Limits.timeMax - 10;
    given(checkpoint("s", { nextDueAt: last }))
      .when(Commands.tick({ now: last }))
      .then(Event.scheduleCancelled({ scheduleId: "s", revision: 2, at: last }));
  });

  it("respects the limit", () => {
    const decision = Decide.tick(
      given(checkpoint("a", { nextDueAt: 1 }), checkpoint("b", { nextDueAt: 2 })).state,
      Commands.tick({ now: 5, limit: 1 }),
    );
    expect(Either.isRight(decision) && decision.right.length).toBe(1);
  });
});

// What the deciders put in an event is what decoding its bytes gives back,
// so the state folded after a decision is the state a reopen reads.
describe("values and numbers taken from a command", () => {
  /** The one event of a decision of one record that is not a mutation. */
  const onlyEvent = (decision: Decide.Decided): Event.Event => {
    if (Either.isLeft(decision) || decision.right.length !== 1 || decision.right[0] === undefined) {
      throw new Error(
        `not one record: ${JSON.stringify(Either.isLeft(decision) && decision.left)}`,
      );
    }
    return decision.right[0];
  };
  const insertedArgs = (args: Value.Input): Value.Value => {
    const event = onlyEvent(
      Decide.decide(State.initialState, Commands.insertJobs({ now: 0, jobs: [newJob({ args })] })),
    );
    if (event._tag !== "JobInserted") throw new Error(event._tag);
    return event.args;
  };

  describe("when they are not in canonical form", () => {
    it("an insert's args: -0 is 0 and a safe bigint a number, nested too", () => {
      const args = new Map<string, Value.Value>([
        ["list", [-0, 5n, -(2n ** 53n - 1n), 2n ** 53n, 1.5]],
      ]);
      const state = given()
        .when(Commands.insertJobs({ now: 0, jobs: [newJob({ args })] }))
        .then(
          inserted(1, {
            args: new Map([["list", [0, 5, -(2 ** 53 - 1), 2n ** 53n, 1.5]]]),
            maxAttempts: 20,
          }),
        );
      const held = State.job(state, 1)?.args ?? null;
      const list = Value.isMap(held) ? held.get("list") : undefined;
      expect(Array.isArray(list) && Object.is(list[0], 0)).toBe(true);
      expect(Array.isArray(list) && typeof list[1]).toBe("number");
      expect(Array.isArray(list) && typeof list[3]).toBe("bigint");
    });

    it("a map's keys in UTF-8 byte order, as the decoder builds the map", () => {
      const args = insertedArgs(
        new Map<string, Value.Value>([
          ["b", 1],
          ["\u{1F600}", 2],
          ["\uFFFD", 3],
          [
            "a",
            new Map([
              ["z", 1],
              ["y", 2],
            ]),
          ],
        ]),
      );
      expect(Value.isMap(args) && [...args.keys()]).toEqual(["a", "b", "\uFFFD", "\u{1F600}"]);
      const inner = Value.isMap(args) ? (args.get("a") ?? null) : null;
      expect(Value.isMap(inner) && [...inner.keys()]).toEqual(["y", "z"]);
    });

    it("a Buffer, an Array or a Map of a subclass is a plain one", () => {
      class Listing extends Array<Value.Value> {}
      class Registry extends Map<string, Value.Value> {}
      const list = Listing.from([1, 2]);
      const args = insertedArgs(
        new Registry([
          ["bytes", Buffer.from([1, 2, 3])],
          ["list", list],
        ]),
      );
      expect(Object.getPrototypeOf(args)).toBe(Map.prototype);
      const bytes = Value.isMap(args) ? args.get("bytes") : undefined;
      expect(Object.getPrototypeOf(bytes)).toBe(Uint8Array.prototype);
      expect(bytes).toEqual(Uint8Array.of(1, 2, 3));
      const items = Value.isMap(args) ? args.get("list") : undefined;
      expect(Object.getPrototypeOf(items)).toBe(Array.prototype);
      expect(items).toEqual([1, 2]);
    });

    it("a result, a definition's args and priority, and every time", () => {
      const completed = onlyEvent(
        Decide.decide(
          stateOf([inserted(1), started(1)]),
          Commands.completeJob({ now: -0, jobId: 1, result: [5n, -0] }),
        ),
      );
      expect(completed._tag === "Mutation" && completed.events).toStrictEqual([
        Event.jobFinished({ jobId: 1, at: 0, outcome: "completed", error: null }),
        Event.resultRecorded({ jobId: 1, result: [5, 0], at: 0 }),
      ]);
      const finished = completed._tag === "Mutation" ? completed.events[0] : undefined;
      expect(finished?._tag === "JobFinished" && Object.is(finished.at, 0)).toBe(true);
      const registered = onlyEvent(
        Decide.decide(
          State.initialState,
          Commands.registerSchedule({
            now: -0,
            scheduleId: "s",
            definition: definition({ args: new Map([["n", 7n]]), priority: -0 }),
          }),
        ),
      );
      expect(registered._tag === "ScheduleCheckpoint" && registered.definition).toStrictEqual(
        definition({ args: new Map([["n", 7]]), priority: 0 }),
      );
      expect(
        registered._tag === "ScheduleCheckpoint" && Object.is(registered.registeredAt, 0),
      ).toBe(true);
      const job = onlyEvent(
        Decide.decide(
          State.initialState,
          Commands.insertJobs({ now: -0, jobs: [newJob({ priority: -0, scheduledAt: -0 })] }),
        ),
      );
      if (job._tag !== "JobInserted") throw new Error(job._tag);
      for (const number of [job.priority, job.scheduledAt, job.insertedAt]) {
        expect(Object.is(number, 0)).toBe(true);
      }
    });
  });

  describe("when they are plain objects", () => {
    const keysOf = (value: Value.Value | undefined): unknown =>
      value instanceof Map ? [...value.keys()] : value;

    it("an insert's args: a plain object is a Map, as the decoder gives it", () => {
      const state = given()
        .when(Commands.insertJobs({ now: 0, jobs: [newJob({ args: { user_id: 42 } })] }))
        .then(inserted(1, { args: new Map([["user_id", 42]]), maxAttempts: 20 }));
      expect(State.job(state, 1)?.args).toBeInstanceOf(Map);
    });

    it("its keys in UTF-8 byte order, not in the order Object.keys or UTF-16 gives them", () => {
      const args = insertedArgs({
        b: -0,
        10: 1,
        9: 2,
        "\u{1F600}": 3,
        "\uFFFD": 4,
        a: [{ z: 5n, y: 6 }],
      });
      expect(keysOf(args)).toEqual(["10", "9", "a", "b", "\uFFFD", "\u{1F600}"]);
      const list = Value.isMap(args) ? args.get("a") : undefined;
      const inner = Array.isArray(list) ? list[0] : undefined;
      expect(keysOf(inner)).toEqual(["y", "z"]);
      expect(inner).toEqual(
        new Map([
          ["y", 6],
          ["z", 5],
        ]),
      );
      expect(Value.isMap(args) && Object.is(args.get("b"), 0)).toBe(true);
    });

    it("__proto__, constructor and hasOwnProperty are keys like any other, and no object is written", () => {
      const args = JSON.parse(
        '{"__proto__": {"polluted": true}, "constructor": "c", "hasOwnProperty": 1}',
      );
      // Frozen, the args would throw at any write into them (modules are strict).
      Object.freeze(args);
      Object.freeze(Reflect.get(args, "__proto__"));
      const state = given()
        .when(Commands.insertJobs({ now: 0, jobs: [newJob({ args })] }))
        .then(
          inserted(1, {
            args: new Map<string, Value.Value>([
              ["__proto__", new Map([["polluted", true]])],
              ["constructor", "c"],
              ["hasOwnProperty", 1],
            ]),
            maxAttempts: 20,
          }),
        );
      const held = State.job(state, 1)?.args;
      expect(keysOf(held)).toEqual(["__proto__", "constructor", "hasOwnProperty"]);
      expect(Reflect.get({}, "polluted")).toBeUndefined();
    });

    it("a result and a definition's args: plain objects are maps there too", () => {
      given(inserted(1), started(1))
        .when(Commands.completeJob({ now: 1, jobId: 1, result: { rows: [{ at: 1 }] } }))
        .then(
          Event.mutation([
            Event.jobFinished({ jobId: 1, at: 1, outcome: "completed", error: null }),
            result(1, new Map([["rows", [new Map([["at", 1]])]]]), 1),
          ]),
        );
      const registration = (args: Value.Input) =>
        Commands.registerSchedule({
          now: 0,
          scheduleId: "s",
          definition: { ...definition(), args },
        });
      const state = given()
        .when(registration({ report: "daily", to: ["ops"] }))
        .then(
          checkpoint("s", {
            definition: definition({
              args: new Map<string, Value.Value>([
                ["report", "daily"],
                ["to", ["ops"]],
              ]),
            }),
          }),
        );
      // The same definition again, as a Map or a plain object in another key
      // order, is the definition registered: nothing to decide.
      const again = Decide.decide(state, registration({ to: ["ops"], report: "daily" }));
      expect(again).toEqual(Either.right([]));
    });
  });

  describe("when they are in canonical form already", () => {
    it("takes them as they are, without a copy", () => {
      const args = new Map<string, Value.Value>([
        ["a", [1, 2n ** 60n, new Map([["k", Uint8Array.of(1)]])]],
        ["b", "text"],
      ]);
      expect(insertedArgs(args)).toBe(args);
    });

    it("copies only the way to a part that changes", () => {
      const untouched = [1, 2, 3];
      const args = new Map<string, Value.Value>([
        ["a", untouched],
        ["b", [untouched, -0]],
      ]);
      const decided = insertedArgs(args);
      expect(decided).not.toBe(args);
      expect(Value.isMap(decided) && decided.get("a")).toBe(untouched);
      const b = Value.isMap(decided) ? decided.get("b") : undefined;
      expect(Array.isArray(b) && b[0]).toBe(untouched);
    });
  });
});

// A value the codec cannot encode is refused with the path inside it and a
// sentence that says what is there.
describe("refusing what is not a value", () => {
  /** A copy of `items` with an empty slot at `index` (a sparse array, as untyped code makes). */
  const withHole = <T>(items: ReadonlyArray<T>, index: number): T[] => {
    const sparse = new Array<T>(items.length);
    items.forEach((item, at) => {
      if (at !== index) sparse[at] = item;
    });
    return sparse;
  };

  it.each([
    [
      "jobs[1].args.user.id",
      "a function is not a value",
      new Map([["user", new Map([["id", () => 1]])]]),
    ],
    ["jobs[1].args[3]", "undefined is not a value", [1, 2, 3, undefined]],
    ["jobs[1].args[1]", "an empty slot of a sparse list is not a value", withHole([1, 2, 3], 1)],
    [
      'jobs[1].args["a b"][0]',
      "a number that is not finite is not a value",
      new Map([["a b", [Number.NaN]]]),
    ],
    [
      'jobs[1].args[""]',
      "a number that is not finite is not a value",
      new Map([["", Number.POSITIVE_INFINITY]]),
    ],
    ["jobs[1].args.__proto__", "a symbol is not a value", new Map([["__proto__", Symbol("s")]])],
    ["jobs[1].args.user.id", "a function is not a value", { user: { id: () => 1 } }],
    [
      "jobs[1].args.user.__proto__.id",
      "undefined is not a value",
      {
        user: Object.defineProperty({}, "__proto__", {
          value: { id: undefined },
          enumerable: true,
        }),
      },
    ],
    [
      "jobs[1].args",
      "an object of class Date is not a value (pass its getTime() or toISOString())",
      new Date(0),
    ],
    ["jobs[1].args[0]", "an object of class Float64Array is not a value", [new Float64Array(1)]],
    [
      "jobs[1].args.at",
      "an object with a prototype other than Object is not a value",
      { at: Object.create(Object.create(null)) },
    ],
    [
      "jobs[1].args.big",
      "a bigint outside int64 (-2^63..2^63-1) is not a value",
      new Map([["big", 2n ** 63n]]),
    ],
    [
      "jobs[1].args.text",
      "a string with a lone surrogate is not a value",
      new Map([["text", "a\ud800"]]),
    ],
    [
      "jobs[1].args.keys",
      "a map key that is a number is not a value",
      new Map([["keys", new Map([[1, 1]])]]),
    ],
    ["jobs[1].args", "a map key with a lone surrogate is not a value", new Map([["\udc00", 1]])],
  ])("%s: %s", (field, detail, args) => {
    given()
      .when(
        Commands.insertJobs({ now: 0, jobs: [newJob(), newJob({ args: args as Value.Value })] }),
      )
      .rejects("InvalidField", { field, detail });
  });

  it("quotes a key that is not identifier-like, cut at 64 characters", () => {
    const key = `${"k".repeat(70)} x`;
    given()
      .when(
        Commands.insertJobs({
          now: 0,
          jobs: [newJob({ args: new Map([[key, Number.NaN]]) })],
        }),
      )
      .rejects("InvalidField", { field: `jobs[0].args[${JSON.stringify(`${"k".repeat(64)}…`)}]` });
  });

  it("a cycle is refused as too deep, not followed forever", () => {
    const cycle: Value.Value[] = [];
    cycle.push(cycle);
    given()
      .when(Commands.insertJobs({ now: 0, jobs: [newJob({ args: cycle })] }))
      .rejects("InvalidField", {
        field: `jobs[0].args${"[0]".repeat(61)}`,
        detail: argsTooDeep,
      });
  });

  it("names the path inside a result and a definition's args", () => {
    given(inserted(1), started(1))
      .when(
        Commands.completeJob({
          now: 1,
          jobId: 1,
          result: new Map([["rows", [new Map([["at", new Date(0) as unknown as Value.Value]])]]]),
        }),
      )
      .rejects("InvalidField", {
        field: "result.rows[0].at",
        detail: "an object of class Date is not a value (pass its getTime() or toISOString())",
      });
    given()
      .when(
        Commands.registerSchedule({
          now: 0,
          scheduleId: "s",
          definition: definition({ args: [1, [2, Number.NEGATIVE_INFINITY]] }),
        }),
      )
      .rejects("InvalidField", {
        field: "definition.args[1][1]",
        detail: "a number that is not finite is not a value",
      });
  });

  it("bounds a result at 63 levels and a definition's args at 61, as the records keeping them allow", () => {
    const nested = (depth: number): Value.Value => {
      let value: Value.Value = null;
      for (let level = 1; level < depth; level++) value = [value];
      return value;
    };
    const complete = (depth: number) =>
      Commands.completeJob({ now: 1, jobId: 1, result: nested(depth) });
    given(inserted(1), started(1))
      .when(complete(63))
      .then(Event.mutation([completed(1, 1), result(1, nested(63), 1)]));
    given(inserted(1), started(1))
      .when(complete(64))
      .rejects("InvalidField", {
        field: `result${"[0]".repeat(63)}`,
        detail:
          "a value nested deeper than 63 levels is not encodable here: the records that keep it hold it 1 level(s) down, and a record nests at most 64",
      });
    const register = (depth: number) =>
      Commands.registerSchedule({
        now: 0,
        scheduleId: "s",
        definition: definition({ args: nested(depth) }),
      });
    expect(Either.isRight(Decide.decide(State.initialState, register(61)))).toBe(true);
    given()
      .when(register(62))
      .rejects("InvalidField", {
        field: `definition.args${"[0]".repeat(61)}`,
        detail: argsTooDeep,
      });
  });

  it("a hole in the list of jobs is refused, not skipped", () => {
    given()
      .when(Commands.insertJobs({ now: 0, jobs: withHole([newJob(), newJob(), newJob()], 1) }))
      .rejects("InvalidField", { field: "jobs[1]", detail: "must be a job" });
  });
});

describe("decide", () => {
  it("rejects a malformed command from untyped code", () => {
    const decision = Decide.decide(State.initialState, {
      _tag: "Explode",
    } as unknown as Commands.Command);
    expect(Either.isLeft(decision) && decision.left).toMatchObject({
      _tag: "InvalidField",
      field: "_tag",
    });
  });
});
