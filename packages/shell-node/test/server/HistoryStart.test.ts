// Where a job's history can start past the base (`historyStart`): on random logs (inserts alone
// and in mutations, ids rising, other records between them, stretches longer than a probe with
// no insert), the start is never after the record that inserted the job, so no entry of its
// history is skipped; with inserts never further apart than a probe, or all before one long
// stretch without any (a bulk load), it is that record exactly, in about log2(records) reads.
import { Event } from "@tay/core";
import { Effect } from "effect";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Entry } from "../../src/log/Projection.js";
import { historyStart, probeRecords } from "../../src/server/internal/historyStart.js";
import { insertedEvent } from "../support/job.js";

const inserted = (jobId: number) => insertedEvent(jobId);

/** A record of a layout: `inserts` jobs (0: another record, 2+: a mutation of inserts). */
type Layout = ReadonlyArray<number>;

/** The log a layout makes from sequence `from`, and each job's inserting sequence. */
const logOf = (layout: Layout, from: number) => {
  const entries: Array<Entry> = [];
  const insertedAt = new Map<number, number>();
  let lastJobId = 0;
  for (const [at, inserts] of layout.entries()) {
    const sequence = from + at;
    const ids = Array.from({ length: inserts }, () => ++lastJobId);
    for (const jobId of ids) insertedAt.set(jobId, sequence);
    const [only] = ids;
    const event =
      ids.length === 0
        ? Event.jobStarted({ jobId: Math.max(1, lastJobId), at: 0, attempt: 1 })
        : ids.length === 1 && only !== undefined
          ? inserted(only)
          : Event.mutation(ids.map(inserted));
    entries.push({ sequence, event });
  }
  let reads = 0;
  const log = {
    readFrom: (sequence: number, limit: number) =>
      Effect.sync(() => {
        reads += 1;
        return entries.slice(sequence - from, sequence - from + limit);
      }),
  };
  return { log, insertedAt, lastJobId, reads: () => reads };
};

/** Records: each insert (alone, or a mutation of 2-5) after a run with none, some longer than a probe when `gaps`. */
const layoutOf = (gaps: boolean): fc.Arbitrary<Layout> =>
  fc
    .array(
      fc.tuple(
        fc.oneof(
          { weight: 3, arbitrary: fc.constant(0) },
          {
            weight: 1,
            arbitrary: fc.integer({ min: 1, max: gaps ? probeRecords * 3 : probeRecords - 2 }),
          },
        ),
        fc.oneof(
          { weight: 4, arbitrary: fc.constant(1) },
          { weight: 1, arbitrary: fc.integer({ min: 2, max: 5 }) },
        ),
      ),
      { minLength: 1, maxLength: 200 },
    )
    .map((runs) =>
      runs.flatMap(([gap, inserts]) => [...Array.from({ length: gap }, () => 0), inserts]),
    );

describe("where a job's history can start", () => {
  it("is never after the record that inserted the job", async () => {
    await fc.assert(
      fc.asyncProperty(
        layoutOf(true),
        fc.integer({ min: 1, max: 1_000 }),
        fc.constantFrom(1, 16, 4096),
        async (layout, from, narrowEnough) => {
          const { log, insertedAt, lastJobId } = logOf(layout, from);
          const through = from + layout.length - 1;
          for (let jobId = 1; jobId <= lastJobId + 1; jobId += 1) {
            const start = await Effect.runPromise(
              historyStart(log, jobId, from, through, narrowEnough),
            );
            expect(start).toBeGreaterThanOrEqual(from);
            const at = insertedAt.get(jobId);
            if (at !== undefined) expect(start).toBeLessThanOrEqual(at);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("is the inserting record itself, in about log2 reads, when no stretch without an insert is longer than a probe", async () => {
    await fc.assert(
      fc.asyncProperty(layoutOf(false), async (layout) => {
        const from = 7;
        const { log, insertedAt, lastJobId, reads } = logOf(layout, from);
        const through = from + layout.length - 1;
        for (let jobId = 1; jobId <= lastJobId; jobId += 1) {
          const before = reads();
          const start = await Effect.runPromise(historyStart(log, jobId, from, through, 1));
          expect(start).toBe(insertedAt.get(jobId));
          expect(reads() - before).toBeLessThanOrEqual(Math.ceil(Math.log2(layout.length + 1)) + 1);
        }
        // A job inserted after the range (or never): at its last insert at the earliest.
        const beyond = await Effect.runPromise(historyStart(log, lastJobId + 1, from, through, 1));
        expect(beyond).toBeGreaterThanOrEqual(Math.max(...insertedAt.values()));
      }),
      { numRuns: 200 },
    );
  });

  it("is the inserting record itself when the inserts came first, then a long stretch without any", async () => {
    // A bulk load, then its jobs' claims and completions: most steps of the search land in
    // the stretch with no insert (until 2026-12-07 the first such step stopped the search).
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: probeRecords * 2, max: probeRecords * 8 }),
        async (inserts, after) => {
          const layout = [...inserts, ...Array.from({ length: after }, () => 0)];
          const { log, insertedAt, lastJobId, reads } = logOf(layout, 3);
          const through = 3 + layout.length - 1;
          for (let jobId = 1; jobId <= lastJobId; jobId += 1) {
            const before = reads();
            const start = await Effect.runPromise(historyStart(log, jobId, 3, through, 1));
            expect(start).toBe(insertedAt.get(jobId));
            expect(reads() - before).toBeLessThanOrEqual(
              Math.ceil(Math.log2(layout.length + 1)) + 1,
            );
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it("reads nothing when the range is already narrow enough", async () => {
    const { log, reads } = logOf([1, 1, 0, 1], 1);
    expect(await Effect.runPromise(historyStart(log, 3, 1, 4))).toBe(1);
    expect(reads()).toBe(0);
  });
});
