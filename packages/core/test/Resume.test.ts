// Resuming a generation fold from an image of a folded state
// (`Image.of`, `Generation.resume`) instead of folding its first records
// again: the shell keeps an image beside its log so that an open folds only
// the records after it, so a resumed fold must be indistinguishable from
// the full fold. For random decided histories (full and lean, schema 3 and
// rate-limited queues included, with and without a canonical base), the
// fold of the first k records is imaged and resumed at k, the rest applied
// with their sequence numbers: the state (every job, fact, schedule, queue,
// every derived index, the rate-limit windows, the schema-3 flag, what
// `Query` answers) is the full fold's, and a corrupted tail gets the full
// fold's verdict, the same `HistoryError` at the same record index. The
// parts of an image a base does not carry (facts, starts, schema 3) are
// shown to matter, and an image no fold makes is refused without touching
// the state it came from.
import {
  Commands,
  Decide,
  Event,
  Evolve,
  Generation,
  HistoryError,
  Image,
  Query,
  Snapshot,
  State,
} from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { completed, discarded, inserted, started } from "./support/Given.js";
import { insertedV3, queueState, redriven } from "./support/GivenV3.js";
import {
  corrupt,
  type DecidedHistory,
  decide,
  decidedHistory,
  type Step,
} from "./support/History.js";
import { planRateLimit, queues, stepV3 } from "./support/Plans.js";

type Folded = Either.Either<HistoryError.HistoryError, State.State>;

/** Applies `records` as the records from index `from` on (sequence = index + 1), then finishes. */
const applyFrom = (
  builder: Generation.Builder,
  records: ReadonlyArray<Event.Event>,
  from: number,
): Folded => {
  for (const [offset, record] of records.entries()) {
    if (Either.isLeft(Generation.apply(builder, from + offset + 1, record))) break;
  }
  return Generation.finish(builder);
};

/** The full fold of a generation whose base is its first `baseRecordCount` records. */
const fold = (
  records: ReadonlyArray<Event.Event>,
  baseRecordCount: number,
  lean: boolean,
): Folded => applyFrom(Generation.start(baseRecordCount, { lean }), records, 0);

const mustFold = (
  records: ReadonlyArray<Event.Event>,
  baseRecordCount: number,
  lean: boolean,
): State.State => {
  const folded = fold(records, baseRecordCount, lean);
  if (Either.isLeft(folded)) throw new Error(HistoryError.describe(folded.left));
  return folded.right;
};

/** Resumes from `image` at `k` and applies `records` from index `k` on. */
const resumed = (
  image: Image.Image,
  records: ReadonlyArray<Event.Event>,
  k: number,
  baseRecordCount: number,
  lean: boolean,
): Folded => {
  const builder = Generation.resume(image, k, baseRecordCount, { lean });
  if (Either.isLeft(builder)) return builder;
  expect(builder.right.recordsApplied).toBe(k);
  return applyFrom(builder.right, records.slice(k), k);
};

/**
 * Fails unless `actual` is `expected` in everything a state holds and
 * derives: `State.equals`, and every index, fact, window and answer.
 */
const expectSameState = (actual: State.State, expected: State.State): void => {
  expect(State.equals(actual, expected)).toBe(true);
  expect(actual.lean).toBe(expected.lean);
  expect(actual.lastJobId).toBe(expected.lastJobId);
  expect([...actual.jobs.entries()]).toEqual([...expected.jobs.entries()]);
  expect([...actual.terminal.entries()]).toEqual([...expected.terminal.entries()]);
  expect([...actual.schedules.entries()]).toEqual([...expected.schedules.entries()]);
  expect([...actual.queues.entries()]).toEqual([...expected.queues.entries()]);
  const got = actual.indexes;
  const want = expected.indexes;
  const available = (indexes: State.Indexes) =>
    [...indexes.available.entries()].map(([queue, jobs]) => [queue, [...jobs.keys()]]);
  expect(available(got)).toEqual(available(want));
  expect([...got.pending.keys()]).toEqual([...want.pending.keys()]);
  expect([...got.executing.keys()]).toEqual([...want.executing.keys()]);
  expect([...got.deadlines.keys()]).toEqual([...want.deadlines.keys()]);
  expect([...got.due.keys()]).toEqual([...want.due.keys()]);
  expect([...got.counts.entries()]).toEqual([...want.counts.entries()]);
  expect([...got.unique.entries()]).toEqual([...want.unique.entries()]);
  expect([...got.starts.entries()]).toEqual([...want.starts.entries()]);
  expect(got.schema3).toBe(want.schema3);
  expect(State.jobCount(actual)).toBe(State.jobCount(expected));
  expect(Query.counts(actual)).toEqual(Query.counts(expected));
  for (const graceMs of [0, 5, 1_000]) {
    expect(Query.nextWakeAt(actual, graceMs)).toBe(Query.nextWakeAt(expected, graceMs));
  }
};

