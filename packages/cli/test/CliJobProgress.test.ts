// `tay job DIR ID` on a served store shows the progress the running attempt reported: it lives
// in the memory of the engine that holds the store, so the read at rest asks the store's server
// (only for an executing job). A held report shows with its time, none as "-", a server that does
// not answer as "unknown" with its line; a job not executing, or a store no server holds, shows no
// progress field at all. The holder is this test process; the command runs in process.
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { EnginePromises, Server } from "@tay/shell-node";
import { existsSync } from "node:fs";
import { Client, Locate } from "@tay/client";
import { runRecorded, spawnTay, temporaryRoot } from "./support/cli.js";

const until = async (ready: () => boolean): Promise<void> => {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 50));
};

const rootOf = temporaryRoot({ built: true });

const progressLine = (stdout: string): string | undefined =>
  stdout.split("\n").find((line) => line.startsWith("progress "));

describe("tay job on a served store", () => {
  it("shows the running attempt's progress, asked of the server that holds the store", async () => {
    const directory = path.join(rootOf(), "served");
    const opened = await EnginePromises.open(directory, { createIfMissing: true });
    const served = await Server.start(opened, { directory });
    try {
      const job = await opened.insert({ queue: "q", worker: "W", args: 1 });
      const waiting = await runRecorded(["job", directory, `${job.jobId}`]);
      expect(progressLine(waiting.stdout)).toBeUndefined();
      await opened.claim("q");
      const none = await runRecorded(["job", directory, `${job.jobId}`]);
      expect(progressLine(none.stdout)).toMatch(/^progress +- \(none reported by this attempt\)$/);
      await opened.reportProgress(job.jobId, 1, new Map([["step", 3]]));
      const held = await runRecorded(["job", directory, `${job.jobId}`]);
      expect(held.status).toBe(0);
      expect(progressLine(held.stdout)).toMatch(/^progress +\{"step":3\} at \d{4}-\d\d-\d\dT/);
      const asJson = JSON.parse(
        (await runRecorded(["job", directory, `${job.jobId}`, "--json"])).stdout,
      );
      expect(asJson.progress).toEqual({ attempt: 1, value: { step: 3 }, at: expect.any(Number) });
      // Completed: nothing to ask.
      await opened.complete(job.jobId);
      const done = await runRecorded(["job", directory, `${job.jobId}`, "--json"]);
      expect(JSON.parse(done.stdout)).not.toHaveProperty("progress");
    } finally {
      await served.close();
      await opened.close();
    }
  }, 60_000);

  it("says the progress is unknown when the server LOCK names does not answer", async () => {
    const directory = path.join(rootOf(), "killed");
    const server = spawnTay(["serve", directory, "--create"]);
    try {
      await until(
        () => Locate.servedAt(directory) !== null && existsSync(Locate.socketOf(directory)),
      );
      const client = await Client.connect(directory);
      const job = await client.insert({ queue: "q", worker: "W", args: 1 });
      await client.claim("q");
      await client.reportProgress(job.jobId, 1, 7);
      await client.close();
      // Killed: LOCK still names its socket, where nothing answers now.
      server.kill("SIGKILL");
      await new Promise((resolve) => server.once("exit", resolve));
      const unknown = await runRecorded(["job", directory, `${job.jobId}`]);
      expect(unknown.status).toBe(0);
      expect(progressLine(unknown.stdout)).toMatch(/^progress +unknown: ConnectionFailed /);
      const asJson = JSON.parse(
        (await runRecorded(["job", directory, `${job.jobId}`, "--json"])).stdout,
      );
      expect(asJson.progress).toBeNull();
      expect(asJson.progress_unknown).toMatch(/^ConnectionFailed /);
    } finally {
      server.kill("SIGKILL");
    }
  }, 60_000);
});
