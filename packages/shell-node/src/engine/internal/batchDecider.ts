/**
 * The engine's decisions: a drain of queued commands decided in order
 * against the running state, folded as one transient batch, queued as one
 * store submission, and answered once that submission is durable.
 *
 * Two states are kept. `decided` includes everything queued, so the next
 * command decides against it (two claims never take the same job);
 * `committed` includes only batches whose durability has resolved, and is
 * what queries read.
 *
 * Inserts decide from the last id handed out (`Decide.insertJobsAfter`),
 * are checked with the fold's own rule (`Evolve.checkInserts`), and fold
 * later: before the next command of the drain that is not an insert, or,
 * for those at the end of a drain, once the drain's write has been handed
 * to the disk (docs/engine.md, "fold inserts once their write is handed
 * over"). Inserts with unique keys too: they decide against the folded
 * state and the keys of the drain's inserts not folded yet
 * (`Decide.insertJobsPending`, checked by `Decide.checkPendingInserts`); a
 * duplicate waits in the same line, and is answered once the job it names
 * is folded.
 */
import {
  Commands,
  Decide,
  type Event,
  Evolve,
  type Job,
  Query,
  type State,
  type Terminal,
} from "@tay/core";
import * as Batch from "../../log/Batch.js";
import type * as Log from "../../log/Log.js";
import { AppendConflict, type LogError, UnencodableEvent } from "../../log/LogError.js";
import type { Entry } from "../../log/Projection.js";
import * as Ticket from "../../log/Ticket.js";
import { CatchUp, type ContentionExhausted, type Reloaded } from "./catchUp.js";
import { type Pending, PromiseRequest, Rejected, type Waiting } from "./engineRequest.js";

// Microtasks as a resolved promise's reactions: cheaper than `queueMicrotask`.
const resolved = Promise.resolve();

/** What a drain's lists read as before their first element. */
const none: ReadonlyArray<never> = [];

/** What a drain on a lean state lets go of when its commands let go of nothing (inserts). */
const nothingLeft: Terminal.Left = { jobs: none, results: none };

/**
 * `list` with `item` appended: made at the first item, as a list of one
 * place (an empty list's first push reserves 17: ~130 bytes more a list,
 * and a drain of one insert fills several: docs/engine.md, 2026-12-04).
 */
const pushed = <T>(list: Array<T> | undefined, item: T): Array<T> => {
  if (list === undefined) return [item];
  list.push(item);
  return list;
};

/** An accepted insert whose records are queued but not folded yet. */
interface Unfolded<X> {
  readonly request: Pending<X>;
  readonly events: Decide.Decision;
}

/**
 * The last_job_id after `events`, decided as inserts after `lastJobId`, if
 * the fold's rule accepts them (`Evolve.checkInserts`); else what is wrong.
 */
const checkedInserts = (lastJobId: number, events: Decide.Decision): number | string => {
  let last = lastJobId;
  for (const event of events) {
    const check = Evolve.checkInserts(last, event);
    switch (check._tag) {
      case "Accepted":
        last = check.lastJobId;
        break;
      case "Refused":
        return check.error.reason._tag;
      case "DependsOnState":
        return `${event._tag} is not an insert`;
      default: {
        const unknownCheck: never = check;
        return unknownCheck;
      }
    }
  }
  return last;
};

/** An incoming job's answer to the log: the records that inserted it. */
const theDecision = (_state: State.State, events: Decide.Decision): Decide.Decision => events;

/** The job ids a decided insert inserted, in order. */
const insertedIds = (events: Decide.Decision): Array<number> => {
  const ids: Array<number> = [];
  for (const event of events) {
    const members = event._tag === "Mutation" ? event.events : [event];
    for (const member of members) {
      if (member._tag === "JobInserted" || member._tag === "JobInsertedV3") ids.push(member.jobId);
    }
  }
  return ids;
};

/**
 * What an incoming job's refusal means to its log: the deciders' or the
 * codec's refusal, or a defect, will refuse it again (`Refused`); a failure
 * of the log or a conflict may not (`NotAppended`: offered again).
 */
