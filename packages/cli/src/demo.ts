/**
 * `tay demo DIR`: the newcomer's tour. Opens the store (initialising DIR
 * when it is missing or empty), registers a heartbeat schedule, inserts a
 * few hundred jobs, and runs them on the worker runtime (`Worker.run`): one
 * worker on queue `demo` whose concurrency is `--workers`, with a handler
 * that completes or fails each job (a deterministic fraction fails once, a
 * smaller one always, and is discarded after its last attempt). Nothing
 * polls: the worker's claim waits in the engine, and the engine's timers
 * make retries due and deliver the schedule's occurrences. A progress line
 * follows the run; at the end it prints the throughput and the status.
 *
 * It stops when every job is finished, after `--duration`, or on SIGINT:
 * the worker closes gracefully (it claims nothing more, running handlers
 * finish), the store is flushed and closed (LOCK released), a summary is
 * printed, and the exit status is 130 for SIGINT. No job is left
 * executing. Running it again resumes: unfinished jobs are processed (ones
 * left executing by a killed run are failed and retried by the engine at
 * open) and no new ones are inserted until none is left.
 *
 * DIR may be a postgres:// URL: the same tour over a PostgreSQL store
 * (created when missing), whose acknowledgements wait for its
 * `synchronous_commit` instead of a durability policy.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Event, type Job, Query, type State, type Value } from "@tay/core";
import * as Clock from "effect/Clock";
import * as Deferred from "effect/Deferred";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Fiber from "effect/Fiber";
import * as Stream from "effect/Stream";
import { PgLog, PgSchema } from "@tay/log-postgres";
import {
  Disk,
  Engine,
  Layout,
  type Log,
  StateProjection,
  type StoreOptions,
  Worker,
} from "@tay/shell-node";
import { argument, type Command, exitCodes, parsed, text, usage } from "./command.js";
import * as Json from "./json.js";
import { isUrl, reportFields, reportJson } from "./postgres.js";
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
/** The heartbeat schedule's worker name. */
export const heartbeatWorker = "heartbeat";
/** The heartbeat's period. */
export const heartbeatEveryMs = 2_000;
/** A queue nothing is inserted into: the demo parks a claim on it to learn that the store failed. */
export const watchQueue = "demo-watch";

/** Jobs a fresh run inserts (`--jobs`), and the most it accepts. */
export const jobsDefault = 300;
export const jobsMax = 1_000_000;
/** Handlers at once, the worker's concurrency (`--workers`), and the most it accepts. */
export const workersDefault = 8;
export const workersMax = 256;
/** A safety cap: the default run finishes in a few seconds, well before it. */
export const durationMsDefault = 60_000;
/** Attempts of a demo job: the always-failing ones are discarded after the third. */
export const demoMaxAttempts = 3;
/** Jobs per insert mutation. */
export const insertBatchJobs = 500;

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
  /** The store: a directory, or a postgres:// URL. */
  readonly directory: string;
  readonly jobs: number;
  readonly durationMs: number;
  readonly workers: number;
  readonly durability: StoreOptions.DurabilityPolicy;
  readonly json: boolean;
}

