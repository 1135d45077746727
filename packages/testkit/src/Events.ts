/**
 * fast-check arbitraries for the typed events of EVENTS.md: all 15
 * (type, schema) pairs, the legacy read-only ones included, plus the
 * schedule definition, the snapshot job and the job error.
 *
 * Every field value is valid by itself (ids 1..2^53-1, names of 1..255
 * UTF-8 bytes, priority 0..9, exactly one of `every_ms` and `cron`,
 * ascending `active_job_ids`, ...), so every event encodes; the events are
 * not a legal history (see `Histories` for that).
 *
 * They are derived from the codec's own declaration of each pair
 * (`Payload.eventPayloadKinds`): `payloadValueOf` turns a kind's descriptor
 * into an arbitrary payload value, and the typed event is that value read by
 * the kind. A value the kind refuses is an error thrown here, so any drift
 * between the declaration's descriptor and its decoder fails the first
 * property that draws from it.
 */
import { Event, type Value } from "@tay/core";
import { Payload } from "@tay/codec";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import * as Values from "./Values.js";

type AnyValue = Value.Value;

/** Most items in a generated list (jobs of a snapshot part, errors of a job, ...). */
export const listLengthMax = 4;

/** `args` and `result`: nested values, kept small so event suites stay fast. */
const argsValue = (): fc.Arbitrary<AnyValue> => Values.value({ maxDepth: 3, maxLength: 4 });

/** 32-bit bounds of `fc.integer`. */
const int32Max = 0x7fff_ffff;

/**
 * Integers in `min..max`, biased to small values and to both bounds; ranges
 * past 32 bits (ids, times) reach 2^53-1.
 */
export const integerIn = (min: number, max: number): fc.Arbitrary<number> => {
  const small = fc.integer({ min, max: Math.min(max, min + 1_000) });
  const bounds = fc.constantFrom(min, max);
  if (max <= int32Max) return fc.oneof(small, fc.integer({ min, max }), bounds);
  return fc.oneof(
    { weight: 3, arbitrary: small },
    { weight: 2, arbitrary: fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number) },
    { weight: 1, arbitrary: bounds },
  );
};

const compareIntegers = (left: AnyValue, right: AnyValue): number =>
  typeof left === "number" && typeof right === "number" ? left - right : 0;

const mapOf = (
  fields: ReadonlyArray<Payload.PayloadFieldDescriptor>,
  exactlyOneOf: readonly [string, string] | undefined,
): fc.Arbitrary<AnyValue> => {
  // For `exactlyOneOf`, both fields are drawn non-null and one is then set
  // to null, so exactly one of them is always set.
  const nonNull = (descriptor: Payload.PayloadKindDescriptor): Payload.PayloadKindDescriptor =>
    descriptor.kind === "nullable" ? descriptor.of : descriptor;
  const either = new Set(exactlyOneOf ?? []);
  const items = fields.map((field) =>
    payloadValueOf(either.has(field.wire) ? nonNull(field.descriptor) : field.descriptor),
  );
  return fc.tuple(fc.tuple(...items), fc.boolean()).map(([values, keepFirst]) => {
    const entries = fields.map((field, index): [string, AnyValue] => [
      field.wire,
      values[index] ?? null,
    ]);
    const cleared = exactlyOneOf?.[keepFirst ? 1 : 0];
    return new Map(entries.map(([key, item]) => [key, key === cleared ? null : item]));
  });
};

/**
 * An arbitrary payload value of a kind, from its descriptor: every value it
 * draws is one the kind accepts.
 */
export const payloadValueOf = (
  descriptor: Payload.PayloadKindDescriptor,
): fc.Arbitrary<AnyValue> => {
  switch (descriptor.kind) {
    case "integer":
      return integerIn(descriptor.min, descriptor.max);
    case "name":
      return Values.name();
    case "text":
      return Values.text();
    case "enum":
      return fc.constantFrom(...descriptor.members);
    case "bool":
      return fc.boolean();
    case "value":
      return argsValue();
    case "bytes":
      return Values.bytes();
    case "nullable":
      return fc.option(payloadValueOf(descriptor.of), { nil: null });
    case "list": {
      const item = payloadValueOf(descriptor.of);
      const bounds = { minLength: descriptor.lengthMin, maxLength: listLengthMax };
      return descriptor.strictlyAscending
        ? fc.uniqueArray(item, bounds).map((items) => items.slice().sort(compareIntegers))
        : fc.array(item, bounds);
    }
    case "map":
      return mapOf(descriptor.fields, descriptor.exactlyOneOf);
    default:
      return descriptor satisfies never;
  }
};

