/**
 * The running log's state: where its generation stands, what is committed,
 * what is queued and in flight, and whether it takes appends. One object,
 * changed by the synchronous `append` and by the writer between its
 * transactions (never during one), read by the view.
 */
import type { Batch, Log, LogError, Ticket } from "@tay/shell-node";
import type * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import type { Driver, Session } from "../Driver.js";
import type { PgLogError } from "../PgError.js";
import type { Resolved } from "../PgOptions.js";
import type { Statements } from "./sql.js";

/** An append waiting for its transaction: its records, what it expected, its ticket. */
export interface Queued {
  readonly records: ReadonlyArray<Batch.PendingRecord>;
  readonly bytes: number;
  /** The last sequence before its first record. */
  readonly expected: number;
  readonly ticket: Ticket.Ticket<PgLogError | LogError.AppendConflict>;
  /** The inbox rows its records fold in (`Batch.consumed`), deleted in its transaction. */
  readonly consumed: ReadonlyArray<string>;
}

/**
 * The writer's session holds the head row locked in an open transaction,
 * for the engine's next append (docs/postgres.md, "A turn after a conflict").
 */
export interface Turn {
  readonly session: Session;
  /** When it was taken (ms, `performance.now()`): it is let go `turnHoldMs` later. */
  readonly since: number;
  /** Let go at the writer's next step: the engine decided with nothing to append. */
  release: boolean;
}

/** The log's state. */
export interface LogState {
  readonly path: string;
  /** The STORE_ID as its UUID text: the first parameter of every statement. */
  readonly storeId: string;
  readonly options: Resolved;
  /** Makes the writer's and the reader's sessions (and reconnects them). */
  readonly driver: Driver;
  readonly sql: Statements;
  /** The current generation. */
  epoch: number;
  firstSequence: number;
  baseRecordCount: number;
  /** The head row as this log last knew it (what committed). */
  committedLast: number;
  /**
   * Bytes of the generation's records through `committedLast`, but for the
   * runs in `uncounted`.
   */
  committedBytes: number;
  /**
   * Runs of other writers' records (first and last sequence) that
   * `committedLast` moved past on a conflict, not yet in `committedBytes`:
   * `refresh` reads their bytes and adds them.
   */
  uncounted: Array<{ readonly first: number; readonly last: number }>;
  /** The last sequence assigned (committed or not). */
  assignedLast: number;
  /** Appends not yet taken by a transaction, in order. */
  pending: Array<Queued>;
  /** Appends of the transaction in flight. */
  inFlight: Array<Queued>;
  /** Bytes of `pending` and `inFlight`. */
  pendingBytes: number;
  /** While a compaction holds appends. */
  gate: Deferred.Deferred<void> | undefined;
  closing: boolean;
  /** Set once the log stopped for good: every later append is refused with it. */
  failure: PgLogError | undefined;
  /** The writer's session, undefined while it must reconnect. */
  session: Session | undefined;
  /** The writer's buffer for a transaction's records, reused (`writer.ts` `scratchOf`). */
  scratch: Uint8Array;
  /** Wakes the writer (set while it waits). */
  wake: (() => void) | undefined;
  /** Told once nothing is pending or in flight. */
  idle: Array<() => void>;
  /**
   * Transactions committed and refused by the guard (another writer moved
   * the head), and turns taken (the head row held for the next append).
   */
  readonly writes: { committed: number; conflicted: number; turns: number };
  /** The log's transactions refused by the guard since its last commit. */
  conflictsInARow: number;
  /** Whether the engine said this writer is a minority one (`Log.minorityWriter`): a turn at its first conflict. */
  minorityWriter: boolean;
  /** The turn held on the writer's session, if one is (`writer.ts`, "A turn"). */
  turn: Turn | undefined;
  /**
   * Told the last sequence after each commit (the notification to other
   * writers), and whether the commit's own script already notified them.
   */
  committed: (last: number, notified: boolean) => void;
  /**
   * The notification an append's script sends at its commit, once this
   * database took a `pg_notify` (PostgreSQL): undefined until then, and
   * where notifications are off or refused. It gives undefined while the
   * last notification is younger than `followIntervalMs` (the commit is
   * then owed, told at the interval's end).
   */
  inlineNotice:
    | ((last: number) => { readonly channel: string; readonly payload: string } | undefined)
    | undefined;
}

/** Whether the log takes an append now, as `Log.admission` says. */
export const admission = (
  state: LogState,
  closed: () => LogError.StoreClosed,
): Log.Admission<PgLogError> => {
  if (state.failure !== undefined) return { _tag: "Refused", error: state.failure };
  if (state.closing) return { _tag: "Refused", error: closed() };
  if (state.gate !== undefined) return { _tag: "Gated", gate: state.gate };
  return { _tag: "Open" };
};

/** Tells the writer there is work (or a close). */
export const wakeWriter = (state: LogState): void => {
  const wake = state.wake;
  state.wake = undefined;
  wake?.();
};

/** Tells whoever waits for the queue to empty, once it has. */
export const notifyIdle = (state: LogState): void => {
  if (state.pending.length > 0 || state.inFlight.length > 0) return;
  const waiters = state.idle;
  state.idle = [];
  for (const waiter of waiters) waiter();
};

/** Waits until nothing is queued or in flight. */
export const whenIdle = (state: LogState): Effect.Effect<void> =>
  state.pending.length === 0 && state.inFlight.length === 0
    ? Effect.void
    : Effect.async<void>((resume) => {
        state.idle.push(() => resume(Effect.void));
      });
