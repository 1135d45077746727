/**
 * The PostgreSQL log on PGlite (PostgreSQL in process): init and open,
 * appends read back from the table and the queue and folded again by a
 * reopen (a property over random batches), group commit, the guard that
 * refuses an append after another writer's, compaction and reopen, and
 * every refusal of open for rows that were tampered with. Each test uses
 * its own schema (or store) of one PGlite started for the file.
 */
import type { PGlite } from "@electric-sql/pglite";
import { Event, Limits } from "@tay/core";
import { Driver, PgError, PgLog, type PgOptions, PgSchema } from "@tay/log-postgres";
import { Batch, type Log, LogError, Projection, Ticket } from "@tay/shell-node";
import { Effect, Either, Fiber } from "effect";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as Pglite from "./support/pglite.js";
import { inserted, run } from "./support/events.js";

const pglite = Pglite.perFile("t");
const database = (): PGlite => pglite.database();

// A password that must never reach a message.
const url = "postgres://tester:hunter2@pglite.invalid:5432/memory";
const fresh = pglite.fresh;

/** Appends `events` after the log's last sequence; the ticket (or the conflict). */
const appendNow = (log: Log.Log<PgLog.PgKind>, events: ReadonlyArray<Event.Event>) => {
  const batch = Either.getOrThrow(Batch.prepare(events));
  return log.append(batch, log.lastSequence());
};

const append = (log: Log.Log<PgLog.PgKind>, events: ReadonlyArray<Event.Event>) =>
  Effect.gen(function* () {
    const ticket = appendNow(log, events);
    if (ticket instanceof LogError.AppendConflict) return yield* Effect.fail(ticket);
    yield* Ticket.wait(ticket);
  });

const openCollect = (options: PgOptions.PgLogOptions) =>
  PgLog.open(url, options, Projection.collect);

/** What open refuses the store with (and fails the test when it opens). */
const refusal = (options: PgOptions.PgLogOptions) =>
  Effect.runPromise(Effect.flip(Effect.scoped(openCollect(options))));

const rows = async (schema: string, where = "") =>
  (
    await database().query(
      `SELECT epoch, sequence FROM ${schema}.tay_record ${where} ORDER BY epoch, sequence`,
    )
  ).rows;

describe("init and open", () => {
  it("init makes an empty store at epoch 1; open reports it; a second init is StoreExists", async () => {
    const options = fresh();
    const made = await run(PgSchema.init(url, options));
    expect(made.path).toBe(
      `postgres://tester@pglite.invalid:5432/memory#${options.schema}.default`,
    );
    const again = await Effect.runPromise(Effect.flip(PgSchema.init(url, options)));
    expect(again).toBeInstanceOf(PgError.StoreExists);
    const report = await run(Effect.map(openCollect(options), (recovered) => recovered.report));
    expect(report).toMatchObject({
      storeId: made.storeId,
      epoch: 1,
      firstSequence: 1,
      baseRecordCount: 0,
      lastSequence: 0,
      records: 0,
    });
  });

  it("open names the schema version found and expected, and a missing store", async () => {
    const options = fresh();
    const unmigrated = await refusal(options);
    expect(unmigrated).toMatchObject({ _tag: "SchemaVersionMismatch", found: 0, expected: 3 });
    await run(PgSchema.migrate(url, options));
    expect(await run(PgSchema.migrate(url, options))).toEqual({ from: 3, to: 3 });
    const missing = await refusal(options);
    expect(missing).toMatchObject({ _tag: "StoreNotFound", store: "default" });
    await database().query(`INSERT INTO ${options.schema}.tay_schema VALUES (4, 0)`);
    const newer = await refusal(options);
    expect(newer.message).toContain("the schema is at version 4, this version of Tay expects 3");
    expect(newer.message).not.toContain("hunter2");
  });
});

