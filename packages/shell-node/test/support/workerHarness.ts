/**
 * Shared fixtures of the worker suites: an engine on an in-memory fault disk, a wait until the
 * engine and its workers have settled (nothing changed for a few macrotasks), a ledger of worker
 * events that checks, at every event, that no job has two live attempts and that no queue or
 * worker passes its concurrency, and an audit of the log that every job's records start its
 * attempts in order, end each attempt at most once and end the job at most once.
 */
import { Event } from "@tay/core";
import { Chunk, Effect, Stream } from "effect";
import type * as Disk from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import type * as Worker from "../../src/worker/Worker.js";

/** Where the fault-disk suites keep their store. */
export const faultDirectory = "/data";

/**
 * A disk whose every file write finishes on a later turn of the event loop (as a real one's
 * would, from the thread pool): a batch is then durable only after the microtasks of the turn
 * that appended it, so what comes in that turn meets it in flight.
 */
const writesOnNextTurn = (inner: Disk.DiskService): Disk.DiskService => {
  const nextTurn = Effect.async<void>((resume) => {
    setImmediate(() => resume(Effect.void));
  });
  const wrap = (handle: Disk.FileHandle): Disk.FileHandle => ({
    ...handle,
    write: (position, bytes) => Effect.zipRight(nextTurn, handle.write(position, bytes)),
  });
  return {
    ...inner,
    open: (file, mode, options) => Effect.map(inner.open(file, mode, options), wrap),
    create: (file, bytes) => Effect.map(inner.create(file, bytes), wrap),
  };
};

/** How `engineOnFaultDisk` opens. */
export interface FaultEngineOptions extends Engine.EngineOptions {
  /** Every file write finishes on a later turn of the event loop (see `writesOnNextTurn`). */
  readonly writesOnNextTurn?: boolean;
}

/** A fresh fault disk holding an initialized store, and the engine opened on it for the scope. */
export const engineOnFaultDisk = (options: FaultEngineOptions = {}) =>
  Effect.gen(function* () {
    const { writesOnNextTurn: slow = false, ...engineOptions } = options;
    const disk = FaultDisk.make();
    disk.seedDirectory(faultDirectory);
    const layer = FaultDisk.layer(slow ? writesOnNextTurn(disk) : disk);
    yield* Effect.provide(Init.init(faultDirectory), layer);
    const engine = yield* Effect.provide(Engine.open(faultDirectory, engineOptions), layer);
    return { disk, engine };
  });

/** Rounds with nothing changed that count as settled. */
const stableRoundsMin = 3;
/** Rounds after which a system that keeps changing is a bug (a loop that never parks). */
const settleRoundsMax = 20_000;

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));
const timer = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * Resolves (in real time) once `fingerprint` has not changed for a few rounds of the event loop,
 * the last of them a timer's (Effect's scheduler yields to one after long runs of microtasks):
 * every drain decided, every write of the fault disk done, every handler parked on the clock or
 * on its signal. `light` waits for two rounds of immediates only (a pause, not a proof of
 * quiet). Dies when it never settles.
 */
export const quiet = async (fingerprint: () => string, light = false): Promise<number> => {
  const stableMin = light ? 2 : stableRoundsMin;
  let last = fingerprint();
  let stable = 0;
  for (let round = 1; round <= settleRoundsMax; round++) {
    await (!light && stable + 1 >= stableMin ? timer() : immediate());
    const now = fingerprint();
    stable = now === last ? stable + 1 : 0;
    last = now;
    if (stable >= stableMin) return round;
  }
  throw new Error(`never settled after ${settleRoundsMax} rounds (last: ${last})`);
};

/** `quiet` as an Effect. */
export const settled = (fingerprint: () => string): Effect.Effect<number> =>
  Effect.promise(() => quiet(fingerprint));

/** One worker event as the ledger keeps it. */
export interface Seen {
  readonly tag: Worker.WorkerEvent["_tag"];
  readonly jobId: number;
  readonly attempt: number;
  readonly queue: string;
  /** The clock's time when the worker told it. */
  readonly at: number;
  /** The job's state in the event (after the attempt's end, for an end). */
  readonly state: string;
  readonly error: string | undefined;
}

