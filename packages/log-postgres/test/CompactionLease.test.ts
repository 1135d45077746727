/**
 * The compaction lease on PGlite (docs/postgres.md, "Two compactions at
 * once"): two logs of one store compacting together (one switches, the
 * other is refused with `CompactionBusy` and changes nothing), a lease held
 * by another compactor (refused, named), an expired one (taken over, its
 * staging removed), a lease lost mid-compaction (the slice and the
 * switch refused: nothing of the compaction becomes current, nothing is
 * written after the loss), a log that has not followed another's
 * compaction (refused before it removes the current generation), and
 * open's report of the lease, read with the marker (statements counted).
 */
import type { PGlite } from "@electric-sql/pglite";
import { Driver, PgLog, type PgOptions, PgSchema } from "@tay/log-postgres";
import { Batch, type Log, LogError, Projection, Ticket } from "@tay/shell-node";
import { Effect, Either, Fiber, TestClock, TestContext } from "effect";
import { describe, expect, it } from "vitest";
import * as Pglite from "./support/pglite.js";
import { inserted, run } from "./support/events.js";

const pglite = Pglite.perFile("l");
const database = (): PGlite => pglite.database();

const url = "postgres://tester@pglite.invalid:5432/memory";
const fresh = pglite.fresh;

const append = (log: Log.Log<PgLog.PgKind>, jobIds: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const batch = Either.getOrThrow(Batch.prepare(jobIds.map(inserted)));
    const ticket = log.append(batch, log.lastSequence());
    if (ticket instanceof LogError.AppendConflict) return yield* Effect.fail(ticket);
    yield* Ticket.wait(ticket);
  });

const openCollect = (options: PgOptions.PgLogOptions) =>
  PgLog.open(url, options, Projection.collect);

/** `count` inserts from job `from` on: a base of several slices at `statementRowsMax: 4`. */
function* base(from: number, count: number) {
  for (let jobId = from; jobId < from + count; jobId++) yield inserted(jobId);
}

const query = async (text: string) => (await database().query(text)).rows;

/** A store with jobs 1..3 appended; its options. */
const storeWithThree = async (extra: PgOptions.PgLogOptions = {}) => {
  const options = fresh({ statementRowsMax: 4, ...extra });
  await run(PgSchema.init(url, options));
  await run(
    Effect.gen(function* () {
      const { log } = yield* openCollect(options);
      yield* append(log, [1, 2, 3]);
    }),
  );
  return options;
};

/** Sets the store's lease row as another compactor's, expiring at `expiresAt`. */
const holdLease = async (schema: string, expiresAt: number) => {
  await database().query(`DELETE FROM ${schema}.tay_compaction`);
  await database().query(
    `INSERT INTO ${schema}.tay_compaction (store_id, holder, label, expires_at) SELECT store_id, '00000000-0000-4000-8000-000000000001', 'elsewhere pid 7', ${expiresAt} FROM ${schema}.tay_store`,
  );
};

describe("two compactions at once", () => {
  it("one switches, the other is refused with CompactionBusy; the store reopens whole", async () => {
    // One driver for both logs: its sessions keep their transactions apart on the one PGlite.
    const shared = Pglite.driver(database());
    const options = await storeWithThree({ driver: () => shared });
    const outcomes = await run(
      Effect.gen(function* () {
        const first = yield* openCollect(options);
        const second = yield* openCollect(options);
        return yield* Effect.all(
          [
            Effect.either(first.log.compact(base(10, 22), 3)),
            Effect.either(second.log.compact(base(100, 22), 3)),
          ],
          { concurrency: 2 },
        );
      }),
    );
    const won = outcomes.filter(Either.isRight);
    const lost = outcomes.filter(Either.isLeft).map((outcome) => outcome.left);
    expect(won).toHaveLength(1);
    expect(lost.map((error) => error._tag)).toEqual(["CompactionBusy"]);
    expect(lost[0]?.message).toContain("another compaction holds this store");
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({
      epoch: 2,
      baseRecordCount: 22,
      lastSequence: 25,
      orphanedGenerations: [],
    });
    const from = reopened.state[0]?.event;
    expect(from?._tag === "JobInserted" && [10, 100].includes(from.jobId)).toBe(true);
    expect(await query(`SELECT holder FROM ${options.schema}.tay_compaction`)).toEqual([
      { holder: null },
    ]);
  });
});