const incomingOutcome = (reason: unknown): Log.IncomingOutcome => {
  const message = reason instanceof Error ? reason.message : String(reason);
  const tag =
    typeof reason === "object" && reason !== null && "_tag" in reason ? reason._tag : undefined;
  return typeof tag === "string" && tag !== "Rejected" && tag !== "UnencodableEvent"
    ? { _tag: "NotAppended", reason: message }
    : { _tag: "Refused", reason: message };
};

/** A batch of the fold that has applied `accepted`, starting from `from`. */
const replayed = (from: State.State, accepted: ReadonlyArray<Decide.Decision>) => {
  const run = Evolve.batch(from);
  let state = from;
  for (const events of accepted) {
    const next = run.evolveAll(events);
    // These records folded once from the very same states: a refusal now is a bug.
    if (next._tag === "Left") throw new Error(`replay refused: ${next.left.reason._tag}`);
    state = next.right;
  }
  return { run, state };
};

/** A decision's records, or undefined once the refusal has answered `request`. */
const recordsOf = <X>(
  request: Pending<X>,
  decision: Decide.Decided,
): Decide.Decision | undefined => {
  if (decision._tag === "Right") return decision.right;
  request.refuse(new Rejected({ command: request.command._tag, rejection: decision.left }));
  return undefined;
};

/**
 * The commands whose records can let a parked claim start a job: they make
 * one available (an insert, a due job or occurrence, a redrive), free a
 * slot of a queue's concurrency (an attempt that ends), or resume a queue.
 */
const makesAvailable: ReadonlySet<Commands.CommandTag> = new Set([
  "InsertJobs",
  "MakeDueAvailable",
  "Tick",
  "RedriveJob",
  "SetQueueState",
  "CompleteJob",
  "FailJob",
  "CancelJob",
  "RescueJobs",
  "TimeoutJobs",
]);

/**
 * Which lane the next waiting claim starts from, moved by one each time a
 * waiting claim starts jobs: one per decider, since each claim is a new
 * request (its own `rotation` starts at 0 and is decided with jobs once).
 */
interface LaneTurn {
  next: number;
}

// The turn wraps here (a power of two: for 1, 2, 4 or 8 lanes the cycle goes on unbroken).
const laneTurnWrap = 2 ** 30;

const hasRoom = (lane: { readonly limit: number }): boolean =>
  Number.isSafeInteger(lane.limit) && lane.limit >= 1;

/** A waiting claim that may never start a job: no lane with room, or no room in all. */
const noLane = <X>(request: Pending<X>): Rejected =>
  new Rejected({
    command: request.command._tag,
    rejection: {
      _tag: "InvalidField",
      field: "lanes",
      detail: "a waiting claim needs a limit of at least 1, in all and in one of its lanes",
    },
  });

/** One drain: its commands decided in order, their records, and the fold so far. */
class Drain<K extends Log.Kind> {
  private run: Evolve.Batch;
  /** The state after every accepted command folded so far. */
  state: State.State;
  // The last id handed out: `state`'s, plus the inserts not folded yet.
  private lastJobId: number;
  // The lists are made at their first element (a drain of one insert is
  // the common case, and its cost is per command).
  private acceptedList: Array<Pending<Failure<K>>> | undefined;
  private ridersList: Array<Pending<Failure<K>>> | undefined;
  // The records of accepted commands already in `run` (for a replay)...
  private folded: Array<Decide.Decision> | undefined;
  // ...and those of accepted inserts that are not, in order (a duplicate
  // insert among them with no records: answered once its holder is folded).
  private backlog: Array<Unfolded<Failure<K>>> | undefined;
  // The unique keys of the inserts in `backlog`, and the job holding each:
  // the decider's one table, emptied as the drain starts and as its backlog folds.
  // The records to append: the first command's own prepared list, then more appended to it.
  private recordList: Array<Batch.PendingRecord> | undefined;
  bytes = 0;
  private parkingList: Array<Pending<Failure<K>>> | undefined;
  /** An accepted command may have made jobs available (an insert, a tick). */
  madeAvailable = false;
  /** A throw of the late fold, after the records were queued. */
  defect: { readonly defect: unknown } | undefined;
  // What the accepted commands let go of on a lean state, in order (each
  // command's `leaving`, read for its answer): the terminal index takes
  // them at the commit rather than computing `leaving` over the records again.
  private leftJobs: Array<Job.Job> | undefined;
  private leftResults: Array<Event.ResultRecorded> | undefined;

