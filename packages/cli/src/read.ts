/**
 * The read commands: `status`, `verify`, `dump`, `jobs`, `job`,
 * `schedules`, `queues`. Each inspects the store read-only (no lock, no writer), so
 * it works while another process holds the store, and none writes a byte.
 */
import { Event, type Job, Query, type Schedule, State } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { Limits } from "@tay/core";
import { PgCopy } from "@tay/log-postgres";
import { Recovery, StateProjection } from "@tay/shell-node";
import { CompactedWhileDumped, JobNotFound } from "./CliError.js";
import { DumpLines, type DumpStop } from "./dumpLines.js";
import { JobLines } from "./jobLines.js";
import { type ServedProgress, servedProgress } from "./servedProgress.js";
import {
  argument,
  type Command,
  exitCodes,
  type Input,
  parsed,
  parsedArgument,
  text,
  usage,
} from "./command.js";
import { errorJson, type Failure } from "./describe.js";
import { inspectPg, inspectState, isUrl, reportFields, reportJson } from "./postgres.js";
import { keptTail, leanStateAt, listed, withAtRest } from "./atRest.js";
import {
  type HistoryEntry,
  historyTap,
  type JobAndHistory,
  jobAtRest,
  jobFolded,
} from "./jobHistory.js";
import { inspect, retryTransient, tapped } from "./inspect.js";
import * as Json from "./json.js";
import { shownQueueState, shownQueueStateJson, statusJson, statusLines } from "./status.js";
import { line, lines } from "./Terminal.js";
import * as Text from "./text.js";
import { foldForJob, foldForListing } from "./listingFold.js";
import { parseInteger } from "./values.js";

const dirArgument = ["DIR"];

const sequenceOf = (text: string) => parseInteger(text, 1, Number.MAX_SAFE_INTEGER);
const limitOf = (text: string) => parseInteger(text, 0, Number.MAX_SAFE_INTEGER);
const jobIdOf = (text: string) => parseInteger(text, Limits.idMin, Limits.idMax);

/**
 * `status` and `verify` of a PostgreSQL store: open it (every row checked
 * and folded) and print the report; `verify --json` says `valid: false`
 * with the error before failing, as for a directory.
 */
const pgReport = (input: Input, heading: "store" | "valid") =>
  Effect.gen(function* () {
    // Both fold lean (completed jobs as their facts): the lean fold counts and refuses exactly
    // as the whole fold (core's Lean.test.ts), in a fraction of the memory (docs/cli.md).
    const projection = StateProjection.leanFoldProjection;
    const result = yield* Effect.either(inspectPg(argument(input, 0), projection));
    if (Either.isLeft(result)) {
      if (input.json && heading === "valid") {
        yield* line(Json.line({ valid: false, error: errorJson(result.left) }));
      }
      return yield* Effect.fail(result.left);
    }
    const { report, state } = result.right;
    if (input.json) {
      const json = reportJson(report, state);
      yield* line(Json.line(heading === "valid" ? { valid: true, ...json } : json));
    } else {
      yield* lines([`${heading}: ${report.path}`, ...Text.fields(reportFields(report, state))]);
    }
    return exitCodes.ok;
  });

/** `tay status DIR`. */
export const status: Command = {
  name: "status",
  synopsis: "DIR [--json]",
  summary: "the recovery report: store id, epoch, segments, sequences, bytes, jobs, schedules",
  arguments: dirArgument,
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      if (isUrl(argument(input, 0))) return yield* pgReport(input, "store");
      // Counts need no completed job's record: the lean fold (issue 19).
      yield* withAtRest(argument(input, 0), false, ({ state, report }) =>
        input.json ? line(Json.line(statusJson(report, state))) : lines(statusLines(report, state)),
      );
      return exitCodes.ok;
    }),
};

