/**
 * A conflict answered with the others' records, on a real server
 * (docs/postgres.md, "A conflict answered with the others' records"): once
 * a log has met another writer, its refused append brings back the head
 * and the records others appended, and the catch-up that follows (the
 * log's `refresh`, then its reads) sends no statement of its own; the
 * records served are the table's, and the log's byte count stays the
 * table's. Skipped, with the reason printed, when no server answers.
 */
import { describe, expect, it } from "@effect/vitest";
import { Driver, PgLog, PgSchema } from "@tay/log-postgres";
import { Projection } from "@tay/shell-node";
import { Effect } from "effect";
import { append, inserted } from "./support/events.js";
import * as Server from "./support/server.js";

const server = await Server.locate();
const serverUrl = "url" in server ? server.url : "";

/** A fresh database holding a store, dropped with the scope. */
const store = Effect.acquireRelease(
  Effect.promise(() => Server.freshDatabase(serverUrl)),
  (made) => Effect.promise(() => made.drop()),
).pipe(Effect.tap((made) => PgSchema.init(made.url)));

/** node-postgres, counting the statements its sessions run one at a time (reads, head reads). */
const counted = (url: string) => {
  const counts = { queries: 0 };
  const inner = Driver.nodePg(url);
  const driver: Driver.Driver = {
    connect: async () => {
      const session = await inner.connect();
      if (Driver.isFailure(session)) return session;
      return {
        ...session,
        query: (text, parameters) => {
          counts.queries += 1;
          return session.query(text, parameters);
        },
      };
    },
  };
  return { counts, driver: () => driver };
};

/** The table's rows' bytes, summed. */
const tableBytes = (url: string) =>
  Effect.promise(() =>
    Server.admin(url, async (client) => {
      const result = await client.query(
        "SELECT coalesce(sum(octet_length(record)), 0) AS bytes FROM tay.tay_record",
      );
      return Number(result.rows[0]?.bytes);
    }),
  );

describe.skipIf(!("url" in server))("a conflict answered with the others' records", () => {
  it.scoped(
    "the catch-up after a second conflict reads nothing: the records came with the refusal",
    () =>
      Effect.gen(function* () {
        const { url } = yield* store;
        const { counts, driver } = counted(url);
        // No turns: the second refusal reads the head through the turn otherwise.
        const options = { driver, turnAfterConflicts: 0, followIntervalMs: 0 };
        const loser = (yield* PgLog.open(url, options, Projection.collect)).log;
        const winner = (yield* PgLog.open(url, {}, Projection.collect)).log;
        yield* append(winner, [inserted(1)]);
        // The first refusal: this log has not met another writer yet, so it reads.
        yield* Effect.flip(append(loser, [inserted(9)]));
        yield* loser.refresh?.() ?? Effect.void;
        yield* append(winner, [inserted(2), inserted(3)]);
        yield* append(winner, [inserted(4)]);
        const before = counts.queries;
        const refused = yield* Effect.flip(append(loser, [inserted(9)]));
        expect(refused).toMatchObject({ _tag: "AppendConflict", lastSequence: 4 });
        yield* loser.refresh?.() ?? Effect.void;
        const entries = yield* loser.view.readFrom(2, 100);
        expect(counts.queries - before).toBe(0);
        expect(entries.map((entry) => entry.sequence)).toEqual([2, 3, 4]);
        expect(entries.map((entry) => entry.event)).toEqual([2, 3, 4].map(inserted));
        expect((yield* loser.view.stats()).bytes).toBe(yield* tableBytes(url));
        // And the log goes on from there: its next append commits after them.
        yield* append(loser, [inserted(5)]);
        expect((yield* loser.view.stats()).bytes).toBe(yield* tableBytes(url));
      }),
  );
});
