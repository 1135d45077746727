/**
 * The append as one batch of prepared statements (node-postgres'
 * `Session.batch`, the extended query protocol with one Sync;
 * docs/postgres.md "One round trip per append"), on the real server: the
 * batch is one transaction (a statement that fails rolls back the ones
 * before it), its texts are prepared once per session and a failed batch
 * does not leave the session believing in statements the server never
 * took, the guard is still the conflict check where only the marker tells
 * another writer's head apart, and INSERTs carry powers of two rows so a
 * session prepares a handful of texts. Skipped without a server.
 */
import { Driver, PgLog, PgSchema } from "@tay/log-postgres";
import { Batch, type Log, LogError, Projection, Ticket } from "@tay/shell-node";
import { encodeRecord } from "@tay/codec";
import { Event } from "@tay/core";
import { Effect, Either } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { appendBatch, statements } from "../src/internal/sql.js";
import { chunkSizes } from "../src/internal/writer.js";
import { inserted, run } from "./support/events.js";
import * as Server from "./support/server.js";

const server = await Server.locate();
const serverUrl = "url" in server ? server.url : "";

const drops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const drop of drops.splice(0)) await drop();
});

const fresh = async () => {
  const made = await Server.freshDatabase(serverUrl);
  drops.push(made.drop);
  return made.url;
};

const append = (log: Log.Log<PgLog.PgKind>, events: ReadonlyArray<Event.Event>) =>
  Effect.gen(function* () {
    const ticket = log.append(Either.getOrThrow(Batch.prepare(events)), log.lastSequence());
    if (ticket instanceof LogError.AppendConflict) return yield* Effect.fail(ticket);
    yield* Ticket.wait(ticket);
  });

/** A node-postgres session on `url` (closed by the test). */
const sessionOn = async (url: string) => {
  const session = await Driver.nodePg(url).connect();
  if (Driver.isFailure(session)) throw new Error(session.detail);
  const batch = session.batch;
  if (batch === undefined) throw new Error("nodePg has no batch");
  return { session, batch };
};

const rowsOf = (url: string, text: string) =>
  Server.admin(url, async (client) => (await client.query(text)).rows);

describe("chunkSizes", () => {
  it("prepared: powers of two within statementRowsMax; a script: statementRowsMax each", () => {
    expect(chunkSizes(13, 1024, true)).toEqual([8, 4, 1]);
    expect(chunkSizes(1, 1024, true)).toEqual([1]);
    expect(chunkSizes(2500, 1000, true)).toEqual([512, 512, 512, 512, 256, 128, 64, 4]);
    expect(chunkSizes(2500, 1000, false)).toEqual([1000, 1000, 500]);
    expect(chunkSizes(0, 1024, true)).toEqual([]);
  });

  it("the batch's guard and its last move of the head are the log's advanceHead", () => {
    const texts = appendBatch("s1", {
      storeId: "6f9619ff-8b86-d011-b42d-00c04fc964ff",
      epoch: 1,
      expected: 0,
      last: 1,
      chunks: [[{ sequence: 1, bytes: Uint8Array.of(1) }]],
    }).map((statement) => statement.text);
    expect([texts[0], texts.at(-1)]).toEqual([
      statements("s1").advanceHead,
      statements("s1").advanceHead,
    ]);
  });
});

describe("the batch's texts, built once per schema", () => {
  const append = (rows: number) => ({
    storeId: "6f9619ff-8b86-d011-b42d-00c04fc964ff",
    epoch: 1,
    expected: 0,
    last: rows,
    chunks: [
      Array.from({ length: rows }, (_, index) => ({
        sequence: index + 1,
        bytes: Uint8Array.of(index),
      })),
    ],
  });
  const textsOf = (schema: string, rows: number) =>
    appendBatch(schema, append(rows)).map((statement) => statement.text);

  it("name the schema asked for, whichever schema the last append used", () => {
    const first = textsOf("s1", 1);
    const other = textsOf("s2", 1);
    expect(other.every((text) => text.includes('"s2".') && !text.includes('"s1".'))).toBe(true);
    expect(textsOf("s1", 1)).toEqual(first);
    expect(first.every((text) => text.includes('"s1".') && !text.includes('"s2".'))).toBe(true);
  });

  it("give each row count its own INSERT, with one pair of parameters per row", () => {
    for (const rows of [1, 2, 1, 4, 2, 8]) {
      const [, insert] = textsOf("s1", rows);
      expect(insert?.match(/CAST\(\$\d+ AS BYTEA\)/g)).toHaveLength(rows);
      expect(insert).toContain(`CAST($${3 + 2 * rows} AS BYTEA)`);
    }
  });
});

