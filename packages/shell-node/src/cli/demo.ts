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
import { Query, type Job, type Value } from "@tay/core";
import { Clock, Duration, Effect, Fiber, Ref } from "effect";
import { Disk } from "../Disk.js";
import * as Engine from "../Engine.js";
import * as Init from "../Init.js";
import * as Layout from "../Layout.js";
import type { DurabilityPolicy } from "../StoreOptions.js";
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
export const heartbeatEveryMs = 2_000;

export const jobsDefault = 300;
export const workersDefault = 8;
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
const durabilities: ReadonlyMap<string, DurabilityPolicy> = new Map([
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

const unfinished = (counts: Query.Counts | undefined): number =>
  counts === undefined
    ? 0
    : counts.scheduled + counts.available + counts.executing + counts.retryable;

/** Tallies of this run. */
interface Tally {
  completed: number;
  discarded: number;
  retried: number;
  delivered: number;
  skipped: number;
}

/** Creates the store when DIR is missing or holds nothing but a LOCK; true when it did. */
const prepare = (directory: string) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const stat = yield* Effect.either(disk.stat(directory));
    const fresh =
      stat._tag === "Left" ||
      (stat.right.type === "directory" &&
        (yield* disk.readDirectory(directory)).every((name) => name === Layout.lockName));
    if (fresh) yield* Init.init(directory);
    return fresh;
  });

