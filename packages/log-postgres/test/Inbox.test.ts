/**
 * Enqueue inside the application's own transaction, on a real server, each
 * test in a database of its own: a committed enqueue becomes a job that
 * runs, a rolled-back one never does, bad jobs are refused before anything
 * is written (the application's transaction goes on), the jobs fold in
 * the order they were enqueued, two engines fold each row exactly once, an
 * engine SIGKILLed while folding loses and doubles nothing, and a schema at
 * version 1 is refused by open until migrated. Skipped, with the reason
 * printed, when no server answers (see test/support/server.ts).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "@effect/vitest";
import { type Commands, Decide, type Job } from "@tay/core";
import { Inbox, PgError, PgLog, type PgOptions, PgSchema } from "@tay/log-postgres";
import { Batch, Engine, LogError, StateProjection, Ticket } from "@tay/shell-node";
import { Effect, Either, Exit, Scope } from "effect";
import pg from "pg";
import { inboxChannel, notifications } from "../src/internal/sql.js";
import * as Rows from "../src/internal/rows.js";
import * as Server from "./support/server.js";

const server = await Server.locate();
const serverUrl = "url" in server ? server.url : "";
const child = fileURLToPath(new URL("./support/inbox-child.mjs", import.meta.url));

/** A fresh database with a store in it; `drop` removes it. */
const storeDatabase = async () => {
  const made = await Server.freshDatabase(serverUrl);
  await Effect.runPromise(PgSchema.init(made.url));
  return made;
};

/** An engine over the store at `url`, open until `close`. */
const openEngine = async (url: string, options: PgOptions.PgLogOptions = {}) => {
  const scope = await Effect.runPromise(Scope.make());
  const engine = await Effect.runPromise(
    Scope.extend(
      Effect.gen(function* () {
        const recovered = yield* PgLog.open(
          url,
          { pollIntervalMs: 200, ...options },
          StateProjection.foldProjection,
        );
        return yield* Engine.fromLog(recovered, { timers: false, rescueOnOpen: false });
      }),
      scope,
    ),
  );
  return { engine, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) };
};

/** The application's own client, with its own table. */
const application = async (url: string) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    "CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, note TEXT NOT NULL)",
  );
  return client;
};

/** Runs `body` in a transaction on `client`, committed (or rolled back when `rollback`). */
const transaction = async <A>(
  client: pg.Client,
  body: () => Promise<A>,
  rollback = false,
): Promise<A> => {
  await client.query("BEGIN");
  try {
    const result = await body();
    await client.query(rollback ? "ROLLBACK" : "COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
};

/** Waits until `ready` holds, checking every 20 ms; fails after `attempts` checks (not a timing assertion: a bound). */
const until = async (what: string, ready: () => Promise<boolean> | boolean, attempts = 1500) => {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`still waiting for ${what}`);
};

/** Rows still in the inbox. */
const inboxRows = async (client: pg.Client): Promise<number> => {
  const result = await client.query("SELECT count(*) AS n FROM tay.tay_inbox");
  return Number(result.rows[0]?.n);
};

/** A rejection's tag. */
const tagOf = (reason: unknown): string =>
  typeof reason === "object" && reason !== null && "_tag" in reason
    ? String(reason._tag)
    : "untagged";

type EngineService = Engine.EngineService<PgLog.PgKind>;

/** The engine's committed jobs of `queue`, by job id. */
const jobsOf = (engine: EngineService, queue: string): ReadonlyArray<Job.Job> =>
  [...engine.promises.jobs({ queue })].sort((left, right) => left.jobId - right.jobId);

const job = (args: string, queue = "mail"): Commands.NewJob => ({ queue, worker: "Send", args });

/**
 * A log over the store at `url` with no engine: the test plays its engine,
 * taking every page the folder offers as it is offered (`pages`, in order)
 * and settling its rows itself. Pages of `inboxPageRows` rows; a poll once
 * an hour, so the folder reads only when a notification or a settled page
 * wakes it.
 */
const playedEngine = (url: string, inboxPageRows: number, options: PgOptions.PgLogOptions = {}) =>
  Effect.gen(function* () {
    const { log } = yield* PgLog.open(
      url,
      { inboxPageRows, pollIntervalMs: 3_600_000, ...options },
      StateProjection.foldProjection,
    );
    const incoming = log.incoming;
    if (incoming === undefined) return yield* Effect.die("no incoming jobs");
    const pages: Array<ReadonlyArray<string>> = [];
    // When each page was taken (performance.now()).
    const takenAt: Array<number> = [];
    incoming.watch(() => {
      const taken = incoming.take();
      if (taken.length > 0) {
        pages.push(taken.map((row) => row.key));
        takenAt.push(performance.now());
      }
    });
    const refuse = (key: string, reason: string) =>
      incoming.settled(key, { _tag: "Refused", reason });
    // As after a conflict: another engine folded the row first, or may have.
    const handBack = (key: string) =>
      incoming.settled(key, { _tag: "NotAppended", reason: "planted conflict" });
    // As if the engine appended the row (the row stays: nothing was appended).
    const pretendAppended = (key: string) =>
      incoming.settled(key, { _tag: "Appended", jobIds: [] });
    return { pages, takenAt, refuse, handBack, pretendAppended };
  });

type Played = Effect.Effect.Success<ReturnType<typeof playedEngine>>;

/**
 * A store with one row waiting and an engine the test plays, with no linger
 * (the waits measured are the steps aside alone): `body` gets both.
 */
const oneRowPlayed = async (body: (played: Played, key: string) => Effect.Effect<void>) => {
  const database = await storeDatabase();
  const client = await application(database.url);
  try {
    const row = await transaction(client, () => Inbox.enqueueInTransaction(client, job("a")));
    await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(playedEngine(database.url, 10, { inboxLingerMs: 0 }), (played) =>
          body(played, row.key),
        ),
      ),
    );
  } finally {
    await client.end();
    await database.drop();
  }
};

