/**
 * The two places a fold writes to, behind one interface so the transition
 * rules exist once:
 *
 * - `BuilderStore`: plain mutable arrays and maps, used while folding a
 *   whole generation (the fast path at open). It keeps no indexes; `toState`
 *   builds the persistent state and its indexes in one pass at the end.
 * - `Draft`: a working copy of a persistent `State` for `evolve`. It
 *   replaces roots of persistent maps (never mutating a shared node) and
 *   keeps the indexes up to date, so the old state stays valid. Given an
 *   `Edit` token, it updates the nodes it created itself in place (a
 *   transient run): only the state it publishes last is meant to be kept.
 */
import { isTerminal, type ResultRecorded } from "../Event.js";
import type { HistoryReason } from "../HistoryError.js";
import { applied, type Job, type JobTransitionEvent, withSchedule } from "../Job.js";
import type { QueueState } from "../Queue.js";
import type { Schedule } from "../Schedule.js";
import { type Fact, factOf, type Left, leavesMemory } from "../Terminal.js";
import {
  compareClaimOrder,
  compareDeadlineOrder,
  compareDueOrder,
  compareExecutingOrder,
  comparePendingOrder,
  type Indexes,
  initialState,
  type State,
  type StateCounts,
  stateIndex,
  uniqueIndexKey,
  zeroCounts,
} from "../State.js";
import type { Edit } from "./Edit.js";
import { applyInPlace, copy, type JobResult, type MutableJob, noErrors } from "./JobRecord.js";
import { FactMap, FactMapBuilder, type Packed } from "./FactMap.js";
import { IdMap } from "./IdMap.js";
import { pushStart, withStart } from "./Starts.js";
import { UniqueIndex } from "./UniqueIndex.js";
import { type Compare, compareStrings, SortedMap } from "./SortedMap.js";

/** What the transition rules read and write. */
export interface Store {
  lastJobId: number;
  getJob(jobId: number): Job | undefined;
  /** Adds a new job; the store takes the fresh record over. */
  addJob(job: MutableJob): void;
  /** Applies a legal, already checked event to a job of the store. */
  changeJob(job: Job, event: JobTransitionEvent): void;
  /** Moves a job's schedule back-pointer. */
  setMembership(job: Job, scheduleId: string | null): void;
  getSchedule(scheduleId: string): Schedule | undefined;
  putSchedule(before: Schedule | undefined, after: Schedule): void;
  /** The queue's state, or undefined for the default (unpaused, no limits). */
  getQueue(queue: string): QueueState | undefined;
  /** Sets a queue's state; undefined sets it back to the default. */
  putQueue(queue: string, state: QueueState | undefined): void;
  /** How many jobs of the queue are executing. */
  executingIn(queue: string): number;
  /** The ids of the jobs of `queue` holding `uniqueKey`, ascending. */
  uniqueHolders(queue: string, uniqueKey: string): ReadonlyArray<number>;
  /** Set once a schema-3 record is applied. */
  schema3: boolean;
}

// The result a stand-in shows when its job's result was recorded: the
// rules read only whether there is one.
const recordedResult: JobResult = { value: null, at: 0 };

/**
 * The record the rules read for a job a lean state keeps as facts: the
 * job's id, state, queue and attempt, and a result exactly when one was
 * recorded. Its other fields are placeholders no rule reads for a
 * completed job; it never leaves a store (no state publishes it).
 */
const standIn = (jobId: number, fact: Fact): MutableJob => ({
  jobId,
  queue: fact.queue,
  worker: "",
  args: null,
  priority: 0,
  maxAttempts: fact.attempt,
  attempt: fact.attempt,
  state: "completed",
  insertedAt: 0,
  scheduledAt: 0,
  attemptedAt: null,
  finishedAt: null,
  errors: noErrors,
  result: fact.hasResult ? recordedResult : null,
  scheduleId: null,
  uniqueKey: null,
  uniquePeriodMs: null,
  timeoutMs: null,
});

const noIds: ReadonlyArray<number> = [];

const isEmpty = (items: Iterable<unknown>): boolean => {
  for (const _ of items) return false;
  return true;
};

/** Ids this far beyond the dense array's end (or below its start) go to the sparse map. */
const denseGapMax = 4096;

