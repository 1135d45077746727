/**
 * Every way the PostgreSQL log refuses, one tagged error per kind, each
 * describing itself (`Described`): its `message` is the whole line,
 * `<Reason> <store> epoch E sequence N: <explanation>`, where the store is
 * its URL without the password and with `#schema.store` (see `PgLog`).
 *
 * The refusals of what the tables hold carry the file store's names
 * (`CorruptRecord`, `Mismatch`, `UndecodableEvent`, `HistoryRejected`,
 * `MissingBase`, `StoreNotFound`) and the same explanations, borrowed from
 * the file store's errors of the same kind, so a fault reads the same
 * whichever log met it; they name an epoch and a sequence instead of a
 * file and an offset. The running log's own failures are `DatabaseError`
 * (a statement refused; nothing committed) and `ConnectionLost` (the
 * connection dropped and the outcome could not be learned).
 */
import type { CorruptReason, EventDecodeError } from "@tay/codec";
import { Described, type LogError, StoreError } from "@tay/shell-node";
import * as Data from "effect/Data";

/** Where an error is: the store, and the epoch when there is one. */
const at = (path: string, epoch: number | undefined): string =>
  epoch === undefined ? path : `${path} epoch ${epoch}`;

/** `url` is not a postgres:// URL (printed without what looks like a password). */
export class InvalidUrl extends Data.TaggedError("InvalidUrl")<{
  readonly url: string;
  readonly reason: string;
}> {
  get description(): Described.Description {
    return Described.describe("InvalidUrl", this.url, this.reason);
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** An option out of range. */
export class InvalidOption extends Data.TaggedError("InvalidOption")<{
  readonly path: string;
  readonly option: string;
  readonly value: string;
  readonly expected: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "InvalidOption",
      this.path,
      `option ${this.option} must be ${this.expected}, not ${this.value}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The schema's migrations are not the ones this version expects (0: none applied). */
export class SchemaVersionMismatch extends Data.TaggedError("SchemaVersionMismatch")<{
  readonly path: string;
  readonly found: number;
  readonly expected: number;
}> {
  get description(): Described.Description {
    const advice =
      this.found < this.expected
        ? "PgSchema.init (or migrate) brings the schema up to date"
        : "a newer Tay wrote this schema: open it with that version";
    return Described.advise(
      Described.describe(
        "SchemaVersionMismatch",
        this.path,
        `the schema is at version ${this.found}, this version of Tay expects ${this.expected}; nothing was changed`,
      ),
      advice,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** No store of this name in the schema. */
export class StoreNotFound extends Data.TaggedError("StoreNotFound")<{
  readonly path: string;
  readonly store: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "StoreNotFound",
      this.path,
      `no store named ${JSON.stringify(this.store)} (PgSchema.init creates one)`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** `init` found a store of this name already. */
export class StoreExists extends Data.TaggedError("StoreExists")<{
  readonly path: string;
  readonly store: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "StoreExists",
      this.path,
      `a store named ${JSON.stringify(this.store)} exists already; nothing was changed`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A row the store cannot be without (its CURRENT, its current generation) is missing. */
export class MissingRow extends Data.TaggedError("MissingRow")<{
  readonly path: string;
  readonly table: string;
  readonly epoch: number | undefined;
}> {
  get description(): Described.Description {
    return Described.describe(
      "MissingRow",
      at(this.path, this.epoch),
      `no row in ${this.table}: the store is damaged (init writes it in the transaction that creates the store)`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A field of a row is not what its column must hold (kind or range). */
export class MalformedRow extends Data.TaggedError("MalformedRow")<{
  readonly path: string;
  readonly table: string;
  readonly column: string;
  readonly found: string;
  readonly epoch: number | undefined;
  readonly sequence: number | undefined;
}> {
  get description(): Described.Description {
    return Described.describe(
      "MalformedRow",
      at(this.path, this.epoch),
      `${this.table}.${this.column} holds ${this.found}, which it cannot hold; nothing was changed`,
      { sequence: this.sequence },
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Why a row's bytes are not one record: the codec's reasons, or a length that is not the record's. */
export type CorruptRowReason = CorruptReason | "Truncated" | "TrailingBytes";

const ownReasons = {
  Truncated: "the row's bytes end inside a record",
  TrailingBytes: "the row holds bytes after its record",
} as const;

/** A row whose bytes are not one valid Record v1 (`RecordChecksum`, `BadMagic`, ...). */
export class CorruptRecord extends Data.TaggedError("CorruptRecord")<{
  readonly path: string;
  readonly epoch: number;
  readonly sequence: number;
  readonly reason: CorruptRowReason;
}> {
  get description(): Described.Description {
    const { reason } = this;
    const explanation =
      reason === "Truncated" || reason === "TrailingBytes"
        ? `${ownReasons[reason]}; nothing was changed`
        : new StoreError.CorruptRecord({ path: "", offset: 0, sequence: this.sequence, reason })
            .description.explanation;
    return Described.describe(reason, at(this.path, this.epoch), explanation, {
      sequence: this.sequence,
    });
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** What a `Mismatch` concerns. */
export type MismatchField =
  /** The row's key: sequences must run on from the generation's first without a gap. */
  | "Sequence"
  /** The sequence inside the record's bytes against its row's key. */
  | "RecordSequence"
  /** The head row against the generation's last record. */
  | "LastSequence"
  /** A compaction's staged records, after a lost connection, against what it sent. */
  | "StagedSequence";

/** Two things that must agree do not (a gap in the sequences, a head past the records). */
export class Mismatch extends Data.TaggedError("Mismatch")<{
  readonly path: string;
  readonly epoch: number;
  readonly sequence: number | undefined;
  readonly field: MismatchField;
  readonly expected: string;
  readonly found: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "Mismatch",
      at(this.path, this.epoch),
      `${this.field}: expected ${this.expected}, found ${this.found}; nothing was changed`,
      { sequence: this.sequence },
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A valid record whose event does not decode (e.g. `UnknownEvent`). */
export class UndecodableEvent extends Data.TaggedError("UndecodableEvent")<{
  readonly path: string;
  readonly epoch: number;
  readonly sequence: number;
  readonly reason: EventDecodeError;
}> {
  get description(): Described.Description {
    const borrowed = new StoreError.UndecodableEvent({
      path: "",
      offset: 0,
      sequence: this.sequence,
      reason: this.reason,
    }).description;
    return Described.describe(borrowed.reason, at(this.path, this.epoch), borrowed.explanation, {
      sequence: this.sequence,
    });
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The projection refused an event; `reason` is its own error (core's `HistoryError` for the engine). */
export class HistoryRejected<E = unknown> extends Data.TaggedError("HistoryRejected")<{
  readonly path: string;
  readonly epoch: number;
  readonly sequence: number;
  readonly reason: unknown;
}> {
  declare readonly reason: E;
  get description(): Described.Description {
    const borrowed = new StoreError.HistoryRejected({
      path: "",
      offset: 0,
      sequence: this.sequence,
      reason: this.reason,
    }).description;
    return Described.describe(borrowed.reason, at(this.path, this.epoch), borrowed.explanation, {
      sequence: this.sequence,
    });
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The generation holds fewer records than its base record count. */
export class MissingBase extends Data.TaggedError("MissingBase")<{
  readonly path: string;
  readonly epoch: number;
  readonly baseRecordCount: number;
  readonly records: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "MissingBase",
      at(this.path, this.epoch),
      `the generation holds ${this.records} records, fewer than its base of ${this.baseRecordCount}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** An operational limit of open was passed (not corruption: a larger limit opens the store). */
export class BudgetExceeded extends Data.TaggedError("BudgetExceeded")<{
  readonly path: string;
  readonly budget: "historyRecordsMax";
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

/**
 * The server refused a statement, or no connection could be made: nothing
 * of the operation committed. `code` is the SQLSTATE or the client's code.
 */
export class DatabaseError extends Data.TaggedError("DatabaseError")<{
  readonly path: string;
  /** What the log was doing: `open`, `append`, `read`, `compact`, `init`. */
  readonly operation: string;
  readonly code: string | undefined;
  readonly detail: string;
}> {
  get description(): Described.Description {
    const code = this.code === undefined ? "" : ` (${this.code})`;
    return Described.describe(
      this.code ?? "DatabaseError",
      this.path,
      `${this.operation} failed${code}: ${this.detail}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * The connection dropped while a transaction was in flight and the log
 * could not reach the server again to learn whether it committed: its
 * outcome is unknown and the log stopped. Reopening reads what committed.
 */
export class ConnectionLost extends Data.TaggedError("ConnectionLost")<{
  readonly path: string;
  readonly operation: string;
  /** The last sequence of the transaction whose outcome is unknown, when it carried records. */
  readonly lastSequence: number | undefined;
  /** Reconnections tried. */
  readonly attempts: number;
  readonly detail: string;
}> {
  get description(): Described.Description {
    const what =
      this.lastSequence === undefined ? "" : ` (records up to sequence ${this.lastSequence})`;
    return Described.advise(
      Described.describe(
        "ConnectionLost",
        this.path,
        `the connection dropped during ${this.operation}${what} and ${this.attempts} reconnection${this.attempts === 1 ? "" : "s"} failed (${this.detail}): whether it committed is unknown, and the log stopped`,
      ),
      "reopen the log: open reads what committed",
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** When a lease runs out, as an instant a person reads. */
const instant = (ms: number): string =>
  Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ms} ms`;

/**
 * Another compaction holds the store's lease (docs/postgres.md, "Two
 * compactions at once"): this one was refused before it wrote anything.
 */
export class CompactionBusy extends Data.TaggedError("CompactionBusy")<{
  readonly path: string;
  /** The holder's lease token. */
  readonly holder: string;
  /** Who holds it, as the holder named itself (host and process). */
  readonly label: string;
  /** When the lease runs out unless its holder renews it (ms since the epoch). */
  readonly expiresAt: number;
}> {
  get description(): Described.Description {
    return Described.advise(
      Described.describe(
        "CompactionBusy",
        this.path,
        `another compaction holds this store's lease (${this.label}, lease ${this.holder}) until ${instant(this.expiresAt)}; nothing was changed`,
      ),
      "compact again once it has ended: a compactor that died holds the lease only until then",
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * The compaction's lease ran out and another compactor took it before the
 * switch: the compaction stopped at its next transaction, which wrote
 * nothing, so nothing of it became current.
 */
export class CompactionLeaseLost extends Data.TaggedError("CompactionLeaseLost")<{
  readonly path: string;
  /** The generation the compaction was staging. */
  readonly epoch: number;
  /** Who holds the lease now, as it named itself; undefined when it is free again. */
  readonly label: string | undefined;
  readonly expiresAt: number | undefined;
}> {
  get description(): Described.Description {
    const now =
      this.label === undefined
        ? "it is free again"
        : `${this.label} holds it until ${instant(this.expiresAt ?? 0)}`;
    return Described.advise(
      Described.describe(
        "CompactionLeaseLost",
        this.path,
        `this compaction's lease on the store ran out and was taken before it switched to epoch ${this.epoch} (${now}); nothing of it became current and nothing was written after the loss`,
      ),
      "compact again: what it staged is removed by the next compaction, and a lease longer than the pauses between its transactions (compactionLeaseMs) keeps it",
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** What the running log's operations fail with (the generic refusals of any log included). */
export type PgLogError =
  | LogError.LogError
  | DatabaseError
  | ConnectionLost
  | CompactionBusy
  | CompactionLeaseLost
  | CorruptRecord
  | Mismatch
  | MissingRow
  | MalformedRow
  | UndecodableEvent;

/** What opening a log fails with, besides its projection's refusal (`HistoryRejected`). */
export type PgOpenError =
  | InvalidUrl
  | InvalidOption
  | SchemaVersionMismatch
  | StoreNotFound
  | MissingRow
  | MalformedRow
  | CorruptRecord
  | Mismatch
  | UndecodableEvent
  | MissingBase
  | BudgetExceeded
  | DatabaseError;
