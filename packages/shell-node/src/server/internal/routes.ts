/**
 * The routes of the protocol (docs/protocol.md), one table: each a method,
 * a path pattern, its summary (the OpenAPI document is built from the
 * table) and its handler. A command's handler checks its body, issues the
 * command on the engine's promise face and answers once it is durable;
 * a refusal appends nothing.
 */
import type { ServerResponse } from "node:http";
import { Shape, Wire, type Json, type JsonObject } from "@tay/client";
import { JobMention } from "@tay/codec";
import { type Job, JobHistory, type Queue, State } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Bulk from "../../engine/Bulk.js";
import type * as Engine from "../../engine/Engine.js";
import type * as Log from "../../log/Log.js";
import type * as Projection from "../../log/Projection.js";
import { InvalidRequest, Unhealthy } from "../ServerError.js";
import { historyStart } from "./historyStart.js";
import { statusOf } from "./http.js";
import { type Leases, leaseExpiredError, leaseMsDefault } from "./leases.js";
import * as Requests from "./requests.js";
import * as Schemas from "./schemas.js";
import type { Sessions } from "./sessions.js";
import type { StoreFacts } from "./storeFacts.js";
import type { WaitingClaims } from "./waitingClaims.js";

/** What every handler may use. */
export interface Served {
  readonly engine: Engine.EngineService<Log.Kind>;
  /** What the status, the metrics and compaction read of the store beyond the log's view. */
  readonly store: StoreFacts;
  readonly leases: Leases;
  readonly sessions: Sessions;
  readonly claims: WaitingClaims;
}

/**
 * What a handler may ask of the connection its answer goes to: whether it
 * closed before the answer, and to hear when it closes. node:http's
 * response is one; so is the socket of the lean path (internal/lean.ts).
 */
export interface Answering {
  readonly destroyed: boolean;
  readonly writableFinished: boolean;
  once(event: "close", listener: () => void): unknown;
  off(event: "close", listener: () => void): unknown;
}

/** One request as a handler sees it. */
export interface Call {
  readonly route: string;
  readonly body: unknown;
  readonly query: URLSearchParams;
  readonly params: ReadonlyArray<string>;
  /** The request's `x-tay-session` header, if it has one. */
  readonly session: string | undefined;
  readonly response: Answering;
  /**
   * node:http's response, for the routes that write a stream themselves;
   * null on the lean path, which hands every stream to node:http.
   */
  readonly stream: ServerResponse | null;
}

/** A handler's answer: a JSON body, or a stream it wrote itself. */
export type Answer = Json | { readonly streamed: true };

export interface Route {
  readonly method: "GET" | "POST";
  /** `/v1/jobs/:id`: `:name` segments are the handler's `params`, in order. */
  readonly path: string;
  readonly summary: string;
  /** Whether the body is a JSON document (commands) or absent (queries). */
  readonly body?: string;
  /** The body's JSON Schema for the OpenAPI document, where one is written out. */
  readonly schema?: JsonObject;
  readonly handle: (call: Call, served: Served) => Promise<Answer>;
}

/** Checks `input` with `decoder`, or refuses the request naming the field. */
export const checked = <A>(
  call: Call,
  decoder: Shape.Decoder<A>,
  input: unknown,
  path: string,
): A => {
  const decoded = Shape.decode(decoder, input, path);
  if (decoded.ok) return decoded.value;
  throw new InvalidRequest({
    route: call.route,
    field: decoded.error.path,
    expected: decoded.error.expected,
    found: decoded.error.found,
  });
};

const body = <A>(call: Call, decoder: Shape.Decoder<A>): A =>
  checked(call, decoder, call.body, "body");

const jobIdParam = (call: Call): number =>
  checked(call, Shape.integer(1), Requests.integerText(call.params[0] ?? ""), "path.jobId");

/** Whether the caller's connection closed before its answer. */
const gone = (call: Call): boolean => call.response.destroyed && !call.response.writableFinished;