const newJobs = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => ({
    queue: demoQueue,
    worker: demoWorker,
    args: new Map<string, Value.Value>([["n", from + index]]),
    maxAttempts: demoMaxAttempts,
  }));

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
      const directory = argument(input, 0);
      const jobCount =
        (yield* parsed(input, "jobs", (value) => parseInteger(value, 0, 1_000_000))) ?? jobsDefault;
      const durationMs = (yield* parsed(input, "duration", parseDuration)) ?? durationMsDefault;
      const workerCount =
        (yield* parsed(input, "workers", (value) => parseInteger(value, 1, 256))) ?? workersDefault;
      const durabilityName = text(input, "durability") ?? "maximal";
      const durability = durabilities.get(durabilityName);
      if (durability === undefined) {
        return yield* usage(
          input,
          `--durability: ${JSON.stringify(durabilityName)} is not maximal, segment or throughput`,
        );
      }
      const terminal = yield* Terminal;
      const say = (message: string) => (input.json ? Effect.void : line(message));

      if (yield* prepare(directory)) yield* say(`initialized ${directory}`);
      return yield* Effect.scoped(
        Effect.gen(function* () {
          const engine = yield* Engine.open(directory, { durability });
          const { store, report } = engine;
          yield* say(
            `opened ${directory} (store ${store.storeId}, epoch ${report.epoch}, ${report.records} record(s) validated in ${Text.duration(report.validateMs + report.foldMs)})`,
          );
          if (report.rescued > 0) {
            yield* say(`rescued ${report.rescued} job(s) left executing by a stopped run`);
          }
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
          const left = unfinished((yield* engine.counts()).get(demoQueue));
          if (left > 0) {
            yield* say(`resuming ${left} unfinished job(s); inserting none`);
          } else {
            const firstArg = (yield* engine.state()).lastJobId + 1;
            for (let done = 0; done < jobCount; done += insertBatchJobs) {
              yield* engine.insertMany(
                newJobs(firstArg + done, Math.min(insertBatchJobs, jobCount - done)),
              );
            }
            yield* say(`inserted ${jobCount} job(s) into queue ${demoQueue}`);
          }
          const planned = unfinished((yield* engine.counts()).get(demoQueue));
          const startedAt = yield* Clock.currentTimeMillis;
          const firstSequence = (yield* store.stats()).lastSequence;
          const tally: Tally = { completed: 0, discarded: 0, retried: 0, delivered: 0, skipped: 0 };
          const stopping = yield* Ref.make(false);

          const settle = (job: Job.Job) =>
            Effect.sync(() => {
              if (job.state === "completed") tally.completed += 1;
              else if (job.state === "discarded") tally.discarded += 1;
              else if (job.state === "retryable" || job.state === "available") tally.retried += 1;
            });

          const work = (index: number) =>
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
                    : job.jobId % 4 === 0
                      ? yield* engine.complete(job.jobId, new Map([["worker", index]]))
                      : yield* engine.complete(job.jobId);
                yield* settle(done);
              }
            });

          const ticker = Effect.gen(function* () {
            for (;;) {
              yield* Effect.sleep(Duration.millis(tickMs));
              const wake = yield* engine.nextWakeAt();
              if (wake === null || wake > (yield* Clock.currentTimeMillis)) continue;
              const ticked = yield* engine.tick();
              tally.delivered += ticked.delivered;
              tally.skipped += ticked.skipped;
            }
          });

          const progressLine = Effect.gen(function* () {
            const counts = (yield* engine.counts()).get(demoQueue);
            const elapsed = (yield* Clock.currentTimeMillis) - startedAt;
            const records = (yield* store.stats()).lastSequence - firstSequence;
            const finished = tally.completed + tally.discarded;
            return [
              `demo ${Text.duration(elapsed).padStart(6)}`,
              `finished ${finished}/${planned}`,
              `executing ${counts?.executing ?? 0}`,
              `available ${counts?.available ?? 0}`,
              `retrying ${(counts?.retryable ?? 0) + (counts?.scheduled ?? 0)}`,
              `heartbeats ${tally.delivered}`,
              `${Math.round((records * 1000) / Math.max(1, elapsed))} records/s`,
            ].join("  ");
          });

          const progress = Effect.gen(function* () {
            for (;;) {
              yield* Effect.sleep(
                Duration.millis(terminal.isTerminal ? progressTerminalMs : progressPlainMs),
              );
              const text = yield* progressLine;
              yield* terminal.isTerminal ? terminal.out(`\r\u001b[K${text}`) : line(text);
            }
          });

          const finished = Effect.gen(function* () {
            for (;;) {
              yield* Effect.sleep(Duration.millis(pollMs));
              if (unfinished((yield* engine.counts()).get(demoQueue)) === 0)
                return "finished" as const;
            }
          });

          const workers = yield* Effect.forEach(
            Array.from({ length: workerCount }, (_, index) => index),
            (index) => Effect.fork(work(index)),
          );
          const ticking = yield* Effect.fork(ticker);
          const reporting = yield* Effect.fork(input.json ? Effect.never : progress);
          const failedWorker = Effect.flatMap(Fiber.joinAll(workers), () => Effect.never);
          const outcome = yield* Effect.raceFirst(
            Effect.raceFirst(finished, failedWorker),
            Effect.raceFirst(
              Effect.as(Effect.sleep(Duration.millis(durationMs)), "duration" as const),
              Effect.as(terminal.interrupted, "interrupted" as const),
            ),
          );
          // Workers finish the job in hand; nothing is left executing.
          yield* Ref.set(stopping, true);
          yield* Fiber.joinAll(workers);
          yield* Fiber.interrupt(ticking);
          yield* Fiber.interrupt(reporting);
          yield* store.flush();
          if (terminal.isTerminal && !input.json)
            yield* terminal.out(`\r\u001b[K${yield* progressLine}\n`);

          const elapsedMs = (yield* Clock.currentTimeMillis) - startedAt;
          const stats = yield* store.stats();
          const records = stats.lastSequence - firstSequence;
          const state = yield* engine.state();
          const generation = yield* store.generation();
          const files: StatusFiles = {
            path: directory,
            storeId: store.storeId,
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
          const remaining = unfinished(Query.counts(state).get(demoQueue));
          const finishedJobs = tally.completed + tally.discarded;
          const perSecond = (count: number) => Math.round((count * 1000) / Math.max(1, elapsedMs));
          if (input.json) {
            yield* line(
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
          } else {
            yield* lines([
              "",
              `stopped: ${outcome === "interrupted" ? "interrupted (SIGINT)" : outcome === "duration" ? `duration of ${Text.duration(durationMs)} reached` : "every job finished"}`,
              `this run: ${finishedJobs} job(s) finished (${tally.completed} completed, ${tally.discarded} discarded), ${tally.retried} retried, ${tally.delivered} heartbeat(s) delivered`,
              `throughput: ${records} record(s) in ${Text.duration(elapsedMs)} (${perSecond(records)} records/s, ${perSecond(finishedJobs)} jobs/s, durability ${durability})`,
              ...(remaining > 0
                ? [`${remaining} job(s) unfinished: run tay demo ${directory} again to continue`]
                : []),
              "",
              ...statusLines(files, state),
            ]);
          }
          return outcome === "interrupted" ? exitCodes.interrupted : exitCodes.ok;
        }),
      );
    }),
};
