/**
 * Every failure the CLI can meet, as one line:
 *
 *   tay: <ReasonName> <path>[ at offset N][ sequence N]: <explanation>
 *
 * The reason name is the most specific name the spec or the code gives:
 * the codec's `CorruptReason` for a corrupt record (`RecordChecksum`), the
 * fold's reason for a refused history (`RevisionConflict`), the decider's
 * rejection for a refused command (`RevisionMismatch`), the errno code for
 * a failed syscall (`ENOSPC`). The mapping is a `switch` over every tag with
 * a `never` default, so a new error kind fails the typecheck until it is
 * described here.
 */
import type { HistoryError, Rejection } from "@tay/core";
import type { CorruptReason, EventDecodeError, FixedLayoutError } from "../internal/codec.js";
import type { DiskError } from "../Disk.js";
import type { EngineError, OpenError } from "../Engine.js";
import type { CopyPrefixError, PrefixFault } from "../CopyPrefix.js";
import type { CompactionInterrupted, InitError, RecoveryError, StoreError } from "../StoreError.js";
import * as Layout from "../Layout.js";
import type { CliError } from "./CliError.js";

/** Everything a command can fail with. */
export type Failure =
  | CliError
  | InitError
  | RecoveryError
  | StoreError
  | OpenError
  | EngineError
  | CopyPrefixError;

/** Exit status: 1 for a refusal or an invalid store, 2 for a usage error. */
export type FailureExit = 1 | 2;

/** A failure, taken apart for the one-line form and for `--json`. */
export interface Described {
  /** The reason's name (`RecordChecksum`, `Locked`, `RevisionMismatch`, ...). */
  readonly reason: string;
  /** The file or directory it concerns; undefined only for usage errors without one. */
  readonly path: string | undefined;
  readonly offset: number | undefined;
  readonly sequence: number | undefined;
  /** One line, no trailing period. */
  readonly explanation: string;
  /** The fault is one `tay copy-prefix` repairs (the line says so). */
  readonly repairable: boolean;
  readonly exit: FailureExit;
}