/**
 * Runs a wait given up when `waitMs` pass or the caller's connection closes:
 * one controller, one timer and one listener, all gone once it answers (a
 * worker's long polls come one per claimed job; `AbortSignal.any` and
 * `AbortSignal.timeout` cost several times as much and linger until collected).
 */
const waited = async <A>(
  call: Call,
  waiting: {
    readonly waitMs: number;
    readonly claim: string | undefined;
    readonly claims: WaitingClaims;
  },
  wait: (signal: AbortSignal) => Promise<A>,
): Promise<A> => {
  const controller = new AbortController();
  const giveUp = () => controller.abort();
  const timer = setTimeout(giveUp, waiting.waitMs);
  call.response.once("close", giveUp);
  if (gone(call)) giveUp();
  const { claim, claims } = waiting;
  // Given up by id before it came: answered at once with nothing.
  if (claim !== undefined && !claims.add(claim, controller)) giveUp();
  try {
    return await wait(controller.signal);
  } finally {
    clearTimeout(timer);
    call.response.off("close", giveUp);
    if (claim !== undefined) claims.remove(claim, controller);
  }
};

/** The worker session a request names (`x-tay-session`), when the server has it open. */
export const sessionOf = (call: Call, served: Served): string | undefined => {
  const session = call.session;
  return session !== undefined && served.sessions.has(session) ? session : undefined;
};

/** What a claim's job that could not be answered records. */
const undeliveredError = `${leaseExpiredError}: the claim's connection closed before its answer`;

/** Leases every job a remote claim started, or fails them at once if the caller has gone. */
const leased = (
  call: Call,
  served: Served,
  jobs: ReadonlyArray<Job.Job>,
  leaseMs: number | undefined,
): JsonObject => {
  const holder = sessionOf(call, served);
  const ms = leaseMs ?? leaseMsDefault;
  const leases = jobs.map((job) => ({
    jobId: job.jobId,
    attempt: job.attempt,
    expiresAt: served.leases.take(job.jobId, job.attempt, ms, holder),
  }));
  // The answer cannot reach a caller that has gone: this claim's jobs are failed now, not at
  // their lease's end. Only these: the session's other attempts run on in its worker. Dropping
  // the whole session (before 2026-12-06) failed them while their handlers ran, so they ran
  // twice, whenever a worker gave up a parked claim to ask for a queue that had room again.
  if (gone(call)) {
    for (const job of jobs) served.leases.lost(job.jobId, job.attempt, undeliveredError);
  }
  return { jobs: jobs.map(Wire.jobJson), leaseMs: ms, leases };
};

