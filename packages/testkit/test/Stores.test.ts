// Proves that writeStore writes stores the real engine opens and folds to the same state as core's
// fold of the same history, byte for byte what the store's own writer and compaction produce, and
// that every damage helper yields exactly the refusal it documents. Properties run generated valid
// histories and layouts on FaultDisk (and a few on NodeDisk); unit tests pin each refusal's fields.
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { parseStoreId } from "@tay/codec";
import { Event, Evolve, State } from "@tay/core";
import { type Disk, Engine, Init, NodeDisk, Projection } from "@tay/shell-node";
// The raw store appends any event: not public API; the differential needs it
// to write the same history through the real writer.
import * as Store from "../../shell-node/src/store/Store.js";
import { Effect, Either, Layer, TestContext } from "effect";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as FaultDisk from "../../shell-node/src/disk/FaultDisk.js";
import * as Histories from "../src/Histories.js";
import * as Stores from "../src/Stores.js";

const directory = "/data";

const run = <A, X>(effect: Effect.Effect<A, X, Disk.Disk>, disk: Disk.DiskService): Promise<A> =>
  Effect.runPromise(Effect.provide(effect, FaultDisk.layer(disk)));

/** Where the last segment ends: active, sealed, or sealed and followed by an empty active one. */
type Ending = "active" | "sealed" | "sealedThenEmpty";

interface Layout {
  readonly split:
    | Record<string, never>
    | { readonly recordsPerSegment: number }
    | { readonly bytesPerSegment: number };
  readonly ending: Ending;
  readonly sealBase: boolean;
  readonly epoch: number;
  readonly firstSequence: number;
}

const layouts: fc.Arbitrary<Layout> = fc.record({
  split: fc.oneof(
    fc.constant({}),
    fc.record({ recordsPerSegment: fc.integer({ min: 1, max: 6 }) }),
    fc.record({ bytesPerSegment: fc.integer({ min: 1, max: 2048 }) }),
  ),
  ending: fc.constantFrom<Ending>("active", "sealed", "sealedThenEmpty"),
  sealBase: fc.boolean(),
  epoch: fc.integer({ min: 1, max: 9 }),
  firstSequence: fc.integer({ min: 1, max: 100_000 }),
});

const specOf = (history: Histories.History, layout: Layout): Stores.StoreSpec => ({
  base: history.base,
  events: history.tail,
  epoch: layout.epoch,
  firstSequence: layout.firstSequence,
  sealBase: layout.sealBase,
  sealLast: layout.ending !== "active",
  emptyActive: layout.ending === "sealedThenEmpty",
  ...layout.split,
});

/** Opens the engine (no rescue: the state is exactly the fold) and returns its state and report. */
const openEngine = (at: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const engine = yield* Engine.open(at, { rescueOnOpen: false });
      return { state: yield* engine.state(), report: engine.report };
    }),
  );

const histories = fc.oneof(
  Histories.history({ size: 20 }),
  Histories.history({ size: 20, canonicalBase: true, legacy: true }),
);

const checkOpensToFold = (history: Histories.History, layout: Layout, at: string) =>
  Effect.gen(function* () {
    const spec = specOf(history, layout);
    const written = yield* Stores.writeStore(at, spec);
    const opened = yield* openEngine(at);
    // The engine keeps its terminal index (the default): its state is the lean fold.
    const folded = Evolve.foldGeneration(history.base, history.tail, { lean: true });
    if (E.isLeft(folded))
      throw new Error(`generated history does not fold: ${folded.left.reason._tag}`);
    expect(State.equals(opened.state, folded.right)).toBe(true);
    const records = history.base.length + history.tail.length;
    expect(opened.report).toMatchObject({
      epoch: layout.epoch,
      parentEpoch: layout.epoch - 1,
      baseRecordCount: history.base.length,
      firstSequence: layout.firstSequence,
      lastSequence: layout.firstSequence + records - 1,
      records,
    });
    expect(written.lastSequence).toBe(layout.firstSequence + records - 1);
    const ids = written.segments.map((segment) => segment.segmentId);
    expect(ids).toEqual(ids.map((_, index) => index + 1));
    // Only the last segment may be active; every sealed one holds a record.
    for (const segment of written.segments.slice(0, -1)) expect(segment.sealed).toBe(true);
    for (const segment of written.segments) {
      if (segment.sealed) expect(segment.records.length).toBeGreaterThan(0);
    }
  });