const verifyJson = (report: Recovery.RecoveryReport, state: State.State) => ({
  valid: true,
  path: report.path,
  store_id: report.storeId,
  epoch: report.epoch,
  segments: report.segments,
  records: report.records,
  first_sequence: report.firstSequence,
  last_sequence: report.lastSequence,
  bytes: report.bytes,
  validate_ms: report.validateMs,
  fold_ms: report.foldMs,
  jobs: State.jobCount(state),
  schedules: state.schedules.size,
  orphaned_generations: report.orphanedGenerations.map((orphan) => ({
    epoch: orphan.epoch,
    kind: orphan.kind,
  })),
  staged_segment: report.stagedSegment,
});

/** `tay verify DIR`: exit 0 valid, 1 invalid (with the typed reason), 2 usage. */
export const verify: Command = {
  name: "verify",
  synopsis: "DIR [--json]",
  summary: "validate every byte and fold the history, without taking the writer role",
  arguments: dirArgument,
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const directory = argument(input, 0);
      if (isUrl(directory)) return yield* pgReport(input, "valid");
      // Every record checked, the history folded lean: the whole fold's verdict and counts,
      // without every completed job's record in memory (docs/cli.md, "tay verify DIR").
      const result = yield* Effect.either(inspect(directory, StateProjection.leanFoldProjection));
      if (Either.isLeft(result)) {
        if (input.json) {
          yield* line(Json.line({ valid: false, error: errorJson(result.left) }));
        }
        return yield* Effect.fail(result.left);
      }
      const { report, state } = result.right;
      if (input.json) {
        yield* line(Json.line(verifyJson(report, state)));
        return exitCodes.ok;
      }
      yield* lines([
        `valid: ${report.path}`,
        ...Text.fields([
          ["store id", report.storeId],
          ["epoch", `${report.epoch}`],
          ["segments", `${report.segments}`],
          [
            "records",
            `${report.records} (sequences ${report.firstSequence}..${report.lastSequence})`,
          ],
          ["bytes", `${report.bytes} (${Text.bytes(report.bytes)})`],
          ["jobs", `${State.jobCount(state)}`],
          ["schedules", `${state.schedules.size}`],
          [
            "checked in",
            `${Text.duration(report.validateMs)} (+ ${Text.duration(report.foldMs)} folding)`,
          ],
        ]),
        ...report.orphanedGenerations.map(
          (orphan) =>
            `orphaned generation ${orphan.epoch} (${orphan.kind}): removed by the next compaction`,
        ),
        ...(report.stagedSegment === null
          ? []
          : [
              `staged segment (ignored): ${report.stagedSegment}: removed when the next segment is created`,
            ]),
      ]);
      return exitCodes.ok;
    }),
};

/** The dump's own stop: `--limit` reached is done; another generation on a retry is refused. */
const dumpStopped = (directory: string, reason: DumpStop): Effect.Effect<void, Failure> =>
  reason._tag === "Enough"
    ? Effect.void
    : Effect.fail(new CompactedWhileDumped({ path: directory, ...reason }));

/** Reads the store at `directory` (or URL) into `dumped`, printing each batch's lines. */
const readDump = (directory: string, dumped: DumpLines) => {
  const afterBatch = () => dumped.flush();
  // Every record's own CRCs are checked before its line is printed (the
  // inspection's default, "checked"): a line out is a record accepted.
  return isUrl(directory)
    ? PgCopy.read(directory, {}, dumped.projection, afterBatch).pipe(
        Effect.asVoid,
        Effect.catchTag("HistoryRejected", (rejected) => dumpStopped(directory, rejected.reason)),
      )
    : retryTransient(Recovery.inspect(directory, {}, dumped.projection, afterBatch)).pipe(
        Effect.asVoid,
        Effect.catchTag("HistoryRejected", (rejected) => dumpStopped(directory, rejected.reason)),
      );
};

