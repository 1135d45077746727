// The pending keys' table agrees with a model (a `Map` of joined pairs
// emptied by `clear`) after any run of adds, lookups and clears: a cleared
// drain's pairs are never found again, the same key in two queues is two
// pairs, and a lookup that missed then an add of the same pair (the one
// probe remembered) or of another pair in between both land right. It
// also holds through its regrowths and past a large drain it drops.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type KeyHash, keyHash } from "../../src/internal/KeyTable.js";
import { PendingKeys } from "../../src/internal/PendingKeys.js";

type Step =
  | { readonly kind: "add"; readonly queue: string; readonly key: string; readonly jobId: number }
  | { readonly kind: "holder"; readonly queue: string; readonly key: string }
  | { readonly kind: "clear" };

const queues = ["q", "r", ""];
const keys = Array.from({ length: 6 }, (_, index) => `key-${index}`).concat(["", "é"]);
const pair = { queue: fc.constantFrom(...queues), key: fc.constantFrom(...keys) };
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("add" as const), ...pair, jobId: fc.nat() }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("holder" as const), ...pair }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("clear" as const) }) },
);

const joined = (queue: string, key: string): string => `${queue.length}:${queue}${key}`;

const hashes: ReadonlyArray<readonly [string, KeyHash]> = [
  ["keyHash", keyHash],
  ["one home for all", () => 7],
  ["homes at the end", (key) => -1 - (key.length % 2)],
];

describe("PendingKeys", () => {
  for (const [name, hash] of hashes) {
    it(`matches a Map emptied at each clear (${name}, property)`, () => {
      fc.assert(
        fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
          const table = new PendingKeys(hash);
          const model = new Map<string, number>();
          for (const each of steps) {
            if (each.kind === "clear") {
              table.clear();
              model.clear();
            } else if (each.kind === "add") {
              table.add(each.queue, each.key, each.jobId);
              model.set(joined(each.queue, each.key), each.jobId);
            } else {
              expect(table.holder(each.queue, each.key)).toBe(
                model.get(joined(each.queue, each.key)),
              );
            }
            expect(table.size).toBe(model.size);
          }
          for (const queue of queues) {
            for (const key of keys)
              expect(table.holder(queue, key)).toBe(model.get(joined(queue, key)));
          }
        }),
        { numRuns: 300 },
      );
    });
  }

  it("holds many keys through its regrowths, and none after a clear", () => {
    const table = new PendingKeys();
    for (let round = 0; round < 3; round++) {
      // A large drain (dropped at its clear), then a small one.
      const count = round === 1 ? 10 : 20_000;
      for (let index = 0; index < count; index++) table.add("q", `k${index}`, index + round);
      expect(table.size).toBe(count);
      for (let index = 0; index < count; index++) {
        expect(table.holder("q", `k${index}`)).toBe(index + round);
      }
      expect(table.holder("r", "k1")).toBeUndefined();
      table.clear();
      expect(table.size).toBe(0);
      for (let index = 0; index < count; index += 97) {
        expect(table.holder("q", `k${index}`)).toBeUndefined();
      }
    }
  });
});
