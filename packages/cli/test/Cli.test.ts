// The built `tay` binary, run as a child process: every command on a store
// prepared with the CLI itself, its JSON shapes, and every error path (one
// stderr line naming the reason, exit 1, or 2 for usage). Damage is done
// with real bytes: a truncated segment, a flipped bit, a Store-v1 marker,
// and a lock held by this test process through the engine.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { Effect, Exit, Scope } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, EnginePromises, NodeDisk, StoreOptions, TerminalIndex } from "@tay/shell-node";
import { type Job, State } from "@tay/core";
import * as Json from "../src/json.js";
import { type StatusFiles, statusJson, statusLines } from "../src/status.js";
import {
  expectFailure,
  flipBit,
  json,
  lastSegment,
  ok,
  recordOffsets,
  removeTemporary,
  requireBuild,
  runInProcess,
  tay,
  temporaryDirectory,
  truncateBy,
} from "./support/cli.js";

let root = "";
/**
 * A store made by the CLI: a short demo (jobs 1 and 2, the second completed
 * with a result), two inserts (jobs 3 and 4), one more schedule.
 */
let store = "";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const arrayOf = (value: unknown): Array<Record<string, unknown>> => {
  expect(Array.isArray(value)).toBe(true);
  return Array.isArray(value) ? value.filter(isObject) : [];
};

/** A copy of the prepared store to damage. */
const copyOfStore = async (name: string): Promise<string> => {
  const target = path.join(root, name);
  await fs.cp(store, target, { recursive: true });
  return target;
};

beforeAll(async () => {
  requireBuild();
  root = await temporaryDirectory();
  store = path.join(root, "store");
  await ok(["demo", store, "--jobs", "2", "--workers", "2", "--durability", "throughput"]);
  await ok(["insert", store, "--queue", "mail", "--worker", "send", "--args", '{"to":"a@b.c"}']);
  await ok([
    "insert",
    store,
    "--queue",
    "__proto__",
    "--worker",
    "w",
    "--args",
    '{"__proto__":{"polluted":true},"n":[1,2.5,"x"]}',
    "--at",
    "2999-01-01T00:00:00Z",
    "--priority",
    "3",
    "--max-attempts",
    "5",
  ]);
  await ok([
    "schedule",
    store,
    "--id",
    "nightly",
    "--queue",
    "mail",
    "--worker",
    "digest",
    "--cron",
    "0 3 * * *",
    "--overlap",
    "skip",
  ]);
});

afterAll(async () => {
  await removeTemporary(root);
});