/** `tay dump DIR [--from SEQ] [--limit N]`: records as JSON lines, printed as they are read. */
export const dump: Command = {
  name: "dump",
  synopsis: "DIR [--from SEQ] [--limit N]",
  summary: "the current generation's records as JSON lines (a mutation shows its inner events)",
  arguments: dirArgument,
  options: [
    {
      name: "from",
      type: "string",
      value: "SEQ",
      help: "first sequence to show (default: the first)",
    },
    { name: "limit", type: "string", value: "N", help: "at most N records (default: all)" },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const directory = argument(input, 0);
      const from = (yield* parsed(input, "from", sequenceOf)) ?? 1;
      const limit = (yield* parsed(input, "limit", limitOf)) ?? Number.MAX_SAFE_INTEGER;
      const dumped = new DumpLines(from, limit);
      // The lines before a fault are printed, then the fault.
      yield* Effect.ensuring(readDump(directory, dumped), dumped.flush());
      return exitCodes.ok;
    }),
};

const stateOf = (input: Input, name: string | undefined) =>
  name === undefined
    ? Effect.succeed(undefined)
    : Effect.fromNullable(Event.jobStates.find((state) => state === name)).pipe(
        Effect.mapError(() =>
          usage(
            input,
            `--state: ${JSON.stringify(name)} is not one of ${Event.jobStates.join(", ")}`,
          ),
        ),
      );

/** `--order asc|desc`: ascending by id (the default) or newest first. */
const orderOf = (input: Input, name: string | undefined) =>
  name === undefined || name === "asc"
    ? Effect.succeed(false)
    : name === "desc"
      ? Effect.succeed(true)
      : Effect.fail(usage(input, `--order: ${JSON.stringify(name)} is not asc or desc`));

/** `--after ID` and `--before ID` as the ids listed, both included. */
const boundsOf = (input: Input) =>
  Effect.gen(function* () {
    const idOf = (text: string) => parseInteger(text, 0, Number.MAX_SAFE_INTEGER);
    const after = yield* parsed(input, "after", idOf);
    const before = yield* parsed(input, "before", idOf);
    return {
      first: after === undefined ? 0 : after + 1,
      last: before === undefined ? Number.MAX_SAFE_INTEGER : before - 1,
    };
  });

/** `tay jobs DIR [--queue Q] [--state S] [--limit N] [--order asc|desc] [--after ID] [--before ID]`. */
export const jobs: Command = {
  name: "jobs",
  synopsis:
    "DIR [--queue Q] [--state S] [--limit N] [--order asc|desc] [--after ID] [--before ID] [--json]",
  summary: "list jobs by id, ascending (or newest first)",
  arguments: dirArgument,
  options: [
    { name: "queue", type: "string", value: "Q", help: "only jobs of queue Q" },
    {
      name: "state",
      type: "string",
      value: "S",
      help: `only jobs in state S (${Event.jobStates.join(", ")})`,
    },
    { name: "limit", type: "string", value: "N", help: "at most N jobs (default: all)" },
    {
      name: "order",
      type: "string",
      value: "asc|desc",
      help: "ascending by id (default), or desc: newest first",
    },
    { name: "after", type: "string", value: "ID", help: "only jobs whose id is greater" },
    { name: "before", type: "string", value: "ID", help: "only jobs whose id is smaller" },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const queue = text(input, "queue");
      const jobState = yield* stateOf(input, text(input, "state"));
      const limit = (yield* parsed(input, "limit", limitOf)) ?? Number.MAX_SAFE_INTEGER;
      const descending = yield* orderOf(input, text(input, "order"));
      const filter = { queue, state: jobState, limit, descending, ...(yield* boundsOf(input)) };
      const target = argument(input, 0);
      const printed = new JobLines(input.json, limit, descending);
      const page = (selected: ReadonlyArray<Job.Job>) => printed.page(selected);
      // A lean fold (completed jobs as facts) that keeps only the records of completed jobs
      // the listing can print (2026-12-07; `listingFold.ts`): a URL's, and a directory's whose
      // index cannot answer. A listing of another state keeps none.
      const needsFacts = jobState === undefined || jobState === "completed";
      yield* isUrl(target)
        ? Effect.flatMap(
            foldForListing(filter, (projection) => inspectState(target, projection)),
            ({ folded, kept, lean }) =>
              listed(
                {
                  state: folded.state,
                  index: undefined,
                  tail: lean ? keptTail(target, 0, kept) : undefined,
                },
                filter,
                page,
              ),
          )
        : withAtRest(
            target,
            needsFacts,
            (atRest) => listed(atRest, filter, page),
            undefined,
            filter,
          );
      yield* printed.end();
      return exitCodes.ok;
    }),
};

