// Compaction's canonical base: folding `snapshot(s)` alone gives back `s`
// minus exactly the terminal jobs that finished before now - retention (and
// their results), for states reached by random command sequences; the base
// has the canonical order and parts stay within their bounds.
import {
  Commands,
  Decide,
  Event,
  Evolve,
  Generation,
  HistoryError,
  Snapshot,
  State,
} from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { type Plan, steps } from "./support/Plans.js";
import { inserted, started, stateOf } from "./support/Given.js";
import { arraySnapshot } from "./support/SnapshotArray.js";

const play = (plans: ReadonlyArray<{ readonly plan: Plan; readonly elapsedMs: number }>) => {
  let state = State.initialState;
  let now = 1_000;
  for (const { plan, elapsedMs } of plans) {
    now += elapsedMs;
    const command = plan(
      { jobs: [...State.jobs(state)], schedules: [...State.schedules(state)] },
      now,
    );
    const decision = Decide.decide(state, command);
    if (Either.isLeft(decision)) continue;
    const evolved = Evolve.evolveAll(state, decision.right);
    if (Either.isLeft(evolved)) throw new Error(HistoryError.describe(evolved.left));
    state = evolved.right;
  }
  return { state, now };
};

const refold = (base: ReadonlyArray<Event.Event>) => {
  const folded = Evolve.foldGeneration(base, []);
  if (Either.isLeft(folded)) throw new Error(HistoryError.describe(folded.left));
  return folded.right;
};

const kinds = (base: ReadonlyArray<Event.Event>) => base.map((record) => record._tag);

