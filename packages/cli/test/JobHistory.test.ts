// `tay job`'s history at rest decodes only the records that mention the job (`historyAtRest`,
// 2026-12-07): on any legal history (the testkit's: canonical bases, mutations, schedules whose
// occurrences and checkpoints name jobs, legacy events), written in segments of any size, the
// entries it finds for every job id (one past the last too) are those of a fold that decodes
// every record, and `tay job`'s two reads (the job, then its history) answer what one fold
// with a tap answers. When the history's read finds another generation than the job's (a
// compaction in between) or a shorter log, the two reads are not used (the command folds once);
// records appended after the job's read are left out of its history.
import * as path from "node:path";
import { Event } from "@tay/core";
import { NodeDisk, type Projection, Recovery } from "@tay/shell-node";
import { Effect, Either } from "effect";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as Histories from "../../testkit/src/Histories.js";
import * as Stores from "../../testkit/src/Stores.js";
import {
  type HistoryRead,
  historyAtRest,
  historyEntries,
  jobAtRest,
  jobFolded,
} from "../src/jobHistory.js";
import { removeTemporary, temporaryDirectory } from "./support/cli.js";

/** Every record of the store in `directory`, decoded: the reference. */
const everyRecord = (directory: string) => {
  const entries: Array<Projection.Entry> = [];
  const projection: Projection.Projection<null, never> = {
    start: () => {
      entries.length = 0;
      return null;
    },
    apply: (state, sequence, event) => {
      entries.push({ sequence, event });
      return Either.right(state);
    },
  };
  return Effect.as(Recovery.inspect(directory, {}, projection, undefined, "onTrust"), entries);
};

/** The job ids a history names (one past the highest too). */
const jobIdsOf = (records: ReadonlyArray<Event.Event>): Array<number> => {
  let highest = 0;
  const note = (event: Event.Event): void => {
    if (event._tag === "Mutation") event.events.forEach(note);
    else if ("jobId" in event) highest = Math.max(highest, event.jobId);
    else if ("lastJobId" in event) highest = Math.max(highest, event.lastJobId);
  };
  records.forEach(note);
  return Array.from({ length: highest + 1 }, (_, index) => index + 1);
};

describe("a job's history at rest", () => {
  it("is what a fold decoding every record finds, for every job of any history", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .tuple(fc.boolean(), fc.boolean())
          .chain(([canonicalBase, legacy]) =>
            Histories.history({ canonicalBase, legacy, schedules: 2, size: 40 }),
          ),
        fc.integer({ min: 150, max: 2_000 }),
        async (history, bytesPerSegment) => {
          const root = await temporaryDirectory();
          const directory = path.join(root, "data");
          try {
            const records = Histories.records(history);
            await Effect.runPromise(
              Stores.writeStore(directory, {
                base: history.base,
                events: history.tail,
                bytesPerSegment,
                sealBase: history.base.length > 0 && history.tail.length > 0,
              }).pipe(Effect.provide(NodeDisk.layer)),
            );
            const all = await Effect.runPromise(
              everyRecord(directory).pipe(Effect.provide(NodeDisk.layer)),
            );
            const ids = jobIdsOf(records);
            for (const jobId of ids) {
              const expected = all.flatMap((entry) => historyEntries(entry, jobId));
              const read = await Effect.runPromise(
                historyAtRest(directory, jobId).pipe(Effect.provide(NodeDisk.layer)),
              );
              expect(read.entries).toEqual(expected);
              // The command's two reads answer what one fold with a tap answers (a few jobs a
              // history: each is two inspections and a fold).
              if (jobId % 7 !== 1 && jobId !== ids.length) continue;
              const quick = await Effect.runPromise(
                jobAtRest(directory, jobId).pipe(Effect.provide(NodeDisk.layer)),
              );
              const folded = await Effect.runPromise(
                jobFolded(directory, jobId).pipe(Effect.provide(NodeDisk.layer)),
              );
              expect(quick).toEqual(folded);
            }
          } finally {
            await removeTemporary(root);
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it("is not taken from two reads of different generations, and stops at the job's read", async () => {
    const root = await temporaryDirectory();
    const directory = path.join(root, "data");
    try {
      const inserted = Event.jobInserted({
        jobId: 1,
        queue: "q",
        worker: "W",
        args: null,
        priority: 0,
        maxAttempts: 1,
        scheduledAt: 0,
        insertedAt: 0,
      });
      const started = Event.jobStarted({ jobId: 1, at: 1, attempt: 1 });
      await Effect.runPromise(
        Stores.writeStore(directory, { events: [inserted, started] }).pipe(
          Effect.provide(NodeDisk.layer),
        ),
      );
      const withRead = (read: HistoryRead) =>
        Effect.runPromise(
          jobAtRest(directory, 1, () => Effect.succeed(read)).pipe(Effect.provide(NodeDisk.layer)),
        );
      const entries = [
        { sequence: 1, member: null, event: inserted },
        { sequence: 2, member: null, event: started },
        // Appended after the job was read: left out.
        { sequence: 3, member: null, event: Event.jobAvailable({ jobId: 1, at: 2 }) },
      ];
      expect(await withRead({ entries, epoch: 2, lastSequence: 3 })).toBeUndefined();
      expect(await withRead({ entries, epoch: 1, lastSequence: 1 })).toBeUndefined();
      const taken = await withRead({ entries, epoch: 1, lastSequence: 3 });
      expect(taken?.found?.state).toBe("executing");
      expect(taken?.history.map((entry) => entry.sequence)).toEqual([1, 2]);
    } finally {
      await removeTemporary(root);
    }
  });
});