const historyJson = (entry: HistoryEntry): Json.JsonObject => ({
  sequence: entry.sequence,
  member: entry.member,
  ...Json.event(entry.event),
});

/** `key=value` pairs of an event's fields for the history table (times as ISO). */
const details = (event: Event.Event): string => {
  const fields = Json.fields(event);
  if (fields === null || typeof fields !== "object" || Array.isArray(fields)) return "";
  return Object.entries(fields)
    .filter(([key]) => key !== "job_id")
    .map(([key, value]) =>
      (key === "at" || key.endsWith("_at")) && typeof value === "number"
        ? `${key}=${Text.time(value)}`
        : `${key}=${JSON.stringify(value)}`,
    )
    .join(" ");
};

/** One row of `Text.fields`. */
const field = (name: string, value: string): [string, string] => [name, value];

/** The schema-3 fields a job was inserted with (EVENTS-V3.md), those it has. */
const v3JobFields = (job: Job.Job): Array<[string, string]> => [
  ...(job.uniqueKey === null
    ? []
    : [field("unique key", Text.truncate(JSON.stringify(job.uniqueKey), 200))]),
  ...(job.uniquePeriodMs === null
    ? []
    : [field("unique period", Text.duration(job.uniquePeriodMs))]),
  ...(job.timeoutMs === null ? [] : [field("timeout", Text.duration(job.timeoutMs))]),
];

const jobLines = (job: Job.Job, more: ReadonlyArray<[string, string]> = []): Array<string> =>
  Text.fields([
    ["job", `${job.jobId}`],
    ["state", job.state],
    ["queue", Text.printable(job.queue)],
    ["worker", Text.printable(job.worker)],
    ["args", Text.truncate(JSON.stringify(Json.value(job.args)), 200)],
    ["priority", `${job.priority}`],
    ["attempt", `${job.attempt} of ${job.maxAttempts}`],
    ["inserted at", Text.time(job.insertedAt)],
    ["scheduled at", Text.time(job.scheduledAt)],
    ["attempted at", Text.time(job.attemptedAt)],
    ["finished at", Text.time(job.finishedAt)],
    [
      "result",
      job.result === null ? "-" : Text.truncate(JSON.stringify(Json.value(job.result.value)), 200),
    ],
    ["schedule", job.scheduleId === null ? "-" : Text.printable(job.scheduleId)],
    ...v3JobFields(job),
    ...job.errors.map((error): [string, string] => [
      `error ${error.attempt}`,
      `${Text.time(error.at)} ${Text.truncate(JSON.stringify(error.error), 200)}`,
    ]),
    ...more,
  ]);

/** `tay job`'s progress field: none when the server was not asked. */
const progressFields = (progress: ServedProgress): Array<[string, string]> => {
  switch (progress._tag) {
    case "NotAsked":
      return [];
    case "Unknown":
      return [["progress", `unknown: ${progress.why}`]];
    case "Held": {
      const held = progress.progress;
      const text =
        held === undefined
          ? "- (none reported by this attempt)"
          : `${Text.truncate(JSON.stringify(Json.value(held.value)), 200)} at ${Text.time(held.at)}`;
      return [["progress", text]];
    }
  }
};

/** `tay job --json`'s progress members: none when the server was not asked. */
const progressJson = (progress: ServedProgress): Json.JsonObject => {
  switch (progress._tag) {
    case "NotAsked":
      return {};
    case "Unknown":
      return { progress: null, progress_unknown: progress.why };
    case "Held": {
      const held = progress.progress;
      return {
        progress:
          held === undefined
            ? null
            : { attempt: held.attempt, value: Json.value(held.value), at: held.at },
      };
    }
  }
};