describe("appends", () => {
  it("batches read back in order from the queue and the table, and a reopen folds them", async () => {
    const options = fresh({ store: "property" });
    await run(PgSchema.migrate(url, options));
    let stores = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 6 }),
        async (sizes) => {
          const store = { ...options, store: `p${++stores}` };
          await run(PgSchema.init(url, store));
          const batches: Array<Array<Event.Event>> = [];
          let jobId = 0;
          for (const size of sizes) {
            batches.push(Array.from({ length: size }, () => inserted(++jobId)));
          }
          const expected = batches.flat().map((event, index) => ({ sequence: index + 1, event }));
          const read = await run(
            Effect.gen(function* () {
              const { log } = yield* openCollect(store);
              // Issued in one turn: queued behind each other, read while queued.
              const tickets = batches.map((events) => appendNow(log, events));
              const early = yield* log.view.readFrom(1, 1000);
              for (const ticket of tickets) {
                if (ticket instanceof LogError.AppendConflict) return yield* Effect.fail(ticket);
                yield* Ticket.wait(ticket);
              }
              const late = yield* log.view.readFrom(1, 1000);
              const paged = yield* log.view.readFrom(2, 3);
              return { early, late, paged };
            }),
          );
          expect(read.early).toEqual(expected);
          expect(read.late).toEqual(expected);
          expect(read.paged).toEqual(expected.slice(1, 4));
          const reopened = await run(openCollect(store));
          expect(reopened.state).toEqual(expected);
          expect(reopened.report.lastSequence).toBe(expected.length);
        },
      ),
      { numRuns: 8 },
    );
  });

  it.each([
    ["one script each (one round trip)", (driver: Driver.Driver) => driver, { SCRIPT: 2 }],
    [
      "a statement at a time where the driver has no script",
      Pglite.stepwise,
      { BEGIN: 2, UPDATE: 2, INSERT: 2, COMMIT: 2 },
    ],
  ])(
    "what arrives while a transaction is in flight goes into the next one, whole batches only: %s",
    async (_, wrap, expected) => {
      const { driver, counts } = Pglite.counting(wrap(Pglite.driver(database())));
      const options = fresh({ driver: () => driver, transactionRecordsMax: 4 });
      await run(PgSchema.init(url, options));
      await run(
        Effect.gen(function* () {
          const { log } = yield* openCollect(options);
          counts.byVerb.clear();
          // Five batches in one turn: 1+1+2 fill 4 exactly and 3 more would not, then 3+1 fill 4.
          const tickets = [[1], [2], [3, 4], [5, 6, 7], [8]].map((ids) =>
            appendNow(log, ids.map(inserted)),
          );
          for (const ticket of tickets) {
            if (ticket instanceof LogError.AppendConflict) return yield* Effect.fail(ticket);
            yield* Ticket.wait(ticket);
          }
        }),
      );
      // Transactions: [1,2,3,4], [5,6,7,8].
      expect(Object.fromEntries(counts.byVerb)).toEqual(expected);
      expect(await rows(options.schema ?? "")).toHaveLength(8);
    },
  );

  it.each([
    ["one script", (driver: Driver.Driver) => driver],
    ["a statement at a time", Pglite.stepwise],
  ])(
    "a batch folding an inbox row that is gone conflicts and writes nothing: %s",
    async (_, wrap) => {
      const options = fresh({ driver: () => wrap(Pglite.driver(database())) });
      await run(PgSchema.init(url, options));
      const failed = await run(
        Effect.gen(function* () {
          const { log } = yield* openCollect(options);
          // Another engine folded the row first: it is no longer in the inbox.
          const prepared = Either.getOrThrow(Batch.prepare([inserted(1)]));
          const batch = { ...prepared, consumed: ["0190a5e2-0000-7000-8000-000000000001"] };
          const ticket = log.append(batch, log.lastSequence());
          if (ticket instanceof LogError.AppendConflict) return ticket;
          return yield* Effect.flip(Ticket.wait(ticket));
        }),
      );
      expect(failed).toMatchObject({ _tag: "AppendConflict", expectedLastSequence: 0 });
      expect(await rows(options.schema ?? "")).toEqual([]);
    },
  );

  it("a ticket waiter that throws stops the log with DatabaseError: nothing waits forever", async () => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    const told: Array<string> = [];
    const outcome = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        const first = appendNow(log, [inserted(1)]);
        const second = appendNow(log, [inserted(2)]);
        if (first instanceof LogError.AppendConflict) return yield* Effect.fail(first);
        if (second instanceof LogError.AppendConflict) return yield* Effect.fail(second);
        Ticket.onSettled(first, () => {
          throw new Error("a waiter's bug");
        });
        Ticket.onSettled(first, (failure) =>
          told.push(failure === undefined ? "ok" : failure._tag),
        );
        // Both batches go in one transaction; the second's waiters are told too.
        const later = yield* Effect.either(Effect.timeout(Ticket.wait(second), "20 seconds"));
        // The writer stopped: the next append is refused at once, naming the defect.
        const third = appendNow(log, [inserted(3)]);
        const refused =
          third instanceof LogError.AppendConflict
            ? third
            : yield* Effect.flip(Effect.timeout(Ticket.wait(third), "20 seconds"));
        return { later, refused };
      }).pipe(Effect.catchAll(Effect.succeed)),
    );
    expect(told).toEqual(["ok"]);
    expect(outcome).toMatchObject({
      later: { _tag: "Right" },
      refused: { _tag: "DatabaseError", detail: expect.stringContaining("a waiter's bug") },
    });
  });

  it("a stale expected last sequence is AppendConflict and writes nothing", async () => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        yield* append(log, [inserted(1)]);
        const batch = Either.getOrThrow(Batch.prepare([inserted(2)]));
        const refused = log.append(batch, 0);
        expect(refused).toBeInstanceOf(LogError.AppendConflict);
        expect(log.lastSequence()).toBe(1);
      }),
    );
    expect(await rows(options.schema ?? "")).toEqual([{ epoch: 1, sequence: 1 }]);
  });

  it("the guard refuses an append after another writer's, and nothing of it is written", async () => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    const outcome = await run(
      Effect.gen(function* () {
        const first = yield* openCollect(options);
        const second = yield* openCollect(options);
        yield* append(second.log, [inserted(1), inserted(2)]);
        // The first log still believes the head is at 0.
        const failed = yield* Effect.flip(append(first.log, [inserted(7)]));
        return { failed, lastSequence: first.log.lastSequence() };
      }),
    );
    expect(outcome.failed).toMatchObject({
      _tag: "AppendConflict",
      expectedLastSequence: 0,
      lastSequence: 2,
    });
    // The first log now knows the head: a caller that caught up can append again.
    expect(outcome.lastSequence).toBe(2);
    expect(await rows(options.schema ?? "")).toEqual([
      { epoch: 1, sequence: 1 },
      { epoch: 1, sequence: 2 },
    ]);
  });
});

