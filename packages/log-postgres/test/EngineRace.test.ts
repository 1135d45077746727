/**
 * Several engines, one store, on a real server: three engine processes
 * (children loading the built dist) race inserts, claims and completions
 * on one PostgreSQL store. Every acknowledged insert is in the store
 * afterwards, no job was started twice (each started job was started once,
 * at attempt 1, by one engine), and the store reopens, every row checked
 * and folded; the same holds when one engine is SIGKILLed while it appends.
 * A race that outlives its deadline (100 s, inside the test's 120 s) fails
 * with the last progress lines of each engine still running and what it
 * said it waits on. Skipped, with the reason printed, when no server answers.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "@effect/vitest";
import { Generation } from "@tay/core";
import { PgLog, PgSchema } from "@tay/log-postgres";
import { StateProjection } from "@tay/shell-node";
import { Effect } from "effect";
import * as Server from "./support/server.js";

const server = await Server.locate();
const serverUrl = "url" in server ? server.url : "";
const child = fileURLToPath(new URL("./support/engine-child.mjs", import.meta.url));

/** What one engine process printed, and how it ended. */
interface Run {
  readonly inserted: ReadonlyArray<number>;
  readonly started: ReadonlyArray<{ readonly jobId: number; readonly attempt: number }>;
  readonly stats: Record<string, number>;
  readonly code: number | null;
  readonly stderr: string;
}

/**
 * Starts one engine process; `go` releases it, `stop` ends its rounds past
 * `rounds` (up to `maxRounds`), `kill` SIGKILLs it, `onConflict` is told
 * when it first reports a conflict, `done` resolves with what it printed.
 */
const engineProcess = (url: string, rounds: number, maxRounds = rounds) => {
  const process_ = spawn(process.execPath, [child, url, String(rounds), "4", String(maxRounds)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  // A child that already ended cannot hear `stop` (EPIPE): nothing to tell it then.
  process_.stdin.on("error", () => {});
  let stdout = "";
  let stderr = "";
  // Called on each chunk with the acknowledged inserts printed so far.
  let onOutput = (_inserts: number) => {};
  let onConflict = () => {};
  process_.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    onOutput(stdout.match(/^inserted /gm)?.length ?? 0);
    if (/^conflicts /m.test(stdout)) onConflict();
  });
  process_.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<Run>((resolve) => {
    process_.on("close", (code) => {
      const lines = stdout.split("\n");
      const words = lines.map((line) => line.split(" "));
      resolve({
        inserted: words.filter(([kind]) => kind === "inserted").map(([, id]) => Number(id)),
        started: words
          .filter(([kind]) => kind === "started")
          .map(([, id, attempt]) => ({ jobId: Number(id), attempt: Number(attempt) })),
        stats: JSON.parse(
          lines.find((line) => line.startsWith("stats "))?.slice(6) ?? "{}",
        ) as Record<string, number>,
        code,
        stderr,
      });
    });
  });
  /** SIGKILLs the process once it has printed `count` acknowledged inserts. */
  const killAfterInserts = (count: number) => {
    onOutput = (inserts) => {
      if (inserts >= count) process_.kill("SIGKILL");
    };
  };
  let finished = false;
  void done.then(() => {
    finished = true;
  });
  /** What a stuck process last printed: its last progress lines and its stderr. */
  const lastWords = (lines: number) =>
    [
      `pid ${process_.pid}: ${finished ? "ended after SIGUSR2" : "still running"}; its last lines:`,
      ...stdout.trimEnd().split("\n").slice(-lines),
      ...(stderr === "" ? [] : ["stderr:", stderr.slice(-2000)]),
    ].join("\n  ");
  return {
    go: () => (maxRounds > rounds ? process_.stdin.write("go\n") : process_.stdin.end("go\n")),
    stop: () => {
      if (!process_.stdin.writableEnded) process_.stdin.end("stop\n");
    },
    whenConflicted: (then: () => void) => {
      onConflict = then;
    },
    killAfterInserts,
    done,
    finished: () => finished,
    signal: (name: NodeJS.Signals) => process_.kill(name),
    lastWords,
  };
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits for every process, or fails once `deadlineMs` passed with what each
 * one still running was waiting on: asked with SIGUSR2 (the child prints a
 * `waiting` line: each worker's last step, the engine's counters, the
 * log's queue, what keeps the process alive), then SIGKILLed.
 */
const within = async (
  processes: ReadonlyArray<ReturnType<typeof engineProcess>>,
  deadlineMs: number,
): Promise<Array<Run>> => {
  const all = Promise.all(processes.map((started) => started.done));
  const late = await Promise.race([all.then(() => false), sleep(deadlineMs).then(() => true)]);
  if (!late) return all;
  const stuck = processes.filter((started) => !started.finished());
  for (const started of stuck) started.signal("SIGUSR2");
  await sleep(1000);
  const words = processes.map((started, index) =>
    stuck.includes(started)
      ? `engine ${index} ${started.lastWords(12)}`
      : `engine ${index}: ended in time`,
  );
  for (const started of stuck) started.signal("SIGKILL");
  await all;
  throw new Error(
    `${stuck.length} of ${processes.length} engine processes still running after ${deadlineMs} ms:\n${words.join("\n")}`,
  );
};

/**
 * Runs `engines` engine processes together on the store at `url`; with
 * `killAfterInserts`, the first is given ten times the rounds (so it is
 * still appending, whatever the machine's speed) and SIGKILLed once it has
 * acknowledged that many inserts: mid-batch, most likely, as it appends all
 * the time. (A timer instead let a quick engine finish before the kill.)
 * With `untilConflict`, every engine goes on past `rounds` (up to that many
 * rounds) until one of them reports a conflict: the race is then forced, not
 * hoped for, however short each engine's transactions are.
 */
export const race = async (
  url: string,
  engines: number,
  rounds: number,
  killAfterInserts?: number,
  deadlineMs = 100_000,
  untilConflict?: number,
) => {
  const processes = Array.from({ length: engines }, (_, index) =>
    engineProcess(
      url,
      index === 0 && killAfterInserts !== undefined ? rounds * 10 : rounds,
      untilConflict,
    ),
  );
  for (const started of processes) {
    started.whenConflicted(() => {
      for (const other of processes) other.stop();
    });
  }
  // Node takes a while to load; a head start for everyone evens the race.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  for (const started of processes) started.go();
  if (killAfterInserts !== undefined) processes[0]?.killAfterInserts(killAfterInserts);
  return within(processes, deadlineMs);
};

/** Every started job was started once, at attempt 1; every acknowledged insert is in `state`. */
const checkRace = (runs: ReadonlyArray<Run>, state: import("@tay/core").State.State) => {
  const starts = new Map<number, number>();
  for (const run of runs) {
    for (const { jobId, attempt } of run.started) {
      expect(attempt).toBe(1);
      starts.set(jobId, (starts.get(jobId) ?? 0) + 1);
    }
  }
  expect([...starts.values()].filter((count) => count > 1)).toEqual([]);
  const inserted = runs.flatMap((run) => run.inserted);
  expect(new Set(inserted).size).toBe(inserted.length);
  for (const jobId of inserted) expect(state.jobs.has(jobId)).toBe(true);
  for (const jobId of starts.keys()) {
    expect(["executing", "completed"]).toContain(state.jobs.get(jobId)?.state);
  }
  return inserted;
};

/** The store's state after a reopen (every row checked and folded). */
const reopened = (url: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const recovered = yield* PgLog.open(url, {}, StateProjection.foldProjection);
      const state = Generation.finish(recovered.state);
      if (state._tag === "Left") return yield* Effect.die(state.left);
      return state.right;
    }),
  );

