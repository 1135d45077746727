// A lean state (completed jobs kept as their facts only) decides and folds
// exactly as the full state does: random command plans, schema 3 included,
// run side by side through the deciders and `evolve` on a full and a lean
// state, and every decision, every record's fold and every query answer is
// the same, the lean state holding what the full one holds minus the
// completed jobs' records. Corrupted copies of the decided histories (a
// record dropped, repeated, swapped or re-aimed at another job) get the same
// verdict from both folds, through `Generation` and through `evolve`.
import { Event, Evolve, Generation, Job, Snapshot, State, Terminal } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import {
  corrupt,
  decidedHistory,
  expectLeanOf,
  generated,
  sameVerdict,
} from "./support/History.js";
import { arraySnapshot } from "./support/SnapshotArray.js";

describe("what a commit lets go of", () => {
  it("is a result recorded alone for a job the lean state holds as facts, by either path", () => {
    const events = [
      Event.jobInserted({
        jobId: 1,
        queue: "q",
        worker: "w",
        args: null,
        priority: 0,
        maxAttempts: 1,
        scheduledAt: 0,
        insertedAt: 0,
      }),
      Event.jobStarted({ jobId: 1, attempt: 1, at: 1 }),
      Event.jobFinished({ jobId: 1, outcome: "completed", error: null, at: 2 }),
    ];
    const lean = Evolve.evolveAll(State.leanInitialState, events);
    expect(Either.isRight(lean)).toBe(true);
    if (Either.isLeft(lean)) return;
    const recorded = Event.resultRecorded({ jobId: 1, result: "r", at: 3 });
    expect(Evolve.leaving(lean.right, [recorded])).toEqual({ jobs: [], results: [recorded] });
    expect(Evolve.leaving(lean.right, generated([recorded]))).toEqual({
      jobs: [],
      results: [recorded],
    });
    // Before the finish, the one-event path hands over the completed job.
    const executing = Evolve.evolveAll(State.leanInitialState, events.slice(0, 2));
    if (Either.isLeft(executing)) throw new Error("refused");
    const finished = events[2];
    if (finished === undefined) throw new Error("no finish");
    expect(Evolve.leaving(executing.right, [finished]).jobs.map((job) => job.state)).toEqual([
      "completed",
    ]);
  });
});

