/**
 * A transient refusal inside the writer's transaction, on a real server: the
 * server refuses an INSERT with a serialization failure (40001, planted once
 * by a trigger), which aborts the transaction but leaves the connection up,
 * so the writer must ROLLBACK before it runs the transaction again on the
 * same connection. Each path that holds an explicit transaction open (a
 * statement at a time, and an append inside a turn) commits the append once
 * and goes on; skipped, with the reason printed, when no server answers.
 */
import { describe, expect, it } from "@effect/vitest";
import { Driver, PgLog, type PgOptions } from "@tay/log-postgres";
import { Projection } from "@tay/shell-node";
import { Effect } from "effect";
import { append, inserted } from "./support/events.js";
import * as Pglite from "./support/pglite.js";
import * as Server from "./support/server.js";

const server = await Server.locate();
const serverUrl = "url" in server ? server.url : "";

/** A fresh database holding a store, dropped (with the trigger below) with the scope. */
const store = Server.freshStore(serverUrl);

/**
 * From now on, the first row inserted into the records table is refused with
 * 40001. A sequence counts the tries: unlike a row, it is not rolled back
 * with the refused transaction.
 */
const refuseNextInsertOnce = (url: string) =>
  Effect.promise(() =>
    Server.admin(url, async (client) => {
      await client.query("CREATE SEQUENCE tay.refusals");
      await client.query(`CREATE FUNCTION tay.refuse_once() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF nextval('tay.refusals') = 1 THEN
            RAISE EXCEPTION 'planted serialization failure' USING ERRCODE = '40001';
          END IF;
          RETURN NEW;
        END $$`);
      await client.query(
        "CREATE TRIGGER refuse_once BEFORE INSERT ON tay.tay_record FOR EACH ROW EXECUTE FUNCTION tay.refuse_once()",
      );
    }),
  );

/** How many rows the trigger saw (the refused one included), and the store's sequences. */
const afterwards = (url: string) =>
  Effect.promise(() =>
    Server.admin(url, async (client) => {
      const tries = await client.query("SELECT last_value FROM tay.refusals");
      const rows = await client.query("SELECT sequence FROM tay.tay_record ORDER BY sequence");
      return {
        tries: Number(tries.rows[0]?.last_value),
        sequences: rows.rows.map((row) => Number(row.sequence)),
      };
    }),
  );

/** The options of a log that sends one statement at a time inside BEGIN and COMMIT. */
const stepwise = (url: string): PgOptions.PgLogOptions => ({
  driver: () => Pglite.stepwise(Driver.nodePg(url)),
  reconnectDelayMs: 1,
});

/** The database's sessions idle inside a transaction now. */
const idleInTransaction = (url: string) =>
  Effect.promise(() =>
    Server.admin(url, async (client) => {
      const result = await client.query(
        "SELECT count(*) AS idle FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'",
      );
      return Number(result.rows[0]?.idle);
    }),
  );

/**
 * A log refused once by another's append, so that its next append runs
 * inside a turn; the refusal planted once the turn is taken.
 */
const inATurn = (url: string) =>
  Effect.gen(function* () {
    const options = { turnAfterConflicts: 1, turnHoldMs: 5_000, reconnectDelayMs: 1 };
    const loser = yield* PgLog.open(url, options, Projection.collect);
    const winner = yield* PgLog.open(url, options, Projection.collect);
    yield* append(winner.log, [inserted(1)]);
    const refused = yield* Effect.flip(append(loser.log, [inserted(2)]));
    expect(refused).toMatchObject({ _tag: "AppendConflict" });
    expect(loser.log.view.writes()).toMatchObject({ turns: 1 });
    yield* refuseNextInsertOnce(url);
    // The turn is still held (its transaction open, the head row locked)
    // as the append starts: the append runs inside it.
    expect(yield* idleInTransaction(url)).toBe(1);
    return loser.log;
  });

/** A statement-at-a-time log over an empty store, the refusal planted. */
const aloneStepwise = (url: string) =>
  Effect.gen(function* () {
    const { log } = yield* PgLog.open(url, stepwise(url), Projection.collect);
    yield* refuseNextInsertOnce(url);
    return log;
  });

describe.skipIf(!("url" in server))("a transient refusal inside the writer's transaction", () => {
  const paths = [
    { path: "a statement at a time", writer: aloneStepwise, sequence: 1 },
    { path: "an append inside a turn", writer: inATurn, sequence: 2 },
  ];
  for (const { path, writer, sequence } of paths) {
    // Live: the run again waits reconnectDelayMs on the real clock.
    it.scopedLive(`${path}: rolled back, run again on the same connection, committed once`, () =>
      Effect.gen(function* () {
        const { url } = yield* store;
        const log = yield* writer(url);
        // Without the ROLLBACK the run again meets 25P02 (the transaction
        // is aborted) and the log stops with DatabaseError.
        yield* append(log, [inserted(sequence)]);
        yield* append(log, [inserted(sequence + 1)]);
        const found = yield* afterwards(url);
        // Refused once, then the run again's row, then the next append's.
        expect(found.tries).toBe(3);
        expect(found.sequences.slice(-2)).toEqual([sequence, sequence + 1]);
        expect(log.lastSequence()).toBe(sequence + 1);
      }),
    );
  }
});