describe("stats().bytes beside other writers", () => {
  /** The bytes of the current generation's records, as the table holds them. */
  const tableBytes = async (schema: string) => {
    const found = await database().query<{ bytes: number | string }>(
      `SELECT coalesce(sum(octet_length(r.record)), 0) AS bytes FROM ${schema}.tay_record r JOIN ${schema}.tay_current c ON r.store_id = c.store_id AND r.epoch = c.epoch`,
    );
    return Number(found.rows[0]?.bytes);
  };
  const refreshed = (log: Log.Log<PgLog.PgKind>) => log.refresh?.() ?? Effect.void;
  const bytesOf = (log: Log.Log<PgLog.PgKind>) =>
    Effect.map(log.view.stats(), (stats) => stats.bytes);

  it("counts what others appended (read by refresh, and after a conflict) and follows a compaction", async () => {
    const options = fresh();
    const schema = options.schema ?? "";
    await run(PgSchema.init(url, options));
    const seen = await run(
      Effect.gen(function* () {
        const first = yield* openCollect(options);
        const second = yield* openCollect(options);
        const after: Array<readonly [number, number]> = [];
        yield* append(second.log, [inserted(1), inserted(2)]);
        yield* refreshed(first.log);
        after.push([yield* bytesOf(first.log), yield* bytesOf(second.log)]);
        // The second is behind: its append is refused, it appends after
        // the others' record without a refresh, is refused again, then
        // catches up (two runs of others' records with its own between).
        yield* append(first.log, [inserted(3)]);
        yield* Effect.flip(append(second.log, [inserted(9)]));
        yield* append(second.log, [inserted(4)]);
        yield* refreshed(first.log);
        yield* append(first.log, [inserted(5)]);
        yield* Effect.flip(append(second.log, [inserted(9)]));
        yield* refreshed(second.log);
        after.push([yield* bytesOf(first.log), yield* bytesOf(second.log)]);
        yield* append(second.log, [inserted(6)]);
        yield* refreshed(first.log);
        after.push([yield* bytesOf(first.log), yield* bytesOf(second.log)]);
        // The first compacts; the second follows onto the new generation.
        yield* first.log.compact([inserted(6)], 6);
        yield* append(first.log, [inserted(7)]);
        yield* refreshed(second.log);
        after.push([yield* bytesOf(first.log), yield* bytesOf(second.log)]);
        return after;
      }),
    );
    const total = await tableBytes(schema);
    const last = seen.at(-1);
    expect(last).toEqual([total, total]);
    for (const [first, second] of seen) expect(second).toBe(first);
    expect(seen.map(([first]) => first > 0)).toEqual([true, true, true, true]);
  });
  it("a refresh overtaken by a commit of its own log does not count that commit twice", async () => {
    // Holds the first read of the head with its bytes until `release`.
    const {
      driver: holdingDriver,
      holding,
      release,
    } = Pglite.holdingOnce(
      Pglite.driver(database()),
      (text) => text.startsWith("SELECT c.epoch") && text.includes("octet_length"),
    );
    const options = fresh({ driver: () => holdingDriver });
    await run(PgSchema.init(url, options));
    const bytes = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        const refreshing = yield* Effect.fork(refreshed(log));
        yield* Effect.promise(() => holding);
        yield* append(log, [inserted(1)]);
        release();
        yield* refreshing.await;
        return yield* bytesOf(log);
      }),
    );
    expect(bytes).toBe(await tableBytes(options.schema ?? ""));
    expect(bytes).toBeGreaterThan(0);
  });
  it("a refresh whose head read sees its own log's commit before the writer settled it takes nothing", async () => {
    // The head read waits until the append's transaction committed on the
    // server; the writer's answer is held until the refresh ended, so the
    // refresh finds its own append in flight (not idle) and the head it
    // read is that append's, not another writer's.
    const { driver: answerHeld, ran, answer } = scriptAnswerHeld(Pglite.driver(database()));
    const {
      driver: holdingDriver,
      holding,
      release,
    } = Pglite.holdingOnce(
      answerHeld,
      (text) => text.startsWith("SELECT c.epoch") && text.includes("octet_length"),
    );
    const options = fresh({ driver: () => holdingDriver });
    await run(PgSchema.init(url, options));
    const outcome = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        const refreshing = yield* Effect.fork(refreshed(log));
        yield* Effect.promise(() => holding);
        const ticket = appendNow(log, [inserted(1), inserted(2)]);
        if (ticket instanceof LogError.AppendConflict) return yield* Effect.fail(ticket);
        yield* Effect.promise(() => ran);
        release();
        yield* Fiber.join(refreshing);
        const during = yield* log.view.stats();
        answer();
        yield* Ticket.wait(ticket);
        return { during, after: yield* log.view.stats() };
      }),
    );
    // While the append was in flight the log still knew its head as 0, its bytes as none.
    expect(outcome.during).toMatchObject({ bytes: 0, lastSequence: 2, pendingRecords: 2 });
    expect(outcome.after).toMatchObject({ lastSequence: 2, pendingRecords: 0 });
    expect(outcome.after.bytes).toBe(await tableBytes(options.schema ?? ""));
    expect(outcome.after.bytes).toBeGreaterThan(0);
  });
});

/**
 * `inner` whose first script runs as sent (its transaction commits) but
 * whose answer waits until `answer`; `ran` resolves once it ran.
 */
