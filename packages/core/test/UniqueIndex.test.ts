// The fold's unique index (State.indexes.unique) holds, for every (queue,
// key), exactly the jobs a naive model says hold it, ascending: random runs
// of keyed inserts (refused while a live job holds the key) and
// completions (which free it) are folded by `evolve` and by one
// `Evolve.batch` (in-place updates, the insert's lookup reused), and every
// state `evolve` published earlier still shows what it showed then.
import { type Event, Evolve, State } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { completed, started } from "./support/Given.js";
import { unique } from "./support/GivenV3.js";

type Step =
  | { readonly _tag: "insert"; readonly queue: string; readonly key: string }
  | { readonly _tag: "complete"; readonly pick: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    _tag: fc.constant("insert" as const),
    queue: fc.constantFrom("default", "mail", "m"),
    key: fc.constantFrom("a", "b", "ail", "5:x", "é"),
  }),
  fc.record({ _tag: fc.constant("complete" as const), pick: fc.nat() }),
);

/** The model: each pair's holders, ascending, as `Map` entries sorted by pair. */
type Model = ReadonlyArray<readonly [string, ReadonlyArray<number>]>;

const pairOf = (queue: string, key: string): string => `${queue}\u0000${key}`;

const indexOf = (state: State.State, pairs: Iterable<string>): Model =>
  [...pairs].sort().map((pair) => {
    const [queue = "", key = ""] = pair.split("\u0000");
    return [pair, state.indexes.unique.get(State.uniqueIndexKey(queue, key)) ?? []] as const;
  });

describe("the unique index", () => {
  it("matches a naive model through evolve and a batch; earlier states unchanged (property)", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const holders = new Map<string, Array<number>>();
        const live = new Map<number, string>();
        let state = State.initialState;
        const run = Evolve.batch(State.initialState);
        let batched = State.initialState;
        const versions: Array<readonly [State.State, Model]> = [];
        for (const next of steps) {
          let events: Array<Event.Event>;
          if (next._tag === "insert") {
            const pair = pairOf(next.queue, next.key);
            const jobId = state.lastJobId + 1;
            const event = unique(jobId, next.key, { queue: next.queue });
            const taken = [...live.values()].includes(pair);
            if (taken) {
              expect(Either.isLeft(Evolve.evolve(state, event))).toBe(true);
              continue;
            }
            holders.set(pair, [...(holders.get(pair) ?? []), jobId]);
            live.set(jobId, pair);
            events = [event];
          } else {
            const ids = [...live.keys()];
            const jobId = ids[next.pick % Math.max(1, ids.length)];
            if (jobId === undefined) continue;
            live.delete(jobId);
            events = [started(jobId), completed(jobId)];
          }
          for (const event of events) {
            const folded = Evolve.evolve(state, event);
            if (Either.isLeft(folded)) throw new Error(folded.left.reason._tag);
            state = folded.right;
          }
          const inBatch = run.evolveAll(events);
          if (Either.isLeft(inBatch)) throw new Error(inBatch.left.reason._tag);
          batched = inBatch.right;
          const model: Model = [...holders].sort(([left], [right]) => (left < right ? -1 : 1));
          expect(indexOf(state, holders.keys())).toEqual(model);
          expect(indexOf(batched, holders.keys())).toEqual(model);
          expect(state.indexes.unique.size).toBe(holders.size);
          versions.push([state, model]);
        }
        for (const [earlier, model] of versions) {
          expect(indexOf(earlier, holders.keys()).filter(([, ids]) => ids.length > 0)).toEqual(
            model,
          );
        }
      }),
      { numRuns: 200 },
    );
  });
});
