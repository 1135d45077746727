/**
 * A turn after a conflict, on a real server (docs/postgres.md, "A turn
 * after a conflict"): a writer refused by the guard holds the head row
 * until its next append commits, so another writer's append waits and
 * then conflicts instead of winning again; a turn nobody uses is let go
 * when the engine says it has nothing to append, or after `turnHoldMs`;
 * and two engines racing many producers each, with few retries allowed,
 * answer every insert (without turns, some run out of retries). Skipped,
 * with the reason printed, when no server answers.
 */
import { describe, expect, it } from "@effect/vitest";
import { PgLog, type PgOptions } from "@tay/log-postgres";
import { Engine, Projection, StateProjection } from "@tay/shell-node";
import { Effect, Either, Exit, Fiber } from "effect";
import type pg from "pg";
import { append, inserted } from "./support/events.js";
import * as Server from "./support/server.js";

const server = await Server.locate();
const serverUrl = "url" in server ? server.url : "";

/** A fresh database holding a store, dropped with the scope. */
const store = Server.freshStore(serverUrl);

/** The database's sessions now waiting for a lock, and now idle inside a transaction. */
const sessionsOf = async (client: pg.Client) => {
  const result = await client.query(
    "SELECT count(*) FILTER (WHERE wait_event_type = 'Lock') AS locked, count(*) FILTER (WHERE state = 'idle in transaction') AS idle FROM pg_stat_activity WHERE datname = current_database()",
  );
  const row = result.rows[0];
  return { locked: Number(row?.locked), idle: Number(row?.idle) };
};

/** What `sessionsOf` says now. */
const waiting = (url: string) => Effect.promise(() => Server.admin(url, sessionsOf));