const commands: ReadonlyArray<Route> = [
  {
    method: "POST",
    path: "/v1/insert",
    summary:
      "insert one job; answers it once durable (a unique key held by a job of the queue: that job, duplicate: true)",
    body: "{ job: { queue, worker, args?, priority?, maxAttempts?, scheduledAt?, uniqueKey?, uniquePeriodMs?, timeoutMs? } }",
    handle: async (call, { engine }) => ({
      job: Wire.insertedJobJson(await engine.promises.insert(body(call, Requests.insert).job)),
    }),
  },
  {
    method: "POST",
    path: "/v1/insert-many",
    summary: "insert jobs atomically (one record, all or none)",
    body: "{ jobs: [NewJob] }",
    handle: async (call, { engine }) => ({
      jobs: (await engine.promises.insertMany(body(call, Requests.insertMany).jobs)).map(
        Wire.insertedJobJson,
      ),
    }),
  },
  {
    method: "POST",
    path: "/v1/insert-batch",
    summary: "insert jobs each on its own (each accepted or refused alone), one durability wait",
    body: "{ jobs: [NewJob] }",
    handle: async (call, { engine }) => {
      const { jobs } = body(call, Requests.insertMany);
      // Issued in one turn, the inserts share one drain: one batch, one write.
      const settled = await Promise.allSettled(jobs.map((job) => engine.promises.insert(job)));
      return {
        results: settled.map((outcome) =>
          outcome.status === "fulfilled"
            ? { job: Wire.insertedJobJson(outcome.value) }
            : { error: errorOf(outcome.reason) },
        ),
      };
    },
  },
  {
    method: "POST",
    path: "/v1/claim",
    summary: "start up to limit available jobs of a queue now (may be none); each carries a lease",
    body: "{ queue, limit?, leaseMs? }",
    handle: async (call, served) => {
      const { queue, limit, leaseMs } = body(call, Requests.claim);
      return leased(call, served, await served.engine.promises.claim(queue, limit), leaseMs);
    },
  },
  {
    method: "POST",
    path: "/v1/next-jobs",
    summary:
      "wait until jobs of the lanes can start (up to waitMs), start them; each carries a lease",
    body: "{ lanes: [{ queue, limit }], limit?, waitMs?, leaseMs? }",
    handle: async (call, served) => {
      const { lanes, limit, waitMs, leaseMs, claim } = body(call, Requests.nextJobs);
      const waiting = {
        waitMs: waitMs ?? Wire.nextJobsWaitMsDefault,
        claim,
        claims: served.claims,
      };
      const jobs = await waited(call, waiting, (signal) =>
        served.engine.promises.nextJobs(lanes, {
          signal,
          ...(limit === undefined ? {} : { limit }),
        }),
      );
      return leased(call, served, jobs, leaseMs);
    },
  },
  {
    method: "POST",
    path: "/v1/give-up",
    summary:
      "give up the waiting claim of this id: it is answered as it stands (no job, or the jobs already started); given: false when it was not waiting (kept for 60 s in case it is on its way)",
    body: "{ claim }",
    handle: async (call, { claims }) => ({
      given: claims.giveUp(body(call, Requests.giveUp).claim),
    }),
  },
  {
    method: "POST",
    path: "/v1/heartbeat",
    summary: "extend the lease of a remotely claimed attempt",
    body: "{ jobId, attempt, leaseMs? }",
    handle: async (call, { leases }) => {
      const { jobId, attempt, leaseMs } = body(call, Requests.heartbeat);
      const expiresAt = leases.extend(jobId, attempt, leaseMs ?? leaseMsDefault);
      return { held: expiresAt !== undefined, expiresAt: expiresAt ?? null };
    },
  },
  {
    method: "POST",
    path: "/v1/progress",
    summary:
      "hold a value as the progress of an executing attempt (in the server's memory, not the log; let go when the attempt ends)",
    body: "{ jobId, attempt, progress }",
    handle: async (call, { engine }) => {
      const { jobId, attempt, progress } = body(call, Requests.progress);
      await engine.promises.reportProgress(jobId, attempt, progress);
      return { progress: progressOf(engine, jobId) };
    },
  },
  {
    method: "POST",
    path: "/v1/cancel",
    summary: "cancel a job that is not terminal",
    body: "{ jobId, reason? }",
    handle: async (call, { engine }) => {
      const { jobId, reason } = body(call, Requests.cancel);
      return { job: Wire.jobJson(await engine.promises.cancel(jobId, reason)) };
    },
  },
  {
    method: "POST",
    path: "/v1/redrive",
    summary: "run a discarded or cancelled job again, keeping its history",
    body: "{ jobId, maxAttempts?, reason? }",
    handle: async (call, { engine }) => {
      const { jobId, ...options } = body(call, Requests.redrive);
      return { job: Wire.jobJson(await engine.promises.redrive(jobId, definedOnly(options))) };
    },
  },
  {
    method: "POST",
    path: "/v1/redrive-all",
    summary:
      "run again every job of a queue (or all) in the states given (default discarded), each as /v1/redrive; answers the jobs run again and the ones refused",
    body: "{ queue?, states?: (discarded|cancelled)[], limit?, maxAttempts?, reason? }",
    handle: async (call, { engine }) => {
      const { maxAttempts, reason, ...filter } = body(call, Requests.redriveAll);
      return bulkAnswer(
        await Bulk.redriveAll(
          engine.promises,
          definedOnly(filter),
          definedOnly({ maxAttempts, reason }),
        ),
      );
    },
  },
  {
    method: "POST",
    path: "/v1/cancel-all",
    summary:
      "cancel every job of a queue (or all) in the states given (default scheduled, available, retryable), each as /v1/cancel; answers the jobs cancelled and the ones refused",
    body: "{ queue?, states?: (scheduled|available|executing|retryable)[], limit?, reason? }",
    handle: async (call, { engine }) => {
      const { reason, ...filter } = body(call, Requests.cancelAll);
      return bulkAnswer(await Bulk.cancelAll(engine.promises, definedOnly(filter), reason));
    },
  },
  {
    method: "POST",
    path: "/v1/pause-queue",
    summary: "pause a queue: claims start nothing from it (running jobs go on)",
    body: "{ queue }",
    handle: async (call, { engine }) =>
      queueAnswer(await engine.promises.pauseQueue(body(call, Requests.queue).queue)),
  },
  {
    method: "POST",
    path: "/v1/resume-queue",
    summary: "resume a paused queue, keeping its limits",
    body: "{ queue }",
    handle: async (call, { engine }) =>
      queueAnswer(await engine.promises.resumeQueue(body(call, Requests.queue).queue)),
  },
  {
    method: "POST",
    path: "/v1/set-queue-limits",
    summary: "set a queue's concurrency and rate limit (a field left out is kept, null removes it)",
    body: "{ queue, concurrency?: integer | null, rateLimit?: { count, perMs } | null }",
    handle: async (call, { engine }) => {
      const { queue, ...limits } = body(call, Requests.queueLimits);
      return queueAnswer(await engine.promises.setQueueLimits(queue, definedOnly(limits)));
    },
  },
  {
    method: "POST",
    path: "/v1/register-schedule",
    summary:
      "register or re-register a schedule (expectedRevision 0: must be new); a timezone, catchUp or catchUpWindowMs makes it v3",
    body: "{ scheduleId, definition: { queue, worker, args?, priority?, maxAttempts?, everyMs? | cron?, overlap?: allow|skip, timezone?: IANA zone|UTC, catchUp?: once|skip|all, catchUpWindowMs?: integer >= 1 | null }, expectedRevision? }",
    schema: Schemas.registerSchedule,
    handle: async (call, { engine }) => {
      const { scheduleId, definition, expectedRevision } = body(call, Requests.registerSchedule);
      const schedule = await engine.promises.registerSchedule(
        scheduleId,
        definition,
        expectedRevision,
      );
      return { schedule: Wire.scheduleJson(schedule) };
    },
  },
  {
    method: "POST",
    path: "/v1/cancel-schedule",
    summary: "cancel a schedule",
    body: "{ scheduleId, expectedRevision? }",
    handle: async (call, { engine }) => {
      const { scheduleId, expectedRevision } = body(call, Requests.cancelSchedule);
      const schedule = await engine.promises.cancelSchedule(scheduleId, expectedRevision);
      return { schedule: Wire.scheduleJson(schedule) };
    },
  },
  {
    method: "POST",
    path: "/v1/rescue",
    summary: "fail every job executing since before startedBefore",
    body: "{ startedBefore, error }",
    handle: async (call, { engine }) => {
      const { startedBefore, error } = body(call, Requests.rescue);
      return { rescued: await engine.promises.rescue(startedBefore, error) };
    },
  },
  {
    method: "POST",
    path: "/v1/tick",
    summary: "make due jobs available, deliver due schedule occurrences, time out attempts",
    handle: async (_call, { engine }) => ({ ...(await engine.promises.tick()) }),
  },
  {
    method: "POST",
    path: "/v1/flush",
    summary: "write what is appended now and wait until durable",
    handle: async (_call, { engine }) => {
      await engine.promises.flush();
      return { flushed: true };
    },
  },
  {
    method: "POST",
    path: "/v1/compact",
    summary: "write a new generation without terminal jobs finished before now - retentionMs",
    body: "{ retentionMs }",
    handle: async (call, { store }) => {
      const { retentionMs } = body(call, Requests.compact);
      // In the wire's shape (storeFacts.ts), with the engine's counts of the jobs.
      return store.compact(retentionMs);
    },
  },
];

