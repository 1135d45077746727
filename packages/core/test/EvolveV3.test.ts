// The fold's rules of EVENTS-V3.md as specifications: every "legal when" of
// the schema-3 table and every rule added to the fold, each accepted and
// refused by both folds (`evolve` and the generation builder), grouped by
// rule. A rule that broke would let one of these histories through.
import { Evolve, Event, Generation, type HistoryError, Snapshot, State } from "@tay/core";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import {
  available,
  cancelled,
  checkpoint,
  completed,
  discarded,
  given,
  inserted,
  result,
  started,
  stateOf,
} from "./support/Given.js";
import { checkpointV3, insertedV3, queueState, redriven, unique } from "./support/GivenV3.js";

describe("(1,3) inserted with a unique key", () => {
  it("is legal when no job of the queue holds the key", () => {
    given(unique(1, "k"), unique(2, "other"), unique(3, "k", { queue: "mail" }))
      .apply(unique(4, "k2"))
      .accepts();
  });

  it("is refused while a non-terminal job of the same queue has the key", () => {
    given(unique(1, "k"))
      .apply(unique(2, "k"))
      .refuses("UniqueKeyTaken", { jobId: 2, queue: "default", uniqueKey: "k", heldBy: 1 });
    given(unique(1, "k"), started(1))
      .apply(unique(2, "k"))
      .refuses("UniqueKeyTaken", { heldBy: 1 });
  });

  it("is scoped to the queue", () => {
    given(unique(1, "k", { queue: "a" }))
      .apply(unique(2, "k", { queue: "b" }))
      .accepts();
  });

  it("is legal once the holder is terminal, and no period is given", () => {
    given(unique(1, "k"), started(1), completed(1, 100)).apply(unique(2, "k")).accepts();
    given(unique(1, "k"), cancelled(1, 100)).apply(unique(2, "k")).accepts();
  });

  it("with a period: refused when the holder finished at or after inserted_at - period", () => {
    const history = [unique(1, "k"), started(1), completed(1, 1_000)];
    given(...history)
      .apply(unique(2, "k", { uniquePeriodMs: 500, insertedAt: 1_500, scheduledAt: 1_500 }))
      .refuses("UniqueKeyTaken", { heldBy: 1 });
    given(...history)
      .apply(unique(2, "k", { uniquePeriodMs: 500, insertedAt: 1_501, scheduledAt: 1_501 }))
      .accepts();
  });

  it("a (1,1) never collides, and a (1,3) without a key never does", () => {
    given(unique(1, "k")).apply(inserted(2)).accepts();
    given(unique(1, "k"))
      .apply(insertedV3(2, { timeoutMs: 5 }))
      .accepts();
  });

  it("holds inside a mutation: a second holder in the same batch is refused", () => {
    const refusal = given()
      .apply(Event.mutation([unique(1, "k"), unique(2, "k")]))
      .refuses("UniqueKeyTaken", { jobId: 2, heldBy: 1 });
    expect(refusal.memberIndex).toBe(1);
  });

  it("keeps the three fields with the job", () => {
    const state = given()
      .apply(unique(1, "k", { uniquePeriodMs: 9, timeoutMs: 7 }))
      .accepts();
    expect(State.job(state, 1)).toMatchObject({ uniqueKey: "k", uniquePeriodMs: 9, timeoutMs: 7 });
  });

  it("refuses fields outside their kinds", () => {
    given().apply(unique(1, "")).refuses("InvalidField", { field: "unique_key" });
    given()
      .apply(insertedV3(1, { timeoutMs: 0 }))
      .refuses("InvalidField", { field: "timeout_ms" });
  });
});

