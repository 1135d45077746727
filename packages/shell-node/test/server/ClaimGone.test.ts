// A claim whose caller left before its answer (against an in-process server on a store whose
// segment syncs the test holds: the claim is decided, its jobs' start waits on the disk, and the
// caller leaves meanwhile). The jobs it started are failed at once, since the answer naming them
// reaches no one; the session's attempts from earlier claims run on, and the session is still
// told their ends. Until 2026-12-06 the server dropped the whole session instead: every attempt
// it held failed while its handler ran on (and ran again beside it), and the session was no
// longer told anything.
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@tay/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Server from "../../src/server/Server.js";
import { openSession as openSessionOn } from "../support/sessionStream.js";
import { holdingSyncs } from "../support/heldSyncs.js";

let directory = "";
let opened: EnginePromises.OpenedEngine;
let served: Server.StartedServer;
const disk = holdingSyncs();

beforeAll(async () => {
  directory = join(mkdtempSync(join(tmpdir(), "tay-claim-gone-")), "data");
  opened = await EnginePromises.open(directory, { createIfMissing: true, disk: disk.layer });
  served = await Server.start(opened, { directory });
});

afterAll(async () => {
  disk.release();
  await served.close();
  await opened.close();
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const until = async (ready: () => boolean): Promise<void> => {
  while (!ready()) await pause(10);
};

const openSession = () => openSessionOn(served.socket);

/** `/v1/give-up` of `claim`, as curl would send it: its answer's body. */
const fetchGiveUp = (claim: string): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const sent = request(
      { socketPath: served.socket, method: "POST", path: "/v1/give-up" },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on("end", () => resolve(JSON.parse(text)));
      },
    );
    sent.on("error", reject);
    sent.end(JSON.stringify({ claim }));
  });

/** Sends a claim of one job of `queue` naming `session`; `leave` closes its connection. */
const claimOn = (queue: string, session: string) => {
  const body = JSON.stringify({ lanes: [{ queue, limit: 1 }] });
  let answered = "";
  const socket = connect(served.socket, () => {
    socket.write(
      `POST /v1/next-jobs HTTP/1.1\r\nhost: tay\r\nx-tay-session: ${session}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  socket.on("data", (chunk: Buffer) => {
    answered += chunk.toString();
  });
  socket.on("error", () => {});
  return { leave: () => socket.destroy(), answered: () => answered };
};

it("fails the jobs a claim started for a caller that left, and none of its session's others", async () => {
  const session = await openSession();
  const earlier = await opened.insert({ queue: "q", worker: "W", args: null });
  const first = claimOn("q", session.id);
  await until(() => opened.job(earlier.jobId)?.state === "executing");
  await until(() => first.answered().includes("200 OK"));
  const left = await opened.insert({ queue: "q", worker: "W", args: null });
  // The next claim is decided and its job's start written; its sync is held.
  disk.hold();
  const second = claimOn("q", session.id);
  await until(() => disk.state.waiting > 0);
  second.leave();
  await pause(50);
  disk.release();
  await until(() => (opened.job(left.jobId)?.errors.length ?? 0) > 0);
  expect(second.answered()).toBe("");
  expect(opened.job(left.jobId)?.errors.map((error) => error.error)).toEqual([
    "lease expired: the claim's connection closed before its answer",
  ]);
  // The earlier claim's attempt runs on, and its session is told when it ends.
  await pause(100);
  expect(opened.job(earlier.jobId)?.state).toBe("executing");
  expect(opened.job(earlier.jobId)?.errors).toEqual([]);
  await opened.cancel(earlier.jobId);
  await until(() => session.ended.length > 0);
  expect(session.ended).toEqual([earlier.jobId]);
  session.close();
});

// The client gives a claim up by its id (`/v1/give-up`) instead of closing its connection: a
// claim the engine decided just before is answered with its job, which the caller then runs.
// Closing the connection (all a client could do before 2026-12-06) failed that job unrun.
it("answers a claim given up by its id with the job already started for it", async () => {
  const client = new Client.Client({ socket: served.socket });
  const giving = new AbortController();
  const claiming = client.nextJobs([{ queue: "given", limit: 1 }], { signal: giving.signal });
  await until(() => served.claimsWaiting() === 1);
  // The job arrives and the parked claim starts it; the start's sync is held.
  disk.hold();
  const inserting = opened.insert({ queue: "given", worker: "W", args: null });
  await until(() => disk.state.waiting > 0);
  await pause(20);
  giving.abort();
  await pause(50);
  disk.release();
  const job = await inserting;
  const jobs = await claiming;
  expect(jobs.map((claimed) => [claimed.jobId, claimed.attempt])).toEqual([[job.jobId, 1]]);
  expect(opened.job(job.jobId)?.state).toBe("executing");
  expect(opened.job(job.jobId)?.errors).toEqual([]);
  await client.complete(job.jobId, null, { attempt: 1 });
  await client.close();
});

it("answers a claim at once with nothing when its give-up came first", async () => {
  const client = new Client.Client({ socket: served.socket });
  const early = await fetchGiveUp("early-claim");
  expect(early).toEqual({ given: false });
  const started = Date.now();
  const body = JSON.stringify({ lanes: [{ queue: "early", limit: 1 }], claim: "early-claim" });
  const answer = await new Promise<string>((resolve, reject) => {
    const sent = request(
      { socketPath: served.socket, method: "POST", path: "/v1/next-jobs" },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on("end", () => resolve(text));
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
  expect(JSON.parse(answer).jobs).toEqual([]);
  expect(Date.now() - started).toBeLessThan(5_000);
  await client.close();
});
