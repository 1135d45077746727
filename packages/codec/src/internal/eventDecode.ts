/**
 * Decoding record payloads into typed events, the two ways `Event.decodeEvent`
 * combines: the direct decoders of the frequent pairs (`directEvent.ts`),
 * and the general decoder through the value layer, which judges everything
 * the direct ones do not accept. Kept apart from `Event.ts` so that tests
 * can hold the two paths against each other.
 */
import { Event as CoreEvent } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import {
  type EventShapeError,
  eventFromValue,
  type MutationPayloadEntry,
  type PayloadEvent,
  payloadTagOf,
} from "../Payload.js";
import { decodeValue } from "../Value.js";
import { decodeEventDirect } from "./directEvent.js";
import type { EventDecodeError } from "./eventTypes.js";

type Event = CoreEvent.Event;
type DomainEvent = CoreEvent.DomainEvent;

const mutationPair = CoreEvent.pairs.Mutation;

/** Prefixes the location of an inner event's payload to an error's path. */
export const withinMutation = <Located extends { readonly path: string }>(
  error: Located,
  index: number,
): Located => {
  const prefix = `events[${index}].payload`;
  if (error.path === "") return { ...error, path: prefix };
  return {
    ...error,
    path: error.path.startsWith("[") ? prefix + error.path : `${prefix}.${error.path}`,
  };
};

const shapeWithinMutation = (error: EventShapeError, index: number): EventShapeError =>
  error._tag === "Defect" ? error : withinMutation(error, index);

const isDomainEvent = (event: PayloadEvent): event is DomainEvent =>
  event._tag !== "SnapshotPart" &&
  event._tag !== "SnapshotPartV3" &&
  event._tag !== "MutationPayload";

const decodeInner = (
  entry: MutationPayloadEntry,
  index: number,
): E.Either<EventDecodeError, DomainEvent> => {
  const { type, schema } = entry;
  const value = decodeValue(entry.payload);
  if (E.isLeft(value)) {
    return E.left({
      _tag: "EventPayloadInvalid",
      type,
      schema,
      path: `events[${index}].payload`,
      error: value.left,
    });
  }
  const event = eventFromValue(type, schema, value.right);
  if (E.isLeft(event)) return E.left(shapeWithinMutation(event.left, index));
  if (isDomainEvent(event.right)) return E.right(event.right);
  // The mutation's own declaration already refused these pairs.
  return E.left({
    _tag: "SchemaMismatch",
    type: mutationPair.type,
    schema: mutationPair.schema,
    path: `events[${index}]`,
    reason: "NestedRecord",
    found: `(${type},${schema})`,
  });
};

/**
 * The general decoder, through the value layer: `decodeValue`, then
 * `eventFromValue` (the declarations of `Payload.ts`), then, for a
 * mutation, the same for each inner payload. Every refusal of
 * `Event.decodeEvent` comes from here. Throws only on a bug.
 */
export const decodeEventByValue = (
  type: number,
  schema: number,
  payload: Uint8Array,
): E.Either<EventDecodeError, Event> => {
  // An unknown pair is refused before its bytes are even looked at.
  if (payloadTagOf(type, schema) === undefined) {
    return E.left({ _tag: "UnknownEvent", type, schema, path: "" });
  }
  const value = decodeValue(payload);
  if (E.isLeft(value)) {
    return E.left({ _tag: "EventPayloadInvalid", type, schema, path: "", error: value.left });
  }
  const event = eventFromValue(type, schema, value.right);
  if (E.isLeft(event)) return event;
  const decoded = event.right;
  if (decoded._tag !== "MutationPayload") return E.right(decoded);
  const entries = decoded.events;
  const events: DomainEvent[] = [];
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index];
    if (entry === undefined) continue;
    const inner = decodeInner(entry, index);
    if (E.isLeft(inner)) return inner;
    events.push(inner.right);
  }
  return E.right(CoreEvent.mutation(events));
};

/**
 * `decodeEventByValue`'s verdict, faster: a payload that is exactly the
 * canonical encoding of a valid event of a frequent pair is read directly;
 * anything else goes through the general decoder. Throws only on a bug.
 */
export const decodeEventChecked = (
  type: number,
  schema: number,
  payload: Uint8Array,
): E.Either<EventDecodeError, Event> => {
  const direct = decodeEventDirect(type, schema, payload, 0, payload.length);
  return direct === undefined ? decodeEventByValue(type, schema, payload) : E.right(direct);
};
