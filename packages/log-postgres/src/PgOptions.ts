/**
 * The options of `PgSchema.init` and `PgLog.open`, their defaults and
 * their limits. Every limit is named, with its unit last.
 */
import { type Driver, nodePg, type SynchronousCommit } from "./Driver.js";
import { schemaName } from "./internal/sql.js";
import { InvalidOption } from "./PgError.js";

/** Where a store lives in its database, and how to reach it. */
export interface LocationOptions {
  /** The schema that holds Tay's tables (created by init). Default "tay". */
  readonly schema?: string;
  /** The store's name inside the schema (one schema holds many stores). Default "default". */
  readonly store?: string;
  /**
   * Makes the driver for the URL. Default node-postgres (`Driver.nodePg`)
   * with `synchronousCommit` and `queryTimeoutMs`; tests pass PGlite.
   */
  readonly driver?: (url: string) => Driver;
}

/** How a running log writes, reads and recovers. */
export interface PgLogOptions extends LocationOptions {
  /**
   * What a COMMIT waits for before an append is acknowledged: the
   * session's `synchronous_commit` (docs/postgres.md). Default "on": the
   * commit record is flushed to the server's disk.
   */
  readonly synchronousCommit?: SynchronousCommit;
  /** Appended bytes not yet committed, beyond which appends are refused with `PendingFull`. Default 64 MiB. */
  readonly pendingBytesMax?: number;
  /** Rows in one INSERT statement (two parameters each). Default 1,024. */
  readonly statementRowsMax?: number;
  /**
   * Records one transaction takes from the queue: whole batches up to this
   * many (a larger batch goes alone). Default 8,192.
   */
  readonly transactionRecordsMax?: number;
  /** Records per page when open and reads go through the table. Default 1,024. */
  readonly pageRecords?: number;
  /** Reconnections (or runs of a transaction a transient error refused) before giving up. Default 5. */
  readonly reconnectAttemptsMax?: number;
  /** Wait before reconnection n is n times this. Default 200 ms. */
  readonly reconnectDelayMs?: number;
  /** A statement without an answer after this long counts as a lost connection. Default 30,000 ms. */
  readonly queryTimeoutMs?: number;
  /** Records open folds at most (`BudgetExceeded` past it). Default 10^9. */
  readonly historyRecordsMax?: number;
  /**
   * Several engines, one store: tell the others after each commit and hear
   * them with LISTEN/NOTIFY (PostgreSQL). Where LISTEN is refused
   * (CockroachDB) the log polls the head instead. Default true.
   */
  readonly notifications?: boolean;
  /**
   * How often the head is polled for other writers' appends without
   * LISTEN; with it, every `pollIntervalMs` × 10 as a safety net. Default 1,000 ms.
   */
  readonly pollIntervalMs?: number;
  /**
   * Tell the engine that others appended at most once per this many
   * milliseconds: the first notification after a quiet spell at once, every
   * later one within the interval folded into one told when it ends (each
   * tell costs the engine a catch-up: a read of the head and of the new
   * records). 0 tells every notification at once. Default 50 ms. The log
   * also notifies the others at most once per this interval (the first
   * commit after a quiet spell at once, the later ones at its end); 0
   * notifies every commit.
   */
  readonly followIntervalMs?: number;
  /**
   * How an append's one round trip is sent where the driver offers both:
   * `"batch"`, prepared statements with parameters in one extended-protocol
   * batch (parsed and planned once per session), or `"script"`, one text of
   * statements with literal values (the simple query protocol: parsed and
   * planned every time; for a pooler or proxy that refuses prepared
   * statements). Default "batch".
   */
  readonly oneTrip?: "batch" | "script";
  /**
   * Fold the inbox (`Inbox.enqueueInTransaction`) into the log while an
   * engine runs over it (docs/postgres.md, "Enqueue inside your
   * transaction"): one more session, LISTENing on the inbox channel (or
   * polling every `pollIntervalMs`). Default true.
   */
  readonly inbox?: boolean;
  /** Inbox rows one fold reads and hands the engine (one transaction). Default 1,024. */
  readonly inboxPageRows?: number;
  /**
   * How long the inbox's folder waits, once a notification says a row came
   * into an empty inbox, before it reads: the rows committed meanwhile fold
   * in the same transaction, one append (and one WAL flush) for them all
   * instead of one each (docs/postgres.md, "The folder lingers"). A job
   * enqueued alone becomes visible this much later. 0 reads at once.
   * Default 2 ms.
   */
  readonly inboxLingerMs?: number;
  /**
   * How long a compaction's lease on the store lasts past its latest
   * transaction (docs/postgres.md, "Two compactions at once"): each of its
   * transactions renews it, and another compactor may take it over only
   * once it has run out. Longer than any pause between two of a
   * compaction's transactions. Default 60,000 ms.
   */
  readonly compactionLeaseMs?: number;
  /**
   * Several engines, one store: after this many of its transactions in a
   * row were refused by the guard (another writer moved the head first),
   * the log takes a turn: it reads the head row `FOR UPDATE` and holds it
   * until the engine's next append commits under it, so a writer that
   * keeps losing to a busier one commits instead of running out of
   * retries (docs/postgres.md, "A turn after a conflict"). Below the
   * engine's `conflictRetriesMax` (64), no command runs out of retries
   * while turns hold. Each turn stops the other writers for about three
   * round trips: a low value trades throughput for tail latency. A writer
   * its engine calls a minority one (under an eighth of the records it saw
   * lately are its own: a process inserting now and then beside busy ones)
   * takes its turn at its first refusal (docs/postgres.md, "A minority
   * writer takes its turn at once"). 0 never takes one. Default 16.
   */
  readonly turnAfterConflicts?: number;
  /**
   * How long a turn holds the head row waiting for the engine's append
   * (the catch-up's read and decision) before it lets go with nothing
   * written. Other writers' appends wait meanwhile. At most 5,000 ms
   * (below the server's idle-in-transaction timeout the sessions set).
   * Default 250 ms.
   */
  readonly turnHoldMs?: number;
}