describe("commands that change a store", () => {
  it("init creates a store and refuses a directory that is not empty", async () => {
    const fresh = path.join(root, "fresh");
    const made = await json(["init", fresh]);
    expect(isObject(made) && typeof made.store_id === "string").toBe(true);
    expect(await fs.readdir(fresh)).toEqual(["CURRENT", "LOCK", "STORE-V2", "epochs"]);
    expectFailure(await tay(["init", fresh]), "NotEmpty");
  });

  it("insert prints the job it inserted", async () => {
    const target = await copyOfStore("insert");
    const job = await json([
      "insert",
      target,
      "--queue",
      "q",
      "--worker",
      "w",
      "--args",
      "[1,true,null]",
      "--at",
      "4102444800000",
    ]);
    expect(job).toMatchObject({
      queue: "q",
      worker: "w",
      args: [1, true, null],
      state: "scheduled",
      scheduled_at: 4_102_444_800_000,
      priority: 0,
      max_attempts: 20,
      attempt: 0,
    });
  });

  it("a writing command prints no rescue note when its open rescued nothing", async () => {
    const target = await copyOfStore("quiet");
    const run = await runInProcess([
      "insert",
      target,
      "--queue",
      "q",
      "--worker",
      "w",
      "--args",
      "1",
    ]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).not.toContain("found executing at open");
  });

  it("schedule registers, compares revisions, and cancel-schedule cancels", async () => {
    const target = await copyOfStore("schedule");
    const created = await json([
      "schedule",
      target,
      "--id",
      "hourly",
      "--queue",
      "q",
      "--worker",
      "w",
      "--every",
      "1h",
      "--args",
      '{"k":1}',
      "--expect-revision",
      "0",
    ]);
    expect(created).toMatchObject({
      schedule_id: "hourly",
      revision: 1,
      definition: { every_ms: 3_600_000, cron: null, overlap: "allow", args: { k: 1 } },
    });
    const conflict = await tay([
      "schedule",
      target,
      "--id",
      "hourly",
      "--queue",
      "q",
      "--worker",
      "w",
      "--every",
      "2h",
      "--expect-revision",
      "0",
    ]);
    expect(expectFailure(conflict, "RevisionMismatch")).toContain("revision 1, not 0");
    const cancelled = await json(["cancel-schedule", target, "hourly", "--expect-revision", "1"]);
    expect(isObject(cancelled) && typeof cancelled.cancelled_at === "number").toBe(true);
    expectFailure(await tay(["cancel-schedule", target, "hourly"]), "ScheduleAlreadyCancelled");
  });

  it("cancel cancels a job once, then refuses", async () => {
    const target = await copyOfStore("cancel");
    // Job 3 is the one in queue "mail" (see beforeAll).
    const jobId = "3";
    const cancelled = await json(["cancel", target, jobId, "--reason", "no longer needed"]);
    expect(cancelled).toMatchObject({ state: "cancelled" });
    const line = expectFailure(await tay(["cancel", target, jobId]), "InvalidTransition");
    expect(line).toContain(`job ${jobId} is cancelled`);
    const history = await json(["job", target, jobId]);
    const events = isObject(history) ? arrayOf(history.history) : [];
    expect(events.at(-1)).toMatchObject({
      event: "JobCancelled",
      fields: { reason: "no longer needed" },
    });
  });

  it("compact drops old terminal jobs and keeps the store valid", async () => {
    const target = await copyOfStore("compact");
    // Jobs 1 and 2 (the demo's) are completed; 3, 4 and 5 are not terminal (kept and
    // dropped differ, so neither count can stand in for the other).
    await ok(["insert", target, "--queue", "q", "--worker", "w", "--args", "5"]);
    const report = await json(["compact", target, "--retention", "0ms"]);
    expect(report).toMatchObject({
      epoch: 2,
      parent_epoch: 1,
      jobs_dropped: 2,
      jobs_kept: 3,
      removed_epochs: [1],
    });
    const [verdict, gone, kept] = await Promise.all([
      json(["verify", target]),
      tay(["job", target, "1"]),
      json(["job", target, "3"]),
    ]);
    expect(verdict).toMatchObject({ valid: true, epoch: 2, jobs: 3 });
    expectFailure(gone, "JobNotFound");
    // A kept job's history now starts with its snapshot part, narrowed to it.
    const history = isObject(kept) ? arrayOf(kept.history) : [];
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({
      event: "SnapshotPart",
      member: null,
      fields: { part: 0, last_job_id: 5, jobs: [{ job_id: 3, queue: "mail", state: "available" }] },
    });
  });
});

