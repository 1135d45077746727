// Proves Import writes a new store whose generation 1 starts at the given first sequence with the
// given base and holds every event under its own sequence, in the bytes the codec encodes, and that
// the store verifies and opens to append after them; and that it refuses, writing nothing, a
// history core's fold refuses and a directory that is not empty. Real temporary directories.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { decodeRecord, encodeRecord } from "@tay/codec";
import { Generation, Snapshot, State } from "@tay/core";
import { describe, expect, it } from "@effect/vitest";
import { Effect, Either, Layer } from "effect";
import { Disk } from "../../src/disk/Disk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Lock from "../../src/disk/Lock.js";
import * as Batch from "../../src/log/Batch.js";
import * as CopyStaging from "../../src/store/CopyStaging.js";
import * as Import from "../../src/store/Import.js";
import * as Init from "../../src/store/Init.js";
import * as Layout from "../../src/store/Layout.js";
import * as Recovery from "../../src/store/Recovery.js";
import { foldProjection } from "../../src/store/StateProjection.js";
import { dataDirectory, inserted, nodeDisk, temporaryDirectory } from "../support/store.js";

/** A canonical base of jobs 1..3, then jobs 4 and 5 inserted after it. */
const history = () => {
  const builder = Generation.start(0);
  for (const jobId of [1, 2, 3]) Generation.apply(builder, jobId, inserted(jobId));
  const state = Generation.finish(builder);
  if (state._tag === "Left") throw new Error("the fixture folds");
  const base = Snapshot.snapshot(state.right, { now: 0, retentionMs: Number.MAX_SAFE_INTEGER });
  return { base, events: [...base, inserted(4), inserted(5)] };
};

/** Every record in the generation's segment files, by sequence, as bytes. */
const segmentRecords = (directory: string) =>
  Effect.promise(async () => {
    const segments = Layout.segmentsPath(directory, 1);
    const records = new Map<number, Uint8Array>();
    for (const name of (await fs.readdir(segments)).sort()) {
      const bytes = new Uint8Array(await fs.readFile(path.join(segments, name)));
      for (let offset = 44; offset < bytes.length; ) {
        const decoded = decodeRecord(bytes, offset);
        if (decoded._tag !== "Record") break;
        records.set(decoded.record.sequence, bytes.subarray(offset, offset + decoded.size));
        offset += decoded.size;
      }
    }
    return records;
  });

