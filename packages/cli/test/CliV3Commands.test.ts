// The built `tay` binary writing schema-3 features (EVENTS-V3.md) to a
// directory store: unique inserts (a duplicate prints the job that holds
// the key and appends nothing), per-job timeouts, schedules in a time zone
// with a catch-up policy, `pause`, `resume` and `limit`, and `retry-all`
// and `cancel-all` over many jobs (a refused job listed alone); what it
// refuses (usage errors, exit 2; a zone the runtime does not know, exit 1)
// appends nothing. The served and PostgreSQL paths are in
// ServedCompact.test.ts and CliPostgresCommands.test.ts.
import * as path from "node:path";
import { EnginePromises } from "@tay/shell-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectFailure,
  json,
  ok,
  removeTemporary,
  requireBuild,
  tay,
  temporaryDirectory,
} from "./support/cli.js";

let root = "";

beforeAll(async () => {
  requireBuild();
  root = await temporaryDirectory();
});
afterAll(async () => {
  await removeTemporary(root);
});

/** A fresh, initialized store under the test's directory. */
const freshStore = async (name: string): Promise<string> => {
  const store = path.join(root, name);
  await ok(["init", store]);
  return store;
};

/** The store's last sequence, as `tay verify` reports it. */
const lastSequence = async (store: string): Promise<unknown> =>
  ((await json(["verify", store])) as { last_sequence: unknown }).last_sequence;

const mail = ["--queue", "mail", "--worker", "Send", "--args", '{"to":"a"}'];

describe("tay insert with a unique key and a timeout", () => {
  it("inserts once, answers the holder for a duplicate, and shows the fields", async () => {
    const store = await freshStore("unique");
    const first = await json([
      "insert",
      store,
      ...mail,
      "--unique-key",
      "order-1",
      "--unique-period",
      "1h",
      "--timeout",
      "30s",
    ]);
    expect(first).toMatchObject({
      job_id: 1,
      unique_key: "order-1",
      unique_period_ms: 3_600_000,
      timeout_ms: 30_000,
      duplicate: false,
    });
    const sequence = await lastSequence(store);
    const again = await json(["insert", store, ...mail, "--unique-key", "order-1"]);
    expect(again).toMatchObject({ job_id: 1, duplicate: true });
    const text = await ok(["insert", store, ...mail, "--unique-key", "order-1"]);
    expect(text).toContain(
      'duplicate: job 1 holds unique key "order-1" in queue mail; nothing was inserted',
    );
    expect(await lastSequence(store)).toBe(sequence);
    // Another key, or the same key in another queue, is a new job.
    expect(await json(["insert", store, ...mail, "--unique-key", "order-2"])).toMatchObject({
      job_id: 2,
      duplicate: false,
    });
    const shown = await ok(["job", store, "1"]);
    expect(shown).toMatch(/unique key\s+"order-1"/);
    expect(shown).toMatch(/unique period\s+60m00s/);
    expect(shown).toMatch(/timeout\s+30\.0s/);
    // A job without them shows none of the three lines.
    const plain = await json(["insert", store, ...mail]);
    expect(plain).toMatchObject({ job_id: 3, unique_key: null, timeout_ms: null });
    expect(await ok(["job", store, "3"])).not.toMatch(/unique|timeout/);
  }, 60_000);

  it("refuses --wait on a store this command would hold, before inserting", async () => {
    const store = await freshStore("wait-refused");
    const sequence = await lastSequence(store);
    const refused = expectFailure(await tay(["insert", store, ...mail, "--wait"]), "UsageError", 2);
    expect(refused).toContain("--wait needs a store another process serves (tay serve)");
    expect(await lastSequence(store)).toBe(sequence);
  }, 60_000);

  it("refuses a period without a key and durations under 1 ms, appending nothing", async () => {
    const store = await freshStore("unique-refused");
    const sequence = await lastSequence(store);
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [["--unique-period", "1h"], "--unique-period needs --unique-key"],
      [["--timeout", "0"], '--timeout: "0" is shorter than 1 ms'],
      [
        ["--unique-key", "k", "--unique-period", "0s"],
        '--unique-period: "0s" is shorter than 1 ms',
      ],
      [["--timeout", "soon"], "--timeout"],
    ];
    for (const [extra, message] of cases) {
      const refused = expectFailure(
        await tay(["insert", store, ...mail, ...extra]),
        "UsageError",
        2,
      );
      expect(refused).toContain(message);
    }
    expect(await lastSequence(store)).toBe(sequence);
  }, 60_000);
});

