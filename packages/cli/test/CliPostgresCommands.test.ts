/**
 * The commands on a store named by a postgres:// URL, run in this process
 * (`Cli.run`, no child per command: these cases are about what a command
 * does on a URL, the binary's own cases are in CliPostgres.test.ts),
 * against a real server (TAY_PG_URL, else 127.0.0.1:5432; skipped with
 * the reason when none answers): every command either takes a URL or
 * refuses it saying why; schedule, cancel, retry, cancel-schedule, pause,
 * resume, limit, retry-all, cancel-all and queues work on one, and insert
 * --wait ends when another engine completes the job.
 */
import { PgLog } from "@tay/log-postgres";
import { Engine, StateProjection } from "@tay/shell-node";
import { State } from "@tay/core";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import * as Cli from "../src/Cli.js";
import * as Json from "../src/json.js";
import { expectFailure, runInProcess } from "./support/cli.js";
import { answers, freshDatabase } from "./support/postgres.js";

const reachable = await answers("CLI PostgreSQL command tests");

/** Runs `tay args... --json` in this process, expects success, parses its document. */
const json = async (args: ReadonlyArray<string>): Promise<unknown> => {
  const run = await runInProcess([...args, "--json"]);
  expect(run.stderr, args.join(" ")).toBe("");
  expect(run.status, args.join(" ")).toBe(0);
  return JSON.parse(run.stdout);
};

/** An engine over the store at `url` for the scope: no timers, no rescue at open (as the CLI's). */
const pgEngine = (url: string) =>
  Effect.flatMap(PgLog.open(url, {}, StateProjection.foldProjection), (recovered) =>
    Engine.fromLog(recovered, { timers: false, rescueOnOpen: false }),
  );

describe("which commands take a URL", () => {
  it("every command takes a URL or has its reason for refusing one", () => {
    for (const command of Cli.commands) {
      expect(
        Cli.takesUrl.has(command.name) !== Cli.urlRefusals.has(command.name),
        command.name,
      ).toBe(true);
    }
  });

  it("copy-prefix refuses a URL on either side, saying why; copy refuses two URLs", async () => {
    const url = "postgres://nobody@127.0.0.1:1/none";
    for (const args of [
      ["copy-prefix", url, "/tmp/tay-never-made"],
      ["copy-prefix", "/tmp/tay-never-read", url],
    ]) {
      const line = expectFailure(await runInProcess(args), "UsageError", 2);
      expect(line).toMatch(
        /^tay: UsageError: copy-prefix takes a directory, not a PostgreSQL URL: it repairs a directory/,
      );
    }
    const both = await runInProcess(["copy", url, "postgres://b@127.0.0.1:1/b"]);
    expect(expectFailure(both, "UsageError", 2)).toMatch(
      /^tay: UsageError: copy moves a store between a directory and PostgreSQL/,
    );
  });
});