/** Options with every default filled in and every limit checked. */
export interface Resolved {
  readonly schema: string;
  readonly store: string;
  readonly driver: (url: string) => Driver;
  readonly synchronousCommit: SynchronousCommit;
  readonly pendingBytesMax: number;
  readonly statementRowsMax: number;
  readonly transactionRecordsMax: number;
  readonly pageRecords: number;
  readonly reconnectAttemptsMax: number;
  readonly reconnectDelayMs: number;
  readonly queryTimeoutMs: number;
  readonly historyRecordsMax: number;
  readonly notifications: boolean;
  readonly pollIntervalMs: number;
  readonly followIntervalMs: number;
  readonly oneTrip: "batch" | "script";
  readonly inbox: boolean;
  readonly inboxPageRows: number;
  readonly inboxLingerMs: number;
  readonly compactionLeaseMs: number;
  readonly turnAfterConflicts: number;
  readonly turnHoldMs: number;
}

/** Rows one INSERT may carry: 2 parameters a row and 2 shared under PostgreSQL's 65,535. */
export const statementRowsLimit = 32_000;

/** A store name: 1 to 255 bytes of UTF-8 with no control character. */
const storeName = (name: string) =>
  name.length > 0 && Buffer.byteLength(name, "utf8") <= 255 && !/\p{Cc}/u.test(name);

const integerRanges: ReadonlyArray<readonly [keyof PgLogOptions, number, number, number]> = [
  ["pendingBytesMax", 64 * 1024 * 1024, 1, Number.MAX_SAFE_INTEGER],
  ["statementRowsMax", 1024, 1, statementRowsLimit],
  ["transactionRecordsMax", 8192, 1, Number.MAX_SAFE_INTEGER],
  ["pageRecords", 1024, 1, 1_000_000],
  ["reconnectAttemptsMax", 5, 0, 1000],
  ["reconnectDelayMs", 200, 0, 3_600_000],
  ["queryTimeoutMs", 30_000, 1, 2_147_483_647],
  ["historyRecordsMax", 1_000_000_000, 0, Number.MAX_SAFE_INTEGER],
  ["pollIntervalMs", 1000, 1, 3_600_000],
  ["followIntervalMs", 50, 0, 3_600_000],
  ["inboxPageRows", 1024, 1, 1_000_000],
  ["inboxLingerMs", 2, 0, 60_000],
  ["compactionLeaseMs", 60_000, 1, 86_400_000],
  ["turnAfterConflicts", 16, 0, 1000],
  // Below the sessions' idle_in_transaction_session_timeout (10 s, Driver.nodePg).
  ["turnHoldMs", 250, 1, 5_000],
];

/** Fills in the defaults, or names the first option out of range. */
export const resolve = (path: string, options: PgLogOptions): Resolved | InvalidOption => {
  const schema = options.schema ?? "tay";
  if (!schemaName.test(schema)) {
    return new InvalidOption({
      path,
      option: "schema",
      value: JSON.stringify(schema),
      expected: "a lowercase identifier (a-z, 0-9, _, at most 63 characters)",
    });
  }
  const store = options.store ?? "default";
  if (!storeName(store)) {
    return new InvalidOption({
      path,
      option: "store",
      value: JSON.stringify(store),
      expected: "1 to 255 bytes of UTF-8 without control characters",
    });
  }
  const numbers = new Map<string, number>();
  for (const [option, fallback, minimum, maximum] of integerRanges) {
    const given = options[option];
    const value = typeof given === "number" ? given : fallback;
    if (!Number.isSafeInteger(value) || value < minimum || value > maximum) {
      return new InvalidOption({
        path,
        option,
        value: String(value),
        expected: `an integer in ${minimum}..${maximum}`,
      });
    }
    numbers.set(option, value);
  }
  const number = (option: keyof PgLogOptions) => numbers.get(option) ?? 0;
  const synchronousCommit = options.synchronousCommit ?? "on";
  const queryTimeoutMs = number("queryTimeoutMs");
  return {
    schema,
    store,
    driver: options.driver ?? ((url) => nodePg(url, { synchronousCommit, queryTimeoutMs })),
    synchronousCommit,
    pendingBytesMax: number("pendingBytesMax"),
    statementRowsMax: number("statementRowsMax"),
    transactionRecordsMax: number("transactionRecordsMax"),
    pageRecords: number("pageRecords"),
    reconnectAttemptsMax: number("reconnectAttemptsMax"),
    reconnectDelayMs: number("reconnectDelayMs"),
    queryTimeoutMs,
    historyRecordsMax: number("historyRecordsMax"),
    notifications: options.notifications ?? true,
    pollIntervalMs: number("pollIntervalMs"),
    followIntervalMs: number("followIntervalMs"),
    oneTrip: options.oneTrip === "script" ? "script" : "batch",
    inbox: options.inbox ?? true,
    inboxPageRows: number("inboxPageRows"),
    inboxLingerMs: number("inboxLingerMs"),
    compactionLeaseMs: number("compactionLeaseMs"),
    turnAfterConflicts: number("turnAfterConflicts"),
    turnHoldMs: number("turnHoldMs"),
  };
};