describe("tay schedule in a time zone with a catch-up policy", () => {
  it("registers a schema-3 schedule and shows its zone and policy", async () => {
    const store = await freshStore("zoned");
    const registered = await json([
      "schedule",
      store,
      "--id",
      "daily",
      "--queue",
      "mail",
      "--worker",
      "Send",
      "--cron",
      "0 9 * * *",
      "--timezone",
      "Europe/Berlin",
      "--catch-up",
      "skip",
      "--catch-up-window",
      "2h",
    ]);
    expect(registered).toMatchObject({
      schedule_id: "daily",
      definition: { cron: "0 9 * * *", timezone: "Europe/Berlin", catch_up: "skip" },
    });
    const { definition, next_due_at: nextDueAt } = registered as {
      definition: { catch_up_window_ms: unknown };
      next_due_at: number;
    };
    expect(definition.catch_up_window_ms).toBe(7_200_000);
    // 09:00 on Berlin's clock, whatever the season.
    const berlinHour = new Intl.DateTimeFormat("en-GB", {
      timeZone: "Europe/Berlin",
      hour: "2-digit",
      minute: "2-digit",
    }).format(new Date(nextDueAt));
    expect(berlinHour).toBe("09:00");
    const text = await ok(["schedules", store]);
    expect(text).toContain('cron "0 9 * * *" in Europe/Berlin');
    const one = await ok(["schedule", store, "--id", "all", ...schedule, "--catch-up", "all"]);
    expect(one).toMatch(/catch up\s+all\n/);
    expect(
      await json([
        "schedule",
        store,
        "--id",
        "unbounded",
        ...schedule,
        "--catch-up-window",
        "none",
      ]),
    ).toMatchObject({
      definition: { timezone: "UTC", catch_up: "once", catch_up_window_ms: null },
    });
    // Without any of the three options the registration stays schema 2.
    const plain = await json(["schedule", store, "--id", "plain", ...schedule]);
    expect(plain).toMatchObject({ definition: { cron: "*/5 * * * *" } });
    expect((plain as { definition: object }).definition).not.toHaveProperty("timezone");
  }, 60_000);

  it("refuses an unknown zone naming it, and an unknown policy, appending nothing", async () => {
    const store = await freshStore("zoned-refused");
    const sequence = await lastSequence(store);
    const zone = expectFailure(
      await tay(["schedule", store, "--id", "s", ...schedule, "--timezone", "Mars/Olympus"]),
      "InvalidField",
    );
    expect(zone).toContain('definition.timezone: "Mars/Olympus" is not a zone this runtime knows');
    const policy = expectFailure(
      await tay(["schedule", store, "--id", "s", ...schedule, "--catch-up", "most"]),
      "UsageError",
      2,
    );
    expect(policy).toContain('--catch-up: "most" is not once, skip, all');
    const window = expectFailure(
      await tay(["schedule", store, "--id", "s", ...schedule, "--catch-up-window", "0ms"]),
      "UsageError",
      2,
    );
    expect(window).toContain("--catch-up-window");
    expect(await lastSequence(store)).toBe(sequence);
  }, 60_000);
});

const schedule = ["--queue", "mail", "--worker", "Send", "--cron", "*/5 * * * *"];