/** Fails unless `actual` is the verdict `expected`: the same error, or the same state. */
const expectSameVerdict = (actual: Folded, expected: Folded): void => {
  if (Either.isLeft(expected)) {
    expect(Either.isLeft(actual) && actual.left).toEqual(expected.left);
    return;
  }
  if (Either.isLeft(actual)) throw new Error(`refused: ${HistoryError.describe(actual.left)}`);
  expectSameState(actual.right, expected.right);
};

/**
 * Folds `records` once, finishing after every record from `from` on: the
 * state after each of the first k records, for every k >= from.
 */
const statesAlong = (
  records: ReadonlyArray<Event.Event>,
  baseRecordCount: number,
  lean: boolean,
  from: number,
): ReadonlyArray<readonly [number, State.State]> => {
  const builder = Generation.start(baseRecordCount, { lean });
  const states: Array<readonly [number, State.State]> = [];
  for (let k = 0; k <= records.length; k++) {
    if (k >= from) {
      const at = Generation.finish(builder);
      if (Either.isLeft(at)) throw new Error(HistoryError.describe(at.left));
      states.push([k, at.right]);
    }
    const record = records[k];
    if (record !== undefined) {
      const applied = Generation.apply(builder, k + 1, record);
      if (Either.isLeft(applied)) throw new Error(HistoryError.describe(applied.left));
    }
  }
  return states;
};

/** A decided history over a canonical base: its records are the base's, then a tail. */
interface BasedHistory {
  readonly records: ReadonlyArray<Event.Event>;
  readonly baseRecordCount: number;
}

/** A decided history, compacted to a canonical base at some retention, then decided on. */
const basedHistory: fc.Arbitrary<BasedHistory> = fc
  .tuple(
    fc.array(stepV3, { maxLength: 40, size: "max" }),
    fc.array(stepV3, { maxLength: 40, size: "max" }),
    fc.integer({ min: 0, max: 300_000 }),
  )
  .map(([before, after, retentionMs]) => {
    const first = decide(before);
    const base = Snapshot.snapshot(first.full, { now: first.now, retentionMs });
    const from = {
      full: mustFold(base, base.length, false),
      lean: mustFold(base, base.length, true),
      now: first.now,
    };
    return { records: [...base, ...decide(after, from).records], baseRecordCount: base.length };
  });

const claimStep: fc.Arbitrary<Step> = fc
  .record({
    queue: fc.constantFrom(...queues),
    limit: fc.integer({ min: 1, max: 3 }),
    elapsedMs: fc.integer({ min: 0, max: 60 }),
  })
  .map(({ queue, limit, elapsedMs }) => ({
    plan: (_, now) => Commands.claimJobs({ now, queue, limit }),
    elapsedMs,
  }));

const insertStep: fc.Arbitrary<Step> = fc
  .record({ queue: fc.constantFrom(...queues), elapsedMs: fc.integer({ min: 0, max: 60 }) })
  .map(({ queue, elapsedMs }) => ({
    plan: (_, now) =>
      Commands.insertJobs({
        now,
        jobs: [{ queue, worker: "W", args: null, priority: 0, maxAttempts: 2, scheduledAt: now }],
      }),
    elapsedMs,
  }));

