// `/metrics` of an in-process server: Prometheus text through prom-client whose job gauges, event
// counters and batch histogram follow what committed (in process and through the socket alike).
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Effect } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Metrics from "../../src/server/Metrics.js";
import * as Server from "../../src/server/Server.js";
import { insertedEvent } from "../support/job.js";
import * as SharedLog from "../support/sharedLog.js";

let directory = "";
let opened: EnginePromises.OpenedEngine;
let served: Server.StartedServer;

const get = (path: string): Promise<string> =>
  new Promise((resolve, reject) => {
    request({ socketPath: served.socket, path }, (response) => {
      const chunks: Array<Buffer> = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve(Buffer.concat(chunks).toString()));
    })
      .on("error", reject)
      .end();
  });

beforeAll(async () => {
  directory = join(mkdtempSync(join(tmpdir(), "tay-metrics-")), "data");
  opened = await EnginePromises.open(directory, { createIfMissing: true });
  served = await Server.start(opened, { directory });
});

afterAll(async () => {
  await served.close();
  await opened.close();
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

describe("metrics", () => {
  it("counts what committed and reads the state when scraped", async () => {
    await opened.insertMany([
      { queue: "email", worker: "W", args: null },
      { queue: "email", worker: "W", args: null },
    ]);
    const [claimed] = await opened.claim("email");
    if (claimed !== undefined) await opened.complete(claimed.jobId);
    await get("/v1/counts");
    const text = await get("/metrics");
    expect(text).toContain('tay_jobs{queue="email",state="available"} 1');
    expect(text).toContain('tay_jobs{queue="email",state="completed"} 1');
    expect(text).toMatch(/^tay_inserts_total 2$/m);
    expect(text).toMatch(/^tay_claims_total 1$/m);
    expect(text).toMatch(/^tay_completions_total 1$/m);
    expect(text).toMatch(/^tay_batch_records_count 3$/m);
    expect(text).toMatch(/^tay_last_sequence 3$/m);
    expect(text).toContain("tay_request_seconds_bucket");
  });

  it("counts failures, retries and cancellations", async () => {
    await opened.insertMany([
      { queue: "counted", worker: "W", args: null, maxAttempts: 2 },
      { queue: "counted", worker: "W", args: null },
    ]);
    const [first] = await opened.claim("counted");
    if (first !== undefined) await opened.fail(first.jobId, "boom");
    const [second] = opened.jobs({ queue: "counted", state: "available" });
    if (second !== undefined) await opened.cancel(second.jobId, "no");
    const text = await get("/metrics");
    expect(text).toMatch(/^tay_failures_total 1$/m);
    expect(text).toMatch(/^tay_retries_total 1$/m);
    expect(text).toMatch(/^tay_cancellations_total 1$/m);
  });

  it("a directory's store shows no contention: no other engine appends to it", async () => {
    expect(opened.engine.contention().shared).toBe(false);
    expect(await get("/metrics")).not.toContain("tay_append_conflicts_total");
  });

  it("counts a shared log's conflicts, catch-ups, retries and steps aside when scraped", async () => {
    const log = SharedLog.shared();
    // Another writer gets in before three of this engine's writes (once it is in an even race).
    let losses = 0;
    const interloper = () => {
      if (losses === 0) return;
      losses -= 1;
      const sequence = log.entries.length + 1;
      log.entries.push({ sequence, event: insertedEvent(sequence) });
    };
    const gauges: Metrics.ServerGauges = {
      leases: () => 0,
      sessions: () => 0,
      leasesExpired: () => 0,
      pressure: () => 0,
      segments: () => 0,
    };
    const text = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const recovered = yield* SharedLog.open(log, { interloper });
          const engine = yield* Engine.fromLog(recovered, {
            timers: false,
            rescueOnOpen: false,
          });
          // An even race: 64 records of its own, then 64 of the other writer's folded (one
          // conflict); an engine in no even race never steps aside.
          yield* SharedLog.evenRace(engine, log);
          losses = 3;
          yield* engine.insert({ queue: "q", worker: "W", args: null });
          const metrics = yield* Effect.promise(() => Metrics.make(engine, gauges));
          const scraped = yield* Effect.promise(() => metrics.text());
          metrics.stop();
          return scraped;
        }),
      ),
    );
    expect(text).toMatch(/^tay_append_conflicts_total 4$/m);
    expect(text).toMatch(/^tay_catch_ups_total 4$/m);
    expect(text).toMatch(/^tay_commands_decided_again_total 4$/m);
    expect(text).toMatch(/^tay_contention_exhausted_total 0$/m);
    expect(text).toMatch(/^tay_records_of_others_folded_total 67$/m);
    // The second and third losses in a row waited 20 and 40 ms.
    expect(text).toMatch(/^tay_steps_aside_total 2$/m);
    expect(text).toMatch(/^tay_step_aside_seconds_total 0.06$/m);
  });

  it("reads the store writer's inline writes when scraped", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "tay-metrics-inline-"));
    // Maximal: a lone small batch is written on the loop's thread.
    const maximal = await EnginePromises.open(join(scratch, "data"), {
      createIfMissing: true,
      durability: "Maximal",
    });
    const metrics = await Metrics.make(maximal.engine, {
      leases: () => 0,
      sessions: () => 0,
      leasesExpired: () => 0,
      pressure: () => 0,
      segments: () => 1,
    });
    try {
      const scraped = async (name: string) =>
        Number((await metrics.registry.metrics()).match(new RegExp(`^${name} (\\S+)$`, "m"))?.[1]);
      // The first writes may find the writer's turn taken, or a slow disk: a few more then.
      for (let index = 0; index < 100 && (await scraped("tay_inline_writes_total")) === 0; index++)
        await maximal.insert({ queue: "q", worker: "W", args: null });
      const stats = Effect.runSync(maximal.engine.log.stats()).inlineWrites;
      expect(stats?.writes).toBeGreaterThan(0);
      expect(await scraped("tay_inline_writes_total")).toBe(stats?.writes);
      expect(await scraped("tay_inline_writes_slow_total")).toBe(stats?.slow);
      expect(await scraped("tay_inline_write_slowest_seconds")).toBeGreaterThan(0);
    } finally {
      metrics.stop();
      await maximal.close();
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("counts the engine's own compactions, and shows none for an engine without them", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "tay-metrics-auto-"));
    const compacting = await EnginePromises.open(join(scratch, "data"), {
      createIfMissing: true,
      autoCompact: { retentionMs: 0, minRecords: 4 },
    });
    const gauges = { leases: () => 0, sessions: () => 0, leasesExpired: () => 0 };
    const facts = { ...gauges, pressure: () => 0, segments: () => 1 };
    const metrics = await Metrics.make(compacting.engine, facts);
    try {
      const scraped = async (name: string) =>
        Number((await metrics.registry.metrics()).match(new RegExp(`^${name} (\\S+)$`, "m"))?.[1]);
      expect(await scraped("tay_auto_compactions")).toBe(0);
      expect(await scraped("tay_auto_compaction_jobs_dropped")).toBe(0);
      // Three records: a job inserted, claimed and completed, which a retention of 0 drops
      // once its millisecond has passed; the fourth record makes the compaction due.
      const done = await compacting.insert({ queue: "q", worker: "W", args: "done" });
      await compacting.claim("q", 1);
      await compacting.complete(done.jobId, null);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await compacting.insert({ queue: "q", worker: "W", args: "waits" });
      for (let round = 0; round < 200 && compacting.autoCompaction()?.runs !== 1; round++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await scraped("tay_auto_compactions")).toBe(1);
      expect(await scraped("tay_auto_compaction_failures")).toBe(0);
      expect(await scraped("tay_auto_compaction_jobs_dropped")).toBe(1);
      // The suite's engine compacts only when told: no such series.
      expect(await get("/metrics")).not.toMatch(/tay_auto_compaction/);
    } finally {
      metrics.stop();
      await compacting.close();
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("labels requests by their route's pattern, so ids do not multiply the series", async () => {
    await get("/v1/jobs/1");
    await get("/v1/jobs/2");
    await get("/v1/no-such-route/3");
    const text = await get("/metrics");
    expect(text).toMatch(
      /^tay_request_seconds_count\{route="\/v1\/jobs\/:jobId",status="200"\} 2$/m,
    );
    expect(text).toMatch(/^tay_request_seconds_count\{route="\/v1\/counts",status="200"\} 1$/m);
    expect(text).toMatch(/^tay_request_seconds_count\{route="other",status="404"\} 1$/m);
    expect(text).not.toMatch(/route="\/v1\/jobs\/[0-9]/);
  });

  it("serves its OpenAPI document listing every route", async () => {
    const document = JSON.parse(await get("/openapi.json"));
    expect(document.openapi).toBe("3.1.0");
    for (const path of ["/v1/insert", "/v1/next-jobs", "/v1/jobs/{jobId}", "/v1/events"]) {
      expect(Object.keys(document.paths)).toContain(path);
    }
  });
});
