// `GET /v1/jobs/ID/history` reads only the records that mention the job (the file store's
// `readMentioning`, 2026-12-07): for every job of a store of many segments (inserts alone and in
// batches, claims, completions with results, cancels, retries, a schedule's deliveries, a
// compaction's base), it answers what core's `JobHistory` finds in the whole log (what `tay job`
// shows), in order, mutation members included, snapshot parts narrowed to the job; a job never
// inserted has none.
import { describe, expect, it } from "vitest";
import { JobHistory } from "@tay/core";
import { Effect } from "effect";
import { historyOf as historyRoute } from "../support/historyRoute.js";
import { servedForFile } from "../support/servedForFile.js";

// Segments of a few records: most are sealed, read whole on trust of their CRC.
const file = servedForFile("tay-history-", {}, { rotationTargetBytes: 1_024 });

const historyOf = (jobId: number) => historyRoute(file.served.socket, jobId);

/** Six rounds of inserts (alone and in a batch), claims, completions, failures and cancels. */
const work = async (engine: typeof file.opened) => {
  for (let round = 0; round < 6; round += 1) {
    await engine.insert({ queue: "q", worker: "W", args: "x".repeat(3_000) });
    await engine.insertMany(
      [1, 2, 3].map((n) => ({ queue: "q", worker: "W", args: { round, n } })),
    );
    const [first, second, third] = await engine.claim("q", 3);
    if (first !== undefined) await engine.complete(first.jobId, { done: round });
    if (second !== undefined) await engine.fail(second.jobId, "again");
    if (third !== undefined) await engine.cancel(third.jobId, "no");
  }
};

/** Waits until schedule `id` has delivered at least `count` jobs that are still active. */
const delivered = async (engine: typeof file.opened, id: string, count: number) => {
  for (;;) {
    const schedule = await engine.schedule(id);
    if ((schedule?.activeJobIds.length ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe("a job's history", () => {
  it("is what core's JobHistory finds in the whole log, for every job", async () => {
    const { opened } = file;
    const engine = opened;
    await work(engine);
    // A schedule's deliveries: (11,2) names the job as its active job, not as `job_id` alone.
    await engine.registerSchedule("every", {
      queue: "s",
      worker: "W",
      args: null,
      priority: 0,
      maxAttempts: 1,
      everyMs: 30,
      cron: null,
      overlap: "allow",
    });
    await delivered(engine, "every", 2);
    // The base: snapshot parts holding every job, checkpoints listing the schedule's members.
    await engine.compact(24 * 3_600_000);
    // A delivery after the base too: its (11,2) is in this generation (those before are not).
    const listed = (await engine.schedule("every"))?.activeJobIds.length ?? 0;
    await delivered(engine, "every", listed + 1);
    await engine.cancelSchedule("every");
    await work(engine);
    for (const job of await engine.claim("s", 100)) await engine.complete(job.jobId, null);
    const generation = await Effect.runPromise(opened.log.generation());
    const log = await Effect.runPromise(opened.log.readFrom(generation.firstSequence, 1_000_000));
    const stats = await Effect.runPromise(opened.log.stats());
    expect(log.at(-1)?.sequence).toBe(stats.lastSequence);
    expect(log[0]?.event._tag).toBe("SnapshotPart");
    expect((await Effect.runPromise(opened.log.segmentSizeStats())).count).toBeGreaterThan(10);
    const lastJobId = Math.max(...(await engine.inspectJobs()).map((job) => job.jobId));
    const seen = new Set<string>();
    for (let jobId = 1; jobId <= lastJobId + 1; jobId += 1) {
      const expected = log.flatMap(({ sequence, event }) =>
        JobHistory.entriesOf(sequence, event, jobId).map((entry): [number, number, string] => [
          sequence,
          entry.member ?? 0,
          entry.event._tag,
        ]),
      );
      // A failed job's retry may come due on the engine's timer after the log was read: what was
      // appended since is not in `expected` (seen once in CI's neighbourhood, 2026-12-07).
      const answered = (await historyOf(jobId)).filter(
        ([sequence]) => sequence <= stats.lastSequence,
      );
      expect(answered.map(([sequence, member, tag]) => [sequence, member, tag])).toEqual(expected);
      for (const [, , tag] of expected) seen.add(tag);
      if (jobId <= lastJobId) expect(expected.length).toBeGreaterThan(0);
      // A base's part is narrowed to the job.
      for (const [, , tag, fields] of answered) {
        if (tag === "SnapshotPart") {
          expect(fields).toMatchObject({ jobs: [{ jobId }] });
        }
      }
    }
    // Every kind of entry was there to be found.
    expect([...seen].sort()).toEqual(
      expect.arrayContaining([
        "JobCancelled",
        "JobFinished",
        "JobInserted",
        "JobRetried",
        "JobStarted",
        "OccurrenceAdvanced",
        "ResultRecorded",
        "ScheduleCheckpoint",
        "SnapshotPart",
      ]),
    );
  });
});
