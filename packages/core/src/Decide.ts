/**
 * Deciders: pure functions from (state, command) to the records to append,
 * or a typed `Rejection`. Time and ids come from the command and the state,
 * never from a clock. Every decided record is legal for `evolve` when
 * applied in order to the same state, and every field is one the codec
 * encodes.
 *
 * Every value and number a decider takes from a command goes into its events
 * in canonical form (`Value.canonical`): the form decoding the events'
 * bytes gives, so the state folded from a decision is the state a reopen
 * reads back (-0 is 0, a safe bigint a number, map keys in UTF-8 order).
 *
 * A decision is a list of records; a record is one event or one mutation.
 * Claims, promotions and rescues are one event per job (each is legal on
 * its own); a batch insert, a completion with a result and a delivery are
 * one mutation each, so they apply all or nothing.
 */
import * as Either from "fp-ts/lib/Either.js";
import * as Backoff from "./Backoff.js";
import * as Commands from "./Commands.js";
import * as Due from "./Due.js";
import {
  type DomainEvent,
  type Event,
  isTerminal,
  jobAvailable,
  jobCancelled,
  jobFinished,
  jobInserted,
  type JobInserted,
  jobInsertedV3,
  type JobInsertedV3,
  jobRedriven,
  jobRetried,
  jobStarted,
  mutation,
  occurrenceAdvanced,
  queueStateSet,
  type RateLimit,
  resultRecorded,
  scheduleCancelled,
  isDefinitionV3,
  type ScheduleDefinition,
  type ScheduleDefinitionV3,
} from "./Event.js";
import * as Zone from "./Zone.js";
import { definitionEquals } from "./internal/Equality.js";
import { eventOverheadBytes, recordBytes } from "./internal/Encoded.js";
import * as Fields from "./internal/Fields.js";
import { interned } from "./internal/Names.js";
import { tagName } from "./internal/Tag.js";
import type { Job } from "./Job.js";
import * as Limits from "./Limits.js";
import * as Queue from "./Queue.js";
import { holderAmong, pendingInsertRefusal, uniqueHolder } from "./internal/Apply.js";
import { PendingKeys } from "./internal/PendingKeys.js";
import { ruleJob } from "./internal/Store.js";
import type { Rejection } from "./Rejection.js";
import * as Schedule from "./Schedule.js";
import { attemptDeadline, type State, stateIndex, uniqueIndexKey } from "./State.js";
import * as Value from "./Value.js";
import { keptError } from "./internal/ErrorBudget.js";

/** The records to append, in order. */
export type Decision = ReadonlyArray<Event>;

/** What a decider returns: its records, or why it refuses the command. */
export type Decided = Either.Either<Rejection, Decision>;

const invalid = (field: string, detail: string): Rejection => ({
  _tag: "InvalidField",
  field,
  detail,
});

const timeDetail = "must be an integer time 0..2^53-1";
const nameDetail = "must be 1..255 UTF-8 bytes";

const checkTime = (field: string, value: number): Rejection | undefined =>
  Fields.isTime(value) ? undefined : invalid(field, timeDetail);

const checkName = (field: string, value: string): Rejection | undefined =>
  Fields.isName(value) ? undefined : invalid(field, nameDetail);

const checkText = (field: string, value: string | null): Rejection | undefined =>
  Fields.isTextOrNull(value) ? undefined : invalid(field, "must be at most 65,535 UTF-8 bytes");

/**
 * The refusal of `field` for a value the codec cannot encode, named down to
 * the part of it at fault (`result.user.id: a function is not a value`).
 */
const unencodable = (field: string, value: Value.Unencodable): Rejection =>
  invalid(`${field}${value.path}`, value.detail);

const checkLimit = (value: number | undefined): Rejection | undefined =>
  value === undefined || Fields.isIntegerIn(value, 1, Limits.decisionRecordsMax)
    ? undefined
    : invalid("limit", `must be an integer 1..${Limits.decisionRecordsMax}`);

const checkRecord = (record: Event): Rejection | undefined => {
  const bytes = recordBytes(record);
  return bytes <= Limits.payloadBytesMax
    ? undefined
    : { _tag: "TooLarge", bytes, limit: Limits.payloadBytesMax };
};

const decided = (records: Decision): Decided => {
  for (const record of records) {
    const rejection = checkRecord(record);
    if (rejection !== undefined) return Either.left(rejection);
  }
  return Either.right(records);
};

const asRecord = (events: ReadonlyArray<DomainEvent>): Event =>
  events.length === 1 && events[0] !== undefined ? events[0] : mutation(events);

const findJob = (
  state: State,
  jobId: number,
  command: Commands.CommandTag,
  allowed: (job: Job) => boolean,
): Job | Rejection => {
  const job = Fields.isId(jobId) ? ruleJob(state, jobId) : undefined;
  if (job === undefined) return { _tag: "JobNotFound", jobId };
  return allowed(job) ? job : { _tag: "InvalidTransition", jobId, from: job.state, command };
};

const isRejection = (value: Job | Rejection): value is Rejection => "_tag" in value;

/**
 * The executing job that `attempt` (when given) is the current attempt of:
 * a command for an older attempt, or for a job no longer executing, is
 * `StaleAttempt` (the job exists; its worker is late).
 */
const findAttempt = (
  state: State,
  jobId: number,
  command: Commands.CommandTag,
  attempt: number | undefined,
): Job | Rejection => {
  if (attempt === undefined) return findJob(state, jobId, command, isExecuting);
  if (!Fields.isIntegerIn(attempt, 1, Limits.maxAttemptsMax)) {
    return {
      _tag: "InvalidField",
      field: "attempt",
      detail: `must be an integer 1..${Limits.maxAttemptsMax}`,
    };
  }
  const job = Fields.isId(jobId) ? ruleJob(state, jobId) : undefined;
  if (job === undefined) return { _tag: "JobNotFound", jobId };
  return isExecuting(job) && job.attempt === attempt
    ? job
    : { _tag: "StaleAttempt", jobId, attempt, currentAttempt: job.attempt, state: job.state };
};

const isExecuting = (job: Job): boolean => job.state === "executing";
const isNotTerminal = (job: Job): boolean => !isTerminal(job.state);

// The field's name is built only when it is refused: this runs for every
// inserted job.
const jobField = (index: number, name: string): string => `jobs[${index}].${name}`;