/** A queue's state as answered: null for the default (unpaused, no limits). */
/** What a command over many jobs did (`Bulk`): `{ jobIds, refused: [{ jobId, reason, message }] }`. */
const bulkAnswer = (outcome: Bulk.BulkOutcome): JsonObject => ({
  jobIds: [...outcome.jobIds],
  refused: outcome.refused.map((refusal) => ({
    jobId: refusal.jobId,
    reason: refusal.reason,
    message: refusal.message,
  })),
});

const queueAnswer = (state: Queue.QueueState | undefined): JsonObject => ({
  queue: state === undefined ? null : Wire.queueStateJson(state),
});

/** Options without their undefined members (exact optional properties). */
export const definedOnly = <A extends object>(
  options: A,
): { [K in keyof A]: Exclude<A[K], undefined> } =>
  // Only the members whose value is defined are kept.
  Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as {
    [K in keyof A]: Exclude<A[K], undefined>;
  };

/**
 * The most jobs one `GET /v1/jobs` answers: a listing of 1,000,000
 * completed jobs in one answer held the loop for 20 s and the process at
 * 2.2 GB while every other caller (a health check among them) waited; a
 * page of 1,000 is a few milliseconds (2026-12-06, docs/server.md).
 */
export const jobsPageMax = 1_000;

