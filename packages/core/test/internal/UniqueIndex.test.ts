// The unique index keyed by a hash of (queue, key) agrees with a naive
// `Map` of joined pairs after any run of added holders: under its own hash
// and under planted weak ones that make every pair, or many, collide (the
// chains then decide). Runs sharing an `Edit` agree too, and never change
// an index published before the run; without one, every earlier version
// stays as it was. Built at once (`of`), it is the index the adds make.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Edit } from "../../src/internal/Edit.js";
import { type Hash, hashPair, UniqueIndex } from "../../src/internal/UniqueIndex.js";
import { uniqueIndexKey } from "../../src/State.js";

type Model = ReadonlyArray<readonly [string, ReadonlyArray<number>]>;

const queues = ["default", "mail", "m", "ma", ""];
const keys = ["a", "b", "il", "ail", "5:x", "é", "key-1", "key-2", ""];
const pair = fc.tuple(fc.constantFrom(...queues), fc.constantFrom(...keys));

const hashes: ReadonlyArray<readonly [string, Hash]> = [
  ["hashPair", hashPair],
  ["one bucket for all", () => 0],
  ["by the key's length", (_queue, key) => key.length % 3],
  ["by the queue's length", (queue) => queue.length],
];

/** The model's entries in the joined keys' order, as `entries` yields them. */
const sorted = (model: ReadonlyMap<string, ReadonlyArray<number>>): Model =>
  [...model].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));

/** Checks `index` against `entries` for every pair (held or not). */
const agrees = (index: UniqueIndex, entries: Model): void => {
  const model = new Map(entries);
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
  for (const [name, hash] of hashes) {
    it(`matches a Map of joined pairs, earlier versions intact (${name}, property)`, () => {
      fc.assert(
        fc.property(fc.array(fc.tuple(pair, fc.boolean()), { maxLength: 50 }), (steps) => {
          let index = UniqueIndex.empty(hash);
          const model = new Map<string, ReadonlyArray<number>>();
          const versions: Array<readonly [UniqueIndex, Model]> = [];
          let edit: Edit | undefined;
          let jobId = 0;
          for (const [[queue, key], newRun] of steps) {
            // A new run (or none): the versions made so far are published.
            if (newRun) {
              versions.push([index, sorted(model)]);
              edit = jobId % 2 === 0 ? new Edit() : undefined;
            }
            jobId += 1;
            index = index.withHolder(queue, key, jobId, edit);
            const joined = uniqueIndexKey(queue, key);
            model.set(joined, [...(model.get(joined) ?? []), jobId]);
            agrees(index, sorted(model));
          }
          for (const [version, entries] of versions) agrees(version, entries);
          const rebuilt = UniqueIndex.of(
            [...model].map(([joined, holders]) => {
              const [queue = "", key = ""] = splitJoined(joined);
              return [queue, key, holders] as const;
            }),
            hash,
          );
          agrees(rebuilt, sorted(model));
        }),
        { numRuns: 60 },
      );
    });
  }

  it("hashes to a small integer, 0..2^30-1, the same for the same pair (property)", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (queue, key) => {
        const hash = hashPair(queue, key);
        expect(Number.isInteger(hash) && hash >= 0 && hash < 2 ** 30).toBe(true);
        expect(hashPair(`${queue}`, `${key}`)).toBe(hash);
      }),
    );
  });

  it("keeps sequential keys on neighbouring hashes (a drain's keys update neighbouring leaves)", () => {
    const spread = hashPair("bench", "key-100255") - hashPair("bench", "key-100000");
    expect(spread).toBeGreaterThan(0);
    expect(spread).toBeLessThan(2 ** 12);
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