/** Prints one job (for the commands that change one). */
export const printJob = (input: Input, job: Job.Job) =>
  input.json ? line(Json.line(Json.job(job))) : lines(jobLines(job));

/**
 * A PostgreSQL store's job, the history collected on the way: one job's
 * fold (`foldForJob`, as a directory without its index; 2026-12-07: 700 MB
 * → the lean state's memory on 1,000,000 jobs).
 */
const jobOfUrl = (url: string, jobId: number) =>
  Effect.gen(function* () {
    const { history, tap } = historyTap(jobId);
    const { folded, kept } = yield* foldForJob(jobId, (projection) =>
      inspectState(url, tapped(tap.onStart, tap.onRecord, projection)),
    );
    return { found: State.job(folded.state, jobId) ?? kept, history } satisfies JobAndHistory;
  });

/** `tay job DIR ID`: the job with every record of the generation that concerns it. */
export const job: Command = {
  name: "job",
  synopsis: "DIR ID [--json]",
  summary: "one job and its whole event history in the current generation",
  arguments: ["DIR", "ID"],
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const directory = argument(input, 0);
      const jobId = yield* parsedArgument(input, 1, "ID", jobIdOf);
      const { found, history } = isUrl(directory)
        ? yield* jobOfUrl(directory, jobId)
        : ((yield* jobAtRest(directory, jobId)) ?? (yield* jobFolded(directory, jobId)));
      if (found === undefined) return yield* new JobNotFound({ path: directory, jobId });
      const progress = isUrl(directory)
        ? { _tag: "NotAsked" as const }
        : yield* servedProgress(directory, found);
      if (input.json) {
        yield* line(
          Json.line({
            job: Json.job(found),
            history: history.map(historyJson),
            ...progressJson(progress),
          }),
        );
        return exitCodes.ok;
      }
      const rows = history.map((entry) => [
        `${entry.sequence}`,
        entry.member === null
          ? entry.event._tag
          : `${entry.event._tag} (mutation #${entry.member})`,
        details(entry.event),
      ]);
      yield* lines([
        ...jobLines(found, progressFields(progress)),
        "",
        ...Text.table(["SEQUENCE", "EVENT", "DETAILS"], rows, ["right"]),
      ]);
      return exitCodes.ok;
    }),
};

/** "every 15m", or "cron "0 9 * * *"", with its zone when it names one (EVENTS-V3.md). */
const recurrence = (schedule: Schedule.Schedule): string => {
  const { definition } = schedule;
  if (definition.everyMs !== null) return `every ${Text.duration(definition.everyMs)}`;
  const cron = `cron ${JSON.stringify(definition.cron ?? "")}`;
  return Event.isDefinitionV3(definition) ? `${cron} in ${definition.timezone}` : cron;
};

/** A schema-3 schedule's catch-up policy: "once", "skip within 1m", "all". */
const catchUpText = (definition: Event.ScheduleDefinitionV3): string =>
  definition.catchUpWindowMs === null
    ? definition.catchUp
    : `${definition.catchUp} within ${Text.duration(definition.catchUpWindowMs)}`;

const scheduleLines = (schedule: Schedule.Schedule): Array<string> =>
  Text.fields([
    ["schedule", Text.printable(schedule.scheduleId)],
    ["queue", Text.printable(schedule.definition.queue)],
    ["worker", Text.printable(schedule.definition.worker)],
    ["args", Text.truncate(JSON.stringify(Json.value(schedule.definition.args)), 200)],
    ["recurrence", recurrence(schedule)],
    ["overlap", schedule.definition.overlap],
    ...(Event.isDefinitionV3(schedule.definition)
      ? [field("catch up", catchUpText(schedule.definition))]
      : []),
    ["priority", `${schedule.definition.priority}`],
    ["max attempts", `${schedule.definition.maxAttempts}`],
    ["revision", `${schedule.revision} (definition ${schedule.definitionRevision})`],
    ["registered at", Text.time(schedule.registeredAt)],
    ["next due at", Text.time(schedule.nextDueAt)],
    ["last due at", Text.time(schedule.lastDueAt)],
    ["cancelled at", Text.time(schedule.cancelledAt)],
    ["active jobs", schedule.activeJobIds.join(", ") || "-"],
  ]);