const scriptAnswerHeld = (inner: Driver.Driver) => {
  let ranNow = () => {};
  let answer = () => {};
  const ran = new Promise<void>((resolve) => {
    ranNow = resolve;
  });
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  let planted = false;
  const driver: Driver.Driver = {
    connect: async () => {
      const session = await inner.connect();
      if (Driver.isFailure(session)) return session;
      const script = session.script;
      if (script === undefined) return session;
      return {
        ...session,
        script: async (text: string) => {
          if (planted) return script(text);
          planted = true;
          const results = await script(text);
          ranNow();
          await answered;
          return results;
        },
      };
    },
  };
  return { driver, ran, answer };
};

describe("compaction", () => {
  it("writes the base under epoch 2, switches CURRENT, deletes epoch 1; a reopen folds the base", async () => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    const report = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        yield* append(log, [inserted(1), inserted(2), inserted(3)]);
        const conflict = yield* Effect.flip(log.compact([inserted(3)], 2));
        expect(conflict._tag).toBe("CompactionConflict");
        const compacted = yield* log.compact([inserted(3)], 3);
        expect(yield* log.view.generation()).toEqual({
          epoch: 2,
          firstSequence: 4,
          baseRecordCount: 1,
        });
        expect(yield* Effect.flip(log.view.readFrom(3, 10))).toMatchObject({
          _tag: "Compacted",
          firstAvailable: 4,
        });
        yield* append(log, [inserted(4)]);
        expect((yield* log.view.readFrom(4, 10)).map((entry) => entry.sequence)).toEqual([4, 5]);
        return compacted;
      }),
    );
    expect(report).toMatchObject({ epoch: 2, firstSequence: 4, baseRecords: 1, removed: [1] });
    expect(await rows(options.schema ?? "")).toEqual([
      { epoch: 2, sequence: 4 },
      { epoch: 2, sequence: 5 },
    ]);
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({
      epoch: 2,
      parentEpoch: 1,
      firstSequence: 4,
      baseRecordCount: 1,
      lastSequence: 5,
      orphanedGenerations: [],
    });
    expect(reopened.state).toEqual([
      { sequence: 4, event: inserted(3) },
      { sequence: 5, event: inserted(4) },
    ]);
  });

  it("a read whose rows the compaction removed meanwhile is Compacted, not a gap", async () => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    // Holds the view's first page read (not open's) until the compaction has run.
    let armed = false;
    const held = Pglite.holdingOnce(
      Pglite.driver(database()),
      (text) => armed && text.startsWith("SELECT sequence, record"),
    );
    const read = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect({ ...options, driver: () => held.driver });
        yield* append(log, [inserted(1), inserted(2), inserted(3)]);
        armed = true;
        const reading = yield* Effect.fork(Effect.either(log.view.readFrom(1, 10)));
        yield* Effect.promise(() => held.holding);
        yield* log.compact([inserted(3)], 3);
        held.release();
        return yield* Fiber.join(reading);
      }),
    );
    expect(read).toMatchObject({
      _tag: "Left",
      left: { _tag: "Compacted", sequence: 1, firstAvailable: 4 },
    });
  });

  it("removes a generation of one record whole: no row of it is left", async () => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    const reports = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        yield* append(log, [inserted(1)]);
        // Epoch 1 holds one record; so does epoch 2, its base.
        const first = yield* log.compact([inserted(1)], 1);
        const second = yield* log.compact([inserted(1)], 2);
        return [first, second];
      }),
    );
    expect(reports).toMatchObject([
      { epoch: 2, removed: [1], notRemoved: [] },
      { epoch: 3, removed: [2], notRemoved: [] },
    ]);
    expect(await rows(options.schema ?? "")).toEqual([{ epoch: 3, sequence: 3 }]);
  });
});

/** `count` inserts from `from` on, counting in `pulled.count` how many the reader took. */
function* counted(from: number, count: number, pulled: { count: number }) {
  for (let jobId = from; jobId < from + count; jobId++) {
    pulled.count += 1;
    yield inserted(jobId);
  }
}

/**
 * `inner` whose sessions report, before each INSERT of records under epoch
 * 2, what `before` says; and fail one such INSERT as a lost connection,
 * after it ran or before it was sent (`drop`).
 */
const staging = (
  inner: Driver.Driver,
  before: (rows: number) => void,
  drop?: { readonly insert: number; readonly when: "after" | "before" },
): Driver.Driver => {
  let inserts = 0;
  const lost: Driver.Failure = {
    _tag: "DriverFailure",
    connection: true,
    code: "ECONNRESET",
    detail: "planted",
  };
  return {
    connect: async () => {
      const session = await inner.connect();
      if (Driver.isFailure(session)) return session;
      return {
        ...session,
        query: async (text, parameters) => {
          if (!(text.includes("tay_record (") && parameters[1] === 2)) {
            return session.query(text, parameters);
          }
          inserts += 1;
          before((parameters.length - 2) / 2);
          if (drop?.insert !== inserts) return session.query(text, parameters);
          if (drop.when === "after") await session.query(text, parameters);
          return lost;
        },
      };
    },
  };
};

/**
 * `inner` whose first COMMIT after the switch's move of the head runs (the
 * switch is durable) but answers as a lost connection: the compaction's
 * run again then finds the head already where it moves it.
 */