const errorOf = (event: Worker.WorkerEvent): string | undefined =>
  event._tag === "Retried" || event._tag === "Discarded" || event._tag === "Unrecorded"
    ? event.error
    : undefined;

/**
 * Every event of one worker, checked as it is told: an attempt starts only while its job has no
 * live attempt and its queue and the worker have room; an end ends the live attempt; a handler
 * runs only for a live attempt, once. What breaks a rule is kept in `violations` (throwing here
 * would throw inside the worker).
 */
export class Ledger {
  readonly seen: Array<Seen> = [];
  readonly violations: Array<string> = [];
  private readonly live = new Map<number, { readonly attempt: number; readonly queue: string }>();
  private readonly running = new Map<string, number>();
  private total = 0;
  private readonly invocations = new Set<string>();
  /** Handlers called, in all. */
  invoked = 0;

  constructor(
    private readonly limits: ReadonlyMap<string, number>,
    private readonly totalMax: number,
    private readonly now: () => number,
  ) {}

  /** What `Halted` told (the engine refused a claim), in order. */
  readonly halts: Array<string> = [];

  readonly onEvent = (event: Worker.WorkerEvent): void => {
    if (event._tag === "Halted") {
      this.halts.push(event.error);
      return;
    }
    // Only a remote worker tells it.
    if (event._tag === "ClaimFailed") return;
    const { job } = event;
    this.seen.push({
      tag: event._tag,
      jobId: job.jobId,
      attempt: job.attempt,
      queue: job.queue,
      at: this.now(),
      state: job.state,
      error: errorOf(event),
    });
    if (event._tag === "Started") this.started(job.jobId, job.attempt, job.queue);
    else this.ended(job.jobId, job.attempt, event._tag);
  };

  private started(jobId: number, attempt: number, queue: string): void {
    const live = this.live.get(jobId);
    if (live !== undefined) {
      this.violations.push(`job ${jobId} started attempt ${attempt} while ${live.attempt} is live`);
    }
    this.live.set(jobId, { attempt, queue });
    const inQueue = (this.running.get(queue) ?? 0) + 1;
    this.running.set(queue, inQueue);
    this.total += 1;
    if (inQueue > (this.limits.get(queue) ?? 0)) {
      this.violations.push(`queue ${queue} runs ${inQueue}, over its ${this.limits.get(queue)}`);
    }
    if (this.total > this.totalMax) {
      this.violations.push(`the worker runs ${this.total}, over its ${this.totalMax}`);
    }
  }

  private ended(jobId: number, attempt: number, tag: string): void {
    const live = this.live.get(jobId);
    if (live === undefined || live.attempt !== attempt) {
      this.violations.push(`${tag} for job ${jobId} attempt ${attempt}, live: ${live?.attempt}`);
      return;
    }
    this.live.delete(jobId);
    this.running.set(live.queue, (this.running.get(live.queue) ?? 0) - 1);
    this.total -= 1;
  }

  /** A handler was called for `attempt` of `jobId`: it must be live, and called once. */
  handlerCalled(jobId: number, attempt: number): void {
    this.invoked += 1;
    const key = `${jobId}.${attempt}`;
    if (this.invocations.has(key)) this.violations.push(`the handler of ${key} ran twice`);
    this.invocations.add(key);
    if (this.live.get(jobId)?.attempt !== attempt) {
      this.violations.push(`the handler of ${key} ran while that attempt was not live`);
    }
  }

  /** Whether the handler of `attempt` of `jobId` was called. */
  called(jobId: number, attempt: number): boolean {
    return this.invocations.has(`${jobId}.${attempt}`);
  }

  /** The live attempt of `jobId`, if any. */
  liveAttempt(jobId: number): number | undefined {
    return this.live.get(jobId)?.attempt;
  }

  /** Handlers running now, in `queue` or in all. */
  runningIn(queue?: string): number {
    return queue === undefined ? this.total : (this.running.get(queue) ?? 0);
  }
}