  constructor(
    private readonly log: Log.Log<K>,
    private readonly base: State.State,
    private readonly pendingKeys: Decide.PendingKeys,
    private readonly laneTurn: LaneTurn,
  ) {
    pendingKeys.clear();
    this.run = Evolve.batch(base);
    this.state = base;
    this.lastJobId = base.lastJobId;
  }

  get unfolded(): boolean {
    return this.backlog !== undefined;
  }

  /** The accepted commands, in order. */
  get accepted(): ReadonlyArray<Pending<Failure<K>>> {
    return this.acceptedList ?? none;
  }

  /** The records to append, in order (a new empty list while nothing is accepted). */
  get records(): Array<Batch.PendingRecord> {
    return this.recordList ?? [];
  }

  /**
   * On a lean state, what the drain's records let go of: equal to
   * `Evolve.leaving(base, records)` but for a job that leaves and then gets
   * a result in the same drain, held as its record and a result (the index
   * takes either form). Undefined on a state that keeps every job.
   */
  get left(): Terminal.Left | undefined {
    if (!this.base.lean) return undefined;
    const { leftJobs, leftResults } = this;
    if (leftJobs === undefined && leftResults === undefined) return nothingLeft;
    return { jobs: leftJobs ?? none, results: leftResults ?? none };
  }

  /**
   * Accepted commands that append nothing (a unique insert answered with the
   * existing job, a claim that found none): their answers were read from
   * `decided`, so they are answered with the batch that makes it durable.
   */
  get riders(): ReadonlyArray<Pending<Failure<K>>> {
    return this.ridersList ?? none;
  }

  /** Waiting claims of this drain that found nothing to start. */
  get parking(): ReadonlyArray<Pending<Failure<K>>> {
    return this.parkingList ?? none;
  }

  /**
   * Decides one command and answers a refusal or a defect at once. Throws
   * only when folding the inserts before it fails (a defect of the whole
   * drain, with nothing queued yet).
   */
  add(request: Pending<Failure<K>>): void {
    if (request.cancelled) return;
    const { command } = request;
    // Only inserts decide without the inserts before them folded (from
    // last_job_id, and the keys of the backlog); anything else sees them folded.
    const fromLastId = command._tag === "InsertJobs";
    if (!fromLastId && this.backlog !== undefined) this.foldBacklog();
    try {
      if (request.waiting !== undefined) {
        // Given up before its drain (nothing listened to its signal yet):
        // answered with no job, as an abort while parked is.
        if (request.signal?.aborted === true) {
          request.accept(this.state, none);
          request.settle(undefined);
        } else if (!this.claimWaiting(request, request.waiting, command.now, true)) {
          this.parkingList = pushed(this.parkingList, request);
        }
      } else if (command._tag === "InsertJobs") this.insert(request, command);
      else this.decideAndFold(request, command);
    } catch (defect) {
      // A throwing decider or fold is a bug: its caller dies, the drain
      // goes on from the commands accepted before it.
      request.die(defect);
      this.replay();
    }
  }

  /**
   * Folds the inserts not folded yet, answering each from the state right
   * after it. They were checked by the fold's own rule before they were
   * queued, so the fold cannot refuse them: a refusal is a defect.
   * `late`: the drain's decisions are over (its late fold), so no command
   * of it will be replayed, and the records are not kept for a replay.
   */
  foldBacklog(late = false): void {
    const backlog = this.backlog;
    if (backlog === undefined) return;
    for (const { request, events } of backlog) {
      // A duplicate: its answer reads the job it names, folded by now.
      if (events.length === 0) {
        request.accept(this.state, events);
        continue;
      }
      const next = this.run.evolveAll(events);
      if (next._tag === "Left") {
        throw new Error(`checked inserts refused by the fold: ${next.left.reason._tag}`);
      }
      this.state = next.right;
      request.accept(this.state, events);
      if (!late) this.folded = pushed(this.folded, events);
    }
    this.backlog = undefined;
    this.pendingKeys.clear();
  }

