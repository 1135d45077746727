/**
 * Event payloads as values: the declaration of every (type, schema) pair of
 * EVENTS.md as a map of exactly its keys, with the kind of each, and the two
 * directions between typed events and payload values.
 *
 * One declaration per pair (`eventPayloadKinds`) drives the decoder
 * (`eventFromValue`), the encoder (`eventToValue`) and, through its
 * `descriptor`, the testkit's arbitraries. Each declaration is an io-ts
 * codec over `Value`; the hot checks are hand-written (see
 * docs/events-codec.md for the measurements).
 *
 * This module never touches bytes. A mutation (8,1) carries its events as
 * encoded payloads, so at this level it is a `MutationPayload` whose events
 * are still `{ type, schema, payload bytes }`; `Event.ts` encodes and
 * decodes the inner payloads.
 *
 * Wire keys are the snake_case names of EVENTS.md; typed fields are their
 * camelCase (`job_id` is `jobId`).
 */
import { Event as CoreEvent, Limits, Value as CoreValue } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describeDefect } from "./internal/bytes.js";
import {
  type EventSchemaMismatchReason,
  type PayloadKind,
  PayloadFault,
  payloadAscendingList,
  payloadBool,
  payloadBytes,
  payloadEnum,
  payloadInteger,
  payloadList,
  payloadMap,
  payloadNullable,
  payloadString,
  payloadTagged,
  payloadValue,
} from "./internal/payloadKinds.js";

export type {
  EventSchemaMismatchReason,
  PayloadFieldDescriptor,
  PayloadKindDescriptor,
} from "./internal/payloadKinds.js";
export { PayloadKind } from "./internal/payloadKinds.js";

type Value = CoreValue.Value;
type ValueMap = CoreValue.ValueMap;
type Event = CoreEvent.Event;

// ---------------------------------------------------------------------------
// Errors

/** A (type, schema) pair that EVENTS.md does not declare. */
export interface UnknownEvent {
  readonly _tag: "UnknownEvent";
  readonly type: number;
  readonly schema: number;
  /** "" for the record itself; `events[2]` for an event inside a mutation. */
  readonly path: string;
}

/**
 * A payload that does not match its pair's declaration: a missing or extra
 * key, a value of the wrong kind or out of its range, or one of the
 * structural rules (see `EventSchemaMismatchReason`). `type` and `schema`
 * name the pair whose declaration is violated; `path` runs from the root of
 * the record's payload (`events[1].payload.queue` inside a mutation).
 */
export interface EventSchemaMismatch {
  readonly _tag: "SchemaMismatch";
  readonly type: number;
  readonly schema: number;
  readonly path: string;
  readonly reason: EventSchemaMismatchReason;
  /** What was found: a kind (`string`), a number, a byte length, a key. */
  readonly found: string;
}

/**
 * An integer beyond 2^53-1 in a field whose range reaches that far (an id,
 * a time, a count): valid bytes, refused as an implementation limit.
 */
export interface EventBeyondSafeInteger {
  readonly _tag: "BeyondSafeInteger";
  readonly type: number;
  readonly schema: number;
  readonly path: string;
  /** The integer, in decimal. */
  readonly found: string;
}

/** An unexpected exception inside the codec: a bug, never a verdict on the input. */
export interface EventDefect {
  readonly _tag: "Defect";
  readonly type: number;
  readonly schema: number;
  readonly message: string;
}

/** Why a payload value is not the event its pair declares. */
export type EventShapeError =
  | UnknownEvent
  | EventSchemaMismatch
  | EventBeyondSafeInteger
  | EventDefect;

// ---------------------------------------------------------------------------
// Field kinds