describe("snapshot", () => {
  it("folds back to the state minus the dropped jobs (property)", () => {
    fc.assert(
      fc.property(steps(50), fc.integer({ min: 0, max: 200_000 }), (plans, retentionMs) => {
        const { state, now } = play(plans);
        const options = { now, retentionMs };
        const base = Snapshot.snapshot(state, options);
        const restored = refold(base);
        expect(restored.lastJobId).toBe(state.lastJobId);
        const kept = [...State.jobs(state)].filter((job) => !Snapshot.drops(job, options));
        expect([...State.jobs(restored)]).toEqual(kept);
        expect([...State.schedules(restored)]).toEqual([...State.schedules(state)]);
        for (const job of State.jobs(state)) {
          // Only terminal jobs finished before now - retention are dropped.
          if (State.job(restored, job.jobId) === undefined) {
            expect(Event.isTerminal(job.state) && (job.finishedAt ?? now) < now - retentionMs).toBe(
              true,
            );
          }
        }
        // Canonical order: parts, then results, then checkpoints.
        const order = kinds(base).map((kind) =>
          kind === "SnapshotPart" ? 0 : kind === "ResultRecorded" ? 1 : 2,
        );
        expect(order).toEqual([...order].sort());
        // A state that keeps everything restores exactly.
        if (retentionMs >= now) expect(State.equals(restored, state)).toBe(true);
      }),
      { numRuns: 80 },
    );
  });

  it("the restored state decides the same as the original", () => {
    const state = stateOf([inserted(1), inserted(2, { priority: 1 }), started(1)]);
    const restored = refold(Snapshot.snapshot(state, { now: 10, retentionMs: 0 }));
    const claim = Commands.claimJobs({ now: 11, queue: "default", limit: 5 });
    expect(Decide.decide(restored, claim)).toEqual(Decide.decide(state, claim));
  });

  it("an empty state is part 0 alone", () => {
    expect(Snapshot.snapshot(State.initialState, { now: 0, retentionMs: 0 })).toEqual([
      Event.snapshotPart({ part: 0, lastJobId: 0, jobs: [] }),
    ]);
  });

  it("keeps last_job_id when every job is dropped", () => {
    const state = stateOf([inserted(1), Event.jobCancelled({ jobId: 1, at: 5, reason: null })]);
    const base = Snapshot.snapshot(state, { now: 100, retentionMs: 10 });
    expect(base).toEqual([Event.snapshotPart({ part: 0, lastJobId: 1, jobs: [] })]);
  });

  it("keeps a job that finished exactly at now - retention, drops one finished before", () => {
    const cancel = (jobId: number, at: number) => Event.jobCancelled({ jobId, at, reason: null });
    const state = stateOf([inserted(1), inserted(2), cancel(1, 89), cancel(2, 90)]);
    const restored = refold(Snapshot.snapshot(state, { now: 100, retentionMs: 10 }));
    expect([...State.jobs(restored)].map((job) => job.jobId)).toEqual([2]);
  });

  it("cuts parts by job count", () => {
    const count = Snapshot.partJobsMax + 5;
    const state = stateOf(Array.from({ length: count }, (_, index) => inserted(index + 1)));
    const base = Snapshot.snapshot(state, { now: 0, retentionMs: 0 });
    expect(
      base.map((record) => (record._tag === "SnapshotPart" ? record.jobs.length : -1)),
    ).toEqual([Snapshot.partJobsMax, 5]);
    expect(State.equals(refold(base), state)).toBe(true);
  });

  it("cuts parts by payload size", () => {
    const args = new Uint8Array(3_000_000);
    const state = stateOf(Array.from({ length: 4 }, (_, index) => inserted(index + 1, { args })));
    const base = Snapshot.snapshot(state, { now: 0, retentionMs: 0 });
    expect(
      base.map((record) => (record._tag === "SnapshotPart" ? record.jobs.length : -1)),
    ).toEqual([2, 2]);
  });

  it("streams what the array snapshot gave (differential, property)", () => {
    fc.assert(
      fc.property(steps(50), fc.integer({ min: 0, max: 200_000 }), (plans, retentionMs) => {
        const { state, now } = play(plans);
        const options = { now, retentionMs };
        expect([...Snapshot.events(state, options)]).toEqual(arraySnapshot(state, options));
      }),
    );
  });

  it.each([false, true])("keeps every job of a base of several parts (v3: %s)", (v3) => {
    // The array snapshot never flushed the last (7,3) part of a base of several: a v3
    // store of more than 4,096 kept jobs lost the jobs of that part at compaction.
    const count = Snapshot.partJobsMax + 904;
    const events = Array.from({ length: count }, (_, index) =>
      Event.jobInsertedV3({
        ...inserted(index + 1),
        uniqueKey: null,
        uniquePeriodMs: null,
        timeoutMs: v3 && index === 0 ? 1_000 : null,
      }),
    );
    const folded = Evolve.fold(events);
    if (Either.isLeft(folded)) throw new Error(HistoryError.describe(folded.left));
    const options = { now: 0, retentionMs: 0 };
    const base = [...Snapshot.events(folded.right, options)];
    expect(kinds(base).slice(0, 2)).toEqual(
      v3 ? ["SnapshotPartV3", "SnapshotPartV3"] : ["SnapshotPart", "SnapshotPart"],
    );
    expect(State.jobCount(refold(base))).toBe(count);
    expect(base).toEqual(arraySnapshot(folded.right, options));
    expect(Snapshot.snapshot(folded.right, options)).toEqual(base);
  });
});

describe("a streamed base folded as it is produced", () => {
  it("gives the state the array's fold gives", () => {
    fc.assert(
      fc.property(steps(40), fc.integer({ min: 0, max: 200_000 }), (plans, retentionMs) => {
        const { state, now } = play(plans);
        const builder = Generation.startBase();
        for (const event of Snapshot.events(state, { now, retentionMs })) {
          expect(Either.isRight(Generation.apply(builder, undefined, event))).toBe(true);
        }
        // Not ended, the base may go on: the fold is incomplete.
        expect(Either.isLeft(Generation.finish(builder))).toBe(true);
        Generation.endBase(builder);
        const streamed = Generation.finish(builder);
        const folded = Evolve.foldGeneration(Snapshot.snapshot(state, { now, retentionMs }), []);
        expect(Either.isRight(streamed) && Either.isRight(folded)).toBe(true);
        if (Either.isRight(streamed) && Either.isRight(folded)) {
          expect(State.equals(streamed.right, folded.right)).toBe(true);
        }
      }),
      { numRuns: 50 },
    );
  });
});
