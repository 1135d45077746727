/**
 * The commands that change a store, for scripting: `init`, `insert`,
 * `schedule`, `cancel`, `retry`, `cancel-schedule`, `compact`. Each (but `init`)
 * opens the engine — taking the lock, so a store another process holds is
 * `Locked` — runs one command, prints what it produced, and closes the
 * store (flushed and synced) before exiting. When the process holding the
 * store serves it (LOCK names its socket), each goes through that server
 * instead (`served.ts`) and prints the same.
 */
import type { Wire } from "@tay/client";
import { Commands, Event, Limits } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type * as Scope from "effect/Scope";
import { type PgLog, PgSchema } from "@tay/log-postgres";
import { Bulk, type Disk, Engine, Init, JobEnd } from "@tay/shell-node";
import {
  argument,
  type Command,
  exitCodes,
  flag,
  type Input,
  parsed,
  parsedArgument,
  required,
  requiredParsed,
  text,
  usage,
} from "./command.js";
import { BulkStopped, JobNotCompleted, WaitFailed } from "./CliError.js";
import type { Failure } from "./describe.js";
import * as Json from "./json.js";
import { isUrl, pgEngine } from "./postgres.js";
import { printJob, printSchedule } from "./read.js";
import { type InsertedJob, servedCompaction, servedWriter, type Writer } from "./served.js";
import { line, lines, Terminal } from "./Terminal.js";
import * as Text from "./text.js";
import { noneOr, parseDuration, parseInteger, parseJsonValue, parseTime } from "./values.js";

const dirArgument = ["DIR"];

const priorityOf = (value: string) => parseInteger(value, Limits.priorityMin, Limits.priorityMax);
const maxAttemptsOf = (value: string) =>
  parseInteger(value, Limits.maxAttemptsMin, Limits.maxAttemptsMax);
const revisionOf = (value: string) => parseInteger(value, 0, Limits.idMax);
const jobIdOf = (value: string) => parseInteger(value, Limits.idMin, Limits.idMax);

/**
 * Runs `use` on the engine opened over `directory` for its scope; a note
 * says when the open rescued orphaned jobs (a previous process stopped
 * while they were executing).
 */
const withEngine = <A>(
  input: Input,
  use: (
    engine: Engine.EngineService,
  ) => Effect.Effect<A, Failure, Disk.Disk | Terminal | Scope.Scope>,
): Effect.Effect<A, Failure, Disk.Disk | Terminal> =>
  Effect.scoped(
    Effect.gen(function* () {
      // A command does what it names: no tick runs behind it.
      const engine = yield* Engine.open(argument(input, 0), { timers: false });
      if (engine.report.rescued > 0 && !input.json) {
        yield* line(
          `note: ${engine.report.rescued} job(s) found executing at open were failed (their process had stopped)`,
        );
      }
      const result = yield* use(engine);
      yield* engine.close();
      return result;
    }),
  );

/**
 * The writer of an engine this process opened (over a directory, or over
 * PostgreSQL): its own commands, and `Bulk`'s over its promise face.
 */
const engineWriter = <K extends Engine.FileLogKind | PgLog.PgKind>(
  engine: Engine.EngineService<K>,
  path: string,
  shared: boolean,
): Writer => {
  const stopped = (cause: unknown) => new BulkStopped({ path, cause });
  return {
    // Only a shared store (PostgreSQL) has other engines whose workers end jobs.
    whenEnded: shared
      ? (jobId) =>
          Effect.tryPromise({
            try: () => JobEnd.whenEnded(engine.promises, jobId),
            catch: (cause) => new WaitFailed({ path, jobId, cause }),
          })
      : undefined,
    insert: engine.insert,
    registerSchedule: engine.registerSchedule,
    cancel: engine.cancel,
    cancelSchedule: engine.cancelSchedule,
    redrive: engine.redrive,
    pauseQueue: engine.pauseQueue,
    resumeQueue: engine.resumeQueue,
    setQueueLimits: engine.setQueueLimits,
    redriveAll: (filter, options) =>
      Effect.tryPromise({
        try: () => Bulk.redriveAll(engine.promises, filter, options),
        catch: stopped,
      }),
    cancelAll: (filter, reason) =>
      Effect.tryPromise({
        try: () => Bulk.cancelAll(engine.promises, filter, reason),
        catch: stopped,
      }),
  };
};

