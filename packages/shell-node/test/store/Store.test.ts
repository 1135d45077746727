// Proves the running store: appends round-trip through reopen with contiguous sequences, group
// commit batches concurrent appends into fewer writes and syncs, each durability and flush policy
// syncs and waits as documented, rotation seals segments, reads span files, the batch being written
// and pending records, compaction switches generations, and a failed write stops the writer. It
// runs on real temporary directories (NodeDisk, a counting wrapper) and on the testkit's fault disk.
import * as fsSync from "node:fs";
import * as fs from "node:fs/promises";
import {
  decodeSegmentFooter,
  decodeSegmentHeader,
  encodeEvent,
  recordSize,
  segmentFooterBytes,
  segmentHeaderBytes,
} from "@tay/codec";
import { Event } from "@tay/core";
import { describe, expect, it } from "@effect/vitest";
import { Cause, Chunk, Deferred, Effect, Exit, Fiber, Stream } from "effect";
import * as E from "fp-ts/lib/Either.js";
import { DiskError, type DiskService } from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Init from "../../src/store/Init.js";
import * as Layout from "../../src/store/Layout.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as Projection from "../../src/log/Projection.js";
import * as Store from "../../src/store/Store.js";
import * as StoreOptions from "../../src/store/StoreOptions.js";
import {
  counting,
  diskLayer,
  initialized,
  inserted,
  nodeDisk,
  readBytes,
} from "../support/store.js";

const jobIdOf = (event: Event.Event): number => (event._tag === "JobInserted" ? event.jobId : -1);

const jobIds = (entries: ReadonlyArray<Projection.Entry>): Array<number> =>
  entries.map((entry) => jobIdOf(entry.event));

const encodedPayload = (event: Event.Event): number => {
  const encoded = encodeEvent(event);
  if (encoded._tag === "Left") throw new Error("the fixture does not encode");
  return encoded.right.payload.length;
};

/** The fields of an insert the codec refuses (its args are NaN). */
const unencodable = {
  queue: "",
  worker: "W",
  args: Number.NaN,
  priority: 0,
  maxAttempts: 1,
  scheduledAt: 0,
  insertedAt: 0,
} as const;

const range = (from: number, to: number): Array<number> =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, index) => from + index);

const reopen = (directory: string, options: StoreOptions.StoreOptionsInput = {}) =>
  Effect.scoped(Store.open(directory, options, Projection.collect));