  private insert(request: Pending<Failure<K>>, command: Commands.InsertJobs): void {
    if (Decide.insertUsesV3(command)) {
      this.insertKeyed(request, command);
      return;
    }
    const events = recordsOf(request, Decide.insertJobsAfter(this.lastJobId, command));
    if (events === undefined) return;
    const checked = checkedInserts(this.lastJobId, events);
    if (typeof checked !== "number") {
      request.die(new Error(`decider produced an illegal record: ${checked}`));
      return;
    }
    const prepared = this.admitted(request, events);
    if (prepared === undefined) return;
    this.take(request, prepared);
    this.lastJobId = checked;
    this.backlog = pushed(this.backlog, { request, events });
  }

  /**
   * An insert with schema-3 fields, decided against the state and the keys
   * of the backlog, queued unfolded as a plain insert is. A duplicate
   * appends nothing: a rider, answered in its turn of the backlog (the job
   * it names may be in it).
   */
  private insertKeyed(request: Pending<Failure<K>>, command: Commands.InsertJobs): void {
    const { state, lastJobId, pendingKeys } = this;
    const events = recordsOf(
      request,
      Decide.insertJobsPending(
        state,
        lastJobId,
        pendingKeys.size === 0 ? undefined : pendingKeys,
        command,
      ),
    );
    if (events === undefined) return;
    if (events.length === 0) {
      this.ridersList = pushed(this.ridersList, request);
      if (this.backlog === undefined) request.accept(state, events);
      else this.backlog.push({ request, events });
      return;
    }
    let last = lastJobId;
    for (const event of events) {
      const checked = Decide.checkPendingInserts(last, event);
      if (typeof checked !== "number") {
        request.die(new Error(`decider produced an illegal record: ${checked}`));
        return;
      }
      last = checked;
    }
    const prepared = this.admitted(request, events);
    if (prepared === undefined) return;
    this.take(request, prepared);
    this.lastJobId = last;
    this.pendKeys(events);
    this.backlog = pushed(this.backlog, { request, events });
  }

  // The unique keys `events` (accepted inserts) hold from now on.
  private pendKeys(events: Decide.Decision): void {
    for (const event of events) {
      if (event._tag === "Mutation") for (const member of event.events) this.pendKey(member);
      else this.pendKey(event);
    }
  }

  private pendKey(event: Event.Event): void {
    if (event._tag !== "JobInsertedV3" || event.uniqueKey === null) return;
    this.pendingKeys.add(event.queue, event.uniqueKey, event.jobId);
  }

  private decideAndFold(request: Pending<Failure<K>>, command: Commands.Command): void {
    const events = recordsOf(request, Decide.decide(this.state, command));
    if (events === undefined) return;
    if (events.length === 0) {
      request.accept(this.state, events);
      this.ridersList = pushed(this.ridersList, request);
      return;
    }
    // A decided record that the fold refuses is a bug in the deciders, not
    // an operating error: nothing of it is queued, its caller dies.
    this.foldAccepted(request, events);
  }

  /**
   * Decides a waiting claim across its lanes at `now`: false when nothing
   * can start (the caller parks it), true once it is answered (jobs started,
   * or a refusal). `fresh`: its first decision, which checks every lane
   * (a parked claim only looks at queues with available jobs).
   */
  claimWaiting(
    request: Pending<Failure<K>>,
    waiting: Waiting,
    now: number,
    fresh: boolean,
  ): boolean {
    const events = this.claimsOf(request, waiting, now, fresh);
    if (events === undefined) return true;
    if (events.length === 0) return false;
    // Claims of different queues never touch the same job: one fold for all lanes.
    waiting.rotation += 1;
    this.laneTurn.next = (this.laneTurn.next + 1) % laneTurnWrap;
    if (this.foldAccepted(request, events)) waiting.decided?.();
    return true;
  }

  // The started records of every lane, decided against the same state;
  // undefined once a refusal has answered the request.
  private claimsOf(
    request: Pending<Failure<K>>,
    { lanes, limit, rotation }: Waiting,
    now: number,
    fresh: boolean,
  ): Array<Decide.Decision[number]> | undefined {
    if (fresh && (!Number.isSafeInteger(limit) || limit < 1 || !lanes.some(hasRoom))) {
      request.refuse(noLane(request));
      return undefined;
    }
    const events: Array<Decide.Decision[number]> = [];
    for (let index = 0; index < lanes.length && events.length < limit; index++) {
      const lane = lanes[(this.laneTurn.next + rotation + index) % lanes.length];
      if (lane === undefined || lane.limit < 1) continue;
      if (!fresh && Query.availableIn(this.state, lane.queue) === 0) continue;
      const claimed = recordsOf(
        request,
        Decide.decide(
          this.state,
          Commands.claimJobs({
            now,
            queue: lane.queue,
            limit: Math.min(lane.limit, limit - events.length),
          }),
        ),
      );
      if (claimed === undefined) return undefined;
      for (const event of claimed) events.push(event);
    }
    return events;
  }

