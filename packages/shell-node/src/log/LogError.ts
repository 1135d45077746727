/**
 * The refusals any log gives the engine, whatever stores its records: a
 * conflict on the expected last sequence, a full pending budget, an event
 * the codec cannot encode, a read below the generation's first sequence, a
 * closed log, a compaction that lost a race. Each describes itself (see
 * `Described`). A log's own failures (a disk error, a dropped connection)
 * are its implementation's errors.
 */
import * as Data from "effect/Data";
import * as Described from "../disk/Described.js";

/**
 * An append stated a last sequence that is not the log's: another writer
 * appended since. Nothing was appended; the appender catches up (reads
 * what it has not seen) and decides again.
 */
export class AppendConflict extends Data.TaggedError("AppendConflict")<{
  /** The log. */
  readonly path: string;
  readonly expectedLastSequence: number;
  readonly lastSequence: number;
  /**
   * The log holds the head for this writer's next append (a PostgreSQL
   * log's turn, docs/postgres.md "A turn after a conflict"): no other
   * writer appends until it does or lets go, so the engine catches up at
   * once, without the wait of "An engine that keeps losing steps aside".
   */
  readonly held?: boolean;
}> {
  get description(): Described.Description {
    return Described.describe(
      "AppendConflict",
      this.path,
      `the append expected last sequence ${this.expectedLastSequence}, the log is at ${this.lastSequence}; nothing was appended`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** An event the codec refuses to encode (e.g. a field out of its kind's range). */
export class UnencodableEvent extends Data.TaggedError("UnencodableEvent")<{
  /** Position of the event in the submitted batch. */
  readonly index: number;
  readonly reason: unknown;
  /** What the refusal is about, in one line: the job, the pair, the field path, why. */
  readonly detail?: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "UnencodableEvent",
      undefined,
      `event ${this.index} of the batch cannot be encoded: ${this.detail ?? Described.describeUnknown(this.reason)}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The pending (submitted, unwritten) bytes would pass `pendingBytesMax`. */
export class PendingFull extends Data.TaggedError("PendingFull")<{
  /** The log written. */
  readonly path: string;
  readonly pendingBytes: number;
  readonly limit: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "PendingFull",
      this.path,
      `${this.pendingBytes} bytes are pending, the limit is ${this.limit}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A read below the generation's first sequence: that history was compacted away. */
export class Compacted extends Data.TaggedError("Compacted")<{
  /** The log read. */
  readonly path: string;
  readonly sequence: number;
  readonly firstAvailable: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "Compacted",
      this.path,
      `sequence ${this.sequence} was compacted away; the first available is ${this.firstAvailable}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The log (the store) was closed. */
export class StoreClosed extends Data.TaggedError("StoreClosed")<{ readonly path: string }> {
  get description(): Described.Description {
    return Described.describe("StoreClosed", this.path, "the store was closed");
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A compaction's base reflects a last sequence that is no longer the log's. */
export class CompactionConflict extends Data.TaggedError("CompactionConflict")<{
  /** The log compacted. */
  readonly path: string;
  readonly expectedLastSequence: number;
  readonly lastSequence: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "CompactionConflict",
      this.path,
      `records were appended since sequence ${this.expectedLastSequence} (last is ${this.lastSequence})`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Every refusal of this module. */
export type LogError =
  | AppendConflict
  | UnencodableEvent
  | PendingFull
  | Compacted
  | StoreClosed
  | CompactionConflict;