/**
 * `inProcess`, or, when another process holds the store and serves it
 * (LOCK names its socket), `served` on its server's socket.
 */
const orServed = <A>(
  inProcess: Effect.Effect<A, Failure, Disk.Disk | Terminal>,
  served: (socket: string) => Effect.Effect<A, Failure, Disk.Disk | Terminal | Scope.Scope>,
): Effect.Effect<A, Failure, Disk.Disk | Terminal> =>
  inProcess.pipe(
    Effect.catchTag("Locked", (locked) => {
      const server = locked.holder?.server;
      return server === undefined ? Effect.fail(locked) : Effect.scoped(served(server.socket));
    }),
  );

/**
 * Runs `use` on the store's engine, or, when another process holds the
 * store and serves it (LOCK names its socket), on its server
 * (`served.ts`).
 */
export const withWriter = <A>(
  input: Input,
  use: (writer: Writer) => Effect.Effect<A, Failure, Disk.Disk | Terminal | Scope.Scope>,
): Effect.Effect<A, Failure, Disk.Disk | Terminal> =>
  isUrl(argument(input, 0))
    ? Effect.scoped(
        Effect.flatMap(pgEngine(argument(input, 0)), (engine) =>
          use(engineWriter(engine, argument(input, 0), true)),
        ),
      )
    : orServed(
        withEngine(input, (engine) => use(engineWriter(engine, argument(input, 0), false))),
        (socket) => Effect.flatMap(servedWriter(socket), use),
      );

/** `tay init DIR`. */
export const init: Command = {
  name: "init",
  synopsis: "DIR [--json]",
  summary: "create an empty store (DIR missing, or empty)",
  arguments: dirArgument,
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const target = argument(input, 0);
      const made = isUrl(target)
        ? { ...(yield* PgSchema.init(target)), createdAt: undefined }
        : yield* Init.init(target);
      if (input.json) {
        yield* line(
          Json.line({
            path: made.path,
            store_id: made.storeId,
            ...(made.createdAt === undefined ? {} : { created_at: made.createdAt }),
          }),
        );
      } else {
        yield* line(`initialized ${made.path} (store ${made.storeId})`);
      }
      return exitCodes.ok;
    }),
};

const jsonValue = (value: string) => parseJsonValue(value);

/** A duration of at least 1 ms (a timeout, a unique period, a window). */
const positiveDuration = (value: string) =>
  Either.flatMap(parseDuration(value), (ms) =>
    ms >= 1 ? Either.right(ms) : Either.left(`${JSON.stringify(value)} is shorter than 1 ms`),
  );

/** `--unique-key` and `--unique-period` as the insert takes them; a period needs a key. */
const uniqueOf = (input: Input) =>
  Effect.gen(function* () {
    const uniqueKey = text(input, "unique-key");
    const uniquePeriodMs = yield* parsed(input, "unique-period", positiveDuration);
    if (uniqueKey === undefined) {
      if (uniquePeriodMs !== undefined) {
        return yield* usage(input, "--unique-period needs --unique-key");
      }
      return {};
    }
    return { uniqueKey, ...(uniquePeriodMs === undefined ? {} : { uniquePeriodMs }) };
  });

/**
 * Prints what an insert answered: the job, and, when its unique key named
 * a job already there, that nothing was inserted (`duplicate` in JSON).
 */
const printInserted = (input: Input, job: InsertedJob) => {
  const duplicate = job.duplicate === true;
  if (input.json) return line(Json.line({ ...Json.job(job), duplicate }));
  if (!duplicate) return printJob(input, job);
  return Effect.zipRight(
    line(
      `duplicate: job ${job.jobId} holds unique key ${JSON.stringify(job.uniqueKey ?? "")} in queue ${Text.printable(job.queue)}; nothing was inserted`,
    ),
    printJob(input, job),
  );
};

