/**
 * The PostgreSQL log on a real server, each test in a database of its
 * own: the engine end to end over it (a reopen folds to the state the
 * engine held), an append after another writer's refused with nothing
 * written, compaction through the engine and a reopen, a corrupt row
 * refused by epoch and sequence, the rows byte for byte the file store's
 * records for the same commands, and dropped connections (before and
 * after COMMIT, and for good), and a claim parked on one engine woken by
 * another engine's insert (NOTIFY, and polling without it). Skipped, with the reason printed, when no
 * server answers (see test/support/server.ts).
 */
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { decodeRecord, encodeRecord } from "@tay/codec";
import { Event, State } from "@tay/core";
import { Driver, PgLog, type PgOptions, PgSchema } from "@tay/log-postgres";
import {
  Batch,
  Engine,
  type Log,
  LogError,
  NodeDisk,
  Projection,
  StateProjection,
} from "@tay/shell-node";
import { Effect, Either, Fiber } from "effect";
import { append } from "./support/events.js";
import * as Pglite from "./support/pglite.js";
import * as Server from "./support/server.js";

const server = await Server.locate();
const serverUrl = "url" in server ? server.url : "";

/** A fresh database, its URL given a password that must never be printed, dropped with the scope. */
const database = Effect.acquireRelease(
  Effect.promise(() => Server.freshDatabase(serverUrl)),
  (made) => Effect.promise(() => made.drop()),
).pipe(
  Effect.map((made) => {
    const url = new URL(made.url);
    if (url.password === "") url.password = "sekrit";
    return { url: url.toString(), password: url.password };
  }),
);

const withPgEngine = <A, E>(
  url: string,
  body: (engine: Engine.EngineService<PgLog.PgKind>) => Effect.Effect<A, E>,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const recovered = yield* PgLog.open(url, {}, StateProjection.foldProjection);
      return yield* body(yield* Engine.fromLog(recovered, { timers: false }));
    }),
  );

/** Insert two jobs, claim one, complete it: the engine's state after. */
const workload = <K extends Log.Kind>(engine: Engine.EngineService<K>) =>
  Effect.gen(function* () {
    yield* engine.insert({ queue: "q", worker: "W", args: "low", priority: 5 });
    yield* engine.insert({ queue: "q", worker: "W", args: "high", priority: 1 });
    const [claimed] = yield* engine.claim("q", 1);
    expect(claimed?.jobId).toBe(2);
    yield* engine.complete(2, new Map([["ok", true]]));
    return yield* engine.state();
  });

const inserted = (jobId: number): Event.Event =>
  Event.jobInserted({
    jobId,
    queue: "default",
    worker: "W",
    args: null,
    priority: 0,
    maxAttempts: 1,
    scheduledAt: 0,
    insertedAt: 0,
  });

const rowsOf = (url: string) =>
  Effect.promise(() =>
    Server.admin(url, async (client) => {
      const result = await client.query(
        "SELECT epoch, sequence, record FROM tay.tay_record ORDER BY epoch, sequence",
      );
      return result.rows.map((row) => ({
        epoch: Number(row.epoch),
        sequence: Number(row.sequence),
        record: new Uint8Array(row.record),
      }));
    }),
  );

