// The persistent AVL map agrees with a sorted array after any sequence of
// sets and deletes, keeps its balance/order/size invariants, and never
// changes a map that an update was derived from.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareNumbers, compareStrings, SortedMap } from "../../src/internal/SortedMap.js";

type Operation = { readonly kind: "set" | "delete"; readonly key: number };

const operation = fc.record({
  kind: fc.constantFrom<"set" | "delete">("set", "set", "delete"),
  key: fc.integer({ min: 0, max: 60 }),
});

describe("SortedMap", () => {
  it("matches a naive model and stays valid (property)", () => {
    fc.assert(
      fc.property(
        fc.array(operation, { maxLength: 200 }),
        (operations: ReadonlyArray<Operation>) => {
          let map = SortedMap.empty<number, string>(compareNumbers);
          const model = new Map<number, string>();
          const history: Array<[SortedMap<number, string>, Array<[number, string]>]> = [];
          operations.forEach(({ kind, key }, index) => {
            if (kind === "set") {
              map = map.set(key, `v${index}`);
              model.set(key, `v${index}`);
            } else {
              map = map.delete(key);
              model.delete(key);
            }
            history.push([map, [...model].sort((left, right) => left[0] - right[0])]);
          });
          // Every earlier version still holds exactly what it held.
          for (const [version, entries] of history) {
            expect(version.isValid()).toBe(true);
            expect([...version.entries()]).toEqual(entries);
            expect(version.size).toBe(entries.length);
            for (const [key, value] of entries) expect(version.get(key)).toBe(value);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("iterates from a lower bound and stops when asked", () => {
    const map = SortedMap.fromSorted(compareNumbers, [1, 3, 5, 7], ["a", "b", "c", "d"]);
    expect([...map.entries(4)].map(([key]) => key)).toEqual([5, 7]);
    expect([...map.keys()]).toEqual([1, 3, 5, 7]);
    expect([...map.values()]).toEqual(["a", "b", "c", "d"]);
    const seen: Array<number> = [];
    map.forEachWhile((_, key) => {
      seen.push(key);
      return key < 3;
    });
    expect(seen).toEqual([1, 3]);
    expect(map.first()).toEqual([1, "a"]);
    expect(SortedMap.empty(compareNumbers).first()).toBeUndefined();
    expect(map.has(3) && !map.has(4)).toBe(true);
    expect(map.delete(4)).toBe(map);
  });

  it("builds balanced trees from sorted input", () => {
    const keys = Array.from({ length: 1000 }, (_, index) => `k${String(index).padStart(4, "0")}`);
    const map = SortedMap.fromSorted(compareStrings, keys, keys);
    expect(map.isValid()).toBe(true);
    expect(map.size).toBe(1000);
  });
});
