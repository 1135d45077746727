/**
 * `tay demo DIR`: the newcomer's tour. Opens the store (initialising DIR
 * when it is missing or empty), registers a heartbeat schedule, inserts a
 * few hundred jobs, and runs an in-process pool of workers that claim,
 * complete and fail them (a deterministic fraction fails once, a smaller
 * one always, and is discarded after its last attempt), while a ticker
 * makes retries due and delivers the schedule's occurrences. A progress
 * line follows the run; at the end it prints the throughput and the status.
 *
 * It stops when every job is finished, after `--duration`, or on SIGINT:
 * workers finish the job in hand, the store is flushed and closed (LOCK
 * released), a summary is printed, and the exit status is 130 for SIGINT.
 * Running it again resumes: unfinished jobs are processed (ones left
 * executing by a killed run are failed and retried by the engine at open)
 * and no new ones are inserted until none is left.
 */
import { Event, type Job, Query, type State, type Value } from "@tay/core";
import { Clock, Duration, Effect, Fiber, Ref } from "effect";
import { Disk, Engine, Layout, type StoreOptions } from "@tay/shell-node";
import { argument, type Command, exitCodes, parsed, text, usage } from "./command.js";
import * as Json from "./json.js";
import { type StatusFiles, statusJson, statusLines } from "./status.js";
import { line, lines, Terminal } from "./Terminal.js";
import * as Text from "./text.js";
import { parseDuration, parseInteger } from "./values.js";

/** The queue the demo's jobs and heartbeats run on. */
export const demoQueue = "demo";
/** The worker name of the inserted jobs. */
export const demoWorker = "demo";
/** The heartbeat schedule: an occurrence every `heartbeatEveryMs`. */
export const heartbeatScheduleId = "demo-heartbeat";
/** The heartbeat's period. */
export const heartbeatEveryMs = 2_000;

/** Jobs a fresh run inserts (`--jobs`), and the most it accepts. */
export const jobsDefault = 300;
export const jobsMax = 1_000_000;
/** Worker fibers (`--workers`), and the most it accepts. */
export const workersDefault = 8;
export const workersMax = 256;
/** A safety cap: the default run finishes in a few seconds, well before it. */
export const durationMsDefault = 60_000;
/** Attempts of a demo job: the always-failing ones are discarded after the third. */
export const demoMaxAttempts = 3;
/** Jobs per insert mutation. */
export const insertBatchJobs = 500;

const idleMs = 10;
const tickMs = 50;
const pollMs = 100;
const progressTerminalMs = 100;
const progressPlainMs = 1_000;

// A Map: option text is data, never a property name.
const durabilities: ReadonlyMap<string, StoreOptions.DurabilityPolicy> = new Map([
  ["maximal", "Maximal"],
  ["segment", "Segment"],
  ["throughput", "Throughput"],
]);

/** What a demo job does, by id: deterministic, so a resumed run behaves the same. */
export const behaviour = (job: Job.Job): "complete" | "fail" => {
  if (job.worker !== demoWorker) return "complete";
  if (job.jobId % 50 === 7) return "fail";
  if (job.jobId % 10 === 3 && job.attempt === 1) return "fail";
  return "complete";
};

/** Simulated work, 1..5 ms. */
const workMs = (job: Job.Job): number => 1 + (job.jobId % 5);

/** Demo jobs (not heartbeats) that are not finished yet. */
export const unfinishedDemoJobs = (state: State.State): number =>
  Event.jobStates
    .filter((jobState) => !Event.isTerminal(jobState))
    .reduce(
      (total, jobState) =>
        total +
        Query.jobsIn(state, jobState, demoQueue).filter((job) => job.worker === demoWorker).length,
      0,
    );

/** Tallies of this run. */
interface Tally {
  completed: number;
  discarded: number;
  retried: number;
  delivered: number;
  skipped: number;
}

/** How the run ended. */
type Outcome = "finished" | "duration" | "interrupted";

/** The run's settings, from the command line. */
interface Settings {
  readonly directory: string;
  readonly jobs: number;
  readonly durationMs: number;
  readonly workers: number;
  readonly durability: StoreOptions.DurabilityPolicy;
  readonly json: boolean;
}