const id = payloadInteger("id", Limits.idMin, Limits.idMax);
const time = payloadInteger("time", Limits.timeMin, Limits.timeMax);
const priority = payloadInteger("priority", Limits.priorityMin, Limits.priorityMax);
const maxAttempts = payloadInteger("max_attempts", Limits.maxAttemptsMin, Limits.maxAttemptsMax);
/** A started or failed attempt: attempt n is the n-th start, so at least 1. */
const attemptMade = payloadInteger("attempt", 1, Limits.maxAttemptsMax);
/** A job's attempt count in a snapshot: 0 until it first starts. */
const attemptCount = payloadInteger("attempt", 0, Limits.maxAttemptsMax);
/** `part` and `last_job_id`: 0, 1, 2, ... */
const count = payloadInteger("count", 0, CoreValue.safeIntegerMax);
const name = payloadString("name", Limits.nameBytesMin, Limits.nameBytesMax);
const text = payloadString("text", 0, Limits.textBytesMax);
const revision = id;

/** Type and schema of an event inside a mutation: the byte range of the record header fields. */
export const mutationPairPartMax = 255;
const pairPart = payloadInteger("pair", 0, mutationPairPartMax);

/** A recurring schedule's definition: exactly one of `every_ms` and `cron` is set. */
export const scheduleDefinitionPayload: PayloadKind<CoreEvent.ScheduleDefinition, ValueMap> =
  payloadMap<CoreEvent.ScheduleDefinition>(
    "ScheduleDefinition",
    {
      queue: ["queue", name],
      worker: ["worker", name],
      args: ["args", payloadValue],
      priority: ["priority", priority],
      maxAttempts: ["max_attempts", maxAttempts],
      everyMs: ["every_ms", payloadNullable(id)],
      cron: ["cron", payloadNullable(text)],
      overlap: ["overlap", payloadEnum("overlap", ["allow", "skip"])],
    },
    { exactlyOneOf: ["everyMs", "cron"] },
  );

/** The schema-3 definition: the v2 one plus its zone and catch-up policy (EVENTS-V3.md). */
export const scheduleDefinitionV3Payload: PayloadKind<CoreEvent.ScheduleDefinitionV3, ValueMap> =
  payloadMap<CoreEvent.ScheduleDefinitionV3>(
    "ScheduleDefinitionV3",
    {
      queue: ["queue", name],
      worker: ["worker", name],
      args: ["args", payloadValue],
      priority: ["priority", priority],
      maxAttempts: ["max_attempts", maxAttempts],
      everyMs: ["every_ms", payloadNullable(id)],
      cron: ["cron", payloadNullable(text)],
      overlap: ["overlap", payloadEnum("overlap", ["allow", "skip"])],
      timezone: ["timezone", name],
      catchUp: ["catch_up", payloadEnum("catch_up", CoreEvent.catchUpPolicies)],
      catchUpWindowMs: ["catch_up_window_ms", payloadNullable(id)],
    },
    { exactlyOneOf: ["everyMs", "cron"] },
  );

/** A queue's rate limit, (24,3)'s `rate_limit`. */
export const rateLimitPayload: PayloadKind<CoreEvent.RateLimit, ValueMap> =
  payloadMap<CoreEvent.RateLimit>("RateLimit", {
    count: ["count", payloadInteger("count", Limits.rateCountMin, Limits.rateCountMax)],
    perMs: ["per_ms", payloadInteger("per_ms", Limits.ratePerMsMin, Limits.ratePerMsMax)],
  });

/** One failed attempt kept with its job. */
export const jobErrorPayload: PayloadKind<CoreEvent.JobError, ValueMap> =
  payloadMap<CoreEvent.JobError>("JobError", {
    attempt: ["attempt", attemptMade],
    at: ["at", time],
    error: ["error", text],
  });

/** A job as a snapshot part carries it. */
export const jobSnapshotPayload: PayloadKind<CoreEvent.JobSnapshot, ValueMap> =
  payloadMap<CoreEvent.JobSnapshot>("JobSnapshot", {
    jobId: ["job_id", id],
    queue: ["queue", name],
    worker: ["worker", name],
    args: ["args", payloadValue],
    priority: ["priority", priority],
    maxAttempts: ["max_attempts", maxAttempts],
    attempt: ["attempt", attemptCount],
    state: ["state", payloadEnum("state", CoreEvent.jobStates)],
    insertedAt: ["inserted_at", time],
    scheduledAt: ["scheduled_at", time],
    attemptedAt: ["attempted_at", payloadNullable(time)],
    finishedAt: ["finished_at", payloadNullable(time)],
    errors: ["errors", payloadList(jobErrorPayload)],
  });