describe("appends", () => {
  it.scopedLive("round-trip through reopen, one record per event, a Mutation as one record", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const mutation = Event.mutation([
        Event.jobAvailable({ jobId: 1, at: 5 }),
        Event.jobStarted({ jobId: 1, at: 6, attempt: 1 }),
      ]);
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(directory, {}, Projection.count);
          expect(yield* store.append([inserted(1), inserted(2)])).toEqual({
            firstSequence: 1,
            lastSequence: 2,
          });
          expect(yield* store.append([mutation])).toEqual({ firstSequence: 3, lastSequence: 3 });
          expect(yield* store.append([])).toEqual({ firstSequence: 4, lastSequence: 3 });
        }),
      );
      const reopened = yield* reopen(directory);
      expect(reopened.state.map((entry) => entry.sequence)).toEqual([1, 2, 3]);
      expect(reopened.state[2]?.event).toEqual(mutation);
      expect(reopened.report).toMatchObject({
        records: 3,
        firstSequence: 1,
        lastSequence: 3,
        segments: 1,
      });
      // Appends continue after the recovered sequence.
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(directory, {}, Projection.count);
          expect(yield* store.append([inserted(3)])).toEqual({ firstSequence: 4, lastSequence: 4 });
        }),
      );
      expect((yield* reopen(directory)).state.length).toBe(4);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("refuses an event the codec refuses, before assigning a sequence", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { store } = yield* Store.open(directory, {}, Projection.count);
      const bad = Event.jobInserted({
        jobId: 1,
        queue: "",
        worker: "W",
        args: Number.NaN,
        priority: 0,
        maxAttempts: 1,
        scheduledAt: 0,
        insertedAt: 0,
      });
      const error = yield* Effect.flip(store.append([inserted(1), bad]));
      expect(error).toMatchObject({ _tag: "UnencodableEvent", index: 1 });
      expect(yield* store.append([inserted(1)])).toEqual({ firstSequence: 1, lastSequence: 1 });
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("group commit: concurrent appends share writes and syncs", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { service, counts } = counting(NodeDisk.make, 15);
      const appends = 64;
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(directory, {}, Projection.count);
          const before = { ...counts };
          const results = yield* Effect.forEach(
            range(1, appends),
            (jobId) => store.append([inserted(jobId)]),
            { concurrency: "unbounded" },
          );
          const sequences = results.map((result) => result.firstSequence).sort((a, b) => a - b);
          expect(sequences).toEqual(range(1, appends));
          const writes = counts.writes - before.writes;
          const syncs = counts.syncs - before.syncs;
          expect(writes).toBeLessThan(appends / 4);
          expect(syncs).toBe(writes);
        }).pipe(Effect.provide(diskLayer(service))),
      );
      expect((yield* reopen(directory)).state.length).toBe(appends);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("submit assigns sequences in call order; durable resolves per batch", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { store } = yield* Store.open(
        directory,
        { flush: StoreOptions.Manual },
        Projection.count,
      );
      const first = yield* store.submit([inserted(1), inserted(2)]);
      const second = yield* store.submit([inserted(3)]);
      expect([first.firstSequence, first.lastSequence, second.firstSequence]).toEqual([1, 2, 3]);
      const waiting = yield* Effect.fork(second.durable);
      yield* Effect.sleep("30 millis");
      expect(yield* Fiber.poll(waiting)).toMatchObject({ _tag: "None" });
      expect(yield* store.stats()).toMatchObject({
        records: 0,
        pendingRecords: 3,
        lastSequence: 3,
      });
      yield* store.flush();
      yield* first.durable;
      yield* Fiber.join(waiting);
      expect(yield* store.stats()).toMatchObject({ records: 3, pendingRecords: 0 });
    }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("pendingBytesMax", () => {
  it.scopedLive(
    "refuses a submission with PendingFull only when it would pass the limit; a lone larger one passes",
    () =>
      Effect.gen(function* () {
        const submitted = (pendingBytesMax: number, count: number) =>
          Effect.scoped(
            Effect.gen(function* () {
              const { store } = yield* Store.open(
                yield* initialized,
                { pendingBytesMax, flush: StoreOptions.Manual },
                Projection.count,
              );
              for (const jobId of range(1, count)) {
                const outcome = yield* Effect.either(store.submit([inserted(jobId, 40)]));
                if (outcome._tag === "Left") return { accepted: jobId - 1, refused: outcome.left };
              }
              return { accepted: count, refused: undefined, stats: yield* store.stats() };
            }),
          );
        const one = yield* submitted(256 * 1024 * 1024, 1);
        const recordBytes = one.stats?.pendingBytes ?? 0;
        expect(recordBytes).toBeGreaterThan(0);
        // Exactly at the limit is not past it.
        expect(yield* submitted(2 * recordBytes, 3)).toMatchObject({
          accepted: 2,
          refused: { _tag: "PendingFull", pendingBytes: 2 * recordBytes, limit: 2 * recordBytes },
        });
        expect(yield* submitted(recordBytes - 1, 2)).toMatchObject({
          accepted: 1,
          refused: { _tag: "PendingFull", pendingBytes: recordBytes, limit: recordBytes - 1 },
        });
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("durability and flush policies", () => {
  const syncsFor = (durability: StoreOptions.DurabilityPolicy) =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { service, counts } = counting(NodeDisk.make);
      const during = yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(directory, { durability }, Projection.count);
          const before = { ...counts };
          for (const jobId of range(1, 5)) yield* store.append([inserted(jobId)]);
          return {
            syncs: counts.syncs - before.syncs,
            directorySyncs: counts.directorySyncs - before.directorySyncs,
          };
        }).pipe(Effect.provide(diskLayer(service))),
      );
      return { during, total: { ...counts } };
    });

  it.scopedLive("Maximal syncs every batch; Segment and Throughput never sync an append", () =>
    Effect.gen(function* () {
      const maximal = yield* syncsFor("Maximal");
      const segment = yield* syncsFor("Segment");
      const throughput = yield* syncsFor("Throughput");
      expect(maximal.during.syncs).toBe(5);
      expect(segment.during.syncs).toBe(0);
      expect(throughput.during.syncs).toBe(0);
      // Close: Segment syncs the active segment once, the others have nothing to add.
      expect(segment.total.syncs - throughput.total.syncs).toBe(1);
      expect(maximal.total.syncs - maximal.during.syncs).toBe(throughput.total.syncs);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "Batch(n) waits for n records; Interval waits for its time; Manual for flush()",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(
              directory,
              { flush: StoreOptions.Batch(3) },
              Projection.count,
            );
            const first = yield* store.submit([inserted(1)]);
            const second = yield* store.submit([inserted(2)]);
            yield* Effect.sleep("20 millis");
            expect((yield* store.stats()).records).toBe(0);
            yield* store.submit([inserted(3)]);
            yield* first.durable;
            yield* second.durable;
            expect((yield* store.stats()).records).toBe(3);
          }),
        );
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(
              directory,
              { flush: StoreOptions.Interval(60) },
              Projection.count,
            );
            yield* store.append([inserted(4)]);
            const started = Date.now();
            yield* store.append([inserted(5)]);
            expect(Date.now() - started).toBeGreaterThanOrEqual(40);
          }),
        );
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(
              directory,
              {
                flush: StoreOptions.BatchOrIntervalMin({
                  batchRecords: 100,
                  batchRecordsMin: 2,
                  intervalMs: 10,
                  intervalMsMax: 80,
                }),
              },
              Projection.count,
            );
            const started = Date.now();
            yield* store.append([inserted(6)]);
            // One record is below batchRecordsMin: only intervalMsMax flushes it.
            expect(Date.now() - started).toBeGreaterThanOrEqual(60);
          }),
        );
        const reopened = yield* reopen(directory);
        expect(jobIds(reopened.state)).toEqual(range(1, 6));
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("rotation", () => {
  it.scopedLive(
    "seals a segment past the target with a footer and starts the next with a header",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(
              directory,
              { rotationTargetBytes: 500 },
              Projection.count,
            );
            for (const jobId of range(1, 20)) yield* store.append([inserted(jobId, 40)]);
            const sizes = yield* store.segmentSizeStats();
            expect(sizes.count).toBeGreaterThanOrEqual(4);
          }),
        );
        const segmentsPath = Layout.segmentsPath(directory, 1);
        const names = (yield* Effect.promise(() => fs.readdir(segmentsPath))).sort();
        let expectedFirst = 1;
        for (const [position, name] of names.entries()) {
          const bytes = yield* readBytes(`${segmentsPath}/${name}`);
          const header = decodeSegmentHeader(bytes.subarray(0, segmentHeaderBytes));
          if (E.isLeft(header)) return expect.unreachable("every header decodes");
          expect(header.right).toMatchObject({
            segmentId: position + 1,
            firstSequence: expectedFirst,
          });
          const footer = decodeSegmentFooter(bytes.subarray(bytes.length - segmentFooterBytes));
          if (position < names.length - 1) {
            if (E.isLeft(footer)) return expect.unreachable("sealed segments have footers");
            expect(footer.right.firstSequence).toBe(expectedFirst);
            expectedFirst = footer.right.lastSequence + 1;
          }
        }
        const reopened = yield* reopen(directory);
        expect(jobIds(reopened.state)).toEqual(range(1, 20));
        expect(reopened.report.segments).toBe(names.length);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "a segment that reaches the target exactly is sealed, and the batch ends at that submission",
    () =>
      Effect.gen(function* () {
        // The bytes of a segment holding one record: its header and that record.
        const oneRecord = yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(yield* initialized, {}, Projection.count);
            yield* store.append([inserted(1, 40)]);
            return (yield* store.stats()).bytes;
          }),
        );
        const segmentsAfter = (rotationTargetBytes: number) =>
          Effect.scoped(
            Effect.gen(function* () {
              const { store } = yield* Store.open(
                yield* initialized,
                { rotationTargetBytes, flush: StoreOptions.Manual },
                Projection.count,
              );
              // Two submissions, one batch: each record fills a segment to the target.
              const first = yield* store.submit([inserted(1, 40)]);
              const second = yield* store.submit([inserted(2, 40)]);
              yield* store.flush();
              yield* first.durable;
              yield* second.durable;
              return (yield* store.stats()).segments;
            }),
          );
        expect(yield* segmentsAfter(oneRecord)).toBe(3);
        expect(yield* segmentsAfter(oneRecord + 1)).toBe(2);
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("reads", () => {
  it.scopedLive(
    "readFrom and iterFrom span sealed segments, the active one and pending records",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        const { store } = yield* Store.open(
          directory,
          { rotationTargetBytes: 500, flush: StoreOptions.Manual },
          Projection.count,
        );
        for (const jobId of range(1, 12)) yield* store.submit([inserted(jobId, 40)]);
        yield* store.flush();
        for (const jobId of range(13, 15)) yield* store.submit([inserted(jobId, 40)]);
        const stats = yield* store.stats();
        expect(stats).toMatchObject({ records: 12, pendingRecords: 3, lastSequence: 15 });
        expect(stats.segments).toBeGreaterThanOrEqual(3);
        expect(jobIds(yield* store.readFrom(1, 100))).toEqual(range(1, 15));
        expect(jobIds(yield* store.readFrom(5, 4))).toEqual(range(5, 8));
        expect(jobIds(yield* store.readFrom(11, 3))).toEqual([11, 12, 13]);
        expect(jobIds(yield* store.readFrom(14, 10))).toEqual([14, 15]);
        expect(yield* store.readFrom(16, 10)).toEqual([]);
        expect(yield* store.readFrom(3, 0)).toEqual([]);
        const streamed = yield* Stream.runCollect(store.iterFrom(2));
        expect(jobIds(Chunk.toReadonlyArray(streamed))).toEqual(range(2, 15));
        // Every single-record read agrees with the bulk one.
        for (const sequence of range(1, 15)) {
          expect(jobIds(yield* store.readFrom(sequence, 1))).toEqual([sequence]);
        }
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("reads under concurrent appends", () => {
  it.scopedLive(
    "every read is contiguous from its start and never shorter than an earlier one",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        const { store } = yield* Store.open(
          directory,
          { rotationTargetBytes: 2000 },
          Projection.count,
        );
        const producers = Effect.forEach(
          range(0, 3),
          (producer) =>
            Effect.gen(function* () {
              for (let index = 0; index < 40; index++) {
                yield* store.append([inserted(producer * 1000 + index + 1, 30)]);
              }
            }),
          { concurrency: "unbounded" },
        );
        const reader = Effect.gen(function* () {
          let seen = 0;
          for (let round = 0; round < 60; round++) {
            const entries = yield* store.readFrom(1, 1000);
            expect(entries.map((entry) => entry.sequence)).toEqual(range(1, entries.length));
            expect(entries.length).toBeGreaterThanOrEqual(seen);
            seen = entries.length;
            yield* Effect.yieldNow();
          }
        });
        yield* Effect.all([producers, reader], { concurrency: "unbounded" });
        expect((yield* store.readFrom(1, 1000)).length).toBe(160);
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("compaction", () => {
  it.scopedLive(
    "writes the next generation, switches CURRENT, removes the parent; reopen agrees",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        const base = range(1, 30).map((jobId) => inserted(jobId, 40));
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(
              directory,
              { rotationTargetBytes: 600 },
              Projection.count,
            );
            for (const jobId of range(1, 10)) yield* store.append([inserted(jobId)]);
            const report = yield* store.compact(base);
            expect(report).toMatchObject({
              epoch: 2,
              parentEpoch: 1,
              firstSequence: 11,
              baseRecordCount: 30,
              removedEpochs: [1],
              notRemoved: [],
            });
            expect(report.baseSegments).toBeGreaterThanOrEqual(2);
            expect(report.pauseMs).toBeGreaterThanOrEqual(0);
            expect(yield* store.generation()).toEqual({
              epoch: 2,
              firstSequence: 11,
              baseRecordCount: 30,
            });
            expect(yield* Effect.flip(store.readFrom(3, 10))).toMatchObject({
              _tag: "Compacted",
              firstAvailable: 11,
            });
            expect(yield* store.append([inserted(31)])).toEqual({
              firstSequence: 41,
              lastSequence: 41,
            });
            expect(jobIds(yield* store.readFrom(39, 10))).toEqual([29, 30, 31]);
            expect(
              yield* Effect.flip(store.compact(base, { expectedLastSequence: 40 })),
            ).toMatchObject({
              _tag: "CompactionConflict",
              expectedLastSequence: 40,
              lastSequence: 41,
            });
          }),
        );
        expect(yield* Effect.promise(() => fs.readdir(Layout.epochsPath(directory)))).toEqual([
          Layout.epochName(2),
        ]);
        const reopened = yield* reopen(directory);
        expect(reopened.report).toMatchObject({
          epoch: 2,
          parentEpoch: 1,
          baseRecordCount: 30,
          firstSequence: 11,
          lastSequence: 41,
          orphanedGenerations: [],
        });
        expect(jobIds(reopened.state)).toEqual(range(1, 31));
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("writes the base as it consumes it, never more than a write ahead", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const writeBytesMax = 4096;
      const count = 400;
      const segments = `${Layout.epochPath(directory, 2)}/segments`;
      const onDisk = () => {
        let bytes = 0;
        if (!fsSync.existsSync(segments)) return 0;
        for (const name of fsSync.readdirSync(segments)) {
          bytes += fsSync.statSync(`${segments}/${name}`).size;
        }
        return bytes;
      };
      const record = recordSize(encodedPayload(inserted(1, 100)));
      let ahead = 0;
      function* base() {
        for (let jobId = 1; jobId <= count; jobId++) {
          // What was pulled before this event and is not on disk yet.
          ahead = Math.max(ahead, (jobId - 1) * record - onDisk());
          yield inserted(jobId, 100);
        }
      }
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(
            directory,
            { rotationTargetBytes: 16 * 1024, writeBytesMax },
            Projection.count,
          );
          const report = yield* store.compact(base());
          expect(report).toMatchObject({ epoch: 2, baseRecordCount: count });
          expect(report.baseSegments).toBeGreaterThanOrEqual(2);
          // One write being gathered, and the record looked at before it is taken.
          expect(ahead).toBeLessThanOrEqual(writeBytesMax + 2 * record);
          expect(ahead).toBeGreaterThan(0);
        }),
      );
      const reopened = yield* reopen(directory);
      expect(reopened.report).toMatchObject({ baseRecordCount: count, lastSequence: count });
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "a base that throws fails the compaction; the writer goes on, the orphan goes",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(
              directory,
              { rotationTargetBytes: 600 },
              Projection.count,
            );
            yield* store.append([inserted(1)]);
            function* failing() {
              for (let jobId = 1; jobId <= 50; jobId++) yield inserted(jobId, 40);
              throw new Error("the base's producer failed");
            }
            const exit = yield* Effect.exit(store.compact(failing()));
            expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true);
            expect(yield* store.generation()).toEqual({
              epoch: 1,
              firstSequence: 1,
              baseRecordCount: 0,
            });
            expect(yield* store.append([inserted(2)])).toEqual({
              firstSequence: 2,
              lastSequence: 2,
            });
            // An unencodable event met after the base's first segments: typed, the writer going on.
            const bad = Event.jobInserted({ ...unencodable, jobId: 40 });
            const many = range(1, 39).map((jobId) => inserted(jobId, 40));
            expect(yield* Effect.flip(store.compact([...many, bad]))).toMatchObject({
              _tag: "UnencodableEvent",
              index: 39,
            });
            expect(yield* store.append([inserted(3)])).toEqual({
              firstSequence: 3,
              lastSequence: 3,
            });
            const compacted = yield* store.compact(many);
            expect(compacted).toMatchObject({ epoch: 2, removedEpochs: [2, 1], notRemoved: [] });
          }),
        );
        const reopened = yield* reopen(directory);
        expect(reopened.report).toMatchObject({ epoch: 2, baseRecordCount: 39 });
        expect(reopened.report.orphanedGenerations).toEqual([]);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("appends submitted during a compaction land after the base", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { service } = counting(NodeDisk.make, 5);
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(directory, {}, Projection.count);
          yield* store.append([inserted(1)]);
          const started = yield* Deferred.make<void>();
          const compaction = yield* Effect.fork(
            Effect.zipRight(
              Deferred.succeed(started, undefined),
              store.compact([inserted(1), inserted(2)]),
            ),
          );
          yield* Deferred.await(started);
          const during = yield* store.append([inserted(3)]);
          yield* Fiber.join(compaction);
          expect(during.firstSequence).toBe(4);
        }).pipe(Effect.provide(diskLayer(service))),
      );
      const reopened = yield* reopen(directory);
      expect(reopened.state.map((entry) => entry.sequence)).toEqual([2, 3, 4]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("removes leftover generations and reports none afterwards", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      yield* Effect.promise(() => fs.mkdir(Layout.epochPath(directory, 2)));
      yield* Effect.promise(() =>
        fs.writeFile(`${Layout.epochPath(directory, 2)}/MANIFEST.tmp`, "x"),
      );
      const { store, report } = yield* Store.open(directory, {}, Projection.count);
      expect(report.orphanedGenerations.map((orphan) => orphan.epoch)).toEqual([2]);
      yield* store.append([inserted(1)]);
      const compacted = yield* store.compact([]);
      expect(compacted).toMatchObject({ epoch: 2, removedEpochs: [2, 1], baseSegments: 0 });
      expect(yield* store.append([inserted(2)])).toEqual({ firstSequence: 2, lastSequence: 2 });
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "never compacts into a leftover epoch+1 it could not remove; the writer goes on",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        const leftover = Layout.epochPath(directory, 2);
        yield* Effect.promise(() => fs.mkdir(leftover));
        yield* Effect.promise(() => fs.writeFile(`${leftover}/MANIFEST.tmp`, "x"));
        const stuck: DiskService = {
          ...NodeDisk.make,
          remove: (path, options) =>
            path === leftover
              ? Effect.fail(
                  new DiskError({ operation: "remove", path, code: "EACCES", detail: "held" }),
                )
              : NodeDisk.make.remove(path, options),
        };
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(directory, {}, Projection.count);
            yield* store.append([inserted(1)]);
            const refused = yield* Effect.flip(store.compact([inserted(1)]));
            expect(refused).toMatchObject({ _tag: "DiskError", code: "EEXIST", path: leftover });
            expect(yield* store.generation()).toEqual({
              epoch: 1,
              firstSequence: 1,
              baseRecordCount: 0,
            });
            expect(yield* store.append([inserted(2)])).toEqual({
              firstSequence: 2,
              lastSequence: 2,
            });
          }).pipe(Effect.provide(diskLayer(stuck))),
        );
        expect(yield* Effect.promise(() => fs.readdir(leftover))).toEqual(["MANIFEST.tmp"]);
        const reopened = yield* reopen(directory);
        expect(reopened.report).toMatchObject({ epoch: 1 });
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("stats", () => {
  it.scopedLive(
    "counts records and bytes; pressure is clamped; segment sizes use nearest rank",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        const { store } = yield* Store.open(
          directory,
          { rotationTargetBytes: 500, storeBytesMax: 1000 },
          Projection.count,
        );
        expect(yield* store.stats()).toEqual({
          segments: 1,
          records: 0,
          bytes: segmentHeaderBytes,
          firstSequence: 1,
          lastSequence: 0,
          pendingRecords: 0,
          pendingBytes: 0,
          inlineWrites: { writes: 0, slow: 0, slowestMs: 0 },
        });
        expect(yield* store.storePressure()).toBeCloseTo(segmentHeaderBytes / 1000);
        expect(yield* store.isOverloaded()).toBe(false);
        for (const jobId of range(1, 12)) yield* store.append([inserted(jobId, 40)]);
        // A rotation may still be finishing after the last append resolved: close settles it.
        yield* store.close();
        const stats = yield* store.stats();
        const onDisk = yield* Effect.promise(async () => {
          const segmentsPath = Layout.segmentsPath(directory, 1);
          const names = await fs.readdir(segmentsPath);
          return Promise.all(
            names.map(async (name) => (await fs.stat(`${segmentsPath}/${name}`)).size),
          );
        });
        expect(stats.records).toBe(12);
        expect(stats.bytes).toBe(onDisk.reduce((sum, size) => sum + size, 0));
        expect(stats.segments).toBe(onDisk.length);
        const sizes = yield* store.segmentSizeStats();
        const sorted = [...onDisk].sort((a, b) => a - b);
        expect(sizes).toMatchObject({
          count: sorted.length,
          min: sorted[0],
          max: sorted[sorted.length - 1],
          p50: sorted[Math.ceil(0.5 * sorted.length) - 1],
          p90: sorted[Math.ceil(0.9 * sorted.length) - 1],
        });
        expect(yield* store.storePressure()).toBe(1);
        expect(yield* store.isOverloaded()).toBe(true);
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("failures", () => {
  const faultDirectory = "/data";
  const onFaultDisk = (disk: FaultDisk.FaultDisk) => {
    disk.seedDirectory(faultDirectory);
    return FaultDisk.layer(disk);
  };

  it.scoped("a failed sync fails the batch and every later write until reopen", () =>
    Effect.gen(function* () {
      const disk = FaultDisk.make();
      yield* Effect.gen(function* () {
        yield* Init.init(faultDirectory);
        const { store } = yield* Store.open(faultDirectory, {}, Projection.count);
        yield* store.append([inserted(1)]);
        disk.inject(FaultDisk.fail("sync", "EIO", { path: /\.tay$/ }));
        const failed = yield* Effect.flip(store.append([inserted(2)]));
        expect(failed).toMatchObject({
          _tag: "WriterFailed",
          cause: { _tag: "DiskError", code: "EIO" },
        });
        disk.clearFaults();
        expect(yield* Effect.flip(store.append([inserted(3)]))).toMatchObject({
          _tag: "WriterFailed",
        });
        expect(yield* Effect.flip(store.flush())).toMatchObject({ _tag: "WriterFailed" });
      }).pipe(Effect.provide(onFaultDisk(disk)));
    }),
  );

  it.scoped("short writes are completed by looping", () =>
    Effect.gen(function* () {
      const disk = FaultDisk.make({ faults: [FaultDisk.shortWrite(7, { path: /\.tay$/ })] });
      yield* Effect.gen(function* () {
        yield* Init.init(faultDirectory);
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(faultDirectory, {}, Projection.count);
            for (const jobId of range(1, 3)) yield* store.append([inserted(jobId, 30)]);
          }),
        );
        const reopened = yield* Effect.scoped(Store.open(faultDirectory, {}, Projection.collect));
        expect(jobIds(reopened.state)).toEqual([1, 2, 3]);
      }).pipe(Effect.provide(onFaultDisk(disk)));
    }),
  );

  it.scoped(
    "a new segment is staged as SEGMENT.tmp, synced, hard-linked into segments/, never made in place",
    () =>
      Effect.gen(function* () {
        const disk = FaultDisk.make();
        yield* Effect.gen(function* () {
          yield* Init.init(faultDirectory);
          yield* Effect.scoped(
            Effect.gen(function* () {
              const { store } = yield* Store.open(
                faultDirectory,
                { rotationTargetBytes: 300 },
                Projection.count,
              );
              for (const jobId of range(1, 8)) yield* store.append([inserted(jobId, 60)]);
              expect((yield* store.stats()).segments).toBeGreaterThanOrEqual(3);
              yield* store.compact([inserted(1, 60)]);
            }),
          );
          const operations = disk.operations();
          const staging = (epoch: number) => Layout.segmentStagingPath(faultDirectory, epoch);
          // No segment of the current generation is ever created under its own name, renamed,
          // or given a temporary name of its own; the base segments a compaction writes before
          // CURRENT names their generation are the one exception (see docs/store.md).
          expect(
            operations.filter(
              (operation) =>
                (operation.mode === "createExclusive" &&
                  operation.path.startsWith(Layout.segmentsPath(faultDirectory, 1))) ||
                (operation.kind === "rename" && operation.path.includes(".tay")) ||
                operation.path.endsWith(".tay.tmp"),
            ),
          ).toEqual([]);
          const links = operations.filter(
            (operation) => operation.kind === "link" && operation.target?.endsWith(".tay"),
          );
          // Segment 1 at activation, at least two rotations, the compaction's active segment.
          expect(links.length).toBeGreaterThanOrEqual(4);
          for (const link of links) {
            const epoch = link.target?.includes("00000000000000000002/") === true ? 2 : 1;
            expect(link.path).toBe(staging(epoch));
            const before = operations.filter((operation) => operation.index < link.index);
            const after = operations.filter((operation) => operation.index > link.index);
            // Step 2: created exclusively, the header written from 0 and synced, before the link.
            const created = before.findLast(
              (operation) => operation.mode === "createExclusive" && operation.path === link.path,
            );
            expect(created).toBeDefined();
            const staged = before.filter(
              (operation) =>
                operation.index > (created?.index ?? 0) && operation.path === link.path,
            );
            expect(staged.map((operation) => operation.kind)).toEqual(["write", "sync", "close"]);
            expect(staged[0]).toMatchObject({ position: 0, length: segmentHeaderBytes });
            // Step 3, then 4: segments/ synced, then the staging name removed; nothing is ever
            // written through it.
            const next = after.filter(
              (operation) =>
                operation.kind !== "stat" &&
                (operation.path === link.path ||
                  operation.path === Layout.parentPath(link.target ?? "")),
            );
            expect(next.slice(0, 2).map((operation) => [operation.kind, operation.path])).toEqual([
              ["syncDirectory", Layout.parentPath(link.target ?? "")],
              ["remove", link.path],
            ]);
          }
          expect(
            operations.filter(
              (operation) =>
                operation.path.endsWith(Layout.segmentStagingName) &&
                (operation.mode === "readWrite" || operation.kind === "truncate"),
            ),
          ).toEqual([]);
          expect(disk.listing().filter((name) => name.endsWith(Layout.segmentStagingName))).toEqual(
            [],
          );
          const reopened = yield* Effect.scoped(Store.open(faultDirectory, {}, Projection.collect));
          expect(jobIds(reopened.state)).toEqual([1]);
          expect(reopened.report.stagedSegment).toBeNull();
        }).pipe(Effect.provide(onFaultDisk(disk)));
      }),
  );

  it.scoped(
    "a file system without hard links is refused at init and at activation, naming the operation",
    () =>
      Effect.gen(function* () {
        const noLinks = FaultDisk.fail("link", "EPERM");
        const refusedInit = FaultDisk.make({ faults: [noLinks] });
        const initError = yield* Effect.flip(
          Init.init(faultDirectory).pipe(Effect.provide(onFaultDisk(refusedInit))),
        );
        expect(initError).toMatchObject({
          _tag: "HardLinksUnsupported",
          operation: "init",
          cause: { operation: "link", code: "EPERM" },
        });
        expect(initError.message).toContain("init needs a hard link");
        // CURRENT was never published: nothing half made looks like a store.
        expect(refusedInit.listing()).not.toContain(`${faultDirectory}/CURRENT`);

        // Activation creating segment 1 (none yet), and activation onto an active segment.
        const disk = FaultDisk.make();
        yield* Effect.gen(function* () {
          yield* Init.init(faultDirectory);
          disk.inject(FaultDisk.fail("link", "ENOTSUP"));
          const empty = yield* Effect.flip(
            Effect.scoped(Store.open(faultDirectory, {}, Projection.count)),
          );
          expect(empty).toMatchObject({ _tag: "HardLinksUnsupported", operation: "activation" });
          disk.clearFaults();
          yield* Effect.scoped(
            Effect.flatMap(Store.open(faultDirectory, {}, Projection.count), ({ store }) =>
              store.append([inserted(1)]),
            ),
          );
          disk.inject(FaultDisk.fail("link", "EXDEV"));
          const active = yield* Effect.flip(
            Effect.scoped(Store.open(faultDirectory, {}, Projection.count)),
          );
          expect(active).toMatchObject({
            _tag: "HardLinksUnsupported",
            operation: "activation",
            cause: { code: "EXDEV" },
          });
          disk.clearFaults();
          const reopened = yield* Effect.scoped(Store.open(faultDirectory, {}, Projection.collect));
          expect(jobIds(reopened.state)).toEqual([1]);
        }).pipe(Effect.provide(onFaultDisk(disk)));
      }),
  );

  it.scoped("a rotation that meets a file system without hard links stops the writer with it", () =>
    Effect.gen(function* () {
      const disk = FaultDisk.make();
      yield* Effect.gen(function* () {
        yield* Init.init(faultDirectory);
        const resolved = yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(
              faultDirectory,
              { rotationTargetBytes: 200 },
              Projection.count,
            );
            disk.inject(FaultDisk.fail("link", "EPERM"));
            let resolved = 0;
            for (const jobId of range(1, 6)) {
              const outcome = yield* Effect.either(store.append([inserted(jobId, 60)]));
              if (outcome._tag === "Right") resolved = jobId;
            }
            const failure = yield* Effect.flip(store.flush());
            expect(failure).toMatchObject({
              _tag: "WriterFailed",
              cause: { _tag: "HardLinksUnsupported", operation: "rotation" },
            });
            expect(failure.message).toContain("rotation needs a hard link");
            disk.clearFaults();
            return resolved;
          }),
        );
        // The sealed segment holds every append that resolved; the next open creates segment 2.
        expect(resolved).toBeGreaterThan(0);
        const reopened = yield* Effect.scoped(Store.open(faultDirectory, {}, Projection.collect));
        expect(jobIds(reopened.state)).toEqual(range(1, resolved));
      }).pipe(Effect.provide(onFaultDisk(disk)));
    }),
  );

  it.scoped("a closed store refuses appends", () =>
    Effect.gen(function* () {
      const disk = FaultDisk.make();
      yield* Effect.gen(function* () {
        yield* Init.init(faultDirectory);
        const { store } = yield* Store.open(faultDirectory, {}, Projection.count);
        yield* store.append([inserted(1)]);
        yield* store.close();
        yield* store.close();
        expect(yield* Effect.flip(store.append([inserted(2)]))).toMatchObject({
          _tag: "StoreClosed",
        });
      }).pipe(Effect.provide(onFaultDisk(disk)));
    }),
  );
});