describe("writeStore", () => {
  it("writes stores the engine opens to the fold of the history (FaultDisk)", async () => {
    await fc.assert(
      fc.asyncProperty(histories, layouts, async (history, layout) => {
        await run(checkOpensToFold(history, layout, directory), FaultDisk.make());
      }),
      { numRuns: 60 },
    );
  });

  it("writes stores the engine opens to the fold of the history (NodeDisk)", async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), "tay-stores-"));
    try {
      let count = 0;
      await fc.assert(
        fc.asyncProperty(histories, layouts, async (history, layout) => {
          count += 1;
          const at = path.join(root, `store-${count}`);
          await Effect.runPromise(
            Effect.provide(checkOpensToFold(history, layout, at), NodeDisk.layer),
          );
        }),
        { numRuns: 6 },
      );
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it("lays out segments by records and by bytes, the base apart when asked", async () => {
    const events = Array.from({ length: 7 }, (_, index) => inserted(index + 1));
    const byRecords = await run(
      Stores.writeStore(directory, { events, recordsPerSegment: 3 }),
      FaultDisk.make(),
    );
    expect(byRecords.segments.map((segment) => [segment.records.length, segment.sealed])).toEqual([
      [3, true],
      [3, true],
      [1, false],
    ]);
    const recordSize = byRecords.segments[0]?.records[0]?.size ?? 0;
    // 44 + 2 records reach the target exactly, so each segment holds two.
    const byBytes = await run(
      Stores.writeStore(directory, {
        events,
        bytesPerSegment: 44 + 2 * recordSize,
        sealLast: true,
      }),
      FaultDisk.make(),
    );
    expect(byBytes.segments.map((segment) => segment.records.length)).toEqual([2, 2, 2, 1]);
    expect(byBytes.segments.every((segment) => segment.sealed)).toBe(true);
    const apart = await run(
      Stores.writeStore(directory, {
        base: [],
        events,
        recordsPerSegment: 100,
        sealBase: true,
        sealLast: true,
        emptyActive: true,
      }),
      FaultDisk.make(),
    );
    expect(apart.segments.map((segment) => [segment.records.length, segment.sealed])).toEqual([
      [7, true],
      [0, false],
    ]);
    expect(apart.segments[1]?.size).toBe(44);
  });

  it("with no record writes exactly what init writes", async () => {
    const disk = FaultDisk.make();
    disk.seedDirectory(directory);
    const initialized = await Effect.runPromise(
      Init.init(directory).pipe(
        Effect.provide(Layer.merge(FaultDisk.layer(disk), TestContext.TestContext)),
      ),
    );
    const storeId = E.getOrElseW(() => {
      throw new Error("init printed an unparsable STORE_ID");
    })(parseStoreId(initialized.storeId));
    const written = FaultDisk.make();
    written.seedDirectory(directory);
    await run(Stores.writeStore(directory, { storeId, createdAt: initialized.createdAt }), written);
    expect(withoutLock(written.snapshotFiles())).toEqual(withoutLock(disk.snapshotFiles()));
    expect(written.listing()).toEqual(disk.listing().filter((entry) => !entry.endsWith("/LOCK")));
  });
});

const inserted = (jobId: number, argsBytes = 0): Event.Event =>
  Event.jobInserted({
    jobId,
    queue: "default",
    worker: "W",
    args: argsBytes === 0 ? null : "x".repeat(argsBytes),
    priority: 0,
    maxAttempts: 1,
    scheduledAt: 0,
    insertedAt: 0,
  });

const withoutLock = (files: ReadonlyMap<string, Uint8Array>): Map<string, Uint8Array> =>
  new Map([...files].filter(([file]) => !file.endsWith("/LOCK")));

/** How the writer left its highest segment: what `writeStore` must be told to match it. */
const endingOf = (
  files: ReadonlyMap<string, Uint8Array>,
): Pick<Stores.StoreSpec, "sealLast" | "emptyActive"> => {
  const segments = [...files]
    .filter(([file]) => file.endsWith(".tay"))
    .sort(([left], [right]) => (left < right ? -1 : 1));
  const highest = segments[segments.length - 1];
  const headerOnly = highest !== undefined && highest[1].length === 44;
  return { sealLast: headerOnly, emptyActive: headerOnly };
};