describe.skipIf(!("url" in server))("on a PostgreSQL server", () => {
  it.scoped("the engine inserts, claims and completes; a reopen folds to the same state", () =>
    Effect.gen(function* () {
      const { url } = yield* database;
      yield* PgSchema.init(url);
      const held = yield* withPgEngine(url, workload);
      const reopened = yield* withPgEngine(url, (engine) =>
        Effect.sync(() => ({ report: engine.report, state: engine.promises.state() })),
      );
      expect(State.equals(reopened.state, held)).toBe(true);
      expect(reopened.report).toMatchObject({ epoch: 1, lastSequence: 4, synchronousCommit: "on" });
    }),
  );

  it.scoped("a BIGINT of sixteen digits, read as text, up to 2^53-1 is taken whole", () =>
    Effect.gen(function* () {
      const { url } = yield* database;
      yield* PgSchema.init(url);
      yield* Effect.promise(() =>
        Server.admin(url, async (client) => {
          await client.query(`UPDATE tay.tay_store SET created_at = ${Number.MAX_SAFE_INTEGER}`);
          await client.query("UPDATE tay.tay_generation SET created_at = 1000000000000000");
        }),
      );
      const { report } = yield* PgLog.open(url, {}, Projection.collect);
      expect(report).toMatchObject({ createdAt: Number.MAX_SAFE_INTEGER, epoch: 1 });
    }),
  );

  it.scoped("an append after another writer's is AppendConflict and writes nothing", () =>
    Effect.gen(function* () {
      const { url } = yield* database;
      yield* PgSchema.init(url);
      const first = yield* PgLog.open(url, {}, Projection.collect);
      const second = yield* PgLog.open(url, {}, Projection.collect);
      yield* append(second.log, [inserted(1)]);
      const stale = first.log.append(Either.getOrThrow(Batch.prepare([inserted(9)])), 5);
      expect(stale).toBeInstanceOf(LogError.AppendConflict);
      const failed = yield* Effect.flip(append(first.log, [inserted(9)]));
      expect(failed).toMatchObject({
        _tag: "AppendConflict",
        expectedLastSequence: 0,
        lastSequence: 1,
      });
      const rows = yield* rowsOf(url);
      expect(rows.map((row) => row.sequence)).toEqual([1]);
    }),
  );

  it.scoped(
    "compaction through the engine writes epoch 2 and deletes epoch 1; a reopen agrees",
    () =>
      Effect.gen(function* () {
        const { url } = yield* database;
        yield* PgSchema.init(url);
        const after = yield* withPgEngine(url, (engine) =>
          Effect.gen(function* () {
            yield* workload(engine);
            const report = yield* engine.compact(0);
            expect(report).toMatchObject({ epoch: 2, firstSequence: 5, removed: [1] });
            yield* engine.insert({ queue: "q", worker: "W", args: "after" });
            return yield* engine.state();
          }),
        );
        const rows = yield* rowsOf(url);
        expect(new Set(rows.map((row) => row.epoch))).toEqual(new Set([2]));
        const reopened = yield* withPgEngine(url, (engine) =>
          Effect.sync(() => ({ report: engine.report, state: engine.promises.state() })),
        );
        expect(State.equals(reopened.state, after)).toBe(true);
        expect(reopened.report).toMatchObject({ epoch: 2, parentEpoch: 1, firstSequence: 5 });
      }),
  );

  it.scoped(
    "a corrupt row is CorruptRecord naming its epoch and sequence, without the password",
    () =>
      Effect.gen(function* () {
        const { url, password } = yield* database;
        yield* PgSchema.init(url);
        yield* withPgEngine(url, workload);
        yield* Effect.promise(() =>
          Server.admin(url, (client) =>
            client.query(
              "UPDATE tay.tay_record SET record = set_byte(record, 40, get_byte(record, 40) # 16) WHERE sequence = 3",
            ),
          ),
        );
        const refused = yield* Effect.flip(
          Effect.scoped(PgLog.open(url, {}, StateProjection.foldProjection)),
        );
        expect(refused).toMatchObject({
          _tag: "CorruptRecord",
          reason: "RecordChecksum",
          epoch: 1,
          sequence: 3,
        });
        expect(refused.message).toContain("#tay.default epoch 1 sequence 3: ");
        expect(refused.message).not.toContain(password);
      }),
  );

  it.scoped(
    "the rows are the file store's records byte for byte, and the codec reads them back",
    () =>
      Effect.gen(function* () {
        const { url } = yield* database;
        yield* PgSchema.init(url);
        yield* withPgEngine(url, workload);
        const directory = yield* Effect.acquireRelease(
          Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tay-pg-"))),
          (made) => Effect.promise(() => fs.rm(made, { recursive: true, force: true })),
        );
        const data = path.join(directory, "data");
        yield* Effect.scoped(
          Effect.flatMap(Engine.open(data, { createIfMissing: true, timers: false }), workload),
        ).pipe(Effect.provide(NodeDisk.layer));
        const segment = yield* Effect.promise(() =>
          fs.readFile(
            path.join(
              data,
              "epochs",
              "00000000000000000001",
              "segments",
              "00000000000000000001.tay",
            ),
          ),
        );
        const rows = yield* rowsOf(url);
        const joined = Buffer.concat(rows.map((row) => row.record));
        // The active segment: a 44-byte header, then the records back to back.
        expect(joined.equals(segment.subarray(44))).toBe(true);
        for (const row of rows) {
          const decoded = decodeRecord(row.record, 0);
          if (decoded._tag !== "Record") throw new Error(`row ${row.sequence}: ${decoded._tag}`);
          expect(decoded.record.sequence).toBe(row.sequence);
          const again = encodeRecord(decoded.record);
          expect(again._tag === "Right" && Buffer.from(again.right).equals(row.record)).toBe(true);
        }
      }),
  );
});