/** A new job's fields other than its args, checked. */
const checkNewJob = (job: Commands.NewJob, index: number): Rejection | undefined => {
  if (typeof job !== "object" || job === null) return invalid(`jobs[${index}]`, "must be a job");
  if (!Fields.isName(job.queue)) return invalid(jobField(index, "queue"), nameDetail);
  if (!Fields.isName(job.worker)) return invalid(jobField(index, "worker"), nameDetail);
  if (
    job.priority !== undefined &&
    !Fields.isIntegerIn(job.priority, Limits.priorityMin, Limits.priorityMax)
  ) {
    return invalid(jobField(index, "priority"), "must be an integer 0..9");
  }
  if (
    job.maxAttempts !== undefined &&
    !Fields.isIntegerIn(job.maxAttempts, Limits.maxAttemptsMin, Limits.maxAttemptsMax)
  ) {
    return invalid(jobField(index, "maxAttempts"), "must be an integer 1..1000");
  }
  if (job.scheduledAt !== undefined && !Fields.isTime(job.scheduledAt)) {
    return invalid(jobField(index, "scheduledAt"), timeDetail);
  }
  return undefined;
};

/**
 * The record inserting the jobs after `lastJobId` (one (1,1), or a mutation
 * of several), or the first refusal: a job's field, then the record's size.
 * Each job's args are walked once, for the check, the size and the
 * canonical form.
 */
const newJobsRecord = (lastJobId: number, command: Commands.InsertJobs): Decided => {
  const now = Fields.canonicalNumber(command.now);
  // Of its final size, as `map` would make it (growing it by `push` measured slower).
  const events = new Array<JobInserted | JobInsertedV3>(command.jobs.length);
  // Several jobs are one mutation, which adds its own overhead.
  let bytes = command.jobs.length === 1 ? 0 : eventOverheadBytes;
  for (let index = 0; index < command.jobs.length; index++) {
    const job = command.jobs[index];
    if (job === undefined) return Either.left(invalid(`jobs[${index}]`, "must be a job"));
    const refusal = checkNewJob(job, index);
    if (refusal !== undefined) return Either.left(refusal);
    const args = Value.canonical(job.args, Value.argsDepthMax);
    if (args._tag === "Unencodable") return Either.left(unencodable(jobField(index, "args"), args));
    if (isV3Job(job)) {
      // A timeout alone (unique keys need the state: `needsState`).
      const v3 = checkV3Job(job, index);
      if (v3 !== undefined) return Either.left(v3);
      events[index] = insertedV3(lastJobId + index + 1, job, args.value, now);
      bytes +=
        eventOverheadBytes +
        Fields.utf8Length(job.queue) +
        Fields.utf8Length(job.worker) +
        args.bytes;
      continue;
    }
    events[index] = jobInserted({
      jobId: lastJobId + index + 1,
      queue: interned(job.queue),
      worker: interned(job.worker),
      args: args.value,
      priority: Fields.canonicalNumber(job.priority ?? Commands.priorityDefault),
      maxAttempts: job.maxAttempts ?? Commands.maxAttemptsDefault,
      scheduledAt: Fields.canonicalNumber(job.scheduledAt ?? now),
      insertedAt: now,
    });
    // As `recordBytes` counts a (1,1).
    bytes +=
      eventOverheadBytes +
      Fields.utf8Length(job.queue) +
      Fields.utf8Length(job.worker) +
      args.bytes;
  }
  // Sized exactly as `decided` would: no second pass over the args.
  return bytes <= Limits.payloadBytesMax
    ? Either.right([asRecord(events)])
    : Either.left({ _tag: "TooLarge", bytes, limit: Limits.payloadBytesMax });
};

const nextIds = (lastJobId: number, count: number): Rejection | undefined =>
  lastJobId + count <= Limits.idMax
    ? undefined
    : { _tag: "IdsExhausted", lastJobId, requested: count };

/**
 * InsertJobs on a state whose last_job_id is `lastJobId`: one (1,1) per job
 * with ids `lastJobId` + 1, + 2, ...; one job is one record, several are one
 * mutation (inserted together or not at all).
 *
 * An insert reads the state through its last_job_id alone, so a runtime
 * that has decided inserts but not folded them yet may decide the next ones
 * from the last id it handed out (see `Evolve.checkInserts`).
 */
export const insertJobsAfter = (lastJobId: number, command: Commands.InsertJobs): Decided => {
  const rejection =
    checkTime("now", command.now) ??
    needsState(command) ??
    (command.jobs.length >= 1 && command.jobs.length <= Limits.decisionRecordsMax
      ? undefined
      : invalid("jobs", `must hold 1..${Limits.decisionRecordsMax} jobs`)) ??
    nextIds(lastJobId, command.jobs.length);
  return rejection === undefined ? newJobsRecord(lastJobId, command) : Either.left(rejection);
};

/**
 * InsertJobs against `state`: `insertJobsAfter(state.lastJobId, command)`,
 * or, when a job has a v3 field, `insertJobsAnswered`'s records.
 */
export const insertJobs = (state: State, command: Commands.InsertJobs): Decided => {
  if (!command.jobs.some(isV3Job)) return insertJobsAfter(state.lastJobId, command);
  return insertJobsPending(state, state.lastJobId, undefined, command);
};

/**
 * The unique keys of inserts a runtime has decided but not folded yet: per
 * (queue, key), the job holding it. A job just inserted is not terminal, so
 * it holds its key whatever the period. One table serves a runtime's every
 * drain (`clear` between them), so a drain allocates nothing for its keys.
 */
export { PendingKeys };

/**
 * InsertJobs with schema-3 fields (`insertJobsAnswered`'s records) decided
 * against `state` and the inserts decided after it but not folded yet:
 * they handed out ids up to `lastJobId` and hold the `pending` keys. Folded
 * after them, the records are what `insertJobs` decides on the state that
 * holds them (ids from `lastJobId`, a key a pending insert holds taken), so
 * a runtime may decide a keyed insert while the inserts before it are
 * still on their way to the fold (see `checkPendingInserts`).
 */
export const insertJobsPending = (
  state: State,
  lastJobId: number,
  pending: PendingKeys | undefined,
  command: Commands.InsertJobs,
): Decided => answeredInsert(state, lastJobId, pending, command, undefined);