/**
 * The mutable store of a generation fold. Jobs live in an array indexed by
 * id minus the first id seen (ids are dense and increasing in practice; far
 * outliers go to a `Map`), so a lookup is one array read. It owns its job records and updates them
 * in place, so the fold allocates nothing per event beyond what the event
 * adds. `toState` publishes the records themselves and seals them: from
 * then on a published record is copied before any change (the copy is
 * owned again), so a published state never changes.
 */
export class BuilderStore implements Store {
  lastJobId = 0;
  schema3 = false;
  private readonly dense: Array<MutableJob | undefined> = [];
  /** The id at dense[0]. */
  private base = 0;
  private readonly sparse = new Map<number, MutableJob>();
  private count = 0;
  // Lean folds only: the facts of completed jobs, packed in pages this
  // store owns until `toState` publishes them (a job leaves `dense` for
  // `facts` as it completes).
  private readonly facts = new FactMapBuilder();
  readonly schedules = new Map<string, Schedule>();
  readonly queues = new Map<string, QueueState>();
  private readonly unique = new Map<string, Array<number>>();
  private readonly starts = new Map<string, ReadonlyArray<number>>();
  private readonly ownedStarts = new Map<string, Array<number>>();
  // Executing counts of the queues a concurrency check asked about: counted
  // once when first asked, then kept up to date, so a fold of a store with
  // no concurrency limit never pays for them.
  private readonly executing = new Map<string, number>();
  // Records created or copied since the last `toState`; only consulted
  // once sealed, so the fold at open never pays for it.
  private sealed = false;
  private readonly owned = new Set<number>();

  // With `collect`: the whole records of the jobs that left memory, and the
  // (10,2) results of jobs already handed over, until `takeLeft`.
  private leftJobs: Array<Job> = [];
  private readonly leftAt = new Map<number, number>();
  private leftResults: Array<ResultRecorded> = [];

  /**
   * `lean`: completed jobs without a unique key are kept as facts only.
   * `collect`: their whole records are kept until `takeLeft` hands them over.
   */
  constructor(
    private readonly lean = false,
    private readonly collect = false,
  ) {}

  /** The whole records that left memory since the last call, and later results for them. */
  takeLeft(): Left {
    const left = { jobs: this.leftJobs, results: this.leftResults };
    this.leftJobs = [];
    this.leftResults = [];
    this.leftAt.clear();
    return left;
  }

  private noteLeft(job: Job, event: JobTransitionEvent | undefined): void {
    if (!this.collect) return;
    if (event?._tag !== "ResultRecorded") {
      this.leftAt.set(job.jobId, this.leftJobs.length);
      this.leftJobs.push(job);
      return;
    }
    const at = this.leftAt.get(job.jobId);
    const whole = at === undefined ? undefined : this.leftJobs[at];
    if (at === undefined || whole === undefined) this.leftResults.push(event);
    else this.leftJobs[at] = applied(whole, event);
  }

  getJob(jobId: number): MutableJob | undefined {
    const job = this.wholeJob(jobId);
    if (job !== undefined || this.facts.size === 0) return job;
    const fact = this.facts.get(jobId);
    return fact === undefined ? undefined : standIn(jobId, fact);
  }

  private wholeJob(jobId: number): MutableJob | undefined {
    const offset = jobId - this.base;
    const job = offset >= 0 && offset < this.dense.length ? this.dense[offset] : undefined;
    // An id can sit in the sparse map even inside the dense range (the
    // dense array grew past it later), so a miss also looks there.
    return job !== undefined || this.sparse.size === 0 ? job : this.sparse.get(jobId);
  }

  /** Moves a job that left memory out of `dense`/`sparse` into the facts, or updates its facts. */
  private keepFact(jobId: number, fact: Fact): void {
    const offset = jobId - this.base;
    if (offset >= 0 && offset < this.dense.length && this.dense[offset] !== undefined) {
      this.dense[offset] = undefined;
      this.count--;
    } else if (this.sparse.delete(jobId)) {
      this.count--;
    }
    this.facts.set(jobId, fact);
  }

