/**
 * The append as one script (one round trip, docs/postgres.md "One round
 * trip per append"), on PGlite: the guard is still the conflict check when
 * another writer's head landed exactly where this append's would (the case
 * that only the marker tells apart), a compaction by another writer leaves
 * the old epoch untouched, and a run again after a lost connection
 * recognises its own commit, or commits when the first run never reached
 * the server.
 */
import type { PGlite } from "@electric-sql/pglite";
import type { Event } from "@tay/core";
import { Driver, PgLog, type PgOptions, PgSchema } from "@tay/log-postgres";
import { Batch, type Log, LogError, Projection, Ticket } from "@tay/shell-node";
import { Effect, Either } from "effect";
import { describe, expect, it } from "vitest";
import * as Pglite from "./support/pglite.js";
import { inserted, run } from "./support/events.js";

const pglite = Pglite.perFile("s");
const database = (): PGlite => pglite.database();

const url = "postgres://tester@pglite.invalid:5432/memory";
const fresh = (extra: PgOptions.PgLogOptions = {}): PgOptions.PgLogOptions =>
  pglite.fresh({ reconnectDelayMs: 1, ...extra });

const openCollect = (options: PgOptions.PgLogOptions) =>
  PgLog.open(url, options, Projection.collect);

/** Appends `events` after what `log` believes is the last sequence; waits for the outcome. */
const append = (log: Log.Log<PgLog.PgKind>, events: ReadonlyArray<Event.Event>) =>
  Effect.gen(function* () {
    const batch = Either.getOrThrow(Batch.prepare(events));
    const ticket = log.append(batch, log.lastSequence());
    if (ticket instanceof LogError.AppendConflict) return yield* Effect.fail(ticket);
    yield* Ticket.wait(ticket);
  });

const rows = async (schema: string) =>
  (
    await database().query<{ epoch: number; sequence: number }>(
      `SELECT epoch, sequence FROM ${schema}.tay_record ORDER BY epoch, sequence`,
    )
  ).rows;

const head = async (schema: string) =>
  (await database().query(`SELECT epoch, last_sequence FROM ${schema}.tay_current`)).rows;

/**
 * A driver whose first append script is cut off: with `after`, it runs on
 * the server and its answer is lost (the commit happened); without, it
 * never reaches the server. Either way the caller sees a lost connection.
 */
const cutting = (inner: Driver.Driver, after: boolean) => {
  let cut = false;
  const driver: Driver.Driver = {
    connect: async () => {
      const session = await inner.connect();
      if (Driver.isFailure(session)) return session;
      const script = session.script;
      if (script === undefined) return session;
      return {
        ...session,
        script: async (text: string) => {
          if (cut || !text.includes("tay_record")) return script(text);
          cut = true;
          if (after) await script(text);
          const lost: Driver.Failure = {
            _tag: "DriverFailure",
            connection: true,
            code: "ECONNRESET",
            detail: "cut by the test",
          };
          return lost;
        },
      };
    },
  };
  return { driver, cut: () => cut };
};

describe("the append script", () => {
  it("another writer's head at exactly this append's last: a conflict, nothing written", async () => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    const failed = await run(
      Effect.gen(function* () {
        const first = yield* openCollect(options);
        const second = yield* openCollect(options);
        yield* append(second.log, [inserted(1)]);
        // The first log expects 0 and would move the head to 1: where it is now.
        return yield* Effect.flip(append(first.log, [inserted(7)]));
      }),
    );
    expect(failed).toMatchObject({
      _tag: "AppendConflict",
      expectedLastSequence: 0,
      lastSequence: 1,
    });
    expect(await rows(options.schema ?? "")).toEqual([{ epoch: 1, sequence: 1 }]);
    const reopened = await run(openCollect(options));
    expect(reopened.state).toEqual([{ sequence: 1, event: inserted(1) }]);
  });

  it("another writer compacted: the append conflicts and writes nothing under the old epoch", async () => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    const failed = await run(
      Effect.gen(function* () {
        const first = yield* openCollect(options);
        const second = yield* openCollect(options);
        // The second compacts an empty log: epoch 2, the head still at 0.
        yield* second.log.compact([inserted(1)], 0);
        const conflict = yield* Effect.flip(append(first.log, [inserted(9)]));
        // The head's sequence is epoch 2's: not the first log's until a refresh moves it there.
        const before = first.log.lastSequence();
        yield* first.log.refresh?.() ?? Effect.void;
        return { conflict, before, after: first.log.lastSequence() };
      }),
    );
    expect(failed).toMatchObject({
      conflict: { _tag: "AppendConflict", expectedLastSequence: 0 },
      before: 0,
      after: 1,
    });
    expect(await rows(options.schema ?? "")).toEqual([{ epoch: 2, sequence: 1 }]);
    expect(await head(options.schema ?? "")).toEqual([{ epoch: 2, last_sequence: 1 }]);
  });

  it.each([
    ["committed before its answer was lost: the run again recognises its records", true],
    ["lost before it reached the server: the run again commits", false],
  ])("a lost connection, the script %s", async (_, after) => {
    const cutter = cutting(Pglite.driver(database()), after);
    const options = fresh({ driver: () => cutter.driver });
    await run(PgSchema.init(url, fresh({ schema: options.schema ?? "" })));
    const writes = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        yield* append(log, [inserted(1), inserted(2)]);
        yield* append(log, [inserted(3)]);
        return log.view.writes();
      }),
    );
    expect(cutter.cut()).toBe(true);
    expect(writes).toEqual({ committed: 2, conflicted: 0, turns: 0 });
    expect(await rows(options.schema ?? "")).toEqual([
      { epoch: 1, sequence: 1 },
      { epoch: 1, sequence: 2 },
      { epoch: 1, sequence: 3 },
    ]);
    expect(await head(options.schema ?? "")).toEqual([{ epoch: 1, last_sequence: 3 }]);
  });
});