/**
 * The last_job_id after `record` (inserts only, as `insertJobsPending`
 * decides them after `lastJobId`), if the fold's rule for their fields and
 * order accepts them; else what is wrong. Their unique keys were looked up
 * with the fold's own rule by the decider, and the fold checks them again
 * (a refusal there is a defect of the runtime's bookkeeping).
 */
export const checkPendingInserts = (lastJobId: number, record: Event): number | string => {
  if (record._tag === "JobInserted" || record._tag === "JobInsertedV3") {
    return pendingInsertRefusal(lastJobId, record)?._tag ?? record.jobId;
  }
  if (record._tag !== "Mutation") return `${record._tag} is not an insert`;
  if (record.events.length === 0) return "an empty mutation";
  let last = lastJobId;
  for (const member of record.events) {
    if (member._tag !== "JobInserted" && member._tag !== "JobInsertedV3") {
      return `${member._tag} is not an insert`;
    }
    const refusal = pendingInsertRefusal(last, member);
    if (refusal !== undefined) return refusal._tag;
    last = member.jobId;
  }
  return last;
};

/**
 * True when an InsertJobs uses a schema-3 field: it is then decided against
 * the state (`insertJobs`), not from last_job_id alone (`insertJobsAfter`,
 * `Evolve.checkInserts`).
 */
export const insertUsesV3 = (command: Commands.InsertJobs): boolean => command.jobs.some(isV3Job);

/**
 * How each job of an InsertJobs was answered, read back from the state
 * right after its decided `records` (a runtime answers its caller from
 * there): a keyed job is a duplicate exactly when no inserted event of the
 * records carries its queue and key in its turn, and its answer is then the
 * job holding the key in `after`. A job its holder no longer explains is
 * answered `undefined` (a defect of the caller's bookkeeping).
 */
export const insertAnswers = (
  after: State,
  command: Commands.InsertJobs,
  records: Decision,
): ReadonlyArray<InsertAnswer | undefined> => {
  const inserted: Array<JobInserted | JobInsertedV3> = [];
  for (const record of records) {
    for (const event of record._tag === "Mutation" ? record.events : [record]) {
      if (event._tag === "JobInserted" || event._tag === "JobInsertedV3") inserted.push(event);
    }
  }
  const store = {
    getJob: (jobId: number) => ruleJob(after, jobId),
    uniqueHolders: (queue: string, key: string) => after.indexes.unique.holders(queue, key) ?? [],
  };
  let next = 0;
  return command.jobs.map((job) => {
    const event = inserted[next];
    const key = job.uniqueKey;
    const isInserted =
      key === undefined ||
      (event?._tag === "JobInsertedV3" && event.queue === job.queue && event.uniqueKey === key);
    if (isInserted && event !== undefined) {
      next++;
      return { jobId: event.jobId, duplicate: false };
    }
    if (key === undefined) return undefined;
    const holder = uniqueHolder(store, job.queue, key, 0, command.now, job.uniquePeriodMs ?? null);
    return holder === undefined ? undefined : { jobId: holder, duplicate: true };
  });
};

/**
 * The job of `state` that a keyed job inserted at `now` collides with
 * (`insertAnswers`'s answer for the one job of an insert that appended
 * nothing), read without its lists.
 */
export const uniqueHolderOf = (
  state: State,
  job: Commands.NewJob,
  now: number,
): number | undefined =>
  job.uniqueKey === undefined
    ? undefined
    : heldByKey(state, job.queue, job.uniqueKey, now, job.uniquePeriodMs ?? null);

const isV3Job = (job: Commands.NewJob | undefined): boolean =>
  typeof job === "object" &&
  job !== null &&
  (job.uniqueKey !== undefined || job.uniquePeriodMs !== undefined || job.timeoutMs !== undefined);

const needsState = (command: Commands.InsertJobs): Rejection | undefined => {
  const index = command.jobs.findIndex((job) => isV3Job(job) && job.uniqueKey !== undefined);
  return index < 0
    ? undefined
    : invalid(jobField(index, "uniqueKey"), "needs the state: decide with insertJobsAnswered");
};

/** How one job of an `InsertJobs` was answered. */
export interface InsertAnswer {
  /** The new job's id, or the existing job's for a duplicate. */
  readonly jobId: number;
  /** True when the unique key collided: nothing was appended for this job. */
  readonly duplicate: boolean;
}

/** The records of an `InsertJobs` and each job's answer, in the order of its jobs. */
export interface AnsweredInsert {
  readonly records: Decision;
  readonly answers: ReadonlyArray<InsertAnswer>;
}

const checkV3Job = (job: Commands.NewJob, index: number): Rejection | undefined => {
  if (job.uniqueKey !== undefined && !Fields.isName(job.uniqueKey)) {
    return invalid(jobField(index, "uniqueKey"), nameDetail);
  }
  if (job.uniquePeriodMs !== undefined && !Fields.isId(job.uniquePeriodMs)) {
    return invalid(jobField(index, "uniquePeriodMs"), "must be an integer 1..2^53-1");
  }
  if (job.uniquePeriodMs !== undefined && job.uniqueKey === undefined) {
    return invalid(jobField(index, "uniquePeriodMs"), "needs a uniqueKey");
  }
  if (job.timeoutMs !== undefined && !Fields.isId(job.timeoutMs)) {
    return invalid(jobField(index, "timeoutMs"), "must be an integer 1..2^53-1");
  }
  return undefined;
};

/** A text's bytes as `recordBytes` counts them (a name was checked: never the -1 of ill-formed). */
const textBytes = (text: string | null): number =>
  text === null ? 0 : Math.max(0, Fields.utf8Length(text));

/**
 * The job of `state` holding `queue`'s `uniqueKey` against a job inserted
 * at `now` with `periodMs` (`uniqueHolder`'s rule).
 */
const heldByKey = (
  state: State,
  queue: string,
  uniqueKey: string,
  now: number,
  periodMs: number | null,
): number | undefined => {
  const holders = state.indexes.unique.holders(queue, uniqueKey);
  return holders === undefined ? undefined : holderAmong(holders, state, ruleJob, 0, now, periodMs);
};

/**
 * The job of the state, of the pending inserts, or of this batch, that a
 * new job's unique key collides with. A joined key is built only for a
 * command of several jobs (`batch`).
 */
