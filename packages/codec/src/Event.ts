/**
 * Events as record payloads: a typed event to its (type, schema) pair and
 * the canonical bytes of its payload value, and back.
 *
 * `decodeEvent` is `decodeValue` then `eventFromValue`; for a mutation (8,1)
 * it then decodes each inner payload the same way (one level: a mutation
 * never holds a mutation or a snapshot part). The frequent job events,
 * mutations of them and snapshot parts are first tried by direct decoders
 * that read the bytes straight into the event and accept only what that
 * path would accept, as the same event (`internal/directEvent.ts`).
 * `encodeEvent` writes the
 * payload value, reads it back with the decoder's own checks, and only then
 * encodes it, so it refuses exactly what the decoder would refuse and never
 * writes what cannot be read back. The same frequent job events and
 * mutations of them are first tried by a direct encoder that writes the
 * bytes field by field and accepts only what that path would accept, as the
 * same bytes; every refusal comes from that path (`internal/directEncode.ts`).
 *
 * Neither function throws, for any input: one guard at each turns an
 * unexpected exception into a `Defect` result.
 */
import type { Event as CoreEvent } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describeDefect } from "./internal/bytes.js";
import { decodeEventChecked } from "./internal/eventDecode.js";
import { encodeEventChecked, guardEncode } from "./internal/eventEncode.js";
import type { EventShapeError } from "./Payload.js";
import { payloadBytesMax } from "./Record.js";
import type { ValueDecodeError, ValueEncodeError } from "./Value.js";

type Event = CoreEvent.Event;

/** An event ready to be framed as a record: its pair and its payload bytes. */
export interface EncodedEvent {
  readonly type: number;
  readonly schema: number;
  readonly payload: Uint8Array;
}

/** The largest payload an event may encode to: a record's payload limit. */
export const eventPayloadBytesMax = payloadBytesMax;

/**
 * Payload bytes that are not exactly one canonical value. `path` says which
 * payload: "" for the record's own, `events[1].payload` inside a mutation
 * (where `type` and `schema` are the inner event's pair); the value error's
 * offset is relative to that payload.
 */
export interface EventPayloadInvalid {
  readonly _tag: "EventPayloadInvalid";
  readonly type: number;
  readonly schema: number;
  readonly path: string;
  readonly error: ValueDecodeError;
}

/**
 * An event whose payload value the value encoder refuses (a non-finite
 * number, an int64 overflow, a lone surrogate, nesting beyond 64 in `args`
 * or `result`). `path` says which payload, as in `EventPayloadInvalid`; the
 * value error's own path runs from that payload's root.
 */
export interface EventPayloadUnencodable {
  readonly _tag: "EventPayloadUnencodable";
  readonly type: number;
  readonly schema: number;
  readonly path: string;
  readonly error: ValueEncodeError;
}

/** An event whose payload would exceed `eventPayloadBytesMax`: no record could hold it. */
export interface EventPayloadTooLarge {
  readonly _tag: "EventPayloadTooLarge";
  readonly type: number;
  readonly schema: number;
  readonly path: string;
  readonly bytes: number;
  readonly bytesMax: number;
}

/**
 * Why payload bytes are not the event their pair declares: `UnknownEvent`,
 * `SchemaMismatch`, `BeyondSafeInteger` (see `Payload.ts`),
 * `EventPayloadInvalid` (not one canonical value), or `Defect` (a bug).
 */
export type EventDecodeError = EventShapeError | EventPayloadInvalid;

/**
 * Why an event cannot be written: everything the decoder would refuse
 * (`SchemaMismatch`, `BeyondSafeInteger`; `UnknownEvent` for a tag no pair
 * has), a payload value the value encoder refuses, a payload too large for
 * a record, or `Defect` (a bug, or an event that breaks its TypeScript type).
 */
export type EventEncodeError = EventShapeError | EventPayloadUnencodable | EventPayloadTooLarge;

// ---------------------------------------------------------------------------
// Decoding (internal/eventDecode.ts holds both paths)

/**
 * Decodes the payload of a record of pair (type, schema) into its typed
 * event. The payload must be exactly one canonical value (FORMAT.md) that
 * matches the pair's declaration (EVENTS.md); a mutation's inner payloads
 * are decoded and checked the same way.
 *
 * Returns `UnknownEvent` for an undeclared pair (checked first, without
 * reading the bytes), `EventPayloadInvalid` for bytes that are not one
 * canonical value, `SchemaMismatch` or `BeyondSafeInteger` for a value that
 * is not the declared event. Never throws, for any input.
 *
 * @example
 *   const record = decodeRecord(bytes, 0); // a Record of pair (1,1)
 *   decodeEvent(1, 1, record.record.payload) // Right({ _tag: "JobInserted", jobId: 1, ... })
 */
export const decodeEvent = (
  type: number,
  schema: number,
  payload: Uint8Array,
): E.Either<EventDecodeError, Event> => {
  try {
    return decodeEventChecked(type, schema, payload);
  } catch (cause) {
    return E.left({ _tag: "Defect", type, schema, message: describeDefect(cause) });
  }
};

// ---------------------------------------------------------------------------
// Encoding (internal/eventEncode.ts holds both paths)

/**
 * Encodes an event into its (type, schema) pair and canonical payload bytes,
 * ready for `encodeRecord`. A mutation's events are encoded first and
 * carried as bytes.
 *
 * Refuses, without throwing, everything `decodeEvent` would refuse (a
 * 300-byte name, priority 12, unsorted `active_job_ids`, an empty or nested
 * mutation, ...) with the same errors, plus payload values the value
 * encoder refuses and payloads beyond `eventPayloadBytesMax`.
 *
 * @example
 *   encodeEvent(jobAvailable({ jobId: 7, at: 0 }))
 *   // Right({ type: 2, schema: 1, payload: 08 00000002 ... })
 */
export const encodeEvent = (event: Event): E.Either<EventEncodeError, EncodedEvent> =>
  guardEncode(event, encodeEventChecked);