/** What the log holds about one job. */
export interface JobRecords {
  readonly jobId: number;
  /** Its records' event tags in log order (a completion is `JobFinished:completed`). */
  readonly tags: ReadonlyArray<string>;
  /** Records that end the job: completed, discarded or cancelled. */
  readonly terminal: number;
  readonly completed: number;
  /** The errors its attempts ended with, in order. */
  readonly errors: ReadonlyArray<string>;
  /** How each attempt ended, by attempt: the record's tag and error (none while it runs). */
  readonly ends: ReadonlyMap<number, { readonly tag: string; readonly error: string | null }>;
}

const memberEvents = (event: Event.Event): ReadonlyArray<Event.DomainEvent> =>
  event._tag === "Mutation" ? event.events : Event.isSnapshotPart(event) ? [] : [event];

const tagOf = (event: Event.DomainEvent): string =>
  event._tag === "JobFinished" ? `JobFinished:${event.outcome}` : event._tag;

/** The job one of its records concerns, or undefined for schedule records. */
const jobIdOf = (event: Event.DomainEvent): number | undefined =>
  "jobId" in event && typeof event.jobId === "number" ? event.jobId : undefined;

/** Every job record of the log, in order, grouped by job. */
export const jobRecords = (engine: Engine.EngineService) =>
  Effect.gen(function* () {
    const generation = yield* engine.log.generation();
    const entries = yield* Stream.runCollect(engine.log.iterFrom(generation.firstSequence));
    const byJob = new Map<number, Array<Event.DomainEvent>>();
    for (const entry of Chunk.toReadonlyArray(entries)) {
      for (const event of memberEvents(entry.event)) {
        const jobId = jobIdOf(event);
        if (jobId === undefined) continue;
        const events = byJob.get(jobId) ?? [];
        events.push(event);
        byJob.set(jobId, events);
      }
    }
    return byJob;
  });

/**
 * Checks one job's records against the lifecycle (EVENTS.md), independently of the fold: each
 * start is the next attempt of a job that is not executing, each end (finished, retried,
 * cancelled while executing) ends the attempt in progress once, nothing follows a terminal
 * record. Returns what it found, or throws naming the first record out of place.
 */
export const auditJob = (jobId: number, events: ReadonlyArray<Event.DomainEvent>): JobRecords => {
  let attempt = 0;
  let executing = false;
  let terminal = 0;
  let completed = 0;
  const errors: Array<string> = [];
  const ends = new Map<number, { readonly tag: string; readonly error: string | null }>();
  const fault = (event: Event.DomainEvent, why: string) =>
    new Error(`job ${jobId}: ${tagOf(event)} ${why} (records: ${events.map(tagOf).join(", ")})`);
  for (const [index, event] of events.entries()) {
    // A completion's result is recorded beside it, in the same mutation.
    const result = event._tag === "ResultRecorded" && events[index - 1]?._tag === "JobFinished";
    if (terminal > 0 && !result) throw fault(event, "after the job ended");
    switch (event._tag) {
      case "JobStarted":
        if (executing || event.attempt !== attempt + 1) throw fault(event, "out of turn");
        attempt = event.attempt;
        executing = true;
        break;
      case "JobRetried":
      case "JobFinished":
        if (!executing) throw fault(event, "without an attempt in progress");
        executing = false;
        ends.set(attempt, { tag: tagOf(event), error: event.error });
        if (event.error !== null) errors.push(event.error);
        if (event._tag === "JobFinished") terminal += 1;
        if (event._tag === "JobFinished" && event.outcome === "completed") completed += 1;
        break;
      case "JobCancelled":
        if (executing) ends.set(attempt, { tag: tagOf(event), error: event.reason });
        executing = false;
        terminal += 1;
        break;
      default:
        break;
    }
  }
  return { jobId, tags: events.map(tagOf), terminal, completed, errors, ends };
};

/** Every job's records, audited (see `auditJob`). */
export const auditLog = (engine: Engine.EngineService) =>
  Effect.map(jobRecords(engine), (byJob) =>
    [...byJob].map(([jobId, events]) => auditJob(jobId, events)),
  );
