// The client against a real server: `tay serve` (the built CLI) in a child process on a fresh
// store; every answer is checked as the embedded engine would give it, refusals by their tags.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { getEventListeners } from "node:events";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, Locate } from "../src/index.js";

const tay = new URL("../../cli/bin/tay.mjs", import.meta.url).pathname;
let directory = "";
let server: ChildProcess | undefined;

const until = async (ready: () => boolean | Promise<boolean>): Promise<void> => {
  while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 50));
};

beforeAll(async () => {
  directory = join(mkdtempSync(join(tmpdir(), "tay-client-")), "data");
  server = spawn(process.execPath, [tay, "serve", directory, "--create"], { stdio: "ignore" });
  await until(() => Locate.servedAt(directory) !== null && existsSync(Locate.socketOf(directory)));
}, 60_000);

afterAll(async () => {
  server?.kill("SIGTERM");
  await new Promise((resolve) => server?.once("exit", resolve));
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

type RouteCount = "single" | "batch" | "complete" | "fail" | "ends";

/** How many requests of each insert and end route the server has answered (its metrics). */
/** The server's metrics, as a scrape reads them. */
const metrics = (): Promise<string> =>
  new Promise<string>((resolve, reject) => {
    request({ socketPath: Locate.socketOf(directory), path: "/metrics" }, (response) => {
      const chunks: Array<Buffer> = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve(Buffer.concat(chunks).toString()));
    })
      .on("error", reject)
      .end();
  });

const requestCounts = async (): Promise<Readonly<Record<RouteCount, number>>> => {
  const text = await metrics();
  const count = (route: string) =>
    [
      ...text.matchAll(
        new RegExp(`^tay_request_seconds_count\\{route="${route}",[^}]*\\} (\\d+)$`, "gm"),
      ),
    ]
      .map((found) => Number(found[1]))
      .reduce((sum, value) => sum + value, 0);
  return {
    single: count("/v1/insert"),
    batch: count("/v1/insert-batch"),
    complete: count("/v1/complete"),
    fail: count("/v1/fail"),
    ends: count("/v1/end-batch"),
  };
};

/**
 * Waits until nothing the server holds can append on its own: no timed
 * transition of the engine (a retry or a schedule coming due: its timer
 * ticks) and no lease of a remote claim (its expiry fails the attempt).
 * The store is shared by the file's tests, and one that leaves a retry
 * due in a second (a lease that ran out, a dropped session) had its tick
 * land inside a later test's "appends nothing" window under load. Bounded:
 * a test that leaves a schedule or a lease behind fails here, by name.
 */
const quiet = async (client: Client.Client): Promise<void> => {
  const still = async () => {
    const leases = /^tay_leases (\d+)$/m.exec(await metrics())?.[1];
    const wake = await client.nextWakeAt();
    return leases !== "0" || wake !== null ? `leases ${leases}, next wake ${wake}` : undefined;
  };
  // Leases run 30 s by default; a retry's backoff 1 s. Two minutes is a bound, not a timing.
  for (let checks = 0; checks < 2400; checks += 1) {
    if ((await still()) === undefined) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the server never went quiet: ${await still()}`);
};

describe("Client over the socket", () => {
  it("inserts, claims and completes, with values as the engine gives them", async () => {
    const client = await Client.connect(directory);
    const args = { user_id: 42, big: 2n ** 60n, bytes: new Uint8Array([1, 2]), $map: "kept" };
    const inserted = await client.insert({ queue: "email", worker: "Send", args });
    expect(inserted.state).toBe("available");
    expect(inserted.args).toEqual(
      new Map<string, unknown>([
        ["$map", "kept"],
        ["big", 2n ** 60n],
        ["bytes", new Uint8Array([1, 2])],
        ["user_id", 42],
      ]),
    );
    const [claimed] = await client.claim("email");
    expect(claimed?.jobId).toBe(inserted.jobId);
    const done = await client.complete(inserted.jobId, { sent: true }, { attempt: 1 });
    expect(done.state).toBe("completed");
    expect((await client.job(inserted.jobId))?.result?.value).toEqual(new Map([["sent", true]]));
    await client.close();
  });

  it("lists a page of at most 1,000 jobs an answer, and asks for each page of a longer listing", async () => {
    const client = await Client.connect(directory);
    const queue = "paged";
    const inserted = [];
    for (let from = 0; from < 2_500; from += 500) {
      const batch = Array.from({ length: 500 }, (_, index) => ({
        queue,
        worker: "W",
        args: from + index,
      }));
      inserted.push(...(await client.insertMany(batch)).map((job) => job.jobId));
    }
    const routeCount = async () =>
      Number(
        /^tay_request_seconds_count\{route="\/v1\/jobs",[^}]*\} (\d+)$/m.exec(
          await metrics(),
        )?.[1] ?? 0,
      );
    // Counted before the raw request: its count is observed when its answer is done.
    const before = await routeCount();
    // One answer: the first 1,000, and where the next page starts.
    const first = await new Promise<{ jobs: Array<{ jobId: number }>; next: number | null }>(
      (resolve, reject) => {
        request(
          { socketPath: Locate.socketOf(directory), path: `/v1/jobs?queue=${queue}` },
          (response) => {
            const chunks: Array<Buffer> = [];
            response.on("data", (chunk: Buffer) => chunks.push(chunk));
            response.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
          },
        )
          .on("error", reject)
          .end();
      },
    );
    expect(first.jobs.map((job) => job.jobId)).toEqual(inserted.slice(0, 1_000));
    expect(first.next).toBe(inserted[999]);
    // The raw request, then the client's three pages in turn.
    const all = await client.jobs({ queue });
    expect(all.map((job) => job.jobId)).toEqual(inserted);
    expect((await routeCount()) - before).toBe(4);
    expect((await client.jobs({ queue, limit: 1_500 })).map((job) => job.jobId)).toEqual(
      inserted.slice(0, 1_500),
    );
    expect((await client.jobs({ queue, limit: 1_000 })).map((job) => job.jobId)).toEqual(
      inserted.slice(0, 1_000),
    );
    const after = inserted[1_200] ?? 0;
    expect((await client.jobs({ queue, after, limit: 3 })).map((job) => job.jobId)).toEqual(
      inserted.slice(1_201, 1_204),
    );
    expect(await client.jobs({ queue, after: inserted[2_499] ?? 0 })).toEqual([]);
    // Newest first: the pages go down, each from the last id of the one before.
    const newest = [...inserted].reverse();
    expect((await client.jobs({ queue, order: "desc" })).map((job) => job.jobId)).toEqual(newest);
    expect(
      (await client.jobs({ queue, order: "desc", limit: 1_200 })).map((job) => job.jobId),
    ).toEqual(newest.slice(0, 1_200));
    const below = inserted[1_500] ?? 0;
    expect(
      (await client.jobs({ queue, order: "desc", before: below, limit: 2 })).map(
        (job) => job.jobId,
      ),
    ).toEqual([inserted[1_499], inserted[1_498]]);
    await client.cancelAll({ queue });
    await client.close();
  });

  it("answers completed jobs by id and listed from the server's terminal index", async () => {
    const client = await Client.connect(directory);
    const queue = "indexed";
    for (let index = 0; index < 5; index++)
      await client.insert({ queue, worker: "W", args: index });
    const done = [];
    for (let index = 0; index < 3; index++) {
      const [claimed] = await client.claim(queue);
      if (claimed !== undefined) done.push(await client.complete(claimed.jobId, { index }));
    }
    // The served engine keeps the index (the default): completed jobs left its memory.
    expect(existsSync(join(directory, "terminal-index"))).toBe(true);
    expect(await client.jobs({ queue, state: "completed" })).toEqual(done);
    expect(await client.jobs({ queue, state: "completed", limit: 2 })).toEqual(done.slice(0, 2));
    expect((await client.jobs({ queue })).map((job) => job.state)).toEqual([
      "completed",
      "completed",
      "completed",
      "available",
      "available",
    ]);
    for (const job of done) expect(await client.job(job.jobId)).toEqual(job);
    expect((await client.counts()).get(queue)).toMatchObject({ completed: 3, available: 2 });
    await client.close();
  });

  it("rejects a late complete with the engine's StaleAttempt and appends nothing", async () => {
    const client = await Client.connect(directory);
    const job = await client.insert({ queue: "fenced", worker: "W", args: null });
    await client.claim("fenced");
    await client.fail(job.jobId, "first", {
      attempt: 1,
      backoff: { baseMs: 0, factor: 1, capMs: 0 },
    });
    // The retry is due at once: its tick must land before `before`, not after.
    await quiet(client);
    const before = await client.status();
    const refused = await client.complete(job.jobId, null, { attempt: 1 }).catch((error) => error);
    expect(refused._tag).toBe("Rejected");
    expect(refused.rejection?._tag).toBe("StaleAttempt");
    expect((await client.status()).lastSequence).toBe(before.lastSequence);
    await client.close();
  });

  it("refuses a value that is none before sending, naming its path", async () => {
    const client = await Client.connect(directory);
    const refused = await client
      .insert({ queue: "q", worker: "W", args: { when: new Date(0) } as never })
      .catch((error) => error);
    expect(refused._tag).toBe("InvalidValue");
    expect(refused.message).toContain("job.args.when");
    await client.close();
  });

  it("fails an attempt whose lease ran out with 'lease expired'", async () => {
    const client = await Client.connect(directory);
    const job = await client.insert({ queue: "leased", worker: "W", args: null });
    const [claimed] = await client.nextJobs([{ queue: "leased", limit: 1 }], { leaseMs: 1_000 });
    expect(claimed?.jobId).toBe(job.jobId);
    await until(async () => (await client.job(job.jobId))?.state !== "executing");
    const after = await client.job(job.jobId);
    expect(after?.errors.map((error) => error.error)).toEqual(["lease expired"]);
    const late = await client.complete(job.jobId, null, { attempt: 1 }).catch((error) => error);
    expect(late.rejection?._tag).toBe("StaleAttempt");
    await client.close();
  });

  it("fails a session's attempts at once when its connection drops", async () => {
    const holder = await Client.connect(directory);
    await holder.openSession();
    const job = await holder.insert({ queue: "dropped", worker: "W", args: null });
    await holder.nextJobs([{ queue: "dropped", limit: 1 }]);
    await holder.close();
    const observer = await Client.connect(directory);
    await until(async () => (await observer.job(job.jobId))?.state !== "executing");
    expect((await observer.job(job.jobId))?.errors[0]?.error).toBe(
      "lease expired: the client's connection dropped",
    );
    await observer.close();
  });

  it("sends inserts issued together as one batch request, each answered as if alone", async () => {
    const client = await Client.connect(directory);
    const before = await requestCounts();
    const jobs = await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        client.insert({ queue: "batched", worker: "W", args: { n } }),
      ),
    );
    const after = await requestCounts();
    expect(jobs.map((job) => job.args)).toEqual(
      Array.from({ length: 50 }, (_, n) => new Map([["n", n]])),
    );
    // Ids in the order the inserts were issued, as one drain decides them.
    expect(jobs.map((job) => job.jobId)).toEqual(
      Array.from({ length: 50 }, (_, n) => (jobs[0]?.jobId ?? 0) + n),
    );
    expect(after.batch - before.batch).toBe(1);
    expect(after.single - before.single).toBe(0);
    await client.close();
  });

  it("refuses one job of a batch with its own error, the status and rejection of a lone insert", async () => {
    const client = await Client.connect(directory);
    const alone = await client
      .insert({ queue: "", worker: "W", args: null })
      .catch((error) => error);
    const settled = await Promise.allSettled([
      client.insert({ queue: "mixed", worker: "W", args: null }),
      client.insert({ queue: "", worker: "W", args: null }),
      client.insert({ queue: "mixed", worker: "W", args: null }),
    ]);
    expect(settled.map((outcome) => outcome.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    const refused = settled[1]?.status === "rejected" ? settled[1].reason : undefined;
    expect(alone._tag).toBe("Rejected");
    expect(refused).toMatchObject({
      _tag: alone._tag,
      status: 409,
      message: alone.message,
      rejection: alone.rejection,
    });
    await client.close();
  });

  it("sends a job the server would refuse as a request alone, so the others of its turn go on", async () => {
    const client = await Client.connect(directory);
    const settled = await Promise.allSettled([
      client.insert({ queue: "shape", worker: "W", args: null }),
      client.insert({ queue: "shape", worker: "W", args: null, priority: 99 }),
      client.insert({ queue: "shape", worker: "W", args: null }),
    ]);
    expect(settled.map((outcome) => outcome.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    const refused = settled[1]?.status === "rejected" ? settled[1].reason : undefined;
    expect(refused).toMatchObject({ _tag: "InvalidRequest", field: "body.job.priority" });
    await client.close();
  });

  it("sends completes and fails issued together as one end-batch, each answered as if alone", async () => {
    const client = await Client.connect(directory);
    for (let n = 0; n < 5; n += 1) await client.insert({ queue: "ends", worker: "W", args: n });
    const [one, stale, two, failed, unfenced] = await client.claim("ends", 5);
    // `stale`'s attempt 1 moves on (failed and claimed again): its old holder's end is refused.
    await client.fail(stale?.jobId ?? 0, "moved", {
      attempt: 1,
      backoff: { baseMs: 0, factor: 1, capMs: 0 },
    });
    await client.tick();
    const [again] = await client.claim("ends");
    const alone = await client
      .complete(stale?.jobId ?? 0, null, { attempt: 1 })
      .catch((error) => error);
    const before = await requestCounts();
    const settled = await Promise.allSettled([
      client.complete(one?.jobId ?? 0, { n: 1 }, { attempt: 1 }),
      client.complete(stale?.jobId ?? 0, null, { attempt: 1 }),
      client.complete(two?.jobId ?? 0),
      client.fail(failed?.jobId ?? 0, "no", { attempt: 1, discard: true }),
      client.complete(unfenced?.jobId ?? 0, null, { attempt: 1 }),
    ]);
    const after = await requestCounts();
    expect(after.ends - before.ends).toBe(1);
    expect(after.complete + after.fail - before.complete - before.fail).toBe(0);
    expect(settled.map((outcome) => outcome.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
      "fulfilled",
    ]);
    const refused = settled[1]?.status === "rejected" ? settled[1].reason : undefined;
    expect(alone.rejection?._tag).toBe("StaleAttempt");
    expect(refused).toMatchObject({
      _tag: "Rejected",
      status: 409,
      message: alone.message,
      rejection: alone.rejection,
    });
    const done = settled[0]?.status === "fulfilled" ? settled[0].value : undefined;
    expect(done?.result?.value).toEqual(new Map([["n", 1]]));
    const discarded = settled[3]?.status === "fulfilled" ? settled[3].value : undefined;
    expect(discarded?.state).toBe("discarded");
    // Its lease would run out (and append) during a later test.
    await client.complete(again?.jobId ?? 0, null, { attempt: again?.attempt ?? 0 });
    await client.close();
  });

  it("sends an end the server would refuse as a request alone, so the others of its turn go on", async () => {
    const client = await Client.connect(directory);
    await client.insert({ queue: "end-shape", worker: "W", args: null });
    const [job] = await client.claim("end-shape");
    const settled = await Promise.allSettled([
      client.fail(1, "e", { attempt: 0 }),
      client.complete(job?.jobId ?? 0, null, { attempt: 1 }),
    ]);
    const refused = settled[0]?.status === "rejected" ? settled[0].reason : undefined;
    expect(refused).toMatchObject({ _tag: "InvalidRequest", field: "body.attempt" });
    expect(settled[1]?.status).toBe("fulfilled");
    await client.close();
  });

  it("leaves no abort listener behind on a signal shared by many claims", async () => {
    const client = await Client.connect(directory);
    const signal = new AbortController().signal;
    for (let n = 0; n < 12; n += 1) {
      await client.insert({ queue: "signalled", worker: "W", args: null });
      const [job] = await client.nextJobs([{ queue: "signalled", limit: 1 }], { signal });
      if (job !== undefined) await client.complete(job.jobId, null, { attempt: job.attempt });
    }
    // A request's listener goes once its connection is released (just after its answer).
    for (let wait = 0; wait < 100 && getEventListeners(signal, "abort").length > 0; wait += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
    await client.close();
  });

  // Code moves between embedded and client mode by changing how it opens: a batch the engine
  // takes embedded (one record, up to 16 MiB) is taken through the server too, whose default
  // limit for any other body is 4 MiB (2026-12-07).
  it("inserts a batch of more than 4 MiB of JSON atomically, as one record", async () => {
    const client = await Client.connect(directory);
    const args = "b".repeat(1_000);
    const batch = Array.from({ length: 5_000 }, () => ({ queue: "big-batch", worker: "W", args }));
    expect(JSON.stringify({ jobs: batch }).length).toBeGreaterThan(4 * 1024 * 1024);
    const jobs = await client.insertMany(batch);
    expect(jobs).toHaveLength(5_000);
    // One record: every job's insert at one sequence.
    const sequences = await Promise.all(
      [jobs[0], jobs[4_999]].map(
        async (job) => (await client.history(job?.jobId ?? 0))[0]?.sequence,
      ),
    );
    expect(sequences[0]).toBeDefined();
    expect(sequences[1]).toBe(sequences[0]);
    await client.close();
  });

  it("reads one job's committed events, the members of a mutation with their index", async () => {
    const client = await Client.connect(directory);
    const job = await client.insert({ queue: "history", worker: "W", args: { n: 1 } });
    await client.insert({ queue: "history", worker: "W", args: { n: 2 } });
    const [claimed] = await client.claim("history");
    expect(claimed?.jobId).toBe(job.jobId);
    await client.complete(job.jobId, { done: true }, { attempt: 1 });
    const history = await client.history(job.jobId);
    expect(history.map(({ event }) => event._tag)).toEqual([
      "JobInserted",
      "JobStarted",
      "JobFinished",
      "ResultRecorded",
    ]);
    expect(history.every(({ event }) => "jobId" in event && event.jobId === job.jobId)).toBe(true);
    // The finish and its result are one mutation: the same sequence, members 0 and 1.
    const [finished, result] = history.slice(2);
    expect(result?.sequence).toBe(finished?.sequence);
    expect([finished?.member, result?.member]).toEqual([0, 1]);
    expect(await client.history(job.jobId + 1_000_000)).toEqual([]);
    // After a compaction the history starts with the base's part, narrowed to the job, and its result.
    await client.compact(24 * 3_600_000);
    const compacted = await client.history(job.jobId);
    expect(compacted.map(({ event }) => event._tag)).toEqual(["SnapshotPart", "ResultRecorded"]);
    const [part] = compacted;
    expect(part?.event._tag === "SnapshotPart" && part.event.jobs).toEqual([
      expect.objectContaining({ jobId: job.jobId, state: "completed" }),
    ]);
    await client.close();
  });

  it("streams committed events from a sequence", async () => {
    const client = await Client.connect(directory);
    // An earlier test's retry coming due between the insert and the status would be the
    // first event from the status's sequence (seen once in CI: JobAvailable of job 2508).
    await quiet(client);
    const job = await client.insert({ queue: "streamed", worker: "W", args: null });
    const status = await client.status();
    const subscription = client.subscribe({ from: Number(status.lastSequence) });
    const first = await subscription.next();
    subscription.close();
    expect(first.value?.event).toMatchObject({ _tag: "JobInserted", jobId: job.jobId });
    await client.close();
  });

  it("tells changes, a burst of commits as few, up to the last sequence", async () => {
    const client = await Client.connect(directory);
    // An earlier test's retry (a lease ran out; due a second later) coming due during the
    // burst appends past the last sequence read below, and the stream rightly tells it.
    await quiet(client);
    const changes = client.changes({ intervalMs: 20 });
    // The first `next` opens the stream.
    const first = changes.next();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await Promise.all(
      Array.from({ length: 50 }, (_, args) =>
        client.insert({ queue: "changes", worker: "W", args }),
      ),
    );
    const last = Number((await client.status()).lastSequence);
    const told: Array<number> = [];
    for (let next = await first; next.done !== true; next = await changes.next()) {
      told.push(next.value.sequence);
      if (next.value.sequence >= last) break;
    }
    changes.close();
    expect(told.at(-1)).toBe(last);
    expect(told.length).toBeLessThan(50);
    await client.close();
  });
});

describe("Event v3 over the socket (EVENTS-V3.md)", () => {
  it("answers a unique insert's duplicate with the existing job and the marker, appending nothing", async () => {
    const client = await Client.connect(directory);
    const first = await client.insert({
      queue: "unique",
      worker: "W",
      args: null,
      uniqueKey: "user-42",
      uniquePeriodMs: 60_000,
      timeoutMs: 5_000,
    });
    expect(first).toMatchObject({ uniqueKey: "user-42", uniquePeriodMs: 60_000, timeoutMs: 5_000 });
    expect(first.duplicate).toBeUndefined();
    await quiet(client);
    const before = (await client.status()).lastSequence;
    const again = await client.insert({
      queue: "unique",
      worker: "W",
      args: 1,
      uniqueKey: "user-42",
    });
    expect(again).toMatchObject({ jobId: first.jobId, duplicate: true });
    expect((await client.status()).lastSequence).toBe(before);
    // Issued in one turn, plain inserts would share a batch; unique ones go alone, marker kept.
    const together = await Promise.all([
      client.insert({ queue: "unique", worker: "W", args: null, uniqueKey: "user-44" }),
      client.insert({ queue: "unique", worker: "W", args: null, uniqueKey: "user-44" }),
    ]);
    expect(together.map((job) => job.duplicate ?? false).sort()).toEqual([false, true]);
    expect(new Set(together.map((job) => job.jobId)).size).toBe(1);
    const many = await client.insertMany([
      { queue: "unique", worker: "W", args: null, uniqueKey: "user-42" },
      { queue: "unique", worker: "W", args: null, uniqueKey: "user-43" },
    ]);
    expect(many.map((job) => [job.jobId, job.duplicate ?? false])).toEqual([
      [first.jobId, true],
      [first.jobId + 2, false],
    ]);
    await client.close();
  });

  it("redrives a discarded job, keeping its history", async () => {
    const client = await Client.connect(directory);
    const job = await client.insert({ queue: "redriven", worker: "W", args: null, maxAttempts: 1 });
    await client.claim("redriven");
    await client.fail(job.jobId, "boom", { attempt: 1 });
    expect((await client.job(job.jobId))?.state).toBe("discarded");
    const redriven = await client.redrive(job.jobId, { maxAttempts: 3, reason: "fixed" });
    expect(redriven).toMatchObject({ state: "available", attempt: 1, maxAttempts: 3 });
    expect(redriven.errors).toHaveLength(1);
    const refused = await client.redrive(job.jobId).catch((error) => error);
    expect(refused._tag).toBe("Rejected");
    await client.close();
  });

  it("redrives and cancels many jobs at once, listing the refused ones", async () => {
    const client = await Client.connect(directory);
    const jobs = await client.insertMany(
      [0, 1, 2].map((index) => ({
        queue: "bulk",
        worker: "W",
        args: index,
        maxAttempts: 1,
        uniqueKey: `b${index}`,
      })),
    );
    const started = await client.claim("bulk", 3);
    for (const job of started) await client.fail(job.jobId, "down", { attempt: job.attempt });
    // Another job takes b0 meanwhile: that one is refused, the others run again.
    const taker = await client.insert({ queue: "bulk", worker: "W", args: null, uniqueKey: "b0" });
    const [first, ...rest] = jobs.map((job) => job.jobId);
    const outcome = await client.redriveAll({ queue: "bulk" }, { reason: "back" });
    expect(outcome.jobIds).toEqual(rest);
    expect(outcome.refused).toEqual([
      { jobId: first, reason: "UniqueKeyTaken", message: expect.stringContaining("b0") },
    ]);
    // Cancel what waits in the queue: the two run again and the taker.
    const cancelled = await client.cancelAll({ queue: "bulk", states: ["available"] }, "drain");
    expect(cancelled).toEqual({ jobIds: [...rest, taker.jobId], refused: [] });
    expect((await client.job(taker.jobId))?.state).toBe("cancelled");
    // A state a cancel cannot start from is refused as a request, naming the member.
    const refused = await client
      .cancelAll({ states: ["completed" as "available"] })
      .catch((error) => error);
    expect(refused._tag).toBe("InvalidRequest");
    expect(refused.message).toContain("body.states[0]");
    await client.close();
  });

  it("waits for jobs to end through one stream, missing none that ends as the call starts", async () => {
    const client = await Client.connect(directory);
    const jobs = await client.insertMany(
      Array.from({ length: 20 }, (_, index) => ({ queue: "awaited", worker: "W", args: index })),
    );
    const started = await client.claim("awaited", 20);
    // Each call starts as its job ends: the end falls before, during or after its stream opens.
    const ends = started.map((job) => {
      const ended = client.whenEnded(job.jobId);
      void client.complete(job.jobId, job.jobId * 2, { attempt: job.attempt });
      return ended;
    });
    const done = await Promise.all(ends);
    expect(done.map((job) => [job.state, job.result?.value])).toEqual(
      started.map((job) => ["completed", job.jobId * 2]),
    );
    expect(jobs).toHaveLength(20);
    // An ended job at once; an unknown one refused.
    expect((await client.whenEnded(started[0]?.jobId ?? 0)).state).toBe("completed");
    await expect(client.whenEnded(999_999)).rejects.toMatchObject({ _tag: "UnknownJob" });
    // A call still waiting when the client closes is told.
    const pending = await client.insert({ queue: "awaited", worker: "W", args: null });
    const waiting = client.whenEnded(pending.jobId);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await client.close();
    await expect(waiting).rejects.toMatchObject({ _tag: "ConnectionFailed", code: "ECLOSED" });
  });

  it("pauses, limits and resumes a queue; claims obey it; the reads show it", async () => {
    const client = await Client.connect(directory);
    await client.insertMany([1, 2, 3].map((args) => ({ queue: "limited", worker: "W", args })));
    expect(await client.pauseQueue("limited")).toMatchObject({ queue: "limited", paused: true });
    expect(await client.claim("limited", 3)).toEqual([]);
    const limited = await client.setQueueLimits("limited", {
      concurrency: 2,
      rateLimit: { count: 10, perMs: 1_000 },
    });
    expect(limited).toMatchObject({
      paused: true,
      concurrency: 2,
      rateLimit: { count: 10, perMs: 1_000 },
    });
    expect(await client.resumeQueue("limited")).toMatchObject({ paused: false, concurrency: 2 });
    const started = await client.claim("limited", 3);
    expect(started).toHaveLength(2);
    expect((await client.queue("limited"))?.concurrency).toBe(2);
    expect((await client.queues()).map((queue) => queue.queue)).toContain("limited");
    // Null removes a limit; the default state reads as undefined.
    expect(await client.setQueueLimits("limited", { concurrency: null, rateLimit: null })).toBe(
      undefined,
    );
    expect(await client.queue("limited")).toBeUndefined();
    expect(await client.queue("never-set")).toBeUndefined();
    // Their leases would run out (and append) during a later test.
    for (const job of started) await client.complete(job.jobId, null, { attempt: job.attempt });
    await client.close();
  });

  it("registers a schedule with a time zone and catch-up policy, as the engine takes them", async () => {
    const client = await Client.connect(directory);
    const definition = {
      queue: "zoned",
      worker: "W",
      args: null,
      priority: 0,
      maxAttempts: 3,
      everyMs: null,
      cron: "30 2 * * *",
      overlap: "skip" as const,
    };
    const zoned = await client.registerSchedule("zoned", {
      ...definition,
      timezone: "America/New_York",
      catchUp: "skip",
      catchUpWindowMs: 600_000,
    });
    expect(zoned.definition).toMatchObject({
      timezone: "America/New_York",
      catchUp: "skip",
      catchUpWindowMs: 600_000,
    });
    expect((await client.schedule("zoned"))?.definition).toEqual(zoned.definition);
    const plain = await client.registerSchedule("plain-v2", definition);
    expect(plain.definition).not.toHaveProperty("timezone");
    const refused = await client
      .registerSchedule("nowhere", { ...definition, timezone: "Nowhere/Special" })
      .catch((error) => error);
    expect(refused).toMatchObject({ _tag: "InvalidRequest", field: "body.definition.timezone" });
    expect(await client.schedule("nowhere")).toBeUndefined();
    // Their occurrences would be delivered (appended) during a later test.
    await client.cancelSchedule("zoned");
    await client.cancelSchedule("plain-v2");
    await client.close();
  });

  it("refuses a limit out of range with InvalidRequest naming the field, appending nothing", async () => {
    const client = await Client.connect(directory);
    await quiet(client);
    const before = (await client.status()).lastSequence;
    const refused = await client
      .setQueueLimits("q", { rateLimit: { count: 0, perMs: 1_000 } })
      .catch((error) => error);
    expect(refused._tag).toBe("InvalidRequest");
    expect(refused.message).toContain("body.rateLimit.count");
    expect((await client.status()).lastSequence).toBe(before);
    await client.close();
  });
});
