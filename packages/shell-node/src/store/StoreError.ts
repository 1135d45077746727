/**
 * Every way the store refuses: one tagged error per failure kind, each
 * naming the path (and, for bytes, the offset and sequence) it concerns,
 * and each describing itself: its `message` is its whole one line
 * (`<Reason> <path>[ at offset N][ sequence N]: <explanation>`, see
 * `Described`).
 *
 * Three families, kept apart on purpose:
 * - refusals of what is on disk (corruption, foreign or missing files, an
 *   incomplete tail): the bytes are wrong, nothing was changed;
 * - operational limits (`BudgetExceeded`, `PendingFull`, `Locked`): the
 *   bytes may be fine, a different setting or moment may succeed;
 * - writer states (`WriterFailed`, `StoreClosed`): this handle can no longer
 *   write; reopening decides what is durable.
 * `DiskError` (from `Disk`) passes through unchanged where a syscall failed.
 */
import * as Data from "effect/Data";
import * as Described from "../disk/Described.js";
import type { DiskError } from "../disk/Disk.js";
import type { Locked, LockSessionLost } from "../disk/Lock.js";
import type {
  AppendConflict,
  Compacted,
  CompactionConflict,
  PendingFull,
  StoreClosed,
  UnencodableEvent,
} from "../log/LogError.js";
import type { CorruptReason, EventDecodeError, FixedLayoutError } from "./internal/codec.js";
import {
  corruptExplanation,
  eventDecode,
  fixedLayout,
  history,
  isHistoryError,
} from "./internal/explain.js";
import * as Layout from "./Layout.js";
import type { BudgetName } from "./StoreOptions.js";

export { Locked, LockSessionLost } from "../disk/Lock.js";
export {
  AppendConflict,
  Compacted,
  CompactionConflict,
  PendingFull,
  StoreClosed,
  UnencodableEvent,
} from "../log/LogError.js";

/** What `tay copy-prefix` (and `CopyPrefix.copyPrefix`) does: a repairable fault's advice. */
export const repairAdvice = "tay copy-prefix copies the valid prefix to a new store";

/** A fault inside a segment file is one `copy-prefix` repairs: its line says so. */
const inSegment = (description: Described.Description): Described.Description =>
  description.path?.endsWith(Layout.segmentSuffix) === true
    ? Described.advise(description, repairAdvice)
    : description;

/** Whether `copy-prefix` repairs this fault: one of the segment faults, inside a segment file. */
export const isRepairable = (error: { readonly _tag: string; readonly path?: string }): boolean =>
  segmentFaults.has(error._tag) && error.path?.endsWith(Layout.segmentSuffix) === true;

const segmentFaults: ReadonlySet<string> = new Set([
  "CorruptRecord",
  "IncompleteTail",
  "UndecodableEvent",
  "HistoryRejected",
  "BeyondSafeInteger",
  "Mismatch",
  "InvalidSegment",
  "MalformedFile",
]);