/** A job as a (7,3) snapshot part carries it: the (7,1) job plus the three schema-3 fields. */
export const jobSnapshotV3Payload: PayloadKind<CoreEvent.JobSnapshotV3, ValueMap> =
  payloadMap<CoreEvent.JobSnapshotV3>("JobSnapshotV3", {
    jobId: ["job_id", id],
    queue: ["queue", name],
    worker: ["worker", name],
    args: ["args", payloadValue],
    priority: ["priority", priority],
    maxAttempts: ["max_attempts", maxAttempts],
    attempt: ["attempt", attemptCount],
    state: ["state", payloadEnum("state", CoreEvent.jobStates)],
    insertedAt: ["inserted_at", time],
    scheduledAt: ["scheduled_at", time],
    attemptedAt: ["attempted_at", payloadNullable(time)],
    finishedAt: ["finished_at", payloadNullable(time)],
    errors: ["errors", payloadList(jobErrorPayload)],
    uniqueKey: ["unique_key", payloadNullable(name)],
    uniquePeriodMs: ["unique_period_ms", payloadNullable(id)],
    timeoutMs: ["timeout_ms", payloadNullable(id)],
  });

// ---------------------------------------------------------------------------
// Mutations at the value level

/** One event of a mutation as the (8,1) payload carries it: still encoded. */
export interface MutationPayloadEntry {
  readonly type: number;
  readonly schema: number;
  /** The canonical encoding of the inner event's payload value. */
  readonly payload: Uint8Array;
}

/** A mutation (8,1) at the value level: its events' payloads not yet decoded. */
export interface MutationPayload {
  readonly _tag: "MutationPayload";
  readonly events: ReadonlyArray<MutationPayloadEntry>;
}

/** What a payload value decodes to: any event, with a mutation's inner events still encoded. */
export type PayloadEvent = Exclude<Event, CoreEvent.Mutation> | MutationPayload;

/** The tag of a `PayloadEvent`. */
export type PayloadEventTag = PayloadEvent["_tag"];

const pairKey = (type: number, schema: number): number => type * 256 + schema;

const renderPair = (type: number, schema: number): string => `(${type},${schema})`;

/** True for the pairs a mutation may carry: the 17 domain events. */
const isDomainPair = (type: number, schema: number): boolean => {
  const tag = tagsByPair.get(pairKey(type, schema));
  return (
    tag !== undefined &&
    tag !== "SnapshotPart" &&
    tag !== "SnapshotPartV3" &&
    tag !== "MutationPayload"
  );
};

const mutationEntryPayload = payloadMap<MutationPayloadEntry>(
  "MutationPayloadEntry",
  {
    type: ["type", pairPart],
    schema: ["schema", pairPart],
    payload: ["payload", payloadBytes],
  },
  {
    refine: ({ type, schema }) => {
      if (isDomainPair(type, schema)) return undefined;
      const pair = { type, schema };
      const reason = tagsByPair.has(pairKey(type, schema)) ? "NestedRecord" : "UnknownEvent";
      return new PayloadFault(reason, renderPair(type, schema), pair);
    },
  },
);

// ---------------------------------------------------------------------------
// The 20 pairs

type Tagged<Tag extends PayloadEventTag> = Extract<PayloadEvent, { readonly _tag: Tag }>;

/**
 * The declaration of every pair, by tag: an io-ts codec from the payload
 * value to the typed event (a `MutationPayload` for (8,1)).
 */