/**
 * `tay insert --wait`: inserts, then waits for the job's end (a worker of
 * the process that serves the store, or of another engine on PostgreSQL,
 * runs it) and prints the job as it ended: exit 0 when completed,
 * `JobNotCompleted` (exit 1) when discarded or cancelled, 130 on SIGINT
 * (the insert itself is never cut: SIGINT is only heard by the wait).
 */
const insertAndWait = (input: Input, newJob: Commands.NewJob) =>
  withWriter(input, (writer) =>
    Effect.gen(function* () {
      const { whenEnded } = writer;
      if (whenEnded === undefined) {
        return yield* usage(
          input,
          "--wait needs a store another process serves (tay serve) or a postgres:// URL: while this command holds DIR, no worker can run the job",
        );
      }
      const inserted = yield* writer.insert(newJob);
      const terminal = yield* Terminal;
      const ended = yield* Effect.raceFirst(
        Effect.map(whenEnded(inserted.jobId), (job) => ({ job })),
        Effect.as(terminal.interrupted, undefined),
      );
      if (ended === undefined) return exitCodes.interrupted;
      const { job } = ended;
      yield* printInserted(input, { ...job, ...(inserted.duplicate ? { duplicate: true } : {}) });
      if (job.state === "completed") return exitCodes.ok;
      return yield* new JobNotCompleted({
        path: argument(input, 0),
        jobId: job.jobId,
        state: job.state,
        detail: job.state === "discarded" ? job.errors.at(-1)?.error : undefined,
      });
    }),
  );

/**
 * `tay insert DIR --queue Q --worker W --args JSON [--at TIME] [--priority P]
 * [--max-attempts N] [--unique-key KEY [--unique-period DURATION]] [--timeout DURATION]`.
 */
export const insert: Command = {
  name: "insert",
  synopsis:
    "DIR --queue Q --worker W --args JSON [--at TIME] [--priority P] [--max-attempts N] [--unique-key KEY [--unique-period DURATION]] [--timeout DURATION] [--wait] [--json]",
  summary: "insert one job and print it",
  arguments: dirArgument,
  options: [
    { name: "queue", type: "string", value: "Q", help: "the queue (1..255 UTF-8 bytes)" },
    { name: "worker", type: "string", value: "W", help: "the worker name (1..255 UTF-8 bytes)" },
    { name: "args", type: "string", value: "JSON", help: "the job's arguments as JSON" },
    {
      name: "at",
      type: "string",
      value: "TIME",
      help: "run at or after TIME (ISO-8601 or ms; default now)",
    },
    { name: "priority", type: "string", value: "P", help: "0 (first) .. 9 (default 0)" },
    {
      name: "max-attempts",
      type: "string",
      value: "N",
      help: `1..1000 (default ${Commands.maxAttemptsDefault})`,
    },
    {
      name: "unique-key",
      type: "string",
      value: "KEY",
      help: "while a job of the queue with KEY is not terminal, insert nothing and print that job",
    },
    {
      name: "unique-period",
      type: "string",
      value: "DURATION",
      help: "with --unique-key: also while one finished within DURATION",
    },
    {
      name: "timeout",
      type: "string",
      value: "DURATION",
      help: "the bound of one attempt (the worker aborts it, the engine fails it)",
    },
    {
      name: "wait",
      type: "boolean",
      help: "then wait for its end (a served store or a URL): exit 0 completed, 1 discarded or cancelled",
    },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const queue = yield* required(input, "queue");
      const worker = yield* required(input, "worker");
      const args = yield* requiredParsed(input, "args", jsonValue);
      const scheduledAt = yield* parsed(input, "at", parseTime);
      const priority = yield* parsed(input, "priority", priorityOf);
      const maxAttempts = yield* parsed(input, "max-attempts", maxAttemptsOf);
      const unique = yield* uniqueOf(input);
      const timeoutMs = yield* parsed(input, "timeout", positiveDuration);
      const newJob: Commands.NewJob = {
        queue,
        worker,
        args,
        ...(scheduledAt === undefined ? {} : { scheduledAt }),
        ...(priority === undefined ? {} : { priority }),
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
        ...unique,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      };
      if (flag(input, "wait")) return yield* insertAndWait(input, newJob);
      const job = yield* withWriter(input, (engine) => engine.insert(newJob));
      yield* printInserted(input, job);
      return exitCodes.ok;
    }),
};