describe("Import.importGeneration", () => {
  it.scopedLive("writes generation 1 from the given sequence, byte for byte, and it opens", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      const { base, events } = history();
      const imported = yield* Import.importGeneration(directory, {
        firstSequence: 41,
        baseRecordCount: base.length,
        events,
      });
      expect(imported).toMatchObject({
        firstSequence: 41,
        lastSequence: 40 + events.length,
        baseRecordCount: base.length,
        segments: 2,
      });
      expect(State.jobCount(imported.state)).toBe(5);
      const records = yield* segmentRecords(directory);
      const expected = Either.getOrThrow(Batch.prepare(events)).records;
      expect([...records.keys()]).toEqual(events.map((_, index) => 41 + index));
      for (const [index, record] of expected.entries()) {
        record.sequence = 41 + index;
        const encoded = encodeRecord(record);
        if (encoded._tag === "Left") return expect.unreachable("the fixture encodes");
        expect(records.get(41 + index)).toEqual(encoded.right);
      }
      const inspection = yield* Recovery.inspect(directory, {}, foldProjection);
      expect(inspection.report).toMatchObject({
        epoch: 1,
        parentEpoch: 0,
        firstSequence: 41,
        baseRecordCount: base.length,
        lastSequence: 40 + events.length,
        orphanedGenerations: [],
        stagedSegment: null,
      });
      const engine = yield* Engine.open(directory, { timers: false });
      const job = yield* engine.insert({ queue: "q", worker: "W", args: null });
      expect(job.jobId).toBe(6);
      expect((yield* engine.log.stats()).lastSequence).toBe(41 + events.length);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("an empty history: an empty generation at the given sequence", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      const imported = yield* Import.importGeneration(directory, {
        firstSequence: 7,
        baseRecordCount: 0,
        events: [],
      });
      expect(imported).toMatchObject({ firstSequence: 7, lastSequence: 6, segments: 1 });
      const engine = yield* Engine.open(directory, { timers: false });
      yield* engine.insert({ queue: "q", worker: "W", args: null });
      expect((yield* engine.log.stats()).lastSequence).toBe(7);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("refuses a history the fold refuses, creating nothing", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      // A base of one record that is not a snapshot part.
      const refused = yield* Effect.flip(
        Import.importGeneration(directory, {
          firstSequence: 1,
          baseRecordCount: 1,
          events: [inserted(1)],
        }),
      );
      expect(refused._tag).toBe("HistoryRejected");
      expect(refused.message).toContain("sequence 1");
      const created = yield* Effect.promise(() =>
        fs.stat(directory).then(
          () => true,
          () => false,
        ),
      );
      expect(created).toBe(false);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("refuses a directory that is not empty, with NotEmpty, changing nothing", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      yield* Effect.promise(() => fs.writeFile(path.join(directory, "notes.txt"), "mine"));
      const refused = yield* Effect.flip(Import.checkTarget(directory));
      expect(refused._tag).toBe("NotEmpty");
      const again = yield* Effect.flip(
        Import.importGeneration(directory, { firstSequence: 1, baseRecordCount: 0, events: [] }),
      );
      expect(again._tag).toBe("NotEmpty");
      expect(yield* Effect.promise(() => fs.readdir(directory))).toEqual(["notes.txt"]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("refuses a DIR that is a file, with StoreNotFound, changing nothing", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      yield* Effect.promise(() => fs.writeFile(directory, "mine"));
      const refused = yield* Effect.flip(
        Import.importGeneration(directory, { firstSequence: 1, baseRecordCount: 0, events: [] }),
      );
      expect(refused).toMatchObject({ _tag: "StoreNotFound", reason: "NotADirectory" });
      expect(yield* Effect.promise(() => fs.readFile(directory, "utf8"))).toBe("mine");
      expect(yield* Effect.promise(() => fs.readdir(path.dirname(directory)))).toEqual(["data"]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "a DIR holding only a LOCK is replaced by the store; nothing is left beside it",
    () =>
      Effect.gen(function* () {
        const directory = yield* dataDirectory;
        yield* Effect.promise(() => fs.mkdir(directory));
        yield* Effect.promise(() => fs.writeFile(path.join(directory, "LOCK"), ""));
        yield* Import.importGeneration(directory, {
          firstSequence: 1,
          baseRecordCount: 0,
          events: [],
        });
        const entries = yield* Effect.promise(() => fs.readdir(directory));
        expect(entries).toContain("CURRENT");
        expect(yield* Effect.promise(() => fs.readdir(path.dirname(directory)))).toEqual(["data"]);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a DIR spelled with a trailing /. is replaced all the same", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      yield* Effect.promise(() => fs.mkdir(directory));
      yield* Import.importGeneration(`${directory}/.`, {
        firstSequence: 1,
        baseRecordCount: 0,
        events: [],
      });
      expect(yield* Effect.promise(() => fs.readdir(directory))).toContain("CURRENT");
      expect(yield* Effect.promise(() => fs.readdir(path.dirname(directory)))).toEqual(["data"]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a DIR that gains an entry before the rename is NotEmpty; the staging goes", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      const refused = yield* Effect.flip(
        Import.importPages(directory, (sink) =>
          Effect.gen(function* () {
            yield* sink.begin({ firstSequence: 1, baseRecordCount: 0 });
            // Another program makes DIR and writes into it while the copy runs.
            yield* Effect.promise(async () => {
              await fs.mkdir(directory);
              await fs.writeFile(path.join(directory, "notes.txt"), "mine");
            });
          }),
        ),
      );
      expect(refused._tag).toBe("NotEmpty");
      expect(refused.message).toContain("notes.txt");
      expect(yield* Effect.promise(() => fs.readdir(directory))).toEqual(["notes.txt"]);
      expect(yield* Effect.promise(() => fs.readdir(path.dirname(directory)))).toEqual(["data"]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "a DIR an init fills while the import waits for its lock is NotEmpty, checked again under the lock",
    () =>
      Effect.gen(function* () {
        const directory = yield* dataDirectory;
        yield* Effect.promise(() => fs.mkdir(directory));
        // The import's lock of DIR is taken only after an init of DIR has run whole.
        const lock = Layout.lockPath(directory);
        let raced = false;
        const racing = Layer.succeed(Disk, {
          ...NodeDisk.make,
          lock: (file: string) =>
            Effect.suspend(() => {
              if (raced || file !== lock) return NodeDisk.make.lock(file);
              raced = true;
              return Effect.zipRight(
                Effect.orDie(Effect.provide(Init.init(directory), nodeDisk)),
                NodeDisk.make.lock(file),
              );
            }),
        });
        const refused = yield* Effect.flip(
          Effect.provide(
            Import.importGeneration(directory, {
              firstSequence: 1,
              baseRecordCount: 0,
              events: [],
            }),
            racing,
          ),
        );
        expect(raced).toBe(true);
        expect(refused._tag).toBe("NotEmpty");
        // The init's store is left as it was, its LOCK included, and nothing beside it.
        const entries = yield* Effect.promise(() => fs.readdir(directory));
        expect(entries).toEqual(expect.arrayContaining(["CURRENT", "LOCK", "STORE-V2"]));
        expect(yield* Effect.promise(() => fs.readdir(path.dirname(directory)))).toEqual(["data"]);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("removes only stale staging directories: unlocked, ours by name, no CURRENT", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      const parent = path.dirname(directory);
      const staging = (suffix: string) => path.join(parent, `.data.tay-copy-${suffix}`);
      const make = (at: string, files: ReadonlyArray<string>) =>
        Effect.promise(async () => {
          await fs.mkdir(path.join(at, "epochs"), { recursive: true });
          for (const file of files) await fs.writeFile(path.join(at, file), "x");
        });
      yield* make(staging("0123456789abcdef"), ["STORE-V2", "CURRENT.tmp"]);
      yield* Effect.promise(() => fs.mkdir(staging("00000000000000ff")));
      yield* make(staging("1111111111111111"), ["STORE-V2", "CURRENT"]);
      yield* make(staging("2222222222222222"), ["STORE-V2", "notes.txt"]);
      yield* make(staging("3333333333333333"), ["STORE-V2"]);
      yield* make(staging("not-hex"), ["STORE-V2"]);
      yield* make(path.join(parent, ".other.tay-copy-4444444444444444"), ["STORE-V2"]);
      // A copy still running holds its staging directory's lock.
      yield* Lock.acquire(path.join(staging("3333333333333333"), "LOCK"));
      expect(CopyStaging.isStagingName(directory, ".data.tay-copy-0123456789abcdef")).toBe(true);
      yield* CopyStaging.removeStale(directory);
      expect(yield* Effect.promise(() => fs.readdir(parent))).toEqual([
        ".data.tay-copy-1111111111111111",
        ".data.tay-copy-2222222222222222",
        ".data.tay-copy-3333333333333333",
        ".data.tay-copy-not-hex",
        ".other.tay-copy-4444444444444444",
      ]);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