describe("read commands", () => {
  it("status reports files, pressure, jobs by state and by queue, schedules", async () => {
    const [status, text] = await Promise.all([json(["status", store]), ok(["status", store])]);
    expect(status).toMatchObject({
      epoch: 1,
      parent_epoch: 0,
      segments: 1,
      first_sequence: 1,
      schedules: { total: 2, active: 2, cancelled: 0 },
      queues: { mail: { available: 1 }, demo: { completed: 2 } },
    });
    const queues = isObject(status) ? status.queues : undefined;
    expect(isObject(queues) && Object.getOwnPropertyDescriptor(queues, "__proto__")?.value).toEqual(
      {
        scheduled: 1,
        available: 0,
        executing: 0,
        retryable: 0,
        completed: 0,
        discarded: 0,
        cancelled: 0,
      },
    );
    expect(isObject(status) && typeof status.store_pressure === "number").toBe(true);
    expect(text).toMatch(/^store id\s+[0-9a-f-]{36}$/m);
    expect(text).toMatch(/^QUEUE\s+SCHEDULED\s+AVAILABLE/m);
    expect(text).toMatch(/^mail\s+0\s+1\s+0/m);
  });

  it("verify exits 0 with the report", async () => {
    const [report, text] = await Promise.all([json(["verify", store]), ok(["verify", store])]);
    expect(report).toMatchObject({ valid: true, epoch: 1, jobs: 4, staged_segment: null });
    expect(text).toMatch(/^valid: /);
  });

  it("status and verify show a leftover SEGMENT.tmp, which they ignore", async () => {
    const copy = await copyOfStore("staged");
    const staged = path.join(copy, "epochs", "00000000000000000001", "SEGMENT.tmp");
    // Not even a header: were it read as part of the generation, verify would refuse it.
    await fs.writeFile(staged, "leftover");
    const [status, statusText, report, verifyText] = await Promise.all([
      json(["status", copy]),
      ok(["status", copy]),
      json(["verify", copy]),
      ok(["verify", copy]),
    ]);
    expect(status).toMatchObject({ segments: 1, staged_segment: staged });
    expect(statusText).toContain(`staged segment (ignored): ${staged}`);
    expect(report).toMatchObject({ valid: true, jobs: 4, staged_segment: staged });
    expect(verifyText).toContain(`staged segment (ignored): ${staged}`);
  });

  it("jobs filters by queue and state, limits, and keeps __proto__ keys as data", async () => {
    const [all, limited, table] = await Promise.all([
      json(["jobs", store]),
      json(["jobs", store, "--queue", "demo", "--state", "completed", "--limit", "1"]),
      ok(["jobs", store, "--state", "scheduled"]),
    ]);
    expect(arrayOf(all).map((job) => job.job_id)).toEqual([1, 2, 3, 4]);
    expect(arrayOf(limited)).toMatchObject([{ job_id: 1, state: "completed", queue: "demo" }]);
    const odd = arrayOf(all).find((job) => job.queue === "__proto__");
    const args = odd?.args;
    expect(isObject(args) && Object.hasOwn(args, "__proto__")).toBe(true);
    expect(args).toMatchObject({ n: [1, 2.5, "x"] });
    expect(Reflect.get({}, "polluted")).toBeUndefined();
    expect(table.split("\n")[0]).toMatch(/^ID\s+STATE\s+QUEUE\s+WORKER/);
    expect(table).toMatch(
      /^\s*4\s+scheduled\s+__proto__\s+w\s+3\s+0\/5\s+2999-01-01T00:00:00.000Z/m,
    );
  });

  it("jobs --state completed and job answer a store with a terminal index as the engine does", async () => {
    const target = path.join(root, "indexed");
    const engine = await EnginePromises.open(target, { createIfMissing: true });
    for (let index = 0; index < 6; index++) {
      await engine.insert({ queue: index % 2 === 0 ? "a" : "b", worker: "W", args: index });
    }
    for (const queue of ["a", "b", "a", "b"]) {
      const [claimed] = await engine.claim(queue, 1);
      if (claimed !== undefined) await engine.complete(claimed.jobId, { done: claimed.jobId });
    }
    // The completed jobs left the engine's memory for its index: still answered whole.
    expect(engine.state().terminal.size).toBe(4);
    // As the CLI prints them (JSON text, parsed back).
    const printed = (jobs: ReadonlyArray<Job.Job>): unknown =>
      JSON.parse(JSON.stringify(jobs.map(Json.job)));
    const expected = printed(engine.jobs({ state: "completed" }));
    const expectedB = printed(engine.jobs({ state: "completed", queue: "b", limit: 1 }));
    const third = engine.job(3);
    await engine.close();
    await fs.access(path.join(TerminalIndex.indexPath(target), TerminalIndex.headName));
    const [listed, listedB, shown] = await Promise.all([
      json(["jobs", target, "--state", "completed"]),
      json(["jobs", target, "--state", "completed", "--queue", "b", "--limit", "1"]),
      json(["job", target, "3"]),
    ]);
    expect(arrayOf(expected)).toHaveLength(4);
    expect(listed).toEqual(expected);
    expect(listedB).toEqual(expectedB);
    expect(third?.result?.value).toEqual(new Map([["done", 3]]));
    expect(isObject(shown) ? [shown.job] : []).toEqual(printed(third === undefined ? [] : [third]));
  });

  it("job shows the job and every record that concerns it, inside mutations too", async () => {
    const [shown, text] = await Promise.all([json(["job", store, "2"]), ok(["job", store, "2"])]);
    expect(shown).toMatchObject({ job: { job_id: 2, state: "completed", attempt: 1 } });
    const history = isObject(shown) ? arrayOf(shown.history) : [];
    expect(history.map((entry) => entry.event)).toEqual([
      "JobInserted",
      "JobStarted",
      "JobFinished",
      "ResultRecorded",
    ]);
    // The insert batch and the completion with a result are mutations.
    expect(history[0]).toMatchObject({ member: 1, type: 1, schema: 1, fields: { job_id: 2 } });
    expect(history[1]).toMatchObject({ member: null, fields: { job_id: 2, attempt: 1 } });
    expect(history[2]).toMatchObject({ member: 0, fields: { outcome: "completed", error: null } });
    expect(history[3]).toMatchObject({ member: 1, type: 10, schema: 2 });
    expect(text).toMatch(/^SEQUENCE\s+EVENT\s+DETAILS$/m);
    expect(text).toMatch(/JobInserted \(mutation #1\)/);
  });

  it("schedules lists every schedule", async () => {
    const [listed, text] = await Promise.all([
      json(["schedules", store]),
      ok(["schedules", store]),
    ]);
    const schedules = arrayOf(listed);
    expect(schedules.map((schedule) => schedule.schedule_id)).toEqual([
      "demo-heartbeat",
      "nightly",
    ]);
    expect(schedules[1]).toMatchObject({
      definition: { cron: "0 3 * * *", every_ms: null, overlap: "skip", queue: "mail" },
    });
    expect(text).toMatch(/^nightly\s+active\s+mail\s+digest\s+cron "0 3 \* \* \*"/m);
  });

  it("dump prints one JSON record per line; a mutation shows its inner events", async () => {
    const [output, paged] = await Promise.all([
      ok(["dump", store]),
      ok(["dump", store, "--from", "2", "--limit", "3"]),
    ]);
    const records = output
      .trimEnd()
      .split("\n")
      .map((line): unknown => JSON.parse(line));
    const all = records.filter(isObject);
    expect(all.map((record) => record.sequence)).toEqual(all.map((_, index) => index + 1));
    for (const record of all) {
      expect(Object.keys(record)).toEqual(["sequence", "type", "schema", "event", "fields"]);
    }
    const batch = all.find(
      (record) =>
        record.event === "Mutation" &&
        isObject(record.fields) &&
        arrayOf(record.fields.events).every((inner) => inner.event === "JobInserted"),
    );
    expect(batch).toMatchObject({ type: 8, schema: 1 });
    const inner = isObject(batch?.fields) ? arrayOf(batch.fields.events) : [];
    expect(inner).toHaveLength(2);
    expect(inner[0]).toMatchObject({
      type: 1,
      schema: 1,
      event: "JobInserted",
      fields: { job_id: 1, queue: "demo", worker: "demo", args: { n: 1 }, max_attempts: 3 },
    });
    const page = paged.trimEnd().split("\n");
    expect(page.map((line): unknown => JSON.parse(line))).toMatchObject([
      { sequence: 2 },
      { sequence: 3 },
      { sequence: 4 },
    ]);
  });

  it("read commands work while another process holds the lock", async () => {
    const scope = Effect.runSync(Scope.make());
    await Effect.runPromise(
      // It only holds the lock: no tick may change what the read commands see.
      Engine.open(store, { timers: false }).pipe(
        Scope.extend(scope),
        Effect.provide(NodeDisk.layer),
      ),
    );
    try {
      const [status, verdict, locked] = await Promise.all([
        json(["status", store]),
        json(["verify", store]),
        tay(["insert", store, "--queue", "q", "--worker", "w", "--args", "1"]),
      ]);
      expect(status).toMatchObject({ epoch: 1 });
      expect(verdict).toMatchObject({ valid: true });
      const line = expectFailure(locked, "Locked");
      expect(line).toContain(`${path.join(store, "LOCK")}: held by pid ${process.pid}`);
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void));
    }
  });
});