  addJob(job: MutableJob): void {
    const jobId = job.jobId;
    if (this.dense.length === 0 && this.sparse.size === 0 && this.facts.size === 0) {
      this.base = jobId;
    }
    const offset = jobId - this.base;
    if (offset >= 0 && offset < this.dense.length + denseGapMax) {
      // Filling a gap; `undefined` marks an absent id.
      while (this.dense.length < offset) this.dense.push(undefined);
      this.dense[offset] = job;
    } else {
      this.sparse.set(jobId, job);
    }
    this.count++;
    if (this.sealed) this.owned.add(jobId);
    if (job.uniqueKey !== null) {
      const key = uniqueIndexKey(job.queue, job.uniqueKey);
      const holders = this.unique.get(key);
      if (holders === undefined) this.unique.set(key, [jobId]);
      else holders.push(jobId);
    }
    if (job.state === "executing") this.countExecuting(job.queue, 1);
    if (this.lean && leavesMemory(job)) {
      this.keepFact(jobId, factOf(job));
      this.noteLeft(job, undefined);
    }
  }

  changeJob(job: Job, event: JobTransitionEvent): void {
    const owned = this.own(job.jobId);
    if (owned === undefined) {
      // A job kept as facts: (10,2) is the one event its rules let through.
      if (this.lean && event._tag === "ResultRecorded" && this.facts.has(job.jobId)) {
        this.keepFact(job.jobId, { ...factOf(job), hasResult: true });
        this.noteLeft(job, event);
      }
      return;
    }
    const from = owned.state;
    applyInPlace(owned, event);
    if (this.lean && leavesMemory(owned)) {
      this.keepFact(owned.jobId, factOf(owned));
      this.noteLeft(owned, event);
    }
    if (from !== owned.state) {
      if (from === "executing") this.countExecuting(owned.queue, -1);
      else if (owned.state === "executing") this.countExecuting(owned.queue, 1);
    }
    if (event._tag === "JobStarted" && this.queues.size > 0) {
      const rate = this.queues.get(owned.queue)?.rateLimit ?? null;
      if (rate !== null) this.noteStart(owned.queue, event.at, rate.count);
    }
  }

  // The builder appends in place to the start lists it created since it
  // last published a state; a published list is copied first.
  private noteStart(queue: string, at: number, count: number): void {
    const current = this.starts.get(queue);
    const owned = this.ownedStarts.get(queue);
    if (owned !== undefined && owned === current) pushStart(owned, at, count);
    else {
      const next = withStart(current, at, count);
      this.starts.set(queue, next);
      this.ownedStarts.set(queue, next);
    }
  }

  private countExecuting(queue: string, delta: number): void {
    if (this.executing.size === 0) return;
    const current = this.executing.get(queue);
    if (current !== undefined) this.executing.set(queue, current + delta);
  }

  getQueue(queue: string): QueueState | undefined {
    // Every start asks (EVENTS-V3.md's pause and concurrency rules): a fold
    // of a history without queue states must not pay a lookup for it.
    return this.queues.size === 0 ? undefined : this.queues.get(queue);
  }

  putQueue(queue: string, state: QueueState | undefined): void {
    if (state === undefined) this.queues.delete(queue);
    else this.queues.set(queue, state);
    if (state?.rateLimit === null || state === undefined) this.starts.delete(queue);
  }

  executingIn(queue: string): number {
    const known = this.executing.get(queue);
    if (known !== undefined) return known;
    let total = 0;
    const visit = (job: MutableJob | undefined): void => {
      if (job !== undefined && job.queue === queue && job.state === "executing") total++;
    };
    for (const job of this.dense) visit(job);
    for (const job of this.sparse.values()) visit(job);
    this.executing.set(queue, total);
    return total;
  }

  uniqueHolders(queue: string, uniqueKey: string): ReadonlyArray<number> {
    return this.unique.get(uniqueIndexKey(queue, uniqueKey)) ?? noIds;
  }

  setMembership(job: Job, scheduleId: string | null): void {
    const owned = this.own(job.jobId);
    if (owned !== undefined) owned.scheduleId = scheduleId;
  }

  getSchedule(scheduleId: string): Schedule | undefined {
    return this.schedules.get(scheduleId);
  }

  putSchedule(_before: Schedule | undefined, after: Schedule): void {
    this.schedules.set(after.scheduleId, after);
  }