/** The store's status at the end of the run, as JSON and as lines. */
interface StoreStatus {
  readonly json: Json.JsonObject;
  readonly lines: ReadonlyArray<string>;
  /** What an acknowledgement waited for: the durability policy, or synchronous_commit. */
  readonly durability: string;
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
const prepareWork = <K extends Log.Kind>(
  engine: Engine.EngineService<K>,
  jobs: number,
  say: (message: string) => Effect.Effect<void, never, Terminal>,
) =>
  Effect.gen(function* () {
    if ((yield* engine.schedule(heartbeatScheduleId)) === undefined) {
      yield* engine.registerSchedule(
        heartbeatScheduleId,
        {
          queue: demoQueue,
          worker: heartbeatWorker,
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

/**
 * Numbers for the handlers running at once, lowest free first: the result
 * of an even job names the one that ran it (0 to `--workers` - 1, since the
 * worker never runs more at once).
 */
const handlerNumbers = () => {
  const busy = new Set<number>();
  return {
    take: (): number => {
      let number = 0;
      while (busy.has(number)) number += 1;
      busy.add(number);
      return number;
    },
    release: (number: number): void => {
      busy.delete(number);
    },
  };
};

/**
 * The demo's handler (for its jobs and the heartbeats): works 1..5 ms, then
 * fails or completes as `behaviour` says; even ids complete with a result.
 * The work stops when the signal aborts (a close that ran out of time).
 */
const demoHandler = (): Worker.Handler<Worker.Plain> => {
  const numbers = handlerNumbers();
  return async (job, { signal }) => {
    const number = numbers.take();
    try {
      await sleep(workMs(job.job), undefined, { signal });
      if (behaviour(job.job) === "fail") {
        throw new Error(`demo failure on attempt ${job.attempt}`);
      }
      return job.jobId % 2 === 0 ? { worker: number } : undefined;
    } finally {
      numbers.release(number);
    }
  };
};

/** Counts a demo job's end (heartbeats are counted as delivered, not here). */
const countEnd = (tally: Tally, job: Job.Job): void => {
  if (job.worker !== demoWorker) return;
  if (job.state === "completed") tally.completed += 1;
  else if (job.state === "discarded") tally.discarded += 1;
  else tally.retried += 1;
};

/** Why a run stops early: an end the worker could not record, or the store failing. */
type Stop<K extends Log.Kind> =
  | { readonly _tag: "Unrecorded"; readonly jobId: number; readonly error: string }
  | { readonly _tag: "StoreFailed"; readonly error: Engine.EngineError<K> };

/**
 * The worker's events, told to the tally: resolves `finished` once the
 * run's `planned` demo jobs are all finished, and `stopped` at the first
 * end the engine did not record.
 */
const onWorkerEvent =
  <K extends Log.Kind>(
    tally: Tally,
    planned: number,
    finished: Deferred.Deferred<void>,
    stopped: Deferred.Deferred<Stop<K>>,
  ) =>
  (event: Worker.WorkerEvent): void => {
    if (event._tag === "Unrecorded") {
      const stop: Stop<K> = { _tag: "Unrecorded", jobId: event.job.jobId, error: event.error };
      Deferred.unsafeDone(stopped, Effect.succeed(stop));
      return;
    }
    // Started, and Stale (an attempt someone else ended: the demo cancels none), change no tally.
    // Halted: the store failed, which `watchStore` reports with the log's typed error.
    // ClaimFailed: only a remote worker tells it.
    if (
      event._tag === "Started" ||
      event._tag === "Stale" ||
      event._tag === "Halted" ||
      event._tag === "ClaimFailed"
    )
      return;
    countEnd(tally, event.job);
    // Only this process writes the store (it holds the lock), so each of the
    // planned jobs finishes exactly once in this run.
    if (tally.completed + tally.discarded >= planned) Deferred.unsafeDone(finished, Effect.void);
  };

/**
 * Resolves `stopped` once the store takes no more appends (its writer
 * failed). The worker tells it too (`Halted`), but its `cause` is not
 * typed; the demo parks a claim of its own, on a queue nothing is
 * inserted into, to fail the run with the log's own typed error: the
 * engine refuses every parked claim with it when the log fails. Answered
 * with nothing once `signal` aborts.
 */
const watchStore = <K extends Log.Kind>(
  engine: Engine.EngineService<K>,
  signal: AbortSignal,
  stopped: Deferred.Deferred<Stop<K>>,
) =>
  Effect.catchAll(
    Effect.asVoid(engine.nextJobs([{ queue: watchQueue, limit: 1 }], { signal })),
    (error) => Deferred.succeed(stopped, { _tag: "StoreFailed", error }),
  );

/** An early stop as the run's failure: the store's own error, or a defect when the store is well. */
const failedRun = <K extends Log.Kind>(stop: Stop<K>) =>
  stop._tag === "StoreFailed"
    ? Effect.fail(stop.error)
    : Effect.dieMessage(`the end of job ${stop.jobId} was not recorded: ${stop.error}`);

/** Counts the heartbeat schedule's occurrences, delivered or skipped, from `from` on. */
const countHeartbeats = <K extends Log.Kind>(
  engine: Engine.EngineService<K>,
  tally: Tally,
  from: number,
) =>
  // A subscription that fails (a read error) only stops the count.
  Effect.ignore(
    Stream.runForEach(engine.subscribe({ from }), ({ event }) =>
      Effect.sync(() => {
        if (event._tag !== "OccurrenceAdvanced" || event.scheduleId !== heartbeatScheduleId) return;
        if (event.outcome === "delivered") tally.delivered += 1;
        else tally.skipped += 1;
      }),
    ),
  );

/** The live progress line's text. */
const progressText = <K extends Log.Kind>(
  engine: Engine.EngineService<K>,
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
 * Runs the worker until every demo job is finished, the duration passes,
 * the user interrupts, or the run stops early (`Stop`). Then stops cleanly:
 * the worker closes and the store is flushed; an early stop then fails the
 * run with the store's error.
 */
const runWorker = <K extends Log.Kind>(engine: Engine.EngineService<K>, settings: Settings) =>
  Effect.gen(function* () {
    const terminal = yield* Terminal;
    const tally: Tally = { completed: 0, discarded: 0, retried: 0, delivered: 0, skipped: 0 };
    const planned = unfinishedDemoJobs(yield* engine.state());
    const startedAt = yield* Clock.currentTimeMillis;
    const firstSequence = (yield* engine.log.stats()).lastSequence;
    const text = progressText(engine, startedAt, firstSequence, planned, tally);
    const finished = yield* Deferred.make<void>();
    const stopped = yield* Deferred.make<Stop<K>>();
    if (planned === 0) yield* Deferred.succeed(finished, undefined);

    const counting = yield* Effect.fork(countHeartbeats(engine, tally, firstSequence + 1));
    const watching = new AbortController();
    const watch = yield* Effect.fork(watchStore(engine, watching.signal, stopped));
    // One handler for both names: they share its numbers.
    const handler = demoHandler();
    const worker = yield* Worker.run(engine, {
      queues: { [demoQueue]: settings.workers },
      handlers: { [demoWorker]: handler, [heartbeatWorker]: handler },
      onEvent: onWorkerEvent(tally, planned, finished, stopped),
      // The options are the command line's, checked: a refusal is a bug.
    }).pipe(Effect.orDie);
    const reporting = yield* Effect.fork(settings.json ? Effect.never : progress(text));
    const outcome = yield* Effect.raceAll([
      Effect.as(Deferred.await(finished), "finished" as const),
      Effect.as(Deferred.await(stopped), "stopped" as const),
      Effect.as(Effect.sleep(Duration.millis(settings.durationMs)), "duration" as const),
      Effect.as(terminal.interrupted, "interrupted" as const),
    ]);
    // The worker's close leaves no job executing: a claim decided as it began is run (claimLoop.ts).
    yield* worker.close();
    watching.abort();
    yield* Fiber.interrupt(watch);
    yield* Fiber.interrupt(reporting);
    yield* Fiber.interrupt(counting);
    yield* engine.flush();
    if (outcome === "stopped") return yield* failedRun(yield* Deferred.await(stopped));
    if (terminal.isTerminal && !settings.json) yield* terminal.out(`\r\u001b[K${yield* text}\n`);
    const elapsedMs = (yield* Clock.currentTimeMillis) - startedAt;
    const records = (yield* engine.log.stats()).lastSequence - firstSequence;
    return { outcome: outcome satisfies Outcome, tally, elapsedMs, records };
  });

/** The status view of the running file store. */
const fileStatus = (engine: Engine.EngineService, settings: Settings) => (state: State.State) =>
  Effect.gen(function* () {
    const directory = settings.directory;
    const stats = yield* engine.log.stats();
    const generation = yield* engine.log.generation();
    const { report } = engine;
    const files: StatusFiles = {
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
    };
    return {
      json: statusJson(files, state),
      lines: statusLines(files, state),
      durability: `durability ${settings.durability}`,
    } satisfies StoreStatus;
  });

/** The status view of the running PostgreSQL store: its open report brought up to now. */
const pgStatus = (engine: Engine.EngineService<PgLog.PgKind>) => (state: State.State) =>
  Effect.gen(function* () {
    const stats = yield* engine.log.stats();
    const generation = yield* engine.log.generation();
    const report: PgLog.PgReport = {
      ...engine.report,
      epoch: generation.epoch,
      firstSequence: stats.firstSequence,
      lastSequence: stats.lastSequence,
      records: stats.records,
      bytes: stats.bytes,
    };
    return {
      json: reportJson(report, state),
      lines: [`store: ${report.path}`, ...Text.fields(reportFields(report, state))],
      durability: `synchronous_commit ${report.synchronousCommit}`,
    } satisfies StoreStatus;
  });

/** Prints the summary and the status. */
const summarize = <K extends Log.Kind>(
  engine: Engine.EngineService<K>,
  settings: Settings,
  run: Finished,
  statusOf: (state: State.State) => Effect.Effect<StoreStatus>,
) =>
  Effect.gen(function* () {
    const { outcome, tally, elapsedMs, records } = run;
    const state = yield* engine.state();
    const status = yield* statusOf(state);
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
          status: status.json,
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
      `throughput: ${records} record(s) in ${Text.duration(elapsedMs)} (${perSecond(records)} records/s, ${perSecond(finishedJobs)} jobs/s, ${status.durability})`,
      ...(remaining > 0
        ? [`${remaining} job(s) unfinished: run tay demo ${settings.directory} again to continue`]
        : []),
      "",
      ...status.lines,
    ]);
  });

/** What a run that was not stopped early reports. */
interface Finished {
  readonly outcome: Outcome;
  readonly tally: Tally;
  readonly elapsedMs: number;
  readonly records: number;
}

/** The work, the run and the summary, on an opened engine; the exit status. */
const demoOn = <K extends Log.Kind>(
  engine: Engine.EngineService<K>,
  settings: Settings,
  say: (message: string) => Effect.Effect<void, never, Terminal>,
  statusOf: (state: State.State) => Effect.Effect<StoreStatus>,
) =>
  Effect.gen(function* () {
    yield* prepareWork(engine, settings.jobs, say);
    const run = yield* runWorker(engine, settings);
    yield* summarize(engine, settings, run, statusOf);
    return run.outcome === "interrupted" ? exitCodes.interrupted : exitCodes.ok;
  });

/** The whole demo over the store in a directory. */
const runFileDemo = (settings: Settings) =>
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
        return yield* demoOn(engine, settings, say, fileStatus(engine, settings));
      }),
    );
  });