const duplicateOf = (
  state: State,
  job: Commands.NewJob,
  now: number,
  pending: PendingKeys | undefined,
  batch: Map<string, number> | undefined,
  jobId: number,
): number | undefined => {
  if (job.uniqueKey === undefined) return undefined;
  const held =
    heldByKey(state, job.queue, job.uniqueKey, now, job.uniquePeriodMs ?? null) ??
    pending?.holder(job.queue, job.uniqueKey);
  if (held !== undefined || batch === undefined) return held;
  const indexKey = uniqueIndexKey(job.queue, job.uniqueKey);
  const earlier = batch.get(indexKey);
  if (earlier === undefined) batch.set(indexKey, jobId);
  return earlier;
};

const insertedV3 = (
  jobId: number,
  job: Commands.NewJob,
  args: Value.Value,
  now: number,
): JobInsertedV3 | JobInserted => {
  const priority = Fields.canonicalNumber(job.priority ?? Commands.priorityDefault);
  const maxAttempts = job.maxAttempts ?? Commands.maxAttemptsDefault;
  const scheduledAt = Fields.canonicalNumber(job.scheduledAt ?? now);
  const queue = interned(job.queue);
  const worker = interned(job.worker);
  // Schema 3 only when the job uses a v3 field. The fields are spelled out
  // rather than spread: V8 copies a spread with added keys through a slow
  // runtime path (2-3 µs per insert, measured 2026-12-02).
  return isV3Job(job)
    ? jobInsertedV3({
        jobId,
        queue,
        worker,
        args,
        priority,
        maxAttempts,
        scheduledAt,
        insertedAt: now,
        uniqueKey: job.uniqueKey ?? null,
        uniquePeriodMs: job.uniquePeriodMs ?? null,
        timeoutMs: job.timeoutMs ?? null,
      })
    : jobInserted({
        jobId,
        queue,
        worker,
        args,
        priority,
        maxAttempts,
        scheduledAt,
        insertedAt: now,
      });
};

/**
 * InsertJobs with unique keys and timeouts (EVENTS-V3.md): each job is
 * answered on its own. A job whose unique key a job of its queue holds (not
 * terminal, or finished at or after `now - uniquePeriodMs`), or an earlier
 * job of the same command holds, appends nothing and is answered with that
 * job's id, marked as a duplicate; the others are inserted in one record
 * (one mutation for several), ids in command order. Exact: the fold
 * refuses a (1,3) that this would answer as a duplicate.
 */
export const insertJobsAnswered = (
  state: State,
  command: Commands.InsertJobs,
): Either.Either<Rejection, AnsweredInsert> => {
  const answers: Array<InsertAnswer> = [];
  const decided = answeredInsert(state, state.lastJobId, undefined, command, answers);
  return Either.isLeft(decided) ? decided : Either.right({ records: decided.right, answers });
};

/**
 * `insertJobsAnswered`'s records, after `lastJobId` and the `pending` keys;
 * each job's answer pushed to `answers` when given (the engine reads its
 * answers from the state after the fold, and builds none here).
 */
const answeredInsert = (
  state: State,
  lastJobId: number,
  pending: PendingKeys | undefined,
  command: Commands.InsertJobs,
  answers: Array<InsertAnswer> | undefined,
): Either.Either<Rejection, Decision> => {
  const rejection =
    checkTime("now", command.now) ??
    (command.jobs.length >= 1 && command.jobs.length <= Limits.decisionRecordsMax
      ? undefined
      : invalid("jobs", `must hold 1..${Limits.decisionRecordsMax} jobs`)) ??
    nextIds(lastJobId, command.jobs.length);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  // Of its final size at most (growing it by `push` makes 17 slots for one job).
  const events = new Array<JobInserted | JobInsertedV3>(command.jobs.length);
  let count = 0;
  // The keys this command inserted so far: none to remember for its last job.
  const batch = command.jobs.length > 1 ? new Map<string, number>() : undefined;
  // The record's size as `recordBytes` counts it, summed as the jobs are
  // built: no second walk of each job's args (`decided` would make one).
  let bytes = 0;
  for (let index = 0; index < command.jobs.length; index++) {
    const job = command.jobs[index];
    if (job === undefined) return Either.left(invalid(`jobs[${index}]`, "must be a job"));
    const refusal = checkNewJob(job, index) ?? checkV3Job(job, index);
    if (refusal !== undefined) return Either.left(refusal);
    const args = Value.canonical(job.args, Value.argsDepthMax);
    if (args._tag === "Unencodable") return Either.left(unencodable(jobField(index, "args"), args));
    const jobId = lastJobId + count + 1;
    const existing = duplicateOf(state, job, now, pending, batch, jobId);
    if (existing !== undefined) {
      answers?.push({ jobId: existing, duplicate: true });
      continue;
    }
    const event = insertedV3(jobId, job, args.value, now);
    events[count++] = event;
    answers?.push({ jobId, duplicate: false });
    bytes +=
      eventOverheadBytes +
      textBytes(job.queue) +
      textBytes(job.worker) +
      (event._tag === "JobInsertedV3" ? textBytes(event.uniqueKey) : 0) +
      args.bytes;
  }
  // A mutation adds its own overhead (`recordBytes`).
  if (count > 1) bytes += eventOverheadBytes;
  if (bytes > Limits.payloadBytesMax) {
    return Either.left({ _tag: "TooLarge", bytes, limit: Limits.payloadBytesMax });
  }
  // The slots of duplicates dropped. Only then: setting an array's length
  // goes through V8's runtime even when it does not change (~0.3 µs a
  // keyed insert, profiled 2026-12-02).
  if (count < events.length) events.length = count;
  return Either.right(count === 0 ? [] : [asRecord(events)]);
};

/**
 * ClaimJobs: a (3,1) for each of the first `limit` available jobs of the
 * queue in (priority, scheduled_at, job_id) order. Walks only the queue's
 * index, never all jobs. No available job: an empty decision.
 */
export const claimJobs = (state: State, command: Commands.ClaimJobs): Decided => {
  const rejection =
    checkTime("now", command.now) ??
    checkName("queue", command.queue) ??
    (Fields.isIntegerIn(command.limit, 1, Limits.decisionRecordsMax)
      ? undefined
      : invalid("limit", `must be an integer 1..${Limits.decisionRecordsMax}`));
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const records: Array<Event> = [];
  const limit = Math.min(command.limit, claimsAllowed(state, command.queue, now));
  if (limit <= 0) return Either.right(records);
  const queue = state.indexes.available.get(command.queue);
  queue?.forEachWhile((_, job) => {
    records.push(jobStarted({ jobId: job.jobId, at: now, attempt: job.attempt + 1 }));
    return records.length < limit;
  });
  return Either.right(records);
};