/**
 * A node-postgres driver whose `plan` says what happens to a statement:
 * run it and then drop the connection (the client never hears that COMMIT
 * returned), or drop it before sending. Reconnections may be refused.
 */
const faulty = (
  url: string,
  plan: {
    dropAfter?: string;
    dropBefore?: string;
    refuseReconnect?: boolean;
    /**
     * The append's one round trip, on the path named (its script, sent by
     * node-postgres' simple query, or its batch of prepared statements):
     * dropped after it ran, or before it was sent. The sessions then offer
     * both `script` and `batch`, so only the log's `oneTrip` picks the path.
     */
    trip?: { readonly path: "script" | "batch"; readonly when: "dropAfter" | "dropBefore" };
  },
) => {
  const inner = Driver.nodePg(url);
  let dropped = false;
  let connections = 0;
  // The paths whose first append was dropped (a test checks the planned one was taken).
  const droppedOn: Array<"script" | "batch"> = [];
  const lost: Driver.Failure = {
    _tag: "DriverFailure",
    connection: true,
    code: "ECONNRESET",
    detail: "planted",
  };
  const driver: Driver.Driver = {
    connect: async () => {
      connections += 1;
      if (dropped && plan.refuseReconnect === true) {
        return { ...lost, detail: "planted: the server is unreachable" };
      }
      const session = await inner.connect();
      if (Driver.isFailure(session)) return session;
      // Only the COMMIT of an append (one after an INSERT) is dropped, not open's.
      let inserting = false;
      return {
        query: async (text, parameters) => {
          if (text.startsWith("INSERT")) inserting = true;
          if (!dropped && plan.dropBefore !== undefined && text.startsWith(plan.dropBefore)) {
            dropped = true;
            await session.close();
            return lost;
          }
          const result = await session.query(text, parameters);
          if (
            !dropped &&
            inserting &&
            plan.dropAfter !== undefined &&
            text.startsWith(plan.dropAfter)
          ) {
            dropped = true;
            await session.close();
            return lost;
          }
          return result;
        },
        ...(plan.trip === undefined
          ? {}
          : { script: scriptOf(session, plan.trip), batch: batchOf(session, plan.trip) }),
        close: session.close,
      };
    },
  };
  type Trip = NonNullable<typeof plan.trip>;
  /** Runs `send`, or drops the connection around it if it is the planned path's first append. */
  const dropFirst = async <A>(
    session: Driver.Session,
    trip: Trip,
    path: Trip["path"],
    appending: boolean,
    send: () => Promise<A | Driver.Failure>,
  ): Promise<A | Driver.Failure> => {
    if (dropped || !appending || trip.path !== path) return send();
    dropped = true;
    droppedOn.push(path);
    if (trip.when === "dropAfter") await send();
    await session.close();
    return lost;
  };
  // The session's script, dropping the first append script as planned.
  const scriptOf = (session: Driver.Session, trip: Trip) => {
    const script = session.script;
    return async (text: string) =>
      script === undefined
        ? lost
        : dropFirst(session, trip, "script", text.includes("tay_record"), () => script(text));
  };
  // The session's batch, dropping the first append batch as planned.
  const batchOf = (session: Driver.Session, trip: Trip) => {
    const batch = session.batch;
    return async (statements: ReadonlyArray<Driver.Bound>) => {
      if (batch === undefined) return lost;
      const appending = statements.some((statement) => statement.text.includes("tay_record"));
      return dropFirst(session, trip, "batch", appending, () => batch(statements));
    };
  };
  return { driver, connections: () => connections, dropped: () => [...droppedOn] };
};

