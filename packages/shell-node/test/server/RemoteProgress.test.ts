// Progress over the protocol: `tay serve` in a child process holds what clients report for the
// attempts they were leased (`POST /v1/progress`), answers it per job and for all, refuses a
// report of an attempt that ended (`StaleAttempt`) or too large a value, and lets it go when the
// attempt ends; a remote worker's handler that reports in a tight loop sends one request per
// round trip (the latest waiting), and the metrics show what is held.
import { get, type IncomingMessage } from "node:http";
import { Client, Locate, Transport } from "@tay/client";
import { describe, expect, it } from "vitest";
import { Rejected } from "../../src/engine/internal/engineRequest.js";
import { progressReports } from "../../src/server/internal/progressReports.js";
import * as RemoteWorker from "../../src/server/RemoteWorker.js";
import { servedChildForFile, untilReady } from "../support/servedChild.js";

const served = servedChildForFile("remote-progress");

const until = untilReady;

const metrics = (): Promise<string> =>
  new Promise((resolve, reject) => {
    const request = get(
      { socketPath: Locate.socketOf(served.directory), path: "/metrics" },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () => resolve(text));
      },
    );
    request.on("error", reject);
  });

/** The value of a metric's series whose line starts with `prefix`, or 0 when it has none. */
const metric = (text: string, prefix: string): number => {
  const line = text.split("\n").find((candidate) => candidate.startsWith(prefix));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
};

const progressRequests = async (): Promise<number> =>
  metric(await metrics(), 'tay_request_seconds_count{route="/v1/progress",status="200"}');

const refusal = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
    return "held";
  } catch (error) {
    if (error instanceof Transport.ServerError)
      return `${error.status} ${error._tag} ${error.rejection?._tag}`;
    return error instanceof Error ? error.name : String(error);
  }
};

