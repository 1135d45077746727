// The packed fact map agrees with a `Map` of fact objects for ids on one
// page, across pages and far apart, for attempts and queue counts at and
// beyond what a slot packs (those facts overflow, never clamp), and every
// version published before an update (plain, transient, or a builder's)
// stays unchanged. Each planted packing bug (a wrong attempt, a lost result
// bit, two queues sharing an index) fails these properties.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Edit } from "../../src/internal/Edit.js";
import {
  attemptLimit,
  FactMap,
  FactMapBuilder,
  pageSlots,
  queueLimit,
} from "../../src/internal/FactMap.js";
import type { Fact } from "../../src/Terminal.js";

const id = fc.oneof(
  fc.integer({ min: 0, max: 300 }),
  fc.integer({ min: 0, max: 20 * pageSlots }),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);

const fact: fc.Arbitrary<Fact> = fc.record({
  queue: fc.oneof(
    fc.constantFrom("default", "mail", "reports", "a", "b"),
    fc.string({ minLength: 1, maxLength: 4 }),
  ),
  attempt: fc.oneof(
    fc.integer({ min: 0, max: 25 }),
    fc.integer({ min: attemptLimit - 2, max: attemptLimit + 2 }),
    fc.integer({ min: 0, max: 1_000_000 }),
  ),
  hasResult: fc.boolean(),
});

const sortedEntries = (model: Map<number, Fact>): Array<readonly [number, Fact]> =>
  [...model].sort((left, right) => left[0] - right[0]);

const queueCounts = (model: Map<number, Fact>): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const { queue } of model.values()) counts.set(queue, (counts.get(queue) ?? 0) + 1);
  return counts;
};

interface Readable {
  readonly size: number;
  get(id: number): Fact | undefined;
  has(id: number): boolean;
}

const expectLike = (map: Readable, model: Map<number, Fact>, probes: ReadonlyArray<number>) => {
  expect(map.size).toBe(model.size);
  for (const [key, value] of model) {
    expect(map.get(key)).toEqual(value);
    expect(map.has(key)).toBe(true);
  }
  for (const probe of probes) {
    if (model.has(probe)) continue;
    expect(map.get(probe)).toBeUndefined();
    expect(map.has(probe)).toBe(false);
  }
};

const expectPublished = (map: FactMap, model: Map<number, Fact>) => {
  const entries = sortedEntries(model);
  expect([...map.entries()]).toEqual(entries);
  // From each key and one past it: the entries at or above, the overflow's merged in.
  for (const [key] of entries) {
    for (const from of [key, key + 1]) {
      expect([...map.entriesFrom(from)]).toEqual(entries.filter(([other]) => other >= from));
    }
    for (const from of [key, key - 1]) {
      expect([...map.entriesDownFrom(from)]).toEqual(
        entries.filter(([other]) => other <= from).reverse(),
      );
    }
  }
  expect(map.countsByQueue()).toEqual(queueCounts(model));
};

const steps = fc.array(fc.tuple(id, fact), { maxLength: 120 });