/** An error as a batch result names it: its tag, its message, its rejection. */
export const errorOf = (error: unknown): JsonObject => {
  const tag =
    typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Defect";
  const message = error instanceof Error ? error.message : String(error);
  const rejection =
    typeof error === "object" && error !== null && "rejection" in error
      ? { rejection: primitiveFields(error.rejection) }
      : {};
  // The status `/v1/insert` would have answered: a client that batched its inserts reports it.
  return { _tag: tag, message, status: statusOf(tag), ...rejection };
};

const primitiveFields = (input: unknown): JsonObject => {
  const fields: Record<string, Json> = {};
  if (typeof input !== "object" || input === null) return fields;
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === "string" || typeof value === "number") fields[key] = value;
  }
  return fields;
};

const queries: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/v1/jobs",
    summary: `committed jobs by id, ascending or (order=desc) descending, at most ${jobsPageMax} an answer (?queue=&state=&limit=&after=&before=&order=); next: the after (ascending) or before (descending) of the next page, or null when the listing ended`,
    handle: async (call, { engine }) => {
      const filter = checked(call, Requests.jobFilter, call.query, "query");
      const wanted = filter.limit ?? Number.POSITIVE_INFINITY;
      const page = Math.min(wanted, jobsPageMax);
      const jobs = engine.promises.jobs(definedOnly({ ...filter, limit: page }));
      const last = jobs.at(-1);
      const more = last !== undefined && jobs.length === page && page < wanted;
      return { jobs: jobs.map(Wire.jobJson), next: more ? last.jobId : null };
    },
  },
  {
    method: "GET",
    path: "/v1/jobs/:jobId",
    summary: "one committed job, or null",
    handle: async (call, { engine }) => {
      const job = engine.promises.job(jobIdParam(call));
      return { job: job === undefined ? null : Wire.jobJson(job) };
    },
  },
  {
    method: "GET",
    path: "/v1/jobs/:jobId/history",
    summary:
      "one job's history in this generation, in log order: its events, a schedule's deliveries and checkpoints of it, a compaction's snapshot part narrowed to it",
    handle: async (call, { engine }) => ({ events: await history(engine, jobIdParam(call)) }),
  },
  {
    method: "GET",
    path: "/v1/jobs/:jobId/progress",
    summary: "the progress reported for the job's executing attempt, or null",
    handle: async (call, { engine }) => ({ progress: progressOf(engine, jobIdParam(call)) }),
  },
  {
    method: "GET",
    path: "/v1/progress",
    summary: "the progress of every executing attempt that reported one, ascending by job id",
    handle: async (_call, { engine }) => ({
      progress: engine.promises.progresses().map(Wire.progressJson),
    }),
  },
  {
    method: "GET",
    path: "/v1/schedules",
    summary: "every committed schedule",
    handle: async (_call, { engine }) => ({
      schedules: engine.promises.schedules().map(Wire.scheduleJson),
    }),
  },
  {
    method: "GET",
    path: "/v1/schedules/:scheduleId",
    summary: "one committed schedule, or null",
    handle: async (call, { engine }) => {
      const schedule = engine.promises.schedule(decodeURIComponent(call.params[0] ?? ""));
      return { schedule: schedule === undefined ? null : Wire.scheduleJson(schedule) };
    },
  },
  {
    method: "GET",
    path: "/v1/queues",
    summary: "every queue whose committed state is not the default (paused, or limited)",
    handle: async (_call, { engine }) => ({
      queues: engine.promises.queues().map(Wire.queueStateJson),
    }),
  },
  {
    method: "GET",
    path: "/v1/queues/:queue",
    summary: "one queue's committed state, or null for the default (unpaused, no limits)",
    handle: async (call, { engine }) =>
      queueAnswer(engine.promises.queue(decodeURIComponent(call.params[0] ?? ""))),
  },
  {
    method: "GET",
    path: "/v1/counts",
    summary: "job counts per queue and state",
    handle: async (_call, { engine }) => ({ counts: Wire.countsJson(engine.promises.counts()) }),
  },
  {
    method: "GET",
    path: "/v1/next-wake-at",
    summary: "the earliest time a tick has work, or null",
    handle: async (_call, { engine }) => ({ nextWakeAt: engine.promises.nextWakeAt() }),
  },
  {
    method: "GET",
    path: "/v1/subscriber-stats",
    summary: "the engine's subscribers, how far behind the furthest is",
    handle: async (_call, { engine }) => ({ ...engine.promises.subscriberStats() }),
  },
  {
    method: "GET",
    path: "/v1/health",
    summary:
      "200 while the store takes appends (its log open, or gated for a moment); 503 Unhealthy once it refuses them for good",
    handle: async (_call, { engine, store }) => {
      const health = engine.promises.health();
      if (!health.ok) {
        throw new Unhealthy({ path: engine.log.path, reason: health.reason ?? health.log });
      }
      return { ok: true, log: health.log, pressure: store.pressure() };
    },
  },
  {
    method: "GET",
    path: "/v1/status",
    summary: "the store: id, epoch, sequences, records, bytes, pending, orphaned generations",
    handle: async (_call, served) => status(served),
  },
];

