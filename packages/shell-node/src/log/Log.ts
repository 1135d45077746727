/**
 * The log service: the few operations the engine needs of wherever its
 * records live. The file store (`store/FileLog.ts`) is the first
 * implementation; a log on PostgreSQL is another. The engine holds no
 * knowledge of files: it recovers its state through a log's open (which
 * folds the current generation into a projection), appends decided batches
 * after the last sequence it has seen, reads, compacts and closes.
 *
 * An append states the last sequence it expects. When that is not the
 * log's (another engine appended to a shared log), the append is refused
 * with the typed `AppendConflict` and nothing is appended, so an engine
 * that is not the only writer can catch up and decide again.
 *
 * What differs between implementations (their failures, their reports,
 * their compaction reports, the extra reads they offer) is named by one
 * type parameter, a `Kind`.
 */
import type { Commands, Event } from "@tay/core";
import type * as Deferred from "effect/Deferred";
import type * as Effect from "effect/Effect";
import type * as Stream from "effect/Stream";
import type { Batch } from "./Batch.js";
import type { AppendConflict, PendingFull } from "./LogError.js";
import type { Entry } from "./Projection.js";
import type { Ticket } from "./Ticket.js";

/** What an implementation names: its failures, its reports, its read-only view. */
export interface Kind {
  /** Everything the running log's operations fail with (its `LogError`s included): errors that describe themselves. */
  readonly error: { readonly _tag: string; readonly message: string };
  /** What recovering (opening) the log reports: at least where its generation stands. */
  readonly report: {
    readonly firstSequence: number;
    /** Records of the generation's canonical base, from `firstSequence` on. */
    readonly baseRecordCount: number;
    readonly lastSequence: number;
  };
  /** What a compaction reports (an object: the engine adds its counts of the jobs). */
  readonly compaction: object;
  /** The read-only view the engine shows its users. */
  readonly view: View<Kind["error"]>;
}

/** The numbers every log keeps about its current generation. */
export interface Stats {
  readonly records: number;
  readonly bytes: number;
  readonly firstSequence: number;
  readonly lastSequence: number;
  /** Appended but not yet durable. */
  readonly pendingRecords: number;
  readonly pendingBytes: number;
  /** A file log's durable writes made on the event loop's thread (`Stats.InlineWriteStats`); absent elsewhere. */
  readonly inlineWrites?: {
    readonly writes: number;
    readonly slow: number;
    readonly slowestMs: number;
  };
}

/** What a read of the records that mention something found, and where it stopped. */
export interface Mentioning {
  /** The records that hold one of the needles (and perhaps others: the caller filters). */
  readonly entries: ReadonlyArray<Entry>;
  /** The first sequence not looked at. */
  readonly next: number;
}

/** The reads every log offers: nothing here appends. */
export interface View<E> {
  /** What errors and reports name: a directory, a URL. */
  readonly path: string;
  /** The printed STORE_ID. */
  readonly storeId: string;
  /**
   * Up to `limit` entries from `sequence`, contiguous and in order. Below
   * the generation's first sequence: `Compacted`; past the last: empty.
   */
  readonly readFrom: (sequence: number, limit: number) => Effect.Effect<ReadonlyArray<Entry>, E>;
  /**
   * The entries among the `limit` from `sequence` whose record payload
   * holds one of `needles` (a superset: the caller filters them), and the
   * first sequence not looked at (a read may stop before `limit`: read on
   * from there until a read looks at nothing new). Errors as `readFrom`'s.
   * A log that can find those records without decoding the rest offers it
   * (the file store, PostgreSQL): one job's history (`JobMention`). Absent,
   * callers read everything with `readFrom`.
   */
  readonly readMentioning?: (
    needles: ReadonlyArray<Uint8Array>,
    sequence: number,
    limit: number,
  ) => Effect.Effect<Mentioning, E>;
  /** Every entry from `sequence`, page by page; ends once caught up with the last. */
  readonly iterFrom: (sequence: number) => Stream.Stream<Entry, E>;
  readonly stats: () => Effect.Effect<Stats>;
  /** The current generation's epoch and first sequence (and its base's length, where a log tells it). */
  readonly generation: () => Effect.Effect<{
    readonly epoch: number;
    readonly firstSequence: number;
    readonly baseRecordCount?: number;
  }>;
}

/**
 * A job a log took in from elsewhere (PgLog's inbox, written by another
 * program's transaction): the engine decides `command` like any insert and
 * names `key` in the batch's `consumed`, so the log takes the job out of
 * where it came from in the transaction that appends it.
 */
export interface Incoming {
  readonly key: string;
  readonly command: Commands.InsertJobs;
}