/** `--catch-up-window`: a duration, or `none` (no window). */
const windowOf = noneOr(positiveDuration);

/**
 * `--timezone`, `--catch-up` and `--catch-up-window` as a registration takes
 * them: only those given, since any of them makes the registration schema 3
 * (EVENTS-V3.md; the engine refuses a zone it does not know, naming it).
 */
const catchUpOf = (input: Input) =>
  Effect.gen(function* () {
    const timezone = text(input, "timezone");
    const catchUp = text(input, "catch-up");
    if (catchUp !== undefined && !isCatchUp(catchUp)) {
      return yield* usage(
        input,
        `--catch-up: ${JSON.stringify(catchUp)} is not ${Event.catchUpPolicies.join(", ")}`,
      );
    }
    const catchUpWindowMs = yield* parsed(input, "catch-up-window", windowOf);
    return {
      ...(timezone === undefined ? {} : { timezone }),
      ...(catchUp === undefined ? {} : { catchUp }),
      ...(catchUpWindowMs === undefined ? {} : { catchUpWindowMs }),
    };
  });

const isCatchUp = (value: string): value is Event.CatchUp =>
  Event.catchUpPolicies.some((policy) => policy === value);

/** `tay schedule DIR --id ID --queue Q --worker W (--every D | --cron EXPR) ...`. */
export const schedule: Command = {
  name: "schedule",
  synopsis:
    'DIR --id ID --queue Q --worker W (--every DURATION | --cron "m h dom mon dow") [--args JSON] [--overlap allow|skip] [--priority P] [--max-attempts N] [--expect-revision N] [--timezone ZONE] [--catch-up once|skip|all] [--catch-up-window DURATION|none] [--json]',
  summary: "register or re-register a recurring schedule and print it",
  arguments: dirArgument,
  options: [
    { name: "id", type: "string", value: "ID", help: "the schedule id (1..255 UTF-8 bytes)" },
    { name: "queue", type: "string", value: "Q", help: "the queue its jobs go to" },
    { name: "worker", type: "string", value: "W", help: "the worker name of its jobs" },
    {
      name: "every",
      type: "string",
      value: "DURATION",
      help: "recur every DURATION (30s, 15m, 2h, 7d, or ms)",
    },
    {
      name: "cron",
      type: "string",
      value: "EXPR",
      help: "recur on a five-field cron, read in --timezone",
    },
    { name: "args", type: "string", value: "JSON", help: "its jobs' arguments (default null)" },
    {
      name: "overlap",
      type: "string",
      value: "allow|skip",
      help: "skip an occurrence while one is active (default allow)",
    },
    { name: "priority", type: "string", value: "P", help: "0..9 (default 0)" },
    {
      name: "max-attempts",
      type: "string",
      value: "N",
      help: `1..1000 (default ${Commands.maxAttemptsDefault})`,
    },
    {
      name: "expect-revision",
      type: "string",
      value: "N",
      help: "compare-and-set: the current revision (0: must be new)",
    },
    {
      name: "timezone",
      type: "string",
      value: "ZONE",
      help: 'the zone the cron is read in: an IANA zone ("Europe/Berlin") or UTC (default UTC)',
    },
    {
      name: "catch-up",
      type: "string",
      value: "once|skip|all",
      help: "what occurrences missed while no process ran become (default once)",
    },
    {
      name: "catch-up-window",
      type: "string",
      value: "DURATION|none",
      help: "how far back missed occurrences count (default: 1m for skip, none for all)",
    },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const scheduleId = yield* required(input, "id");
      const queue = yield* required(input, "queue");
      const worker = yield* required(input, "worker");
      const everyMs = yield* parsed(input, "every", parseDuration);
      const cron = text(input, "cron");
      if ((everyMs === undefined) === (cron === undefined)) {
        return yield* usage(input, "give exactly one of --every and --cron");
      }
      if (everyMs === 0) return yield* usage(input, "--every must be at least 1 ms");
      const overlap = text(input, "overlap") ?? "allow";
      if (overlap !== "allow" && overlap !== "skip") {
        return yield* usage(input, `--overlap: ${JSON.stringify(overlap)} is not allow or skip`);
      }
      const catchUp = yield* catchUpOf(input);
      const definition: Commands.ScheduleDefinitionInput = {
        queue,
        worker,
        args: (yield* parsed(input, "args", jsonValue)) ?? null,
        priority: (yield* parsed(input, "priority", priorityOf)) ?? Commands.priorityDefault,
        maxAttempts:
          (yield* parsed(input, "max-attempts", maxAttemptsOf)) ?? Commands.maxAttemptsDefault,
        everyMs: everyMs ?? null,
        cron: cron ?? null,
        overlap,
        ...catchUp,
      };
      const expected = yield* parsed(input, "expect-revision", revisionOf);
      const registered = yield* withWriter(input, (engine) =>
        engine.registerSchedule(scheduleId, definition, expected),
      );
      yield* printSchedule(input, registered);
      return exitCodes.ok;
    }),
};