describe("(20,3) redriven", () => {
  const exhausted = [inserted(1, { maxAttempts: 1 }), started(1), discarded(1, "boom", 5)];

  it("makes a discarded job available, keeping attempt and errors", () => {
    const state = given(...exhausted)
      .apply(redriven(1, 3, 50))
      .accepts();
    expect(State.job(state, 1)).toMatchObject({
      state: "available",
      scheduledAt: 50,
      finishedAt: null,
      maxAttempts: 3,
      attempt: 1,
      errors: [{ attempt: 1, at: 5, error: "boom" }],
    });
    // ... and it can start again at the next attempt.
    given(...exhausted, redriven(1, 3, 50))
      .apply(started(1, 2, 60))
      .accepts();
  });

  it("applies to cancelled jobs, and to jobs of (1,1) and (1,3) alike", () => {
    given(inserted(1), cancelled(1)).apply(redriven(1, 1)).accepts();
    given(unique(1, "k"), cancelled(1)).apply(redriven(1, 1)).accepts();
  });

  it("is refused from any other state", () => {
    for (const history of [
      [inserted(1)],
      [inserted(1, { scheduledAt: 10 })],
      [inserted(1), started(1)],
      [inserted(1), started(1), completed(1)],
    ]) {
      given(...history)
        .apply(redriven(1))
        .refuses("IllegalTransition", { jobId: 1, event: "JobRedriven" });
    }
  });

  it("is refused unless max_attempts exceeds the job's attempt", () => {
    given(...exhausted)
      .apply(redriven(1, 1))
      .refuses("AttemptsExhausted", { jobId: 1, attempt: 1, maxAttempts: 1 });
  });

  it("is refused while another non-terminal job of its queue has its unique key", () => {
    given(unique(1, "k"), cancelled(1), unique(2, "k"))
      .apply(redriven(1))
      .refuses("UniqueKeyTaken", { jobId: 1, heldBy: 2 });
    // A terminal holder does not block a redrive, whatever the periods.
    given(
      unique(1, "k", { uniquePeriodMs: 5_000 }),
      cancelled(1),
      unique(2, "k", { insertedAt: 2_000, scheduledAt: 2_000 }),
      cancelled(2, 2_000),
    )
      .apply(redriven(1, 5, 2_000))
      .accepts();
  });

  it("does not restore schedule membership", () => {
    const state = given(
      checkpoint("s"),
      Event.mutation([
        inserted(1),
        Event.occurrenceAdvanced({
          scheduleId: "s",
          revision: 2,
          dueAt: 60_000,
          nextDueAt: 120_000,
          outcome: "delivered",
          activeJobId: 1,
        }),
      ]),
      cancelled(1),
    )
      .apply(redriven(1))
      .accepts();
    expect(State.job(state, 1)?.scheduleId).toBeNull();
    expect(State.schedule(state, "s")?.activeJobIds).toEqual([]);
  });

  it("refuses an unknown job", () => {
    given().apply(redriven(9)).refuses("UnknownJob", { jobId: 9 });
  });
});

describe("(24,3) queue state", () => {
  it("is always legal and replaces the queue's whole state", () => {
    const state = given(queueState("q", { paused: true, concurrency: 2 }))
      .apply(queueState("q", { rateLimit: { count: 1, perMs: 10 }, at: 5 }))
      .accepts();
    expect(State.queue(state, "q")).toEqual({
      queue: "q",
      at: 5,
      paused: false,
      concurrency: null,
      rateLimit: { count: 1, perMs: 10 },
    });
  });

  it("back to the default is the same as never set", () => {
    const state = given(queueState("q", { paused: true }))
      .apply(queueState("q"))
      .accepts();
    expect(State.queue(state, "q")).toBeUndefined();
    expect(State.equals(state, State.initialState)).toBe(true);
  });

  it("makes a start on a paused queue illegal; an executing job goes on", () => {
    given(inserted(1), queueState("default", { paused: true }))
      .apply(started(1))
      .refuses("QueuePaused", { jobId: 1, queue: "default" });
    given(inserted(1), started(1), queueState("default", { paused: true }))
      .apply(completed(1))
      .accepts();
    given(inserted(1, { queue: "other" }), queueState("default", { paused: true }))
      .apply(started(1))
      .accepts();
  });

  it("makes a start illegal when the queue's executing jobs number its concurrency", () => {
    const history = [
      inserted(1),
      inserted(2),
      inserted(3),
      queueState("default", { concurrency: 2 }),
      started(1),
    ];
    given(...history)
      .apply(started(2))
      .accepts();
    given(...history, started(2))
      .apply(started(3))
      .refuses("ConcurrencyExceeded", { jobId: 3, concurrency: 2 });
    // Executing jobs started before the limit count too.
    given(inserted(1), inserted(2), started(1), queueState("default", { concurrency: 1 }))
      .apply(started(2))
      .refuses("ConcurrencyExceeded", { jobId: 2 });
    // A finished one frees its place.
    given(...history, started(2), completed(1))
      .apply(started(3))
      .accepts();
  });

  it("does not make the rate limit a history rule", () => {
    given(
      inserted(1),
      inserted(2),
      queueState("default", { rateLimit: { count: 1, perMs: 1_000 } }),
      started(1),
    )
      .apply(started(2))
      .accepts();
  });

  it("refuses fields outside their kinds", () => {
    given()
      .apply(queueState("q", { concurrency: 0 }))
      .refuses("InvalidField", { field: "concurrency" });
    given()
      .apply(queueState("q", { rateLimit: { count: 10_001, perMs: 1 } }))
      .refuses("InvalidField", { field: "rate_limit.count" });
  });
});

