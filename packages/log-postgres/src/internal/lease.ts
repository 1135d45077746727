/**
 * The compaction lease (docs/postgres.md, "Two compactions at once"): one
 * row per store in `tay_compaction` naming who compacts it and until when.
 * Compactions of one store must not overlap: each removes leftover
 * generations, which include the one another compactor is staging.
 *
 * Safety does not rest on clocks. Every transaction of a compaction starts
 * by renewing the lease with an UPDATE guarded by its holder token and goes
 * on only if that changed the row. The UPDATE locks the row until the
 * transaction ends, so a takeover either commits first (the renewal then
 * changes nothing and the compaction stops, having written nothing more)
 * or waits, and then finds the lease renewed. Clocks decide only when a
 * lease counts as run out, that is, how soon a crashed compactor's store
 * can be compacted again. No advisory lock, no row lock statement: the
 * portable subset (`portable.ts`) refuses both.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import type { Failure, Session } from "../Driver.js";
import { CompactionBusy, CompactionLeaseLost } from "../PgError.js";
import * as Rows from "./rows.js";
import { run } from "./session.js";
import type { Statements } from "./sql.js";
import type { LogState } from "./state.js";

/** A lease this process took: its token. */
export interface Lease {
  readonly holder: string;
}

/** The lease row as read: undefined holder when it is free. */
interface Row {
  readonly holder: string | undefined;
  readonly label: string;
  readonly expiresAt: number;
}

/** Who this compactor is, for the messages of the others. */
const label = (): string => `${hostname()} pid ${process.pid}`;

/** The lease as a row holds it (its table's, or open's marker row, where it is NULLs when free). */
const rowFields = (row: unknown): Row => {
  const holder = Rows.field(row, "holder");
  const named = Rows.text(Rows.field(row, "label"));
  const expiresAt = Rows.integer(Rows.field(row, "expires_at"));
  return {
    holder: typeof holder === "string" ? holder : undefined,
    label: Rows.isRefused(named) ? "an unnamed compactor" : named,
    expiresAt: Rows.isRefused(expiresAt) ? 0 : expiresAt,
  };
};

/** The store's lease row, or undefined when no compaction ever made it. */
const leaseRow = (
  sql: Statements,
  session: Session,
  storeId: string,
): Effect.Effect<Row | undefined, Failure> =>
  Effect.map(run(session, sql.leaseRead, [storeId]), (result) => {
    const row = result.rows[0];
    return row === undefined ? undefined : rowFields(row);
  });

/** What open reports of a compaction holding the lease (docs/postgres.md). */
export interface Held {
  /** Who holds it: "HOST pid N". */
  readonly label: string;
  /** Until when (ms since the epoch, by the holder's clock). */
  readonly expiresAt: number;
}

/**
 * The compaction holding the lease (run out or not) as open's marker row
 * names it (`opening`: the lease's columns joined to the store's),
 * else undefined: no row, or a free one.
 */
export const heldIn = (markerRow: unknown): Held | undefined => {
  const found = rowFields(markerRow);
  return found.holder === undefined
    ? undefined
    : { label: found.label, expiresAt: found.expiresAt };
};

/** A new token for `take`; made once per compaction so a run again recognizes its own lease. */
export const token = (): Lease => ({ holder: randomUUID() });

/**
 * Takes the store's lease for `lease`: when it is free, has run out by this
 * process's clock, or is already `lease`'s (a run again after a lost
 * connection). `CompactionBusy` when another compactor holds it.
 */
export const take = (
  state: LogState,
  session: Session,
  lease: Lease,
): Effect.Effect<void, Failure | CompactionBusy> =>
  Effect.gen(function* () {
    const { sql, storeId, path } = state;
    const now = yield* Clock.currentTimeMillis;
    const until = now + state.options.compactionLeaseMs;
    const values = [storeId, lease.holder, label(), until];
    const taken = yield* run(session, sql.leaseTake, [...values, now]);
    if (taken.affected === 1) return;
    let found = yield* leaseRow(sql, session, storeId);
    if (found === undefined) {
      // The store's first compaction makes the row; a racing first one made it already.
      const made = yield* Effect.either(run(session, sql.leaseInsert, values));
      if (made._tag === "Right") return;
      if (made.left.code !== "23505") return yield* Effect.fail(made.left);
      found = yield* leaseRow(sql, session, storeId);
    }
    if (found === undefined || found.holder === lease.holder) return;
    return yield* new CompactionBusy({
      path,
      holder: found.holder ?? "none",
      label: found.label,
      expiresAt: found.expiresAt,
    });
  });

/**
 * Renews `lease` as the first statement of the transaction open on
 * `session`; `CompactionLeaseLost` (naming the new holder) when another
 * compactor took it, so the transaction writes nothing and is rolled back.
 */
export const renew = (
  state: LogState,
  session: Session,
  lease: Lease,
  epoch: number,
): Effect.Effect<void, Failure | CompactionLeaseLost> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis;
    const until = now + state.options.compactionLeaseMs;
    const renewed = yield* run(session, state.sql.leaseRenew, [state.storeId, lease.holder, until]);
    if (renewed.affected === 1) return;
    const found = yield* leaseRow(state.sql, session, state.storeId);
    const held = found?.holder === undefined ? undefined : found;
    return yield* new CompactionLeaseLost({
      path: state.path,
      epoch,
      label: held?.label,
      expiresAt: held?.expiresAt,
    });
  });

/** Frees `lease` if it is still this compaction's (another's is left alone). */
export const release = (state: LogState, session: Session, lease: Lease) =>
  run(session, state.sql.leaseRelease, [state.storeId, lease.holder]);