  /**
   * Resuming from an image (`Generation.resume`): binds a fact the image
   * carries, after its base. The refusal when the fact cannot be one this
   * store's history made: an id beyond `last_job_id`, one held already, or
   * a full store (which keeps no facts).
   */
  restoreFact(jobId: number, fact: Fact): HistoryReason | undefined {
    if (!this.lean || !Number.isSafeInteger(jobId) || jobId < 1 || jobId > this.lastJobId) {
      return { _tag: "InvalidField", field: "image fact" };
    }
    if (!Number.isSafeInteger(fact.attempt) || fact.attempt < 0) {
      return { _tag: "InvalidField", field: "image fact attempt" };
    }
    if (this.wholeJob(jobId) !== undefined || this.facts.has(jobId)) {
      return { _tag: "DuplicateJob", jobId };
    }
    this.facts.set(jobId, fact);
    return undefined;
  }

  /**
   * Resuming from an image (`Generation.resume`): takes over its packed
   * facts, after its base, then binds those that do not pack. The refusal
   * when they cannot be a lean fold's (`restoreFact`; a page or slot no
   * fold packs; a fact for a job held whole).
   */
  restoreFacts(facts: Packed): HistoryReason | undefined {
    if (!this.lean) {
      // A full fold keeps no facts: an image of one carries none.
      const none = facts.queues.length === 0 && isEmpty(facts.pages) && isEmpty(facts.overflow);
      return none ? undefined : { _tag: "InvalidField", field: "image fact" };
    }
    const refused = this.facts.restorePacked(facts.queues, facts.pages, this.lastJobId);
    if (refused !== undefined) return { _tag: "InvalidField", field: "image fact" };
    for (const [jobId, fact] of facts.overflow) {
      const reason = this.restoreFact(jobId, fact);
      if (reason !== undefined) return reason;
    }
    // The base is folded already: a fact may name no job it holds whole.
    for (const job of this.dense) {
      if (job !== undefined && this.facts.has(job.jobId)) {
        return { _tag: "DuplicateJob", jobId: job.jobId };
      }
    }
    for (const jobId of this.sparse.keys()) {
      if (this.facts.has(jobId)) return { _tag: "DuplicateJob", jobId };
    }
    return undefined;
  }

  /**
   * Resuming from an image: a rate-limited queue's latest starts, in log
   * order (what the base does not carry). Refused for a queue without a
   * rate limit, or one given twice. Not for more starts than the limit's
   * count: a count lowered by a later (24,3) leaves the longer list as it
   * is until the next start trims it, in every fold alike.
   */
  restoreStarts(queue: string, times: ReadonlyArray<number>): HistoryReason | undefined {
    const limit = this.queues.get(queue)?.rateLimit ?? null;
    if (limit === null || this.starts.has(queue)) {
      return { _tag: "InvalidField", field: "image starts" };
    }
    for (const at of times) {
      if (!Number.isSafeInteger(at)) return { _tag: "InvalidField", field: "image starts" };
    }
    // Not owned: the first start after it copies the list.
    this.starts.set(queue, times);
    return undefined;
  }

  /** The persistent state of what was folded so far; the store stays usable. */
  toState(): State {
    this.sealed = true;
    this.owned.clear();
    const jobs = IdMap.fromDense<Job>(
      this.dense,
      this.base,
      this.count - this.sparse.size,
      this.sparse,
    );
    const terminal = this.facts.toFactMap();
    // Published: from now on the start lists are copied before any change.
    this.ownedStarts.clear();
    return buildState(
      this.lastJobId,
      jobs,
      this.schedules.values(),
      this.queues,
      this.starts,
      this.schema3,
      { terminal, lean: this.lean },
    );
  }

  private own(jobId: number): MutableJob | undefined {
    const job = this.wholeJob(jobId);
    if (job === undefined || !this.sealed || this.owned.has(jobId)) return job;
    const owned = copy(job);
    const offset = jobId - this.base;
    if (this.dense[offset] === job) this.dense[offset] = owned;
    else this.sparse.set(jobId, owned);
    this.owned.add(jobId);
    return owned;
  }
}