/** Prints one schedule (for the commands that change one). */
export const printSchedule = (input: Input, schedule: Schedule.Schedule) =>
  input.json ? line(Json.line(Json.schedule(schedule))) : lines(scheduleLines(schedule));

/** The state `queues` and `schedules` read: a lean one, a directory's at rest, a URL's folded. */
const stateToList = (target: string) =>
  isUrl(target)
    ? Effect.map(inspectState(target, StateProjection.leanFoldProjection), ({ state }) => state)
    : leanStateAt(target);

/** `tay schedules DIR`. */
export const schedules: Command = {
  name: "schedules",
  synopsis: "DIR [--json]",
  summary: "list schedules, ascending by id",
  arguments: dirArgument,
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const state = yield* stateToList(argument(input, 0));
      const all = [...State.schedules(state)];
      if (input.json) {
        yield* line(Json.line(all.map(Json.schedule)));
        return exitCodes.ok;
      }
      const rows = all.map((schedule) => [
        Text.printable(schedule.scheduleId),
        schedule.cancelledAt === null ? "active" : "cancelled",
        Text.printable(schedule.definition.queue),
        Text.printable(schedule.definition.worker),
        recurrence(schedule),
        schedule.definition.overlap,
        `${schedule.revision}`,
        Text.time(schedule.nextDueAt),
        Text.time(schedule.lastDueAt),
        `${schedule.activeJobIds.length}`,
      ]);
      yield* lines(
        Text.table(
          [
            "ID",
            "STATE",
            "QUEUE",
            "WORKER",
            "RECURRENCE",
            "OVERLAP",
            "REV",
            "NEXT_DUE",
            "LAST_DUE",
            "ACTIVE",
          ],
          rows,
        ),
      );
      return exitCodes.ok;
    }),
};

/** `tay queues DIR`: every queue with jobs or a state (EVENTS-V3.md), its counts and its state. */
export const queues: Command = {
  name: "queues",
  synopsis: "DIR [--json]",
  summary: "list queues: job counts, paused or running, concurrency and rate limit",
  arguments: dirArgument,
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const state = yield* stateToList(argument(input, 0));
      const counts = Query.counts(state);
      const names = [...new Set([...counts.keys(), ...state.queues.keys()])].sort();
      if (input.json) {
        const rows = names.map((name) => ({
          ...shownQueueStateJson(name, State.queue(state, name)),
          jobs: Object.fromEntries(
            Event.jobStates.map((jobState) => [jobState, counts.get(name)?.[jobState] ?? 0]),
          ),
        }));
        yield* line(Json.line(rows));
        return exitCodes.ok;
      }
      const rows = names.map((name) => {
        const queueCounts = counts.get(name);
        const queueState = shownQueueState(name, State.queue(state, name));
        return [
          Text.printable(name),
          queueState.paused ? "paused" : "running",
          queueState.concurrency === null ? "-" : `${queueState.concurrency}`,
          queueState.rateLimit === null
            ? "-"
            : `${queueState.rateLimit.count}/${queueState.rateLimit.perMs}ms`,
          `${queueCounts?.available ?? 0}`,
          `${queueCounts?.executing ?? 0}`,
          `${queueCounts?.retryable ?? 0}`,
          // What `tay retry-all DIR --queue Q` would run again.
          `${queueCounts?.discarded ?? 0}`,
        ];
      });
      const headers = ["QUEUE", "STATE", "CONCURRENCY", "RATE", "AVAILABLE", "EXECUTING"];
      yield* lines(
        Text.table([...headers, "RETRYABLE", "DISCARDED"], rows, [
          "left",
          "left",
          "right",
          "right",
          "right",
          "right",
          "right",
          "right",
        ]),
      );
      return exitCodes.ok;
    }),
};