/** `tay cancel DIR ID [--reason TEXT]`. */
export const cancel: Command = {
  name: "cancel",
  synopsis: "DIR ID [--reason TEXT] [--json]",
  summary: "cancel a job that is not terminal and print it",
  arguments: ["DIR", "ID"],
  options: [{ name: "reason", type: "string", value: "TEXT", help: "why (kept with the event)" }],
  run: (input) =>
    Effect.gen(function* () {
      const jobId = yield* parsedArgument(input, 1, "ID", jobIdOf);
      const reason = text(input, "reason");
      const job = yield* withWriter(input, (engine) => engine.cancel(jobId, reason));
      yield* printJob(input, job);
      return exitCodes.ok;
    }),
};

/** `tay retry DIR ID [--max-attempts N] [--reason TEXT]`: EVENTS-V3.md's redrive. */
export const retry: Command = {
  name: "retry",
  synopsis: "DIR ID [--max-attempts N] [--reason TEXT] [--json]",
  summary: "run a discarded or cancelled job again, keeping its history, and print it",
  arguments: ["DIR", "ID"],
  options: [
    {
      name: "max-attempts",
      type: "string",
      value: "N",
      help: "above the job's attempt (default: its own, or attempt + 1 when used up)",
    },
    { name: "reason", type: "string", value: "TEXT", help: "why (kept with the event)" },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const jobId = yield* parsedArgument(input, 1, "ID", jobIdOf);
      const maxAttempts = yield* parsed(input, "max-attempts", maxAttemptsOf);
      const reason = text(input, "reason");
      const job = yield* withWriter(input, (engine) =>
        engine.redrive(jobId, {
          ...(maxAttempts === undefined ? {} : { maxAttempts }),
          ...(reason === undefined ? {} : { reason }),
        }),
      );
      yield* printJob(input, job);
      return exitCodes.ok;
    }),
};

/** `tay cancel-schedule DIR ID [--expect-revision N]`. */
export const cancelSchedule: Command = {
  name: "cancel-schedule",
  synopsis: "DIR ID [--expect-revision N] [--json]",
  summary: "cancel a schedule and print it",
  arguments: ["DIR", "ID"],
  options: [
    {
      name: "expect-revision",
      type: "string",
      value: "N",
      help: "compare-and-set: the current revision",
    },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const scheduleId = argument(input, 1);
      const expected = yield* parsed(input, "expect-revision", revisionOf);
      const cancelled = yield* withWriter(input, (engine) =>
        engine.cancelSchedule(scheduleId, expected),
      );
      yield* printSchedule(input, cancelled);
      return exitCodes.ok;
    }),
};

/** Compacts the store in this process (it takes the lock): the report and the jobs kept and dropped. */
const compactInProcess = (input: Input, retentionMs: number) =>
  withEngine(input, (engine) =>
    Effect.gen(function* () {
      const report = yield* engine.compact(retentionMs);
      const compaction: Wire.Compaction = {
        epoch: report.epoch,
        parentEpoch: report.parentEpoch,
        firstSequence: report.firstSequence,
        baseRecordCount: report.baseRecordCount,
        baseSegments: report.baseSegments,
        removedEpochs: report.removedEpochs,
        notRemoved: report.notRemoved.map((failure) => ({
          epoch: failure.epoch,
          error: failure.error.message,
        })),
        pauseMs: report.pauseMs,
        jobsKept: report.jobsKept,
        jobsDropped: report.jobsDropped,
      };
      return compaction;
    }),
  );

