// Progress over the protocol: `tay serve` in a child process holds what clients report for the
// attempts they were leased (`POST /v1/progress`), answers it per job and for all, refuses a
// report of an attempt that ended (`StaleAttempt`) or too large a value, and lets it go when the
// attempt ends; a remote worker's handler that reports in a tight loop sends one request per
// round trip (the latest waiting), and the metrics show what is held.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Locate, Transport } from "@tay/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rejected } from "../../src/engine/internal/engineRequest.js";
import { progressReports } from "../../src/server/internal/progressReports.js";
import * as RemoteWorker from "../../src/server/RemoteWorker.js";

const tay = new URL("../../../cli/bin/tay.mjs", import.meta.url).pathname;
let directory = "";
let server: ChildProcess | undefined;

const until = async (ready: () => boolean | Promise<boolean>): Promise<void> => {
  for (let tries = 0; tries < 500 && !(await ready()); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (!(await ready())) throw new Error("the condition never held");
};

const metrics = (): Promise<string> =>
  new Promise((resolve, reject) => {
    const request = get(
      { socketPath: Locate.socketOf(directory), path: "/metrics" },
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

beforeAll(async () => {
  directory = join(mkdtempSync(join(tmpdir(), "tay-remote-progress-")), "data");
  server = spawn(process.execPath, [tay, "serve", directory, "--create"], { stdio: "ignore" });
  await until(() => Locate.servedAt(directory) !== null && existsSync(Locate.socketOf(directory)));
}, 60_000);

afterAll(async () => {
  server?.kill("SIGTERM");
  await new Promise((resolve) => server?.once("exit", resolve));
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

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
    const client = await Client.connect(directory);
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
    const client = await Client.connect(directory);
    const producer = await Client.connect(directory);
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

  it("resolves a report the server could not be asked (it is no reason to fail an attempt)", async () => {
    const client = await Client.connect(directory);
    await client.close();
    const report = progressReports(client);
    await expect(report(1, 1, "lost")).resolves.toBeUndefined();
    // A value no attempt could hold is refused before anything is sent.
    await expect(report(1, 1, { at: new Date(0) })).rejects.toBeInstanceOf(Rejected);
  });
});