/** What became of an incoming job the engine took. */
export type IncomingOutcome =
  /** Appended (durable as the log's policy says), under these job ids. */
  | { readonly _tag: "Appended"; readonly jobIds: ReadonlyArray<number> }
  /** The deciders refused it: it can never be appended as it is. */
  | { readonly _tag: "Refused"; readonly reason: string }
  /** Not appended this time (a conflict, a failed append): the log offers it again. */
  | { readonly _tag: "NotAppended"; readonly reason: string };

/**
 * Jobs a log takes in from elsewhere (PgLog's inbox). `watch` calls its
 * listener when jobs may be waiting; the engine then `take`s them at the
 * head of its next drain and tells `settled` each one's outcome. A job
 * taken is not offered again until it is settled `NotAppended`.
 */
export interface IncomingJobs {
  readonly watch: (listener: () => void) => () => void;
  readonly take: () => ReadonlyArray<Incoming>;
  readonly settled: (key: string, outcome: IncomingOutcome) => void;
}

/** Whether the log takes an append now. */
export type Admission<E> =
  | { readonly _tag: "Open" }
  | { readonly _tag: "Gated"; readonly gate: Deferred.Deferred<void> }
  | { readonly _tag: "Refused"; readonly error: E };

/** A running log. */
export interface Log<K extends Kind> {
  readonly view: K["view"];
  /** The last sequence appended (durable or not). */
  readonly lastSequence: () => number;
  /**
   * `Open`; `Refused` (with why) once the log failed or is closing;
   * `Gated` while the log itself holds appends (wait on the gate, ask again).
   */
  readonly admission: () => Admission<K["error"]>;
  /**
   * `PendingFull` if `bytes` more, on top of what is pending and of
   * `queuedBytes` the caller is about to append with them, would pass the
   * log's pending budget (an append larger than the budget passes alone).
   */
  readonly overBudget: (queuedBytes: number, bytes: number) => PendingFull | undefined;
  /**
   * Appends `batch` (not empty) right after `expectedLastSequence`: assigns
   * the next sequences in order and returns the ticket that settles once
   * the batch is durable (or failed). Synchronous, after `admission` said
   * `Open` in the same step. `AppendConflict` when the log's last sequence
   * is not `expectedLastSequence`: nothing appended. A log shared by
   * several writers may also fail the ticket with `AppendConflict`.
   */
  readonly append: (
    batch: Batch,
    expectedLastSequence: number,
  ) => Ticket<K["error"] | AppendConflict> | AppendConflict;
  /**
   * Publishes a new generation whose canonical base is `base` (computed by
   * the caller from the state at `expectedLastSequence`): `CompactionConflict`
   * if records were appended since.
   */
  readonly compact: (
    base: Iterable<Event.Event>,
    expectedLastSequence: number,
  ) => Effect.Effect<K["compaction"], K["error"]>;
  /**
   * Writes everything appended so far now, whatever the flush policy (one
   * that waits for company, or `Manual`), and waits until it is durable as
   * the durability policy says.
   */
  readonly flush: () => Effect.Effect<void, K["error"]>;
  /**
   * A log shared by several writers (absent where the log is its only
   * writer's): waits until this log's own appends have settled, then learns
   * the last sequence the other writers reached, so `lastSequence` and the
   * view's reads move up to it.
   */
  readonly refresh?: () => Effect.Effect<void, K["error"]>;
  /**
   * A log shared by several writers: told when the engine has decided
   * again what a catch-up held (the appends it made are queued by then). A
   * log holding the shared head for this writer's next append (PostgreSQL's
   * turn) lets it go when nothing was queued.
   */
  readonly caughtUp?: () => void;
  /**
   * A log shared by several writers: told whether this writer is a
   * minority one, its own records under an eighth of those it appended or
   * folded lately (the engine's count, `engine/internal/catchUp.ts`). A log
   * that holds the head for a writer that keeps losing (PostgreSQL's turn)
   * holds it for a minority writer at its first conflict: such a writer
   * loses every race to the busy ones, and a turn is what ends a losing streak.
   */
  readonly minorityWriter?: (minority: boolean) => void;
  /**
   * A log shared by several writers: calls `listener` whenever another
   * writer may have appended (a notification, or a poll that saw the log
   * move); returns the function that stops it.
   */
  readonly watchOthers?: (listener: () => void) => () => void;
  /**
   * A log that takes jobs in from elsewhere (absent otherwise): the engine
   * decides them first in its next drain, and its batch names their keys
   * in `consumed`. An append whose consumed jobs are gone (another engine
   * appended them first) fails with `AppendConflict`, nothing written.
   */
  readonly incoming?: IncomingJobs;
  /** Drains what is pending and closes; later appends are refused. Idempotent. */
  readonly close: () => Effect.Effect<void, K["error"]>;
}

/** What opening a log gives: the log, the projection's state, the report. */
export interface Recovered<S, K extends Kind> {
  readonly log: Log<K>;
  readonly state: S;
  readonly report: K["report"];
}