describe.skipIf(!("url" in server))("a dropped connection", () => {
  const options = { reconnectDelayMs: 10, reconnectAttemptsMax: 2 };

  it.live(
    "after COMMIT ran: the reconnected writer finds its records and the append succeeds once",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { url } = yield* database;
          yield* PgSchema.init(url);
          const { driver, connections } = faulty(url, { dropAfter: "COMMIT" });
          const { log } = yield* PgLog.open(
            url,
            { ...options, driver: () => driver },
            Projection.collect,
          );
          yield* append(log, [inserted(1), inserted(2)]);
          yield* append(log, [inserted(3)]);
          expect(connections()).toBeGreaterThanOrEqual(2);
          expect((yield* rowsOf(url)).map((row) => row.sequence)).toEqual([1, 2, 3]);
        }),
      ),
  );

  it.live.each([
    ["script", "dropAfter"],
    ["script", "dropBefore"],
    ["batch", "dropAfter"],
    ["batch", "dropBefore"],
  ] as const)(
    "the append's one round trip (%s), %s: the run again on a new connection commits once",
    ([path, when]) =>
      Effect.scoped(
        Effect.gen(function* () {
          const { url } = yield* database;
          yield* PgSchema.init(url);
          // The session offers both ways; `oneTrip` alone chooses the path.
          const { driver, connections, dropped } = faulty(url, { trip: { path, when } });
          // A turn at every refusal: a run again's refused guard is its own commit, not a conflict.
          const { log } = yield* PgLog.open(
            url,
            { ...options, oneTrip: path, turnAfterConflicts: 1, driver: () => driver },
            Projection.collect,
          );
          yield* append(log, [inserted(1), inserted(2)]);
          yield* append(log, [inserted(3)]);
          expect(connections()).toBeGreaterThanOrEqual(2);
          expect(dropped()).toEqual([path]);
          expect(log.view.writes()).toEqual({ committed: 2, conflicted: 0, turns: 0 });
          expect((yield* rowsOf(url)).map((row) => row.sequence)).toEqual([1, 2, 3]);
        }),
      ),
  );

  it.live("before COMMIT: the transaction runs again on a new connection", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { url } = yield* database;
        yield* PgSchema.init(url);
        const { driver } = faulty(url, { dropBefore: "INSERT" });
        const { log } = yield* PgLog.open(
          url,
          { ...options, driver: () => driver },
          Projection.collect,
        );
        yield* append(log, [inserted(1)]);
        expect((yield* rowsOf(url)).map((row) => row.sequence)).toEqual([1]);
      }),
    ),
  );

  it.live(
    "for good: ConnectionLost (outcome unknown), the log stops, a reopen reads what committed",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { url } = yield* database;
          yield* PgSchema.init(url);
          const { driver } = faulty(url, { dropAfter: "COMMIT", refuseReconnect: true });
          const opened = yield* Effect.scoped(
            Effect.gen(function* () {
              const { log } = yield* PgLog.open(
                url,
                { ...options, driver: () => driver },
                Projection.collect,
              );
              const failed = yield* Effect.flip(append(log, [inserted(1)]));
              expect(failed).toMatchObject({
                _tag: "ConnectionLost",
                lastSequence: 1,
                attempts: 2,
                // The first lost connection (what left the outcome unknown), then the last refusal.
                detail: "planted; then planted: the server is unreachable",
              });
              expect(log.admission()._tag).toBe("Refused");
            }),
          ).pipe(Effect.zipRight(Effect.scoped(PgLog.open(url, {}, Projection.collect))));
          // It had committed: the reopen says so.
          expect(opened.report.lastSequence).toBe(1);
        }),
      ),
  );

  it.live("pg_terminate_backend between appends: the next append reconnects and commits", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { url } = yield* database;
        yield* PgSchema.init(url);
        const { log } = yield* PgLog.open(url, options, Projection.collect);
        yield* append(log, [inserted(1)]);
        const name = new URL(url).pathname.slice(1);
        const killed = yield* Effect.promise(() =>
          Server.admin(url, (client) =>
            client.query(
              "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
              [name],
            ),
          ),
        );
        expect(killed.rowCount).toBeGreaterThanOrEqual(1);
        yield* append(log, [inserted(2)]);
        expect((yield* rowsOf(url)).map((row) => row.sequence)).toEqual([1, 2]);
      }),
    ),
  );
});