describe("a log behind another's compaction", () => {
  it("is refused with CompactionConflict before it removes anything: the other's generation stays whole", async () => {
    const shared = Pglite.driver(database());
    const options = await storeWithThree({ driver: () => shared, pollIntervalMs: 3_600_000 });
    const refused = await run(
      Effect.gen(function* () {
        const behind = yield* openCollect(options);
        const ahead = yield* openCollect(options);
        yield* ahead.log.compact(base(10, 6), 3);
        // `behind` is still on epoch 1 at sequence 3: its own check passes.
        return yield* Effect.flip(behind.log.compact(base(100, 2), 3));
      }),
    );
    expect(refused._tag).toBe("CompactionConflict");
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({ epoch: 2, baseRecordCount: 6, lastSequence: 9 });
    expect(reopened.state.map((entry) => entry.event)).toEqual([...base(10, 6)]);
  });

  it("is refused when the other's base was empty: the head at the same sequence, in another epoch", async () => {
    const shared = Pglite.driver(database());
    const options = await storeWithThree({ driver: () => shared, pollIntervalMs: 3_600_000 });
    const refused = await run(
      Effect.gen(function* () {
        const behind = yield* openCollect(options);
        const ahead = yield* openCollect(options);
        // Epoch 2 with no base: the head moves to (2, 3), its sequence unchanged.
        yield* ahead.log.compact([], 3);
        return yield* Effect.flip(behind.log.compact(base(100, 2), 3));
      }),
    );
    expect(refused._tag).toBe("CompactionConflict");
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({
      epoch: 2,
      baseRecordCount: 0,
      lastSequence: 3,
      orphanedGenerations: [],
    });
    expect(reopened.state).toEqual([]);
  });
});

describe("a log whose state moves while its compaction starts", () => {
  it("is refused when another's append came before its claim, even once a refresh took that in", async () => {
    // The compaction waits at its lease (the claim's first statement) while
    // the other log appends and this one refreshes: its state then says 4,
    // the sequence its base was made for says 3.
    const held = Pglite.holdingOnce(Pglite.driver(database()), (text) =>
      text.includes("tay_compaction SET holder"),
    );
    const options = await storeWithThree({ driver: () => held.driver, pollIntervalMs: 3_600_000 });
    const outcome = await run(
      Effect.gen(function* () {
        const compacting = yield* openCollect(options);
        const other = yield* openCollect(options);
        const compaction = yield* Effect.fork(
          Effect.either(compacting.log.compact(base(10, 3), 3)),
        );
        yield* Effect.promise(() => held.holding);
        yield* append(other.log, [4]);
        yield* compacting.log.refresh?.() ?? Effect.void;
        const moved = compacting.log.lastSequence();
        held.release();
        return { result: yield* Fiber.join(compaction), moved };
      }),
    );
    expect(outcome.moved).toBe(4);
    expect(outcome.result._tag === "Left" ? outcome.result.left._tag : "switched").toBe(
      "CompactionConflict",
    );
    // Nothing was compacted: the other's record is there, in epoch 1.
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({ epoch: 1, lastSequence: 4 });
    expect(reopened.state.map((entry) => entry.event)).toEqual([1, 2, 3, 4].map(inserted));
  });
});