/** `init` found entries other than LOCK in the directory. */
export class NotEmpty extends Data.TaggedError("NotEmpty")<{
  readonly path: string;
  /** Up to the first 16 entry names found. */
  readonly entries: ReadonlyArray<string>;
}> {
  get description(): Described.Description {
    return Described.describe(
      "NotEmpty",
      this.path,
      `the directory is not empty (found ${this.entries.join(", ")}); a new store needs a missing or empty directory`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A Store-v1 root (`DATA_DIR/STORE` or `DATA_DIR/segments`): migrate it with Tay 1.4.x first. */
export class UnsupportedStoreV1 extends Data.TaggedError("UnsupportedStoreV1")<{
  readonly path: string;
  readonly found: "STORE" | "segments";
}> {
  get description(): Described.Description {
    return Described.describe(
      "UnsupportedStoreV1",
      this.path,
      `a Store-v1 root (found ${this.found}): open and migrate it with Tay 1.4.x first; nothing was changed`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** STORE-V2 without CURRENT: an initialization that did not finish. */
export class IncompleteInitialization extends Data.TaggedError("IncompleteInitialization")<{
  readonly path: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "IncompleteInitialization",
      this.path,
      "STORE-V2 without CURRENT: an initialization did not finish, so no store was ever published here",
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

const notFound = {
  MissingDirectory: "no such directory",
  NotADirectory: "not a directory",
  MissingMarker: "no STORE-V2 marker: not a Tay store (tay init creates one)",
} as const;

/** There is no store at `path`. */
export class StoreNotFound extends Data.TaggedError("StoreNotFound")<{
  readonly path: string;
  readonly reason: "MissingDirectory" | "NotADirectory" | "MissingMarker";
}> {
  get description(): Described.Description {
    return Described.describe("StoreNotFound", this.path, notFound[this.reason]);
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Which fixed-layout file a `MalformedFile` is. */
export type FileKind = "Marker" | "Current" | "Manifest" | "SegmentHeader" | "SegmentFooter";

/** A marker, pointer, manifest, segment header or footer that does not decode. */
export class MalformedFile extends Data.TaggedError("MalformedFile")<{
  readonly path: string;
  readonly kind: FileKind;
  readonly offset: number;
  /** The codec's reason (a wrong size is its `WrongSize`). */
  readonly reason: FixedLayoutError;
}> {
  get description(): Described.Description {
    return inSegment(
      Described.describe(this.reason._tag, this.path, fixedLayout(this.kind, this.reason), {
        offset: this.offset,
      }),
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Which identity or coordinate a `Mismatch` concerns. */
export type MismatchField =
  | "StoreId"
  | "Epoch"
  | "SegmentId"
  | "FirstSequence"
  | "LastSequence"
  | "RecordCount"
  | "SegmentChecksum"
  | "Sequence"
  | "StateImage";

/**
 * Two places that must agree do not: a STORE_ID foreign to the marker, a
 * manifest epoch other than its directory's or CURRENT's, a footer that does
 * not match its header or its records, a broken sequence chain.
 */
export class Mismatch extends Data.TaggedError("Mismatch")<{
  readonly path: string;
  readonly offset: number;
  readonly field: MismatchField;
  readonly expected: string;
  readonly found: string;
}> {
  get description(): Described.Description {
    return inSegment(
      Described.describe(
        "Mismatch",
        this.path,
        `${this.field}: expected ${this.expected}, found ${this.found}`,
        { offset: this.offset },
      ),
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** An entry where the layout allows none (e.g. a non-segment name in `segments/`). */
export class UnexpectedEntry extends Data.TaggedError("UnexpectedEntry")<{
  readonly path: string;
  readonly name: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "UnexpectedEntry",
      this.path,
      `unexpected entry ${JSON.stringify(this.name)}: the layout allows none here`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A required file or directory is missing (a manifest, `segments/`, the current epoch). */
export class MissingEntry extends Data.TaggedError("MissingEntry")<{
  readonly path: string;
}> {
  get description(): Described.Description {
    return Described.describe("MissingEntry", this.path, "required by the layout but missing");
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Segment IDs do not run 1, 2, 3, ... */
export class SegmentGap extends Data.TaggedError("SegmentGap")<{
  readonly path: string;
  readonly expected: number;
  readonly found: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "SegmentGap",
      this.path,
      `segment IDs must run 1, 2, 3, ...: expected ${this.expected}, found ${this.found}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Why a segment's shape is invalid. */
export type SegmentShapeReason =
  /** A segment other than the highest has no footer. */
  | "MissingFooter"
  /** A sealed segment holds no record. */
  | "EmptySealed"
  /** A sealed segment's records do not end exactly at its footer. */
  | "RecordsOverrunFooter"
  /** The file is larger than the format's 1 GiB bound. */
  | "TooLarge";

const shapeExplanation: { readonly [Reason in SegmentShapeReason]: string } = {
  MissingFooter: "a segment other than the highest has no footer",
  EmptySealed: "a sealed segment holds no record",
  RecordsOverrunFooter: "the records do not end exactly at the footer",
  TooLarge: "the file exceeds the format's 1 GiB bound",
};

/** A segment whose shape breaks the format's rules (see `SegmentShapeReason`). */
export class InvalidSegment extends Data.TaggedError("InvalidSegment")<{
  readonly path: string;
  readonly offset: number;
  readonly reason: SegmentShapeReason;
}> {
  get description(): Described.Description {
    return inSegment(
      Described.describe(this.reason, this.path, shapeExplanation[this.reason], {
        offset: this.offset,
      }),
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A record whose bytes are wrong (`RecordChecksum`, `BadMagic`, ...). */
export class CorruptRecord extends Data.TaggedError("CorruptRecord")<{
  readonly path: string;
  readonly offset: number;
  /** The sequence expected at this offset. */
  readonly sequence: number;
  readonly reason: CorruptReason;
}> {
  get description(): Described.Description {
    return inSegment(
      Described.describe(
        this.reason,
        this.path,
        `${corruptExplanation[this.reason]}; nothing was changed`,
        { offset: this.offset, sequence: this.sequence },
      ),
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A u64 field beyond 2^53-1: physically valid, refused by this implementation. */
export class BeyondSafeInteger extends Data.TaggedError("BeyondSafeInteger")<{
  readonly path: string;
  readonly offset: number;
  readonly field: string;
}> {
  get description(): Described.Description {
    return inSegment(
      Described.describe(
        "BeyondSafeInteger",
        this.path,
        `${this.field} exceeds 2^53-1 (valid bytes this implementation cannot represent)`,
        { offset: this.offset },
      ),
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * The active segment ends inside a header, record or footer whose present
 * bytes all agree with what should be there: a torn tail. Open refuses it
 * (no automatic truncation); the file is left byte-for-byte unchanged.
 */
export class IncompleteTail extends Data.TaggedError("IncompleteTail")<{
  readonly path: string;
  readonly offset: number;
  /** The sequence the incomplete record would have had. */
  readonly sequence: number;
  readonly part: "Header" | "Record" | "Footer";
}> {
  get description(): Described.Description {
    return inSegment(
      Described.describe(
        "IncompleteTail",
        this.path,
        `the segment ends inside a ${this.part.toLowerCase()} (a torn tail); nothing was changed`,
        { offset: this.offset, sequence: this.sequence },
      ),
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A physically valid record whose event does not decode (e.g. `UnknownEvent`). */
export class UndecodableEvent extends Data.TaggedError("UndecodableEvent")<{
  readonly path: string;
  readonly offset: number;
  readonly sequence: number;
  readonly reason: EventDecodeError;
}> {
  get description(): Described.Description {
    const decoded = eventDecode(this.reason);
    return inSegment(
      Described.describe(decoded.reason, this.path, decoded.explanation, {
        offset: this.offset,
        sequence: this.sequence,
      }),
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * The projection refused an event: `reason` is its own error value (for
 * the engine's fold, core's `HistoryError`, whose reason names the rule).
 */
export class HistoryRejected<E = unknown> extends Data.TaggedError("HistoryRejected")<{
  readonly path: string;
  readonly offset: number;
  readonly sequence: number;
  readonly reason: unknown;
}> {
  declare readonly reason: E;
  get description(): Described.Description {
    const position = { offset: this.offset, sequence: this.sequence };
    if (!isHistoryError(this.reason)) {
      return inSegment(
        Described.describe(
          "HistoryRejected",
          this.path,
          `the projection refused a record: ${Described.describeUnknown(this.reason)}`,
          position,
        ),
      );
    }
    const refused = history(this.reason);
    return inSegment(Described.describe(refused.reason, this.path, refused.explanation, position));
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The generation holds fewer records than its manifest's base record count. */
export class MissingBase extends Data.TaggedError("MissingBase")<{
  readonly path: string;
  readonly baseRecordCount: number;
  readonly records: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "MissingBase",
      this.path,
      `the generation holds ${this.records} records, fewer than its manifest's base of ${this.baseRecordCount}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** An operational recovery budget was exceeded (not corruption: a larger budget opens the store). */
export class BudgetExceeded extends Data.TaggedError("BudgetExceeded")<{
  /** The store being opened or inspected. */
  readonly path: string;
  readonly budget: BudgetName;
  readonly limit: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "BudgetExceeded",
      this.path,
      `the recovery budget ${this.budget} (${this.limit}) was exceeded: an operational limit, not corruption`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Between validation and activation the active segment changed (another writer?). */
export class ActiveSegmentChanged extends Data.TaggedError("ActiveSegmentChanged")<{
  readonly path: string;
  readonly reason: "Size" | "LastRecord";
}> {
  get description(): Described.Description {
    return Described.describe(
      "ActiveSegmentChanged",
      this.path,
      `the active segment changed between validation and activation (${this.reason}); another writer?`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * Compaction failed while publishing CURRENT: which generation a restart
 * finds current is unknown, so the writer stops.
 */
export class CompactionInterrupted extends Data.TaggedError("CompactionInterrupted")<{
  readonly cause: DiskError;
}> {
  get description(): Described.Description {
    const { cause } = this;
    return Described.describe(
      "CompactionInterrupted",
      cause.path,
      `a compaction failed while switching CURRENT (${cause.code}: ${cause.detail})`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The store operation that needed a hard link when the file system refused one. */
export type LinkingOperation = "init" | "activation" | "rotation" | "compaction";

/** The `link` errors that mean "this file system has no hard links for us". */
export const noHardLinkCodes: ReadonlySet<string> = new Set(["EPERM", "ENOTSUP", "EXDEV"]);

/**
 * The file system refused `link(2)` (EPERM, ENOTSUP/EOPNOTSUPP or EXDEV). A
 * segment is created under `SEGMENT.tmp` and hard-linked into `segments/`
 * (FORMAT.md, "Creating a segment"), so a store cannot live here: init
 * and activation refuse it; a rotation or compaction that meets it stops
 * the writer with it.
 */
export class HardLinksUnsupported extends Data.TaggedError("HardLinksUnsupported")<{
  /** The name the link was to create. */
  readonly path: string;
  readonly operation: LinkingOperation;
  readonly cause: DiskError;
}> {
  get description(): Described.Description {
    return Described.describe(
      "HardLinksUnsupported",
      this.path,
      `${this.operation} needs a hard link and the file system refused link(2) with ${this.cause.code} (${this.cause.detail}); a store creates each segment by hard-linking a staged SEGMENT.tmp into segments/, so it needs a file system with hard links`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * What became of the bytes of a failed batch: the writer truncated the
 * active segment back to `size`, the end of its last acknowledged batch,
 * and synced that (`RolledBack`), or could not (`RollbackFailed`, with the
 * truncate's or the sync's error): the file may then end in bytes no
 * append acknowledged.
 */
export type Rollback =
  | { readonly _tag: "RolledBack"; readonly path: string; readonly size: number }
  | {
      readonly _tag: "RollbackFailed";
      readonly path: string;
      readonly size: number;
      readonly cause: DiskError;
    };

const rollbackExplanation = (rollback: Rollback | undefined): string => {
  if (rollback === undefined) return "reopening decides what is durable";
  if (rollback._tag === "RolledBack") {
    return `the segment was put back to its last acknowledged ${rollback.size} bytes; reopen to write again`;
  }
  const { cause } = rollback;
  return `putting the segment back to its last acknowledged ${rollback.size} bytes failed too (${cause.operation} ${cause.code}: ${cause.detail}), so it may end in bytes no append acknowledged: reopening may refuse it (IncompleteTail) or show refused appends, and the store may need the operator`;
};

/**
 * A write or sync failed: every append of the batch failed with this, and the
 * writer refuses further writes until the store is reopened (after an fsync
 * error the page cache cannot be trusted).
 */
export class WriterFailed extends Data.TaggedError("WriterFailed")<{
  readonly cause: DiskError | CompactionInterrupted | HardLinksUnsupported;
  /** After a failed batch write or sync: whether its bytes were taken back. */
  readonly rollback?: Rollback | undefined;
}> {
  get description(): Described.Description {
    const { cause, rollback } = this;
    const what =
      cause._tag === "DiskError"
        ? `${cause.operation} ${cause.path} failed with ${cause.code} (${cause.detail})`
        : cause.description.explanation;
    const path = cause._tag === "CompactionInterrupted" ? cause.cause.path : cause.path;
    const description = Described.describe(
      "WriterFailed",
      path,
      `the writer stopped: ${what}; ${rollbackExplanation(rollback)}`,
    );
    return rollback?._tag === "RollbackFailed"
      ? Described.advise(description, repairAdvice)
      : description;
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** An option out of range. */
export class InvalidOption extends Data.TaggedError("InvalidOption")<{
  /** The store the options were given for. */
  readonly path: string;
  readonly option: string;
  readonly value: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "InvalidOption",
      this.path,
      `option ${this.option} is out of range: ${this.value}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Refusals of what is on disk. */
export type CorruptionError =
  | UnsupportedStoreV1
  | IncompleteInitialization
  | StoreNotFound
  | MalformedFile
  | Mismatch
  | UnexpectedEntry
  | MissingEntry
  | SegmentGap
  | InvalidSegment
  | CorruptRecord
  | BeyondSafeInteger
  | IncompleteTail
  | UndecodableEvent
  | MissingBase;

/** Everything `open`/`inspect` can fail with (besides the projection's `HistoryRejected`). */
export type RecoveryError =
  | CorruptionError
  | HardLinksUnsupported
  | Locked
  | LockSessionLost
  | ActiveSegmentChanged
  | BudgetExceeded
  | InvalidOption
  | DiskError;

/** Everything the running store's operations can fail with. */
export type StoreError =
  | CorruptionError
  | Compacted
  | UnencodableEvent
  | PendingFull
  | WriterFailed
  | StoreClosed
  | CompactionConflict
  | AppendConflict
  | HardLinksUnsupported
  | DiskError;

/** What `init` can fail with. */
export type InitError =
  | NotEmpty
  | UnsupportedStoreV1
  | IncompleteInitialization
  | StoreNotFound
  | HardLinksUnsupported
  | Locked
  | DiskError;

/** The written copy does not inspect to the state that was copied: nothing at the target is trusted. */
export class CopyVerificationFailed extends Data.TaggedError("CopyVerificationFailed")<{
  readonly path: string;
  readonly detail: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "CopyVerificationFailed",
      this.path,
      `${this.detail}; the copy is not to be trusted`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}