/** True when `directory` holds no store yet (the engine will create one). */
const holdsNoStore = (directory: string) =>
  Effect.gen(function* () {
    const disk = yield* Disk.Disk;
    const marker = yield* Effect.either(disk.stat(Layout.markerPath(directory)));
    return marker._tag === "Left";
  });

const newJobs = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => ({
    queue: demoQueue,
    worker: demoWorker,
    args: new Map<string, Value.Value>([["n", from + index]]),
    maxAttempts: demoMaxAttempts,
  }));

/** Registers the heartbeat if missing; inserts `jobs` new jobs unless demo jobs are unfinished. */
const prepareWork = (
  engine: Engine.EngineService,
  jobs: number,
  say: (message: string) => Effect.Effect<void, never, Terminal>,
) =>
  Effect.gen(function* () {
    if ((yield* engine.schedule(heartbeatScheduleId)) === undefined) {
      yield* engine.registerSchedule(
        heartbeatScheduleId,
        {
          queue: demoQueue,
          worker: "heartbeat",
          args: null,
          priority: 0,
          maxAttempts: 1,
          everyMs: heartbeatEveryMs,
          cron: null,
          overlap: "skip",
        },
        0,
      );
      yield* say(
        `registered schedule ${heartbeatScheduleId} (every ${Text.duration(heartbeatEveryMs)})`,
      );
    }
    const left = unfinishedDemoJobs(yield* engine.state());
    if (left > 0) {
      yield* say(`resuming ${left} unfinished job(s); inserting none`);
      return;
    }
    const firstArg = (yield* engine.state()).lastJobId + 1;
    for (let done = 0; done < jobs; done += insertBatchJobs) {
      yield* engine.insertMany(newJobs(firstArg + done, Math.min(insertBatchJobs, jobs - done)));
    }
    yield* say(`inserted ${jobs} job(s) into queue ${demoQueue}`);
  });

/** One worker: claim, work, complete or fail, until `stopping`; the job in hand is always finished. */
const worker = (
  engine: Engine.EngineService,
  index: number,
  stopping: Ref.Ref<boolean>,
  tally: Tally,
) =>
  Effect.gen(function* () {
    while (!(yield* Ref.get(stopping))) {
      const [job] = yield* engine.claim(demoQueue, 1);
      if (job === undefined) {
        yield* Effect.sleep(Duration.millis(idleMs));
        continue;
      }
      yield* Effect.sleep(Duration.millis(workMs(job)));
      const done =
        behaviour(job) === "fail"
          ? yield* engine.fail(job.jobId, `demo failure on attempt ${job.attempt}`)
          : job.jobId % 2 === 0
            ? yield* engine.complete(job.jobId, new Map([["worker", index]]))
            : yield* engine.complete(job.jobId);
      // Heartbeat occurrences are counted as delivered, not as demo jobs.
      if (done.worker !== demoWorker) continue;
      if (done.state === "completed") tally.completed += 1;
      else if (done.state === "discarded") tally.discarded += 1;
      else tally.retried += 1;
    }
  });

/** Makes retries due and delivers heartbeat occurrences, forever. */
const ticker = (engine: Engine.EngineService, tally: Tally) =>
  Effect.gen(function* () {
    for (;;) {
      yield* Effect.sleep(Duration.millis(tickMs));
      const wake = yield* engine.nextWakeAt();
      if (wake === null || wake > (yield* Clock.currentTimeMillis)) continue;
      const ticked = yield* engine.tick();
      tally.delivered += ticked.delivered;
      tally.skipped += ticked.skipped;
    }
  });

/** Resolves once no demo job is unfinished. */
const allFinished = (engine: Engine.EngineService) =>
  Effect.gen(function* () {
    for (;;) {
      yield* Effect.sleep(Duration.millis(pollMs));
      if (unfinishedDemoJobs(yield* engine.state()) === 0) return "finished" as const;
    }
  });

/** The live progress line's text. */
const progressText = (
  engine: Engine.EngineService,
  startedAt: number,
  firstSequence: number,
  planned: number,
  tally: Tally,
) =>
  Effect.gen(function* () {
    const counts = (yield* engine.counts()).get(demoQueue);
    const elapsed = (yield* Clock.currentTimeMillis) - startedAt;
    const records = (yield* engine.log.stats()).lastSequence - firstSequence;
    return [
      `demo ${Text.duration(elapsed).padStart(6)}`,
      `finished ${tally.completed + tally.discarded}/${planned}`,
      `executing ${counts?.executing ?? 0}`,
      `available ${counts?.available ?? 0}`,
      `retrying ${(counts?.retryable ?? 0) + (counts?.scheduled ?? 0)}`,
      `heartbeats ${tally.delivered}`,
      `${Math.round((records * 1000) / Math.max(1, elapsed))} records/s`,
    ].join("  ");
  });

