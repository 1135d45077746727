/**
 * One-line explanations of the codec's and the fold's error values, for the
 * store errors that wrap them: the reason's most specific name (the codec's
 * `CorruptReason`, the fold's reason tag) and what it means.
 */
import type { HistoryError } from "@tay/core";
import type { CorruptReason, EventDecodeError, FixedLayoutError } from "./codec.js";

/** What each corrupt-record reason means. */
export const corruptExplanation: { readonly [Reason in CorruptReason]: string } = {
  BadMagic: "no record starts here (bad magic)",
  UnsupportedVersion: "the record's format version is not 1",
  ReservedType: "the record type is reserved (0 or 255)",
  ZeroSchema: "the record's payload schema is 0",
  NonzeroFlags: "the record's flags are not zero",
  PayloadTooLarge: "the record's payload length exceeds 16 MiB",
  HeaderChecksum: "the record header's CRC does not match",
  RecordChecksum: "the record's CRC does not match its header and payload",
};

/** Why a fixed-layout file (`kind`: marker, pointer, manifest, header, footer) does not decode. */
export const fixedLayout = (kind: string, error: FixedLayoutError): string => {
  switch (error._tag) {
    case "WrongSize":
      return `${kind} has ${error.actual} bytes, not ${error.expected}`;
    case "BadMagic":
      return `${kind} magic is ${error.found}, not ${error.expected}`;
    case "UnsupportedVersion":
      return `${kind} version ${error.found} is not supported`;
    case "NonzeroReserved":
      return `${kind} reserved bytes are not zero`;
    case "ChecksumMismatch":
      return `${kind} CRC does not match (stored ${error.expected}, computed ${error.actual})`;
    case "BeyondSafeInteger":
      return `${kind} field ${error.field} exceeds 2^53-1 (valid bytes this implementation cannot represent)`;
    case "InvalidField":
      return `${kind} field ${error.field} is invalid (${error.reason})`;
    default: {
      const unknown: never = error;
      return String(unknown);
    }
  }
};

/** A reason's name and its explanation. */
export interface Explained {
  readonly reason: string;
  readonly explanation: string;
}

const where = (path: string) => (path === "" ? "" : ` at ${path}`);

/** Why a physically valid record's event does not decode. */
export const eventDecode = (error: EventDecodeError): Explained => {
  switch (error._tag) {
    case "UnknownEvent":
      return {
        reason: "UnknownEvent",
        explanation: `pair (${error.type},${error.schema})${where(error.path)} is not an event this version knows; nothing was changed`,
      };
    case "SchemaMismatch":
      return {
        reason: "SchemaMismatch",
        explanation: `the payload of (${error.type},${error.schema}) does not match its declaration${where(error.path)}: ${error.reason} (found ${error.found})`,
      };
    case "BeyondSafeInteger":
      return {
        reason: "BeyondSafeInteger",
        explanation: `${error.found}${where(error.path)} exceeds 2^53-1 (valid bytes this implementation cannot represent)`,
      };
    case "EventPayloadInvalid":
      return {
        reason: "EventPayloadInvalid",
        explanation: `the payload of (${error.type},${error.schema})${where(error.path)} is not one canonical value: ${error.error._tag}`,
      };
    case "Defect":
      return {
        reason: "Defect",
        explanation: `the event decoder failed unexpectedly: ${error.message}`,
      };
    default: {
      const unknown: never = error;
      return { reason: "UndecodableEvent", explanation: String(unknown) };
    }
  }
};

/** Whether a projection's refusal is core's `HistoryError` (the engine's fold). */
export const isHistoryError = (reason: unknown): reason is HistoryError.HistoryError =>
  typeof reason === "object" &&
  reason !== null &&
  "_tag" in reason &&
  reason._tag === "HistoryError" &&
  "reason" in reason;

/** Why the fold refuses a history: its reason's tag, and the record and fields concerned. */
export const history = (error: HistoryError.HistoryError): Explained => {
  const { _tag, ...details } = error.reason;
  const record = error.event === null ? "the end of the generation" : error.event._tag;
  const member = error.memberIndex === null ? "" : ` (mutation member ${error.memberIndex})`;
  return {
    reason: _tag,
    explanation: `the fold refuses ${record}${member}: ${JSON.stringify(details)}`,
  };
};
