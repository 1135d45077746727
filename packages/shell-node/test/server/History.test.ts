// `GET /v1/jobs/ID/history` reads only the records that mention the job (the file store's
// `readMentioning`, 2026-12-07): for every job of a store of many segments (inserts alone and in
// batches, claims, completions with results, cancels, retries), it answers what a filter over the
// whole log answers, in order, mutation members included; a job never inserted has none.
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { Effect } from "effect";
import { servedForFile } from "../support/servedForFile.js";

// Segments of a few records: most are sealed, read whole on trust of their CRC.
const file = servedForFile("tay-history-", {}, { rotationTargetBytes: 1_024 });

/** The history route's events for `jobId`: (sequence, member, event) of each. */
const historyOf = (jobId: number): Promise<Array<[number, number, string]>> =>
  new Promise((resolve, reject) => {
    const asked = request(
      { socketPath: file.served.socket, path: `/v1/jobs/${jobId}/history` },
      (answer) => {
        const chunks: Array<Buffer> = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as {
            events: Array<{ sequence: number; member: number; event: string }>;
          };
          resolve(body.events.map((e) => [e.sequence, e.member, e.event]));
        });
      },
    );
    asked.on("error", reject);
    asked.end();
  });

describe("a job's history", () => {
  it("is what a filter over the whole log finds, for every job", async () => {
    const { opened } = file;
    const engine = opened;
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
    const log = await Effect.runPromise(opened.log.readFrom(1, 1_000_000));
    const stats = await Effect.runPromise(opened.log.stats());
    expect(log).toHaveLength(stats.lastSequence);
    expect((await Effect.runPromise(opened.log.segmentSizeStats())).count).toBeGreaterThan(10);
    const lastJobId = 24;
    for (let jobId = 1; jobId <= lastJobId + 1; jobId += 1) {
      const expected: Array<[number, number, string]> = [];
      for (const { sequence, event } of log) {
        const members = event._tag === "Mutation" ? event.events : [event];
        members.forEach((member, index) => {
          if (member._tag !== "SnapshotPart" && "jobId" in member && member.jobId === jobId) {
            expected.push([sequence, index, member._tag]);
          }
        });
      }
      expect(await historyOf(jobId)).toEqual(expected);
      if (jobId <= lastJobId) expect(expected.length).toBeGreaterThan(0);
    }
  });
});