const isoTime = (ms: number): string => {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms} ms` : date.toISOString();
};

/** Keeps an explanation on one line, whatever a detail string carried. */
const oneLine = (text: string): string => text.replace(/\s*[\r\n]+\s*/g, " ").trim();

const at = (
  reason: string,
  path: string | undefined,
  explanation: string,
  position: { readonly offset?: number; readonly sequence?: number } = {},
  exit: FailureExit = 1,
): Described => ({
  reason,
  path,
  offset: position.offset,
  sequence: position.sequence,
  explanation: oneLine(explanation),
  repairable: false,
  exit,
});

/** The failures `copy-prefix` repairs when they concern a segment file. */
const segmentFaults: ReadonlySet<Failure["_tag"]> = new Set([
  "CorruptRecord",
  "IncompleteTail",
  "UndecodableEvent",
  "HistoryRejected",
  "BeyondSafeInteger",
  "Mismatch",
  "InvalidSegment",
  "MalformedFile",
]);

const isSegmentPath = (path: string | undefined): boolean =>
  path?.endsWith(Layout.segmentSuffix) === true;

const repairHint = "; tay copy-prefix copies the valid prefix to a new store";

const corruptExplanation: { readonly [Reason in CorruptReason]: string } = {
  BadMagic: "no record starts here (bad magic)",
  UnsupportedVersion: "the record's format version is not 1",
  ReservedType: "the record type is reserved (0 or 255)",
  ZeroSchema: "the record's payload schema is 0",
  NonzeroFlags: "the record's flags are not zero",
  PayloadTooLarge: "the record's payload length exceeds 16 MiB",
  HeaderChecksum: "the record header's CRC does not match",
  RecordChecksum: "the record's CRC does not match its header and payload",
};

const fixedLayout = (kind: string, error: FixedLayoutError): string => {
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

const eventDecode = (error: EventDecodeError): { reason: string; explanation: string } => {
  const where = (path: string) => (path === "" ? "" : ` at ${path}`);
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

const isHistoryError = (reason: unknown): reason is HistoryError.HistoryError =>
  typeof reason === "object" &&
  reason !== null &&
  "_tag" in reason &&
  reason._tag === "HistoryError" &&
  "reason" in reason;

const history = (error: HistoryError.HistoryError): { reason: string; explanation: string } => {
  const { _tag, ...details } = error.reason;
  const record = error.event === null ? "the end of the generation" : error.event._tag;
  const member = error.memberIndex === null ? "" : ` (mutation member ${error.memberIndex})`;
  return {
    reason: _tag,
    explanation: `the fold refuses ${record}${member}: ${JSON.stringify(details)}`,
  };
};

const rejection = (rejected: Rejection.Rejection): string => {
  switch (rejected._tag) {
    case "JobNotFound":
      return `no job ${rejected.jobId} (never inserted, or compacted away)`;
    case "InvalidTransition":
      return `job ${rejected.jobId} is ${rejected.from}: ${rejected.command} is not allowed`;
    case "ScheduleNotFound":
      return `no schedule ${JSON.stringify(rejected.scheduleId)}`;
    case "ScheduleAlreadyCancelled":
      return `schedule ${JSON.stringify(rejected.scheduleId)} is already cancelled`;
    case "RevisionMismatch":
      return `schedule ${JSON.stringify(rejected.scheduleId)} is at revision ${rejected.actual}, not ${rejected.expected}`;
    case "InvalidDefinition":
      return `schedule ${JSON.stringify(rejected.scheduleId)}: ${rejected.detail}`;
    case "InvalidField":
      return `${rejected.field}: ${rejected.detail}`;
    case "TooLarge":
      return `the record would be ${rejected.bytes} bytes, over ${rejected.limit}`;
    case "IdsExhausted":
      return `job ids would pass 2^53-1 (last ${rejected.lastJobId}, ${rejected.requested} requested)`;
    default: {
      const unknown: never = rejected;
      return String(unknown);
    }
  }
};

const disk = (error: DiskError): Described =>
  at(
    error.code === "Other" ? "DiskError" : error.code,
    error.path,
    `${error.operation} failed: ${error.detail}`,
  );

const writerCause = (cause: DiskError | CompactionInterrupted): string =>
  cause._tag === "DiskError"
    ? `${cause.operation} ${cause.path} failed with ${cause.code} (${cause.detail})`
    : `a compaction failed while switching CURRENT (${cause.cause.code}: ${cause.cause.detail})`;

/**
 * Takes a failure apart. `context` is the directory the command was given:
 * the path of failures that carry none of their own.
 */
export const describe = (failure: Failure, context: string | undefined): Described => {
  const described = describeFailure(failure, context);
  return segmentFaults.has(failure._tag) && isSegmentPath(described.path)
    ? { ...described, repairable: true }
    : described;
};

const describeFailure = (failure: Failure, context: string | undefined): Described => {
  switch (failure._tag) {
    case "UsageError":
      return at(
        "UsageError",
        undefined,
        failure.command === undefined
          ? `${failure.detail} (see tay help)`
          : `${failure.detail} (see tay help ${failure.command})`,
        {},
        2,
      );
    case "JobNotFound":
      return at(
        "JobNotFound",
        failure.path,
        `no job ${failure.jobId} in the current generation (never inserted, or compacted away)`,
      );
    case "NotEmpty":
      return at(
        "NotEmpty",
        failure.path,
        `the directory is not empty (found ${failure.entries.join(", ")}); a new store needs a missing or empty directory`,
      );
    case "UnsupportedStoreV1":
      return at(
        "UnsupportedStoreV1",
        failure.path,
        `a Store-v1 root (found ${failure.found}): open and migrate it with Tay 1.4.x first; nothing was changed`,
      );
    case "IncompleteInitialization":
      return at(
        "IncompleteInitialization",
        failure.path,
        "STORE-V2 without CURRENT: an initialization did not finish, so no store was ever published here",
      );
    case "StoreNotFound":
      return at(
        "StoreNotFound",
        failure.path,
        failure.reason === "MissingDirectory"
          ? "no such directory"
          : failure.reason === "NotADirectory"
            ? "not a directory"
            : "no STORE-V2 marker: not a Tay store (tay init creates one)",
      );
    case "Locked":
      return at(
        "Locked",
        failure.path,
        failure.holder === null
          ? "another process holds the store's lock"
          : `held by pid ${failure.holder.pid} on ${failure.holder.host} since ${isoTime(failure.holder.acquiredAt)} (session ${failure.holder.session})`,
      );
    case "LockSessionLost":
      return at(
        "LockSessionLost",
        failure.path,
        `LOCK was replaced or rewritten while opening (session ${failure.session}); nothing was written, retry`,
      );
    case "MalformedFile":
      return at(failure.reason._tag, failure.path, fixedLayout(failure.kind, failure.reason), {
        offset: failure.offset,
      });
    case "Mismatch":
      return at(
        "Mismatch",
        failure.path,
        `${failure.field}: expected ${failure.expected}, found ${failure.found}`,
        { offset: failure.offset },
      );
    case "UnexpectedEntry":
      return at(
        "UnexpectedEntry",
        failure.path,
        `unexpected entry ${JSON.stringify(failure.name)}: the layout allows none here`,
      );
    case "MissingEntry":
      return at("MissingEntry", failure.path, "required by the layout but missing");
    case "SegmentGap":
      return at(
        "SegmentGap",
        failure.path,
        `segment IDs must run 1, 2, 3, ...: expected ${failure.expected}, found ${failure.found}`,
      );
    case "InvalidSegment":
      return at(
        failure.reason,
        failure.path,
        failure.reason === "MissingFooter"
          ? "a segment other than the highest has no footer"
          : failure.reason === "EmptySealed"
            ? "a sealed segment holds no record"
            : failure.reason === "RecordsOverrunFooter"
              ? "the records do not end exactly at the footer"
              : "the file exceeds the format's 1 GiB bound",
        { offset: failure.offset },
      );
    case "CorruptRecord":
      return at(
        failure.reason,
        failure.path,
        `${corruptExplanation[failure.reason]}; nothing was changed`,
        { offset: failure.offset, sequence: failure.sequence },
      );
    case "BeyondSafeInteger":
      return at(
        "BeyondSafeInteger",
        failure.path,
        `${failure.field} exceeds 2^53-1 (valid bytes this implementation cannot represent)`,
        { offset: failure.offset },
      );
    case "IncompleteTail":
      return at(
        "IncompleteTail",
        failure.path,
        `the segment ends inside a ${failure.part.toLowerCase()} (a torn tail); nothing was changed`,
        { offset: failure.offset, sequence: failure.sequence },
      );
    case "UndecodableEvent": {
      const decoded = eventDecode(failure.reason);
      return at(decoded.reason, failure.path, decoded.explanation, {
        offset: failure.offset,
        sequence: failure.sequence,
      });
    }
    case "HistoryRejected": {
      const position = { offset: failure.offset, sequence: failure.sequence };
      if (!isHistoryError(failure.reason)) {
        return at("HistoryRejected", failure.path, "the projection refused a record", position);
      }
      const refused = history(failure.reason);
      return at(refused.reason, failure.path, refused.explanation, position);
    }
    case "MissingBase":
      return at(
        "MissingBase",
        failure.path,
        `the generation holds ${failure.records} records, fewer than its manifest's base of ${failure.baseRecordCount}`,
      );
    case "BudgetExceeded":
      return at(
        "BudgetExceeded",
        context,
        `the recovery budget ${failure.budget} (${failure.limit}) was exceeded: an operational limit, not corruption`,
      );
    case "ActiveSegmentChanged":
      return at(
        "ActiveSegmentChanged",
        failure.path,
        `the active segment changed between validation and activation (${failure.reason}); another writer?`,
      );
    case "Compacted":
      return at(
        "Compacted",
        context,
        `sequence ${failure.sequence} was compacted away; the first available is ${failure.firstAvailable}`,
      );
    case "UnencodableEvent":
      return at(
        "UnencodableEvent",
        context,
        `event ${failure.index} of the batch cannot be encoded: ${describeUnknown(failure.reason)}`,
      );
    case "PendingFull":
      return at(
        "PendingFull",
        context,
        `${failure.pendingBytes} bytes are pending, the limit is ${failure.limit}`,
      );
    case "WriterFailed":
      return at(
        "WriterFailed",
        failure.cause._tag === "DiskError" ? failure.cause.path : context,
        `the writer stopped: ${writerCause(failure.cause)}; reopening decides what is durable`,
      );
    case "StoreClosed":
      return at("StoreClosed", failure.path, "the store was closed");
    case "CompactionConflict":
      return at(
        "CompactionConflict",
        context,
        `records were appended since sequence ${failure.expectedLastSequence} (last is ${failure.lastSequence})`,
      );
    case "InvalidOption":
      return at(
        "InvalidOption",
        context,
        `option ${failure.option} is out of range: ${failure.value}`,
        {},
        2,
      );
    case "DiskError":
      return disk(failure);
    case "Rejected":
      return at(failure.rejection._tag, context, rejection(failure.rejection));
    case "PrefixUnavailable":
      return prefixUnavailable(failure.fault, failure.reason, failure, context);
    case "CopyVerificationFailed":
      return at(
        "CopyVerificationFailed",
        failure.path,
        `${failure.detail}; the copy is not to be trusted`,
      );
    default: {
      const unknown: never = failure;
      return at("Defect", context, `unexpected failure ${describeUnknown(unknown)}`);
    }
  }
};

