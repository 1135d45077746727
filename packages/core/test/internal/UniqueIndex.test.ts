// The unique index agrees with a naive `Map` of joined pairs after any run
// of added holders, with one table per queue and with tables so small that
// a queue's keys spill into several. Every version stays as it was, read in
// any order and extended from any of them (the shared table is turned back
// and forth between versions: a change left behind wrong, or not at all,
// shows in another version's reads). Built at once (`of`), it is the index
// the adds make.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Edit } from "../../src/internal/Edit.js";
import { UniqueIndex } from "../../src/internal/UniqueIndex.js";
import { uniqueIndexKey } from "../../src/State.js";

type Model = ReadonlyArray<readonly [string, ReadonlyArray<number>]>;

const queues = ["default", "mail", "m", "ma", ""];
const keys = ["a", "b", "il", "ail", "5:x", "é", "key-1", "key-2", ""];
const pair = fc.tuple(fc.constantFrom(...queues), fc.constantFrom(...keys));

// Keys per table of a queue: the default, and tiny ones that spill.
const capacities: ReadonlyArray<readonly [string, number | undefined]> = [
  ["one table per queue", undefined],
  ["one key per table", 1],
  ["three keys per table", 3],
];

/** The model's entries in the joined keys' order, as `entries` yields them. */
const sorted = (model: ReadonlyMap<string, ReadonlyArray<number>>): Model =>
  [...model].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));

/** Checks `index` against `entries` for every pair (held or not). */
const agrees = (index: UniqueIndex, entries: Model, capacity?: number): void => {
  const model = new Map(entries);
  // Each queue's keys spread over tables of at most `capacity` keys.
  for (const [queue, sizes] of index.tableSizes()) {
    const held = entries.filter(([joined]) => splitJoined(joined)[0] === queue).length;
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(held);
    if (capacity !== undefined)
      for (const size of sizes) expect(size).toBeLessThanOrEqual(capacity);
  }
  expect([...index.entries()]).toEqual(entries);
  expect(index.size).toBe(entries.length);
  for (const queue of queues) {
    for (const key of keys) {
      const joined = uniqueIndexKey(queue, key);
      expect(index.holders(queue, key)).toEqual(model.get(joined));
      expect(index.get(joined)).toEqual(model.get(joined));
    }
  }
};

describe("UniqueIndex", () => {
  for (const [name, capacity] of capacities) {
    it(`matches a Map of joined pairs, earlier versions intact (${name}, property)`, () => {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(pair, fc.boolean(), fc.boolean()), { maxLength: 50 }),
          (steps) => {
            let index = UniqueIndex.empty(capacity);
            const model = new Map<string, ReadonlyArray<number>>();
            const versions: Array<readonly [UniqueIndex, Model]> = [];
            let edit: Edit | undefined;
            let jobId = 0;
            for (const [[queue, key], newRun, readBack] of steps) {
              // A new run (or none): the versions made so far are published.
              if (newRun) {
                versions.push([index, sorted(model)]);
                edit = jobId % 2 === 0 ? new Edit() : undefined;
              }
              // A published version read in the middle of a run turns the
              // table back to it: the run goes on, from then on, as new changes.
              const published = versions[jobId % Math.max(1, versions.length)];
              if (readBack && published !== undefined) agrees(published[0], published[1], capacity);
              jobId += 1;
              index = index.withHolder(queue, key, jobId, edit);
              const joined = uniqueIndexKey(queue, key);
              model.set(joined, [...(model.get(joined) ?? []), jobId]);
              agrees(index, sorted(model), capacity);
            }
            for (const [version, entries] of versions) agrees(version, entries, capacity);
            const rebuilt = UniqueIndex.of(
              [...model].map(([joined, holders]) => {
                const [queue = "", key = ""] = splitJoined(joined);
                return [queue, key, holders] as const;
              }),
              capacity,
            );
            agrees(rebuilt, sorted(model), capacity);
          },
        ),
        { numRuns: 60 },
      );
    });
  }

  for (const [name, capacity] of capacities) {
    it(`reads and extends any earlier version, in any order (${name}, property)`, () => {
      // Each step picks a version made so far (by its position), reads it,
      // and extends it: versions branch, and the shared table is turned
      // from one branch to another at every step.
      const step = fc.tuple(fc.nat(), pair, fc.boolean());
      fc.assert(
        fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
          const versions: Array<
            readonly [UniqueIndex, ReadonlyMap<string, ReadonlyArray<number>>]
          > = [[UniqueIndex.empty(capacity), new Map()]];
          let jobId = 0;
          for (const [pick, [queue, key], reread] of steps) {
            const [index, model] = versions[pick % versions.length] ?? [];
            if (index === undefined || model === undefined) continue;
            agrees(index, sorted(model), capacity);
            jobId += 1;
            const joined = uniqueIndexKey(queue, key);
            const next = new Map(model).set(joined, [...(model.get(joined) ?? []), jobId]);
            versions.push([index.withHolder(queue, key, jobId), next]);
            // Sometimes the version extended is read again at once.
            if (reread) agrees(index, sorted(model), capacity);
          }
          for (const [index, model] of versions.slice().reverse())
            agrees(index, sorted(model), capacity);
        }),
        { numRuns: 60 },
      );
    });
  }

  it("gives the first key of an empty index a table of its own", () => {
    // Every fold from `State.initialState` extends the same empty index: had
    // they shared its table, reading the empty index (or a second fold's
    // first read) would turn it back through the first fold's keys, and the
    // queues that fold made would still be listed in the empty table.
    const empty = UniqueIndex.empty();
    const first = empty.withHolder("q", "k", 1);
    const second = empty.withHolder("r", "j", 2).withHolder("r", "i", 3, new Edit());
    expect(empty.tableSizes()).toEqual(new Map());
    expect(first.tableSizes()).toEqual(new Map([["q", [1]]]));
    expect(second.tableSizes()).toEqual(new Map([["r", [2]]]));
    expect([first.holders("q", "k"), first.holders("r", "j")]).toEqual([[1], undefined]);
    expect([second.holders("q", "k"), second.holders("r", "i")]).toEqual([undefined, [3]]);
    expect([empty.size, first.size, second.size]).toEqual([0, 1, 2]);
  });

  it("finds nothing under a string no pair joins to", () => {
    const index = UniqueIndex.empty().withHolder("mail", "a", 1);
    for (const joined of ["", "mail", ":mail", "x:mail", "9:mail", "-1:mail", "4:mail"]) {
      expect(index.get(joined)).toBeUndefined();
    }
    expect(index.get("4:maila")).toEqual([1]);
  });
});

/** `uniqueIndexKey`'s parts again: the queue's length, a colon, the queue, the key. */
const splitJoined = (joined: string): readonly [string, string] => {
  const colon = joined.indexOf(":");
  const length = Number(joined.slice(0, colon));
  return [joined.slice(colon + 1, colon + 1 + length), joined.slice(colon + 1 + length)];
};