/**
 * The whole demo over a PostgreSQL store (created when the URL's schema or
 * store is missing): the engine with its timers and, at open, the rescue
 * of jobs a stopped run left executing. The demo takes the store as its
 * own: run it on a store no other engine uses (docs/postgres.md, "The CLI").
 */
const runPgDemo = (settings: Settings) =>
  Effect.gen(function* () {
    const url = settings.directory;
    const say = (message: string) => (settings.json ? Effect.void : line(message));
    const created = yield* Effect.either(PgSchema.init(url));
    if (created._tag === "Left" && created.left._tag !== "StoreExists") {
      return yield* Effect.fail(created.left);
    }
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const recovered = yield* PgLog.open(url, {}, StateProjection.foldProjection);
        const engine = yield* Engine.fromLog(recovered, { rescueOnOpen: true });
        const { report } = engine;
        if (created._tag === "Right") yield* say(`initialized ${report.path}`);
        yield* say(
          `opened ${report.path} (store ${report.storeId}, epoch ${report.epoch}, ${report.records} record(s) checked in ${Text.duration(report.openMs)})`,
        );
        if (report.rescued > 0) {
          yield* say(`rescued ${report.rescued} job(s) left executing by a stopped run`);
        }
        return yield* demoOn(engine, settings, say, pgStatus(engine));
      }),
    );
  });

/** The whole demo over one store: a directory, or a postgres:// URL. */
const runDemo = (settings: Settings) =>
  isUrl(settings.directory) ? runPgDemo(settings) : runFileDemo(settings);

/** `tay demo DIR [--jobs N] [--duration D] [--workers N] [--durability P]`. */
export const demo: Command = {
  name: "demo",
  synopsis:
    "DIR|URL [--jobs N] [--duration DURATION] [--workers N] [--durability maximal|segment|throughput] [--json]",
  summary:
    "run jobs on an in-process worker over a store (created if missing; a directory or a postgres:// URL); Ctrl-C stops, rerun resumes",
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
      help: `handlers at once, the worker's concurrency (default ${workersDefault})`,
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
      if (isUrl(argument(input, 0)) && text(input, "durability") !== undefined) {
        return yield* usage(
          input,
          "--durability is the file store's; a postgres:// store acknowledges at its synchronous_commit",
        );
      }
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