const prefixUnavailable = (
  fault: PrefixFault,
  reason: "OutsideSegments" | "InsideBase",
  counts: { readonly baseRecords: number; readonly baseRecordCount: number },
  context: string | undefined,
): Described => {
  const inner = describe(fault, context);
  const why =
    reason === "OutsideSegments"
      ? "copy-prefix repairs faults inside segment files only"
      : `the fault lies inside the canonical base (${counts.baseRecords} of ${counts.baseRecordCount} base records are valid), so no prefix folds to a state`;
  return { ...inner, repairable: false, explanation: `${inner.explanation}; ${why}` };
};

/** Best-effort text for a value of unknown shape (a tag when it has one). */
export const describeUnknown = (value: unknown): string => {
  if (typeof value === "object" && value !== null && "_tag" in value) return String(value._tag);
  if (value instanceof Error) return value.message;
  return String(value);
};

/** `<Reason> <path>[ at offset N][ sequence N]: <explanation>`: an error's message. */
export const describedLine = (described: Described): string => {
  const path = described.path === undefined ? "" : ` ${described.path}`;
  const offset = described.offset === undefined ? "" : ` at offset ${described.offset}`;
  const sequence = described.sequence === undefined ? "" : ` sequence ${described.sequence}`;
  const hint = described.repairable ? repairHint : "";
  return `${described.reason}${path}${offset}${sequence}: ${described.explanation}${hint}`;
};

/** The one-line form the CLI prints: `tay: ` and the described line. */
export const formatLine = (described: Described): string => `tay: ${describedLine(described)}`;

/** The failure as its one line. */
export const errorLine = (failure: Failure, context: string | undefined): string =>
  formatLine(describe(failure, context));

/** The failure as a JSON object (for `--json` output of `verify` and `copy-prefix`). */
export const errorJson = (described: Described) => ({
  reason: described.reason,
  path: described.path ?? null,
  offset: described.offset ?? null,
  sequence: described.sequence ?? null,
  explanation: described.explanation,
});