describe("byte identity with the store's writer", () => {
  it("appends one by one with rotation, then a compaction and more appends", async () => {
    await fc.assert(
      fc.asyncProperty(
        Histories.history({ size: 12, canonicalBase: true }),
        fc.integer({ min: 44, max: 1024 }),
        async (history, rotationTargetBytes) => {
          // The store's own writer: init, open, the tail one append at a time, close.
          const real = FaultDisk.make();
          real.seedDirectory(directory);
          const tail = [...history.tail];
          const half = Math.floor(tail.length / 2);
          const before = tail.slice(0, half);
          const after = tail.slice(half);
          const initialized = await Effect.runPromise(
            Effect.gen(function* () {
              const made = yield* Init.init(directory);
              yield* Effect.scoped(
                Effect.gen(function* () {
                  const { store } = yield* Store.open(
                    directory,
                    { rotationTargetBytes },
                    Projection.count,
                  );
                  for (const event of before) yield* store.append([event]);
                  return made;
                }),
              );
              return made;
            }).pipe(Effect.provide(Layer.merge(FaultDisk.layer(real), TestContext.TestContext))),
          );
          const storeId = E.getOrElseW(() => {
            throw new Error("unparsable STORE_ID");
          })(parseStoreId(initialized.storeId));
          const firstGeneration = real.snapshotFiles();
          const expectedFirst = FaultDisk.make();
          expectedFirst.seedDirectory(directory);
          await run(
            Stores.writeStore(directory, {
              storeId,
              createdAt: initialized.createdAt,
              events: before,
              bytesPerSegment: rotationTargetBytes,
              ...endingOf(firstGeneration),
            }),
            expectedFirst,
          );
          expect(withoutLock(firstGeneration)).toEqual(withoutLock(expectedFirst.snapshotFiles()));

          // Compaction with the history's base, then the rest of the tail.
          await Effect.runPromise(
            Effect.scoped(
              Effect.gen(function* () {
                const { store } = yield* Store.open(
                  directory,
                  { rotationTargetBytes },
                  Projection.count,
                );
                yield* store.compact(history.base);
                for (const event of after) yield* store.append([event]);
              }),
            ).pipe(Effect.provide(Layer.merge(FaultDisk.layer(real), TestContext.TestContext))),
          );
          const secondGeneration = real.snapshotFiles();
          const expectedSecond = FaultDisk.make();
          expectedSecond.seedDirectory(directory);
          await run(
            Stores.writeStore(directory, {
              storeId,
              createdAt: initialized.createdAt,
              epoch: 2,
              firstSequence: before.length + 1,
              base: history.base,
              events: after,
              bytesPerSegment: rotationTargetBytes,
              sealBase: true,
              ...(after.length === 0
                ? { sealLast: true, emptyActive: true }
                : endingOf(secondGeneration)),
            }),
            expectedSecond,
          );
          expect(withoutLock(secondGeneration)).toEqual(
            withoutLock(expectedSecond.snapshotFiles()),
          );
        },
      ),
      { numRuns: 25 },
    );
  });
});

/** Opens with the counting projection and returns the refusal. */
const refusal = (disk: Disk.DiskService, at = directory) =>
  run(Effect.flip(Effect.scoped(Store.open(at, {}, Projection.count))), disk);

const sevenRecords = (disk: FaultDisk.FaultDisk) =>
  run(
    Stores.writeStore(directory, {
      events: Array.from({ length: 7 }, (_, index) => inserted(index + 1, 10)),
      recordsPerSegment: 3,
    }),
    disk,
  );

const segmentOf = (written: Stores.WrittenStore, index: number): Stores.WrittenSegment => {
  const segment = written.segments[index];
  if (segment === undefined) throw new Error(`no segment ${index}`);
  return segment;
};

const recordOf = (segment: Stores.WrittenSegment, index: number): Stores.WrittenRecord => {
  const record = segment.records[index];
  if (record === undefined) throw new Error(`no record ${index}`);
  return record;
};