const sortedIfNeeded = <T>(items: Array<T>, compare: Compare<T>): Array<T> => {
  for (let index = 1; index < items.length; index++) {
    const previous = items[index - 1];
    const current = items[index];
    if (previous !== undefined && current !== undefined && compare(previous, current) >= 0) {
      return items.sort(compare);
    }
  }
  return items;
};

const setOf = <K>(compare: Compare<K>, keys: Array<K>): SortedMap<K, null> => {
  const sorted = sortedIfNeeded(keys, compare);
  return SortedMap.fromSortedKeys(compare, sorted);
};

const mapOf = <K, V>(compare: Compare<K>, entries: Map<K, V>): SortedMap<K, V> => {
  const keys = sortedIfNeeded([...entries.keys()], compare);
  const values: Array<V> = [];
  for (const key of keys) {
    const value = entries.get(key);
    if (value !== undefined) values.push(value);
  }
  return SortedMap.fromSorted(compare, keys, values);
};

/** The facts of a lean state's completed jobs, and whether the state is lean. */
interface Terminal {
  readonly terminal: FactMap;
  readonly lean: boolean;
}

const fullTerminal: Terminal = { terminal: FactMap.empty(), lean: false };

const countIn = (
  counts: Map<string, Array<number>>,
  queue: string,
  index: number,
  jobs = 1,
): void => {
  let queueCounts = counts.get(queue);
  if (queueCounts === undefined) {
    queueCounts = [...zeroCounts];
    counts.set(queue, queueCounts);
  }
  queueCounts[index] = (queueCounts[index] ?? 0) + jobs;
};

/** Schedules by id, and those not cancelled (the due index's members). */
const schedulesOf = (records: Iterable<Schedule>) => {
  const scheduleMap = new Map<string, Schedule>();
  const due: Array<Schedule> = [];
  for (const schedule of records) {
    scheduleMap.set(schedule.scheduleId, schedule);
    if (schedule.cancelledAt === null) due.push(schedule);
  }
  return { scheduleMap, due };
};

/** Builds a state and all its indexes from its records, in O(n + k log k) for k live jobs. */
export const buildState = (
  lastJobId: number,
  jobs: IdMap<Job>,
  scheduleRecords: Iterable<Schedule>,
  queueStates: ReadonlyMap<string, QueueState> = new Map(),
  starts: ReadonlyMap<string, ReadonlyArray<number>> = new Map(),
  schema3 = false,
  { terminal, lean }: Terminal = fullTerminal,
): State => {
  const unique = new Map<string, [string, string, Array<number>]>();
  const available = new Map<string, Array<Job>>();
  const pending: Array<Job> = [];
  const executing: Array<Job> = [];
  const deadlines: Array<Job> = [];
  const counts = new Map<string, Array<number>>();
  for (const [queue, completed] of terminal.countsByQueue()) {
    countIn(counts, queue, stateIndex.completed, completed);
  }
  jobs.forEachValue((job) => {
    countIn(counts, job.queue, stateIndex[job.state]);
    if (job.uniqueKey !== null) {
      // Visited in ascending id order, so each list is ascending.
      const key = uniqueIndexKey(job.queue, job.uniqueKey);
      const pair = unique.get(key);
      if (pair === undefined) unique.set(key, [job.queue, job.uniqueKey, [job.jobId]]);
      else pair[2].push(job.jobId);
    }
    switch (job.state) {
      case "available": {
        const queue = available.get(job.queue);
        if (queue === undefined) available.set(job.queue, [job]);
        else queue.push(job);
        break;
      }
      case "scheduled":
      case "retryable":
        pending.push(job);
        break;
      case "executing":
        executing.push(job);
        if (job.timeoutMs !== null) deadlines.push(job);
        break;
      default:
        break;
    }
  });
  const { scheduleMap, due } = schedulesOf(scheduleRecords);
  const availableIndex = new Map<string, SortedMap<Job, null>>();
  for (const [queue, queueJobs] of available) {
    availableIndex.set(queue, setOf(compareClaimOrder, queueJobs));
  }
  return {
    lastJobId,
    jobs,
    terminal,
    lean,
    schedules: mapOf(compareStrings, scheduleMap),
    queues: mapOf(compareStrings, new Map(queueStates)),
    indexes: {
      available: mapOf(compareStrings, availableIndex),
      pending: setOf(comparePendingOrder, pending),
      executing: setOf(compareExecutingOrder, executing),
      deadlines: setOf(compareDeadlineOrder, deadlines),
      due: setOf(compareDueOrder, due),
      counts: mapOf<string, StateCounts>(compareStrings, counts),
      unique: UniqueIndex.of(unique.values()),
      starts: mapOf(compareStrings, new Map(starts)),
      schema3,
    },
  };
};