  // Folds an accepted command's records and takes them into the batch; a
  // fold that refuses them is a bug in the deciders: its caller dies.
  // True when they are taken (false: the caller was answered already).
  private foldAccepted(request: Pending<Failure<K>>, events: Decide.Decision): boolean {
    const prepared = this.admitted(request, events);
    if (prepared === undefined) return false;
    // Read before the fold, which may update the draft's nodes in place:
    // a job the events complete is only a fact in a lean state after them.
    // An insert's records (all a keyed insert decides) make no job leave,
    // and `leaving` would build a whole job record per insert to find that.
    const left =
      this.state.lean && request.command._tag !== "InsertJobs"
        ? Evolve.leaving(this.state, events)
        : undefined;
    const next = this.run.evolveAll(events);
    if (next._tag === "Left") {
      request.die(new Error(`decider produced an illegal record: ${next.left.reason._tag}`));
      this.replay();
      return false;
    }
    this.state = next.right;
    this.lastJobId = this.state.lastJobId;
    request.accept(this.state, events, left);
    if (left !== undefined) {
      for (const job of left.jobs) this.leftJobs = pushed(this.leftJobs, job);
      for (const result of left.results) this.leftResults = pushed(this.leftResults, result);
    }
    this.take(request, prepared);
    this.folded = pushed(this.folded, events);
    return true;
  }

  // Back to the state of the commands folded so far, on a fresh batch (the
  // refused or throwing command may have left part of itself in the old one).
  private replay(): void {
    ({ run: this.run, state: this.state } = replayed(this.base, this.folded ?? none));
  }

  // Encoded and budgeted before anything is folded: the batch's state
  // changes in place, so only a command sure to be queued may be folded.
  private admitted(request: Pending<Failure<K>>, events: Decide.Decision): Batch.Batch | undefined {
    const prepared = Batch.prepareOrRefuse(events);
    if (prepared instanceof UnencodableEvent) {
      request.refuse(prepared);
      return undefined;
    }
    const full = this.log.overBudget(this.bytes, prepared.bytes);
    if (full !== undefined) {
      request.refuse(full);
      return undefined;
    }
    return prepared;
  }

  private take(request: Pending<Failure<K>>, prepared: Batch.Batch): void {
    // The first command's prepared list is the drain's (nothing else holds it).
    const records = this.recordList;
    if (records === undefined || records.length === 0) this.recordList = prepared.records;
    else for (const record of prepared.records) records.push(record);
    this.bytes += prepared.bytes;
    this.acceptedList = pushed(this.acceptedList, request);
    if (makesAvailable.has(request.command._tag)) this.madeAvailable = true;
  }
}

/** What a command decided by this engine can fail with besides its refusal: its log's failures. */
export type Failure<K extends Log.Kind> = K["error"] | LogError | ContentionExhausted;

/** How a shared log's conflicts are met (`EngineOptions.conflictRetriesMax`, `conflictBackoffMs`). */
export interface Contention {
  readonly retriesMax: number;
  readonly backoffMs: number;
}