/** Waits until a session of the database waits for a lock (fails after 10 s). */
const untilSomeoneWaits = (url: string) =>
  Effect.promise(() =>
    Server.admin(url, async (client) => {
      const deadline = Date.now() + 10_000;
      while ((await sessionsOf(client)).locked === 0) {
        if (Date.now() > deadline) throw new Error("no session waited for a lock within 10 s");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }),
  );

/** The sequences of the store's rows and the job each inserts. */
const jobsBySequence = (url: string) =>
  Effect.promise(() =>
    Server.admin(url, async (client) => {
      const result = await client.query("SELECT sequence FROM tay.tay_record ORDER BY sequence");
      return result.rows.map((row) => Number(row.sequence));
    }),
  );

/**
 * Two logs over one store, the first refused once (a turn after each
 * conflict, unless `options` say otherwise; `minority`: the first told by
 * its engine that it is a minority writer).
 */
const refusedOnce = (url: string, given: PgOptions.PgLogOptions, minority = false) =>
  Effect.gen(function* () {
    const options = { turnAfterConflicts: 1, ...given };
    const loser = yield* PgLog.open(url, options, Projection.collect);
    const winner = yield* PgLog.open(url, options, Projection.collect);
    if (minority) loser.log.minorityWriter?.(true);
    yield* append(winner.log, [inserted(1)]);
    const refused = yield* Effect.flip(append(loser.log, [inserted(2)]));
    expect(refused).toMatchObject({ _tag: "AppendConflict", expectedLastSequence: 0 });
    return { loser: loser.log, winner: winner.log, refused };
  });

describe.skipIf(!("url" in server))("a turn after a conflict", () => {
  it.scoped(
    "the refused writer's next append commits first; the other writer's waits for it, then conflicts",
    () =>
      Effect.gen(function* () {
        const { url } = yield* store;
        const { loser, winner, refused } = yield* refusedOnce(url, { turnHoldMs: 5_000 });
        expect(loser.view.writes()).toMatchObject({ conflicted: 1, turns: 1 });
        // The conflict says the head is held: the engine catches up without stepping aside.
        expect(refused).toMatchObject({ held: true });
        const raced = yield* Effect.fork(Effect.either(append(winner, [inserted(3)])));
        yield* untilSomeoneWaits(url);
        yield* append(loser, [inserted(2)]);
        const lost = yield* Fiber.join(raced);
        expect(Either.flip(lost)).toEqual(
          Either.right(
            expect.objectContaining({
              _tag: "AppendConflict",
              expectedLastSequence: 1,
              lastSequence: 2,
            }),
          ),
        );
        expect(yield* jobsBySequence(url)).toEqual([1, 2]);
        expect(loser.view.writes()).toMatchObject({ committed: 1, conflicted: 1, turns: 1 });
      }),
  );

  it.scoped("without turns (turnAfterConflicts 0) the other writer's append goes first", () =>
    Effect.gen(function* () {
      const { url } = yield* store;
      // Not even for a minority writer.
      const { loser, winner, refused } = yield* refusedOnce(url, { turnAfterConflicts: 0 }, true);
      expect(loser.view.writes()).toMatchObject({ conflicted: 1, turns: 0 });
      expect("held" in refused).toBe(false);
      yield* append(winner, [inserted(3)]);
      const again = yield* Effect.flip(append(loser, [inserted(2)]));
      expect(again).toMatchObject({ _tag: "AppendConflict", expectedLastSequence: 1 });
    }),
  );

  it.scoped(
    "a writer its engine calls a minority one takes its turn at its first conflict, and not once told otherwise",
    () =>
      Effect.gen(function* () {
        const { url } = yield* store;
        // Turns after 16 conflicts in a row, the default, for a writer that is none.
        const loser = yield* PgLog.open(url, {}, Projection.collect);
        const winner = yield* PgLog.open(url, {}, Projection.collect);
        loser.log.minorityWriter?.(true);
        yield* append(winner.log, [inserted(1)]);
        const refused = yield* Effect.flip(append(loser.log, [inserted(2)]));
        expect(refused).toMatchObject({ _tag: "AppendConflict", held: true });
        expect(loser.log.view.writes()).toMatchObject({ conflicted: 1, turns: 1 });
        yield* append(loser.log, [inserted(2)]);
        loser.log.minorityWriter?.(false);
        yield* winner.log.refresh?.() ?? Effect.void;
        yield* append(winner.log, [inserted(3)]);
        const again = yield* Effect.flip(append(loser.log, [inserted(4)]));
        expect("held" in again).toBe(false);
        expect(loser.log.view.writes()).toEqual({ committed: 1, conflicted: 2, turns: 1 });
      }),
  );

  it.scoped("a commit starts the count of conflicts in a row again", () =>
    Effect.gen(function* () {
      const { url } = yield* store;
      // A turn at the second conflict in a row: refused once, then a commit, then refused once.
      const { loser, winner } = yield* refusedOnce(url, { turnAfterConflicts: 2 });
      yield* append(loser, [inserted(2)]);
      yield* winner.refresh?.() ?? Effect.void;
      yield* append(winner, [inserted(3)]);
      const again = yield* Effect.flip(append(loser, [inserted(4)]));
      expect(again).toMatchObject({ _tag: "AppendConflict", expectedLastSequence: 2 });
      expect(loser.view.writes()).toEqual({ committed: 1, conflicted: 2, turns: 0 });
    }),
  );

  it.scoped("a refusal by a head in another epoch lets its turn go at once", () =>
    Effect.gen(function* () {
      const { url } = yield* store;
      const options = { turnAfterConflicts: 1, turnHoldMs: 5_000 };
      const behind = yield* PgLog.open(url, options, Projection.collect);
      const compacting = yield* PgLog.open(url, options, Projection.collect);
      yield* compacting.log.compact([inserted(1)], 0);
      // The turn's head is epoch 2's: the log must follow it there first, holding nothing.
      const refused = yield* Effect.flip(append(behind.log, [inserted(2)]));
      expect(refused).toMatchObject({ _tag: "AppendConflict", expectedLastSequence: 0 });
      expect(behind.log.view.writes()).toMatchObject({ conflicted: 1, turns: 1 });
      expect("held" in refused).toBe(false);
      expect((yield* waiting(url)).idle).toBe(0);
    }),
  );

  it.scoped("a turn is let go at once when the engine caught up with nothing to append", () =>
    Effect.gen(function* () {
      const { url } = yield* store;
      const { loser, winner } = yield* refusedOnce(url, { turnHoldMs: 5_000 });
      const raced = yield* Effect.fork(append(winner, [inserted(3)]));
      yield* untilSomeoneWaits(url);
      const told = performance.now();
      loser.caughtUp?.();
      yield* Fiber.join(raced);
      // Held for 5 s otherwise.
      expect(performance.now() - told).toBeLessThan(2_500);
      expect(yield* jobsBySequence(url)).toEqual([1, 2]);
      expect((yield* waiting(url)).idle).toBe(0);
    }),
  );

  it.scoped("a turn nobody uses is let go after turnHoldMs", () =>
    Effect.gen(function* () {
      const { url } = yield* store;
      const { winner } = yield* refusedOnce(url, { turnHoldMs: 300 });
      yield* append(winner, [inserted(3)]);
      expect(yield* jobsBySequence(url)).toEqual([1, 2]);
      expect((yield* waiting(url)).idle).toBe(0);
    }),
  );

  it.scoped("the log's own compaction lets its turn go and runs", () =>
    Effect.gen(function* () {
      const { url } = yield* store;
      const { loser, winner } = yield* refusedOnce(url, { turnHoldMs: 5_000 });
      const report = yield* loser.compact([inserted(1)], loser.lastSequence());
      expect(report.epoch).toBe(2);
      expect((yield* waiting(url)).idle).toBe(0);
      // The winner follows onto the new generation and appends after it.
      yield* Effect.flip(append(winner, [inserted(3)]));
      yield* winner.refresh?.() ?? Effect.void;
      yield* append(winner, [inserted(3)]);
    }),
  );
});

/** An engine over the store at `url` with `options`, for the scope. */
const engineOver = (url: string, options: PgOptions.PgLogOptions, retries: number) =>
  Effect.flatMap(
    PgLog.open(url, { followIntervalMs: 0, ...options }, StateProjection.foldProjection),
    (recovered) =>
      Engine.fromLog(recovered, {
        timers: false,
        rescueOnOpen: false,
        conflictRetriesMax: retries,
      }),
  );

/** `producers` fibers inserting `each` jobs one after another on `engine`: how many were refused. */
const producing = (engine: Engine.EngineService<PgLog.PgKind>, producers: number, each: number) =>
  Effect.map(
    Effect.all(
      Array.from({ length: producers }, () =>
        Effect.forEach(
          Array.from({ length: each }, (_, index) => index),
          (index) => Effect.exit(engine.insert({ queue: "q", worker: "W", args: index })),
        ),
      ),
      { concurrency: "unbounded" },
    ),
    (exits) => exits.flat().filter(Exit.isFailure).length,
  );

/**
 * Two engines on one store racing 64 producers each, a command decided
 * again at most once: refusals and contention.
 */
const race = (options: PgOptions.PgLogOptions) =>
  Effect.gen(function* () {
    const { url } = yield* store;
    const left = yield* engineOver(url, options, 1);
    const right = yield* engineOver(url, options, 1);
    const [leftRefused, rightRefused] = yield* Effect.all(
      [producing(left, 64, 8), producing(right, 64, 8)],
      { concurrency: "unbounded" },
    );
    const exhausted = left.contention().exhausted + right.contention().exhausted;
    const conflicts = left.contention().conflicts + right.contention().conflicts;
    return { refused: leftRefused + rightRefused, exhausted, conflicts, url };
  });

describe.skipIf(!("url" in server))("two engines racing, few retries allowed", () => {
  it.scoped(
    "with turns every insert of 2 × 64 producers commits; the store holds all of them",
    () =>
      Effect.gen(function* () {
        const { refused, exhausted, conflicts, url } = yield* race({ turnAfterConflicts: 1 });
        // The race must have conflicted for this to say anything.
        expect(conflicts).toBeGreaterThan(0);
        expect({ refused, exhausted }).toEqual({ refused: 0, exhausted: 0 });
        expect((yield* jobsBySequence(url)).length).toBe(2 * 64 * 8);
      }),
    120_000,
  );
});