describe("a lean state against the full state", () => {
  it("decides alike, folds alike and answers alike after every step", () => {
    fc.assert(
      fc.property(decidedHistory, ({ records, full, lean, leftBehind }) => {
        expectLeanOf(lean, full);
        // What the commits let go of is every record the lean state holds as facts.
        expect([...leftBehind.values()].sort((a, b) => a.jobId - b.jobId)).toEqual(
          [...State.jobs(full)].filter(Terminal.leavesMemory),
        );
        // The generation fold of the whole history gives the same lean state.
        const folded = Evolve.fold(records, { lean: true });
        expect(Either.isRight(folded) && State.equals(folded.right, lean)).toBe(true);
        // So does a canonical base of it (snapshot parts restore completed jobs).
        const base = Snapshot.snapshot(full, { now: 1_000, retentionMs: 1e12 });
        sameVerdict(
          Evolve.foldGeneration(base, [], { lean: true }),
          Evolve.foldGeneration(base, []),
        );
      }),
      { numRuns: 100 },
    );
  });

  it("streams the base the array snapshot gave, from the lean state and its records (differential)", () => {
    fc.assert(
      fc.property(
        decidedHistory,
        fc.integer({ min: 0, max: 5_000 }),
        ({ full, lean, leftBehind }, retentionMs) => {
          const options = { now: 1_000 + retentionMs, retentionMs: retentionMs % 2_000 };
          const asked: Array<ReadonlyArray<number>> = [];
          const records: Snapshot.TerminalRecords = (jobIds) => {
            const ids = [...jobIds];
            asked.push(ids);
            return ids.flatMap((jobId) => leftBehind.get(jobId) ?? []);
          };
          const whole = [...leftBehind.values()].sort((a, b) => a.jobId - b.jobId);
          const streamed = [...Snapshot.events(lean, options, records)];
          expect(streamed).toEqual(arraySnapshot(lean, options, whole));
          expect([...Snapshot.events(full, options)]).toEqual(arraySnapshot(full, options));
          // The results pass reads only the jobs whose facts say they have one.
          const withResult = [...lean.terminal.entries()].filter(([, fact]) => fact.hasResult);
          if (asked.length > 0) expect(asked.at(-1)).toEqual(withResult.map(([jobId]) => jobId));
          // A state that uses no schema 3 holds no job with a v3 field (the base's (7,1) or
          // (7,3) is decided on it), and its records are read for the parts and the results
          // only, never to ask whether a kept job is v3 (2026-12-07).
          if (!State.usesSchema3(lean)) {
            expect([...State.jobs(full)].some(Job.hasV3Fields)).toBe(false);
            if (lean.terminal.size > 0) expect(asked).toHaveLength(2);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("gives every corrupted history the full fold's verdict, by both folds", () => {
    fc.assert(
      fc.property(
        decidedHistory,
        fc.nat({ max: 4 }),
        fc.nat(),
        fc.nat({ max: 100 }),
        ({ records }, kind, position, knob) => {
          const corrupted = corrupt(records, kind, position, knob);
          sameVerdict(Evolve.fold(corrupted, { lean: true }), Evolve.fold(corrupted));
          sameVerdict(
            Evolve.evolveAll(State.leanInitialState, corrupted),
            Evolve.evolveAll(State.initialState, corrupted),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it("hands over, in pieces, exactly the whole records that left memory", () => {
    const handedOver = (
      generation: ReadonlyArray<Event.Event>,
      baseRecordCount: number,
      every: number,
    ): ReadonlyArray<Job.Job> => {
      const builder = Generation.start(baseRecordCount, { lean: true, collectLeft: true });
      const whole = new Map<number, Job.Job>();
      const take = () => {
        const left = Generation.takeLeft(builder);
        for (const job of left.jobs) whole.set(job.jobId, job);
        for (const result of left.results) {
          const job = whole.get(result.jobId);
          if (job !== undefined) whole.set(job.jobId, Job.applied(job, result));
        }
      };
      for (const [index, record] of generation.entries()) {
        expect(Either.isRight(Generation.apply(builder, index + 1, record))).toBe(true);
        if (index % (every + 1) === 0) take();
      }
      take();
      expect(Either.isRight(Generation.finish(builder))).toBe(true);
      return [...whole.values()].sort((left, right) => left.jobId - right.jobId);
    };
    fc.assert(
      fc.property(decidedHistory, fc.nat({ max: 7 }), ({ records, full }, every) => {
        const expected = [...State.jobs(full)].filter(Terminal.leavesMemory);
        expect(handedOver(records, 0, every)).toEqual(expected);
        // A canonical base restores completed jobs, and hands them over too.
        const base = Snapshot.snapshot(full, { now: 1_000, retentionMs: 1e12 });
        expect(handedOver(base, base.length, every)).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it("keeps a completed job as its facts, and refuses a second result", () => {
    const inserted = Event.jobInserted({
      jobId: 1,
      queue: "q",
      worker: "w",
      args: null,
      priority: 0,
      maxAttempts: 3,
      scheduledAt: 0,
      insertedAt: 0,
    });
    const records: ReadonlyArray<Event.Event> = [
      inserted,
      Event.jobStarted({ jobId: 1, attempt: 1, at: 1 }),
      Event.jobFinished({ jobId: 1, outcome: "completed", error: null, at: 2 }),
      Event.resultRecorded({ jobId: 1, result: 7, at: 2 }),
    ];
    const folded = Evolve.fold(records, { lean: true });
    expect(Either.isRight(folded) && State.fact(folded.right, 1)).toEqual({
      queue: "q",
      attempt: 1,
      hasResult: true,
    });
    const again = Evolve.fold([...records, records[3] ?? inserted], { lean: true });
    expect(Either.isLeft(again) && again.left.reason).toEqual({
      _tag: "ResultAlreadyRecorded",
      jobId: 1,
    });
  });
});
