// Ending remotely claimed attempts in batches (`/v1/end-batch`), against an in-process server on a
// real store: each end of a batch is answered on its own (a stale attempt refuses only itself) and
// the accepted ones commit in one batch; fencing still refuses an old holder; bad input refuses the
// whole request naming the field and appends nothing; a session is not told the ends it asked for;
// a heartbeat extends the lease of the attempt it names only; a dropped session fails its own only.
import { mkdtempSync, rmSync } from "node:fs";
import { type IncomingMessage, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Server from "../../src/server/Server.js";
import { openSession as openSessionOn } from "../support/sessionStream.js";

let directory = "";
let opened: EnginePromises.OpenedEngine;
let served: Server.StartedServer;

beforeAll(async () => {
  directory = join(mkdtempSync(join(tmpdir(), "tay-endings-")), "data");
  opened = await EnginePromises.open(directory, { createIfMissing: true });
  served = await Server.start(opened, { directory });
});

afterAll(async () => {
  await served.close();
  await opened.close();
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

interface Refusal {
  readonly _tag: string;
  readonly status?: number;
  readonly field?: string;
  readonly rejection?: { readonly _tag: string };
}

interface JobJson {
  readonly jobId: number;
  readonly state: string;
  readonly attempt: number;
  readonly result: { readonly value: unknown } | null;
}

interface Result {
  readonly job?: JobJson;
  readonly error?: Refusal;
}

/** The fields of the answers these tests read. */
interface Body {
  readonly jobs?: ReadonlyArray<JobJson>;
  readonly results?: ReadonlyArray<Result>;
  readonly error?: Refusal;
  readonly held?: boolean;
  readonly expiresAt?: number | null;
}

interface Reply {
  readonly status: number;
  readonly body: Body;
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    const sent = request(
      { socketPath: served.socket, method: "POST", path, headers },
      (response: IncomingMessage) => {
        const chunks: Array<Buffer> = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString()),
          }),
        );
      },
    );
    sent.on("error", reject);
    sent.end(text);
  });

const lastSequence = () =>
  Effect.runSync(Effect.map(opened.log.stats(), (stats) => stats.lastSequence));

/** Inserts `count` jobs on `queue` and claims them through the server (leased). */
const claimed = async (queue: string, count: number, headers: Record<string, string> = {}) => {
  for (let n = 0; n < count; n += 1) await opened.insert({ queue, worker: "W", args: n });
  const reply = await post("/v1/claim", { queue, limit: count }, headers);
  expect(reply.status).toBe(200);
  return (reply.body.jobs ?? []).map((job) => job.jobId);
};

