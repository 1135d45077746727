// The persistent id trie agrees with a `Map` for dense, gapped and huge
// ids, keeps every earlier version unchanged, iterates in ascending id
// order, and builds the same map from a dense array at any base. Transient
// runs (sets sharing an `Edit` token) agree with the model and leave every
// map published before the run unchanged. Maps branching from one another
// (each adding its own next id in place, or setting and deleting) keep
// their own contents: what one appended is never seen by another. A leaf
// filled by appends or built whole holds exactly its 32 slots, weighed on
// V8's heap (`--expose-gc`, switched on for this process).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Edit } from "../../src/internal/Edit.js";
import { IdMap } from "../../src/internal/IdMap.js";
import { heapBytesPer } from "../support/Weigh.js";

const id = fc.oneof(
  fc.integer({ min: 0, max: 100 }),
  fc.integer({ min: 0, max: 5_000 }),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);

/** Bytes on V8's heap per entry of the map `build` makes from ids 0..count-1. */
const bytesPerEntry = (count: number, build: () => IdMap<string>): number =>
  heapBytesPer(count, build, (map) => expect(map.get(count - 1)).toBe("value"));

const sortedEntries = (model: Map<number, string>) =>
  [...model].sort((left, right) => left[0] - right[0]);

describe("IdMap", () => {
  it("matches a Map after any sequence of sets, and old versions stay intact (property)", () => {
    fc.assert(
      fc.property(fc.array(id, { maxLength: 120 }), (ids) => {
        let map = IdMap.empty<string>();
        const model = new Map<number, string>();
        const versions: Array<[IdMap<string>, Array<[number, string]>]> = [];
        ids.forEach((key, index) => {
          map = map.set(key, `v${index}`);
          model.set(key, `v${index}`);
          versions.push([map, sortedEntries(model)]);
        });
        for (const [version, entries] of versions) {
          expect([...version.entries()]).toEqual(entries);
          expect(version.size).toBe(entries.length);
          for (const [key, value] of entries) expect(version.get(key)).toBe(value);
        }
        expect(map.get(-1)).toBeUndefined();
        expect(map.has(Number.MAX_SAFE_INTEGER + 2)).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it("lists from any id up and down: the entries at or above it in order, at or below it in reverse, on sparse, dense and branched maps (property)", () => {
    fc.assert(
      fc.property(
        fc.array(id, { maxLength: 120 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.array(id, { maxLength: 8 }),
        (ids, denseCount, froms) => {
          const dense = Array.from({ length: denseCount }, (_, index) => `d${index}`);
          let map = IdMap.fromDense(dense, 7, denseCount);
          const model = new Map<number, string>(dense.map((value, index) => [7 + index, value]));
          const edit = new Edit();
          ids.forEach((key, index) => {
            map = map.set(key, `v${index}`, index % 2 === 0 ? edit : undefined);
            model.set(key, `v${index}`);
          });
          const entries = sortedEntries(model);
          // Every boundary: each key, one past it, and ids drawn anywhere.
          const starts = [0, ...froms, ...ids.flatMap((key) => [key, key + 1]), 7 + denseCount];
          for (const first of starts) {
            expect([...map.entriesFrom(first)]).toEqual(entries.filter(([key]) => key >= first));
            expect([...map.entriesDownFrom(first)]).toEqual(
              entries.filter(([key]) => key <= first).reverse(),
            );
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("builds from a dense array at any base, plus extra entries (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.array(fc.option(fc.string({ maxLength: 2 }), { nil: undefined }), { maxLength: 200 }),
        fc.array(fc.tuple(fc.integer({ min: 300_000, max: 2 ** 52 }), fc.string()), {
          maxLength: 5,
        }),
        (base, dense, extra) => {
          const count = dense.filter((value) => value !== undefined).length;
          const map = IdMap.fromDense(dense, base, count, extra);
          const model = new Map<number, string>();
          dense.forEach((value, offset) => {
            if (value !== undefined) model.set(base + offset, value);
          });
          for (const [key, value] of extra) model.set(key, value);
          expect([...map.entries()]).toEqual(sortedEntries(model));
          expect(map.size).toBe(model.size);
          expect([...map.keys()]).toEqual(sortedEntries(model).map(([key]) => key));
          expect([...map.values()]).toEqual(sortedEntries(model).map(([, value]) => value));
        },
      ),
      { numRuns: 150 },
    );
  });

  it("transient runs agree with a Map and leave earlier maps intact (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.array(id, { maxLength: 40 }), { maxLength: 8 }), (runs) => {
        let map = IdMap.fromDense(["a", "b"], 0, 2);
        const model = new Map<number, string>([
          [0, "a"],
          [1, "b"],
        ]);
        const published: Array<[IdMap<string>, Array<[number, string]>]> = [
          [map, sortedEntries(model)],
        ];
        runs.forEach((run, runIndex) => {
          const edit = new Edit();
          run.forEach((key, index) => {
            map = map.set(key, `r${runIndex}.${index}`, edit);
            model.set(key, `r${runIndex}.${index}`);
          });
          expect([...map.entries()]).toEqual(sortedEntries(model));
          expect(map.size).toBe(model.size);
          published.push([map, sortedEntries(model)]);
        });
        for (const [version, entries] of published) {
          expect([...version.entries()]).toEqual(entries);
          for (const [key, value] of entries) expect(version.get(key)).toBe(value);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("keeps every version's own contents when versions branch and append (property)", () => {
    // Each step takes any earlier version and adds its next id (the append
    // in place), sets another id, or deletes one; sometimes in a run.
    const step = fc.record({
      from: fc.nat(),
      kind: fc.constantFrom("next", "next", "next", "set", "delete"),
      key: fc.integer({ min: 0, max: 200 }),
      inRun: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 150 }), fc.nat(100), (steps, start) => {
        const dense = Array.from({ length: start }, (_, index) => `d${index}`);
        const versions: Array<{ map: IdMap<string>; model: Map<number, string>; next: number }> = [
          {
            map: IdMap.fromDense(dense, 0, start),
            model: new Map(dense.map((value, index) => [index, value])),
            next: start,
          },
        ];
        steps.forEach(({ from, kind, key, inRun }, index) => {
          const parent = versions[from % versions.length];
          if (parent === undefined) return;
          const model = new Map(parent.model);
          const edit = inRun ? new Edit() : undefined;
          let map = parent.map;
          let next = parent.next;
          if (kind === "delete") {
            map = map.delete(key, edit);
            model.delete(key);
          } else {
            const id = kind === "next" ? next : key;
            map = map.set(id, `s${index}`, edit);
            model.set(id, `s${index}`);
            next = Math.max(next, id + 1);
          }
          versions.push({ map, model, next });
        });
        for (const { map, model, next } of versions) {
          expect([...map.entries()]).toEqual(sortedEntries(model));
          const visited: Array<string> = [];
          map.forEachValue((value) => visited.push(value));
          expect(visited).toEqual(sortedEntries(model).map(([, value]) => value));
          expect(map.size).toBe(model.size);
          for (let id = 0; id <= next + 40; id++) expect(map.get(id)).toBe(model.get(id));
        }
      }),
      { numRuns: 200 },
    );
  });

  // 8 bytes a slot; a leaf's array header, its object and its array object
  // over 32 entries add ~3.3, the branches less than 0.5. A leaf grown by
  // pushes holds 43 slots: 2.75 bytes more an entry.
  const entryBytesMax = 8 + 3.3 + 0.5 + 1;
  const entries = 100_000;

  it("holds a leaf filled by appends in exactly 32 slots", () => {
    const bytes = bytesPerEntry(entries, () => {
      let map = IdMap.empty<string>();
      for (let id = 0; id < entries; id++) map = map.set(id, "value");
      return map;
    });
    expect(bytes).toBeLessThan(entryBytesMax);
  });

  it("holds a leaf built whole in exactly 32 slots", () => {
    const dense = new Array<string>(entries).fill("value");
    const bytes = bytesPerEntry(entries, () => IdMap.fromDense(dense, 0, entries));
    expect(bytes).toBeLessThan(entryBytesMax);
  });
});