/** Writes the progress line: in place on a terminal, one line a second otherwise. */
const progress = (text: Effect.Effect<string>) =>
  Effect.gen(function* () {
    const terminal = yield* Terminal;
    for (;;) {
      yield* Effect.sleep(
        Duration.millis(terminal.isTerminal ? progressTerminalMs : progressPlainMs),
      );
      const current = yield* text;
      yield* terminal.isTerminal ? terminal.out(`\r\u001b[K${current}`) : line(current);
    }
  });

/**
 * Runs the pool until every demo job is finished, the duration passes, the
 * user interrupts, or a worker fails (its failure is the run's). Then stops
 * cleanly: workers finish the job in hand, the rest is interrupted, the
 * store flushed.
 */
const runPool = (engine: Engine.EngineService, settings: Settings) =>
  Effect.gen(function* () {
    const terminal = yield* Terminal;
    const tally: Tally = { completed: 0, discarded: 0, retried: 0, delivered: 0, skipped: 0 };
    const stopping = yield* Ref.make(false);
    const planned = unfinishedDemoJobs(yield* engine.state());
    const startedAt = yield* Clock.currentTimeMillis;
    const firstSequence = (yield* engine.log.stats()).lastSequence;
    const text = progressText(engine, startedAt, firstSequence, planned, tally);

    const workers = yield* Effect.forEach(
      Array.from({ length: settings.workers }, (_, index) => index),
      (index) => Effect.fork(worker(engine, index, stopping, tally)),
    );
    const ticking = yield* Effect.fork(ticker(engine, tally));
    const reporting = yield* Effect.fork(settings.json ? Effect.never : progress(text));
    const failedWorker = Effect.flatMap(Fiber.joinAll(workers), () => Effect.never);
    const outcome: Outcome = yield* Effect.raceFirst(
      Effect.raceFirst(allFinished(engine), failedWorker),
      Effect.raceFirst(
        Effect.as(Effect.sleep(Duration.millis(settings.durationMs)), "duration" as const),
        Effect.as(terminal.interrupted, "interrupted" as const),
      ),
    );
    yield* Ref.set(stopping, true);
    yield* Fiber.joinAll(workers);
    yield* Fiber.interrupt(ticking);
    yield* Fiber.interrupt(reporting);
    yield* engine.flush();
    if (terminal.isTerminal && !settings.json) yield* terminal.out(`\r\u001b[K${yield* text}\n`);
    const elapsedMs = (yield* Clock.currentTimeMillis) - startedAt;
    const records = (yield* engine.log.stats()).lastSequence - firstSequence;
    return { outcome, tally, elapsedMs, records };
  });

/** The status view of the running store. */
const filesOf = (engine: Engine.EngineService, directory: string) =>
  Effect.gen(function* () {
    const stats = yield* engine.log.stats();
    const generation = yield* engine.log.generation();
    const { report } = engine;
    return {
      path: directory,
      storeId: engine.log.storeId,
      epoch: generation.epoch,
      parentEpoch: report.parentEpoch,
      baseRecordCount: report.baseRecordCount,
      segments: stats.segments,
      records: stats.records,
      firstSequence: stats.firstSequence,
      lastSequence: stats.lastSequence,
      bytes: stats.bytes,
      orphanedGenerations: report.orphanedGenerations,
    } satisfies StatusFiles;
  });