/**
 * Compacts a PostgreSQL store through an engine over it (no timers, no
 * rescue): the log's report and the jobs kept and dropped. Other engines
 * on the store must be reopened afterwards (docs/postgres.md).
 */
const compactPg = (url: string, retentionMs: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const engine = yield* pgEngine(url);
      const report = yield* engine.compact(retentionMs);
      yield* engine.close();
      return report;
    }),
  );

/** Prints a PostgreSQL compaction: no segments there, the base's rows and bytes instead. */
const printPgCompaction = (
  input: Input,
  report: Effect.Effect.Success<ReturnType<typeof compactPg>>,
) => {
  const { jobsKept: kept, jobsDropped: dropped } = report;
  if (input.json) {
    return line(
      Json.line({
        epoch: report.epoch,
        parent_epoch: report.epoch - 1,
        first_sequence: report.firstSequence,
        base_record_count: report.baseRecords,
        base_bytes: report.baseBytes,
        jobs_kept: kept,
        jobs_dropped: dropped,
        removed_epochs: [...report.removed],
        not_removed: report.notRemoved.map((epoch) => ({ epoch })),
        pause_ms: report.pauseMs,
      }),
    );
  }
  return lines([
    `compacted into epoch ${report.epoch} (parent ${report.epoch - 1})`,
    ...Text.fields([
      ["first sequence", `${report.firstSequence}`],
      ["base records", `${report.baseRecords} (${Text.bytes(report.baseBytes)})`],
      ["jobs kept", `${kept}`],
      ["jobs dropped", `${dropped}`],
      ["removed epochs", report.removed.join(", ") || "-"],
      ["appends paused", Text.duration(report.pauseMs)],
    ]),
    ...report.notRemoved.map(
      (epoch) => `not removed: epoch ${epoch}; the next compaction removes its rows`,
    ),
  ]);
};

/** `tay compact DIR --retention DURATION`. */
export const compact: Command = {
  name: "compact",
  synopsis: "DIR --retention DURATION [--json]",
  summary: "write a new generation without terminal jobs finished more than DURATION ago",
  arguments: dirArgument,
  options: [
    {
      name: "retention",
      type: "string",
      value: "DURATION",
      help: "keep terminal jobs finished within DURATION (30s, 15m, 2h, 7d, or ms)",
    },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const retentionMs = yield* requiredParsed(input, "retention", parseDuration);
      if (isUrl(argument(input, 0))) {
        yield* printPgCompaction(input, yield* compactPg(argument(input, 0), retentionMs));
        return exitCodes.ok;
      }
      const report = yield* orServed(compactInProcess(input, retentionMs), (socket) =>
        servedCompaction(socket, retentionMs),
      );
      const { jobsDropped: dropped, jobsKept: kept } = report;
      if (input.json) {
        yield* line(
          Json.line({
            epoch: report.epoch,
            parent_epoch: report.parentEpoch,
            first_sequence: report.firstSequence,
            base_record_count: report.baseRecordCount,
            base_segments: report.baseSegments,
            jobs_kept: kept,
            jobs_dropped: dropped,
            removed_epochs: [...report.removedEpochs],
            not_removed: report.notRemoved,
            pause_ms: report.pauseMs,
          }),
        );
        return exitCodes.ok;
      }
      yield* lines([
        `compacted into epoch ${report.epoch} (parent ${report.parentEpoch})`,
        ...Text.fields([
          ["first sequence", `${report.firstSequence}`],
          ["base records", `${report.baseRecordCount} in ${report.baseSegments} segment(s)`],
          ["jobs kept", `${kept}`],
          ["jobs dropped", `${dropped}`],
          ["removed epochs", report.removedEpochs.join(", ") || "-"],
          ["appends paused", Text.duration(report.pauseMs)],
        ]),
        ...report.notRemoved.map(
          (failure) =>
            `not removed: epoch ${failure.epoch} (${failure.error}); the next compaction removes it`,
        ),
      ]);
      return exitCodes.ok;
    }),
};
