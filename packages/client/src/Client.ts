/**
 * A Tay store served by another process, with the embedded engine's
 * promise interface (`EnginePromises`): the same commands with the same
 * arguments, answered once durable with the same jobs and schedules
 * (args and results as `Map`s, as the engine gives them), rejecting with
 * the same typed errors (`error._tag`: `Rejected` with its `rejection`,
 * `StoreClosed`, ...). The one difference is the reads (`job`, `jobs`,
 * `counts`, ...): in-process they are synchronous, here they are
 * promises; `await tay.job(id)` reads the same in both modes.
 *
 * ```ts
 * const tay = await Client.connect("./data"); // was: await EnginePromises.open("./data")
 * await tay.insert({ queue: "email", worker: "SendWelcome", args: { user_id: 42 } });
 * await tay.close();
 * ```
 */
import { randomUUID } from "node:crypto";
import type {
  Backoff,
  Commands,
  Event,
  Job,
  Progress,
  Query,
  Queue,
  Schedule,
  Value,
} from "@tay/core";

import { Batches } from "./internal/batches.js";
import { endable, endCommand } from "./internal/ends.js";
import { batchable, insertCommand } from "./internal/inserts.js";
import { watchReconnectMsDefault, watching } from "./internal/watch.js";
import { type EndWatch, JobEnds } from "./JobEnds.js";
import * as Locate from "./Locate.js";
import * as Shape from "./Shape.js";
import {
  type Address,
  addressText,
  BadResponse,
  ConnectionFailed,
  InvalidValue,
  Transport,
} from "./Transport.js";
import * as Wire from "./Wire.js";

export { BadResponse, ConnectionFailed, InvalidValue, ServerError } from "./Transport.js";

/** A lane of a waiting claim: a queue and how many of its jobs at most. */
export interface Lane {
  readonly queue: string;
  readonly limit: number;
}

export interface NextJobsOptions {
  readonly limit?: number;
  /** Gives up the wait: answered with no job (jobs already started are answered). */
  readonly signal?: AbortSignal;
  /** The lease of each job started (default: the server's, 30 s). */
  readonly leaseMs?: number;
  /** How long the server waits for a startable job before it answers with none (default 25 s). */
  readonly waitMs?: number;
  /**
   * How long past `waitMs` the answer may take before the connection is
   * taken for dead and dropped (default 10 s): `ConnectionFailed` with
   * code `ETIMEDOUT`.
   */
  readonly answerGraceMs?: number;
}

/** How long past its wait a waiting claim's answer may take, unless asked otherwise. */
export const answerGraceMsDefault = 10_000;

export interface FailOptions {
  readonly discard?: boolean;
  readonly backoff?: Backoff.Policy;
  readonly attempt?: number;
}

export interface CompleteOptions {
  readonly attempt?: number;
}

/** How to list jobs (core's `Query.JobFilter`). */
export type JobFilter = Query.JobFilter;

/** What a tick did. */
export interface TickReport {
  readonly madeAvailable: number;
  readonly delivered: number;
  readonly skipped: number;
  /** Attempts failed for outliving their `timeoutMs` plus the engine's grace. */
  readonly timedOut: number;
}

/** How `redrive` runs a discarded or cancelled job again. */
export interface RedriveOptions {
  /** Must exceed the job's attempt (default: the engine's). */
  readonly maxAttempts?: number;
  readonly reason?: string;
}

/**
 * Which jobs a command over many takes (`redriveAll`, `cancelAll`): of one
 * queue (default: all), in these states (default: the server's), at most
 * `limit`, lowest ids first.
 */
export interface BulkFilter<S extends string> {
  readonly queue?: string;
  readonly states?: ReadonlyArray<S>;
  readonly limit?: number;
}

/** What a command over many jobs did: the jobs changed, ascending, and the ones refused. */
export interface BulkOutcome {
  readonly jobIds: ReadonlyArray<number>;
  readonly refused: ReadonlyArray<{
    readonly jobId: number;
    readonly reason: string;
    readonly message: string;
  }>;
}

/** A queue's limits (EVENTS-V3.md (24,3)); a field left out is kept, null removes it. */
export interface QueueLimits {
  readonly concurrency?: number | null;
  readonly rateLimit?: { readonly count: number; readonly perMs: number } | null;
}

/** A job as an insert answers it: `duplicate: true` when its unique key named an existing job. */
export type InsertedJob = Wire.InsertedJob;

/** A committed event, as the engine's subscriptions give it. */
export type Committed = Wire.CommittedEvent;

/** An entry of a job's history: a committed domain event, or a snapshot part narrowed to the job. */
export type HistoryEntry = Wire.HistoryEvent;