describe.skipIf(!reachable)("the write commands and queues on a postgres:// store", () => {
  it("schedule, cancel, retry, cancel-schedule and queues take the URL", async () => {
    const url = await freshDatabase();
    await json(["init", url]);
    const insert = (queue: string) =>
      json(["insert", url, "--queue", queue, "--worker", "W", "--args", "[1]"]);
    expect(await insert("q")).toMatchObject({ job_id: 1, state: "available" });
    expect(await insert("r")).toMatchObject({ job_id: 2, state: "available" });
    expect(
      await json(["schedule", url, "--id", "s", "--queue", "q", "--worker", "W", "--every", "1h"]),
    ).toMatchObject({ schedule_id: "s", revision: 1 });
    expect(await json(["cancel", url, "1", "--reason", "not now"])).toMatchObject({
      job_id: 1,
      state: "cancelled",
    });
    const counted = await json(["queues", url]);
    expect(counted).toMatchObject([
      { queue: "q", paused: false, jobs: { available: 0, cancelled: 1 } },
      { queue: "r", jobs: { available: 1 } },
    ]);
    expect(await json(["retry", url, "1", "--reason", "now", "--max-attempts", "5"])).toMatchObject(
      { job_id: 1, state: "available", max_attempts: 5 },
    );
    const history = await json(["job", url, "1"]);
    expect(history).toMatchObject({ job: { state: "available" } });
    const events = (history as { history: Array<{ event: string }> }).history.map(
      (entry) => entry.event,
    );
    expect(events.at(-1)).toBe("JobRedriven");
    expect(await json(["queues", url])).toMatchObject([
      { queue: "q", jobs: { available: 1, cancelled: 0 } },
      { queue: "r", jobs: { available: 1 } },
    ]);
    // A job that is not discarded or cancelled is refused, and nothing is appended.
    const refused = expectFailure(await runInProcess(["retry", url, "2"]), "InvalidTransition");
    expect(refused).toContain("job 2 is available");
    expect(await json(["cancel-schedule", url, "s", "--expect-revision", "1"])).toMatchObject({
      schedule_id: "s",
      revision: 2,
    });
    expect(await json(["verify", url])).toMatchObject({ valid: true, last_sequence: 6 });
  }, 120_000);

  it("pause, limit, resume, a unique insert and a zoned schedule take the URL", async () => {
    const url = await freshDatabase();
    await json(["init", url]);
    expect(await json(["pause", url, "q"])).toMatchObject({ queue: "q", paused: true });
    expect(await json(["limit", url, "q", "--concurrency", "3", "--rate", "7/1m"])).toMatchObject({
      paused: true,
      concurrency: 3,
      rate_limit: { count: 7, per_ms: 60_000 },
    });
    expect(await json(["resume", url, "q"])).toMatchObject({ paused: false, concurrency: 3 });
    const job = ["--queue", "q", "--worker", "W", "--args", "1", "--unique-key", "k"];
    expect(await json(["insert", url, ...job, "--timeout", "1m"])).toMatchObject({
      job_id: 1,
      timeout_ms: 60_000,
      duplicate: false,
    });
    expect(await json(["insert", url, ...job])).toMatchObject({ job_id: 1, duplicate: true });
    expect(
      await json([
        "schedule",
        url,
        "--id",
        "s",
        "--queue",
        "q",
        "--worker",
        "W",
        "--cron",
        "30 2 * * *",
        "--timezone",
        "America/New_York",
        "--catch-up",
        "all",
      ]),
    ).toMatchObject({ definition: { timezone: "America/New_York", catch_up: "all" } });
    expect(await json(["queues", url])).toMatchObject([
      { queue: "q", paused: false, concurrency: 3, jobs: { available: 1 } },
    ]);
    // Three queue states, one insert, one registration: the duplicate appended nothing.
    expect(await json(["verify", url])).toMatchObject({ valid: true, last_sequence: 5 });
    expect(await json(["cancel-all", url, "--queue", "q"])).toEqual({ job_ids: [1], refused: [] });
    expect(await json(["retry-all", url, "--state", "cancelled"])).toEqual({
      job_ids: [1],
      refused: [],
    });
    expect(await json(["jobs", url])).toMatchObject([{ job_id: 1, state: "available" }]);
  }, 120_000);

  // `jobs URL --state S` folds lean unless S is completed (or absent), as on a directory: only
  // completed jobs leave a lean state's memory (2026-12-07).
  it("jobs on a URL lists each state whole, the completed ones and the others", async () => {
    const url = await freshDatabase();
    await json(["init", url]);
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const engine = yield* pgEngine(url);
          yield* engine.insertMany(
            Array.from({ length: 6 }, (_, args) => ({ queue: "q", worker: "W", args })),
          );
          const claimed = yield* engine.claim("q", 4);
          for (const job of claimed.slice(0, 2)) yield* engine.complete(job.jobId, "done");
          const third = claimed[2];
          if (third !== undefined) yield* engine.cancel(third.jobId, "no");
        }),
      ),
    );
    const ids = async (state: string) =>
      ((await json(["jobs", url, "--state", state])) as Array<{ job_id: number }>).map(
        (job) => job.job_id,
      );
    expect(await ids("completed")).toEqual([1, 2]);
    expect(await ids("cancelled")).toEqual([3]);
    expect(await ids("executing")).toEqual([4]);
    expect(await ids("available")).toEqual([5, 6]);
    expect(((await json(["jobs", url])) as Array<unknown>).length).toBe(6);
  }, 120_000);

  // 2026-12-07: a listing of completed jobs on a URL folds lean and keeps only the records it
  // can print (`listingFold.ts`), where it folded whole before.
  it("jobs on a URL lists completed jobs as the whole fold does, for every filter, order, bound and limit", async () => {
    const url = await freshDatabase();
    await json(["init", url]);
    const whole = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const engine = yield* pgEngine(url);
          yield* engine.insertMany(
            Array.from({ length: 30 }, (_, n) => ({
              queue: n % 3 === 0 ? "b" : "a",
              worker: "W",
              args: n,
              maxAttempts: 1,
            })),
          );
          // Ended out of order: completed (some with a result), discarded, executing, available.
          const claimed = yield* engine.claim("a", 20);
          const claimedB = yield* engine.claim("b", 6);
          for (const job of [...claimedB, ...claimed].reverse()) {
            if (job.jobId % 7 === 0) yield* engine.fail(job.jobId, "boom");
            else if (job.jobId % 5 !== 0)
              yield* engine.complete(job.jobId, job.jobId % 2 === 0 ? { n: job.jobId } : undefined);
          }
          return yield* engine.state();
        }),
      ),
    );
    const wanted = (filter: {
      readonly state: string | undefined;
      readonly queue: string | undefined;
      readonly descending: boolean;
      readonly limit: number;
      readonly after: number | undefined;
    }) => {
      const jobs = [...State.jobsFrom(whole, 0)].filter(
        (job) =>
          (filter.state === undefined || job.state === filter.state) &&
          (filter.queue === undefined || job.queue === filter.queue) &&
          (filter.after === undefined ||
            (filter.descending ? job.jobId < filter.after : job.jobId > filter.after)),
      );
      if (filter.descending) jobs.reverse();
      return jobs.slice(0, filter.limit).map((job) => JSON.parse(Json.line(Json.job(job))));
    };
    expect(
      [...State.jobsFrom(whole, 0)].filter((job) => job.state === "completed").length,
    ).toBeGreaterThan(10);
    for (const state of [undefined, "completed"]) {
      for (const queue of [undefined, "b"]) {
        for (const descending of [false, true]) {
          for (const limit of [1, 3, 100]) {
            for (const after of [undefined, 12]) {
              const args = [
                "jobs",
                url,
                ...(state === undefined ? [] : ["--state", state]),
                ...(queue === undefined ? [] : ["--queue", queue]),
                ...(descending ? ["--order", "desc"] : []),
                ...(limit === 100 ? [] : ["--limit", `${limit}`]),
                ...(after === undefined ? [] : [descending ? "--before" : "--after", `${after}`]),
              ];
              expect(await json(args), args.join(" ")).toEqual(
                wanted({ state, queue, descending, limit, after }),
              );
            }
          }
        }
      }
    }
  }, 240_000);

  it("insert --wait on a URL ends when another engine completes the job", async () => {
    const url = await freshDatabase();
    await json(["init", url]);
    const outcome = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const other = yield* pgEngine(url);
          const waiting = runInProcess([
            "insert",
            url,
            ...["--queue", "w", "--worker", "W", "--args", "1", "--wait", "--json"],
          ]);
          // The other engine sees the insert once it has caught up (LISTEN/NOTIFY).
          for (let tries = 0; tries < 500; tries++) {
            const [job] = yield* other.claim("w", 1);
            if (job !== undefined) {
              yield* other.complete(job.jobId, "done");
              break;
            }
            yield* Effect.sleep("20 millis");
          }
          return yield* Effect.promise(() => waiting);
        }),
      ),
    );
    expect(outcome.stderr).toBe("");
    expect(outcome.status).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject({
      state: "completed",
      result: { value: "done" },
    });
  }, 120_000);
});
