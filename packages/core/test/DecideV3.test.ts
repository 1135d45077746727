// The deciders of EVENTS-V3.md as specifications: given a history, when a
// command is decided, then exactly these records (legal for `evolve`), or a
// typed rejection; unique inserts also say how each job was answered.
// Grouped by command and by state.
import { Commands, Decide, Event, Limits, type State } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { recordBytes } from "../src/internal/Encoded.js";
import { PendingKeys } from "../src/internal/PendingKeys.js";
import {
  cancelled,
  completed,
  discarded,
  evolveAll,
  given,
  inserted,
  retried,
  started,
  stateOf,
} from "./support/Given.js";
import { insertedV3, queueState, redriven, unique } from "./support/GivenV3.js";

const newJob = (overrides: Partial<Commands.NewJob> = {}): Commands.NewJob => ({
  queue: "default",
  worker: "W",
  args: null,
  ...overrides,
});

const answered = (state: State.State, command: Commands.InsertJobs) => {
  const decision = Decide.insertJobsAnswered(state, command);
  if (Either.isLeft(decision)) throw new Error(JSON.stringify(decision.left));
  // Whatever is decided is legal.
  evolveAll(state, decision.right.records);
  return decision.right;
};

describe("InsertJobs with a unique key", () => {
  it("when the key is free: one (1,3) with the key, answered as new", () => {
    const state = stateOf([inserted(1)]);
    const decision = answered(
      state,
      Commands.insertJobs({ now: 5, jobs: [newJob({ uniqueKey: "k", uniquePeriodMs: 10 })] }),
    );
    expect(decision.records).toEqual([
      insertedV3(2, {
        uniqueKey: "k",
        uniquePeriodMs: 10,
        scheduledAt: 5,
        insertedAt: 5,
        maxAttempts: 20,
      }),
    ]);
    expect(decision.answers).toEqual([{ jobId: 2, duplicate: false }]);
  });

  it("when a non-terminal job holds it: nothing appended, the existing job marked as a duplicate", () => {
    const state = stateOf([unique(1, "k"), started(1)]);
    const decision = answered(
      state,
      Commands.insertJobs({ now: 5, jobs: [newJob({ uniqueKey: "k" })] }),
    );
    expect(decision).toEqual({ records: [], answers: [{ jobId: 1, duplicate: true }] });
    given(unique(1, "k"))
      .when(Commands.insertJobs({ now: 5, jobs: [newJob({ uniqueKey: "k" })] }))
      .then();
  });

  it("when the holder finished within the period: a duplicate; after it: new", () => {
    const history = [unique(1, "k"), started(1), completed(1, 100)];
    const within = answered(
      stateOf(history),
      Commands.insertJobs({ now: 150, jobs: [newJob({ uniqueKey: "k", uniquePeriodMs: 50 })] }),
    );
    expect(within.answers).toEqual([{ jobId: 1, duplicate: true }]);
    const after = answered(
      stateOf(history),
      Commands.insertJobs({ now: 151, jobs: [newJob({ uniqueKey: "k", uniquePeriodMs: 50 })] }),
    );
    expect(after.answers).toEqual([{ jobId: 2, duplicate: false }]);
  });

  it("in a batch: each job answered on its own, the others inserted in one mutation", () => {
    const state = stateOf([unique(1, "taken")]);
    const decision = answered(
      state,
      Commands.insertJobs({
        now: 0,
        jobs: [
          newJob({ uniqueKey: "taken" }),
          newJob({ uniqueKey: "a" }),
          newJob(),
          newJob({ uniqueKey: "a" }),
          newJob({ uniqueKey: "a", queue: "other" }),
        ],
      }),
    );
    expect(decision.answers).toEqual([
      { jobId: 1, duplicate: true },
      { jobId: 2, duplicate: false },
      { jobId: 3, duplicate: false },
      { jobId: 2, duplicate: true },
      { jobId: 4, duplicate: false },
    ]);
    expect(decision.records).toHaveLength(1);
    const [record] = decision.records;
    expect(record?._tag === "Mutation" && record.events.map((event) => event._tag)).toEqual([
      "JobInsertedV3",
      "JobInserted",
      "JobInsertedV3",
    ]);
  });

  it("in a batch: every later job with a key answered with the first that took it", () => {
    const decision = answered(
      stateOf([]),
      Commands.insertJobs({
        now: 0,
        jobs: [newJob({ uniqueKey: "a" }), newJob({ uniqueKey: "a" }), newJob({ uniqueKey: "a" })],
      }),
    );
    expect(decision.answers).toEqual([
      { jobId: 1, duplicate: false },
      { jobId: 1, duplicate: true },
      { jobId: 1, duplicate: true },
    ]);
  });

  it("insertJobsPending: a key a pending insert holds is taken; ids follow the pending last id", () => {
    const pending = new PendingKeys();
    pending.add("default", "k", 7);
    const command = Commands.insertJobs({
      now: 0,
      jobs: [newJob({ uniqueKey: "k" }), newJob({ uniqueKey: "free" })],
    });
    expect(Decide.insertJobsPending(stateOf([]), 7, pending, command)).toEqual(
      Either.right([insertedV3(8, { uniqueKey: "free", maxAttempts: 20 })]),
    );
  });

  it("insertAnswers: each job's answer read back from the state after its records", () => {
    const state = stateOf([unique(1, "k", { queue: "a" })]);
    // The job of queue "a" collides; the one of queue "b" with the same key is inserted.
    const command = Commands.insertJobs({
      now: 0,
      jobs: [newJob({ queue: "a", uniqueKey: "k" }), newJob({ queue: "b", uniqueKey: "k" })],
    });
    const records = answered(state, command).records;
    expect(Decide.insertAnswers(evolveAll(state, records), command, records)).toEqual([
      { jobId: 1, duplicate: true },
      { jobId: 2, duplicate: false },
    ]);
  });

  it("uniqueHolderOf: the holder by the job's own period", () => {
    const state = stateOf([unique(1, "k"), started(1), completed(1, 100)]);
    const job = newJob({ uniqueKey: "k", uniquePeriodMs: 50 });
    expect(Decide.uniqueHolderOf(state, job, 150)).toBe(1);
    expect(Decide.uniqueHolderOf(state, job, 151)).toBeUndefined();
    expect(Decide.uniqueHolderOf(state, newJob({ uniqueKey: "k" }), 150)).toBeUndefined();
  });

  it("insertJobsAfter cannot decide a unique key (it reads last_job_id alone)", () => {
    const decided = Decide.insertJobsAfter(
      0,
      Commands.insertJobs({ now: 0, jobs: [newJob({ uniqueKey: "k" })] }),
    );
    expect(Either.isLeft(decided) && decided.left).toMatchObject({
      _tag: "InvalidField",
      field: "jobs[0].uniqueKey",
    });
  });

  it("rejects v3 fields outside their kinds", () => {
    given()
      .when(Commands.insertJobs({ now: 0, jobs: [newJob({ uniqueKey: "" })] }))
      .rejects("InvalidField", { field: "jobs[0].uniqueKey" });
    given()
      .when(Commands.insertJobs({ now: 0, jobs: [newJob({ timeoutMs: 0 })] }))
      .rejects("InvalidField", { field: "jobs[0].timeoutMs" });
    given()
      .when(Commands.insertJobs({ now: 0, jobs: [newJob({ uniquePeriodMs: 5 })] }))
      .rejects("InvalidField", { field: "jobs[0].uniquePeriodMs" });
  });
  it("sizes the record as the record check does, duplicates left out (property)", () => {
    // Sizes that put one, two or three jobs on either side of the bound.
    const sizes = [0, 700, Limits.payloadBytesMax - 1500, Limits.payloadBytesMax - 900];
    const blobs = sizes.map((size) => new Uint8Array(size));
    const state = stateOf([unique(1, "taken")]);
    const spec = fc.record({
      queue: fc.constantFrom("default", "é-queue"),
      key: fc.constantFrom("taken", "a", "b", "ключ-κ", "x".repeat(200)),
      blob: fc.integer({ min: 0, max: blobs.length - 1 }),
    });
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 3 }), (specs) => {
        const jobs = specs.map(({ queue, key, blob }) =>
          newJob({ queue, uniqueKey: key, args: blobs[blob] ?? null }),
        );
        // The model: the jobs whose (queue, key) neither the state nor an earlier job holds.
        const held = new Set(["default\u0000taken"]);
        const members: Array<Event.JobInsertedV3> = [];
        for (const { queue, key, blob } of specs) {
          const pair = `${queue}\u0000${key}`;
          if (held.has(pair)) continue;
          held.add(pair);
          members.push(
            insertedV3(state.lastJobId + members.length + 1, {
              queue,
              args: blobs[blob] ?? null,
              uniqueKey: key,
              maxAttempts: 20,
            }),
          );
        }
        const decision = Decide.insertJobsAnswered(state, Commands.insertJobs({ now: 0, jobs }));
        const [first] = members;
        if (first === undefined) {
          expect(Either.isRight(decision) && decision.right.records).toEqual([]);
          return;
        }
        const bytes = recordBytes(members.length === 1 ? first : Event.mutation(members));
        if (bytes > Limits.payloadBytesMax) {
          expect(decision).toEqual(
            Either.left({ _tag: "TooLarge", bytes, limit: Limits.payloadBytesMax }),
          );
        } else {
          expect(Either.isRight(decision)).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("InsertJobs with a timeout only", () => {
  it("is a (1,3) decided from last_job_id alone", () => {
    given(inserted(1))
      .when(Commands.insertJobs({ now: 0, jobs: [newJob({ timeoutMs: 30_000 })] }))
      .then(insertedV3(2, { timeoutMs: 30_000, maxAttempts: 20 }));
  });

  it("without v3 fields stays a (1,1): no schema-3 record unless a feature is used", () => {
    given()
      .when(Commands.insertJobs({ now: 0, jobs: [newJob()] }))
      .then(inserted(1, { maxAttempts: 20 }));
  });
});

describe("ClaimJobs on a queue with a state", () => {
  const three = [inserted(1), inserted(2), inserted(3)];

  it("when paused: nothing", () => {
    given(...three, queueState("default", { paused: true }))
      .when(Commands.claimJobs({ now: 0, queue: "default", limit: 3 }))
      .then();
  });

  it("with a concurrency: at most concurrency - executing", () => {
    given(...three, queueState("default", { concurrency: 2 }), started(1))
      .when(Commands.claimJobs({ now: 0, queue: "default", limit: 3 }))
      .then(started(2));
  });

  it("with a rate limit: at most what the window ending now leaves", () => {
    const history = [
      ...three,
      queueState("default", { rateLimit: { count: 2, perMs: 1_000 } }),
      started(1, 1, 100),
    ];
    given(...history)
      .when(Commands.claimJobs({ now: 1_000, queue: "default", limit: 3 }))
      .then(started(2, 1, 1_000));
    // At 1,100 the start at 100 has left the window (1,100 - 1,000, 1,100].
    given(...history)
      .when(Commands.claimJobs({ now: 1_100, queue: "default", limit: 3 }))
      .then(started(2, 1, 1_100), started(3, 1, 1_100));
  });

  it("rateRoomFrom: from when the rate limit alone lets a claim start, null when it is not what holds it", () => {
    const limited = queueState("default", { rateLimit: { count: 2, perMs: 1_000 } });
    const history = [...three, limited, started(1, 1, 100), started(2, 1, 400)];
    // The start at 100 leaves the window at 1,100; it is exact: a claim at 1,099 starts nothing.
    expect(Decide.rateRoomFrom(stateOf(history), "default")).toBe(1_100);
    expect(Decide.claimsAllowed(stateOf(history), "default", 1_099)).toBe(0);
    expect(Decide.claimsAllowed(stateOf(history), "default", 1_100)).toBe(1);
    // Fewer starts than the count: room at any time.
    expect(Decide.rateRoomFrom(stateOf([...three, limited, started(1, 1, 100)]), "default")).toBe(
      Number.NEGATIVE_INFINITY,
    );
    const paused = queueState("default", { paused: true, rateLimit: { count: 2, perMs: 1_000 } });
    const full = queueState("default", { concurrency: 2, rateLimit: { count: 2, perMs: 1_000 } });
    // Paused, or both slots taken: the rate limit is not what holds a claim back.
    for (const held of [paused, full]) {
      expect(Decide.rateRoomFrom(stateOf([...history, held]), "default")).toBe(null);
    }
    expect(Decide.rateRoomFrom(stateOf([...three, started(1)]), "default")).toBe(null);
    expect(Decide.rateRoomFrom(stateOf(history), "other")).toBe(null);
  });

  it("the rate limit counts every start, retries included", () => {
    given(
      inserted(1),
      inserted(2),
      queueState("default", { rateLimit: { count: 2, perMs: 1_000 } }),
      started(1, 1, 0),
      retried(1, 0, 0),
      Event.jobAvailable({ jobId: 1, at: 0 }),
      started(1, 2, 0),
    )
      .when(Commands.claimJobs({ now: 500, queue: "default", limit: 3 }))
      .then();
  });

  it("a limit lowered below what it counts allows no start, never a negative number", () => {
    const history = [
      ...three,
      queueState("default", { concurrency: 3, rateLimit: { count: 3, perMs: 1_000 } }),
      started(1, 1, 10),
      started(2, 1, 11),
      started(3, 1, 12),
    ];
    const lowerRate = stateOf([
      ...history,
      queueState("default", { rateLimit: { count: 1, perMs: 1_000 } }),
    ]);
    expect(Decide.claimsAllowed(lowerRate, "default", 100)).toBe(0);
    const lowerConcurrency = stateOf([...history, queueState("default", { concurrency: 1 })]);
    expect(Decide.claimsAllowed(lowerConcurrency, "default", 100)).toBe(0);
  });
});

describe("RedriveJob", () => {
  const exhausted = [inserted(1, { maxAttempts: 1 }), started(1), discarded(1)];

  it("when discarded: a (20,3), max_attempts defaulting to attempt + 1 when used up", () => {
    given(...exhausted)
      .when(Commands.redriveJob({ now: 9, jobId: 1, reason: "fixed" }))
      .then(redriven(1, 2, 9, "fixed"));
  });

  it("when cancelled before its attempts ran out: the job's max_attempts", () => {
    given(inserted(1), cancelled(1))
      .when(Commands.redriveJob({ now: 0, jobId: 1, reason: null }))
      .then(redriven(1, 3));
  });

  it("rejects a max_attempts not above the attempt", () => {
    given(...exhausted)
      .when(Commands.redriveJob({ now: 0, jobId: 1, maxAttempts: 1, reason: null }))
      .rejects("InvalidField", { field: "maxAttempts" });
  });

  it("rejects a job in any other state", () => {
    given(inserted(1))
      .when(Commands.redriveJob({ now: 0, jobId: 1, reason: null }))
      .rejects("InvalidTransition", { jobId: 1, from: "available" });
    given(inserted(1), started(1), completed(1))
      .when(Commands.redriveJob({ now: 0, jobId: 1, reason: null }))
      .rejects("InvalidTransition", { from: "completed" });
    given()
      .when(Commands.redriveJob({ now: 0, jobId: 1, reason: null }))
      .rejects("JobNotFound");
  });

  it("rejects while another non-terminal job holds its unique key", () => {
    given(unique(1, "k"), cancelled(1), unique(2, "k"))
      .when(Commands.redriveJob({ now: 0, jobId: 1, reason: null }))
      .rejects("UniqueKeyTaken", { jobId: 1, heldBy: 2, uniqueKey: "k" });
  });
});

describe("SetQueueState", () => {
  it("pauses: the whole state in one (24,3)", () => {
    given(queueState("q", { concurrency: 3 }))
      .when(Commands.setQueueState({ now: 7, queue: "q", paused: true }))
      .then(queueState("q", { at: 7, paused: true, concurrency: 3 }));
  });

  it("resumes, keeping the limits", () => {
    given(queueState("q", { paused: true, rateLimit: { count: 1, perMs: 5 } }))
      .when(Commands.setQueueState({ now: 7, queue: "q", paused: false }))
      .then(queueState("q", { at: 7, rateLimit: { count: 1, perMs: 5 } }));
  });

  it("sets and removes limits", () => {
    given(queueState("q", { concurrency: 3 }))
      .when(
        Commands.setQueueState({
          now: 1,
          queue: "q",
          concurrency: null,
          rateLimit: { count: 4, perMs: 60_000 },
        }),
      )
      .then(queueState("q", { at: 1, rateLimit: { count: 4, perMs: 60_000 } }));
  });

  it("decides nothing when the state would not change (no schema-3 record unless used)", () => {
    given()
      .when(Commands.setQueueState({ now: 1, queue: "q", paused: false }))
      .then();
    given(queueState("q", { paused: true }))
      .when(Commands.setQueueState({ now: 1, queue: "q", paused: true }))
      .then();
  });

  it("rejects limits outside their kinds", () => {
    given()
      .when(Commands.setQueueState({ now: 1, queue: "q", concurrency: 0 }))
      .rejects("InvalidField", { field: "concurrency" });
    given()
      .when(
        Commands.setQueueState({ now: 1, queue: "q", rateLimit: { count: 1, perMs: 86_400_001 } }),
      )
      .rejects("InvalidField", { field: "rateLimit.perMs" });
    given()
      .when(Commands.setQueueState({ now: 1, queue: "", paused: true }))
      .rejects("InvalidField", { field: "queue" });
  });
});

describe("TimeoutJobs", () => {
  const running = [
    insertedV3(1, { timeoutMs: 100 }),
    insertedV3(2, { timeoutMs: 1_000, maxAttempts: 1 }),
    inserted(3),
    started(1, 1, 0),
    started(2, 1, 0),
    started(3, 1, 0),
  ];

  it('fails an attempt still executing at started.at + timeout_ms + grace with error "timeout"', () => {
    given(...running)
      .when(Commands.timeoutJobs({ now: 150, graceMs: 50 }))
      .then(Event.jobRetried({ jobId: 1, at: 150, retryAt: 1_150, error: "timeout" }));
  });

  it("by the usual retry rules: discarded when its attempts are used up", () => {
    given(...running)
      .when(Commands.timeoutJobs({ now: 1_050, graceMs: 50, limit: 10 }))
      .then(
        Event.jobRetried({ jobId: 1, at: 1_050, retryAt: 2_050, error: "timeout" }),
        Event.jobFinished({ jobId: 2, at: 1_050, outcome: "discarded", error: "timeout" }),
      );
  });

  it("leaves jobs inside their bound, and jobs with no timeout", () => {
    given(...running)
      .when(Commands.timeoutJobs({ now: 149, graceMs: 50 }))
      .then();
  });

  it("at most `limit` records, earliest deadline first", () => {
    given(...running)
      .when(Commands.timeoutJobs({ now: 1_050, graceMs: 50, limit: 1 }))
      .then(Event.jobRetried({ jobId: 1, at: 1_050, retryAt: 2_050, error: "timeout" }));
  });
});
