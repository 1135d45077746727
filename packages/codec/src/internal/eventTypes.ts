/**
 * The types of the event layer (`Event.ts` re-exports each, and users see
 * them there): an encoded event and the errors of both directions. They live
 * here, below `Event.ts` and the encoders and decoders it combines
 * (`eventEncode.ts`, `eventDecode.ts`, `directEncode.ts`), so that every
 * import points one way.
 */
import type { EventShapeError } from "../Payload.js";
import type { ValueDecodeError, ValueEncodeError } from "./valueErrors.js";

/** An event ready to be framed as a record: its pair and its payload bytes. */
export interface EncodedEvent {
  readonly type: number;
  readonly schema: number;
  readonly payload: Uint8Array;
}

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
