// `GET /v1/jobs/ID/history` on a generation longer than `historyStart`'s search stops at: the
// read starts at the record that inserted the job (past the base), and answers what core's
// `JobHistory` finds in the whole log, for jobs of the base, early and late jobs after it, jobs
// inserted in batches, and a job never inserted.
import { JobHistory } from "@tay/core";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { historyStart, narrowEnoughRecords } from "../../src/server/internal/historyStart.js";
import { historyOf as historyRoute } from "../support/historyRoute.js";
import { servedForFile } from "../support/servedForFile.js";

const file = servedForFile("tay-history-long-");

/** The history route's (sequence, member, event) for `jobId`. */
const historyOf = async (jobId: number) =>
  (await historyRoute(file.served.socket, jobId)).map(([sequence, member, tag]) => [
    sequence,
    member,
    tag,
  ]);

describe("a job's history on a long generation", () => {
  it("starts at the job's insert past the base, and is what JobHistory finds in the whole log", async () => {
    const engine = file.opened;
    await engine.insertMany([1, 2, 3].map((n) => ({ queue: "q", worker: "W", args: n })));
    await engine.compact(24 * 3_600_000);
    // More records past the base than the search reads through at once.
    const records = narrowEnoughRecords * 2 + 100;
    for (let n = 0; n < records; n += 1) {
      if (n % 500 === 7) {
        await engine.insertMany([1, 2, 3].map((m) => ({ queue: "q", worker: "W", args: m })));
      } else {
        await engine.insert({ queue: "q", worker: "W", args: n });
      }
      if (n % 100 === 50) {
        for (const job of await engine.claim("q", 3)) await engine.complete(job.jobId, n);
      }
    }
    const generation = await Effect.runPromise(engine.log.generation());
    expect(generation.baseRecordCount).toBeGreaterThan(0);
    const log = await Effect.runPromise(engine.log.readFrom(generation.firstSequence, 1_000_000));
    const lastJobId = engine.state().lastJobId;
    // A late job's read starts past the base, at or before its insert.
    const afterBase = generation.firstSequence + (generation.baseRecordCount ?? 0);
    const insertOf = (jobId: number) =>
      log.find(({ event }) => {
        const ids = JobHistory.insertedIds(event);
        return ids !== undefined && ids.first <= jobId && jobId <= ids.last;
      })?.sequence;
    const start = await Effect.runPromise(
      historyStart(engine.log, 6_000, afterBase, log.at(-1)?.sequence ?? 0),
    );
    expect(start).toBeGreaterThan(afterBase + narrowEnoughRecords / 2);
    expect(start).toBeLessThanOrEqual(insertOf(6_000) ?? 0);
    const asked = [1, 2, 3, 4, 5, 100, 2_000, 3_001, 4_500, 6_000, lastJobId - 1, lastJobId];
    for (const jobId of [...asked, lastJobId + 1]) {
      const expected = log.flatMap(({ sequence, event }) =>
        JobHistory.entriesOf(sequence, event, jobId).map((entry): [number, number, string] => [
          sequence,
          entry.member ?? 0,
          entry.event._tag,
        ]),
      );
      if (jobId <= lastJobId) expect(expected.length).toBeGreaterThan(0);
      expect(await historyOf(jobId), `job ${jobId}`).toEqual(expected);
    }
  }, 120_000);
});