/** The inbox rows marked refused, with why, by key. */
const refusals = async (client: pg.Client): Promise<ReadonlyMap<string, string>> => {
  const result = await client.query(
    "SELECT id, refusal FROM tay.tay_inbox WHERE refusal IS NOT NULL ORDER BY id",
  );
  return new Map(result.rows.map((row) => [String(row.id), String(row.refusal)]));
};

describe.skipIf("skip" in server)("enqueue inside the application's transaction", () => {
  it("a committed enqueue becomes a job that runs; a rolled-back one never exists", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    const { engine, close } = await openEngine(database.url);
    try {
      await transaction(
        client,
        async () => {
          await client.query("INSERT INTO orders (id, note) VALUES (1, 'rolled back')");
          await Inbox.enqueueInTransaction(client, job("rolled back"));
        },
        true,
      );
      const enqueued = await transaction(client, async () => {
        await client.query("INSERT INTO orders (id, note) VALUES (2, 'committed')");
        return Inbox.enqueueInTransaction(client, job("committed"));
      });
      expect(enqueued.jobs).toBe(1);
      await until("the committed job", () => jobsOf(engine, "mail").length === 1);
      const [folded] = jobsOf(engine, "mail");
      expect(folded?.args).toBe("committed");
      const [claimed] = await engine.promises.claim("mail", 1);
      expect(claimed?.jobId).toBe(folded?.jobId);
      await engine.promises.complete(claimed?.jobId ?? 0, "sent");
      expect(engine.promises.job(claimed?.jobId ?? 0)?.state).toBe("completed");
      expect(await inboxRows(client)).toBe(0);
      expect(engine.log.inbox().folded).toBe(1);
      // The rolled-back one left nothing, anywhere.
      const orders = await client.query("SELECT id FROM orders ORDER BY id");
      expect(orders.rows).toEqual([{ id: 2 }]);
    } finally {
      await close();
      await client.end();
      await database.drop();
    }
  });

  it("bad jobs are refused before anything is written, and the transaction goes on", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      await transaction(client, async () => {
        await client.query("INSERT INTO orders (id, note) VALUES (1, 'kept')");
        const refused = [
          Inbox.enqueueInTransaction(client, { queue: "", worker: "Send", args: null }),
          Inbox.enqueueInTransaction(client, [job("ok"), { ...job("x"), args: Number.NaN }]),
          Inbox.enqueueInTransaction(client, { ...job("x"), uniqueKey: "k" }),
          Inbox.enqueueInTransaction(client, job("x"), { store: "" }),
        ];
        const outcomes = await Promise.allSettled(refused);
        const reasons = outcomes.map((outcome) =>
          outcome.status === "rejected"
            ? `${tagOf(outcome.reason)}: ${outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason)}`
            : "accepted",
        );
        expect(reasons[0]).toMatch(/^InboxRefused: .*jobs\[0\]\.queue/);
        expect(reasons[1]).toMatch(/^InboxRefused: .*jobs\[1\]\.args/);
        expect(reasons[2]).toMatch(/^InboxRefused: .*jobs\[0\]\.uniqueKey/);
        expect(reasons[3]).toMatch(/^InvalidOption: /);
        for (const reason of reasons) expect(reason).not.toMatch(/\n\s+at /);
      });
      // The transaction committed its own row; nothing reached the inbox.
      expect((await client.query("SELECT id FROM orders")).rows).toEqual([{ id: 1 }]);
      expect(await inboxRows(client)).toBe(0);
      const missing = await Inbox.enqueueInTransaction(client, job("x"), { store: "nope" }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(missing).toBeInstanceOf(PgError.StoreNotFound);
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("jobs fold in the order they were enqueued, a call's jobs together", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      // Enqueued while no engine runs: the first engine folds them all.
      const expected: Array<string> = [];
      for (let round = 0; round < 40; round++) {
        await transaction(client, async () => {
          const calls =
            round % 3 === 0 ? [[`${round}a`, `${round}b`, `${round}c`]] : [[`${round}`]];
          if (round % 5 === 0) calls.push([`${round}z`]);
          for (const call of calls) {
            await Inbox.enqueueInTransaction(
              client,
              call.map((args) => job(args)),
            );
            expected.push(...call);
          }
        });
      }
      const { engine, close } = await openEngine(database.url, { inboxPageRows: 7 });
      try {
        await until("every job", () => jobsOf(engine, "mail").length === expected.length);
        const jobs = jobsOf(engine, "mail");
        expect(jobs.map((folded) => folded.args)).toEqual(expected);
        // One call is one mutation: consecutive ids, one insertion time.
        const [first, second, third] = jobs;
        expect([first?.jobId, second?.jobId, third?.jobId]).toEqual([1, 2, 3]);
        expect(new Set([first?.insertedAt, second?.insertedAt, third?.insertedAt]).size).toBe(1);
        expect(await inboxRows(client)).toBe(0);
      } finally {
        await close();
      }
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("a row that does not decode is kept, marked with why, and never offered again; the rows after it fold", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      // The lowest key: the first row of every page until it is marked.
      await client.query(
        "INSERT INTO tay.tay_inbox (store, id, enqueued_at, event_type, event_schema, payload) VALUES ('default', '00000000-0000-7000-8000-000000000001', 0, 1, 1, '\\x00'::bytea)",
      );
      await transaction(client, () => Inbox.enqueueInTransaction(client, [job("after")]));
      // Pages of one row: the job after it folds only once the marked row is left out of the page;
      // a poll once an hour: only reading on at once after the marking gets there.
      const { engine, close } = await openEngine(database.url, {
        inboxPageRows: 1,
        pollIntervalMs: 3_600_000,
      });
      try {
        await until("the job after it", () => jobsOf(engine, "mail").length === 1);
        const marked = async () =>
          (await client.query("SELECT refusal FROM tay.tay_inbox WHERE refusal IS NOT NULL")).rows;
        await until("the row marked", async () => (await marked()).length === 1);
        expect(String((await marked())[0]?.refusal)).toMatch(/^its record does not decode/);
        expect(await inboxRows(client)).toBe(1);
      } finally {
        await close();
      }
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("the next page is read as soon as the engine settled the last one, not at the next poll", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    // Pages of one row and a poll once an hour: only a settled page reads the next.
    const { engine, close } = await openEngine(database.url, {
      inboxPageRows: 1,
      pollIntervalMs: 3_600_000,
    });
    try {
      await transaction(client, async () => {
        for (const args of ["a", "b", "c"]) await Inbox.enqueueInTransaction(client, [job(args)]);
      });
      await until("every job", () => jobsOf(engine, "mail").length === 3);
      expect(jobsOf(engine, "mail").map((folded) => folded.args)).toEqual(["a", "b", "c"]);
      expect(await inboxRows(client)).toBe(0);
    } finally {
      await close();
      await client.end();
      await database.drop();
    }
  });

  it("rows committed while the folder lingers after a notification fold with the first", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const played = yield* playedEngine(database.url, 100, { inboxLingerMs: 1500 });
            // A first row, folded (refused by the test), tells that the folder listens: once its
            // refusal is marked the folder has lingered after that page and goes idle.
            const warm = yield* Effect.promise(() =>
              transaction(client, () => Inbox.enqueueInTransaction(client, job("warm"))),
            );
            yield* Effect.promise(() => until("the first page", () => played.pages.length === 1));
            played.refuse(warm.key, "settled by the test");
            yield* Effect.promise(() =>
              until("the refusal marked", async () => (await refusals(client)).size === 1),
            );
            yield* Effect.sleep("300 millis");
            // "a" comes into an inbox with no row waiting and notifies; "b" and "c", committed
            // within the linger, find it waiting and notify nothing: one page holds the three.
            const keys: Array<string> = [];
            for (const args of ["a", "b", "c"]) {
              const enqueued = yield* Effect.promise(() =>
                transaction(client, () => Inbox.enqueueInTransaction(client, job(args))),
              );
              keys.push(enqueued.key);
            }
            yield* Effect.promise(() => until("the next page", () => played.pages.length === 2));
            expect(played.pages.slice(1)).toEqual([keys]);
          }),
        ),
      );
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("a backlog is read page after page with no linger between full pages", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      // Five rows waiting before the folder starts, pages of two, a linger of 3 s: only the
      // last page (one row) is not full, and nothing is read after it.
      for (const args of ["a", "b", "c", "d", "e"]) {
        await transaction(client, () => Inbox.enqueueInTransaction(client, job(args)));
      }
      const started = performance.now();
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const played = yield* playedEngine(database.url, 2, { inboxLingerMs: 3000 });
            for (const [index, size] of [2, 2, 1].entries()) {
              yield* Effect.promise(() =>
                until(`page ${index + 1}`, () => played.pages.length === index + 1),
              );
              const page = played.pages[index] ?? [];
              expect(page.length).toBe(size);
              for (const key of page) played.refuse(key, "settled by the test");
            }
          }),
        ),
      );
      // Lingering after each full page would take 6 s at least.
      expect(performance.now() - started).toBeLessThan(2500);
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("a folder whose page came back not appended steps aside before it reads again, longer each time", () =>
    oneRowPlayed((played, key) =>
      Effect.gen(function* () {
        const handedBackAt: Array<number> = [];
        for (let page = 1; page <= 3; page++) {
          yield* Effect.promise(() => until(`page ${page}`, () => played.pages.length === page));
          expect(played.pages[page - 1]).toEqual([key]);
          handedBackAt.push(performance.now());
          played.handBack(key);
        }
        yield* Effect.promise(() => until("page 4", () => played.pages.length === 4));
        // 20, 40, then 80 ms at least between handing a page back and the next read.
        const waits = [1, 2, 3].map(
          (page) => (played.takenAt[page] ?? 0) - (handedBackAt[page - 1] ?? 0),
        );
        expect(waits[0]).toBeGreaterThanOrEqual(19);
        expect(waits[1]).toBeGreaterThanOrEqual(39);
        expect(waits[2]).toBeGreaterThanOrEqual(79);
        played.refuse(key, "settled by the test");
      }),
    ));

  it("a folder's step aside is short again once a row of its folds", () =>
    oneRowPlayed((played, key) =>
      Effect.gen(function* () {
        const page = (n: number) =>
          Effect.promise(() => until(`page ${n}`, () => played.pages.length === n));
        // Four pages lost (20, 40, 80, 160 ms): the next step aside would be the longest, 160 ms.
        for (let lost = 1; lost <= 4; lost++) {
          yield* page(lost);
          played.handBack(key);
        }
        yield* page(5);
        // Folded (as far as the folder can tell): the row stays, so it is read again.
        played.pretendAppended(key);
        yield* page(6);
        const handedBackAt = performance.now();
        played.handBack(key);
        yield* page(7);
        const wait = (played.takenAt[6] ?? 0) - handedBackAt;
        // 20 ms again (and the read), not the 160 of a fifth loss in a row.
        expect(wait).toBeGreaterThanOrEqual(19);
        expect(wait).toBeLessThan(150);
        played.refuse(key, "settled by the test");
      }),
    ));

  it("two engines fold every row exactly once while producers enqueue", async () => {
    const database = await storeDatabase();
    // One after the other: concurrent CREATE TABLE IF NOT EXISTS race in the catalog.
    const producers = [await application(database.url), await application(database.url)];
    const first = await openEngine(database.url, { inboxPageRows: 16 });
    const second = await openEngine(database.url, { inboxPageRows: 16 });
    try {
      const perProducer = 150;
      await Promise.all(
        producers.map(async (client, producer) => {
          for (let index = 0; index < perProducer; index++) {
            await transaction(client, () =>
              Inbox.enqueueInTransaction(client, job(`${producer}/${index}`)),
            );
          }
        }),
      );
      const total = producers.length * perProducer;
      const [reader] = producers;
      if (reader === undefined) throw new Error("no producer");
      await until("an empty inbox", async () => (await inboxRows(reader)) === 0);
      for (const { engine } of [first, second]) {
        await until("both engines caught up", async () => {
          // The other engine's folds arrive by its notifications (or the poll).
          return jobsOf(engine, "mail").length === total;
        });
        const args = jobsOf(engine, "mail").map((folded) => String(folded.args));
        expect(new Set(args).size).toBe(total);
        // Each producer's jobs in its own order.
        for (const producer of [0, 1]) {
          const mine = args.filter((text) => text.startsWith(`${producer}/`));
          expect(mine).toEqual(Array.from({ length: perProducer }, (_, i) => `${producer}/${i}`));
        }
      }
      const folded = first.engine.log.inbox().folded + second.engine.log.inbox().folded;
      expect(folded).toBe(total);
    } finally {
      await first.close();
      await second.close();
      for (const client of producers) await client.end();
      await database.drop();
    }
  });

  it("a fold of rows another engine folded first conflicts and writes nothing", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      for (const args of ["a", "b", "c"]) {
        await transaction(client, () => Inbox.enqueueInTransaction(client, job(args)));
      }
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            // A log with no engine: this test plays its engine, step by step.
            const stale = yield* PgLog.open(
              database.url,
              { pollIntervalMs: 100 },
              StateProjection.foldProjection,
            );
            const incoming = stale.log.incoming;
            if (incoming === undefined) return yield* Effect.die("no incoming jobs");
            let offered = false;
            incoming.watch(() => {
              offered = true;
            });
            yield* Effect.promise(() => until("the rows offered", () => offered));
            const taken = incoming.take();
            expect(taken.map((row) => row.command.jobs[0]?.args)).toEqual(["a", "b", "c"]);
            // Another engine folds the same rows first.
            const other = yield* Effect.promise(() => openEngine(database.url));
            yield* Effect.promise(() =>
              until("the other engine's fold", () => jobsOf(other.engine, "mail").length === 3),
            );
            yield* Effect.promise(() => other.close());
            // Caught up (its guard will pass), this log appends the same rows again.
            yield* stale.log.refresh?.() ?? Effect.void;
            const events = taken.flatMap((row, index) => {
              const decided = Decide.insertJobsAfter(3 + index, row.command);
              return decided._tag === "Right" ? decided.right : [];
            });
            const batch = Either.getOrThrow(Batch.prepare(events));
            const consumed = taken.map((row) => row.key);
            const ticket = stale.log.append({ ...batch, consumed }, stale.log.lastSequence());
            if (ticket instanceof LogError.AppendConflict) return yield* Effect.die(ticket);
            const refused = yield* Effect.flip(Ticket.wait(ticket));
            expect(refused._tag).toBe("AppendConflict");
            expect(stale.log.view.writes().conflicted).toBe(1);
          }),
        ),
      );
      const reopened = await openEngine(database.url);
      try {
        expect(jobsOf(reopened.engine, "mail").map((folded) => folded.args)).toEqual([
          "a",
          "b",
          "c",
        ]);
      } finally {
        await reopened.close();
      }
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("a row the engine refused as it folded is marked with why and never offered again; the next row is", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      const [refused, after] = await transaction(client, async () => [
        await Inbox.enqueueInTransaction(client, job("refused")),
        await Inbox.enqueueInTransaction(client, job("after")),
      ]);
      const reason = "the deciders refused it at the fold (planted)";
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const played = yield* playedEngine(database.url, 1);
            yield* Effect.promise(() => until("the first page", () => played.pages.length === 1));
            expect(played.pages[0]).toEqual([refused?.key]);
            // Settled refused: the page is done, so the folder marks the row and reads on.
            played.refuse(refused?.key ?? "", reason);
            yield* Effect.promise(() => until("the next page", () => played.pages.length === 2));
            expect(played.pages[1]).toEqual([after?.key]);
          }),
        ),
      );
      expect(await refusals(client)).toEqual(new Map([[refused?.key, reason]]));
      expect(await inboxRows(client)).toBe(2);
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("a page is read only once the engine settled every row of the last one, however it is woken meanwhile", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      const [held, refused] = await transaction(client, async () => [
        await Inbox.enqueueInTransaction(client, job("held")),
        await Inbox.enqueueInTransaction(client, job("refused")),
      ]);
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const played = yield* playedEngine(database.url, 2);
            yield* Effect.promise(() => until("the first page", () => played.pages.length === 1));
            expect(played.pages[0]).toEqual([held?.key, refused?.key]);
            // One row of the page settled, the other still in the engine's hands.
            played.refuse(refused?.key ?? "", "planted");
            // Another row, and a notification that wakes the folder (the row
            // itself notifies nothing: "held" is still waiting, docs/postgres.md
            // "Notify only an empty inbox"): the folder marks the refusal (which
            // tells this test that the wake-up was seen) and must read no page
            // while "held" is in the engine's hands.
            const later = yield* Effect.promise(() =>
              transaction(client, () => Inbox.enqueueInTransaction(client, job("later"))),
            );
            yield* Effect.promise(() =>
              client.query("SELECT pg_notify('tay_inbox', 'tay.default')"),
            );
            yield* Effect.promise(() =>
              until("the refusal marked", async () => (await refusals(client)).size === 1),
            );
            // The page settled: the next page is read, holding only what is left.
            played.refuse(held?.key ?? "", "planted");
            yield* Effect.promise(() => until("the next page", () => played.pages.length >= 2));
            expect(played.pages.slice(1)).toEqual([[later.key]]);
          }),
        ),
      );
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("an enqueue notifies only an inbox with no row waiting (refused rows do not count)", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    const listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    const heard: Array<string> = [];
    listener.on("notification", (message) => heard.push(message.payload ?? ""));
    await listener.query("LISTEN tay_inbox");
    // A notification sent after each step, heard after every one before it: a step's own
    // notification, if any, is heard before the marker.
    let markers = 0;
    const settle = async () => {
      markers += 1;
      await client.query("SELECT pg_notify('tay_inbox', $1)", [`marker ${markers}`]);
      await until(`marker ${markers}`, () => heard.includes(`marker ${markers}`));
    };
    const notified = () => heard.filter((payload) => payload === "tay.default").length;
    try {
      const first = await transaction(client, () => Inbox.enqueueInTransaction(client, job("a")));
      await settle();
      expect(notified()).toBe(1);
      // "a" waits (no engine is open): the next rows notify nothing.
      await transaction(client, () => Inbox.enqueueInTransaction(client, job("b")));
      await transaction(client, async () => {
        await Inbox.enqueueInTransaction(client, job("c"));
        await Inbox.enqueueInTransaction(client, job("d"));
      });
      await settle();
      expect(notified()).toBe(1);
      // Only refused rows left: the inbox counts as empty again.
      await client.query("UPDATE tay.tay_inbox SET refusal = 'planted' WHERE store = 'default'");
      await transaction(client, () => Inbox.enqueueInTransaction(client, job("e")));
      await settle();
      expect(notified()).toBe(2);
      expect(first.jobs).toBe(1);
    } finally {
      await listener.end();
      await client.end();
      await database.drop();
    }
  });

  it("an enqueue's look for a waiting row reads a few pages however many rows wait", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    // Rows enqueued while no engine runs, in a table never analyzed (a fresh database, autovacuum
    // not yet round): the planner knows nothing of them. The look read every waiting row's index
    // entry before 2026-12-07 (a bitmap scan: ~8 ms an enqueue at 100,000 rows waiting).
    const waiting = 20_000;
    const buffersOfOneEnqueue = async () => {
      const statement = notifications.inboxInsertNotify("tay");
      const row = ["default", randomUUID(), 1, 1, 1, Buffer.from([0]), inboxChannel, "tay.default"];
      return transaction(
        client,
        async () => {
          const explained = await client.query(
            `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement}`,
            row,
          );
          const plan = Rows.field(explained.rows[0], "QUERY PLAN");
          const top = Array.isArray(plan) ? Rows.field(plan[0], "Plan") : undefined;
          const hit = Rows.field(top, "Shared Hit Blocks");
          const read = Rows.field(top, "Shared Read Blocks");
          return (
            (typeof hit === "number" ? hit : Number.NaN) + (typeof read === "number" ? read : 0)
          );
        },
        true,
      );
    };
    try {
      await client.query(
        "INSERT INTO tay.tay_inbox (store, id, enqueued_at, event_type, event_schema, payload) SELECT 'default', gen_random_uuid(), 1, 1, 1, '\\x00' FROM generate_series(1, $1::integer)",
        [waiting],
      );
      // The index alone spans ~100 pages at this size; one look and one insert touch a handful.
      expect(await buffersOfOneEnqueue()).toBeLessThan(40);
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("a row enqueued without a notification is folded when its transaction commits, after the row it relied on was folded", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    const late = new pg.Client({ connectionString: database.url });
    await late.connect();
    try {
      // "early" waits in the inbox, so "late" (enqueued in a transaction left open) notifies nothing.
      await transaction(client, () => Inbox.enqueueInTransaction(client, job("early")));
      await late.query("BEGIN");
      await Inbox.enqueueInTransaction(late, job("late"));
      // A poll once an hour: only the folder's look for open writers can find "late" in time.
      const { engine, close } = await openEngine(database.url, { pollIntervalMs: 3_600_000 });
      try {
        await until("early folded", () => jobsOf(engine, "mail").length === 1);
        await until("the inbox read empty", async () => (await inboxRows(client)) === 0);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await late.query("COMMIT");
        await until("late folded", () => jobsOf(engine, "mail").length === 2, 250);
        expect(jobsOf(engine, "mail").map((folded) => folded.args)).toEqual(["early", "late"]);
      } finally {
        await close();
      }
    } finally {
      await late.end();
      await client.end();
      await database.drop();
    }
  });

  it("an engine SIGKILLed while it folds loses and doubles nothing", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      const total = 2000;
      for (let index = 0; index < total; index += 50) {
        await transaction(client, async () => {
          for (let offset = 0; offset < 50; offset++) {
            await Inbox.enqueueInTransaction(client, job(String(index + offset)), {
              notify: false,
            });
          }
        });
      }
      const folding = spawn(process.execPath, [child, database.url], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      folding.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const killed = new Promise<void>((resolve) => {
        folding.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("committed ")) folding.kill("SIGKILL");
        });
        folding.on("close", () => resolve());
      });
      await killed;
      expect(stderr).toBe("");
      const left = await inboxRows(client);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThan(total);
      const { engine, close } = await openEngine(database.url);
      try {
        await until("an empty inbox", async () => (await inboxRows(client)) === 0);
        await engine.promises.flush();
        const args = jobsOf(engine, "mail").map((folded) => String(folded.args));
        expect(args).toEqual(Array.from({ length: total }, (_, index) => String(index)));
      } finally {
        await close();
      }
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it("a schema at version 1 is refused by open and by enqueue until migrated", async () => {
    const database = await storeDatabase();
    const client = await application(database.url);
    try {
      const { engine, close } = await openEngine(database.url);
      await engine.promises.insert(job("before"));
      await close();
      // What a store initialized before the inbox looks like.
      await client.query("DROP TABLE tay.tay_compaction");
      await client.query("DROP TABLE tay.tay_inbox");
      await client.query("DELETE FROM tay.tay_schema WHERE version >= 2");
      const refused = await Effect.runPromise(
        Effect.flip(Effect.scoped(PgLog.open(database.url, {}, StateProjection.foldProjection))),
      );
      expect(refused._tag).toBe("SchemaVersionMismatch");
      expect(refused.message).toContain("version 1, this version of Tay expects 3");
      const missing = await Inbox.enqueueInTransaction(client, job("x")).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(missing).toBeInstanceOf(Inbox.InboxMissing);
      expect(await Effect.runPromise(PgSchema.migrate(database.url))).toEqual({ from: 1, to: 3 });
      await Inbox.enqueueInTransaction(client, job("after"));
      const reopened = await openEngine(database.url);
      try {
        await until("the job enqueued after", () => jobsOf(reopened.engine, "mail").length === 2);
        expect(jobsOf(reopened.engine, "mail").map((folded) => folded.args)).toEqual([
          "before",
          "after",
        ]);
      } finally {
        await reopened.close();
      }
    } finally {
      await client.end();
      await database.drop();
    }
  });
});