/** The running states and the drains that move them. */
export class BatchDecider<K extends Log.Kind> {
  private decidedState: State.State;
  // The last sequence of everything queued: what the next append expects.
  private decidedLastSequence: number;
  private committedState: { readonly state: State.State; readonly lastSequence: number };
  // The drain whose late fold has not run yet.
  private unfolded: Drain<K> | undefined;
  // Every drain's pending unique keys, one table reused (each drain folds
  // its backlog before the next drain starts: `decide` runs `foldPending`).
  private readonly pendingKeys = new Decide.PendingKeys();
  // Where the next waiting claim's lanes start (`LaneTurn`).
  private readonly laneTurn: LaneTurn = { next: 0 };
  // The ticket of the last append: everything decided is durable once it settles.
  private lastAppend: Ticket.Ticket<Failure<K>> | undefined;
  // A late fold that threw: `decided` lacks records that were queued, so
  // nothing may decide any more; every later command dies with it.
  private stopped: { readonly defect: unknown } | undefined;
  // Waiting claims that found nothing to start, oldest first.
  private parked: Array<Pending<Failure<K>>> = [];
  /**
   * Told each batch's records once they are committed (subscribers, timers,
   * the terminal index), other writers' too, with the committed state they
   * were decided on.
   */
  afterCommit: (
    records: ReadonlyArray<Entry>,
    before: State.State,
    // What the records let go of, when the drain knows it (not for a catch-up's records).
    left?: Terminal.Left,
  ) => void = () => {};
  /**
   * Told of a command that waits past the drain it entered (a parked
   * claim, a command held or retried by a catch-up): the queue listens to
   * its signal from then on (`Pending.signal`).
   */
  waits: (request: Pending<Failure<K>>) => void = () => {};
  /** Told when claims were parked: the time to wake them may be earlier (`parkedWakeAt`). */
  parkedAgain: () => void = () => {};
  /** Told when the engine moved onto another writer's generation (its subscribers re-read). */
  afterReload: (generation: Reloaded) => void = () => {};
  /** Catching up with other writers of a shared log after a conflict (`internal/catchUp.ts`). */
  readonly catchUp: CatchUp<K, Failure<K>>;
  // The requests of the log's incoming jobs and their keys: never decided
  // again after a conflict (the log offers them again while they wait).
  private readonly incomingKeys = new WeakMap<Pending<Failure<K>>, string>();

  constructor(
    private readonly log: Log.Log<K>,
    state: State.State,
    lastSequence: number,
    // The time a parked claim is decided again at (the engine's clock).
    private readonly now: () => number,
    contention: Contention,
  ) {
    this.decidedState = state;
    this.decidedLastSequence = lastSequence;
    this.committedState = { state, lastSequence };
    this.catchUp = new CatchUp<K, Failure<K>>(
      log,
      {
        committed: () => this.committedState,
        caughtUp: (caught, last, entries) => {
          const before = this.committedState.state;
          this.rebase(caught);
          this.decidedLastSequence = last;
          // Everything decided is committed now: a command that appends
          // nothing is answered at once, not after an append that conflicted.
          this.lastAppend = undefined;
          this.committedState = { state: caught, lastSequence: last };
          if (entries.length > 0) this.afterCommit(entries, before);
        },
        reloaded: (reloaded, last, generation, entries) => {
          const before = this.committedState.state;
          this.rebase(reloaded);
          this.decidedLastSequence = last;
          this.lastAppend = undefined;
          this.committedState = { state: reloaded, lastSequence: last };
          this.afterReload(generation);
          if (entries.length > 0) this.afterCommit(entries, before);
        },
        takeParked: () => this.takeParked(),
        waits: (request) => this.waits(request),
        decide: (requests) => this.decide(requests),
      },
      contention.retriesMax,
      (error) => error,
      contention.backoffMs,
    );
  }

  /** Everything queued, folded (a pending late fold runs first). */
  get decided(): State.State {
    this.foldPending();
    return this.decidedState;
  }

  /** Only what is durable as the log's policy asks. */
  get committed(): State.State {
    return this.committedState.state;
  }

  /**
   * The last sequence `decided` holds. It trails the log's last sequence
   * while a catch-up has learned other writers' head but not yet folded
   * their records: a compaction of `decided` must expect this one.
   */
  get decidedThrough(): number {
    return this.decidedLastSequence;
  }

  /** The last sequence of what is committed. */
  get committedLastSequence(): number {
    return this.committedState.lastSequence;
  }

  /**
   * Makes `state` (a compaction's new base, which holds everything) both
   * states, at the log's last sequence after the compaction.
   */
  rebase(state: State.State): void {
    this.foldPending();
    this.decidedState = state;
    this.decidedLastSequence = this.log.lastSequence();
    this.committedState = { state, lastSequence: this.decidedLastSequence };
  }