describe("damage", () => {
  it("truncateTail tears the active segment's last record: IncompleteTail", async () => {
    const disk = FaultDisk.make();
    const written = await sevenRecords(disk);
    const active = segmentOf(written, 2);
    await run(Stores.truncateTail(active.path, 5), disk);
    expect(await refusal(disk)).toMatchObject({
      _tag: "IncompleteTail",
      path: active.path,
      offset: recordOf(active, 0).offset,
      sequence: 7,
      part: "Record",
    });
  });

  it("flipBit in a payload: CorruptRecord RecordChecksum at that record", async () => {
    const disk = FaultDisk.make();
    const written = await sevenRecords(disk);
    const sealed = segmentOf(written, 0);
    const second = recordOf(sealed, 1);
    await run(Stores.flipBit(sealed.path, second.offset + 30, 3), disk);
    expect(await refusal(disk)).toMatchObject({
      _tag: "CorruptRecord",
      path: sealed.path,
      offset: second.offset,
      sequence: 2,
      reason: "RecordChecksum",
    });
  });

  it("removeFile of a middle segment: SegmentGap", async () => {
    const disk = FaultDisk.make();
    const written = await sevenRecords(disk);
    await run(Stores.removeFile(segmentOf(written, 1).path), disk);
    expect(await refusal(disk)).toMatchObject({
      _tag: "SegmentGap",
      path: path.dirname(segmentOf(written, 1).path),
      expected: 2,
      found: 3,
    });
  });

  it("addFile in segments/: UnexpectedEntry", async () => {
    const disk = FaultDisk.make();
    const written = await sevenRecords(disk);
    const segments = path.dirname(segmentOf(written, 0).path);
    await run(Stores.addFile(path.join(segments, "notes.txt"), new Uint8Array([1])), disk);
    expect(await refusal(disk)).toMatchObject({
      _tag: "UnexpectedEntry",
      path: segments,
      name: "notes.txt",
    });
  });

  it("relabelSegment: Mismatch StoreId at offset 24", async () => {
    const disk = FaultDisk.make();
    const written = await sevenRecords(disk);
    const foreign = Uint8Array.from({ length: 16 }, () => 0xab);
    await run(Stores.relabelSegment(segmentOf(written, 1).path, foreign), disk);
    expect(await refusal(disk)).toMatchObject({
      _tag: "Mismatch",
      path: segmentOf(written, 1).path,
      offset: 24,
      field: "StoreId",
      expected: "00010203-0405-0607-0809-0a0b0c0d0e0f",
      found: "abababab-abab-abab-abab-abababababab",
    });
  });

  it("overwrite of a footer byte: the footer no longer decodes", async () => {
    const disk = FaultDisk.make();
    const written = await sevenRecords(disk);
    const sealed = segmentOf(written, 0);
    await run(Stores.overwrite(sealed.path, sealed.size - 1, new Uint8Array([0])), disk);
    const found = await refusal(disk);
    expect(found._tag).toBe("MalformedFile");
  });

  it.each(["STORE", "segments"] as const)(
    "writeStoreV1Root(%s): UnsupportedStoreV1, and nothing is created",
    async (entry) => {
      const disk = FaultDisk.make();
      await run(Stores.writeStoreV1Root(directory, entry), disk);
      const listing = disk.listing();
      expect(await refusal(disk)).toMatchObject({
        _tag: "UnsupportedStoreV1",
        path: directory,
        found: entry,
      });
      expect(disk.listing()).toEqual(listing);
    },
  );

  it("a raw record of an unknown pair: UndecodableEvent", async () => {
    const disk = FaultDisk.make();
    const written = await run(
      Stores.writeStore(directory, {
        events: [inserted(1), Stores.raw(99, 1, new Uint8Array([0]))],
      }),
      disk,
    );
    expect(await refusal(disk)).toMatchObject({
      _tag: "UndecodableEvent",
      offset: recordOf(segmentOf(written, 0), 1).offset,
      sequence: 2,
    });
  });
});

describe("refusals of writeStore", () => {
  const refused = (spec: Stores.StoreSpec, disk: FaultDisk.FaultDisk = FaultDisk.make()) =>
    run(Effect.flip(Stores.writeStore(directory, spec)), disk);

  it.each<readonly [string, Stores.StoreSpec]>([
    ["recordsPerSegment", { recordsPerSegment: 0 }],
    ["recordsPerSegment", { recordsPerSegment: 2, bytesPerSegment: 100 }],
    ["bytesPerSegment", { bytesPerSegment: 2 ** 31 }],
    ["epoch", { epoch: 0 }],
    ["parentEpoch", { epoch: 2, parentEpoch: 2 }],
    ["firstSequence", { firstSequence: 0 }],
    ["storeId", { storeId: new Uint8Array(15) }],
    ["createdAt", { createdAt: -1 }],
    ["emptyActive", { events: [inserted(1)], emptyActive: true }],
  ])("an out-of-range option (%s)", async (where, spec) => {
    const disk = FaultDisk.make();
    expect(await refused(spec, disk)).toMatchObject({ reason: "InvalidOption", where });
    // Nothing was written.
    expect(disk.listing()).toEqual([]);
  });

  it("an event the codec refuses, named by its place", async () => {
    const bad = Event.jobInserted({ ...eventFields(1), priority: 12 });
    expect(await refused({ events: [inserted(1), bad] })).toMatchObject({
      _tag: "WriteStoreError",
      reason: "UnencodableEvent",
      where: "events[1]",
    });
  });

  it("a directory that is not empty", async () => {
    const disk = FaultDisk.make();
    disk.seedFile(`${directory}/other`, new Uint8Array());
    expect(await refused({}, disk)).toMatchObject({
      reason: "DirectoryNotEmpty",
      where: directory,
    });
  });

  it("never throws: any failure is a value", async () => {
    const result = await Effect.runPromise(
      Effect.either(Stores.writeStore("/missing/parent/data")).pipe(
        Effect.provide(FaultDisk.layer(FaultDisk.make())),
      ),
    );
    expect(Either.isLeft(result) && result.left._tag).toBe("DiskError");
  });
});

const eventFields = (jobId: number) => ({
  jobId,
  queue: "default",
  worker: "W",
  args: null,
  priority: 0,
  maxAttempts: 1,
  scheduledAt: 0,
  insertedAt: 0,
});