/**
 * The typed values of a kind: its descriptor's payload values, read by the
 * kind itself (an io-ts `decode`).
 */
export const typedOf = <A>(kind: Payload.PayloadKind<A>): fc.Arbitrary<A> =>
  payloadValueOf(kind.descriptor).map((value) => {
    const decoded = kind.decode(value);
    if (E.isRight(decoded)) return decoded.right;
    const reasons = decoded.left.map((error) => error.message ?? "invalid").join("; ");
    throw new Error(`${kind.name}: its descriptor drew a value its decoder refuses: ${reasons}`);
  });

/** The payload tags whose payload values `payloadValue` can draw (all but the mutation). */
export type PlainPayloadTag = Exclude<Payload.PayloadEventTag, "MutationPayload">;

/** Payload values (maps of the wire keys) of the pair of `tag`. */
export const payloadValue = (tag: PlainPayloadTag): fc.Arbitrary<AnyValue> =>
  payloadValueOf(Payload.eventPayloadKinds[tag].descriptor);

const kinds = Payload.eventPayloadKinds;

/** A recurring schedule's definition: exactly one of `everyMs` and `cron` set. */
export const scheduleDefinition = (): fc.Arbitrary<Event.ScheduleDefinition> =>
  typedOf(Payload.scheduleDefinitionPayload);
/** One failed attempt of a job. */
export const jobError = (): fc.Arbitrary<Event.JobError> => typedOf(Payload.jobErrorPayload);
/** A job as a snapshot part carries it, in any of the seven states. */
export const jobSnapshot = (): fc.Arbitrary<Event.JobSnapshot> =>
  typedOf(Payload.jobSnapshotPayload);

/** (1,1) */
export const jobInserted = (): fc.Arbitrary<Event.JobInserted> => typedOf(kinds.JobInserted);
/** (2,1) */
export const jobAvailable = (): fc.Arbitrary<Event.JobAvailable> => typedOf(kinds.JobAvailable);
/** (3,1) */
export const jobStarted = (): fc.Arbitrary<Event.JobStarted> => typedOf(kinds.JobStarted);
/** (4,1) */
export const jobFinished = (): fc.Arbitrary<Event.JobFinished> => typedOf(kinds.JobFinished);
/** (5,1) */
export const jobCancelled = (): fc.Arbitrary<Event.JobCancelled> => typedOf(kinds.JobCancelled);
/** (6,1) */
export const jobRetried = (): fc.Arbitrary<Event.JobRetried> => typedOf(kinds.JobRetried);
/** (7,1) */
export const snapshotPart = (): fc.Arbitrary<Event.SnapshotPart> => typedOf(kinds.SnapshotPart);
/** (7,2), legacy. */
export const scheduleRegistered = (): fc.Arbitrary<Event.ScheduleRegistered> =>
  typedOf(kinds.ScheduleRegistered);
/** (8,2), legacy. */
export const scheduleAdvanced = (): fc.Arbitrary<Event.ScheduleAdvanced> =>
  typedOf(kinds.ScheduleAdvanced);
/** (9,2) */
export const scheduleCancelled = (): fc.Arbitrary<Event.ScheduleCancelled> =>
  typedOf(kinds.ScheduleCancelled);
/** (10,2) */
export const resultRecorded = (): fc.Arbitrary<Event.ResultRecorded> =>
  typedOf(kinds.ResultRecorded);
/** (11,2) */
export const occurrenceAdvanced = (): fc.Arbitrary<Event.OccurrenceAdvanced> =>
  typedOf(kinds.OccurrenceAdvanced);
/** (12,2), legacy. */
export const scheduleHistoricalCheckpoint = (): fc.Arbitrary<Event.ScheduleHistoricalCheckpoint> =>
  typedOf(kinds.ScheduleHistoricalCheckpoint);
/** (13,2) */
export const scheduleCheckpoint = (): fc.Arbitrary<Event.ScheduleCheckpoint> =>
  typedOf(kinds.ScheduleCheckpoint);

