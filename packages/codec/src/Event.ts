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
import { decodeEventByValue, decodeEventChecked } from "./internal/eventDecode.js";
import { decodeEventDirect } from "./internal/directEvent.js";
import { encodeEventChecked, guardEncode } from "./internal/eventEncode.js";
import type { EncodedEvent, EventDecodeError, EventEncodeError } from "./internal/eventTypes.js";
import { withDirectPayload } from "./internal/directEncode.js";
import {
  appendRecord,
  payloadBytesMax,
  type RecordBuffer,
  type RecordEncodeError,
} from "./Record.js";

export type {
  EncodedEvent,
  EventDecodeError,
  EventEncodeError,
  EventPayloadInvalid,
  EventPayloadTooLarge,
  EventPayloadUnencodable,
} from "./internal/eventTypes.js";

type Event = CoreEvent.Event;

/** The largest payload an event may encode to: a record's payload limit. */
export const eventPayloadBytesMax = payloadBytesMax;

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

/**
 * `decodeEvent` of the payload `bytes[start, end)`, read in place: what a
 * scan over a segment buffer calls with a record's payload bounds
 * (`scanRecordAt`), so that a payload the direct decoders accept costs no
 * view of its own. The same verdict as `decodeEvent(type, schema,
 * bytes.subarray(start, end))`; never throws, for any input.
 *
 * `start..end` must lie within `bytes` (bounds the caller computed):
 * anything else is a programmer error and throws a `RangeError`.
 */
export const decodeEventAt = (
  type: number,
  schema: number,
  bytes: Uint8Array,
  start: number,
  end: number,
): E.Either<EventDecodeError, Event> => {
  if (!(Number.isInteger(start) && Number.isInteger(end) && 0 <= start && start <= end)) {
    throw new RangeError(`payload bounds ${start}..${end} are not a range`);
  }
  if (end > bytes.length) {
    throw new RangeError(`payload bounds ${start}..${end} are outside 0..${bytes.length}`);
  }
  try {
    const direct = decodeEventDirect(type, schema, bytes, start, end);
    return direct === undefined
      ? decodeEventByValue(type, schema, bytes.subarray(start, end))
      : E.right(direct);
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

/**
 * Frames `event` as a record of `sequence` at the end of `buffer`
 * (`Record.appendRecord`): where it starts, or why it does not encode
 * (`encodeEvent`'s refusal, or the sequence `checkRecord` refuses), and
 * then nothing is appended. The same bytes as `encodeEvent` then
 * `encodeRecord`; an event the direct encoder takes is framed from its
 * buffer, without the payload's own copy. Never throws, for any input.
 */
export const appendEventRecord = (
  buffer: RecordBuffer,
  event: Event,
  sequence: number,
): E.Either<EventEncodeError | RecordEncodeError, number> => {
  const direct = withDirectPayload(event, (pair, bytes, length) =>
    appendRecord(buffer, {
      type: pair.type,
      schema: pair.schema,
      sequence,
      payload: bytes.subarray(0, length),
    }),
  );
  // A refused sequence is given by the general path below, as any refusal.
  if (direct !== undefined && E.isRight(direct)) return direct;
  const encoded = encodeEvent(event);
  if (E.isLeft(encoded)) return encoded;
  return appendRecord(buffer, { ...encoded.right, sequence });
};