const switchCommitLost = (inner: Driver.Driver) => {
  let dropped = false;
  const driver: Driver.Driver = {
    connect: async () => {
      const session = await inner.connect();
      if (Driver.isFailure(session)) return session;
      let switching = false;
      return {
        ...session,
        query: async (text, parameters) => {
          if (text.includes("SET epoch = $3")) switching = true;
          if (dropped || !switching || text !== "COMMIT") return session.query(text, parameters);
          dropped = true;
          const committed = await session.query(text, parameters);
          if (Driver.isFailure(committed)) return committed;
          return { _tag: "DriverFailure", connection: true, code: "ECONNRESET", detail: "planted" };
        },
      };
    },
  };
  return { driver, dropped: () => dropped };
};

describe("compaction streams its base", () => {
  it("reads at most one slice of the base ahead of what it inserted; the count is set at the switch", async () => {
    const pulled = { count: 0 };
    const ahead: Array<number> = [];
    let written = 0;
    const options = fresh({ statementRowsMax: 4 });
    const driver = staging(Pglite.driver(database()), (rows) => {
      written += rows;
      ahead.push(pulled.count - written);
    });
    await run(PgSchema.init(url, options));
    const report = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect({ ...options, driver: () => driver });
        yield* append(log, [inserted(1), inserted(2), inserted(3)]);
        return yield* log.compact(counted(10, 22, pulled), 3);
      }),
    );
    expect(report).toMatchObject({ epoch: 2, firstSequence: 4, baseRecords: 22 });
    // Six slices of at most 4, each inserted before the next is read.
    expect(ahead).toEqual([0, 0, 0, 0, 0, 0]);
    const counts = await database().query(
      `SELECT epoch, base_record_count FROM ${options.schema}.tay_generation ORDER BY epoch`,
    );
    expect(counts.rows).toEqual([{ epoch: 2, base_record_count: 22 }]);
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({ epoch: 2, baseRecordCount: 22, lastSequence: 25 });
    expect(reopened.state.map((entry) => entry.sequence)).toEqual(
      Array.from({ length: 22 }, (_, index) => 4 + index),
    );
  });

  it.each([
    ["after", 2],
    ["before", 2],
    ["after", 6],
    ["before", 1],
  ] as const)(
    "a connection lost %s staged INSERT %d: the slice is inserted once, the base whole",
    async (when, insert) => {
      const options = fresh({ statementRowsMax: 4, reconnectDelayMs: 1 });
      const driver = staging(Pglite.driver(database()), () => {}, { insert, when });
      await run(PgSchema.init(url, options));
      await run(
        Effect.gen(function* () {
          const { log } = yield* openCollect({ ...options, driver: () => driver });
          yield* append(log, [inserted(1)]);
          yield* log.compact(counted(10, 22, { count: 0 }), 1);
        }),
      );
      const reopened = await run(openCollect(options));
      expect(reopened.report).toMatchObject({ epoch: 2, baseRecordCount: 22, lastSequence: 23 });
      expect(reopened.state.map((entry) => entry.event)).toEqual(
        Array.from({ length: 22 }, (_, index) => inserted(10 + index)),
      );
    },
  );

  it("a connection lost once the switch committed: the run again finds the head switched and takes it as its own", async () => {
    const options = fresh({ reconnectDelayMs: 1 });
    const planted = switchCommitLost(Pglite.driver(database()));
    await run(PgSchema.init(url, options));
    const outcome = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect({ ...options, driver: () => planted.driver });
        yield* append(log, [inserted(1)]);
        const report = yield* log.compact([inserted(10), inserted(11)], 1);
        yield* append(log, [inserted(12)]);
        return { report, dropped: planted.dropped() };
      }),
    );
    expect(outcome.dropped).toBe(true);
    expect(outcome.report).toMatchObject({ epoch: 2, firstSequence: 2, baseRecords: 2 });
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({ epoch: 2, lastSequence: 4 });
    expect(reopened.state.map((entry) => entry.event)).toEqual([10, 11, 12].map(inserted));
  });

  it("a run again that finds the staging ending elsewhere is Mismatch StagedSequence; epoch 1 stays", async () => {
    const options = fresh({ statementRowsMax: 4, reconnectDelayMs: 1 });
    const schema = options.schema ?? "";
    const dropping = staging(Pglite.driver(database()), () => {}, { insert: 2, when: "before" });
    // Each read of how far the staging goes finds none of it: the first slice is gone.
    const driver: Driver.Driver = {
      connect: async () => {
        const session = await dropping.connect();
        if (Driver.isFailure(session)) return session;
        return {
          ...session,
          query: async (text, parameters) => {
            if (text.startsWith("SELECT max(sequence)")) {
              await session.query(`DELETE FROM "${schema}".tay_record WHERE epoch = 2`, []);
            }
            return session.query(text, parameters);
          },
        };
      },
    };
    await run(PgSchema.init(url, options));
    const refused = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect({ ...options, driver: () => driver });
        yield* append(log, [inserted(1)]);
        return yield* Effect.flip(log.compact(counted(10, 22, { count: 0 }), 1));
      }),
    );
    // The second slice (sequences 6..9) follows 5: the staging had to end at 5 or 9.
    expect(refused).toMatchObject({
      _tag: "Mismatch",
      field: "StagedSequence",
      expected: "5 or 9",
      found: "1",
    });
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({ epoch: 1, lastSequence: 1, orphanedGenerations: [] });
  });

  it("a connection lost once the staged generation's row committed: the run again stages it over", async () => {
    const options = fresh({ statementRowsMax: 4, reconnectDelayMs: 1 });
    const inner = Pglite.driver(database());
    let dropped = false;
    // The COMMIT after the staged generation's INSERT runs; its answer is lost.
    const driver: Driver.Driver = {
      connect: async () => {
        const session = await inner.connect();
        if (Driver.isFailure(session)) return session;
        let staging = false;
        return {
          ...session,
          query: async (text, parameters) => {
            if (text.includes("tay_generation (")) staging = true;
            const result = await session.query(text, parameters);
            if (dropped || !staging || text !== "COMMIT") return result;
            dropped = true;
            const lost: Driver.Failure = {
              _tag: "DriverFailure",
              connection: true,
              code: "ECONNRESET",
              detail: "planted",
            };
            return lost;
          },
        };
      },
    };
    await run(PgSchema.init(url, options));
    const report = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect({ ...options, driver: () => driver });
        yield* append(log, [inserted(1)]);
        return yield* log.compact(counted(10, 6, { count: 0 }), 1);
      }),
    );
    expect(dropped).toBe(true);
    expect(report).toMatchObject({ epoch: 2, baseRecords: 6 });
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({ epoch: 2, baseRecordCount: 6, lastSequence: 7 });
  });

  it("an unencodable event ends the compaction: its staging removed, the epoch and appends unchanged", async () => {
    const options = fresh({ statementRowsMax: 4 });
    await run(PgSchema.init(url, options));
    const huge = Event.jobInserted({
      jobId: 9,
      queue: "default",
      worker: "W",
      args: "x".repeat(Limits.payloadBytesMax),
      priority: 0,
      maxAttempts: 1,
      scheduledAt: 0,
      insertedAt: 0,
    });
    // The base's producer is closed when the compaction ends early: its cleanup runs.
    let closed = false;
    function* base() {
      try {
        yield* counted(1, 5, { count: 0 });
        yield huge;
        // More after it: the slice that fails does not read the base to its end.
        yield* counted(20, 10, { count: 0 });
      } finally {
        closed = true;
      }
    }
    await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        yield* append(log, [inserted(1)]);
        const refused = yield* Effect.flip(log.compact(base(), 1));
        expect(refused._tag).toBe("UnencodableEvent");
        expect(closed).toBe(true);
        expect(yield* log.view.generation()).toEqual({
          epoch: 1,
          firstSequence: 1,
          baseRecordCount: 0,
        });
        yield* append(log, [inserted(2)]);
      }),
    );
    expect(await rows(options.schema ?? "")).toEqual([
      { epoch: 1, sequence: 1 },
      { epoch: 1, sequence: 2 },
    ]);
    const generations = await database().query(
      `SELECT epoch FROM ${options.schema}.tay_generation ORDER BY epoch`,
    );
    expect(generations.rows).toEqual([{ epoch: 1 }]);
  });
});