/** (1,3) */
export const jobInsertedV3 = (): fc.Arbitrary<Event.JobInsertedV3> => typedOf(kinds.JobInsertedV3);
/** (20,3) */
export const jobRedriven = (): fc.Arbitrary<Event.JobRedriven> => typedOf(kinds.JobRedriven);
/** (24,3) */
export const queueStateSet = (): fc.Arbitrary<Event.QueueStateSet> => typedOf(kinds.QueueStateSet);
/** (13,3) */
export const scheduleCheckpointV3 = (): fc.Arbitrary<Event.ScheduleCheckpointV3> =>
  typedOf(kinds.ScheduleCheckpointV3);
/** (7,3) */
export const snapshotPartV3 = (): fc.Arbitrary<Event.SnapshotPartV3> =>
  typedOf(kinds.SnapshotPartV3);
/** A schema-3 definition. */
export const scheduleDefinitionV3 = (): fc.Arbitrary<Event.ScheduleDefinitionV3> =>
  typedOf(Payload.scheduleDefinitionV3Payload);

/** Any of the four schema-3 events a mutation may carry. */
export const schema3DomainEvent = (): fc.Arbitrary<Event.DomainEvent> =>
  fc.oneof(jobInsertedV3(), jobRedriven(), queueStateSet(), scheduleCheckpointV3());

/** Any job event: (1,1) to (6,1). */
export const jobEvent = (): fc.Arbitrary<Event.JobEvent> =>
  fc.oneof(
    jobInserted(),
    jobAvailable(),
    jobStarted(),
    jobFinished(),
    jobCancelled(),
    jobRetried(),
  );

/** Any schedule event, legacy ones included. */
export const scheduleEvent = (): fc.Arbitrary<Event.ScheduleEvent> =>
  fc.oneof(
    scheduleRegistered(),
    scheduleAdvanced(),
    scheduleCancelled(),
    occurrenceAdvanced(),
    scheduleHistoricalCheckpoint(),
    scheduleCheckpoint(),
  );

/**
 * Any of the 13 domain events of EVENTS.md (schema 3 left out, so suites of
 * the v1/v2 contract keep drawing what they did; `anyDomainEvent` has all 17).
 */
export const domainEvent = (): fc.Arbitrary<Event.DomainEvent> =>
  fc.oneof(jobEvent(), scheduleEvent(), resultRecorded());

/** Any of the 17 domain events, schema 3 included. */
export const anyDomainEvent = (): fc.Arbitrary<Event.DomainEvent> =>
  fc.oneof(
    { weight: 13, arbitrary: domainEvent() },
    { weight: 4, arbitrary: schema3DomainEvent() },
  );

/** (8,1) holding any of the 17 domain events. */
export const mutationV3 = (): fc.Arbitrary<Event.Mutation> =>
  fc.array(anyDomainEvent(), { minLength: 1, maxLength: listLengthMax }).map(Event.mutation);

/** (8,1): one to `listLengthMax` domain events. */
export const mutation = (): fc.Arbitrary<Event.Mutation> =>
  fc.array(domainEvent(), { minLength: 1, maxLength: listLengthMax }).map(Event.mutation);

/** Any event of the 15 pairs: a domain event, a snapshot part or a mutation. */
export const event = (): fc.Arbitrary<Event.Event> =>
  fc.oneof(
    { weight: 13, arbitrary: domainEvent() },
    { weight: 1, arbitrary: snapshotPart() },
    { weight: 1, arbitrary: mutation() },
  );

/** The arbitrary of every tag, for suites that walk all 15 pairs. */
export const byTag: { readonly [Tag in Event.EventTag]: () => fc.Arbitrary<Event.Event> } = {
  JobInserted: jobInserted,
  JobAvailable: jobAvailable,
  JobStarted: jobStarted,
  JobFinished: jobFinished,
  JobCancelled: jobCancelled,
  JobRetried: jobRetried,
  SnapshotPart: snapshotPart,
  Mutation: mutation,
  ScheduleRegistered: scheduleRegistered,
  ScheduleAdvanced: scheduleAdvanced,
  ScheduleCancelled: scheduleCancelled,
  ResultRecorded: resultRecorded,
  OccurrenceAdvanced: occurrenceAdvanced,
  ScheduleHistoricalCheckpoint: scheduleHistoricalCheckpoint,
  ScheduleCheckpoint: scheduleCheckpoint,
  JobInsertedV3: jobInsertedV3,
  JobRedriven: jobRedriven,
  QueueStateSet: queueStateSet,
  ScheduleCheckpointV3: scheduleCheckpointV3,
  SnapshotPartV3: snapshotPartV3,
};