describe.skipIf(!("url" in server))("wake-ups across engines", () => {
  /**
   * Appends a probe with `writer` every 250 ms (10 s at most) until `told`
   * grows: the follower listens from then on. Then waits until no tell came
   * for `settleMs` (the intervals the probes started ran out) and answers how many tells
   * the probes caused, left out of the test's count. A fixed sleep was too
   * short under load: a first notification sent before the follower
   * listened was missed (CI, 2026-12-03).
   */
  const heardBy = (writer: Log.Log<PgLog.PgKind>, told: ReadonlyArray<number>, settleMs: number) =>
    Effect.gen(function* () {
      const until = Date.now() + 10_000;
      for (let probe = 1_000_000; told.length === 0 && Date.now() < until; probe++) {
        yield* append(writer, [inserted(probe)]);
        yield* Effect.sleep("250 millis");
      }
      // A tell owed for later probes may come meanwhile: quiet for `settleMs` after the last.
      while (performance.now() - (told.at(-1) ?? 0) < settleMs) yield* Effect.sleep("50 millis");
      return told.length;
    });

  /** Two engines on one store: `waiting` parks a claim, `inserting` inserts; how long the claim took. */
  /** The node-postgres driver, counting head reads on the sessions connected once `counting` is set. */
  const headPolls = (url: string) => {
    const inner = Driver.nodePg(url);
    const polls = { counting: false, reads: 0, driver: inner };
    polls.driver = {
      connect: async () => {
        const counted = polls.counting;
        const session = await inner.connect();
        if (Driver.isFailure(session)) return session;
        return {
          ...session,
          query: async (text, parameters) => {
            const result = await session.query(text, parameters);
            const head = text.startsWith("SELECT epoch, last_sequence FROM");
            if (counted && head && !text.endsWith("FOR UPDATE")) {
              polls.reads += 1;
            }
            return result;
          },
        };
      },
    };
    return polls;
  };

  const wakeAcross = (url: string, waitingOptions: PgOptions.PgLogOptions, waitMs: number) =>
    Effect.scoped(
      Effect.gen(function* () {
        const polls = headPolls(url);
        const open = (logOptions: PgOptions.PgLogOptions) =>
          Effect.flatMap(PgLog.open(url, logOptions, StateProjection.foldProjection), (recovered) =>
            Effect.suspend(() => {
              // From here on, head reads on new sessions are the follower's looks.
              polls.counting = true;
              return Engine.fromLog(recovered, { timers: false, rescueOnOpen: false });
            }),
          );
        const waiting = yield* open({ ...waitingOptions, driver: () => polls.driver });
        const inserting = yield* open({});
        const controller = new AbortController();
        const claim = waiting.promises.nextJobs([{ queue: "q", limit: 1 }], {
          signal: controller.signal,
        });
        // The waiting engine's follower looks at the head once it is
        // connected (and listening, where it may): an insert before that
        // look would be found by it, polled or not.
        const connecting = Date.now() + 10_000;
        while (polls.reads === 0 && Date.now() < connecting) yield* Effect.sleep("5 millis");
        // The waiting engine hears the other's commits before the insert (its
        // follower connected and listening, or polling where it may not listen).
        const until = Date.now() + 10_000;
        while (waiting.promises.state().jobs.size === 0 && Date.now() < until) {
          yield* inserting.insert({ queue: "probe", worker: "W", args: null });
          yield* Effect.sleep("250 millis");
        }
        const started = Date.now();
        const job = yield* inserting.insert({ queue: "q", worker: "W", args: "across" });
        const timeout = setTimeout(() => controller.abort(), waitMs);
        const jobs = yield* Effect.promise(() => claim);
        clearTimeout(timeout);
        return { jobs, jobId: job.jobId, ms: Date.now() - started };
      }),
    );

  it.live("a claim parked on one engine wakes by NOTIFY when another engine inserts", () =>
    Effect.gen(function* () {
      const { url } = yield* database;
      yield* PgSchema.init(url);
      // Polling every minute: only the notification can wake it within the test.
      const woke = yield* wakeAcross(url, { pollIntervalMs: 60_000 }, 10_000);
      expect(woke.jobs.map((job) => job.jobId)).toEqual([woke.jobId]);
      expect(woke.ms).toBeLessThan(10_000);
    }).pipe(Effect.scoped),
  );

  it.live("a burst of others' commits is told at once, then once per followIntervalMs", () =>
    Effect.gen(function* () {
      const { url } = yield* database;
      yield* PgSchema.init(url);
      const intervalMs = 1_500;
      const options = { followIntervalMs: intervalMs, pollIntervalMs: 60_000 };
      const follower = yield* PgLog.open(url, options, Projection.collect);
      const writer = yield* PgLog.open(url, {}, Projection.collect);
      const told: Array<number> = [];
      const unwatch = follower.log.watchOthers?.(() => told.push(performance.now()));
      // The writer's follower session is what sends its notifications.
      const unwatchWriter = writer.log.watchOthers?.(() => {});
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => [unwatch, unwatchWriter].map((f) => f?.())),
      );
      // The follower's last tell (of the probes) an interval old: the burst is told at once.
      const probes = yield* heardBy(writer.log, told, intervalMs + 300);
      const started = performance.now();
      for (let jobId = 1; jobId <= 20; jobId++) yield* append(writer.log, [inserted(jobId)]);
      const lastCommit = performance.now();
      // The end of the burst is told too, at most one interval after its last commit.
      while (
        (told.at(-1) ?? 0) < lastCommit &&
        performance.now() - lastCommit < intervalMs + 10_000
      ) {
        yield* Effect.sleep("50 millis");
      }
      const burst = told.slice(probes);
      expect(burst.length).toBeGreaterThanOrEqual(2);
      expect(burst.at(-1) ?? 0).toBeGreaterThan(lastCommit);
      // 20 commits, told once per interval they spanned (and once more at its end).
      expect(burst.length).toBeLessThanOrEqual(2 + Math.ceil((lastCommit - started) / intervalMs));
      for (let index = 1; index < told.length; index++) {
        // Timers may fire a millisecond early.
        expect((told[index] ?? 0) - (told[index - 1] ?? 0)).toBeGreaterThanOrEqual(intervalMs - 5);
      }
    }).pipe(Effect.scoped),
  );

  it.live("a writer's commits within its followIntervalMs are notified at the interval's end", () =>
    Effect.gen(function* () {
      const { url } = yield* database;
      yield* PgSchema.init(url);
      const intervalMs = 1_000;
      const listening = { followIntervalMs: 0, pollIntervalMs: 60_000 };
      const follower = yield* PgLog.open(url, listening, Projection.collect);
      const writer = yield* PgLog.open(
        url,
        { followIntervalMs: intervalMs, pollIntervalMs: 60_000 },
        Projection.collect,
      );
      const told: Array<number> = [];
      const unwatch = follower.log.watchOthers?.(() => told.push(performance.now()));
      const unwatchWriter = writer.log.watchOthers?.(() => {});
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => [unwatch, unwatchWriter].map((f) => f?.())),
      );
      // The writer's last notification (of the probes) an interval old.
      const probes = yield* heardBy(writer.log, told, intervalMs + 300);
      for (let jobId = 1; jobId <= 3; jobId++) yield* append(writer.log, [inserted(jobId)]);
      const lastCommit = performance.now();
      while (
        (told.at(-1) ?? 0) < lastCommit &&
        performance.now() - lastCommit < intervalMs + 10_000
      ) {
        yield* Effect.sleep("50 millis");
      }
      // The first commit at once; the two after it once the writer's interval ended.
      expect(told.at(-1) ?? 0).toBeGreaterThan(lastCommit);
      expect(told.length - probes).toBe(2);
    }).pipe(Effect.scoped),
  );

  /**
   * A node-postgres driver that counts what an engine's sessions hear
   * (notification payloads) and its head reads once the follower listens;
   * with `hold`, an append's batch that notifies answers only once the
   * listening session has received that very notification, so it always
   * arrives while the log still believes its head is before that commit.
   */
  const counting = (url: string, hold: boolean) => {
    const inner = Driver.nodePg(url);
    const heard: Array<string> = [];
    const seen = { listening: false, headReads: 0 };
    const until = (done: () => boolean) =>
      Effect.gen(function* () {
        while (!done()) yield* Effect.sleep("5 millis");
      });
    const driver: Driver.Driver = {
      connect: async () => {
        const session = await inner.connect();
        if (Driver.isFailure(session)) return session;
        const batch = session.batch;
        return {
          ...session,
          query: async (text, parameters) => {
            const result = await session.query(text, parameters);
            if (text.startsWith("LISTEN")) seen.listening = true;
            else if (seen.listening && text.startsWith("SELECT epoch, last_sequence FROM")) {
              seen.headReads += 1;
            }
            return result;
          },
          ...(batch === undefined
            ? {}
            : {
                batch: async (statements: ReadonlyArray<Driver.Bound>) => {
                  const result = await batch(statements);
                  const notice = statements.find((one) => one.text.includes("pg_notify"));
                  const payload = notice?.parameters.at(-1);
                  if (hold && typeof payload === "string") {
                    await Effect.runPromise(until(() => heard.includes(payload)));
                  }
                  return result;
                },
              }),
          onNotification: (handler) =>
            session.onNotification?.((name, payload) => {
              heard.push(payload);
              handler(name, payload);
            }),
        };
      },
    };
    return { driver, heard, seen, until };
  };

  /** An engine alone on a fresh store, its follower listening; inserts `count` jobs. */
  const alone = (options: PgOptions.PgLogOptions, hold: boolean, count: number) =>
    Effect.gen(function* () {
      const { url } = yield* database;
      yield* PgSchema.init(url);
      const { driver, heard, seen, until } = counting(url, hold);
      const recovered = yield* PgLog.open(
        url,
        { ...options, pollIntervalMs: 3_600_000, driver: () => driver },
        StateProjection.foldProjection,
      );
      const engine = yield* Engine.fromLog(recovered, { timers: false });
      // The follower listens, then polls the head once: reads from here on are catch-ups.
      yield* until(() => seen.listening && seen.headReads >= 1);
      const readsBefore = seen.headReads;
      for (let index = 0; index < count; index++) {
        yield* engine.insert({ queue: "q", worker: "W", args: index });
      }
      // Notifications reach a listener in commit order: once this one is
      // heard, every notification of the inserts above has been.
      const storeId = recovered.report.storeId;
      yield* Effect.promise(() =>
        Server.admin(url, (client) =>
          client.query("SELECT pg_notify($1, 'sentinel:0')", [
            `tay_${storeId.replace(/[^0-9a-f]/gi, "").toLowerCase()}`,
          ]),
        ),
      );
      yield* until(() => heard.includes("sentinel:0"));
      return {
        own: heard.filter((payload) => payload !== "sentinel:0").length,
        reads: seen.headReads - readsBefore,
        catchUps: engine.contention().catchUps,
      };
    });

  it.live("an engine alone is never told of its own commits (every commit notifying)", () =>
    Effect.gen(function* () {
      // followIntervalMs 0: every commit notifies; each reaches the follower
      // before the writer learns that it committed.
      const seen = yield* alone({ followIntervalMs: 0 }, true, 12);
      // Most commits notified (a notification sent after its commit, not in
      // it, may be merged with the next one's on a loaded machine: 9 seen
      // once with other suites running), so the engine had its own news to ignore.
      expect(seen.own).toBeGreaterThanOrEqual(6);
      expect(seen.catchUps).toBe(0);
      expect(seen.reads).toBe(0);
    }).pipe(Effect.scoped),
  );

  it.live(
    "an engine alone notifies, and so wakes its own follower, once per followIntervalMs",
    () =>
      Effect.gen(function* () {
        const seen = yield* alone({ followIntervalMs: 60_000 }, false, 20);
        // The first commit after a quiet spell only; the rest are owed to the interval's end.
        expect(seen.own).toBe(1);
        expect(seen.catchUps).toBe(0);
        expect(seen.reads).toBe(0);
      }).pipe(Effect.scoped),
  );

  it.live("without LISTEN (notifications off) the head is polled and the claim still wakes", () =>
    Effect.gen(function* () {
      const { url } = yield* database;
      yield* PgSchema.init(url);
      const woke = yield* wakeAcross(url, { notifications: false, pollIntervalMs: 50 }, 10_000);
      expect(woke.jobs.map((job) => job.jobId)).toEqual([woke.jobId]);
      // The control: neither notified nor polled in time, the claim is aborted with nothing.
      const missed = yield* wakeAcross(
        url,
        { notifications: false, pollIntervalMs: 60_000 },
        1_000,
      );
      expect(missed.jobs).toEqual([]);
    }).pipe(Effect.scoped),
  );
});