describe("(13,3) schedule checkpoint", () => {
  it("registers a schedule with a v3 definition, as (13,2) does", () => {
    const state = given().apply(checkpointV3("s")).accepts();
    expect(State.schedule(state, "s")?.definition).toMatchObject({ timezone: "Europe/Berlin" });
  });

  it("a (13,2) on it replaces the definition with a v2 one", () => {
    const state = given(checkpointV3("s"))
      .apply(checkpoint("s", { revision: 2, definitionRevision: 2 }))
      .accepts();
    expect(State.schedule(state, "s")?.definition).not.toHaveProperty("timezone");
  });

  it("follows the revision rule", () => {
    given(checkpointV3("s")).apply(checkpointV3("s")).refuses("RevisionConflict");
  });

  it("refuses a definition field outside its kind", () => {
    const bad = checkpointV3("s", {
      definition: { ...checkpointV3("s").definition, catchUpWindowMs: 0 },
    });
    given().apply(bad).refuses("InvalidField", { field: "definition.catch_up_window_ms" });
  });
});

const baseOf = (state: State.State): ReadonlyArray<Event.Event> =>
  Snapshot.snapshot(state, { now: 1_000_000, retentionMs: 0 });

const foldBase = (base: ReadonlyArray<Event.Event>, tail: ReadonlyArray<Event.Event> = []) =>
  Evolve.foldGeneration(base, tail);

describe("the canonical base of schema 3", () => {
  const history = [
    unique(1, "k", { timeoutMs: 100 }),
    inserted(2),
    started(2),
    completed(2, 10),
    result(2),
    checkpointV3("s"),
    checkpoint("t"),
    queueState("q", { paused: true }),
    queueState("r", { concurrency: 3 }),
    queueState("z", { paused: true }),
    queueState("z"),
  ];

  it("holds (7,3) parts, results, checkpoints, then one (24,3) per non-default queue", () => {
    const state = stateOf(history);
    const base = Snapshot.snapshot(state, { now: 10, retentionMs: 100 });
    expect(base.map((record) => record._tag)).toEqual([
      "SnapshotPartV3",
      "ResultRecorded",
      "ScheduleCheckpointV3",
      "ScheduleCheckpoint",
      "QueueStateSet",
      "QueueStateSet",
    ]);
    const folded = foldBase(base);
    expect(Either.isRight(folded) && State.equals(folded.right, state)).toBe(true);
  });

  it("keeps uniqueness across compaction: a retained holder still blocks its key", () => {
    const base = baseOf(stateOf([unique(1, "k")]));
    const refused = foldBase(base, [unique(2, "k")]);
    expect(Either.isLeft(refused) && refused.left.reason._tag).toBe("UniqueKeyTaken");
  });

  it("a job dropped by compaction no longer blocks its key", () => {
    const state = stateOf([unique(1, "k", { uniquePeriodMs: 1_000_000 }), cancelled(1, 5)]);
    // In the same generation, the period still blocks the key...
    const blocked = Evolve.evolve(state, unique(2, "k", { uniquePeriodMs: 1_000_000 }));
    expect(Either.isLeft(blocked)).toBe(true);
    // ... after a compaction that dropped the job, it does not.
    const base = Snapshot.snapshot(state, { now: 100, retentionMs: 10 });
    expect(base[0]?._tag).toBe("SnapshotPart");
    expect(Either.isRight(foldBase(base, [unique(2, "k", { uniquePeriodMs: 1_000_000 })]))).toBe(
      true,
    );
  });

  it("keeps queue state: a paused queue stays paused after compaction", () => {
    const base = baseOf(stateOf([inserted(1), queueState("default", { paused: true })]));
    const refused = foldBase(base, [started(1)]);
    expect(Either.isLeft(refused) && refused.left.reason._tag).toBe("QueuePaused");
  });

  it("is written with no schema-3 record when no v3 feature is used", () => {
    const state = stateOf([
      inserted(1),
      checkpoint("t"),
      queueState("q", { paused: true }),
      queueState("q"),
    ]);
    const tags = baseOf(state).map((record) => record._tag);
    for (const tag of tags) expect(Event.schema3Tags).not.toContain(tag);
  });

  it("refuses (7,1) and (7,3) parts mixed", () => {
    const builder = Generation.start(2);
    Generation.apply(builder, 1, Event.snapshotPart({ part: 0, lastJobId: 0, jobs: [] }));
    const mixed = Generation.apply(
      builder,
      2,
      Event.snapshotPartV3({ part: 1, lastJobId: 0, jobs: [] }),
    );
    expect(Either.isLeft(mixed) && mixed.left.reason).toEqual({
      _tag: "BaseOutOfOrder",
      expected: "SnapshotPart",
      found: "SnapshotPartV3",
    });
  });

  it("refuses a (24,3) before the checkpoints, and two for one queue", () => {
    const part = Event.snapshotPart({ part: 0, lastJobId: 0, jobs: [] });
    const early = foldBaseOf([part, queueState("q", { paused: true }), checkpoint("t")]);
    expect(early).toMatchObject({ _tag: "BaseOutOfOrder", found: "ScheduleCheckpoint" });
    const twice = foldBaseOf([
      part,
      queueState("q", { paused: true }),
      queueState("q", { paused: true }),
    ]);
    expect(twice).toEqual({ _tag: "DuplicateQueueState", queue: "q" });
  });

  it("refuses two non-terminal holders of one key in a (7,3) base", () => {
    const job = Snapshot.snapshot(stateOf([unique(1, "k")]), { now: 0, retentionMs: 0 })[0];
    if (job?._tag !== "SnapshotPartV3") throw new Error("expected a (7,3) part");
    const [first] = job.jobs;
    if (first === undefined) throw new Error("no job");
    const part = Event.snapshotPartV3({
      part: 0,
      lastJobId: 2,
      jobs: [first, { ...first, jobId: 2 }],
    });
    expect(foldBaseOf([part])).toMatchObject({ _tag: "UniqueKeyTaken", jobId: 2, heldBy: 1 });
  });

  it("folds a live holder beside retained terminal jobs of its key, before or after it", () => {
    const state = stateOf([
      // Job 1 redriven after job 2 let the key go: the terminal job has the higher id.
      unique(1, "k"),
      cancelled(1, 5),
      unique(2, "k"),
      cancelled(2, 6),
      redriven(1),
      // Job 4 inserted once job 3's period was over: the base holds no period.
      unique(3, "p", { uniquePeriodMs: 10 }),
      cancelled(3, 5),
      unique(4, "p", { uniquePeriodMs: 10, insertedAt: 20, scheduledAt: 20 }),
    ]);
    const folded = foldBase(Snapshot.snapshot(state, { now: 20, retentionMs: 1_000 }));
    expect(Either.isRight(folded) && State.equals(folded.right, state)).toBe(true);
  });
});

