/**
 * `tay copy` a page at a time, run in this process (`Cli.run`), against a
 * real server (TAY_PG_URL, else 127.0.0.1:5432; skipped with the reason
 * when none answers): a store of several pages (a compacted base, then
 * 2,600 records: the file scan hands over at most 1,024 records at a time,
 * PostgreSQL is read 1,024 rows a page) goes to PostgreSQL and back with
 * every record's bytes identical under the same sequences; and a copy
 * that fails after pages were written, either way, leaves no store at the
 * destination (the directory is gone, the PostgreSQL store absent).
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { Engine, Init, NodeDisk } from "@tay/shell-node";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectFailure,
  flipBit,
  lastSegment,
  recordOffsets,
  removeTemporary,
  runInProcess,
  segmentRecords,
  temporaryDirectory,
} from "./support/cli.js";
import { admin, answers, freshDatabase } from "./support/postgres.js";

const reachable = await answers("CLI copy tests");

/** Jobs inserted after the compaction: more than two pages of records. */
const tail = 2600;

let root = "";
/** The source: a compacted base of 1,300 available jobs, then `tail` more inserts. */
let data = "";

/** Runs `tay args... --json` in this process, expects success, parses its document. */
const json = async (args: ReadonlyArray<string>): Promise<Record<string, unknown>> => {
  const run = await runInProcess([...args, "--json"]);
  expect(run.stderr, args.join(" ")).toBe("");
  expect(run.status, args.join(" ")).toBe(0);
  return JSON.parse(run.stdout);
};

const exists = (target: string) =>
  fs.stat(target).then(
    () => true,
    () => false,
  );

/** Expects the PostgreSQL store at `url` byte for byte equal to the directory store's generation. */
const expectSameRecords = async (url: string, directory: string) => {
  const rows = await admin(url, (client) =>
    client.query("SELECT sequence, record FROM tay.tay_record ORDER BY sequence"),
  );
  const source = await segmentRecords(directory);
  expect(rows.rows.map((row) => Number(row.sequence))).toEqual([...source.keys()]);
  for (const row of rows.rows) {
    const bytes = source.get(Number(row.sequence)) ?? Buffer.alloc(0);
    expect(Buffer.from(row.record).equals(bytes), `sequence ${row.sequence}`).toBe(true);
  }
};

beforeAll(async () => {
  root = await temporaryDirectory();
  data = path.join(root, "data");
  const jobs = (from: number, count: number) =>
    Array.from({ length: count }, (_, index) => ({
      queue: "q",
      worker: "W",
      args: { n: from + index, text: "x".repeat(from % 50) },
    }));
  await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        yield* Init.init(data);
        const engine = yield* Engine.open(data, { timers: false });
        // One insert per record; those issued together share a drain.
        const insert = (from: number, count: number) =>
          Effect.all(
            jobs(from, count).map((job) => engine.insert(job)),
            { concurrency: "unbounded", discard: true },
          );
        for (let from = 0; from < 1300; from += 100) yield* insert(from, 100);
        yield* engine.cancel(1);
        yield* engine.compact(0);
        for (let from = 1300; from < 1300 + tail; from += 100) {
          yield* insert(from, 100);
        }
        yield* engine.close();
      }),
    ).pipe(Effect.provide(NodeDisk.layer)),
  );
});

afterAll(() => removeTemporary(root));

describe.skipIf(!reachable)("tay copy, a page at a time", () => {
  it("moves a store of several pages to PostgreSQL and back, byte for byte", async () => {
    const verified = await json(["verify", data]);
    expect(verified.records).toBeGreaterThan(2 * 1024);
    const url = await freshDatabase();
    const there = await json(["copy", data, url]);
    expect(there).toMatchObject({
      first_sequence: verified.first_sequence,
      last_sequence: verified.last_sequence,
      records: verified.records,
      jobs: 1300 + tail - 1,
    });
    await expectSameRecords(url, data);
    const back = path.join(root, "back");
    const returned = await json(["copy", url, back]);
    expect(returned).toMatchObject({
      target: back,
      first_sequence: verified.first_sequence,
      last_sequence: verified.last_sequence,
      base_record_count: there.base_record_count,
      records: verified.records,
    });
    const original = await segmentRecords(data);
    const copied = await segmentRecords(back);
    expect([...copied.keys()]).toEqual([...original.keys()]);
    for (const [sequence, bytes] of original) {
      expect(copied.get(sequence)?.equals(bytes), `sequence ${sequence}`).toBe(true);
    }
    expect((await runInProcess(["jobs", back, "--json"])).stdout).toBe(
      (await runInProcess(["jobs", data, "--json"])).stdout,
    );
  }, 240_000);

  it("a copy to PostgreSQL that fails after a page leaves no store there", async () => {
    const broken = path.join(root, "broken");
    await fs.cp(data, broken, { recursive: true });
    // Damage a record past the first two pages of the active segment.
    const segment = await lastSegment(broken);
    const offsets = await recordOffsets(segment);
    await flipBit(segment, (offsets[2100] ?? 0) + 30);
    const url = await freshDatabase();
    expectFailure(await runInProcess(["copy", broken, url]), "RecordChecksum");
    const verified = await runInProcess(["verify", url]);
    expectFailure(verified, "StoreNotFound");
    const rows = await admin(url, (client) =>
      client.query("SELECT count(*) AS n FROM tay.tay_record"),
    );
    expect(Number(rows.rows[0]?.n)).toBe(0);
  }, 240_000);

  it("a copy from PostgreSQL that fails after a page leaves no directory", async () => {
    const url = await freshDatabase();
    await json(["copy", data, url]);
    const { first_sequence: first } = await json(["verify", url]);
    // A row two pages in no longer decodes: its record CRC fails.
    await admin(url, (client) =>
      client.query(
        "UPDATE tay.tay_record SET record = overlay(record placing '\\xff'::bytea from 31 for 1) WHERE sequence = $1",
        [Number(first) + 2100],
      ),
    );
    const target = path.join(root, "never");
    expectFailure(await runInProcess(["copy", url, target]), "RecordChecksum");
    expect(await exists(target)).toBe(false);
    // Into a directory that existed (empty): it is left empty.
    await fs.mkdir(target);
    expectFailure(await runInProcess(["copy", url, target]), "RecordChecksum");
    expect(await fs.readdir(target)).toEqual(["LOCK"]);
    // The store was staged beside DIR (.never.tay-copy-<hex>): removed on the failure.
    const staged = (await fs.readdir(root)).filter((name) => name.startsWith(".never.tay-copy-"));
    expect(staged).toEqual([]);
  }, 240_000);
});
