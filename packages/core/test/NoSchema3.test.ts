// EVENTS-V3.md: writers emit a schema-3 pair only when a feature is used.
// Random workloads of every v1/v2 command (the model test's plans, without
// the schema-3 ones) are decided and folded; no decided record, no member
// of a mutation and no record of the compacted base is of schema 3, and the
// state says schema 3 is not in use. A decider that wrote (1,3), (13,3) or
// (7,3) without need would fail it.
import { Decide, Event, Evolve, Snapshot, State } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { steps } from "./support/Plans.js";

const tagsOf = (records: ReadonlyArray<Event.Event>): Array<string> =>
  records.flatMap((record) =>
    record._tag === "Mutation" ? record.events.map((event) => event._tag) : [record._tag],
  );

describe("a store with no v3 feature used", () => {
  it("holds no schema-3 record, in its tail or in its compacted base", () => {
    fc.assert(
      fc.property(steps(60), (plan) => {
        let state = State.initialState;
        let now = 1_000;
        const records: Array<Event.Event> = [];
        for (const { plan: make, elapsedMs } of plan) {
          now += elapsedMs;
          const command = make(
            { jobs: [...State.jobs(state)], schedules: [...State.schedules(state)] },
            now,
          );
          const decided = Decide.decide(state, command);
          if (Either.isLeft(decided)) continue;
          const evolved = Evolve.evolveAll(state, decided.right);
          if (Either.isLeft(evolved)) throw new Error(evolved.left.reason._tag);
          state = evolved.right;
          records.push(...decided.right);
        }
        const base = Snapshot.snapshot(state, { now, retentionMs: 1_000 });
        for (const tag of [...tagsOf(records), ...tagsOf(base)]) {
          expect(Event.schema3Tags).not.toContain(tag);
        }
        expect(State.usesSchema3(state)).toBe(false);
      }),
      { numRuns: 60 },
    );
  });
});