const foldBaseOf = (base: ReadonlyArray<Event.Event>): HistoryError.HistoryReason | undefined => {
  const folded = Evolve.foldGeneration(base, []);
  return Either.isLeft(folded) ? folded.left.reason : undefined;
};

describe("a (7,3) part", () => {
  it("is out of place in the tail and inside a mutation", () => {
    const part = Event.snapshotPartV3({ part: 0, lastJobId: 0, jobs: [] });
    given().apply(part).refuses("SnapshotOutOfPlace");
    const nested = { _tag: "Mutation", events: [part] } as unknown as Event.Mutation;
    given().apply(nested).refuses("NestedRecord");
  });
});

describe("schema-3 events stay out of ordinary histories", () => {
  it("jobs of (1,1) have null v3 fields", () => {
    const state = stateOf([inserted(1, { scheduledAt: 5 }), available(1, 5)]);
    expect(State.job(state, 1)).toMatchObject({
      uniqueKey: null,
      uniquePeriodMs: null,
      timeoutMs: null,
    });
  });
});

describe("a rate-limited queue's start times", () => {
  // Starts append in place to the lists a batch or a builder created
  // (internal/Starts.ts): a state published before must never change.
  const limited = queueState("q", { rateLimit: { count: 3, perMs: 1_000 } });
  const jobs = [1, 2, 3, 4, 5, 6].map((jobId) => inserted(jobId, { queue: "q" }));
  const startsOf = (state: State.State) => [...(state.indexes.starts.get("q") ?? [])];

  it("are never changed in a state a batch started from or published before", () => {
    const start = stateOf([limited, ...jobs, started(1, 1, 10)]);
    expect(startsOf(start)).toEqual([10]);
    const first = Evolve.batch(start);
    const published = first.evolveAll([started(2, 1, 20), started(3, 1, 30)]);
    expect(Either.isRight(published)).toBe(true);
    if (Either.isLeft(published)) return;
    const before = startsOf(published.right);
    const second = Evolve.batch(published.right);
    for (const [jobId, at] of [
      [4, 40],
      [5, 50],
      [6, 60],
    ] as const) {
      expect(Either.isRight(second.evolveAll([started(jobId, 1, at)]))).toBe(true);
    }
    expect(startsOf(start)).toEqual([10]);
    expect(before).toEqual([10, 20, 30]);
    expect(startsOf(published.right)).toEqual(before);
  });

  it("are never changed in a state a builder published before going on", () => {
    const builder = Generation.start(0);
    for (const [sequence, event] of [limited, ...jobs, started(1, 1, 10)].entries()) {
      expect(Either.isRight(Generation.apply(builder, sequence + 1, event))).toBe(true);
    }
    const first = Generation.finish(builder);
    expect(Either.isRight(first)).toBe(true);
    if (Either.isLeft(first)) return;
    expect(startsOf(first.right)).toEqual([10]);
    Generation.apply(builder, 9, started(2, 1, 20));
    const second = Generation.finish(builder);
    expect(Either.isRight(second) && startsOf(second.right)).toEqual([10, 20]);
    expect(startsOf(first.right)).toEqual([10]);
  });
});