  /**
   * Decides `requests` in order and appends the accepted ones' records as
   * one batch, answered once it is durable. Refusals and defects of a
   * single command are answered at once. Throws only for a defect of the
   * whole drain, with nothing appended.
   */
  decide(requests: ReadonlyArray<Pending<Failure<K>>>): void {
    this.foldPending();
    const stopped = this.stopped;
    if (stopped !== undefined) {
      for (const request of requests) request.die(stopped.defect);
      return;
    }
    // Catching up with another writer: decided once the state holds its records.
    if (this.catchUp.active) {
      this.catchUp.hold(requests);
      return;
    }
    const drain = new Drain(this.log, this.decidedState, this.pendingKeys, this.laneTurn);
    // The log's incoming jobs go first: they were committed before these commands were issued.
    const incoming = this.takeIncoming();
    for (const request of incoming) drain.add(request);
    for (const request of requests) drain.add(request);
    for (const request of drain.parking) {
      this.parked.push(request);
      this.waits(request);
    }
    if (this.parked.length > 0 && (drain.madeAvailable || this.windowPassed())) {
      this.wakeParked(drain);
    }
    if (drain.parking.length > 0) this.parkedAgain();
    if (drain.accepted.length === 0) {
      this.answerRiders(drain.riders);
      return;
    }
    // Only this drain's incoming jobs have keys (a conflict refuses them, it never retries them).
    const consumed = incoming.length === 0 ? none : this.consumedBy(drain.accepted);
    const appended = this.log.append(
      consumed.length === 0
        ? { records: drain.records, bytes: drain.bytes }
        : { records: drain.records, bytes: drain.bytes, consumed },
      this.decidedLastSequence,
    );
    if (appended instanceof AppendConflict) {
      // Nothing was appended: the drain's state is dropped (its base is
      // untouched) and its commands (riders too: they read that state) are
      // decided again once caught up.
      this.conflicted([...drain.accepted, ...drain.riders], appended);
      return;
    }
    this.lastAppend = appended;
    const lastSequence = appended.lastSequence;
    this.decidedLastSequence = lastSequence;
    if (drain.unfolded) {
      // A microtask queued after the writer's own: the writer hands the
      // batch to the disk first, and the fold overlaps the write instead of
      // delaying it. Whatever needs `decided` first folds at once.
      this.unfolded = drain;
      resolved.then(this.foldPending);
    } else {
      this.decidedState = drain.state;
    }
    Ticket.onSettled(appended, (failure) => this.settle(drain, lastSequence, failure));
  }

  /**
   * Answers the riders of a drain that appended nothing once the last
   * append settles (at once if it has): an answer never shows a record
   * (the existing job a duplicate insert names) that is not durable yet.
   */
  private answerRiders(riders: ReadonlyArray<Pending<Failure<K>>>): void {
    if (riders.length === 0) return;
    const settleAll = (failure: Failure<K> | undefined) => {
      // The append they waited for met another writer's: they read a state
      // that append was part of, so they are decided again once caught up.
      if (failure instanceof AppendConflict) {
        this.conflicted(riders, failure);
        return;
      }
      for (const request of riders) request.settle(failure);
    };
    const last = this.lastAppend;
    if (last === undefined) settleAll(undefined);
    else Ticket.onSettled(last, settleAll);
  }

  /**
   * The log's incoming jobs (`Log.incoming`) as requests whose answers go
   * back to the log: appended (with their job ids), refused, or not
   * appended this time.
   */
  private takeIncoming(): ReadonlyArray<Pending<Failure<K>>> {
    const incoming = this.log.incoming;
    if (incoming === undefined) return none;
    return incoming.take().map(({ key, command }) => {
      const request = new PromiseRequest<Decide.Decision, Failure<K>>(
        command,
        theDecision,
        undefined,
        (events) => incoming.settled(key, { _tag: "Appended", jobIds: insertedIds(events) }),
        (reason) => incoming.settled(key, incomingOutcome(reason)),
      );
      this.incomingKeys.set(request, key);
      return request;
    });
  }

  /** The keys of the incoming jobs among `accepted`, in order. */
  private consumedBy(accepted: ReadonlyArray<Pending<Failure<K>>>): Array<string> {
    const keys: Array<string> = [];
    for (const request of accepted) {
      const key = this.incomingKeys.get(request);
      if (key !== undefined) keys.push(key);
    }
    return keys;
  }

