/**
 * One line for a refusal of the encoders, naming what an operator needs to
 * find the value: the event's (type, schema) pair, which payload (`events[1]`
 * inside a mutation), the field path inside it and the reason. The errors
 * themselves stay data (their `_tag` is what code matches on); this is what
 * a message shows.
 */
import type { RecordEncodeError } from "./Record.js";
import type { EventEncodeError } from "./internal/eventTypes.js";
import type { ValueEncodeError, ValuePath } from "./internal/valueErrors.js";

/** Path segments shown at most: a value 64 levels deep would print 64 of them. */
const pathShownMax = 8;

/**
 * A value path as `jobs[0].args[0][0]`; past `pathShownMax` segments, its
 * first ones, an ellipsis, its last two and its length.
 */
export const explainPath = (path: ValuePath): string => {
  const shown = (segments: ValuePath) =>
    segments
      .map((segment) => (typeof segment === "number" ? `[${segment}]` : `.${segment}`))
      .join("");
  const text =
    path.length <= pathShownMax
      ? shown(path)
      : `${shown(path.slice(0, pathShownMax - 2))}…${shown(path.slice(-2))} (${path.length} levels)`;
  return text.startsWith(".") ? text.slice(1) : text;
};

const explainValueError = (error: ValueEncodeError): string => {
  const at = error._tag === "Defect" ? "" : ` at ${explainPath(error.path) || "the root"}`;
  switch (error._tag) {
    case "DepthExceeded":
      return `nested deeper than ${error.depthMax} levels${at}`;
    case "NonFiniteNumber":
      return `a non-finite number (${error.found})${at}`;
    case "IntegerOutOfRange":
      return `an integer outside int64 (${error.found})${at}`;
    case "IllFormedString":
      return `a lone surrogate at UTF-16 index ${error.index} of a ${error.inKey ? "map key" : "string"}${at}`;
    case "LengthExceeded":
      return `a length of ${error.length}, more than ${error.lengthMax}${at}`;
    case "UnsupportedValue":
      return `a ${error.found}, which no value encodes${at}`;
    case "Defect":
      return `a defect of the encoder: ${error.message}`;
  }
};

/** Why an event (or its record) cannot be encoded, in one line. */
export const explainEncodeError = (error: EventEncodeError | RecordEncodeError): string => {
  if (error._tag === "InvalidRecordField") {
    return `record ${error.field} ${error.found} is outside ${error.allowed}`;
  }
  const payload = "path" in error && error.path !== "" ? ` ${error.path}` : "";
  const pair = `event (${error.type},${error.schema})${payload}`;
  switch (error._tag) {
    case "EventPayloadUnencodable":
      return `${pair}: ${explainValueError(error.error)}`;
    case "EventPayloadTooLarge":
      return `${pair}: a payload of ${error.bytes} bytes, more than ${error.bytesMax}`;
    case "SchemaMismatch":
      return `${pair}: ${error.reason} (found ${error.found})`;
    case "BeyondSafeInteger":
      return `${pair}: an integer beyond 2^53-1 (${error.found})`;
    case "UnknownEvent":
      return `${pair}: no such event`;
    case "Defect":
      return `${pair}: a defect of the encoder: ${error.message}`;
  }
};