export const eventPayloadKinds: {
  readonly [Tag in PayloadEventTag]: PayloadKind<Tagged<Tag>, ValueMap>;
} = {
  JobInserted: payloadTagged<CoreEvent.JobInserted>("JobInserted", {
    jobId: ["job_id", id],
    queue: ["queue", name],
    worker: ["worker", name],
    args: ["args", payloadValue],
    priority: ["priority", priority],
    maxAttempts: ["max_attempts", maxAttempts],
    scheduledAt: ["scheduled_at", time],
    insertedAt: ["inserted_at", time],
  }),
  JobAvailable: payloadTagged<CoreEvent.JobAvailable>("JobAvailable", {
    jobId: ["job_id", id],
    at: ["at", time],
  }),
  JobStarted: payloadTagged<CoreEvent.JobStarted>("JobStarted", {
    jobId: ["job_id", id],
    at: ["at", time],
    attempt: ["attempt", attemptMade],
  }),
  JobFinished: payloadTagged<CoreEvent.JobFinished>("JobFinished", {
    jobId: ["job_id", id],
    at: ["at", time],
    outcome: ["outcome", payloadEnum("outcome", ["completed", "discarded"])],
    error: ["error", payloadNullable(text)],
  }),
  JobCancelled: payloadTagged<CoreEvent.JobCancelled>("JobCancelled", {
    jobId: ["job_id", id],
    at: ["at", time],
    reason: ["reason", payloadNullable(text)],
  }),
  JobRetried: payloadTagged<CoreEvent.JobRetried>("JobRetried", {
    jobId: ["job_id", id],
    at: ["at", time],
    retryAt: ["retry_at", time],
    error: ["error", text],
  }),
  SnapshotPart: payloadTagged<CoreEvent.SnapshotPart>("SnapshotPart", {
    part: ["part", count],
    lastJobId: ["last_job_id", count],
    jobs: ["jobs", payloadList(jobSnapshotPayload)],
  }),
  MutationPayload: payloadTagged<MutationPayload>("MutationPayload", {
    events: [
      "events",
      payloadList(mutationEntryPayload, { lengthMin: 1, emptyReason: "EmptyMutation" }),
    ],
  }),
  ScheduleRegistered: payloadTagged<CoreEvent.ScheduleRegistered>("ScheduleRegistered", {
    scheduleId: ["schedule_id", name],
    revision: ["revision", revision],
    definition: ["definition", scheduleDefinitionPayload],
    registeredAt: ["registered_at", time],
    nextDueAt: ["next_due_at", time],
  }),
  ScheduleAdvanced: payloadTagged<CoreEvent.ScheduleAdvanced>("ScheduleAdvanced", {
    scheduleId: ["schedule_id", name],
    revision: ["revision", revision],
    dueAt: ["due_at", time],
    nextDueAt: ["next_due_at", time],
  }),
  ScheduleCancelled: payloadTagged<CoreEvent.ScheduleCancelled>("ScheduleCancelled", {
    scheduleId: ["schedule_id", name],
    revision: ["revision", revision],
    at: ["at", time],
  }),
  ResultRecorded: payloadTagged<CoreEvent.ResultRecorded>("ResultRecorded", {
    jobId: ["job_id", id],
    result: ["result", payloadValue],
    at: ["at", time],
  }),
  OccurrenceAdvanced: payloadTagged<CoreEvent.OccurrenceAdvanced>("OccurrenceAdvanced", {
    scheduleId: ["schedule_id", name],
    revision: ["revision", revision],
    dueAt: ["due_at", time],
    nextDueAt: ["next_due_at", time],
    outcome: ["outcome", payloadEnum("outcome", ["delivered", "skipped"])],
    activeJobId: ["active_job_id", payloadNullable(id)],
  }),
  ScheduleHistoricalCheckpoint: payloadTagged<CoreEvent.ScheduleHistoricalCheckpoint>(
    "ScheduleHistoricalCheckpoint",
    {
      scheduleId: ["schedule_id", name],
      definition: ["definition", scheduleDefinitionPayload],
      definitionRevision: ["definition_revision", revision],
      revision: ["revision", revision],
      registeredAt: ["registered_at", time],
      nextDueAt: ["next_due_at", time],
      lastDueAt: ["last_due_at", payloadNullable(time)],
      cancelledAt: ["cancelled_at", payloadNullable(time)],
      activeJobId: ["active_job_id", payloadNullable(id)],
    },
  ),
  ScheduleCheckpoint: payloadTagged<CoreEvent.ScheduleCheckpoint>("ScheduleCheckpoint", {
    scheduleId: ["schedule_id", name],
    definition: ["definition", scheduleDefinitionPayload],
    definitionRevision: ["definition_revision", revision],
    revision: ["revision", revision],
    registeredAt: ["registered_at", time],
    nextDueAt: ["next_due_at", time],
    lastDueAt: ["last_due_at", payloadNullable(time)],
    cancelledAt: ["cancelled_at", payloadNullable(time)],
    activeJobIds: ["active_job_ids", payloadAscendingList(id)],
    membershipComplete: ["membership_complete", payloadBool],
  }),
  JobInsertedV3: payloadTagged<CoreEvent.JobInsertedV3>("JobInsertedV3", {
    jobId: ["job_id", id],
    queue: ["queue", name],
    worker: ["worker", name],
    args: ["args", payloadValue],
    priority: ["priority", priority],
    maxAttempts: ["max_attempts", maxAttempts],
    scheduledAt: ["scheduled_at", time],
    insertedAt: ["inserted_at", time],
    uniqueKey: ["unique_key", payloadNullable(name)],
    uniquePeriodMs: ["unique_period_ms", payloadNullable(id)],
    timeoutMs: ["timeout_ms", payloadNullable(id)],
  }),
  JobRedriven: payloadTagged<CoreEvent.JobRedriven>("JobRedriven", {
    jobId: ["job_id", id],
    at: ["at", time],
    maxAttempts: ["max_attempts", maxAttempts],
    reason: ["reason", payloadNullable(text)],
  }),
  QueueStateSet: payloadTagged<CoreEvent.QueueStateSet>("QueueStateSet", {
    queue: ["queue", name],
    at: ["at", time],
    paused: ["paused", payloadBool],
    concurrency: ["concurrency", payloadNullable(id)],
    rateLimit: ["rate_limit", payloadNullable(rateLimitPayload)],
  }),
  ScheduleCheckpointV3: payloadTagged<CoreEvent.ScheduleCheckpointV3>("ScheduleCheckpointV3", {
    scheduleId: ["schedule_id", name],
    definition: ["definition", scheduleDefinitionV3Payload],
    definitionRevision: ["definition_revision", revision],
    revision: ["revision", revision],
    registeredAt: ["registered_at", time],
    nextDueAt: ["next_due_at", time],
    lastDueAt: ["last_due_at", payloadNullable(time)],
    cancelledAt: ["cancelled_at", payloadNullable(time)],
    activeJobIds: ["active_job_ids", payloadAscendingList(id)],
    membershipComplete: ["membership_complete", payloadBool],
  }),
  SnapshotPartV3: payloadTagged<CoreEvent.SnapshotPartV3>("SnapshotPartV3", {
    part: ["part", count],
    lastJobId: ["last_job_id", count],
    jobs: ["jobs", payloadList(jobSnapshotV3Payload)],
  }),
};