/** Prints the summary and the status. */
const summarize = (
  engine: Engine.EngineService,
  settings: Settings,
  run: Effect.Effect.Success<ReturnType<typeof runPool>>,
) =>
  Effect.gen(function* () {
    const { outcome, tally, elapsedMs, records } = run;
    const state = yield* engine.state();
    const files = yield* filesOf(engine, settings.directory);
    const remaining = unfinishedDemoJobs(state);
    const finishedJobs = tally.completed + tally.discarded;
    const perSecond = (count: number) => Math.round((count * 1000) / Math.max(1, elapsedMs));
    if (settings.json) {
      return yield* line(
        Json.line({
          outcome,
          elapsed_ms: elapsedMs,
          jobs_finished: finishedJobs,
          completed: tally.completed,
          discarded: tally.discarded,
          retried: tally.retried,
          heartbeats_delivered: tally.delivered,
          heartbeats_skipped: tally.skipped,
          records,
          records_per_second: perSecond(records),
          jobs_per_second: perSecond(finishedJobs),
          unfinished: remaining,
          status: statusJson(files, state),
        }),
      );
    }
    const stopped =
      outcome === "interrupted"
        ? "interrupted (SIGINT)"
        : outcome === "duration"
          ? `duration of ${Text.duration(settings.durationMs)} reached`
          : "every job finished";
    yield* lines([
      "",
      `stopped: ${stopped}`,
      `this run: ${finishedJobs} job(s) finished (${tally.completed} completed, ${tally.discarded} discarded), ${tally.retried} retried, ${tally.delivered} heartbeat(s) delivered`,
      `throughput: ${records} record(s) in ${Text.duration(elapsedMs)} (${perSecond(records)} records/s, ${perSecond(finishedJobs)} jobs/s, durability ${settings.durability})`,
      ...(remaining > 0
        ? [`${remaining} job(s) unfinished: run tay demo ${settings.directory} again to continue`]
        : []),
      "",
      ...statusLines(files, state),
    ]);
  });

/** The whole demo over one store. */
const runDemo = (settings: Settings) =>
  Effect.gen(function* () {
    const say = (message: string) => (settings.json ? Effect.void : line(message));
    const fresh = yield* holdsNoStore(settings.directory);
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const engine = yield* Engine.open(settings.directory, {
          durability: settings.durability,
          createIfMissing: true,
        });
        const { report } = engine;
        if (fresh) yield* say(`initialized ${settings.directory}`);
        yield* say(
          `opened ${settings.directory} (store ${engine.log.storeId}, epoch ${report.epoch}, ${report.records} record(s) validated in ${Text.duration(report.validateMs + report.foldMs)})`,
        );
        if (report.rescued > 0) {
          yield* say(`rescued ${report.rescued} job(s) left executing by a stopped run`);
        }
        yield* prepareWork(engine, settings.jobs, say);
        const run = yield* runPool(engine, settings);
        yield* summarize(engine, settings, run);
        return run.outcome === "interrupted" ? exitCodes.interrupted : exitCodes.ok;
      }),
    );
  });

/** `tay demo DIR [--jobs N] [--duration D] [--workers N] [--durability P]`. */
export const demo: Command = {
  name: "demo",
  synopsis:
    "DIR [--jobs N] [--duration DURATION] [--workers N] [--durability maximal|segment|throughput] [--json]",
  summary:
    "run an in-process worker pool over a store (created if missing); Ctrl-C stops, rerun resumes",
  arguments: ["DIR"],
  options: [
    { name: "jobs", type: "string", value: "N", help: `jobs to insert (default ${jobsDefault})` },
    {
      name: "duration",
      type: "string",
      value: "DURATION",
      help: `stop after DURATION even if work remains (default ${Text.duration(durationMsDefault)})`,
    },
    {
      name: "workers",
      type: "string",
      value: "N",
      help: `worker fibers (default ${workersDefault})`,
    },
    {
      name: "durability",
      type: "string",
      value: "P",
      help: "maximal (fsync every batch, default), segment or throughput",
    },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const jobs =
        (yield* parsed(input, "jobs", (value) => parseInteger(value, 0, jobsMax))) ?? jobsDefault;
      const durationMs = (yield* parsed(input, "duration", parseDuration)) ?? durationMsDefault;
      const workers =
        (yield* parsed(input, "workers", (value) => parseInteger(value, 1, workersMax))) ??
        workersDefault;
      const durabilityName = text(input, "durability") ?? "maximal";
      const durability = durabilities.get(durabilityName);
      if (durability === undefined) {
        return yield* usage(
          input,
          `--durability: ${JSON.stringify(durabilityName)} is not maximal, segment or throughput`,
        );
      }
      return yield* runDemo({
        directory: argument(input, 0),
        jobs,
        durationMs,
        workers,
        durability,
        json: input.json,
      });
    }),
};