/**
 * How many jobs a claim on `queue` may start at `now` (EVENTS-V3.md):
 * none from a paused queue, at most `concurrency - executing`, and at most
 * what the rate limit leaves in the window ending now. Infinity for a
 * queue in the default state.
 */
export const claimsAllowed = (state: State, queue: string, now: number): number => {
  const queueState = state.queues.get(queue);
  if (queueState === undefined) return Number.POSITIVE_INFINITY;
  const starts = state.indexes.starts.get(queue) ?? [];
  return Math.min(slotsAllowed(state, queueState), Queue.startsAllowed(queueState, starts, now));
};

// What the pause and the concurrency leave a claim on the queue, the rate limit aside.
const slotsAllowed = (state: State, queueState: Queue.QueueState): number => {
  if (queueState.paused) return 0;
  if (queueState.concurrency === null) return Number.POSITIVE_INFINITY;
  const executing = state.indexes.counts.get(queueState.queue)?.[stateIndex.executing] ?? 0;
  return Math.max(0, queueState.concurrency - executing);
};

/**
 * From when the rate limit lets a claim on `queue` start a job
 * (`Queue.startAllowedFrom`), if nothing else holds it back. Null when
 * something else does (a paused queue, a concurrency with no slot free) or
 * there is no rate limit.
 */
export const rateRoomFrom = (state: State, queue: string): number | null => {
  const queueState = state.queues.get(queue);
  if (queueState === undefined || slotsAllowed(state, queueState) === 0) return null;
  return Queue.startAllowedFrom(queueState, state.indexes.starts.get(queue) ?? []);
};

/** CompleteJob: (4,1) completed; with a result, [(4,1), (10,2)] as one mutation. */
export const completeJob = (state: State, command: Commands.CompleteJob): Decided => {
  const rejection = checkTime("now", command.now);
  if (rejection !== undefined) return Either.left(rejection);
  const result =
    command.result === undefined
      ? undefined
      : Value.canonical(command.result, Value.resultDepthMax);
  if (result?._tag === "Unencodable") return Either.left(unencodable("result", result));
  const now = Fields.canonicalNumber(command.now);
  const job = findAttempt(state, command.jobId, command._tag, command.attempt);
  if (isRejection(job)) return Either.left(job);
  const finished = jobFinished({
    jobId: job.jobId,
    at: now,
    outcome: "completed",
    error: null,
  });
  if (result === undefined) return decided([finished]);
  return decided([
    mutation([finished, resultRecorded({ jobId: job.jobId, result: result.value, at: now })]),
  ]);
};

// Retry while attempts remain, else discard: the one failure rule shared by
// FailJob and RescueJobs. The error is cut when the job's snapshot would
// outgrow a record (see `ErrorBudget`).
const failure = (
  job: Job,
  now: number,
  error: string,
  discard: boolean,
  policy: Backoff.Policy,
): DomainEvent =>
  !discard && job.attempt < job.maxAttempts
    ? jobRetried({
        jobId: job.jobId,
        at: now,
        retryAt: Backoff.retryAt(policy, job.attempt, now),
        error: keptError(job, error),
      })
    : jobFinished({
        jobId: job.jobId,
        at: now,
        outcome: "discarded",
        error: keptError(job, error),
      });

/**
 * FailJob: (6,1) retried at now + backoff(attempt) while attempt <
 * max_attempts and `discard` is not set, else (4,1) discarded.
 */
export const failJob = (state: State, command: Commands.FailJob): Decided => {
  const rejection = checkTime("now", command.now) ?? checkText("error", command.error);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const job = findAttempt(state, command.jobId, command._tag, command.attempt);
  if (isRejection(job)) return Either.left(job);
  return decided([
    failure(
      job,
      now,
      command.error,
      command.discard === true,
      command.backoff ?? Backoff.defaultPolicy,
    ),
  ]);
};

/** CancelJob: (5,1) for a job that is not terminal. */
export const cancelJob = (state: State, command: Commands.CancelJob): Decided => {
  const rejection = checkTime("now", command.now) ?? checkText("reason", command.reason);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const job = findJob(state, command.jobId, command._tag, isNotTerminal);
  if (isRejection(job)) return Either.left(job);
  return decided([jobCancelled({ jobId: job.jobId, at: now, reason: command.reason })]);
};

/**
 * RescueJobs: every executing job with attempted_at < startedBefore, oldest
 * first, is failed with `error` (retried with backoff, or discarded when its
 * attempts are exhausted); at most `limit` records.
 */
export const rescueJobs = (state: State, command: Commands.RescueJobs): Decided => {
  const rejection =
    checkTime("now", command.now) ??
    checkTime("startedBefore", command.startedBefore) ??
    checkText("error", command.error) ??
    checkLimit(command.limit);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const limit = command.limit ?? Limits.decisionRecordsMax;
  const policy = command.backoff ?? Backoff.defaultPolicy;
  const records: Array<Event> = [];
  state.indexes.executing.forEachWhile((_, job) => {
    if ((job.attemptedAt ?? 0) >= command.startedBefore || records.length >= limit) return false;
    records.push(failure(job, now, command.error, false, policy));
    return true;
  });
  return decided(records);
};

/**
 * MakeDueAvailable: (2,1) for scheduled and retryable jobs with
 * scheduled_at <= now, in (scheduled_at, job_id) order, at most `limit`.
 */
export const makeDueAvailable = (state: State, command: Commands.MakeDueAvailable): Decided => {
  const rejection = checkTime("now", command.now) ?? checkLimit(command.limit);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const limit = command.limit ?? Limits.decisionRecordsMax;
  const records: Array<Event> = [];
  state.indexes.pending.forEachWhile((_, job) => {
    if (job.scheduledAt > now || records.length >= limit) return false;
    records.push(jobAvailable({ jobId: job.jobId, at: now }));
    return true;
  });
  return Either.right(records);
};