/**
 * A driver that counts the sessions left open and can hold the next read
 * of records until its session is closed (which fails it as a lost
 * connection, as node-postgres fails a query when `end` cuts it).
 */
const tracking = (inner: Driver.Driver) => {
  let open = 0;
  let connects = 0;
  let holdNext = false;
  let onHeld = () => {};
  const lost: Driver.Failure = {
    _tag: "DriverFailure",
    connection: true,
    code: undefined,
    detail: "Connection terminated",
  };
  const driver: Driver.Driver = {
    connect: async () => {
      const session = await inner.connect();
      if (Driver.isFailure(session)) return session;
      open += 1;
      connects += 1;
      let cut = () => {};
      let closed = false;
      return {
        query: (text, parameters) => {
          if (!holdNext || !text.startsWith("SELECT sequence, record")) {
            return session.query(text, parameters);
          }
          holdNext = false;
          const held = new Promise<Driver.Failure>((resolve) => {
            cut = () => resolve(lost);
          });
          onHeld();
          return held;
        },
        close: async () => {
          if (closed) return;
          closed = true;
          open -= 1;
          cut();
          await session.close();
        },
      };
    },
  };
  return {
    driver,
    open: () => open,
    connects: () => connects,
    /** Holds the next read of records; resolves once it is held. */
    holdNextRead: () =>
      new Promise<void>((resolve) => {
        holdNext = true;
        onHeld = resolve;
      }),
  };
};

describe("close", () => {
  it("a read running when the log closes fails StoreClosed and leaves no session open", async () => {
    const tracked = tracking(Pglite.driver(database()));
    const options = fresh({ driver: () => tracked.driver, reconnectDelayMs: 1 });
    await run(PgSchema.init(url, { ...options, driver: () => Pglite.driver(database()) }));
    let reading: Promise<unknown> = Promise.resolve();
    const after = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        yield* append(log, [inserted(1)]);
        const held = tracked.holdNextRead();
        // Forked, as an engine's catch-up is: the close does not wait for it.
        reading = Effect.runPromise(Effect.either(log.view.readFrom(1, 10)));
        yield* Effect.promise(() => held);
        return log;
      }),
    );
    // The scope closed the log while the read's statement was held.
    const outcome = await reading;
    // A reconnection would come after reconnectDelayMs: give it time to show.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(tracked.open()).toBe(0);
    expect(outcome).toMatchObject({ _tag: "Left", left: { _tag: "StoreClosed" } });
    // A read after the close connects nothing either.
    const connects = tracked.connects();
    const late = await Effect.runPromise(Effect.either(after.view.readFrom(1, 10)));
    expect(late).toMatchObject({ _tag: "Left", left: { _tag: "StoreClosed" } });
    expect(tracked.connects()).toBe(connects);
    expect(tracked.open()).toBe(0);
  });
});