/**
 * A working copy of a persistent state; `toState` publishes it. With an
 * `edit` token, nodes created by this draft are changed in place by its
 * later updates, so a state it published before is valid only until then.
 */
export class Draft implements Store {
  lastJobId: number;
  schema3: boolean;
  private jobs: IdMap<Job>;
  private terminal: FactMap;
  private readonly lean: boolean;
  private schedules: SortedMap<string, Schedule>;
  private queues: SortedMap<string, QueueState>;
  private unique: Indexes["unique"];
  private starts: Indexes["starts"];
  // Made at the first start noted under an edit: most drafts (an insert's)
  // note none, and a `Map` per draft cost ~200 bytes per one-insert batch.
  private ownedStarts: Map<string, Array<number>> | undefined;
  private available: Indexes["available"];
  private pending: Indexes["pending"];
  private executing: Indexes["executing"];
  private deadlines: Indexes["deadlines"];
  private due: Indexes["due"];
  private counts: Indexes["counts"];

  constructor(
    state: State,
    private readonly edit?: Edit,
  ) {
    this.lastJobId = state.lastJobId;
    this.schema3 = state.indexes.schema3;
    this.jobs = state.jobs;
    this.terminal = state.terminal;
    this.lean = state.lean;
    this.schedules = state.schedules;
    this.queues = state.queues;
    this.unique = state.indexes.unique;
    this.starts = state.indexes.starts;
    this.available = state.indexes.available;
    this.pending = state.indexes.pending;
    this.executing = state.indexes.executing;
    this.deadlines = state.indexes.deadlines;
    this.due = state.indexes.due;
    this.counts = state.indexes.counts;
  }

  getJob(jobId: number): Job | undefined {
    const job = this.jobs.get(jobId);
    if (job !== undefined || this.terminal.size === 0) return job;
    const fact = this.terminal.get(jobId);
    return fact === undefined ? undefined : standIn(jobId, fact);
  }

  addJob(job: MutableJob): void {
    this.putJob(undefined, job);
  }

  changeJob(job: Job, event: JobTransitionEvent): void {
    this.putJob(job, applied(job, event));
    if (event._tag === "JobStarted" && this.queues.size > 0) {
      const rate = this.queues.get(job.queue)?.rateLimit ?? null;
      if (rate !== null) this.noteStart(job.queue, event.at, rate.count);
    }
  }

  // Under an edit, the draft appends in place to the start lists it
  // created (a batch's earlier states may change, as its maps do).
  private noteStart(queue: string, at: number, count: number): void {
    const current = this.starts.get(queue);
    const owned = this.ownedStarts?.get(queue);
    if (owned !== undefined && owned === current) {
      pushStart(owned, at, count);
      return;
    }
    const next = withStart(current, at, count);
    this.starts = this.starts.set(queue, next, this.edit);
    if (this.edit === undefined) return;
    this.ownedStarts ??= new Map();
    this.ownedStarts.set(queue, next);
  }

  getQueue(queue: string): QueueState | undefined {
    return this.queues.get(queue);
  }

  putQueue(queue: string, state: QueueState | undefined): void {
    this.queues =
      state === undefined
        ? this.queues.delete(queue, this.edit)
        : this.queues.set(queue, state, this.edit);
    if ((state?.rateLimit ?? null) === null && this.starts.has(queue)) {
      this.starts = this.starts.delete(queue, this.edit);
    }
  }

  executingIn(queue: string): number {
    return this.counts.get(queue)?.[stateIndex.executing] ?? 0;
  }

  uniqueHolders(queue: string, uniqueKey: string): ReadonlyArray<number> {
    return this.unique.holders(queue, uniqueKey) ?? noIds;
  }

  setMembership(job: Job, scheduleId: string | null): void {
    this.putJob(job, withSchedule(job, scheduleId));
  }