describe("tay pause, resume and limit", () => {
  it("change the queue's state as tay queues shows it", async () => {
    const store = await freshStore("queues");
    await json(["insert", store, ...mail]);
    expect(await ok(["pause", store, "mail"])).toBe("queue mail: paused\n");
    expect(await json(["limit", store, "mail", "--concurrency", "4", "--rate", "10/1s"])).toEqual({
      queue: "mail",
      at: expect.any(Number),
      paused: true,
      concurrency: 4,
      rate_limit: { count: 10, per_ms: 1000 },
    });
    expect(await ok(["queues", store])).toMatch(/mail\s+paused\s+4\s+10\/1000ms\s+1\s+0/);
    // A limit not given is kept; none removes one; resume keeps the limits.
    expect(await ok(["limit", store, "mail", "--rate", "none"])).toBe(
      "queue mail: paused, concurrency 4\n",
    );
    expect(await ok(["resume", store, "mail"])).toBe("queue mail: running, concurrency 4\n");
    expect(await ok(["limit", store, "mail", "--concurrency", "none", "--rate", "600/1m"])).toBe(
      "queue mail: running, 600 per 60000 ms\n",
    );
    // A queue with no job yet can be paused ahead of its first one.
    expect(await json(["pause", store, "later"])).toMatchObject({ queue: "later", paused: true });
    expect(await json(["queues", store])).toMatchObject([
      { queue: "later", paused: true, jobs: { available: 0 } },
      { queue: "mail", paused: false, rate_limit: { count: 600, per_ms: 60_000 } },
    ]);
  }, 60_000);

  it("refuses limits out of bounds and a missing limit, appending nothing", async () => {
    const store = await freshStore("queues-refused");
    const sequence = await lastSequence(store);
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [[], "give --concurrency, --rate or both"],
      [["--concurrency", "0"], "--concurrency"],
      [["--rate", "0/1s"], "--rate: 0 is not in 1..10000"],
      [["--rate", "10001/1s"], "--rate: 10001 is not in 1..10000"],
      [["--rate", "10/2d"], 'the window "2d" is not between 1 ms and 1 day'],
      [["--rate", "10/0ms"], 'the window "0ms" is not between 1 ms and 1 day'],
      [["--rate", "ten"], '"ten" is not COUNT/DURATION'],
    ];
    for (const [extra, message] of cases) {
      const refused = expectFailure(await tay(["limit", store, "mail", ...extra]), "UsageError", 2);
      expect(refused).toContain(message);
    }
    expectFailure(await tay(["pause", store, ""]), "InvalidField");
    expect(await lastSequence(store)).toBe(sequence);
  }, 60_000);
});

describe("tay retry-all and tay cancel-all", () => {
  it("run again a queue's discarded jobs, list the refused, and cancel what waits", async () => {
    const store = path.join(root, "bulk");
    const engine = await EnginePromises.open(store, { createIfMissing: true });
    await engine.insertMany(
      [0, 1, 2].map((index) => ({
        queue: "mail",
        worker: "W",
        args: index,
        maxAttempts: 1,
        uniqueKey: `u${index}`,
      })),
    );
    for (const job of await engine.claim("mail", 3)) await engine.fail(job.jobId, "down");
    // Job 4 takes job 1's key: running job 1 again is refused, alone.
    await engine.insert({ queue: "mail", worker: "W", args: null, uniqueKey: "u0" });
    await engine.insert({ queue: "other", worker: "W", args: null });
    await engine.close();

    // tay queues counts what a retry-all would run again.
    expect(await ok(["queues", store])).toMatch(/mail\s+running\s+-\s+-\s+1\s+0\s+0\s+3\n/);
    const text = await ok(["retry-all", store, "--queue", "mail", "--reason", "smtp back"]);
    expect(text).toContain("retried 2 job(s): 2, 3\n");
    expect(text).toContain(
      'refused: job 1: UniqueKeyTaken: job 1\'s unique key "u0" in queue "mail" is held by job 4',
    );
    expect(await json(["retry-all", store])).toEqual({
      job_ids: [],
      refused: [expect.objectContaining({ job_id: 1, reason: "UniqueKeyTaken" })],
    });
    expect(await json(["cancel-all", store, "--queue", "mail", "--limit", "2"])).toEqual({
      job_ids: [2, 3],
      refused: [],
    });
    expect(await json(["retry-all", store, "--state", "cancelled"])).toMatchObject({
      job_ids: [2, 3],
    });
    expect(await json(["cancel-all", store, "--state", "available,scheduled"])).toMatchObject({
      job_ids: [2, 3, 4, 5],
    });
    const states = (await json(["jobs", store])) as Array<{ job_id: number; state: string }>;
    expect(states.map((job) => [job.job_id, job.state])).toEqual([
      [1, "discarded"],
      [2, "cancelled"],
      [3, "cancelled"],
      [4, "cancelled"],
      [5, "cancelled"],
    ]);
  }, 60_000);

  it("refuses states a command cannot start from, appending nothing", async () => {
    const store = await freshStore("bulk-refused");
    const sequence = await lastSequence(store);
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [
        ["retry-all", store, "--state", "available"],
        '"available" is not one of discarded, cancelled',
      ],
      [["cancel-all", store, "--state", "completed"], '"completed" is not one of scheduled'],
      [["cancel-all", store, "--limit", "0"], "--limit"],
    ];
    for (const [args, message] of cases) {
      expect(expectFailure(await tay(args), "UsageError", 2)).toContain(message);
    }
    expect(await lastSequence(store)).toBe(sequence);
  }, 60_000);
});