/** The (type, schema) pair of every payload tag. */
export const payloadPairs: { readonly [Tag in PayloadEventTag]: CoreEvent.Pair } = (() => {
  const { Mutation, ...others } = CoreEvent.pairs;
  return { ...others, MutationPayload: Mutation };
})();

/**
 * A declaration with its type forgotten, for lookups by a pair read from a
 * record. The methods take any `PayloadEvent`: each entry is only ever
 * called with events of its own tag.
 */
interface EventPayloadEntry {
  read(input: Value): PayloadEvent | PayloadFault;
  write(event: PayloadEvent): ValueMap;
}

const entriesByTag: { readonly [Tag in PayloadEventTag]: EventPayloadEntry } = eventPayloadKinds;

const payloadEventTags: ReadonlyArray<PayloadEventTag> = [
  ...CoreEvent.eventTags.filter((tag) => tag !== "Mutation"),
  "MutationPayload",
];

const tagsByPair: ReadonlyMap<number, PayloadEventTag> = new Map(
  payloadEventTags.map((tag) => [pairKey(payloadPairs[tag].type, payloadPairs[tag].schema), tag]),
);

const entriesByPair: ReadonlyMap<number, EventPayloadEntry> = new Map(
  payloadEventTags.map((tag) => [
    pairKey(payloadPairs[tag].type, payloadPairs[tag].schema),
    entriesByTag[tag],
  ]),
);