const checkExpected = (
  scheduleId: string,
  current: Schedule.Schedule | undefined,
  expected: number | undefined,
): Rejection | undefined => {
  if (expected === undefined) return undefined;
  const actual = current === undefined ? 0 : current.revision;
  return expected === actual
    ? undefined
    : { _tag: "RevisionMismatch", scheduleId, expected, actual };
};

/** A definition checked, in canonical form (its fields in declared order), with its recurrence. */
interface CheckedDefinition {
  readonly definition: ScheduleDefinition;
  readonly recurrence: Due.Recurrence;
}

const checkDefinition = (
  scheduleId: string,
  definition: Commands.ScheduleDefinitionInput,
): Either.Either<Rejection, CheckedDefinition> => {
  // The strict checks first: the fold's kind checks leave well-formedness
  // to the codec, but nothing decided here may fail to encode.
  const strict =
    checkName("definition.queue", definition.queue) ??
    checkName("definition.worker", definition.worker) ??
    checkText("definition.cron", definition.cron);
  if (strict !== undefined) return Either.left(strict);
  const args = Value.canonical(definition.args, Value.argsDepthMax);
  // The fields the codec writes, in the order its decoder builds them. The
  // field checks read this; args the codec cannot encode are refused after
  // them, so refusals keep the order of the fields.
  const v2: ScheduleDefinition = {
    queue: definition.queue,
    worker: definition.worker,
    args: args._tag === "Canonical" ? args.value : null,
    priority: Fields.canonicalNumber(definition.priority),
    maxAttempts: definition.maxAttempts,
    everyMs: definition.everyMs,
    cron: definition.cron,
    overlap: definition.overlap,
  };
  // Schema 3 only when a v3 field is given.
  const usesV3 =
    definition.timezone !== undefined ||
    definition.catchUp !== undefined ||
    definition.catchUpWindowMs !== undefined;
  const v3: ScheduleDefinitionV3 = {
    ...v2,
    timezone: definition.timezone ?? "UTC",
    catchUp: definition.catchUp ?? "once",
    catchUpWindowMs: definition.catchUpWindowMs ?? null,
  };
  const canonical: ScheduleDefinition = usesV3 ? v3 : v2;
  if (isDefinitionV3(canonical) && !Zone.isKnownZone(canonical.timezone)) {
    return Either.left(
      invalid(
        "definition.timezone",
        `${JSON.stringify(canonical.timezone)} is not a zone this runtime knows`,
      ),
    );
  }
  const fieldRefusal = Schedule.checkDefinitionFields(canonical);
  if (fieldRefusal !== undefined) {
    return Either.left(invalid(fieldRefusal.field, "is outside its kind"));
  }
  if (args._tag === "Unencodable") return Either.left(unencodable("definition.args", args));
  const recurrence = Due.recurrence(canonical);
  if (Either.isLeft(recurrence)) {
    return Either.left({ _tag: "InvalidDefinition", scheduleId, detail: recurrence.left });
  }
  return Either.right({ definition: canonical, recurrence: recurrence.right });
};

/**
 * RegisterSchedule: a (13,2) with revision current + 1 (1 when new),
 * definition_revision = that revision, next_due_at = the first occurrence
 * after now; an existing schedule keeps last_due_at and its occurrences.
 * Re-registering the same definition of an active schedule decides nothing
 * (its next occurrence is kept). `expectedRevision` mismatch: `RevisionMismatch`.
 */
export const registerSchedule = (state: State, command: Commands.RegisterSchedule): Decided => {
  const { scheduleId } = command;
  const rejection = checkTime("now", command.now) ?? checkName("scheduleId", scheduleId);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const current = state.schedules.get(scheduleId);
  const mismatch = checkExpected(scheduleId, current, command.expectedRevision);
  if (mismatch !== undefined) return Either.left(mismatch);
  const checked = checkDefinition(scheduleId, command.definition);
  if (Either.isLeft(checked)) return checked;
  const { definition, recurrence } = checked.right;
  if (
    current !== undefined &&
    current.cancelledAt === null &&
    definitionEquals(current.definition, definition)
  ) {
    return Either.right([]);
  }
  const nextDueAt = Due.first(recurrence, now);
  if (nextDueAt === null) {
    return Either.left({
      _tag: "InvalidDefinition",
      scheduleId,
      detail: "no occurrence after now",
    });
  }
  const revision = Schedule.nextRevision(current);
  return decided([
    Schedule.toCheckpoint({
      scheduleId,
      definition,
      revision,
      definitionRevision: revision,
      registeredAt: now,
      nextDueAt,
      lastDueAt: current === undefined ? null : current.lastDueAt,
      cancelledAt: null,
      activeJobIds: current === undefined ? [] : current.activeJobIds,
      membershipComplete: current === undefined ? true : current.membershipComplete,
    }),
  ]);
};

/** CancelSchedule: (9,2) with revision current + 1. */
export const cancelSchedule = (state: State, command: Commands.CancelSchedule): Decided => {
  const { scheduleId } = command;
  const rejection = checkTime("now", command.now) ?? checkName("scheduleId", scheduleId);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const current = state.schedules.get(scheduleId);
  if (current === undefined) return Either.left({ _tag: "ScheduleNotFound", scheduleId });
  const mismatch = checkExpected(scheduleId, current, command.expectedRevision);
  if (mismatch !== undefined) return Either.left(mismatch);
  if (current.cancelledAt !== null) {
    return Either.left({ _tag: "ScheduleAlreadyCancelled", scheduleId });
  }
  return Either.right([scheduleCancelled({ scheduleId, revision: current.revision + 1, at: now })]);
};

const occurrenceRecord = (
  schedule: Schedule.Schedule,
  now: number,
  jobId: number,
  // The next due time when the caller computed it (catch-up "all"); else coalesced.
  given?: number | null,
): { readonly record: Event; readonly usedId: boolean } => {
  const revision = schedule.revision + 1;
  const dueAt = schedule.nextDueAt;
  const recurrence = Due.recurrence(schedule.definition);
  const nextDueAt =
    given !== undefined
      ? given
      : Either.isRight(recurrence)
        ? Due.following(recurrence.right, dueAt, now)
        : null;
  if (nextDueAt === null) {
    // No later occurrence fits the time range: the schedule ends here.
    return {
      record: scheduleCancelled({ scheduleId: schedule.scheduleId, revision, at: now }),
      usedId: false,
    };
  }
  if (schedule.definition.overlap === "skip" && schedule.activeJobIds.length > 0) {
    return {
      record: occurrenceAdvanced({
        scheduleId: schedule.scheduleId,
        revision,
        dueAt,
        nextDueAt,
        outcome: "skipped",
        activeJobId: null,
      }),
      usedId: false,
    };
  }
  const { definition } = schedule;
  const inserted: JobInserted = jobInserted({
    jobId,
    queue: definition.queue,
    worker: definition.worker,
    args: definition.args,
    priority: definition.priority,
    maxAttempts: definition.maxAttempts,
    scheduledAt: dueAt,
    insertedAt: now,
  });
  return {
    record: mutation([
      inserted,
      occurrenceAdvanced({
        scheduleId: schedule.scheduleId,
        revision,
        dueAt,
        nextDueAt,
        outcome: "delivered",
        activeJobId: jobId,
      }),
    ]),
    usedId: true,
  };
};