describe("error paths", () => {
  it("a missing directory is StoreNotFound", async () => {
    const missing = path.join(root, "missing");
    for (const command of ["status"]) {
      expect(expectFailure(await tay([command, missing]), "StoreNotFound")).toBe(
        `tay: StoreNotFound ${missing}: no such directory`,
      );
    }
    expectFailure(
      await tay(["insert", missing, "--queue", "q", "--worker", "w", "--args", "1"]),
      "StoreNotFound",
    );
  });

  it("a Store-v1 root is refused and left alone", async () => {
    const legacy = path.join(root, "legacy");
    await fs.mkdir(legacy);
    await fs.writeFile(path.join(legacy, "STORE"), "v1");
    for (const args of [
      ["status", legacy],
      ["verify", legacy],
      ["init", legacy],
    ]) {
      const line = expectFailure(await tay(args), "UnsupportedStoreV1");
      expect(line).toContain("migrate it with Tay 1.4.x first");
    }
    expect(await fs.readdir(legacy)).toEqual(["STORE"]);
  });

  it("a torn tail is IncompleteTail with the file, offset and sequence", async () => {
    const torn = await copyOfStore("torn");
    const segment = await lastSegment(torn);
    const { size } = await fs.stat(segment);
    await truncateBy(segment, 3);
    const records = (await recordOffsets(segment)).length;
    const runs = await Promise.all([
      tay(["verify", torn]),
      tay(["insert", torn, "--queue", "q", "--worker", "w", "--args", "1"]),
      tay(["dump", torn]),
    ]);
    for (const run of runs) {
      const line = expectFailure(run, "IncompleteTail");
      expect(line).toMatch(
        new RegExp(`^tay: IncompleteTail ${segment} at offset \\d+ sequence ${records}: `),
      );
      expect(line).toContain("copy-prefix");
    }
    // dump prints the records before the fault, then the error.
    const dumped = runs[2]?.stdout.trimEnd().split("\n") ?? [];
    expect(dumped).toHaveLength(records - 1);
    expect(dumped.map((line): unknown => JSON.parse(line))).toMatchObject(
      dumped.map((_, index) => ({ sequence: index + 1 })),
    );
    expect((await fs.stat(segment)).size).toBe(size - 3);
  });

  it("a flipped bit is the codec's CorruptReason, not just CorruptRecord", async () => {
    const flipped = await copyOfStore("flipped");
    const segment = await lastSegment(flipped);
    // Segment header (44 bytes), record 1's header (24 bytes): a payload byte.
    await flipBit(segment, 44 + 24 + 5);
    const verdict = await tay(["verify", flipped, "--json"]);
    expect(expectFailure(verdict, "RecordChecksum")).toMatch(
      new RegExp(`^tay: RecordChecksum ${segment} at offset 44 sequence 1: `),
    );
    expect(JSON.parse(verdict.stdout)).toEqual({
      valid: false,
      error: {
        reason: "RecordChecksum",
        path: segment,
        offset: 44,
        sequence: 1,
        explanation: "the record's CRC does not match its header and payload; nothing was changed",
      },
    });
    // A bit of the header's sequence field: the header CRC catches it first.
    await flipBit(segment, 44 + 12);
    expectFailure(await tay(["verify", flipped]), "HeaderChecksum");
  });

  it("bad command lines exit 2 with one line", async () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [[], "missing command"],
      [["frobnicate", store], 'unknown command "frobnicate"'],
      [["status"], "missing DIR"],
      [["status", store, "extra"], 'unexpected argument "extra"'],
      [["jobs", store, "--bogus"], "Unknown option '--bogus'"],
      [["jobs", store, "--state", "sleeping"], '--state: "sleeping" is not one of'],
      [["jobs", store, "--limit=-1"], "--limit: -1 is not in 0.."],
      [["job", store, "abc"], 'ID: "abc" is not an integer'],
      [["insert", store, "--worker", "w", "--args", "1"], "--queue is required"],
      [["insert", store, "--queue", "q", "--worker", "w", "--args", "{"], "--args: not JSON"],
      [["insert", store, "--queue", "q", "--worker", "w", "--args", "1", "--at", "soon"], "--at:"],
      [
        ["insert", store, "--queue", "q", "--worker", "w", "--args", "1", "--priority", "10"],
        "--priority: 10 is not in 0..9",
      ],
      [["compact", store], "--retention is required"],
      [["compact", store, "--retention", "7 days"], '--retention: "7 days" is not a duration'],
      [["schedule", store, "--id", "s", "--queue", "q", "--worker", "w"], "exactly one of"],
      [
        [
          "schedule",
          store,
          "--id",
          "s",
          "--queue",
          "q",
          "--worker",
          "w",
          "--cron",
          "* * * * *",
          "--overlap",
          "never",
        ],
        "--overlap",
      ],
      [["demo", store, "--durability", "sometimes"], "--durability"],
      [["help", "frobnicate"], 'unknown command "frobnicate"'],
      [
        ["schedule", store, "--id", "s", "--queue", "q", "--worker", "w", "--every", "0"],
        "--every must be at least 1 ms",
      ],
    ];
    // In process (parsing touches no disk), so the whole table stays fast...
    for (const [args, detail] of cases) {
      const line = expectFailure(await runInProcess(args), "UsageError", 2);
      expect(line, args.join(" ")).toContain(detail);
    }
    // ...and through the binary for a few, exit status included.
    for (const index of [0, 13]) {
      const [args = [], detail = ""] = cases[index] ?? [];
      expect(expectFailure(await tay(args), "UsageError", 2)).toContain(detail);
    }
  });

  it("option values at their bounds are accepted; one past a bound is a usage error", async () => {
    const target = await copyOfStore("bounds");
    const insert = (extra: ReadonlyArray<string>) =>
      runInProcess(["insert", target, "--queue", "q", "--worker", "w", "--args", "1", ...extra]);
    const ends = [
      { priority: 0, maxAttempts: 1, at: "1970-01-01T00:00:00Z", scheduledAt: 0 },
      {
        priority: 9,
        maxAttempts: 1000,
        at: `${Number.MAX_SAFE_INTEGER}`,
        scheduledAt: Number.MAX_SAFE_INTEGER,
      },
    ];
    for (const { priority, maxAttempts, at, scheduledAt } of ends) {
      const args = ["--priority", `${priority}`, "--max-attempts", `${maxAttempts}`, "--at", at];
      const run = await insert([...args, "--json"]);
      expect(run.stderr, args.join(" ")).toBe("");
      expect(run.status, args.join(" ")).toBe(0);
      const job: unknown = JSON.parse(run.stdout);
      expect(job).toMatchObject({
        priority,
        max_attempts: maxAttempts,
        scheduled_at: scheduledAt,
      });
    }
    const past: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["--priority=-1"], "--priority: -1 is not in 0..9"],
      [
        ["--priority", "-1"],
        "Option '--priority' argument is ambiguous: a value starting with a dash is written --priority=VALUE",
      ],
      [["--max-attempts", "0"], "--max-attempts: 0 is not in 1..1000"],
      [["--max-attempts", "1001"], "--max-attempts: 1001 is not in 1..1000"],
      [["--at", "9007199254740992"], "--at: 9007199254740992 is beyond 2^53-1 ms"],
      [["--at", "1969-12-31T23:59:59Z"], "is not a valid time at or after 1970-01-01"],
    ];
    for (const [extra, detail] of past) {
      expect(expectFailure(await insert(extra), "UsageError", 2), extra.join(" ")).toContain(
        detail,
      );
    }
    // 104249991375 days is beyond 2^53-1 ms.
    const tooLong = await runInProcess(["compact", target, "--retention", "104249991375d"]);
    expect(expectFailure(tooLong, "UsageError", 2)).toContain("is too long a duration");
  });

  it("--args nested 61 levels deep is inserted, compacted and reopened; 62 levels is a usage error", async () => {
    const target = await copyOfStore("deep");
    // A top-level scalar is 1 level deep; each array around it adds one.
    const nested = (depth: number) => `${"[".repeat(depth - 1)}1${"]".repeat(depth - 1)}`;
    const insert = (depth: number) =>
      runInProcess(["insert", target, "--queue", "q", "--worker", "w", "--args", nested(depth)]);
    const deepest = await insert(61);
    expect(deepest.stderr).toBe("");
    expect(deepest.status).toBe(0);
    // A compaction's base keeps the job in a snapshot part, 3 levels down: 61 is the most it fits.
    expect((await runInProcess(["compact", target, "--retention", "1d"])).status).toBe(0);
    expect((await runInProcess(["verify", target])).status).toBe(0);
    expect(expectFailure(await insert(62), "UsageError", 2)).toContain(
      "--args: nested deeper than 61 levels",
    );
  });

  it("a rejected schedule definition names the decider's reason", async () => {
    const target = await copyOfStore("rejected");
    const run = await tay([
      "schedule",
      target,
      "--id",
      "s",
      "--queue",
      "q",
      "--worker",
      "w",
      "--cron",
      "61 * * * *",
    ]);
    expectFailure(run, "InvalidDefinition");
  });

  it("help lists every command and describes one", async () => {
    const overview = await ok(["help"]);
    for (const name of [
      "init",
      "status",
      "verify",
      "dump",
      "jobs",
      "job",
      "schedules",
      "compact",
      "insert",
      "schedule",
      "cancel",
      "cancel-schedule",
      "copy-prefix",
      "demo",
    ]) {
      expect(overview).toMatch(new RegExp(`^  ${name} `, "m"));
    }
    const help = await runInProcess(["insert", "--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: tay insert DIR --queue Q/);
  });
});

describe("the status view", () => {
  it("says overloaded above 90% of the default capacity, in JSON and in text", () => {
    const files = (bytes: number): StatusFiles => ({
      path: "/data",
      storeId: "ab".repeat(16),
      epoch: 1,
      parentEpoch: 0,
      baseRecordCount: 0,
      segments: 1,
      records: 0,
      firstSequence: 1,
      lastSequence: 0,
      bytes,
      orphanedGenerations: [],
    });
    const full = files(StoreOptions.defaults.storeBytesMax);
    expect(statusJson(full, State.initialState)).toMatchObject({
      store_pressure: 1,
      overloaded: true,
    });
    expect(statusLines(full, State.initialState).join("\n")).toContain("(overloaded)");
    const calm = files(0);
    expect(statusJson(calm, State.initialState)).toMatchObject({ overloaded: false });
    expect(statusLines(calm, State.initialState).join("\n")).not.toContain("(overloaded)");
  });
});