describe.skipIf(!("url" in server))("several engines on one PostgreSQL store", () => {
  it.scoped(
    "three engine processes race: no job started twice, every acknowledged insert present",
    () =>
      Effect.gen(function* () {
        const made = yield* Effect.acquireRelease(
          Effect.promise(() => Server.freshDatabase(serverUrl)),
          (database) => Effect.promise(() => database.drop()),
        );
        yield* PgSchema.init(made.url);
        // At least 12 rounds each, and on until some engine met another's records (at most 400).
        const runs = yield* Effect.promise(() => race(made.url, 3, 12, undefined, 100_000, 400));
        for (const run of runs) expect(run.stderr).toBe("");
        expect(runs.map((run) => run.code)).toEqual([0, 0, 0]);
        const state = yield* reopened(made.url);
        const inserted = checkRace(runs, state);
        expect(state.jobs.size).toBe(inserted.length);
        // The engines did meet each other's records, and caught up.
        const conflicts = runs.reduce((sum, run) => sum + (run.stats.conflicts ?? 0), 0);
        const committed = runs.reduce((sum, run) => sum + (run.stats.committed ?? 0), 0);
        console.info(
          `3 engines: ${committed} transactions committed, ${conflicts} conflicts, per engine ${JSON.stringify(runs.map((run) => run.stats))}`,
        );
        expect(conflicts).toBeGreaterThan(0);
      }),
    120_000,
  );

  it.scoped(
    "an engine SIGKILLed mid-batch: the others go on, nothing acknowledged is lost, no job twice",
    () =>
      Effect.gen(function* () {
        const made = yield* Effect.acquireRelease(
          Effect.promise(() => Server.freshDatabase(serverUrl)),
          (database) => Effect.promise(() => database.drop()),
        );
        yield* PgSchema.init(made.url);
        const runs = yield* Effect.promise(() => race(made.url, 3, 12, 20));
        expect(runs.map((run) => run.code)).toEqual([null, 0, 0]);
        // The killed engine's jobs stay executing (no rescue at open): they are its, not lost.
        const state = yield* reopened(made.url);
        const inserted = checkRace(runs, state);
        // Its unacknowledged inserts may have committed too: at least the acknowledged ones.
        expect(state.jobs.size).toBeGreaterThanOrEqual(inserted.length);
      }),
    120_000,
  );

  // The cost of conflicts as engines are added (TAY_PG_SWEEP=1; about a minute): each engine
  // process runs the same rounds; retries per batch = commands decided again / transactions.
  it.scoped.skipIf(process.env.TAY_PG_SWEEP !== "1")(
    "sweep: conflicts and retries per committed transaction with 1, 2, 3 and 4 engines",
    () =>
      Effect.gen(function* () {
        for (const engines of [1, 2, 3, 4]) {
          const made = yield* Effect.promise(() => Server.freshDatabase(serverUrl));
          yield* PgSchema.init(made.url);
          const started = Date.now();
          const runs = yield* Effect.promise(() => race(made.url, engines, 25, undefined, 140_000));
          const seconds = (Date.now() - started - 1500) / 1000;
          yield* Effect.promise(() => made.drop());
          const sum = (key: string) =>
            runs.reduce((total, run) => total + (run.stats[key] ?? 0), 0);
          console.info(
            `${engines} engine(s): ${sum("committed")} transactions, ${sum("conflicted")} conflicted, ${sum("retried")} commands decided again, ${(sum("retried") / sum("committed")).toFixed(2)} retries per committed transaction, ${(sum("conflicted") / (sum("committed") + sum("conflicted"))).toFixed(2)} of transactions conflicted, ${seconds.toFixed(1)} s`,
          );
          expect(sum("exhausted")).toBe(0);
        }
      }),
    600_000,
  );
});