describe("open refuses tampered rows, naming epoch and sequence", () => {
  const tampered = async (statement: (schema: string) => string) => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        yield* append(log, [inserted(1), inserted(2), inserted(3)]);
      }),
    );
    await database().query(statement(options.schema ?? ""));
    const error = await refusal(options);
    expect(error.message).not.toContain("hunter2");
    return { error, schema: options.schema ?? "" };
  };

  it("a flipped payload byte is CorruptRecord RecordChecksum", async () => {
    const { error, schema } = await tampered(
      (s) =>
        `UPDATE ${s}.tay_record SET record = set_byte(record, 30, get_byte(record, 30) # 1) WHERE sequence = 2`,
    );
    expect(error).toBeInstanceOf(PgError.CorruptRecord);
    expect(error).toMatchObject({ reason: "RecordChecksum", epoch: 1, sequence: 2 });
    expect(error.message).toMatch(
      new RegExp(
        `^RecordChecksum postgres://tester@pglite\\.invalid:5432/memory#${schema}\\.default epoch 1 sequence 2: `,
      ),
    );
  });

  it("a flipped header byte is HeaderChecksum; bytes after the record are TrailingBytes", async () => {
    const header = await tampered(
      (s) => `UPDATE ${s}.tay_record SET record = set_byte(record, 6, 1) WHERE sequence = 1`,
    );
    expect(header.error).toMatchObject({ reason: "HeaderChecksum", sequence: 1 });
    const trailing = await tampered(
      (s) => `UPDATE ${s}.tay_record SET record = record || '\\x00'::bytea WHERE sequence = 3`,
    );
    expect(trailing.error).toMatchObject({ reason: "TrailingBytes", sequence: 3 });
  });

  it("a deleted row is a gap (Mismatch Sequence); a deleted last row leaves the head past the records", async () => {
    const gap = await tampered((s) => `DELETE FROM ${s}.tay_record WHERE sequence = 2`);
    expect(gap.error).toMatchObject({
      _tag: "Mismatch",
      field: "Sequence",
      sequence: 2,
      found: "3",
    });
    const tail = await tampered((s) => `DELETE FROM ${s}.tay_record WHERE sequence = 3`);
    expect(tail.error).toMatchObject({ _tag: "Mismatch", field: "LastSequence" });
  });

  it("a record moved under another key is Mismatch RecordSequence; a head past its base is MissingBase", async () => {
    const moved = await tampered(
      (s) =>
        `UPDATE ${s}.tay_record SET record = (SELECT record FROM ${s}.tay_record WHERE sequence = 1) WHERE sequence = 2`,
    );
    expect(moved.error).toMatchObject({ _tag: "Mismatch", field: "RecordSequence", sequence: 2 });
    const base = await tampered((s) => `UPDATE ${s}.tay_generation SET base_record_count = 9`);
    expect(base.error).toMatchObject({ _tag: "MissingBase", baseRecordCount: 9, records: 3 });
  });

  it("a row past the head, whole and in order, is Mismatch LastSequence naming it", async () => {
    // The records up to the head are all there: only the read past it finds the row.
    const { error } = await tampered(
      (s) =>
        `INSERT INTO ${s}.tay_record (store_id, epoch, sequence, record) SELECT store_id, epoch, 4, record FROM ${s}.tay_record WHERE sequence = 3`,
    );
    expect(error).toMatchObject({
      _tag: "Mismatch",
      field: "LastSequence",
      epoch: 1,
      sequence: 4,
      found: "a record at 4",
    });
  });
});

describe("open's pages and budget", () => {
  /** A store holding `count` records, appended one batch each; its options. */
  const holding = async (count: number) => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        for (let index = 1; index <= count; index++) yield* append(log, [inserted(index)]);
      }),
    );
    return options;
  };

  it("reads page after page, whether the last page is full or not", async () => {
    // Pages of 2: 2, 2 and an empty one for 4 records; 2, 2 and 1 for 5.
    for (const count of [4, 5]) {
      const options = await holding(count);
      const opened = await run(openCollect({ ...options, pageRecords: 2 }));
      expect(opened.report.lastSequence).toBe(count);
      expect(opened.state.map((entry) => entry.sequence)).toEqual(
        Array.from({ length: count }, (_, index) => index + 1),
      );
    }
  });

  it("folds exactly historyRecordsMax records; one more is BudgetExceeded", async () => {
    const options = await holding(3);
    const opened = await run(openCollect({ ...options, historyRecordsMax: 3 }));
    expect(opened.report.lastSequence).toBe(3);
    expect(await refusal({ ...options, historyRecordsMax: 2 })).toMatchObject({
      _tag: "BudgetExceeded",
      budget: "historyRecordsMax",
      limit: 2,
    });
  });
});