/** The progress held for `jobId`'s executing attempt as the wire has it, or null. */
const progressOf = (engine: Engine.EngineService<Log.Kind>, jobId: number): Json => {
  const held = engine.promises.progress(jobId);
  return held === undefined ? null : Wire.progressJson(held);
};

const historyPage = 4_096;
/**
 * Records a filtered read of a job's history looks at per call: all of them
 * (it holds only what it decodes, and yields at each chunk it reads), so that
 * each sealed segment is read whole, on trust of its CRC.
 */
const historyScanRecords = 2 ** 40;

/** The entries of `page` about `jobId` (core's `JobHistory`, as `tay job`), as the route answers them. */
const aboutJob = (page: ReadonlyArray<Projection.Entry>, jobId: number, into: Array<Json>) => {
  for (const { sequence, event } of page) {
    for (const entry of JobHistory.entriesOf(sequence, event, jobId)) {
      // A record of its own is member 0 on the wire, as in the committed stream.
      into.push(Wire.committedJson({ sequence, member: entry.member ?? 0, event: entry.event }));
    }
  }
};

/**
 * One job's history in the current generation (what `tay job` shows), from
 * the log. A log that can (the file store) hands over only the records
 * whose payload mentions the job or lists a schedule's members
 * (`JobMention`), the rest checked but not decoded: on a store of
 * 1,000,000 jobs, 0.7 s instead of 5.5–7.5 s (2026-12-07); PostgreSQL
 * finds them in SQL. A log without it is read whole. A job inserted past
 * the base is read from the record that inserted it (`historyStart`,
 * 2026-12-07): the base's records restate the jobs and schedule members of
 * the compaction's time, and no record before the insert names it.
 */