describe.skipIf(!("url" in server))("a compaction whose switch finds the head moved", () => {
  it.scopedLive(
    "is refused with CompactionConflict: the other's append stays current in epoch 1, nothing of it removed",
    () =>
      Effect.gen(function* () {
        const { url } = yield* database;
        yield* PgSchema.init(url);
        // The switch's first statement (the staged base's count, after the
        // lease's renewal) waits while another log appends: the switch's
        // compare-and-set then finds the head moved on in epoch 1.
        const held = Pglite.holdingOnce(Driver.nodePg(url), (text) =>
          text.includes("SET base_record_count"),
        );
        const compacting = yield* PgLog.open(
          url,
          { driver: () => held.driver },
          Projection.collect,
        );
        yield* append(compacting.log, [inserted(1)]);
        const other = yield* PgLog.open(url, {}, Projection.collect);
        const compaction = yield* Effect.fork(
          Effect.either(compacting.log.compact([inserted(1)], 1)),
        );
        yield* Effect.promise(() => held.holding);
        yield* append(other.log, [inserted(2)]);
        held.release();
        const result = yield* Fiber.join(compaction);
        expect(Either.isLeft(result) ? result.left._tag : "switched").toBe("CompactionConflict");
        const generation = yield* compacting.log.view.generation();
        expect(generation.epoch).toBe(1);
        // Both records are current, in epoch 1: the compaction removed none of them.
        const current = (yield* rowsOf(url)).filter((row) => row.epoch === 1);
        expect(current.map((row) => row.sequence)).toEqual([1, 2]);
        const reopened = yield* PgLog.open(url, {}, Projection.collect);
        expect(reopened.report).toMatchObject({ epoch: 1, lastSequence: 2 });
        expect(reopened.state.map((entry) => entry.event)).toEqual([inserted(1), inserted(2)]);
      }),
  );
});