/** The records of one schedule's catch-up, and how many job ids they used. */
interface CaughtUp {
  readonly records: ReadonlyArray<Event>;
  readonly usedIds: number;
}

const onceRecords = (schedule: Schedule.Schedule, now: number, jobId: number): CaughtUp => {
  const { record, usedId } = occurrenceRecord(schedule, now, jobId);
  return { records: [record], usedIds: usedId ? 1 : 0 };
};

/** The schedule after an (11,2) that advanced it to `nextDueAt` (and delivered `jobId`). */
const advancedTo = (
  schedule: Schedule.Schedule,
  nextDueAt: number,
  jobId: number | null,
): Schedule.Schedule => ({
  ...schedule,
  revision: schedule.revision + 1,
  lastDueAt: schedule.nextDueAt,
  nextDueAt,
  activeJobIds: jobId === null ? schedule.activeJobIds : [...schedule.activeJobIds, jobId],
});

/**
 * EVENTS-V3.md's catch-up, for a schedule due at `now`: "once" (and every
 * v2 definition) is one coalescing (11,2); "skip" and "all" first pass the
 * occurrences older than `now - W` with one (11,2) skipped, then "skip"
 * coalesces the recent ones into one, and "all" gives each recent one its
 * own (11,2), oldest first, at most `Limits.catchUpAllPerTickMax` per tick.
 * At most `room` records.
 */
const catchUpRecords = (
  schedule: Schedule.Schedule,
  now: number,
  firstJobId: number,
  room: number,
): CaughtUp => {
  const { definition } = schedule;
  const recurrence = Due.recurrence(definition);
  if (!isDefinitionV3(definition) || definition.catchUp === "once" || Either.isLeft(recurrence)) {
    return onceRecords(schedule, now, firstJobId);
  }
  const rule = recurrence.right;
  const windowMs =
    definition.catchUpWindowMs ??
    (definition.catchUp === "skip" ? 60_000 : Number.POSITIVE_INFINITY);
  const records: Array<Event> = [];
  let current = schedule;
  let jobId = firstJobId;
  if (current.nextDueAt < now - windowMs) {
    const recent = Due.atOrAfter(rule, current.nextDueAt, now - windowMs);
    const next =
      recent !== null && recent <= now ? recent : Due.following(rule, current.nextDueAt, now);
    if (next === null) return onceRecords(schedule, now, firstJobId);
    records.push(
      occurrenceAdvanced({
        scheduleId: current.scheduleId,
        revision: current.revision + 1,
        dueAt: current.nextDueAt,
        nextDueAt: next,
        outcome: "skipped",
        activeJobId: null,
      }),
    );
    current = advancedTo(current, next, null);
  }
  const perTick = definition.catchUp === "skip" ? 1 : Limits.catchUpAllPerTickMax;
  for (let count = 0; count < perTick && records.length < room; count++) {
    if (current.nextDueAt > now) break;
    const given =
      definition.catchUp === "all"
        ? Due.after(rule, current.nextDueAt, current.nextDueAt)
        : undefined;
    const { record, usedId } = occurrenceRecord(current, now, jobId, given);
    records.push(record);
    if (record._tag === "ScheduleCancelled" || given === null) break;
    const next = given ?? Due.following(rule, current.nextDueAt, now);
    if (next === null) break;
    current = advancedTo(current, next, usedId ? jobId : null);
    if (usedId) jobId++;
  }
  return { records, usedIds: jobId - firstJobId };
};

/**
 * Tick: for every active schedule with next_due_at <= now (earliest
 * first, at most `limit`): one delivery mutation [(1,1), (11,2) delivered],
 * or a (11,2) skipped when overlap is "skip" and an occurrence is still
 * active. Missed occurrences are coalesced: next_due_at becomes the first
 * occurrence after now. A schedule with no representable next occurrence
 * is cancelled instead.
 */
export const tick = (state: State, command: Commands.Tick): Decided => {
  const rejection = checkTime("now", command.now) ?? checkLimit(command.limit);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const limit = command.limit ?? Limits.decisionRecordsMax;
  const records: Array<Event> = [];
  let nextJobId = state.lastJobId + 1;
  let exhausted = false;
  state.indexes.due.forEachWhile((_, schedule) => {
    if (schedule.nextDueAt > now || records.length >= limit) return false;
    if (nextJobId > Limits.idMax) {
      exhausted = true;
      return false;
    }
    const caught = catchUpRecords(schedule, now, nextJobId, limit - records.length);
    for (const record of caught.records) records.push(record);
    nextJobId += caught.usedIds;
    return true;
  });
  if (exhausted) {
    return Either.left({
      _tag: "IdsExhausted",
      lastJobId: state.lastJobId,
      requested: records.length + 1,
    });
  }
  return decided(records);
};

const isRedrivable = (job: Job): boolean => job.state === "discarded" || job.state === "cancelled";

/** The max_attempts a redrive gives when the command leaves it out. */
const redriveAttempts = (job: Job): number =>
  job.maxAttempts > job.attempt ? job.maxAttempts : job.attempt + 1;

/**
 * RedriveJob (EVENTS-V3.md (20,3)): a discarded or cancelled job becomes
 * available at `now`, keeping its attempt and errors, with `maxAttempts`
 * (which must exceed its attempt). Refused with `UniqueKeyTaken` while
 * another non-terminal job of its queue holds its unique key.
 */
