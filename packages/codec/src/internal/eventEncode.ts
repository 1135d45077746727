/**
 * Encoding typed events into payload bytes, the two ways `Event.encodeEvent`
 * combines: the direct encoder of the frequent pairs (`directEncode.ts`),
 * which only ever accepts, and the general encoder through the value layer
 * (write the payload value, read it back with the decoder's checks, then
 * encode it), which gives every refusal. Kept apart from `Event.ts` so that
 * tests can hold the two paths against each other.
 */
import { Event as CoreEvent } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { eventFromValue, eventToValue, type PayloadEvent, payloadPairOf } from "../Payload.js";
import { payloadBytesMax } from "../Record.js";
import { encodeValue } from "../Value.js";
import { describeDefect } from "./bytes.js";
import { encodeEventDirect } from "./directEncode.js";
import { withinMutation } from "./eventDecode.js";
import type { EncodedEvent, EventEncodeError } from "./eventTypes.js";

type Event = CoreEvent.Event;

const mutationPair = CoreEvent.pairs.Mutation;

/** Encodes one payload-level event after reading its value back with the decoder's checks. */
const encodeChecked = (event: PayloadEvent): E.Either<EventEncodeError, EncodedEvent> => {
  const pair = payloadPairOf(event._tag);
  if (pair === undefined) {
    // Only reachable from untyped callers: no pair has this tag.
    return E.left({ _tag: "UnknownEvent", type: 0, schema: 0, path: "_tag" });
  }
  const { type, schema } = pair;
  const value = eventToValue(event);
  const checked = eventFromValue(type, schema, value);
  if (E.isLeft(checked)) return checked;
  const payload = encodeValue(value);
  if (E.isLeft(payload)) {
    return E.left({ _tag: "EventPayloadUnencodable", type, schema, path: "", error: payload.left });
  }
  if (payload.right.length > payloadBytesMax) {
    const bytes = payload.right.length;
    return E.left({
      _tag: "EventPayloadTooLarge",
      type,
      schema,
      path: "",
      bytes,
      bytesMax: payloadBytesMax,
    });
  }
  return E.right({ type, schema, payload: payload.right });
};

const encodeMutation = (mutation: CoreEvent.Mutation): E.Either<EventEncodeError, EncodedEvent> => {
  const entries: EncodedEvent[] = [];
  for (let index = 0; index < mutation.events.length; index++) {
    const inner = mutation.events[index];
    if (inner === undefined) continue;
    // The type forbids these, but a mutation may come from untyped code.
    const innerTag: string = inner._tag;
    if (innerTag === "SnapshotPart" || innerTag === "SnapshotPartV3" || innerTag === "Mutation") {
      const nested =
        innerTag === "Mutation"
          ? mutationPair
          : innerTag === "SnapshotPart"
            ? CoreEvent.pairs.SnapshotPart
            : CoreEvent.pairs.SnapshotPartV3;
      return E.left({
        _tag: "SchemaMismatch",
        type: mutationPair.type,
        schema: mutationPair.schema,
        path: `events[${index}]`,
        reason: "NestedRecord",
        found: `(${nested.type},${nested.schema})`,
      });
    }
    const encoded = encodeChecked(inner);
    if (E.isLeft(encoded)) {
      return E.left(
        encoded.left._tag === "Defect" ? encoded.left : withinMutation(encoded.left, index),
      );
    }
    entries.push(encoded.right);
  }
  // An empty mutation is refused by the envelope's own declaration here.
  return encodeChecked({ _tag: "MutationPayload", events: entries });
};

/**
 * The general encoder: an event's payload value, read back with the
 * decoder's checks, then encoded; a mutation's events first, one by one.
 * It judges every event, and gives every refusal. May throw on a bug (or an
 * event that breaks its type): `guardEncode` turns that into a `Defect`.
 */
export const encodeEventByValue = (event: Event): E.Either<EventEncodeError, EncodedEvent> =>
  event._tag === "Mutation" ? encodeMutation(event) : encodeChecked(event);

/**
 * What `encodeEvent` does inside its guard: the direct encoder when it
 * accepts, else the general encoder.
 */
export const encodeEventChecked = (event: Event): E.Either<EventEncodeError, EncodedEvent> => {
  // The fast path only ever accepts; a refusal always comes from the general path.
  const direct = encodeEventDirect(event);
  return direct !== undefined ? E.right(direct) : encodeEventByValue(event);
};

/** Runs `encode` on `event`, turning an unexpected exception into a `Defect` result. */
export const guardEncode = (
  event: Event,
  encode: (event: Event) => E.Either<EventEncodeError, EncodedEvent>,
): E.Either<EventEncodeError, EncodedEvent> => {
  try {
    return encode(event);
  } catch (cause) {
    const tag: unknown = typeof event === "object" && event !== null ? event._tag : undefined;
    const pair = typeof tag === "string" ? payloadPairOf(tag) : undefined;
    return E.left({
      _tag: "Defect",
      type: pair?.type ?? 0,
      schema: pair?.schema ?? 0,
      message: describeDefect(cause),
    });
  }
};