describe("progress over the protocol", () => {
  it("holds a leased attempt's report, answers it, refuses a stale one, lets it go at the end", async () => {
    const client = await Client.connect(served.directory);
    try {
      const { jobId } = await client.insert({ queue: "reports", worker: "W", args: null });
      expect(await refusal(client.reportProgress(jobId, 1, 1))).toBe("409 Rejected StaleAttempt");
      const [job] = await client.claim("reports", 1);
      expect(job?.jobId).toBe(jobId);
      const held = await client.reportProgress(jobId, 1, { rows: 3n ** 39n, note: "a" });
      expect(held).toMatchObject({
        jobId,
        attempt: 1,
        value: new Map<string, unknown>([
          ["note", "a"],
          ["rows", 3n ** 39n],
        ]),
      });
      expect((await client.progress(jobId))?.value).toEqual(
        new Map<string, unknown>([
          ["note", "a"],
          ["rows", 3n ** 39n],
        ]),
      );
      expect((await client.progresses()).map((progress) => progress.jobId)).toEqual([jobId]);
      expect(metric(await metrics(), "tay_progress_held ")).toBe(1);
      expect(await refusal(client.reportProgress(jobId, 1, { at: new Date(0) } as never))).toBe(
        "InvalidValue",
      );
      expect(await refusal(client.reportProgress(jobId, 1, "x".repeat(70_000)))).toBe(
        "409 Rejected TooLarge",
      );
      await client.complete(jobId, undefined, { attempt: 1 });
      expect(await client.progress(jobId)).toBeUndefined();
      expect(await client.progresses()).toEqual([]);
      expect(metric(await metrics(), "tay_progress_held ")).toBe(0);
    } finally {
      await client.close();
    }
  });

  it("sends a remote handler's reports one request at a time, the latest winning", async () => {
    const client = await Client.connect(served.directory);
    const producer = await Client.connect(served.directory);
    const release = { open: () => {} };
    const released = new Promise<void>((resolve) => {
      release.open = resolve;
    });
    const outcomes: Array<string> = [];
    const worker = await RemoteWorker.start(client, {
      queues: { loop: 1 },
      handlers: {
        Loop: async (_job, context) => {
          const reports: Array<Promise<void>> = [];
          for (let row = 1; row <= 1_000; row++) reports.push(context.progress({ row }));
          await Promise.all(reports);
          try {
            await context.progress({ at: new Date(0) });
          } catch (error) {
            outcomes.push(error instanceof Rejected ? error.rejection._tag : String(error));
          }
          await released;
          return "looped";
        },
      },
    });
    try {
      const before = await progressRequests();
      const { jobId } = await producer.insert({ queue: "loop", worker: "Loop", args: null });
      await until(() => outcomes.length > 0);
      expect(outcomes).toEqual(["InvalidField"]);
      expect((await producer.progress(jobId))?.value).toEqual(new Map([["row", 1_000]]));
      // The first report went alone; the 999 made while it was on its way went as one.
      expect((await progressRequests()) - before).toBe(2);
      release.open();
      await until(async () => (await producer.job(jobId))?.state === "completed");
      expect(await producer.progress(jobId)).toBeUndefined();
    } finally {
      await worker.close();
      await producer.close();
      await client.close();
    }
  });

  it("streams reports as they are held, of the jobs asked for, those held now first", async () => {
    const client = await Client.connect(served.directory);
    try {
      const jobs = await client.insertMany(
        [1, 2].map(() => ({ queue: "streamed", worker: "W", args: null })),
      );
      await client.claim("streamed", 2);
      const [first, second] = jobs.map((job) => job.jobId);
      if (first === undefined || second === undefined) throw new Error("two jobs");
      await client.reportProgress(first, 1, "held before");
      const all = client.progressStream();
      const one = client.progressStream({ jobs: [second] });
      expect((await all.next()).value).toMatchObject({ jobId: first, value: "held before" });
      await client.reportProgress(second, 1, "second");
      await client.reportProgress(first, 1, "first");
      expect((await all.next()).value).toMatchObject({ jobId: second, value: "second" });
      expect((await all.next()).value).toMatchObject({ jobId: first, value: "first" });
      expect((await one.next()).value).toMatchObject({ jobId: second, value: "second" });
      all.close();
      one.close();
      expect(await refusal(client.progressStream({ jobs: [Number.NaN] }).next())).toBe(
        "400 InvalidRequest undefined",
      );
    } finally {
      await client.close();
    }
  });

  it("sends a reader that fell behind the latest report of each job, not every one", async () => {
    const client = await Client.connect(served.directory);
    try {
      const jobs = await client.insertMany(
        [1, 2].map(() => ({ queue: "stalled", worker: "W", args: null })),
      );
      await client.claim("stalled", 2);
      // A reader that reads nothing until every report was made.
      const received: Array<{ jobId: number; value: string }> = [];
      let response: IncomingMessage | undefined;
      const ready = new Promise<void>((resolve, reject) => {
        const request = get(
          { socketPath: Locate.socketOf(served.directory), path: "/v1/progress/stream" },
          (answer) => {
            response = answer;
            answer.pause();
            resolve();
          },
        );
        request.on("error", reject);
      });
      await ready;
      const reports = 120;
      for (let index = 1; index <= reports; index++) {
        for (const { jobId } of jobs) {
          await client.reportProgress(jobId, 1, `${index} ${"x".repeat(60_000)}`);
        }
      }
      let text = "";
      response?.setEncoding("utf8");
      response?.on("data", (chunk: string) => {
        text += chunk;
        for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n")) {
          const data = /^data: (.*)$/m.exec(text.slice(0, end))?.[1];
          text = text.slice(end + 2);
          if (data === undefined) continue;
          const report = JSON.parse(data) as { jobId: number; value: string };
          received.push({ jobId: report.jobId, value: report.value.split(" ")[0] ?? "" });
        }
      });
      response?.resume();
      await until(() =>
        jobs.every(({ jobId }) =>
          received.some((report) => report.jobId === jobId && report.value === String(reports)),
        ),
      );
      response?.destroy();
      // Fewer than were made: the ones replaced while the reader was behind were never sent.
      expect(received.length).toBeLessThan(reports * jobs.length);
      for (const { jobId } of jobs) {
        const values = received
          .filter((report) => report.jobId === jobId)
          .map((r) => Number(r.value));
        expect(values).toEqual([...values].sort((left, right) => left - right));
      }
    } finally {
      await client.close();
    }
  });

  it("resolves a report the server could not be asked (it is no reason to fail an attempt)", async () => {
    const client = await Client.connect(served.directory);
    await client.close();
    const report = progressReports(client);
    await expect(report(1, 1, "lost")).resolves.toBeUndefined();
    // A value no attempt could hold is refused before anything is sent.
    await expect(report(1, 1, { at: new Date(0) })).rejects.toBeInstanceOf(Rejected);
  });
});