/**
 * The pair of a payload tag, or undefined for a string that is no tag (only
 * untyped callers can pass one; `toString` and `__proto__` are not tags).
 */
export const payloadPairOf = (tag: string): CoreEvent.Pair | undefined =>
  Object.hasOwn(payloadPairs, tag) ? Reflect.get(payloadPairs, tag) : undefined;

/** The tag a (type, schema) pair decodes to, or undefined for a pair EVENTS.md does not declare. */
export const payloadTagOf = (type: number, schema: number): PayloadEventTag | undefined =>
  isPairPart(type) && isPairPart(schema) ? tagsByPair.get(pairKey(type, schema)) : undefined;

const isPairPart = (part: number): boolean =>
  Number.isInteger(part) && part >= 0 && part <= mutationPairPartMax;

/** Turns a fault found while reading a payload of pair (type, schema) into its public error. */
const eventShapeErrorOf = (type: number, schema: number, fault: PayloadFault): EventShapeError => {
  const { path, found } = fault;
  switch (fault.reason) {
    case "UnknownEvent":
      return {
        _tag: "UnknownEvent",
        type: fault.pair?.type ?? type,
        schema: fault.pair?.schema ?? schema,
        path,
      };
    case "BeyondSafeInteger":
      return { _tag: "BeyondSafeInteger", type, schema, path, found };
    default:
      return { _tag: "SchemaMismatch", type, schema, path, reason: fault.reason, found };
  }
};

/**
 * The payload value of an event: a map of exactly the wire keys its pair
 * declares, in canonical key order. It checks nothing (`encodeEvent` checks
 * by reading the value back); for a mutation, encode its events with
 * `encodeEvent` first, or call `encodeEvent` on the `Mutation` itself.
 *
 * @example eventToValue(jobAvailable({ jobId: 7, at: 1_700_000_000_000 }))
 *   // Map { "at" => 1700000000000, "job_id" => 7 }
 */
export const eventToValue = (event: PayloadEvent): ValueMap =>
  entriesByTag[event._tag].write(event);

/**
 * Reads the payload value of a record of pair (type, schema) into its typed
 * event, checking the exact key set and the kind and range of every field
 * as EVENTS.md declares them (a missing key is never defaulted).
 *
 * Returns `UnknownEvent` for an undeclared pair, `SchemaMismatch` with the
 * path of the first problem, `BeyondSafeInteger` for an integer beyond
 * 2^53-1 where the field's range reaches that far, and never throws (an
 * unexpected exception would be a `Defect`). A (8,1) mutation comes back as
 * a `MutationPayload` with its events' pairs checked (known, and neither
 * (7,1) nor (8,1)) but their payloads still encoded.
 */
export const eventFromValue = (
  type: number,
  schema: number,
  value: Value,
): E.Either<EventShapeError, PayloadEvent> => {
  try {
    const entry =
      isPairPart(type) && isPairPart(schema) ? entriesByPair.get(pairKey(type, schema)) : undefined;
    if (entry === undefined) return E.left({ _tag: "UnknownEvent", type, schema, path: "" });
    const event = entry.read(value);
    return event instanceof PayloadFault
      ? E.left(eventShapeErrorOf(type, schema, event))
      : E.right(event);
  } catch (cause) {
    return E.left({ _tag: "Defect", type, schema, message: describeDefect(cause) });
  }
};