describe("/v1/end-batch", () => {
  it("answers each end on its own, a stale one refused alone, the rest in one commit", async () => {
    const [first, moved, failed, last] = await claimed("mixed", 4);
    // `moved`'s attempt 1 is failed (its lease lapsed, say) and claimed again: attempt 2.
    await opened.fail(moved ?? 0, "lease expired", {
      attempt: 1,
      backoff: { baseMs: 0, factor: 1, capMs: 0 },
    });
    await opened.tick();
    expect((await post("/v1/claim", { queue: "mixed" })).body.jobs?.[0]?.attempt).toBe(2);
    const leasesBefore = served.leases();
    const commits: Array<ReadonlyArray<string>> = [];
    const unwatch = opened.engine.watch((records) =>
      commits.push(records.map((record) => record.event._tag)),
    );
    const reply = await post("/v1/end-batch", {
      ends: [
        { complete: { jobId: first, attempt: 1, result: { ok: true } } },
        { complete: { jobId: moved, attempt: 1 } },
        { fail: { jobId: failed, attempt: 1, error: "bad", discard: true } },
        { complete: { jobId: 9_999, attempt: 1 } },
        { complete: { jobId: last } },
      ],
    });
    unwatch();
    expect(reply.status).toBe(200);
    const [done, stale, discarded, missing, unfenced] = reply.body.results ?? [];
    expect(done?.job?.state).toBe("completed");
    expect(done?.job?.result?.value).toEqual({ ok: true });
    expect(stale?.error?._tag).toBe("Rejected");
    expect(stale?.error?.status).toBe(409);
    expect(stale?.error?.rejection?._tag).toBe("StaleAttempt");
    expect(discarded?.job?.state).toBe("discarded");
    expect(missing?.error?._tag).toBe("Rejected");
    expect(unfenced?.job?.state).toBe("completed");
    // One durable write for the three accepted ends.
    expect(commits).toHaveLength(1);
    expect(commits[0]).toHaveLength(3);
    // The stale end took nothing from the new holder: its job runs, its lease is held.
    expect(opened.job(moved ?? 0)?.state).toBe("executing");
    expect(opened.job(moved ?? 0)?.attempt).toBe(2);
    expect(served.leases()).toBe(leasesBefore - 3);
  });

  it("refuses an old holder's end by the attempt, appending nothing", async () => {
    const [jobId] = await claimed("fenced", 1);
    await opened.fail(jobId ?? 0, "lease expired", {
      attempt: 1,
      backoff: { baseMs: 0, factor: 1, capMs: 0 },
    });
    await opened.tick();
    await post("/v1/claim", { queue: "fenced" });
    const before = lastSequence();
    const reply = await post("/v1/end-batch", {
      ends: [{ complete: { jobId, attempt: 1 } }, { fail: { jobId, attempt: 1, error: "late" } }],
    });
    expect(reply.body.results?.map((result) => result.error?.rejection?._tag)).toEqual([
      "StaleAttempt",
      "StaleAttempt",
    ]);
    expect(lastSequence()).toBe(before);
    expect(opened.job(jobId ?? 0)?.state).toBe("executing");
  });

  it("refuses bad input as a whole, naming the field, and appends nothing", async () => {
    const [held] = await claimed("bad", 1);
    const before = lastSequence();
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ ends: "all" }, "body.ends"],
      [{}, "body.ends"],
      [{ ends: [{}] }, "body.ends[0]"],
      [{ ends: [{ complete: { jobId: 1 }, fail: { jobId: 1, error: "e" } }] }, "body.ends[0]"],
      [{ ends: [{ complete: { jobId: "1" } }] }, "body.ends[0].complete.jobId"],
      [{ ends: [{ complete: { jobId: 1, attempt: 0 } }] }, "body.ends[0].complete.attempt"],
      [{ ends: [{ fail: { jobId: 1 } }] }, "body.ends[0].fail.error"],
      [
        { ends: [{ fail: { jobId: 1, error: "e", backoff: { baseMs: 1 } } }] },
        "body.ends[0].fail.backoff.factor",
      ],
      // A good end beside a bad one is not decided either: the request is refused whole.
      [
        { ends: [{ complete: { jobId: held, attempt: 1 } }, { complete: { jobId: -1 } }] },
        "body.ends[1].complete.jobId",
      ],
      [{ ends: Array.from({ length: 10_001 }, () => ({ complete: { jobId: 1 } })) }, "body.ends"],
    ];
    for (const [body, field] of cases) {
      const reply = await post("/v1/end-batch", body);
      expect(reply.status).toBe(400);
      expect(reply.body.error?._tag).toBe("InvalidRequest");
      expect(reply.body.error?.field).toBe(field);
    }
    expect((await post("/v1/end-batch", "{")).body.error?._tag).toBe("MalformedJson");
    expect(lastSequence()).toBe(before);
    expect(opened.job(held ?? 0)?.state).toBe("executing");
  });

  it("takes a batch of exactly 10,000 ends, each answered alone", async () => {
    const before = lastSequence();
    const reply = await post("/v1/end-batch", {
      ends: Array.from({ length: 10_000 }, () => ({ complete: { jobId: 999_999 } })),
    });
    expect(reply.status).toBe(200);
    const tags = new Set(reply.body.results?.map((result) => result.error?.rejection?._tag));
    expect([reply.body.results?.length, [...tags]]).toEqual([10_000, ["JobNotFound"]]);
    expect(lastSequence()).toBe(before);
  });
});