  /**
   * A batch met `AppendConflict`: its commands are decided again after the
   * catch-up, but its incoming jobs are handed back to the log. Another
   * engine may have appended them already (the conflict may say just
   * that); the log offers them again only while they still wait.
   */
  private conflicted(requests: ReadonlyArray<Pending<Failure<K>>>, conflict: AppendConflict): void {
    const retried: Array<Pending<Failure<K>>> = [];
    for (const request of requests) {
      if (this.incomingKeys.has(request)) request.refuse(conflict);
      else retried.push(request);
    }
    this.catchUp.conflicted(retried, conflict.held === true);
  }

  /**
   * The earliest time a parked claim held back only by a queue's rate
   * limit may start one of that queue's available jobs: nothing but the
   * window passing lets it start, so the engine's timer drains then. Null
   * when no parked claim waits on a window.
   */
  parkedWakeAt(): number | null {
    const state = this.decided;
    // Only a rate-limited queue that started jobs keeps start times.
    if (this.parked.length === 0 || state.indexes.starts.size === 0) return null;
    let earliest = Number.POSITIVE_INFINITY;
    for (const request of this.parked) {
      for (const lane of request.waiting?.lanes ?? []) {
        if (state.indexes.available.get(lane.queue) === undefined) continue;
        // At or before now only until a drain decides the claim again.
        const at = Decide.rateRoomFrom(state, lane.queue);
        if (at !== null && at < earliest) earliest = at;
      }
    }
    return earliest === Number.POSITIVE_INFINITY ? null : earliest;
  }

  // A parked claim's window has passed: a drain with nothing that makes a
  // job available decides the parked claims again all the same.
  private windowPassed(): boolean {
    const at = this.parkedWakeAt();
    return at !== null && at <= this.now();
  }

  /** Parked waiting claims, oldest first. */
  get parkedCount(): number {
    return this.parked.length;
  }

  /** Drops a parked waiting claim; false when it is not parked (decided, or never was). */
  unpark(request: Pending<Failure<K>>): boolean {
    const position = this.parked.indexOf(request);
    if (position < 0) return this.catchUp.drop(request);
    this.parked.splice(position, 1);
    return true;
  }

  /** Every parked waiting claim, unparked (the caller answers them). */
  takeParked(): Array<Pending<Failure<K>>> {
    const parked = this.parked;
    this.parked = [];
    return parked;
  }

  // The drain may have made jobs available: the parked claims, oldest
  // first, start what they can in the same batch.
  private wakeParked(drain: Drain<K>): void {
    drain.foldBacklog();
    const now = this.now();
    const stillParked: Array<Pending<Failure<K>>> = [];
    for (const request of this.parked) {
      const { waiting } = request;
      if (waiting === undefined || !drain.claimWaiting(request, waiting, now, false)) {
        stillParked.push(request);
      }
    }
    this.parked = stillParked;
  }

  /** Runs the late fold of the last drain, if it has not run yet. */
  private readonly foldPending = (): void => {
    const drain = this.unfolded;
    if (drain === undefined) return;
    this.unfolded = undefined;
    try {
      drain.foldBacklog(true);
      this.decidedState = drain.state;
    } catch (defect) {
      drain.defect = { defect };
      this.stopped = drain.defect;
    }
  };

  private settle(drain: Drain<K>, lastSequence: number, failure: Failure<K> | undefined): void {
    this.foldPending();
    if (drain.defect !== undefined) {
      for (const request of [...drain.accepted, ...drain.riders]) request.die(drain.defect.defect);
      return;
    }
    // Another writer appended first: nothing of the drain was written.
    if (failure instanceof AppendConflict) {
      this.conflicted([...drain.accepted, ...drain.riders], failure);
      return;
    }
    if (failure === undefined) this.catchUp.appended(drain.records.length);
    // Tickets settle in sequence order; the guard keeps `committed`
    // monotonic even so.
    const before = this.committedState.state;
    if (failure === undefined && lastSequence > this.committedState.lastSequence) {
      this.committedState = { state: drain.state, lastSequence };
    }
    for (const request of drain.accepted) request.settle(failure);
    for (const request of drain.riders) request.settle(failure);
    if (failure === undefined) this.afterCommit(drain.records, before, drain.left);
    // A log that failed for good takes no more appends: nothing parked would ever wake.
    const admitted = failure === undefined ? undefined : this.log.admission();
    if (admitted?._tag === "Refused") {
      for (const request of this.takeParked()) request.refuse(admitted.error);
    }
  }
}