describe("FactMap", () => {
  it("matches a Map after any sequence of sets, and old versions stay intact (property)", () => {
    fc.assert(
      fc.property(steps, fc.array(id, { maxLength: 10 }), (sets, probes) => {
        let map = FactMap.empty();
        const model = new Map<number, Fact>();
        const versions: Array<[FactMap, Map<number, Fact>]> = [];
        for (const [key, value] of sets) {
          map = map.set(key, value);
          model.set(key, value);
          versions.push([map, new Map(model)]);
        }
        expectLike(map, model, probes);
        for (const [version, snapshot] of versions) expectPublished(version, snapshot);
      }),
    );
  });

  it("writes a run's own pages in place and leaves every earlier map unchanged (property)", () => {
    fc.assert(
      fc.property(steps, steps, (before, during) => {
        let map = FactMap.empty();
        const model = new Map<number, Fact>();
        for (const [key, value] of before) {
          map = map.set(key, value);
          model.set(key, value);
        }
        const published = map;
        const publishedModel = new Map(model);
        const edit = new Edit();
        for (const [key, value] of during) {
          map = map.set(key, value, edit);
          model.set(key, value);
        }
        expectLike(map, model, []);
        expectPublished(map, model);
        expectPublished(published, publishedModel);
      }),
    );
  });

  it("builds what the sets give, and keeps every map it published unchanged (property)", () => {
    fc.assert(
      fc.property(steps, steps, steps, (first, second, after) => {
        const builder = new FactMapBuilder();
        const model = new Map<number, Fact>();
        for (const [key, value] of first) {
          builder.set(key, value);
          model.set(key, value);
        }
        expectLike(builder, model, []);
        const published = builder.toFactMap();
        const publishedModel = new Map(model);
        for (const [key, value] of second) {
          builder.set(key, value);
          model.set(key, value);
        }
        expectLike(builder, model, []);
        const last = builder.toFactMap();
        const lastModel = new Map(model);
        // The published map is persistent like any other.
        let evolved = last;
        for (const [key, value] of after) {
          evolved = evolved.set(key, value, new Edit());
          model.set(key, value);
        }
        expectPublished(evolved, model);
        expectPublished(last, lastModel);
        expectPublished(published, publishedModel);
      }),
    );
  });

  it("appends past a map's end in place, and every other map derived from the same one sees none of it (property)", () => {
    // Jobs complete mostly in id order: a fact past the map's end goes into
    // the shared page in place. Any map branched from an earlier version,
    // appending or not, from a builder or not, must see only its own facts.
    const step = fc.record({
      from: fc.nat(),
      at: fc.integer({ min: 0, max: 3 * pageSlots }),
      ahead: fc.boolean(),
      fact,
    });
    fc.assert(
      fc.property(fc.boolean(), fc.array(step, { maxLength: 60 }), (built, steps) => {
        const start = new FactMapBuilder();
        if (built) start.set(5, { queue: "b", attempt: 1, hasResult: false });
        const first = built ? start.toFactMap() : FactMap.empty();
        const first0 = new Map<number, Fact>(
          built ? [[5, { queue: "b", attempt: 1, hasResult: false }]] : [],
        );
        const versions: Array<[FactMap, Map<number, Fact>, number]> = [
          [first, first0, built ? 6 : 0],
        ];
        for (const { from, at, ahead, fact: value } of steps) {
          const [map, model, end] = versions[from % versions.length] ?? [first, first0, 0];
          // Mostly just past the version's own end, as completions come.
          const target = ahead ? end + (at % 4) : at;
          const next = new Map(model).set(target, value);
          versions.push([map.set(target, value), next, Math.max(end, target + 1)]);
        }
        for (const [map, model] of versions) {
          expectLike(map, model, [0, 1, 5, pageSlots, 2 * pageSlots + 7]);
          expect([...map.entries()]).toEqual(sortedEntries(model));
          expect(map.countsByQueue()).toEqual(queueCounts(model));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("packs attempts below the limit and overflows the others whole", () => {
    const facts: Array<Fact> = [
      { queue: "q", attempt: 0, hasResult: false },
      { queue: "q", attempt: attemptLimit - 1, hasResult: true },
      { queue: "q", attempt: attemptLimit, hasResult: true },
      { queue: "r", attempt: 2 ** 40, hasResult: false },
    ];
    let map = FactMap.empty();
    facts.forEach((value, index) => {
      map = map.set(index * pageSlots + 3, value);
    });
    facts.forEach((value, index) => {
      expect(map.get(index * pageSlots + 3)).toEqual(value);
    });
    // An overflowed id set again to a fact that packs leaves the overflow.
    map = map.set(2 * pageSlots + 3, { queue: "q", attempt: 1, hasResult: false });
    expect(map.size).toBe(4);
    expect(map.get(2 * pageSlots + 3)).toEqual({ queue: "q", attempt: 1, hasResult: false });
    expect(map.countsByQueue()).toEqual(
      new Map([
        ["q", 3],
        ["r", 1],
      ]),
    );
  });

  it("keeps every queue apart, beyond the queues a slot can index", () => {
    const builder = new FactMapBuilder();
    const queues = queueLimit + 3;
    for (let index = 0; index < queues; index++) {
      builder.set(index, { queue: `q${index}`, attempt: index % 7, hasResult: index % 2 === 0 });
    }
    const map = builder.toFactMap().set(queues, { queue: "late", attempt: 1, hasResult: true });
    for (const index of [0, 1, 2, queueLimit - 1, queueLimit, queues - 1]) {
      const expected = { queue: `q${index}`, attempt: index % 7, hasResult: index % 2 === 0 };
      expect(builder.get(index)).toEqual(expected);
      expect(map.get(index)).toEqual(expected);
    }
    expect(map.get(queues)).toEqual({ queue: "late", attempt: 1, hasResult: true });
    expect(map.size).toBe(queues + 1);
    expect(map.countsByQueue().size).toBe(queues + 1);
  });
});