const openSession = () => openSessionOn(served.socket);

describe("sessions and ends", () => {
  it("tells a session the ends others made, not the ends it asked for itself", async () => {
    const session = await openSession();
    const headers = { "x-tay-session": session.id };
    const [own, ownFailed, cancelled] = await claimed("session", 3, headers);
    const reply = await post(
      "/v1/end-batch",
      {
        ends: [
          { complete: { jobId: own, attempt: 1 } },
          { fail: { jobId: ownFailed, attempt: 1, error: "e", discard: true } },
        ],
      },
      headers,
    );
    expect(reply.body.results?.map((result) => result.job?.state)).toEqual([
      "completed",
      "discarded",
    ]);
    await opened.cancel(cancelled ?? 0);
    // Events arrive in log order: once the cancel's is here, the ends before it would have been too.
    while (session.ended.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(session.ended).toEqual([cancelled]);
    session.close();
  });

  it("tells a session an end another caller made of an attempt it holds", async () => {
    const session = await openSession();
    const [held] = await claimed("others", 1, { "x-tay-session": session.id });
    // Completed by a caller that does not name the session: the holder must hear of it.
    await post("/v1/end-batch", { ends: [{ complete: { jobId: held, attempt: 1 } }] });
    while (session.ended.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(session.ended).toEqual([held]);
    session.close();
  });
});

describe("sessions and their leases", () => {
  it("fails the attempts of a session whose connection drops, and no one else's", async () => {
    const dropped = await openSession();
    const kept = await openSession();
    const [lost] = await claimed("drop", 1, { "x-tay-session": dropped.id });
    const [held] = await claimed("drop", 1, { "x-tay-session": kept.id });
    const [plain] = await claimed("drop", 1);
    dropped.close();
    while (opened.job(lost ?? 0)?.state === "executing") {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(opened.job(lost ?? 0)?.errors.map((error) => error.error)).toEqual([
      "lease expired: the client's connection dropped",
    ]);
    expect([opened.job(held ?? 0)?.state, opened.job(plain ?? 0)?.state]).toEqual([
      "executing",
      "executing",
    ]);
    kept.close();
  });
});

describe("/v1/heartbeat", () => {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("keeps a lease it extends past its first expiry, and the attempt fails once it lapses", async () => {
    await opened.insert({ queue: "lapse", worker: "W", args: null });
    const started = Date.now();
    const claim = await post("/v1/claim", { queue: "lapse", leaseMs: 1_000 });
    const jobId = claim.body.jobs?.[0]?.jobId ?? 0;
    await pause(300);
    const beat = await post("/v1/heartbeat", { jobId, attempt: 1, leaseMs: 3_000 });
    expect(beat.body.held).toBe(true);
    // Past the claim's 1 s, well within the heartbeat's 3 s.
    await pause(1_500 - (Date.now() - started));
    expect(opened.job(jobId)?.state).toBe("executing");
    while (opened.job(jobId)?.state === "executing" && Date.now() - started < 10_000)
      await pause(20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(opened.job(jobId)?.errors.map((error) => error.error)).toEqual(["lease expired"]);
  }, 15_000);

  it("extends a lease by heartbeat only for the attempt that holds it", async () => {
    const [jobId] = await claimed("beat", 1);
    await opened.fail(jobId ?? 0, "lease expired", {
      attempt: 1,
      backoff: { baseMs: 0, factor: 1, capMs: 0 },
    });
    await opened.tick();
    expect((await post("/v1/claim", { queue: "beat" })).body.jobs?.[0]?.attempt).toBe(2);
    const old = await post("/v1/heartbeat", { jobId, attempt: 1, leaseMs: 60_000 });
    expect([old.status, old.body.held, old.body.expiresAt]).toEqual([200, false, null]);
    const current = await post("/v1/heartbeat", { jobId, attempt: 2, leaseMs: 60_000 });
    expect([current.status, current.body.held]).toEqual([200, true]);
    expect(current.body.expiresAt).toBeGreaterThan(Date.now() + 50_000);
  });
});