describe.skipIf(!("url" in server))("the append batch on a PostgreSQL server", () => {
  it("is one transaction: a statement that fails rolls back the ones before it", async () => {
    const url = await fresh();
    await rowsOf(url, "CREATE TABLE t (id INTEGER PRIMARY KEY)");
    const { session, batch } = await sessionOn(url);
    try {
      const failed = await batch([
        { text: "INSERT INTO t (id) VALUES ($1)", parameters: [1] },
        { text: "INSERT INTO t (id) VALUES ($1)", parameters: [2] },
        // The primary key refuses it: the whole batch rolls back.
        { text: "INSERT INTO t (id) VALUES ($1)", parameters: [1] },
      ]);
      expect(failed).toMatchObject({ _tag: "DriverFailure", connection: false, code: "23505" });
      expect(await rowsOf(url, "SELECT id FROM t")).toEqual([]);
      // The session goes on, and a batch that succeeds commits.
      const done = await batch([
        { text: "INSERT INTO t (id) VALUES ($1)", parameters: [3] },
        { text: "UPDATE t SET id = $1 WHERE id = $2", parameters: [4, 3] },
      ]);
      expect(done).toEqual([
        { rows: [], affected: 1 },
        { rows: [], affected: 1 },
      ]);
      expect(await rowsOf(url, "SELECT id FROM t")).toEqual([{ id: 4 }]);
    } finally {
      await session.close();
    }
  });

  it("prepares each text once per session; a failed batch's statements are parsed again", async () => {
    const url = await fresh();
    await rowsOf(url, "CREATE TABLE t (id INTEGER PRIMARY KEY)");
    const { session, batch } = await sessionOn(url);
    const prepared = async () => {
      const result = await session.query("SELECT statement FROM pg_prepared_statements", []);
      return Driver.isFailure(result) ? -1 : result.rows.length;
    };
    try {
      // The second execution fails (the primary key), and the server skips
      // the rest up to the Sync, the UPDATE's Parse with it: the session
      // must not believe that statement prepared.
      const broken = await batch([
        { text: "INSERT INTO t (id) VALUES ($1)", parameters: [1] },
        { text: "INSERT INTO t (id) VALUES ($1)", parameters: [1] },
        { text: "UPDATE t SET id = id WHERE id = $1", parameters: [1] },
      ]);
      expect(broken).toMatchObject({ _tag: "DriverFailure", connection: false, code: "23505" });
      for (let id = 10; id < 20; id++) {
        const done = await batch([
          { text: "INSERT INTO t (id) VALUES ($1)", parameters: [id] },
          { text: "UPDATE t SET id = id WHERE id = $1", parameters: [id] },
        ]);
        expect(Driver.isFailure(done)).toBe(false);
      }
      // The two texts, once each (and the INSERT's first name, from the failed batch, never used again).
      expect(await prepared()).toBeGreaterThanOrEqual(2);
      expect(await prepared()).toBeLessThanOrEqual(3);
      expect(await rowsOf(url, "SELECT count(*) AS n FROM t")).toEqual([{ n: "10" }]);
    } finally {
      await session.close();
    }
  });

  it("another writer's head at exactly this append's last: a conflict, nothing written", async () => {
    const url = await fresh();
    await run(PgSchema.init(url));
    const failed = await run(
      Effect.gen(function* () {
        const first = yield* PgLog.open(url, {}, Projection.collect);
        // The first log's session prepares its statements.
        yield* append(first.log, [inserted(1)]);
        const second = yield* PgLog.open(url, {}, Projection.collect);
        yield* append(second.log, [inserted(2), inserted(3)]);
        // The first expects 1 and would move the head to 3: where the second left it.
        return yield* Effect.flip(append(first.log, [inserted(8), inserted(9)]));
      }),
    );
    expect(failed).toMatchObject({
      _tag: "AppendConflict",
      expectedLastSequence: 1,
      lastSequence: 3,
    });
    const rows = await rowsOf(url, "SELECT sequence FROM tay.tay_record ORDER BY sequence");
    expect(rows.map((row) => Number(row.sequence))).toEqual([1, 2, 3]);
    const reopened = await run(PgLog.open(url, {}, Projection.collect));
    expect(reopened.state.map((entry) => entry.event)).toEqual([1, 2, 3].map(inserted));
  });

  it("the writer's one buffer, reused by every transaction, leaves each row exactly its record", async () => {
    const url = await fresh();
    await run(PgSchema.init(url));
    // Records of different sizes, transactions of different sizes: the
    // buffer grows, is reused by smaller ones (its older bytes past their
    // end), and a transaction past its largest kept size gets its own.
    const sized = (jobId: number, bytes: number) =>
      Event.jobInserted({
        jobId,
        queue: "default",
        worker: "W",
        args: "x".repeat(bytes),
        priority: 0,
        maxAttempts: 1,
        scheduledAt: 0,
        insertedAt: 0,
      });
    const groups = [
      [sized(1, 3000), sized(2, 10), sized(3, 5000)],
      [sized(4, 1)],
      [sized(5, 700), sized(6, 20_000)],
      [sized(7, 600_000), sized(8, 600_000)],
      [sized(9, 2)],
    ];
    const expected: Array<Uint8Array> = [];
    await run(
      Effect.gen(function* () {
        const { log } = yield* PgLog.open(url, {}, Projection.collect);
        for (const events of groups) {
          const batch = Either.getOrThrow(Batch.prepare(events));
          const ticket = log.append(batch, log.lastSequence());
          if (ticket instanceof LogError.AppendConflict) return yield* Effect.fail(ticket);
          yield* Ticket.wait(ticket);
          for (const record of batch.records) {
            const encoded = encodeRecord(record);
            if (encoded._tag === "Left") throw new Error(`unencodable: ${encoded.left.field}`);
            expected.push(encoded.right);
          }
        }
      }),
    );
    const rows = await rowsOf(url, "SELECT record FROM tay.tay_record ORDER BY sequence");
    expect(rows.map((row) => Uint8Array.from(row.record))).toEqual(expected);
  });

  it("a group of 13 records (INSERTs of 8, 4 and 1 rows) commits once and reads back in order", async () => {
    const url = await fresh();
    await run(PgSchema.init(url));
    await run(
      Effect.gen(function* () {
        const { log } = yield* PgLog.open(url, {}, Projection.collect);
        yield* append(
          log,
          Array.from({ length: 13 }, (_, index) => inserted(index + 1)),
        );
        expect(log.view.writes()).toEqual({ committed: 1, conflicted: 0, turns: 0 });
      }),
    );
    const reopened = await run(PgLog.open(url, {}, Projection.collect));
    expect(reopened.state.map((entry) => entry.sequence)).toEqual(
      Array.from({ length: 13 }, (_, index) => index + 1),
    );
  });
});