/** Both queues rate-limited first (`planRateLimit`), then many claims among any commands. */
const rateLimitedHistory: fc.Arbitrary<DecidedHistory> = fc
  .array(
    fc.oneof(
      { weight: 2, arbitrary: stepV3 },
      { weight: 2, arbitrary: claimStep },
      { weight: 1, arbitrary: insertStep },
    ),
    { maxLength: 60, size: "max" },
  )
  .map((steps) =>
    decide([
      ...queues.map(
        (queue): Step => ({
          plan: (_, now) => Commands.setQueueState({ now, queue, rateLimit: planRateLimit }),
          elapsedMs: 0,
        }),
      ),
      ...steps,
    ]),
  );

const leanOrFull = [false, true] as const;

describe("a fold resumed from an image", () => {
  it("is the full fold, resumed after any record of a decided history", () => {
    fc.assert(
      fc.property(decidedHistory, fc.boolean(), ({ records }, lean) => {
        const whole = mustFold(records, 0, lean);
        for (const [k, at] of statesAlong(records, 0, lean, 0)) {
          const image = Image.of(at);
          // Nothing after it: the state itself; the rest after it: the full fold.
          expectSameVerdict(resumed(image, records.slice(0, k), k, 0, lean), Either.right(at));
          expectSameVerdict(resumed(image, records, k, 0, lean), Either.right(whole));
        }
      }),
      { numRuns: 40 },
    );
  });

  it("is the full fold from the states the deciders stepped, and resumed twice", () => {
    fc.assert(
      fc.property(decidedHistory, fc.nat(), fc.nat(), ({ records, full, lean }, first, second) => {
        // The states `evolve` built, not a fold: their images resume to the fold.
        for (const [state, isLean] of [
          [full, false],
          [lean, true],
        ] as const) {
          expectSameVerdict(
            resumed(Image.of(state), records, records.length, 0, isLean),
            fold(records, 0, isLean),
          );
        }
        // An image of a resumed fold resumes too.
        const k1 = first % (records.length + 1);
        const k2 = k1 + (second % (records.length - k1 + 1));
        for (const isLean of leanOrFull) {
          const atK1 = mustFold(records.slice(0, k1), 0, isLean);
          const atK2 = resumed(Image.of(atK1), records.slice(0, k2), k1, 0, isLean);
          if (Either.isLeft(atK2)) throw new Error(HistoryError.describe(atK2.left));
          expectSameVerdict(
            resumed(Image.of(atK2.right), records, k2, 0, isLean),
            fold(records, 0, isLean),
          );
          // Nothing the resumed folds did changed the state the first image came from.
          expectSameState(atK1, mustFold(records.slice(0, k1), 0, isLean));
          // An image is read on demand, and can be read again.
          const image = Image.of(atK1);
          expectSameVerdict(resumed(image, records, k1, 0, isLean), fold(records, 0, isLean));
          expectSameVerdict(resumed(image, records, k1, 0, isLean), fold(records, 0, isLean));
        }
      }),
      { numRuns: 40 },
    );
  });

  it("is the full fold from a frozen image, whatever the batch that made its state does after", () => {
    // A batch's run may write in place what it made (`Evolve.batch`): a state
    // it returned can change once it evolves on. `Image.frozen` is taken for
    // a checkpoint written while the engine goes on, and must stay that state's.
    fc.assert(
      fc.property(decidedHistory, fc.nat(), fc.nat(), ({ records }, first, second) => {
        const k1 = first % (records.length + 1);
        const k2 = k1 + (second % (records.length - k1 + 1));
        for (const lean of leanOrFull) {
          const run = Evolve.batch(mustFold(records.slice(0, k1), 0, lean));
          const middle = run.evolveAll(records.slice(k1, k2));
          if (Either.isLeft(middle)) throw new Error(HistoryError.describe(middle.left));
          const image = Image.frozen(middle.right);
          // The same run goes on, one record at a time, as a drain's commands do.
          for (const record of records.slice(k2)) run.evolveAll([record]);
          expectSameVerdict(
            resumed(image, records.slice(0, k2), k2, 0, lean),
            Either.right(mustFold(records.slice(0, k2), 0, lean)),
          );
          expectSameVerdict(resumed(image, records, k2, 0, lean), fold(records, 0, lean));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("is the full fold over a canonical base, resumed anywhere after the base, never inside it", () => {
    fc.assert(
      fc.property(
        basedHistory,
        fc.boolean(),
        fc.nat(),
        ({ records, baseRecordCount }, lean, inside) => {
          const whole = mustFold(records, baseRecordCount, lean);
          const states = statesAlong(records, baseRecordCount, lean, baseRecordCount);
          for (const [k, at] of states) {
            expectSameVerdict(
              resumed(Image.of(at), records, k, baseRecordCount, lean),
              Either.right(whole),
            );
          }
          // Fewer records than the base: refused, whatever the image.
          const [, afterBase] = states[0] ?? [0, whole];
          const k = inside % baseRecordCount;
          const refused = Generation.resume(Image.of(afterBase), k, baseRecordCount, { lean });
          expect(Either.isLeft(refused) && refused.left.reason).toEqual({
            _tag: "InvalidField",
            field: "image records",
          });
        },
      ),
      { numRuns: 40 },
    );
  });

  it("gives a corrupted tail the full fold's verdict, the same error at the same index", () => {
    let refusals = 0;
    fc.assert(
      fc.property(
        decidedHistory,
        fc.boolean(),
        fc.nat(),
        fc.nat({ max: 4 }),
        fc.nat(),
        fc.nat({ max: 100 }),
        ({ records }, lean, split, kind, position, knob) => {
          const k = split % (records.length + 1);
          const corrupted = [
            ...records.slice(0, k),
            ...corrupt(records.slice(k), kind, position, knob),
          ];
          const whole = fold(corrupted, 0, lean);
          const at = mustFold(records.slice(0, k), 0, lean);
          expectSameVerdict(resumed(Image.of(at), corrupted, k, 0, lean), whole);
          if (Either.isLeft(whole)) {
            refusals++;
            expect(whole.left.index).toBeGreaterThanOrEqual(k);
          }
        },
      ),
      { numRuns: 200 },
    );
    expect(refusals).toBeGreaterThan(20);
  });

  it("gives a corrupted tail over a canonical base the full fold's verdict", () => {
    fc.assert(
      fc.property(
        basedHistory,
        fc.boolean(),
        fc.nat(),
        fc.nat({ max: 4 }),
        fc.nat(),
        fc.nat({ max: 100 }),
        ({ records, baseRecordCount }, lean, split, kind, position, knob) => {
          const k = baseRecordCount + (split % (records.length - baseRecordCount + 1));
          const corrupted = [
            ...records.slice(0, k),
            ...corrupt(records.slice(k), kind, position, knob),
          ];
          const at = mustFold(records.slice(0, k), baseRecordCount, lean);
          expectSameVerdict(
            resumed(Image.of(at), corrupted, k, baseRecordCount, lean),
            fold(corrupted, baseRecordCount, lean),
          );
        },
      ),
      { numRuns: 80 },
    );
  });
});

describe("the rate-limit windows of an image", () => {
  it("carry each limited queue's latest starts across the resume", () => {
    let carried = 0;
    let dropsMatter = 0;
    fc.assert(
      fc.property(rateLimitedHistory, fc.boolean(), ({ records }, lean) => {
        const whole = mustFold(records, 0, lean);
        for (const [k, at] of statesAlong(records, 0, lean, 0)) {
          const image = Image.of(at);
          expectSameVerdict(resumed(image, records, k, 0, lean), Either.right(whole));
          if (at.indexes.starts.size === 0) continue;
          const startsLater = records
            .slice(k)
            .some(
              (record) =>
                record._tag === "JobStarted" ||
                (record._tag === "Mutation" && record.events.some((e) => e._tag === "JobStarted")),
            );
          if (startsLater) carried++;
          // Without its windows, an image resumes to other windows whenever
          // the tail does not fill them again.
          const dropped = resumed({ ...image, starts: [] }, records, k, 0, lean);
          if (Either.isLeft(dropped)) throw new Error(HistoryError.describe(dropped.left));
          const windows = (state: State.State) => [...state.indexes.starts.entries()];
          if (JSON.stringify(windows(dropped.right)) !== JSON.stringify(windows(whole))) {
            dropsMatter++;
          }
        }
      }),
      { numRuns: 30 },
    );
    expect(carried).toBeGreaterThan(10);
    expect(dropsMatter).toBeGreaterThan(10);
  });

  it("decide the next claim: an image without them claims what the full state refuses", () => {
    const limit = { count: 2, perMs: 100 };
    const records: ReadonlyArray<Event.Event> = [
      queueState("alpha", { rateLimit: limit }),
      inserted(1, { queue: "alpha" }),
      inserted(2, { queue: "alpha" }),
      inserted(3, { queue: "alpha" }),
      started(1, 1, 1_000),
      started(2, 1, 1_010),
    ];
    const tail: ReadonlyArray<Event.Event> = [completed(1, 1_100), started(3, 1, 1_200)];
    const all = [...records, ...tail];
    const claim = Commands.claimJobs({ now: 1_020, queue: "alpha", limit: 1 });
    for (const lean of leanOrFull) {
      const at = mustFold(records, 0, lean);
      expect([...at.indexes.starts.entries()]).toEqual([["alpha", [1_000, 1_010]]]);
      const whole = mustFold(all, 0, lean);
      expect([...whole.indexes.starts.entries()]).toEqual([["alpha", [1_010, 1_200]]]);
      const image = Image.of(at);
      // With its windows: the full fold, before and after the tail.
      const here = resumed(image, records, records.length, 0, lean);
      if (Either.isLeft(here)) throw new Error(HistoryError.describe(here.left));
      expect(Decide.decide(here.right, claim)).toEqual(Decide.decide(at, claim));
      expect(Decide.decide(at, claim)).toEqual(Either.right([]));
      expectSameVerdict(resumed(image, all, records.length, 0, lean), Either.right(whole));
      // Without: the window is empty, so the claim starts job 3 at once.
      const dropped = resumed({ ...image, starts: [] }, records, records.length, 0, lean);
      if (Either.isLeft(dropped)) throw new Error(HistoryError.describe(dropped.left));
      expect(Decide.decide(dropped.right, claim)).toEqual(
        Either.right([Event.jobStarted({ jobId: 3, at: 1_020, attempt: 1 })]),
      );
      const droppedAll = resumed({ ...image, starts: [] }, all, records.length, 0, lean);
      expect(Either.isRight(droppedAll) && [...droppedAll.right.indexes.starts.entries()]).toEqual([
        ["alpha", [1_200]],
      ]);
    }
  });
});

describe("a window longer than its queue's count", () => {
  it("is carried as the fold keeps it, after the count was lowered", () => {
    // A helper's property found it: a lowered count leaves the longer list
    // until the next start trims it, in every fold; an image of that state
    // was refused (then the shell folded from nothing).
    const records: ReadonlyArray<Event.Event> = [
      queueState("alpha", { rateLimit: { count: 3, perMs: 100 } }),
      inserted(1, { queue: "alpha" }),
      inserted(2, { queue: "alpha" }),
      inserted(3, { queue: "alpha" }),
      inserted(4, { queue: "alpha" }),
      started(1, 1, 10),
      started(2, 1, 11),
      started(3, 1, 12),
      queueState("alpha", { rateLimit: { count: 2, perMs: 100 } }),
    ];
    const tail: ReadonlyArray<Event.Event> = [started(4, 1, 200)];
    for (const lean of leanOrFull) {
      const at = mustFold(records, 0, lean);
      expect([...at.indexes.starts.entries()]).toEqual([["alpha", [10, 11, 12]]]);
      const image = Image.of(at);
      const here = resumed(image, records, records.length, 0, lean);
      expectSameVerdict(here, Either.right(at));
      const all = [...records, ...tail];
      expectSameVerdict(
        resumed(image, all, records.length, 0, lean),
        Either.right(mustFold(all, 0, lean)),
      );
    }
  });
});

describe("the schema-3 flag of an image", () => {
  // Histories whose one schema-3 record leaves nothing of schema 3 in the
  // jobs held whole at k, then a schema-1 tail.
  const histories: ReadonlyArray<{
    readonly name: string;
    readonly records: ReadonlyArray<Event.Event>;
    readonly lean: ReadonlyArray<boolean>;
  }> = [
    {
      name: "a (21,3) insert without v3 fields",
      records: [insertedV3(1), started(1, 1, 1), completed(1, 2)],
      lean: leanOrFull,
    },
    {
      name: "a redrive",
      records: [
        inserted(1),
        started(1, 1, 1),
        discarded(1, "boom", 2),
        redriven(1, 5, 3),
        started(1, 2, 4),
        completed(1, 5),
      ],
      lean: leanOrFull,
    },
    {
      // Lean only: the full state holds the job whole, with its timeout.
      name: "an insert with a timeout, completed",
      records: [insertedV3(1, { timeoutMs: 10 }), started(1, 1, 1), completed(1, 2)],
      lean: [true],
    },
  ];

  for (const { name, records, lean: leans } of histories) {
    it(`survives the resume after ${name}`, () => {
      const tail = [inserted(2), started(2, 1, 10)];
      const all = [...records, ...tail];
      for (const lean of leans) {
        const at = mustFold(records, 0, lean);
        expect(State.usesSchema3(at)).toBe(true);
        const image = Image.of(at);
        // Only the flag says so: the base is all schema 1.
        expect([...image.base].map((record) => Event.pairOf(record).schema)).not.toContain(3);
        expect(image.schema3).toBe(true);
        const whole = mustFold(all, 0, lean);
        const again = resumed(image, all, records.length, 0, lean);
        expectSameVerdict(again, Either.right(whole));
        expect(Either.isRight(again) && State.usesSchema3(again.right)).toBe(true);
        // Without the flag, the resumed state no longer reports schema 3.
        const unflagged = resumed({ ...image, schema3: false }, all, records.length, 0, lean);
        expect(Either.isRight(unflagged) && State.usesSchema3(unflagged.right)).toBe(false);
      }
    });
  }

  it("stays unset after a schema-1 history", () => {
    const records = [inserted(1), started(1, 1, 1), completed(1, 2), inserted(2)];
    for (const lean of leanOrFull) {
      const again = resumed(Image.of(mustFold(records, 0, lean)), records, 3, 0, lean);
      expect(Either.isRight(again) && State.usesSchema3(again.right)).toBe(false);
    }
  });
});

describe("an image no fold makes", () => {
  const limit = { count: 2, perMs: 100 };
  // A lean state with a fact (job 1), jobs held whole (2, 3), a limited
  // queue with its window, and a queue with a concurrency only.
  const records: ReadonlyArray<Event.Event> = [
    queueState("alpha", { rateLimit: limit }),
    queueState("beta", { concurrency: 1 }),
    inserted(1, { queue: "alpha" }),
    inserted(2, { queue: "alpha" }),
    inserted(3, { queue: "beta" }),
    started(1, 1, 10),
    completed(1, 11),
    started(2, 1, 12),
  ];
  const n = records.length;
  const fact = { queue: "alpha", attempt: 1, hasResult: false };

  const refusal = (
    image: Image.Image,
    recordsApplied = n,
    baseRecordCount = 0,
    lean = true,
  ): HistoryError.HistoryError => {
    const builder = Generation.resume(image, recordsApplied, baseRecordCount, { lean });
    if (Either.isRight(builder)) throw new Error("resumed");
    return builder.left;
  };

  it("is refused, and nothing else changes", () => {
    const state = mustFold(records, 0, true);
    const good = Image.of(state);
    expect([...Image.factsOf([[1, fact]]).pages]).toEqual([...good.facts.pages]);
    expect(good.facts.queues).toEqual([fact.queue]);
    expect([...good.starts]).toEqual([["alpha", [10, 12]]]);
    const base = [...good.base];
    const afterBase = { index: base.length, sequence: undefined, event: null, memberIndex: null };
    const refusedAs = (image: Image.Image, reason: HistoryError.HistoryReason) => {
      const error = refusal(image);
      expect(error).toMatchObject({ ...afterBase, reason });
      // The same image is refused the same way again.
      expect(refusal(image)).toEqual(error);
    };
    const withFacts = (facts: ReadonlyArray<readonly [number, typeof fact]>) => ({
      ...good,
      facts: Image.factsOf(facts),
    });
    const withStarts = (starts: ReadonlyArray<readonly [string, ReadonlyArray<number>]>) => ({
      ...good,
      starts,
    });
    const invalid = (field: string): HistoryError.HistoryReason => ({
      _tag: "InvalidField",
      field,
    });

    // Facts: one per job that is no longer held whole, within last_job_id.
    refusedAs(
      withFacts([
        [1, fact],
        [2, fact],
      ]),
      { _tag: "DuplicateJob", jobId: 2 },
    );
    // The same id packed and in the overflow (a page holds one slot an id).
    refusedAs(
      { ...good, facts: { ...Image.factsOf([[1, fact]]), overflow: [[1, fact]] } },
      { _tag: "DuplicateJob", jobId: 1 },
    );
    // A slot no fact packs to (even), a queue index past the names, a page of another size.
    const slots = (at: number, slot: number) => {
      const page = new Uint32Array(256);
      page[at] = slot;
      return page;
    };
    const packedAs = (pages: ReadonlyArray<readonly [number, Uint32Array]>) => ({
      ...good,
      facts: { queues: [fact.queue], pages, overflow: [] },
    });
    refusedAs(packedAs([[0, slots(1, 2)]]), invalid("image fact"));
    refusedAs(packedAs([[0, slots(1, 1 + 16_384)]]), invalid("image fact"));
    refusedAs(packedAs([[0, new Uint32Array(255)]]), invalid("image fact"));
    refusedAs(packedAs([[0, slots(0, 1)]]), invalid("image fact"));
    refusedAs(
      packedAs([
        [0, slots(1, 1)],
        [0, slots(1, 1)],
      ]),
      invalid("image fact"),
    );
    refusedAs(
      withFacts([
        [1, fact],
        [4, fact],
      ]),
      invalid("image fact"),
    );
    refusedAs(withFacts([[0, fact]]), invalid("image fact"));
    refusedAs(withFacts([[1.5, fact]]), invalid("image fact"));
    refusedAs(withFacts([[1, { ...fact, attempt: -1 }]]), invalid("image fact attempt"));
    // None in a full fold.
    expect(refusal(good, n, 0, false)).toMatchObject({
      ...afterBase,
      reason: invalid("image fact"),
    });
    // Starts: of a rate-limited queue only, once, at integer times (more than
    // the count is a state the fold reaches: below).
    refusedAs(withStarts([["beta", [10]]]), invalid("image starts"));
    refusedAs(withStarts([["gamma", [10]]]), invalid("image starts"));
    refusedAs(
      withStarts([
        ["alpha", [10]],
        ["alpha", [12]],
      ]),
      invalid("image starts"),
    );
    refusedAs(withStarts([["alpha", [10.5]]]), invalid("image starts"));
    // A base: part 0 first, base records only.
    expect(refusal({ ...good, base: [] })).toMatchObject({
      index: 0,
      reason: invalid("image base"),
    });
    expect(refusal({ ...good, base: base.slice(1) }).reason).toMatchObject({
      _tag: "BaseOutOfOrder",
      expected: "SnapshotPart",
    });
    expect(refusal({ ...good, base: [...base, inserted(9)] })).toMatchObject({
      index: base.length,
      reason: { _tag: "BaseOutOfOrder", found: "JobInserted" },
    });
    // The records it stands after: an integer, not fewer than the base.
    for (const [recordsApplied, baseRecordCount] of [
      [2, 3],
      [n + 0.5, 0],
      [Number.NaN, 0],
      [Number.POSITIVE_INFINITY, 0],
      [n, -1],
      [n, 0.5],
    ] as const) {
      expect(refusal(good, recordsApplied, baseRecordCount)).toMatchObject({
        ...afterBase,
        reason: invalid("image records"),
      });
    }

    // The state the images came from is as it was, and its image still resumes.
    expectSameState(state, mustFold(records, 0, true));
    const tail = [started(3, 1, 20), completed(2, 21), inserted(4, { queue: "alpha" })];
    expectSameVerdict(
      resumed(good, [...records, ...tail], n, 0, true),
      fold([...records, ...tail], 0, true),
    );
  });
});