const history = async (
  engine: Engine.EngineService<Log.Kind>,
  jobId: number,
): Promise<Array<Json>> => {
  const { log } = engine;
  const { firstSequence, baseRecordCount } = await Effect.runPromise(log.generation());
  // A log that does not tell its base's length is read whole.
  let from = firstSequence;
  if (baseRecordCount !== undefined) {
    const afterBase = firstSequence + baseRecordCount;
    const { lastSequence } = await Effect.runPromise(log.stats());
    const start = await Effect.runPromise(historyStart(log, jobId, afterBase, lastSequence));
    if (start > afterBase) from = start;
  }
  const events: Array<Json> = [];
  const needles = JobMention.historyNeedles(jobId);
  const filtered = log.readMentioning;
  for (let sequence = from; ; ) {
    if (filtered !== undefined) {
      const read = await Effect.runPromise(filtered(needles, sequence, historyScanRecords));
      aboutJob(read.entries, jobId, events);
      // Until a read looks at nothing new: one may stop early (PostgreSQL answers a page of
      // matching rows a statement) and say where.
      if (read.next <= sequence) return events;
      sequence = read.next;
      continue;
    }
    const page = await Effect.runPromise(log.readFrom(sequence, historyPage));
    aboutJob(page, jobId, events);
    const last = page.at(-1);
    if (last === undefined || page.length < historyPage) return events;
    sequence = last.sequence + 1;
  }
};

/** What the engine's own compactions did, or null when it compacts only when told. */
const autoCompactionJson = (
  stats: ReturnType<Engine.EngineService<Log.Kind>["autoCompaction"]>,
): JsonObject | null =>
  stats === null
    ? null
    : {
        retentionMs: stats.retentionMs,
        runs: stats.runs,
        failures: stats.failures,
        running: stats.running,
        lastAt: stats.lastAt,
        lastError: stats.lastError,
        lastDurationMs: stats.lastDurationMs,
        jobsDropped: stats.jobsDropped,
        checkAt: stats.checkAt,
      };

const status = async ({ engine, store, leases, sessions, claims }: Served): Promise<JsonObject> => {
  const stats = await Effect.runPromise(engine.log.stats());
  const generation = await Effect.runPromise(engine.log.generation());
  const state = engine.promises.state();
  return {
    path: engine.log.path,
    storeId: engine.log.storeId,
    epoch: generation.epoch,
    firstSequence: stats.firstSequence,
    lastSequence: stats.lastSequence,
    records: stats.records,
    bytes: stats.bytes,
    pendingRecords: stats.pendingRecords,
    pendingBytes: stats.pendingBytes,
    pressure: store.pressure(),
    segments: store.segments(),
    orphanedGenerations: store.orphanedGenerations.map((orphan) => ({
      epoch: orphan.epoch,
      kind: orphan.kind,
    })),
    jobs: State.jobCount(state),
    schedules: state.schedules.size,
    lastJobId: state.lastJobId,
    leases: leases.size,
    sessions: sessions.size,
    claimsWaiting: claims.size,
    autoCompaction: autoCompactionJson(engine.autoCompaction()),
    pid: process.pid,
  };
};

/** Every route of the protocol but the streams (server/internal/streams.ts). */
export const routes: ReadonlyArray<Route> = [...commands, ...queries];