describe("open's first read: the version, the marker, the head and the generations at once", () => {
  /** A store initialised in a schema of its own; its options and schema. */
  const made = async () => {
    const options = fresh();
    await run(PgSchema.init(url, options));
    return { options, schema: options.schema ?? "" };
  };

  it("a schema at another version is SchemaVersionMismatch, even where the read's tables are missing", async () => {
    // Version 2: no tay_compaction, so the joined read itself fails; the version read alone names it.
    const older = await made();
    await database().query(`DROP TABLE ${older.schema}.tay_compaction`);
    await database().query(`DELETE FROM ${older.schema}.tay_schema WHERE version = 3`);
    expect(await refusal(older.options)).toMatchObject({
      _tag: "SchemaVersionMismatch",
      found: 2,
      expected: 3,
    });
    // Version 4 over a whole store: every table there, and the store is still refused.
    const newer = await made();
    await database().query(`INSERT INTO ${newer.schema}.tay_schema VALUES (4, 0)`);
    expect(await refusal(newer.options)).toMatchObject({ found: 4, expected: 3 });
    // No migration recorded at all: version 0.
    const empty = await made();
    await database().query(`DELETE FROM ${empty.schema}.tay_schema`);
    expect(await refusal(empty.options)).toMatchObject({ found: 0, expected: 3 });
  });

  it("a missing head or current generation is MissingRow naming its table", async () => {
    const headless = await made();
    await database().query(`DELETE FROM ${headless.schema}.tay_current`);
    const head = await refusal(headless.options);
    expect(head).toMatchObject({ _tag: "MissingRow", table: "tay_current", epoch: undefined });
    expect(head.message).toContain("no row in tay_current");
    const orphaned = await made();
    await database().query(
      `ALTER TABLE ${orphaned.schema}.tay_current DROP CONSTRAINT tay_current_store_id_epoch_fkey`,
    );
    await database().query(`DELETE FROM ${orphaned.schema}.tay_generation`);
    expect(await refusal(orphaned.options)).toMatchObject({
      _tag: "MissingRow",
      table: "tay_generation",
      epoch: 1,
    });
  });

  it("a field beyond 2^53 in the marker, the head or the generation is MalformedRow naming its column", async () => {
    const beyond = "1152921504606846976";
    const cases = [
      ["tay_store", "created_at"],
      ["tay_current", "last_sequence"],
      ["tay_generation", "created_at"],
    ] as const;
    for (const [table, column] of cases) {
      const store = await made();
      await database().query(`UPDATE ${store.schema}.${table} SET ${column} = ${beyond}`);
      const error = await refusal(store.options);
      expect(error).toMatchObject({ _tag: "MalformedRow", table, column });
      expect(error.message).toContain(beyond);
    }
  });

  it("a generation whose parent is not below it, or whose first sequence is 0, is MalformedRow naming its column", async () => {
    // The table's CHECKs refuse both; a damaged or foreign table may lack them.
    const cases = [
      ["parent_epoch", 1, "tay_generation_check"],
      ["first_sequence", 0, "tay_generation_first_sequence_check"],
    ] as const;
    for (const [column, value, check] of cases) {
      const store = await made();
      await database().query(`ALTER TABLE ${store.schema}.tay_generation DROP CONSTRAINT ${check}`);
      await database().query(`UPDATE ${store.schema}.tay_generation SET ${column} = ${value}`);
      const error = await refusal(store.options);
      expect(error).toMatchObject({
        _tag: "MalformedRow",
        table: "tay_generation",
        column,
        epoch: 1,
      });
      expect(error.message).toContain(String(value));
    }
  });

  it("keeps to its store and its current epoch: the others reported in order, the lease beside them", async () => {
    const { options, schema } = await made();
    const other = { ...options, store: "other" };
    await run(PgSchema.init(url, other));
    const [row] = (
      await database().query(`SELECT store_id FROM ${schema}.tay_store WHERE name = 'default'`)
    ).rows;
    const storeId = String((row as { store_id: string }).store_id);
    // Epoch 2 current (empty, as after a switch), 1 superseded, 3 staged; a lease held.
    const generation = (epoch: number, parent: number, first: number) =>
      database().query(
        `INSERT INTO ${schema}.tay_generation VALUES ('${storeId}', ${epoch}, ${parent}, ${first}, 0, 5)`,
      );
    await generation(2, 1, 4);
    await generation(3, 2, 4);
    await database().query(
      `UPDATE ${schema}.tay_current SET epoch = 2, last_sequence = 3 WHERE store_id = '${storeId}'`,
    );
    await database().query(
      `INSERT INTO ${schema}.tay_compaction VALUES ('${storeId}', '0b9a4c1e-9f53-4d5e-8a53-0d3b1c7f2a11', 'elsewhere pid 7', 9)`,
    );
    const { report } = await run(openCollect(options));
    expect(report).toMatchObject({
      epoch: 2,
      parentEpoch: 1,
      firstSequence: 4,
      lastSequence: 3,
      records: 0,
      orphanedGenerations: [
        { epoch: 1, kind: "Superseded" },
        { epoch: 3, kind: "Staged" },
      ],
      compaction: { label: "elsewhere pid 7", expiresAt: 9 },
    });
    // The other store of the schema sees none of it.
    const alone = await run(openCollect(other));
    expect(alone.report).toMatchObject({ epoch: 1, lastSequence: 0, orphanedGenerations: [] });
    expect(alone.report.compaction).toBeUndefined();
  });
});