export const redriveJob = (state: State, command: Commands.RedriveJob): Decided => {
  const rejection = checkTime("now", command.now) ?? checkText("reason", command.reason);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const job = findJob(state, command.jobId, command._tag, isRedrivable);
  if (isRejection(job)) return Either.left(job);
  const maxAttempts = command.maxAttempts ?? redriveAttempts(job);
  if (!Fields.isIntegerIn(maxAttempts, job.attempt + 1, Limits.maxAttemptsMax)) {
    const detail = `must be an integer ${job.attempt + 1}..${Limits.maxAttemptsMax} (above the job's attempt ${job.attempt})`;
    return Either.left(invalid("maxAttempts", detail));
  }
  if (job.uniqueKey !== null) {
    const store = {
      getJob: (jobId: number) => ruleJob(state, jobId),
      uniqueHolders: (queue: string, key: string) => state.indexes.unique.holders(queue, key) ?? [],
    };
    const heldBy = uniqueHolder(store, job.queue, job.uniqueKey, job.jobId, now, null);
    if (heldBy !== undefined) {
      return Either.left({
        _tag: "UniqueKeyTaken",
        jobId: job.jobId,
        queue: job.queue,
        uniqueKey: job.uniqueKey,
        heldBy,
      });
    }
  }
  return decided([jobRedriven({ jobId: job.jobId, at: now, maxAttempts, reason: command.reason })]);
};

const checkRateLimit = (rate: RateLimit | null | undefined): Rejection | undefined => {
  if (rate === undefined || rate === null) return undefined;
  if (!Fields.isIntegerIn(rate.count, Limits.rateCountMin, Limits.rateCountMax)) {
    return invalid("rateLimit.count", `must be an integer 1..${Limits.rateCountMax}`);
  }
  if (!Fields.isIntegerIn(rate.perMs, Limits.ratePerMsMin, Limits.ratePerMsMax)) {
    return invalid("rateLimit.perMs", `must be an integer 1..${Limits.ratePerMsMax}`);
  }
  return undefined;
};

const sameQueueState = (
  current: Queue.QueueState | undefined,
  paused: boolean,
  concurrency: number | null,
  rate: RateLimit | null,
): boolean => {
  const before = current ?? { paused: false, concurrency: null, rateLimit: null };
  return (
    before.paused === paused &&
    before.concurrency === concurrency &&
    (before.rateLimit === null || rate === null
      ? before.rateLimit === rate
      : before.rateLimit.count === rate.count && before.rateLimit.perMs === rate.perMs)
  );
};

/**
 * SetQueueState (EVENTS-V3.md (24,3)): the queue's whole new state, its
 * fields given replacing the current ones. A state equal to the current one
 * decides nothing, so pausing a paused queue (or resuming a queue never
 * paused) appends no record, and a store that never limits a queue holds
 * no (24,3).
 */
export const setQueueState = (state: State, command: Commands.SetQueueState): Decided => {
  const rejection =
    checkTime("now", command.now) ??
    checkName("queue", command.queue) ??
    (command.paused === undefined || typeof command.paused === "boolean"
      ? undefined
      : invalid("paused", "must be a boolean")) ??
    (command.concurrency === undefined ||
    command.concurrency === null ||
    Fields.isId(command.concurrency)
      ? undefined
      : invalid("concurrency", "must be an integer 1..2^53-1, or null")) ??
    checkRateLimit(command.rateLimit);
  if (rejection !== undefined) return Either.left(rejection);
  const current = state.queues.get(command.queue);
  const paused = command.paused ?? current?.paused ?? false;
  const concurrency =
    command.concurrency === undefined ? (current?.concurrency ?? null) : command.concurrency;
  const given = command.rateLimit;
  const rateLimit =
    given === undefined
      ? (current?.rateLimit ?? null)
      : given === null
        ? null
        : { count: given.count, perMs: given.perMs };
  if (sameQueueState(current, paused, concurrency, rateLimit)) return Either.right([]);
  const at = Fields.canonicalNumber(command.now);
  return Either.right([
    queueStateSet({ queue: command.queue, at, paused, concurrency, rateLimit }),
  ]);
};

/** The error a timed-out attempt fails with (EVENTS-V3.md). */
export const timeoutError = "timeout";

/**
 * TimeoutJobs (EVENTS-V3.md): every executing job with a `timeout_ms` whose
 * attempt started at or before `now - timeout_ms - graceMs` fails with
 * error "timeout" (retried while attempts remain, else discarded), earliest
 * deadline first, at most `limit` records.
 */
export const timeoutJobs = (state: State, command: Commands.TimeoutJobs): Decided => {
  const rejection =
    checkTime("now", command.now) ??
    (Fields.isTime(command.graceMs) ? undefined : invalid("graceMs", timeDetail)) ??
    checkLimit(command.limit);
  if (rejection !== undefined) return Either.left(rejection);
  const now = Fields.canonicalNumber(command.now);
  const limit = command.limit ?? Limits.decisionRecordsMax;
  const policy = command.backoff ?? Backoff.defaultPolicy;
  const records: Array<Event> = [];
  // Oldest deadline first: the walk stops at the first attempt still in time.
  state.indexes.deadlines.forEachWhile((_, job) => {
    if (records.length >= limit) return false;
    if (attemptDeadline(job) + command.graceMs > now) return false;
    records.push(failure(job, now, timeoutError, false, policy));
    return true;
  });
  return decided(records);
};

/** Decides any command (dispatch on `_tag`). */
export const decide = (state: State, command: Commands.Command): Decided => {
  switch (command._tag) {
    case "InsertJobs":
      return insertJobs(state, command);
    case "ClaimJobs":
      return claimJobs(state, command);
    case "CompleteJob":
      return completeJob(state, command);
    case "FailJob":
      return failJob(state, command);
    case "CancelJob":
      return cancelJob(state, command);
    case "RescueJobs":
      return rescueJobs(state, command);
    case "MakeDueAvailable":
      return makeDueAvailable(state, command);
    case "RegisterSchedule":
      return registerSchedule(state, command);
    case "CancelSchedule":
      return cancelSchedule(state, command);
    case "Tick":
      return tick(state, command);
    case "RedriveJob":
      return redriveJob(state, command);
    case "SetQueueState":
      return setQueueState(state, command);
    case "TimeoutJobs":
      return timeoutJobs(state, command);
    default:
      return absurd(command);
  }
};

const absurd = (command: never): Decided =>
  Either.left(invalid("_tag", `unknown command ${tagName(command)}`));