/** A change told by `changes`: the last committed sequence then. */
export interface Change {
  readonly sequence: number;
}

/** Changes as they are told (`changes`); `close` ends it. */
export type ChangeStream = AsyncIterableIterator<Change> & { readonly close: () => void };

const changedShape: Shape.Decoder<Change> = Shape.struct({ sequence: Shape.integer(0) });

/** Committed events as they commit; `close` ends it. */
export interface Subscription extends AsyncIterableIterator<Committed> {
  readonly close: () => void;
}

/** Progress reports as the server holds them (`progressStream`); `close` ends it. */
export interface ProgressStream extends AsyncIterableIterator<Progress.Progress> {
  readonly close: () => void;
}

/**
 * The events named `event` of the stream at `path`, each decoded: one that
 * does not decode fails the stream with `BadResponse` (the server is not
 * the protocol's), as do the transport's errors; it ends when the server
 * ends it or `close` is called.
 */
const eventsOf = <A>(
  transport: Transport,
  path: string,
  event: string,
  decoder: Shape.Decoder<A>,
): AsyncIterableIterator<A> & { readonly close: () => void } => {
  const controller = new AbortController();
  async function* stream(): AsyncGenerator<A> {
    try {
      for await (const message of transport.stream(path, controller.signal)) {
        if (message.event !== event) continue;
        const decoded = Shape.decode(decoder, message.data, event);
        if (!decoded.ok) throw new BadResponse(path, Shape.explain(decoded.error));
        yield decoded.value;
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  }
  return Object.assign(stream(), { close: () => controller.abort() });
};

/** How to connect. */
export interface ConnectOptions {
  /** The bearer token of a TCP listener (default: `$TAY_TOKEN`). */
  readonly token?: string;
  /**
   * How long an event stream (a subscription, the worker session) may
   * bring no byte before it is dropped as dead (default 45 s: three of the
   * server's 15 s pings). A dropped subscription throws `ConnectionFailed`
   * (`ETIMEDOUT`); a dropped session is opened anew by the next claim.
   */
  readonly streamIdleMs?: number;
  /** How long a `watch` whose stream dropped waits before opening it again (default 1 s). */
  readonly watchReconnectMs?: number;
}

const jobAnswer = Shape.struct({ job: Wire.job });
const insertedAnswer = Shape.struct({ job: Wire.insertedJob });
const insertedManyAnswer = Shape.struct({ jobs: Wire.insertedJobs });
const queueAnswer = Shape.struct({ queue: Shape.nullable(Wire.queueState) });
const jobsAnswer = Shape.struct({ jobs: Wire.jobs });
const healthAnswer = Shape.struct({ ok: Shape.boolean, log: Shape.string, pressure: Shape.number });
// A listing's page: `next` is the `after` of the page that follows, or null.
const jobsPage = Shape.struct({ jobs: Wire.jobs, next: Shape.nullable(Shape.integer(0)) });
const scheduleAnswer = Shape.struct({ schedule: Wire.schedule });
const maybeJob = Shape.struct({ job: Shape.nullable(Wire.job) });
const maybeProgress = Shape.struct({ progress: Shape.nullable(Wire.progress) });
const progressList = Shape.struct({ progress: Shape.array(Wire.progress) });
const historyAnswer = Shape.struct({ events: Shape.array(Wire.historyEvent) });
const givenAnswer = Shape.struct({ given: Shape.boolean });
const maybeSchedule = Shape.struct({ schedule: Shape.nullable(Wire.schedule) });
const bulkAnswer = Shape.struct({
  jobIds: Shape.array(Shape.integer(1)),
  refused: Shape.array(
    Shape.struct({ jobId: Shape.integer(1), reason: Shape.string, message: Shape.string }),
  ),
});

/** A filter's members as a request body carries them: those given. */
const filterBody = <S extends string>(filter: BulkFilter<S>): Wire.JsonObject => ({
  ...(filter.queue === undefined ? {} : { queue: filter.queue }),
  ...(filter.states === undefined ? {} : { states: [...filter.states] }),
  ...(filter.limit === undefined ? {} : { limit: filter.limit }),
});
const tickAnswer = Shape.struct({
  madeAvailable: Shape.integer(),
  delivered: Shape.integer(),
  skipped: Shape.integer(),
  timedOut: Shape.integer(),
});

/** A value as the wire carries it, or `InvalidValue` naming the path that is none. */
const wireValue = (input: unknown, path: string): Wire.Json => {
  const encoded = Shape.decode(Wire.inputJson, input, path);
  if (!encoded.ok) throw new InvalidValue(encoded.error);
  return encoded.value;
};

const newJobJson = (job: Commands.NewJob, path: string): Wire.JsonObject => ({
  queue: job.queue,
  worker: job.worker,
  args: wireValue(job.args, `${path}.args`),
  ...(job.priority === undefined ? {} : { priority: job.priority }),
  ...(job.maxAttempts === undefined ? {} : { maxAttempts: job.maxAttempts }),
  ...(job.scheduledAt === undefined ? {} : { scheduledAt: job.scheduledAt }),
  ...present({
    uniqueKey: job.uniqueKey,
    uniquePeriodMs: job.uniquePeriodMs,
    timeoutMs: job.timeoutMs,
  }),
});

const present = <A>(members: Record<string, A | undefined>): Record<string, A> => {
  const out: Record<string, A> = {};
  for (const [key, value] of Object.entries(members)) if (value !== undefined) out[key] = value;
  return out;
};

/** A client of one server. */
export class Client {
  private readonly transport: Transport;
  private readonly inserts: Batches;
  private readonly ends: Batches;
  private session: Promise<string> | undefined;
  /** The worker session's id once open: its ends name it (`x-tay-session`). */
  private sessionId: string | undefined;
  private sessionClose: (() => void) | undefined;
  private readonly ended = new Set<(committed: Committed) => void>();

  private readonly watchReconnectMs: number;
  /** The calls of `whenEnded`, over one watch (made with the first). */
  private jobEnds: JobEnds | undefined;

  constructor(
    address: Address,
    options: Pick<ConnectOptions, "streamIdleMs" | "watchReconnectMs"> = {},
  ) {
    this.transport = new Transport(address, options.streamIdleMs);
    this.watchReconnectMs = options.watchReconnectMs ?? watchReconnectMsDefault;
    const none = () => undefined;
    this.inserts = new Batches(this.transport, {
      route: "/v1/insert-batch",
      member: "jobs",
      headers: none,
    });
    this.ends = new Batches(this.transport, {
      route: "/v1/end-batch",
      member: "ends",
      headers: () =>
        this.sessionId === undefined ? undefined : { "x-tay-session": this.sessionId },
    });
  }

  private post<A>(path: string, body: Wire.Json, decoder: Shape.Decoder<A>, signal?: AbortSignal) {
    return this.transport.json("POST", path, body, decoder, signal === undefined ? {} : { signal });
  }

  private get<A>(path: string, decoder: Shape.Decoder<A>) {
    return this.transport.json("GET", path, undefined, decoder);
  }

  /**
   * Inserts one job; answers it as inserted, once durable. Inserts issued
   * together share one request (`internal/inserts.ts`); each still gets
   * its own job or its own error. With a `uniqueKey` that a job of the
   * queue holds, appends nothing and answers that job with
   * `duplicate: true` (such inserts go alone, so the marker is never lost).
   */
  async insert(job: Commands.NewJob): Promise<InsertedJob> {
    const json = newJobJson(job, "job");
    if (!batchable(job)) return (await this.post("/v1/insert", { job: json }, insertedAnswer)).job;
    return this.inserts.add(insertCommand(JSON.stringify(json)));
  }

  /** Inserts several jobs atomically (one record); answers them in order, duplicates marked. */
  async insertMany(jobs: ReadonlyArray<Commands.NewJob>): Promise<ReadonlyArray<InsertedJob>> {
    const body = { jobs: jobs.map((job, index) => newJobJson(job, `jobs[${index}]`)) };
    return (await this.post("/v1/insert-many", body, insertedManyAnswer)).jobs;
  }

  /** Runs a discarded or cancelled job again, keeping its history. */
  async redrive(jobId: number, options: RedriveOptions = {}): Promise<Job.Job> {
    const body = present<string | number>({
      jobId,
      maxAttempts: options.maxAttempts,
      reason: options.reason,
    });
    return (await this.post("/v1/redrive", body, jobAnswer)).job;
  }

  /**
   * Runs again every job `filter` names (default: the discarded ones of
   * every queue), each as `redrive` with `options`; a job changed since it
   * was chosen, or whose unique key another job holds, is listed as refused
   * while the others go on (docs/engine.md, "Commands over many jobs").
   */
  async redriveAll(
    filter: BulkFilter<"discarded" | "cancelled"> = {},
    options: RedriveOptions = {},
  ): Promise<BulkOutcome> {
    const body = {
      ...filterBody(filter),
      ...present<string | number>({ maxAttempts: options.maxAttempts, reason: options.reason }),
    };
    return await this.post("/v1/redrive-all", body, bulkAnswer);
  }

  /**
   * Cancels every job `filter` names (default: those waiting to run, of
   * every queue; executing ones only when named), each as `cancel`.
   */
  async cancelAll(
    filter: BulkFilter<"scheduled" | "available" | "executing" | "retryable"> = {},
    reason?: string,
  ): Promise<BulkOutcome> {
    const body = { ...filterBody(filter), ...present({ reason }) };
    return await this.post("/v1/cancel-all", body, bulkAnswer);
  }

  /** Pauses a queue; answers its state. */
  async pauseQueue(queue: string): Promise<Queue.QueueState | undefined> {
    return (await this.post("/v1/pause-queue", { queue }, queueAnswer)).queue ?? undefined;
  }

  /** Resumes a paused queue, keeping its limits; answers its state (undefined: the default). */
  async resumeQueue(queue: string): Promise<Queue.QueueState | undefined> {
    return (await this.post("/v1/resume-queue", { queue }, queueAnswer)).queue ?? undefined;
  }

  /** Sets a queue's concurrency and rate limit; answers its state. */
  async setQueueLimits(queue: string, limits: QueueLimits): Promise<Queue.QueueState | undefined> {
    const body: Wire.JsonObject = {
      queue,
      ...(limits.concurrency === undefined ? {} : { concurrency: limits.concurrency }),
      ...(limits.rateLimit === undefined
        ? {}
        : {
            rateLimit:
              limits.rateLimit === null
                ? null
                : { count: limits.rateLimit.count, perMs: limits.rateLimit.perMs },
          }),
    };
    return (await this.post("/v1/set-queue-limits", body, queueAnswer)).queue ?? undefined;
  }

  /** Starts up to `limit` (default 1) available jobs of `queue` now; each carries a lease. */
  async claim(queue: string, limit?: number): Promise<ReadonlyArray<Job.Job>> {
    return (await this.post("/v1/claim", present({ queue, limit }), jobsAnswer)).jobs;
  }

  /**
   * Completes an executing job (only `attempt`, with it). The completes
   * and fails issued together share one `/v1/end-batch` request
   * (`internal/ends.ts`); each still gets its own job or its own error.
   */
  async complete(
    jobId: number,
    result?: Value.Input,
    options: CompleteOptions = {},
  ): Promise<Job.Job> {
    const body: Wire.JsonObject = {
      jobId,
      ...(result === undefined ? {} : { result: wireValue(result, "result") }),
      ...(options.attempt === undefined ? {} : { attempt: options.attempt }),
    };
    if (!endable({ jobId, attempt: options.attempt }))
      return (await this.post("/v1/complete", body, jobAnswer)).job;
    return this.ends.add(endCommand("complete", JSON.stringify(body)));
  }

  /** Fails an executing job's attempt: retried after the backoff, or discarded (batched as `complete`). */
  async fail(jobId: number, error: string, options: FailOptions = {}): Promise<Job.Job> {
    const body: Wire.JsonObject = {
      jobId,
      error,
      ...(options.attempt === undefined ? {} : { attempt: options.attempt }),
      ...(options.discard === undefined ? {} : { discard: options.discard }),
      ...(options.backoff === undefined ? {} : { backoff: { ...options.backoff } }),
    };
    if (!endable({ jobId, error, ...options }))
      return (await this.post("/v1/fail", body, jobAnswer)).job;
    return this.ends.add(endCommand("fail", JSON.stringify(body)));
  }

  /** Cancels a job that is not terminal. */
  async cancel(jobId: number, reason?: string): Promise<Job.Job> {
    return (await this.post("/v1/cancel", present({ jobId, reason }), jobAnswer)).job;
  }

  /**
   * Registers or re-registers a schedule; `expectedRevision` 0 means "must
   * be new". A `timezone` (IANA name or "UTC"), `catchUp` ("once", "skip",
   * "all") or `catchUpWindowMs` (ms, or null for none) makes it a v3
   * schedule, the others defaulting as the engine's; the server refuses an
   * unknown zone, a policy or window that is none with `InvalidRequest`
   * naming the field.
   */
  async registerSchedule(
    scheduleId: string,
    definition: Commands.ScheduleDefinitionInput,
    expectedRevision?: number,
  ): Promise<Schedule.Schedule> {
    const body: Wire.JsonObject = {
      scheduleId,
      definition: {
        ...present({
          queue: definition.queue,
          worker: definition.worker,
          cron: definition.cron ?? undefined,
          overlap: definition.overlap,
        }),
        args: wireValue(definition.args, "definition.args"),
        priority: definition.priority,
        maxAttempts: definition.maxAttempts,
        everyMs: definition.everyMs,
        // EVENTS-V3.md: given, any of these makes the registration a (13,3), as in process.
        ...present({ timezone: definition.timezone, catchUp: definition.catchUp }),
        ...(definition.catchUpWindowMs === undefined
          ? {}
          : { catchUpWindowMs: definition.catchUpWindowMs }),
      },
      ...(expectedRevision === undefined ? {} : { expectedRevision }),
    };
    return (await this.post("/v1/register-schedule", body, scheduleAnswer)).schedule;
  }

  /** Cancels a schedule (optionally only at `expectedRevision`). */
  async cancelSchedule(scheduleId: string, expectedRevision?: number): Promise<Schedule.Schedule> {
    const body = present<string | number>({ scheduleId, expectedRevision });
    return (await this.post("/v1/cancel-schedule", body, scheduleAnswer)).schedule;
  }

  /**
   * Starts up to `limit` jobs from `lanes`, waiting until at least one can
   * start (the server answers a wait after `waitMs` with none, and the
   * client asks again). Each job carries a lease (`heartbeat` extends it);
   * with a worker session open (`session()`), a dropped connection fails
   * them. An answer that has not come `answerGraceMs` after the wait's end
   * drops its connection and rejects with `ConnectionFailed` (`ETIMEDOUT`):
   * a server whose host died, or a path that lost its state, says nothing,
   * and a claim waiting on it would otherwise wait forever (TCP notices
   * nothing on a connection nobody writes to). Jobs the server started for
   * a dropped claim fail at once ("lease expired") and are retried.
   */
  async nextJobs(
    lanes: ReadonlyArray<Lane>,
    options: NextJobsOptions = {},
  ): Promise<ReadonlyArray<Job.Job>> {
    const {
      signal,
      waitMs = Wire.nextJobsWaitMsDefault,
      answerGraceMs = answerGraceMsDefault,
    } = options;
    const headers = this.session === undefined ? {} : { "x-tay-session": await this.session };
    const body: Wire.JsonObject = {
      lanes: lanes.map((lane) => ({ queue: lane.queue, limit: lane.limit })),
      ...present({ limit: options.limit, leaseMs: options.leaseMs }),
      waitMs,
    };
    const aborted = () => signal?.aborted === true;
    while (!aborted()) {
      const answer = await this.waitedAnswer(body, headers, { waitMs, answerGraceMs }, signal);
      if (answer === undefined) return [];
      if (answer.jobs.length > 0) return answer.jobs;
    }
    return [];
  }

  /**
   * One waiting claim's answer; undefined when `signal` gave up the wait
   * before it was sent or once the connection had to be dropped.
   *
   * The caller's signal gives the claim up by its id (`/v1/give-up`), on
   * another request: the claim is then answered as it stands, with
   * nothing, or with the jobs the server started for it at that instant,
   * which the caller runs. Dropping the connection instead (what a server
   * before 2026-12-06, which answers the give-up 404, still gets) left
   * those jobs to fail unrun, an attempt spent. A give-up that fails or
   * is not answered within `answerGraceMs` drops the connection.
   */
  private async waitedAnswer(
    body: Wire.JsonObject,
    headers: Record<string, string>,
    timing: { readonly waitMs: number; readonly answerGraceMs: number },
    signal: AbortSignal | undefined,
  ) {
    const givenUp = () => signal?.aborted === true;
    if (givenUp()) return undefined;
    const claim = randomUUID();
    const deadlineMs = timing.waitMs + timing.answerGraceMs;
    // One controller per request, ended by the deadline or a give-up that did not get through.
    const request = new AbortController();
    const drop = () => request.abort();
    const timer = setTimeout(drop, deadlineMs);
    const giveUp = () => this.giveUp(claim, timing.answerGraceMs).then((sent) => sent || drop());
    signal?.addEventListener("abort", giveUp, { once: true });
    try {
      return await this.transport.json("POST", "/v1/next-jobs", { ...body, claim }, jobsAnswer, {
        headers,
        signal: request.signal,
      });
    } catch (error) {
      if (givenUp()) return undefined;
      if (!request.signal.aborted) throw error;
      throw new ConnectionFailed(
        addressText(this.transport.address),
        "ETIMEDOUT",
        `no answer to /v1/next-jobs ${deadlineMs} ms after it was sent (the server answers a wait within waitMs); the connection was dropped`,
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", giveUp);
    }
  }

  /** Gives up the waiting claim `claim`; false when the give-up did not get through in `withinMs`. */
  private async giveUp(claim: string, withinMs: number): Promise<boolean> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), withinMs);
    try {
      await this.post("/v1/give-up", { claim }, givenAnswer, controller.signal);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Extends the lease of a remotely claimed attempt; false when it is no longer held. */
  async heartbeat(jobId: number, attempt: number, leaseMs?: number): Promise<boolean> {
    const answer = Shape.struct({ held: Shape.boolean });
    return (await this.post("/v1/heartbeat", present({ jobId, attempt, leaseMs }), answer)).held;
  }

  /**
   * Holds `progress` as the progress of the job's executing `attempt` on
   * the server (in its engine's memory, not the log; let go when the
   * attempt ends) and answers it as held. Rejects with the server's
   * `Rejected`: `StaleAttempt` once the attempt ended, `InvalidField`,
   * `TooLarge` past 64 KiB; with `InvalidValue`, sending nothing, for what
   * is no value.
   */
  async reportProgress(
    jobId: number,
    attempt: number,
    progress: Value.Input,
  ): Promise<Progress.Progress | undefined> {
    const body = { jobId, attempt, progress: wireValue(progress, "progress") };
    return (await this.post("/v1/progress", body, maybeProgress)).progress ?? undefined;
  }

  /** The progress reported for the job's executing attempt, or undefined. */
  async progress(jobId: number): Promise<Progress.Progress | undefined> {
    return (await this.get(`/v1/jobs/${jobId}/progress`, maybeProgress)).progress ?? undefined;
  }

  /** The progress of every executing attempt that reported one, ascending by job id. */
  async progresses(): Promise<ReadonlyArray<Progress.Progress>> {
    return (await this.get("/v1/progress", progressList)).progress;
  }

  /** Fails every job executing since before `startedBefore`; answers how many. */
  async rescue(startedBefore: number, error: string): Promise<number> {
    const answer = Shape.struct({ rescued: Shape.integer() });
    return (await this.post("/v1/rescue", { startedBefore, error }, answer)).rescued;
  }

  async tick(): Promise<TickReport> {
    return this.post("/v1/tick", null, tickAnswer);
  }

  async flush(): Promise<void> {
    await this.post("/v1/flush", null, Shape.record);
  }

  /**
   * Compacts (terminal jobs finished more than `retentionMs` ago are
   * dropped); answers the new generation, what it removed, and the jobs
   * kept and dropped.
   */
  async compact(retentionMs: number): Promise<Wire.Compaction> {
    return this.post("/v1/compact", { retentionMs }, Wire.compaction);
  }

  async job(jobId: number): Promise<Job.Job | undefined> {
    return (await this.get(`/v1/jobs/${jobId}`, maybeJob)).job ?? undefined;
  }

  /**
   * Job `jobId`'s history in the store's current generation, in log order
   * (core's `JobHistory`, as `tay job` shows it): the events that name it
   * (those inside a mutation each with its index), a schedule's events
   * that deliver or list it, and, after a compaction, the base's snapshot
   * part narrowed to the job, its state then (a compaction keeps a job's
   * state, not the events before it). What the dashboard's history view
   * shows. Empty for a job never inserted. The server reads only the
   * records that mention the job (docs/store.md).
   */
  async history(jobId: number): Promise<ReadonlyArray<HistoryEntry>> {
    return (await this.get(`/v1/jobs/${jobId}/history`, historyAnswer)).events;
  }

  /**
   * Committed jobs by id (ascending, or descending with `order: "desc"`),
   * of `filter`'s queue and state, at most its `limit`, between its
   * `after` and `before`. The server answers a page at a time (at most
   * 1,000 jobs, so one listing never holds it from its other callers);
   * this asks for each page in turn until the listing ends.
   */
  async jobs(filter: JobFilter = {}): Promise<ReadonlyArray<Job.Job>> {
    const listed: Array<Job.Job> = [];
    let { after, before } = filter;
    for (;;) {
      const left = filter.limit === undefined ? undefined : filter.limit - listed.length;
      const query = new URLSearchParams(
        present({
          queue: filter.queue,
          state: filter.state,
          limit: left?.toString(),
          after: after?.toString(),
          before: before?.toString(),
          order: filter.order,
        }),
      );
      const page = await this.get(`/v1/jobs?${query}`, jobsPage);
      listed.push(...page.jobs);
      // An empty page ends it too: a next with nothing before it would ask forever.
      if (page.next === null || page.jobs.length === 0) return listed;
      if (left !== undefined && page.jobs.length >= left) return listed;
      if (filter.order === "desc") before = page.next;
      else after = page.next;
    }
  }

  async schedule(scheduleId: string): Promise<Schedule.Schedule | undefined> {
    const path = `/v1/schedules/${encodeURIComponent(scheduleId)}`;
    return (await this.get(path, maybeSchedule)).schedule ?? undefined;
  }

  async schedules(): Promise<ReadonlyArray<Schedule.Schedule>> {
    return (await this.get("/v1/schedules", Shape.struct({ schedules: Wire.schedules }))).schedules;
  }

  /** A queue's committed state, or undefined for the default (unpaused, no limits). */
  async queue(name: string): Promise<Queue.QueueState | undefined> {
    const path = `/v1/queues/${encodeURIComponent(name)}`;
    return (await this.get(path, queueAnswer)).queue ?? undefined;
  }

  /** Every queue whose committed state is not the default. */
  async queues(): Promise<ReadonlyArray<Queue.QueueState>> {
    const answer = Shape.struct({ queues: Shape.array(Wire.queueState) });
    return (await this.get("/v1/queues", answer)).queues;
  }

  async counts(): Promise<ReadonlyMap<string, Query.Counts>> {
    return (await this.get("/v1/counts", Shape.struct({ counts: Wire.counts }))).counts;
  }

  async nextWakeAt(): Promise<number | null> {
    const answer = Shape.struct({ nextWakeAt: Shape.nullable(Shape.integer()) });
    return (await this.get("/v1/next-wake-at", answer)).nextWakeAt;
  }

  /**
   * Whether the server's store takes appends (`GET /v1/health`): its log
   * (`open`, or `gated` for a moment) and pressure. Rejects with the
   * server's `Unhealthy` once the store refuses appends for good.
   */
  async health(): Promise<{
    readonly ok: boolean;
    readonly log: string;
    readonly pressure: number;
  }> {
    return this.get("/v1/health", healthAnswer);
  }

  /** The store's status (id, epoch, sequences, bytes, pressure, leases, ...). */
  async status(): Promise<Readonly<Record<string, unknown>>> {
    return this.get("/v1/status", Shape.record);
  }

  /**
   * Every committed event from the next commit (or `from`), in log order.
   * Fails as the engine's subscription does (`Compacted`), and with the
   * transport's errors; ends when the server ends it or `close` is called.
   */
  subscribe(options: { readonly from?: number } = {}): Subscription {
    const path = options.from === undefined ? "/v1/events" : `/v1/events?from=${options.from}`;
    return eventsOf(this.transport, path, "committed", Wire.committed);
  }

  /**
   * That something committed, at most once each `intervalMs` (default 100,
   * 10..60,000), with the last committed sequence (`GET /v1/changes`):
   * what a view that re-reads on change wants, at a cost to the server
   * that does not grow with the commits (`subscribe` sends every event
   * with its payload). Ends when the server ends it or `close` is called.
   */
  changes(options: { readonly intervalMs?: number } = {}): ChangeStream {
    const path =
      options.intervalMs === undefined
        ? "/v1/changes"
        : `/v1/changes?intervalMs=${options.intervalMs}`;
    return eventsOf(this.transport, path, "changed", changedShape);
  }

  /**
   * Progress reports of executing attempts as the server holds them (of
   * `jobs`, or of all), starting with those it holds now: BullMQ's
   * `QueueEvents` "progress". A reader that falls behind gets the latest
   * report of each job once it catches up, not every one. Ends when the
   * server ends it or `close` is called; fails with the transport's errors.
   */
  progressStream(options: { readonly jobs?: ReadonlyArray<number> } = {}): ProgressStream {
    const query = new URLSearchParams(
      (options.jobs ?? []).map((jobId): [string, string] => ["job", String(jobId)]),
    );
    const path = query.size === 0 ? "/v1/progress/stream" : `/v1/progress/stream?${query}`;
    return eventsOf(this.transport, path, "progress", Wire.progress);
  }

  /**
   * Tells `listener` each committed event as it arrives (in log order),
   * until the returned function is called. For runtimes that react to
   * commits; `subscribe` for anything that must not miss one. A dropped
   * stream (a server's restart) is opened again a second later from the
   * last event told (internal/watch.ts); it ends only when stopped, when
   * the server refuses it (a wrong token) or when the client is closed.
   */
  watch(listener: (committed: ReadonlyArray<Committed>) => void): () => void {
    return watching(
      (from) => this.subscribe(from === undefined ? {} : { from }),
      listener,
      this.watchReconnectMs,
    );
  }

  /**
   * Resolves with the job once it has ended: completed, discarded or
   * cancelled (at once if it has). Rejects with `UnknownJob` for a job the
   * server does not have, with the signal's reason when aborted, and with
   * `ConnectionFailed` (`ECLOSED`) when the client is closed. Every call of
   * a client shares one event stream, opened from the server's last
   * sequence before the job is read, so no end is missed (JobEnds.ts).
   */
  whenEnded(jobId: number, options: { readonly signal?: AbortSignal } = {}): Promise<Job.Job> {
    this.jobEnds ??= new JobEnds({
      watch: (listener, missed) => this.watchFromNow(listener, missed),
      job: (id) => this.job(id),
    });
    return this.jobEnds.whenEnded(jobId, options);
  }

  /** The sequence the server's next commit will have. */
  private async nextSequence(): Promise<number> {
    const status = await this.get("/v1/status", Shape.struct({ lastSequence: Shape.integer(0) }));
    return status.lastSequence + 1;
  }

  /**
   * A watch opened from the server's sequence as it stands now: ready once
   * that is known. When its place is compacted away it opens again from the
   * server's sequence then and tells `missed`.
   */
  private watchFromNow(
    listener: (events: ReadonlyArray<Event.Event>) => void,
    missed: () => void,
  ): EndWatch {
    let stop: (() => void) | undefined;
    let stopped = false;
    const ready = this.nextSequence().then((from) => {
      if (stopped) return;
      stop = watching(
        (at) => this.subscribe(at === undefined ? {} : { from: at }),
        (committed) => listener(committed.map((one) => one.event)),
        this.watchReconnectMs,
        from,
        { relocate: () => this.nextSequence(), relocated: missed },
      );
    });
    return {
      ready,
      stop: () => {
        stopped = true;
        stop?.();
      },
    };
  }

  /**
   * Opens this client's worker session (once while it lasts): the jobs it
   * claims from then on are leased to it, so if its connection drops the
   * server fails them at once ("lease expired"); `onEnded` listeners hear
   * the end of every attempt it holds (a cancel, a rescue). A session
   * whose connection ended (a server's restart), or that could not open,
   * is opened anew by the next call; `onEnded` listeners stay.
   */
  openSession(): Promise<string> {
    if (this.session === undefined) {
      const opening = this.startSession();
      this.session = opening;
      // One that could not open is opened again when next asked for, not kept as a failure:
      // a worker that first claimed while the server was down never claimed again (2026-12-06).
      opening.catch(() => {
        if (this.session === opening) this.session = undefined;
      });
    }
    return this.session;
  }

  /** Tells `listener` the end of each attempt this client's session holds. */
  onEnded(listener: (committed: Committed) => void): () => void {
    this.ended.add(listener);
    return () => {
      this.ended.delete(listener);
    };
  }

  private async startSession(): Promise<string> {
    const controller = new AbortController();
    this.sessionClose = () => controller.abort();
    const stream = this.transport.stream("/v1/session", controller.signal);
    const first = await stream.next();
    const decoded = Shape.decode(
      Shape.struct({ session: Shape.string }),
      first.value?.data,
      "session",
    );
    if (first.done === true || !decoded.ok) {
      controller.abort();
      throw new BadResponse("/v1/session", "the stream's first event is no session id");
    }
    const id = decoded.value.session;
    this.sessionId = id;
    void (async () => {
      try {
        for await (const message of stream) {
          if (message.event !== "ended") continue;
          const committed = Shape.decode(Wire.committed, message.data, "ended");
          if (committed.ok) for (const listener of this.ended) listener(committed.value);
        }
      } catch {
        // The session ends with its connection; its leases end with it on the server.
      }
      // The next `openSession` opens a new one. Kept, the ended session's id was sent with
      // every claim after a server's restart: the server no longer knew it, so the jobs
      // claimed were leased to no session, and `onEnded` heard no cancel of them again.
      if (this.sessionId === id) {
        this.session = undefined;
        this.sessionId = undefined;
      }
    })();
    return id;
  }

  /** Ends the session and the pool. Safe to call twice. */
  async close(): Promise<void> {
    this.sessionClose?.();
    this.jobEnds?.close(
      new ConnectionFailed(
        addressText(this.transport.address),
        "ECLOSED",
        "the client was closed while a call waited for a job's end",
      ),
    );
    this.transport.close();
  }
}

/** A token from the options or `$TAY_TOKEN`. */
const tokenOf = (options: ConnectOptions): string | undefined =>
  options.token ?? (typeof process === "undefined" ? undefined : process.env.TAY_TOKEN);

/**
 * Connects to the server of the store in `target` (a data directory: its
 * socket is found through LOCK), or at `target` when it is a URL
 * (`http://127.0.0.1:7070`, with the bearer token). Rejects with
 * `ConnectionFailed` when nothing answers there.
 */
export const connect = async (target: string, options: ConnectOptions = {}): Promise<Client> => {
  const address: Address = /^https?:\/\//.test(target)
    ? urlAddress(new URL(target), tokenOf(options))
    : { socket: Locate.socketOf(target) };
  const client = new Client(address, options);
  try {
    await client.status();
  } catch (error) {
    await client.close();
    throw error;
  }
  return client;
};

const urlAddress = (url: URL, token: string | undefined): Address => ({
  host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
  port: url.port === "" ? 80 : Number(url.port),
  token,
});
