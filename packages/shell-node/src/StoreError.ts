/**
 * Every way the store refuses: one `Data.TaggedError` per failure kind, each
 * naming the path (and, for bytes, the offset and sequence) it concerns.
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
import { Data } from "effect";
import type { DiskError } from "./Disk.js";
import type { CorruptReason, EventDecodeError, FixedLayoutError } from "./internal/codec.js";
import type { LockHolder } from "./LockDescription.js";
import type { BudgetName } from "./StoreOptions.js";
import { messageOf } from "./internal/errorMessage.js";

/** `init` found entries other than LOCK in the directory. */
export class NotEmpty extends Data.TaggedError("NotEmpty")<{
  readonly path: string;
  /** Up to the first 16 entry names found. */
  readonly entries: ReadonlyArray<string>;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** A Store-v1 root (`DATA_DIR/STORE` or `DATA_DIR/segments`): migrate it with Tay 1.4.x first. */
export class UnsupportedStoreV1 extends Data.TaggedError("UnsupportedStoreV1")<{
  readonly path: string;
  readonly found: "STORE" | "segments";
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** STORE-V2 without CURRENT: an initialization that did not finish. */
export class IncompleteInitialization extends Data.TaggedError("IncompleteInitialization")<{
  readonly path: string;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** There is no store at `path`. */
export class StoreNotFound extends Data.TaggedError("StoreNotFound")<{
  readonly path: string;
  readonly reason: "MissingDirectory" | "NotADirectory" | "MissingMarker";
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** Another holder (this process or another) has the store's LOCK. */
export class Locked extends Data.TaggedError("Locked")<{
  readonly path: string;
  /** LOCK's informative contents, when readable. */
  readonly holder: LockHolder | null;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/**
 * Between locking and activation, LOCK's contents stopped being this open's
 * description: the file was replaced or rewritten, so the flock may no longer
 * guard the store.
 */
export class LockSessionLost extends Data.TaggedError("LockSessionLost")<{
  readonly path: string;
  readonly session: string;
}> {
  override get message(): string {
    return messageOf(this);
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
  override get message(): string {
    return messageOf(this);
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
  | "Sequence";

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
  override get message(): string {
    return messageOf(this);
  }
}

/** An entry where the layout allows none (e.g. a non-segment name in `segments/`). */
export class UnexpectedEntry extends Data.TaggedError("UnexpectedEntry")<{
  readonly path: string;
  readonly name: string;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** A required file or directory is missing (a manifest, `segments/`, the current epoch). */
export class MissingEntry extends Data.TaggedError("MissingEntry")<{
  readonly path: string;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** Segment IDs do not run 1, 2, 3, ... */
export class SegmentGap extends Data.TaggedError("SegmentGap")<{
  readonly path: string;
  readonly expected: number;
  readonly found: number;
}> {
  override get message(): string {
    return messageOf(this);
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

/** A segment whose shape breaks FORMAT.md's rules (see `SegmentShapeReason`). */
export class InvalidSegment extends Data.TaggedError("InvalidSegment")<{
  readonly path: string;
  readonly offset: number;
  readonly reason: SegmentShapeReason;
}> {
  override get message(): string {
    return messageOf(this);
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
  override get message(): string {
    return messageOf(this);
  }
}

/** A u64 field beyond 2^53-1: physically valid, refused by this implementation. */
export class BeyondSafeInteger extends Data.TaggedError("BeyondSafeInteger")<{
  readonly path: string;
  readonly offset: number;
  readonly field: string;
}> {
  override get message(): string {
    return messageOf(this);
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
  override get message(): string {
    return messageOf(this);
  }
}

/** A physically valid record whose event does not decode (e.g. `UnknownEvent`). */
export class UndecodableEvent extends Data.TaggedError("UndecodableEvent")<{
  readonly path: string;
  readonly offset: number;
  readonly sequence: number;
  readonly reason: EventDecodeError;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** The projection refused an event: `reason` is its own error value. */
export class HistoryRejected<E = unknown> extends Data.TaggedError("HistoryRejected")<{
  readonly path: string;
  readonly offset: number;
  readonly sequence: number;
  readonly reason: unknown;
}> {
  declare readonly reason: E;
}

/** The generation holds fewer records than its manifest's base record count. */
export class MissingBase extends Data.TaggedError("MissingBase")<{
  readonly path: string;
  readonly baseRecordCount: number;
  readonly records: number;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** An operational recovery budget was exceeded (not corruption: a larger budget opens the store). */
export class BudgetExceeded extends Data.TaggedError("BudgetExceeded")<{
  readonly budget: BudgetName;
  readonly limit: number;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** Between validation and activation the active segment changed (another writer?). */
export class ActiveSegmentChanged extends Data.TaggedError("ActiveSegmentChanged")<{
  readonly path: string;
  readonly reason: "Size" | "LastRecord";
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** `readFrom` below the generation's first sequence: that history was compacted away. */
export class Compacted extends Data.TaggedError("Compacted")<{
  readonly sequence: number;
  readonly firstAvailable: number;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** An event the codec refuses to encode (e.g. a field out of its kind's range). */
export class UnencodableEvent extends Data.TaggedError("UnencodableEvent")<{
  /** Position of the event in the submitted batch. */
  readonly index: number;
  readonly reason: unknown;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** The pending (submitted, unwritten) bytes would pass `pendingBytesMax`. */
export class PendingFull extends Data.TaggedError("PendingFull")<{
  readonly pendingBytes: number;
  readonly limit: number;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/**
 * A write or sync failed: every append of the batch failed with this, and the
 * writer refuses further writes until the store is reopened (after an fsync
 * error the page cache cannot be trusted).
 */
export class WriterFailed extends Data.TaggedError("WriterFailed")<{
  readonly cause: DiskError | CompactionInterrupted;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/** The store was closed. */
export class StoreClosed extends Data.TaggedError("StoreClosed")<{ readonly path: string }> {
  override get message(): string {
    return messageOf(this);
  }
}

/** `compact` was called with `expectedLastSequence` that is no longer the last sequence. */
export class CompactionConflict extends Data.TaggedError("CompactionConflict")<{
  readonly expectedLastSequence: number;
  readonly lastSequence: number;
}> {
  override get message(): string {
    return messageOf(this);
  }
}

/**
 * Compaction failed while publishing CURRENT: which generation a restart
 * finds current is unknown, so the writer stops.
 */
export class CompactionInterrupted extends Data.TaggedError("CompactionInterrupted")<{
  readonly cause: DiskError;
}> {
  override get message(): string {
    return `a compaction failed while switching CURRENT: ${this.cause.message}`;
  }
}

/** An option out of range. */
export class InvalidOption extends Data.TaggedError("InvalidOption")<{
  readonly option: string;
  readonly value: string;
}> {
  override get message(): string {
    return messageOf(this);
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
  | DiskError;

/** What `init` can fail with. */
export type InitError =
  | NotEmpty
  | UnsupportedStoreV1
  | IncompleteInitialization
  | StoreNotFound
  | Locked
  | DiskError;