describe("the lease", () => {
  it("held by another compactor: refused, naming it and its expiry; nothing changed", async () => {
    const options = await storeWithThree();
    const until = Date.now() + 3_600_000;
    await holdLease(options.schema ?? "", until);
    const refused = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        const error = yield* Effect.flip(log.compact(base(10, 5), 3));
        // The gate opened again: appends go on.
        yield* append(log, [4]);
        return error;
      }),
    );
    expect(refused).toMatchObject({ _tag: "CompactionBusy", label: "elsewhere pid 7" });
    expect(refused.message).toContain("elsewhere pid 7");
    expect(refused.message).toContain(new Date(until).toISOString());
    expect(refused.message).toContain("nothing was changed");
    expect(await query(`SELECT epoch FROM ${options.schema}.tay_generation`)).toEqual([
      { epoch: 1 },
    ]);
  });

  it("read by open in the marker's round trip: the report names a holder, and none when free", async () => {
    const { driver, counts } = Pglite.counting(Pglite.driver(database()));
    const options = await storeWithThree({ driver: () => driver });
    const openReport = async () => {
      counts.byVerb.clear();
      const { report } = await run(openCollect(options));
      return { compaction: report.compaction, statements: Object.fromEntries(counts.byVerb) };
    };
    // Never compacted: no lease row.
    const never = await openReport();
    expect(never.compaction).toBeUndefined();
    const until = Date.now() + 3_600_000;
    await holdLease(options.schema ?? "", until);
    const held = await openReport();
    expect(held.compaction).toEqual({ label: "elsewhere pid 7", expiresAt: until });
    await database().query(`UPDATE ${options.schema}.tay_compaction SET holder = NULL`);
    expect((await openReport()).compaction).toBeUndefined();
    // One SELECT for the schema version, the marker with the lease, the head, the generation
    // and the others; one page of records; the check past the head. 6 round trips in all:
    // 7 while the isolation level was set on its own (2026-12-05), 11 while the version, the
    // head, the generation and the others had their own, 12 with the lease.
    const statements = { SELECT: 3, BEGIN: 1, COMMIT: 1, SHOW: 1 };
    expect(never.statements).toEqual(statements);
    expect(held.statements).toEqual(statements);
  });

  it("expiring at this very millisecond: still held; taken once the clock has passed it", async () => {
    const options = await storeWithThree();
    const until = Date.now() + 3_600_000;
    await holdLease(options.schema ?? "", until);
    // Compacts with this process's clock at `now` (the lease's "run out" is by that clock).
    const compactAt = (now: number) =>
      run(
        Effect.gen(function* () {
          yield* TestClock.setTime(now);
          const { log } = yield* openCollect(options);
          return yield* Effect.either(log.compact(base(10, 5), 3));
        }).pipe(Effect.provide(TestContext.TestContext)),
      );
    const atExpiry = await compactAt(until);
    expect(atExpiry).toMatchObject({ _tag: "Left", left: { _tag: "CompactionBusy" } });
    const after = await compactAt(until + 1);
    expect(after).toMatchObject({ _tag: "Right", right: { epoch: 2 } });
  });

  it("expired: taken over, the crashed compactor's staging removed, the compaction whole", async () => {
    const options = await storeWithThree();
    const schema = options.schema ?? "";
    await holdLease(schema, Date.now() - 1);
    // What a compactor that died mid-staging left: generation 2 and part of its base.
    const [store] = await query(`SELECT store_id FROM ${schema}.tay_store`);
    const storeId = String((store as { store_id: string }).store_id);
    await database().query(
      `INSERT INTO ${schema}.tay_generation VALUES ('${storeId}', 2, 1, 4, 0, 0)`,
    );
    await database().query(
      `INSERT INTO ${schema}.tay_record SELECT store_id, 2, 4, record FROM ${schema}.tay_record WHERE epoch = 1 AND sequence = 1`,
    );
    const report = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        return yield* log.compact(base(10, 6), 3);
      }),
    );
    // The dead compactor's generation 2 (a leftover), then the superseded 1.
    expect(report).toMatchObject({ epoch: 2, baseRecords: 6, removed: [2, 1] });
    const reopened = await run(openCollect(options));
    expect(reopened.report).toMatchObject({ epoch: 2, baseRecordCount: 6, lastSequence: 9 });
    expect(reopened.state.map((entry) => entry.event)).toEqual([...base(10, 6)]);
  });
});

/**
 * `inner` whose sessions let another compactor take the lease (its row
 * rewritten as if it had run out and been taken) just before the BEGIN of
 * the transaction that inserts the `slice`-th slice of staged records
 * under epoch 2: no transaction of the log is open then.
 */
const stealing = (inner: Driver.Driver, schema: string, slice: number): Driver.Driver => {
  let inserts = 0;
  let staging = false;
  let stolen = false;
  return {
    connect: async () => {
      const session = await inner.connect();
      if (Driver.isFailure(session)) return session;
      return {
        ...session,
        query: async (text, parameters) => {
          if (text.startsWith("INSERT INTO") && text.includes("tay_generation (")) staging = true;
          if (text.includes("tay_record (") && parameters[1] === 2) inserts += 1;
          if (text === "BEGIN" && staging && !stolen && inserts === slice - 1) {
            stolen = true;
            await holdLease(schema, Date.now() + 3_600_000);
          }
          return session.query(text, parameters);
        },
      };
    },
  };
};

describe("a lease lost mid-compaction", () => {
  // 22 base records at 4 a slice: slices 1..6, then the switch's transaction.
  it.each([
    ["staged INSERT 1", 1, 0],
    ["staged INSERT 3", 3, 8],
    ["the switch", 7, 22],
  ])(
    "before %s: refused with CompactionLeaseLost, nothing written after the loss, epoch 1 current",
    async (_, slice, rows) => {
      const options = await storeWithThree();
      const schema = options.schema ?? "";
      const driver = stealing(Pglite.driver(database()), schema, slice);
      const refused = await run(
        Effect.gen(function* () {
          const { log } = yield* openCollect({ ...options, driver: () => driver });
          const error = yield* Effect.flip(log.compact(base(10, 22), 3));
          expect(yield* log.view.generation()).toMatchObject({ epoch: 1 });
          // Appends go on in epoch 1.
          yield* append(log, [4]);
          return error;
        }),
      );
      expect(refused._tag).toBe("CompactionLeaseLost");
      expect(refused.message).toContain("elsewhere pid 7");
      // The slices before the loss and none after; the new holder removes them.
      const staged = await query(`SELECT count(*) AS n FROM ${schema}.tay_record WHERE epoch = 2`);
      expect(staged).toEqual([{ n: rows }]);
      expect(await query(`SELECT epoch, last_sequence FROM ${schema}.tay_current`)).toEqual([
        { epoch: 1, last_sequence: 4 },
      ]);
      expect(
        await query(`SELECT base_record_count FROM ${schema}.tay_generation WHERE epoch = 2`),
      ).toEqual([{ base_record_count: 0 }]);
    },
  );
});