  private putJob(before: Job | undefined, after: Job): void {
    if (this.lean && leavesMemory(after)) {
      this.jobs = this.jobs.delete(after.jobId, this.edit);
      this.terminal = this.terminal.set(after.jobId, factOf(after), this.edit);
    } else {
      this.jobs = this.jobs.set(after.jobId, after, this.edit);
    }
    if (before === undefined && after.uniqueKey !== null) {
      this.unique = this.unique.withHolder(after.queue, after.uniqueKey, after.jobId, this.edit);
    }
    if (before !== undefined) this.unindex(before);
    this.index(after);
    if (before === undefined || before.state !== after.state) {
      this.count(after.queue, before === undefined ? undefined : before.state, after.state);
    }
  }

  getSchedule(scheduleId: string): Schedule | undefined {
    return this.schedules.get(scheduleId);
  }

  putSchedule(before: Schedule | undefined, after: Schedule): void {
    this.schedules = this.schedules.set(after.scheduleId, after, this.edit);
    if (before !== undefined && before.cancelledAt === null) {
      this.due = this.due.delete(before, this.edit);
    }
    if (after.cancelledAt === null) this.due = this.due.set(after, null, this.edit);
  }

  toState(): State {
    return {
      lastJobId: this.lastJobId,
      jobs: this.jobs,
      terminal: this.terminal,
      lean: this.lean,
      schedules: this.schedules,
      queues: this.queues,
      indexes: {
        available: this.available,
        pending: this.pending,
        executing: this.executing,
        deadlines: this.deadlines,
        due: this.due,
        counts: this.counts,
        unique: this.unique,
        starts: this.starts,
        schema3: this.schema3,
      },
    };
  }

  private index(job: Job): void {
    switch (job.state) {
      case "available": {
        const queue = this.available.get(job.queue) ?? SortedMap.keysOnly<Job>(compareClaimOrder);
        this.available = this.available.set(job.queue, queue.set(job, null, this.edit), this.edit);
        return;
      }
      case "scheduled":
      case "retryable":
        this.pending = this.pending.set(job, null, this.edit);
        return;
      case "executing":
        this.executing = this.executing.set(job, null, this.edit);
        if (job.timeoutMs !== null) this.deadlines = this.deadlines.set(job, null, this.edit);
        return;
      default:
        return;
    }
  }

  private unindex(job: Job): void {
    switch (job.state) {
      case "available": {
        const queue = this.available.get(job.queue);
        if (queue === undefined) return;
        const remaining = queue.delete(job, this.edit);
        this.available =
          remaining.size === 0
            ? this.available.delete(job.queue, this.edit)
            : this.available.set(job.queue, remaining, this.edit);
        return;
      }
      case "scheduled":
      case "retryable":
        this.pending = this.pending.delete(job, this.edit);
        return;
      case "executing":
        this.executing = this.executing.delete(job, this.edit);
        if (job.timeoutMs !== null) this.deadlines = this.deadlines.delete(job, this.edit);
        return;
      default:
        return;
    }
  }

  private count(queue: string, from: Job["state"] | undefined, to: Job["state"]): void {
    const counts = [...(this.counts.get(queue) ?? zeroCounts)];
    if (from !== undefined) counts[stateIndex[from]] = (counts[stateIndex[from]] ?? 0) - 1;
    counts[stateIndex[to]] = (counts[stateIndex[to]] ?? 0) + 1;
    this.counts = this.counts.set(queue, counts, this.edit);
  }
}

/**
 * The job the rules and deciders read for `jobId`: the whole record, or for
 * a job a lean state keeps as facts, its stand-in (`JobRecord.standIn`).
 */
export const ruleJob = (state: State, jobId: number): Job | undefined => {
  const job = state.jobs.get(jobId);
  if (job !== undefined || state.terminal.size === 0) return job;
  const fact = state.terminal.get(jobId);
  return fact === undefined ? undefined : standIn(jobId, fact);
};

/** A fresh draft of the empty state. */
export const emptyDraft = (): Draft => new Draft(initialState);

/** True for the states whose jobs a snapshot may drop. */
export const isDroppable = (job: Job, before: number): boolean =>
  isTerminal(job.state) && job.finishedAt !== null && job.finishedAt < before;
