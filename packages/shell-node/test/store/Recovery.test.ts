// Proves recovery refuses every fault FORMAT.md and EVENTS.md name — with the typed error, path,
// offset and sequence — and changes no byte while refusing; that budgets are distinct from
// corruption; and that inspect needs no lock. Each case builds a real store in a temporary
// directory through NodeDisk, damages one thing with node:fs, and opens it again.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import {
  crc32c,
  encodeCurrentPointer,
  encodeManifest,
  encodeRecord,
  encodeSegmentFooter,
  encodeSegmentHeader,
  decodeSegmentFooter,
  recordOverheadBytes,
  segmentFooterBytes,
  segmentHeaderBytes,
} from "@tay/codec";
import { describe, expect, it } from "@effect/vitest";
import { Cause, Effect, Exit, Either } from "effect";
import * as fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import { DiskError, type DiskService } from "../../src/disk/Disk.js";
import * as Init from "../../src/store/Init.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as Layout from "../../src/store/Layout.js";
import * as Projection from "../../src/log/Projection.js";
import * as Recovery from "../../src/store/Recovery.js";
import * as Store from "../../src/store/Store.js";
import type { StoreOptionsInput } from "../../src/store/StoreOptions.js";
import {
  dataDirectory,
  diskLayer,
  inserted,
  nodeDisk,
  readBytes,
  writeBytes,
} from "../support/store.js";

const packageDirectory = fileURLToPath(new URL("../..", import.meta.url));

/** A store with `count` inserted jobs, closed; rotation by `options` if given. */
const populated = (count: number, options: StoreOptionsInput = {}) =>
  Effect.gen(function* () {
    const directory = yield* dataDirectory;
    yield* Init.init(directory);
    yield* Effect.scoped(
      Effect.gen(function* () {
        const { store } = yield* Store.open(directory, options, Projection.count);
        for (let jobId = 1; jobId <= count; jobId++) yield* store.append([inserted(jobId, 40)]);
      }),
    );
    return directory;
  });

const openError = (directory: string, options: StoreOptionsInput = {}) =>
  Effect.flip(Effect.scoped(Store.open(directory, options, Projection.collect)));

const segment = (directory: string, id: number) => Layout.segmentPath(directory, 1, id);

describe("recovery refuses, naming what and where, and writes nothing", () => {
  it.scopedLive("a foreign STORE_ID in a segment header", () =>
    Effect.gen(function* () {
      const directory = yield* populated(3);
      const file = segment(directory, 1);
      const bytes = yield* readBytes(file);
      const foreign = encodeSegmentHeader({
        segmentId: 1,
        firstSequence: 1,
        storeId: new Uint8Array(16).fill(7),
      });
      const damaged = new Uint8Array(bytes);
      damaged.set(foreign, 0);
      yield* writeBytes(file, damaged);
      const error = yield* openError(directory);
      expect(error).toMatchObject({
        _tag: "Mismatch",
        path: file,
        field: "StoreId",
        found: "07070707-0707-0707-0707-070707070707",
      });
      expect(yield* readBytes(file)).toEqual(damaged);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a gap in segment IDs and an unexpected entry in segments/", () =>
    Effect.gen(function* () {
      const directory = yield* populated(12, { rotationTargetBytes: 400 });
      const segments = Layout.segmentsPath(directory, 1);
      const names = yield* Effect.promise(() => fs.readdir(segments));
      expect(names.length).toBeGreaterThanOrEqual(3);
      yield* Effect.promise(() =>
        fs.rename(path.join(segments, Layout.segmentName(2)), path.join(directory, "aside")),
      );
      expect(yield* openError(directory)).toMatchObject({
        _tag: "SegmentGap",
        path: segments,
        expected: 2,
        found: 3,
      });
      yield* Effect.promise(() =>
        fs.rename(path.join(directory, "aside"), path.join(segments, Layout.segmentName(2))),
      );
      yield* Effect.promise(() => fs.writeFile(path.join(segments, "notes.txt"), "x"));
      expect(yield* openError(directory)).toMatchObject({
        _tag: "UnexpectedEntry",
        path: segments,
        name: "notes.txt",
      });
      yield* Effect.promise(() => fs.rm(path.join(segments, "notes.txt")));
      yield* Effect.promise(() => fs.writeFile(path.join(segments, "1.tay"), "x"));
      expect(yield* openError(directory)).toMatchObject({ _tag: "UnexpectedEntry", name: "1.tay" });
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a torn tail: IncompleteTail, the file unchanged byte for byte", () =>
    Effect.gen(function* () {
      const directory = yield* populated(3);
      const file = segment(directory, 1);
      const whole = yield* readBytes(file);
      const size = (whole.length - segmentHeaderBytes) / 3;
      const torn = whole.subarray(0, whole.length - 5);
      yield* writeBytes(file, torn);
      const error = yield* openError(directory);
      expect(error).toMatchObject({
        _tag: "IncompleteTail",
        path: file,
        offset: segmentHeaderBytes + 2 * size,
        sequence: 3,
        part: "Record",
      });
      expect(yield* readBytes(file)).toEqual(torn);
      // The same through inspect.
      const inspected = yield* Effect.flip(Recovery.inspect(directory, {}, Projection.count));
      expect(inspected._tag).toBe("IncompleteTail");
      // A header cut short is a torn tail too, and so is an empty highest segment: the
      // staged creation makes neither, but a failing disk still can (FORMAT.md).
      yield* writeBytes(file, whole.subarray(0, 10));
      expect(yield* openError(directory)).toMatchObject({
        _tag: "IncompleteTail",
        offset: 0,
        part: "Header",
      });
      yield* writeBytes(file, new Uint8Array());
      expect(yield* openError(directory)).toMatchObject({
        _tag: "IncompleteTail",
        offset: 0,
        part: "Header",
      });
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a flipped bit: RecordChecksum with path, offset and sequence", () =>
    Effect.gen(function* () {
      const directory = yield* populated(3);
      const file = segment(directory, 1);
      const bytes = new Uint8Array(yield* readBytes(file));
      const size = (bytes.length - segmentHeaderBytes) / 3;
      const offset = segmentHeaderBytes + size;
      bytes[offset + 30] = (bytes[offset + 30] ?? 0) ^ 0x10;
      yield* writeBytes(file, bytes);
      expect(yield* openError(directory)).toMatchObject({
        _tag: "CorruptRecord",
        path: file,
        offset,
        sequence: 2,
        reason: "RecordChecksum",
      });
      expect(yield* readBytes(file)).toEqual(bytes);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a sealed segment with a bad footer CRC, a bad segment CRC, or no footer", () =>
    Effect.gen(function* () {
      const directory = yield* populated(12, { rotationTargetBytes: 400 });
      const file = segment(directory, 1);
      const original = yield* readBytes(file);
      const footerOffset = original.length - segmentFooterBytes;
      const badFooter = new Uint8Array(original);
      badFooter[original.length - 1] = (badFooter[original.length - 1] ?? 0) ^ 1;
      yield* writeBytes(file, badFooter);
      expect(yield* openError(directory)).toMatchObject({
        _tag: "MalformedFile",
        path: file,
        kind: "SegmentFooter",
        reason: { _tag: "ChecksumMismatch" },
      });

      const footer = decodeSegmentFooter(original.subarray(footerOffset));
      if (E.isLeft(footer)) return expect.unreachable("the footer must decode");
      const lying = new Uint8Array(original);
      lying.set(
        encodeSegmentFooter({ ...footer.right, segmentCrc: (footer.right.segmentCrc ^ 1) >>> 0 }),
        footerOffset,
      );
      yield* writeBytes(file, lying);
      expect(yield* openError(directory)).toMatchObject({
        _tag: "Mismatch",
        path: file,
        field: "SegmentChecksum",
        offset: footerOffset + 56,
      });

      yield* writeBytes(file, original.subarray(0, footerOffset));
      expect(yield* openError(directory)).toMatchObject({
        _tag: "InvalidSegment",
        path: file,
        reason: "MissingFooter",
      });
      expect(yield* readBytes(file)).toEqual(original.subarray(0, footerOffset));
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "a sealed segment's records on trust at open and in an inspection on trust: a flipped bit is still named by its record; a wrong record CRC its segment CRC covers opens, a checked inspection refuses it",
    () =>
      Effect.gen(function* () {
        const directory = yield* populated(12, { rotationTargetBytes: 400 });
        const file = segment(directory, 1);
        const original = yield* readBytes(file);
        const footerOffset = original.length - segmentFooterBytes;
        // Open's first scan fails only at the segment's end (SegmentChecksum); its second names the record.
        const flipped = new Uint8Array(original);
        flipped[segmentHeaderBytes + 30] = (flipped[segmentHeaderBytes + 30] ?? 0) ^ 0x10;
        yield* writeBytes(file, flipped);
        const namedRecord = {
          _tag: "CorruptRecord",
          path: file,
          offset: segmentHeaderBytes,
          sequence: 1,
          reason: "RecordChecksum",
        };
        expect(yield* openError(directory)).toMatchObject(namedRecord);
        // An inspection on trust (the CLI's status, jobs, job) names it the same way.
        const onTrust = Recovery.inspect(directory, {}, Projection.count, undefined, "onTrust");
        expect(yield* Effect.flip(onTrust)).toMatchObject(namedRecord);
        // A writer that hashed record 1 wrongly but sealed the bytes as written.
        const length = new DataView(original.buffer, original.byteOffset).getUint32(
          segmentHeaderBytes + 16,
        );
        const consistent = new Uint8Array(original);
        const recordCrcAt = segmentHeaderBytes + 24 + length;
        consistent[recordCrcAt] = (consistent[recordCrcAt] ?? 0) ^ 0x01;
        const footer = decodeSegmentFooter(original.subarray(footerOffset));
        if (E.isLeft(footer)) return expect.unreachable("the footer must decode");
        const segmentCrc = crc32c(consistent.subarray(0, footerOffset));
        consistent.set(encodeSegmentFooter({ ...footer.right, segmentCrc }), footerOffset);
        yield* writeBytes(file, consistent);
        const opened = yield* Effect.scoped(Store.open(directory, {}, Projection.count));
        expect(opened.state).toBe(12);
        expect((yield* onTrust).state).toBe(12);
        expect(yield* Effect.flip(Recovery.inspect(directory, {}, Projection.count))).toMatchObject(
          {
            _tag: "CorruptRecord",
            path: file,
            offset: segmentHeaderBytes,
            sequence: 1,
            reason: "RecordChecksum",
          },
        );
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("an unknown event, a rejected history and a missing base", () =>
    Effect.gen(function* () {
      const directory = yield* populated(2);
      const file = segment(directory, 1);
      const bytes = yield* readBytes(file);
      const unknown = encodeRecord({
        type: 99,
        schema: 1,
        sequence: 3,
        payload: new Uint8Array([0]),
      });
      if (E.isLeft(unknown)) return expect.unreachable("the record must encode");
      const extended = new Uint8Array(bytes.length + unknown.right.length);
      extended.set(bytes, 0);
      extended.set(unknown.right, bytes.length);
      yield* writeBytes(file, extended);
      expect(yield* openError(directory)).toMatchObject({
        _tag: "UndecodableEvent",
        path: file,
        offset: bytes.length,
        sequence: 3,
        reason: { _tag: "UnknownEvent" },
      });
      yield* writeBytes(file, bytes);

      const refusing: Projection.Projection<number, string> = {
        start: () => 0,
        apply: (state, sequence) =>
          sequence === 2 ? Either.left("job 2 is not welcome") : Either.right(state + 1),
      };
      const rejected = yield* Effect.flip(Effect.scoped(Store.open(directory, {}, refusing)));
      expect(rejected).toMatchObject({
        _tag: "HistoryRejected",
        path: file,
        sequence: 2,
        reason: "job 2 is not welcome",
      });

      const manifestPath = Layout.manifestPath(directory, 1);
      const manifest = yield* readBytes(manifestPath);
      const marker = yield* readBytes(Layout.markerPath(directory));
      yield* writeBytes(
        manifestPath,
        encodeManifest({
          storeId: marker.subarray(8, 24),
          epoch: 1,
          parentEpoch: 0,
          firstSequence: 1,
          baseRecordCount: 5,
          createdAt: 0,
        }),
      );
      expect(yield* openError(directory)).toMatchObject({
        _tag: "MissingBase",
        baseRecordCount: 5,
        records: 2,
      });
      yield* writeBytes(manifestPath, manifest);
      const reopened = yield* Effect.scoped(Store.open(directory, {}, Projection.count));
      expect(reopened.state).toBe(2);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a CURRENT or MANIFEST of another store, and a MANIFEST of another epoch", () =>
    Effect.gen(function* () {
      const directory = yield* populated(2);
      const marker = yield* readBytes(Layout.markerPath(directory));
      const storeId = marker.subarray(8, 24);
      const foreign = new Uint8Array(16).fill(7);
      const currentPath = Layout.currentPath(directory);
      const current = yield* readBytes(currentPath);
      yield* writeBytes(currentPath, encodeCurrentPointer({ storeId: foreign, epoch: 1 }));
      expect(yield* openError(directory)).toMatchObject({
        _tag: "Mismatch",
        path: currentPath,
        offset: 8,
        field: "StoreId",
      });
      yield* writeBytes(currentPath, current);

      const manifestPath = Layout.manifestPath(directory, 1);
      const manifest = yield* readBytes(manifestPath);
      const fields = {
        storeId,
        epoch: 1,
        parentEpoch: 0,
        firstSequence: 1,
        baseRecordCount: 0,
        createdAt: 0,
      };
      yield* writeBytes(manifestPath, encodeManifest({ ...fields, storeId: foreign }));
      expect(yield* openError(directory)).toMatchObject({
        _tag: "Mismatch",
        path: manifestPath,
        offset: 8,
        field: "StoreId",
      });
      yield* writeBytes(manifestPath, encodeManifest({ ...fields, epoch: 2 }));
      expect(yield* openError(directory)).toMatchObject({
        _tag: "Mismatch",
        path: manifestPath,
        offset: 24,
        field: "Epoch",
        expected: "1",
        found: "2",
      });
      yield* writeBytes(manifestPath, manifest);
      const reopened = yield* Effect.scoped(Store.open(directory, {}, Projection.count));
      expect(reopened.state).toBe(2);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a directory that is no store, without creating LOCK in it", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      expect(yield* openError(directory)).toMatchObject({
        _tag: "StoreNotFound",
        reason: "MissingDirectory",
      });
      yield* Effect.promise(() => fs.mkdir(directory));
      expect(yield* openError(directory)).toMatchObject({
        _tag: "StoreNotFound",
        reason: "MissingMarker",
      });
      expect(yield* Effect.promise(() => fs.readdir(directory))).toEqual([]);
    }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("budgets", () => {
  it.scopedLive("each budget refuses with BudgetExceeded, and a larger one opens the store", () =>
    Effect.gen(function* () {
      const directory = yield* populated(12, { rotationTargetBytes: 400 });
      const cases = [
        { budgets: { historyRecords: 11 }, budget: "historyRecords", limit: 11 },
        { budgets: { bytesDecoded: 500 }, budget: "bytesDecoded", limit: 500 },
        { budgets: { candidatePayloadBytes: 100 }, budget: "candidatePayloadBytes", limit: 100 },
        { budgets: { directoryEntries: 2 }, budget: "directoryEntries", limit: 2 },
      ] as const;
      for (const { budgets, budget, limit } of cases) {
        expect(yield* openError(directory, { budgets })).toEqual(
          expect.objectContaining({ _tag: "BudgetExceeded", budget, limit }),
        );
      }
      const opened = yield* Effect.scoped(
        Store.open(directory, { budgets: { historyRecords: 12 } }, Projection.count),
      );
      expect(opened.state).toBe(12);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "a budget is refused only when passed: a store spending exactly the limit opens",
    () =>
      Effect.gen(function* () {
        // One active segment, so its bytes are its header and its records, no footer.
        const directory = yield* populated(12);
        const { report } = yield* Recovery.inspect(directory, {}, Projection.count);
        expect(report.segments).toBe(1);
        const entries = yield* Effect.promise(async () => {
          const epochs = await fs.readdir(Layout.epochsPath(directory));
          const epoch = await fs.readdir(Layout.epochPath(directory, 1));
          const segments = await fs.readdir(Layout.segmentsPath(directory, 1));
          return epochs.length + epoch.length + segments.length;
        });
        const cases = [
          { budget: "bytesDecoded", limit: report.bytes },
          {
            budget: "candidatePayloadBytes",
            limit: report.bytes - segmentHeaderBytes - 12 * recordOverheadBytes,
          },
          { budget: "directoryEntries", limit: entries },
          { budget: "historyRecords", limit: 12 },
        ] as const;
        for (const { budget, limit } of cases) {
          const opened = yield* Effect.scoped(
            Store.open(directory, { budgets: { [budget]: limit } }, Projection.count),
          );
          expect(opened.state).toBe(12);
          expect(yield* openError(directory, { budgets: { [budget]: limit - 1 } })).toEqual(
            expect.objectContaining({ _tag: "BudgetExceeded", budget, limit: limit - 1 }),
          );
        }
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("orphaned generations", () => {
  it.scopedLive("are reported, never deleted, by open", () =>
    Effect.gen(function* () {
      const directory = yield* populated(1);
      const staged = Layout.epochPath(directory, 7);
      yield* Effect.promise(() => fs.mkdir(staged));
      const opened = yield* Effect.scoped(Store.open(directory, {}, Projection.count));
      expect(opened.report.orphanedGenerations).toEqual([
        { epoch: 7, path: staged, kind: "Staged" },
      ]);
      expect((yield* Effect.promise(() => fs.stat(staged))).isDirectory()).toBe(true);
      yield* Effect.promise(() => fs.writeFile(path.join(Layout.epochsPath(directory), "x"), ""));
      expect(yield* openError(directory)).toMatchObject({ _tag: "UnexpectedEntry", name: "x" });
    }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("the segment staging file (FORMAT.md, Creating a segment)", () => {
  it.scopedLive("SEGMENT.tmp is ignored and reported by open and inspect, never read", () =>
    Effect.gen(function* () {
      const directory = yield* populated(3);
      const staging = Layout.segmentStagingPath(directory, 1);
      // Not a segment at all: were it read as part of the generation, open would refuse it.
      yield* writeBytes(staging, new Uint8Array([1, 2, 3]));
      const inspected = yield* Recovery.inspect(directory, {}, Projection.count);
      expect(inspected.report.stagedSegment).toBe(staging);
      expect(inspected.state).toBe(3);
      // Inspection writes nothing.
      expect(yield* readBytes(staging)).toEqual(new Uint8Array([1, 2, 3]));
      const opened = yield* Effect.scoped(Store.open(directory, {}, Projection.count));
      expect(opened.report.stagedSegment).toBe(staging);
      expect(opened.report.segments).toBe(1);
      expect(opened.state).toBe(3);
      // Activation's hard-link probe starts, as every creation does, by removing a leftover.
      expect(yield* Effect.promise(() => fs.readdir(Layout.epochPath(directory, 1)))).toEqual([
        "MANIFEST",
        "segments",
      ]);
      // Any other name in the epoch directory is still refused.
      yield* writeBytes(
        path.join(Layout.epochPath(directory, 1), "SEGMENT.tmp2"),
        new Uint8Array(),
      );
      expect(yield* openError(directory)).toMatchObject({
        _tag: "UnexpectedEntry",
        name: "SEGMENT.tmp2",
      });
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "a leftover SEGMENT.tmp naming the live segment is removed at activation, never written through",
    () =>
      Effect.gen(function* () {
        const directory = yield* populated(3);
        const staging = Layout.segmentStagingPath(directory, 1);
        // A crash between steps 3 and 4: the staging name is a second name of the active segment.
        yield* Effect.promise(() => fs.link(segment(directory, 1), staging));
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store, report } = yield* Store.open(
              directory,
              { rotationTargetBytes: 400 },
              Projection.count,
            );
            expect(report.stagedSegment).toBe(staging);
            for (let jobId = 4; jobId <= 12; jobId++) yield* store.append([inserted(jobId, 40)]);
            expect((yield* store.stats()).segments).toBeGreaterThanOrEqual(3);
          }),
        );
        const names = yield* Effect.promise(() => fs.readdir(Layout.epochPath(directory, 1)));
        expect(names.sort()).toEqual(["MANIFEST", "segments"]);
        const reopened = yield* Effect.scoped(Store.open(directory, {}, Projection.collect));
        expect(reopened.state.map((entry) => entry.sequence)).toEqual(
          Array.from({ length: 12 }, (_, index) => index + 1),
        );
        expect(reopened.report.stagedSegment).toBeNull();
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("activation re-checks what validation saw", () => {
  it.scopedLive("a LOCK rewritten during validation is LockSessionLost", () =>
    Effect.gen(function* () {
      const directory = yield* populated(1);
      const lockPath = Layout.lockPath(directory);
      // Reads of LOCK see someone else's description, as if the file had been replaced.
      const replaced: DiskService = {
        ...NodeDisk.make,
        readFile: (file) =>
          file === lockPath
            ? Effect.succeed(
                new TextEncoder().encode('{"pid":1,"host":"h","session":"x","acquiredAt":0}'),
              )
            : NodeDisk.make.readFile(file),
      };
      const error = yield* Effect.flip(
        Effect.scoped(Store.open(directory, {}, Projection.count)).pipe(
          Effect.provide(diskLayer(replaced)),
        ),
      );
      expect(error).toMatchObject({ _tag: "LockSessionLost", path: lockPath });
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a LOCK that cannot be read back is the disk's error, not LockSessionLost", () =>
    Effect.gen(function* () {
      const directory = yield* populated(1);
      const lockPath = Layout.lockPath(directory);
      const unreadable: DiskService = {
        ...NodeDisk.make,
        readFile: (file) =>
          file === lockPath
            ? Effect.fail(
                new DiskError({ operation: "read", path: file, code: "EIO", detail: "injected" }),
              )
            : NodeDisk.make.readFile(file),
      };
      const error = yield* Effect.flip(
        Effect.scoped(Store.open(directory, {}, Projection.count)).pipe(
          Effect.provide(diskLayer(unreadable)),
        ),
      );
      expect(error).toMatchObject({ _tag: "DiskError", code: "EIO", path: lockPath });
      expect(error.message).toContain("EIO");
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("an active segment that grew after validation is ActiveSegmentChanged", () =>
    Effect.gen(function* () {
      const directory = yield* populated(2);
      const file = segment(directory, 1);
      // The read-write handle (activation's) reports one byte more than validation read.
      const grown: DiskService = {
        ...NodeDisk.make,
        open: (path, mode) =>
          Effect.map(NodeDisk.make.open(path, mode), (handle) =>
            path === file && mode === "readWrite"
              ? { ...handle, size: () => Effect.map(handle.size(), (size) => size + 1) }
              : handle,
          ),
      };
      const before = yield* readBytes(file);
      const error = yield* Effect.flip(
        Effect.scoped(Store.open(directory, {}, Projection.count)).pipe(
          Effect.provide(diskLayer(grown)),
        ),
      );
      expect(error).toMatchObject({ _tag: "ActiveSegmentChanged", path: file, reason: "Size" });
      expect(yield* readBytes(file)).toEqual(before);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "an active segment whose last record changed after validation is ActiveSegmentChanged",
    () =>
      Effect.gen(function* () {
        const directory = yield* populated(2);
        const file = segment(directory, 1);
        // Same size, but the read-write handle (activation's) reads the last byte otherwise.
        const rewritten: DiskService = {
          ...NodeDisk.make,
          open: (path, mode) =>
            Effect.map(NodeDisk.make.open(path, mode), (handle) => {
              if (path !== file || mode !== "readWrite") return handle;
              const read = (position: number, length: number) =>
                Effect.flatMap(handle.size(), (size) =>
                  Effect.map(handle.read(position, length), (bytes) => {
                    const changed = new Uint8Array(bytes);
                    const last = size - 1 - position;
                    if (last >= 0 && last < changed.length) {
                      changed[last] = (changed[last] ?? 0) ^ 0xff;
                    }
                    return changed;
                  }),
                );
              return { ...handle, read };
            }),
        };
        const before = yield* readBytes(file);
        const error = yield* Effect.flip(
          Effect.scoped(Store.open(directory, {}, Projection.count)).pipe(
            Effect.provide(diskLayer(rewritten)),
          ),
        );
        expect(error).toMatchObject({
          _tag: "ActiveSegmentChanged",
          path: file,
          reason: "LastRecord",
        });
        expect(yield* readBytes(file)).toEqual(before);
      }).pipe(Effect.provide(nodeDisk)),
  );
});

// A child process that flocks LOCK with fs-ext and holds it until its stdin closes, or tries it.
const childScript = `
const fs = require("node:fs");
const fsExt = require("fs-ext");
const fd = fs.openSync(process.argv[1], "a+");
try {
  fsExt.flockSync(fd, "exnb");
} catch (error) {
  console.log(error.code === "EAGAIN" || error.code === "EWOULDBLOCK" ? "held" : "error " + error.code);
  process.exit(0);
}
console.log("acquired");
if (process.argv[2] === "hold") process.stdin.on("end", () => process.exit(0)).resume();
else process.exit(0);
`;

const child = (lockPath: string, hold: boolean) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, ["-e", childScript, lockPath, hold ? "hold" : "try"], {
        cwd: packageDirectory,
      }),
    ),
    (process) => Effect.sync(() => process.stdin.end()),
  );

const firstLine = (process: ChildProcessWithoutNullStreams): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    let output = "";
    let done = false;
    const finish = (line: string) => {
      if (done) return;
      done = true;
      resume(Effect.succeed(line));
    };
    process.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const end = output.indexOf("\n");
      if (end >= 0) finish(output.slice(0, end));
    });
    process.on("exit", (code) => finish(`exited ${code}: ${output}`));
  });

describe("the lock", () => {
  it.scopedLive("a second opener in this process gets Locked, naming the holder", () =>
    Effect.gen(function* () {
      const directory = yield* populated(1);
      yield* Store.open(directory, {}, Projection.count);
      const error = yield* openError(directory);
      expect(error).toMatchObject({
        _tag: "Locked",
        path: Layout.lockPath(directory),
        holder: { pid: process.pid },
      });
      // inspect takes no lock: it reads the same history while the store is open.
      const inspected = yield* Recovery.inspect(directory, {}, Projection.count);
      expect(inspected.state).toBe(1);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("Locked names the holder's host and when it took the lock, not only its pid", () =>
    Effect.gen(function* () {
      const directory = yield* populated(1);
      const before = Date.now();
      yield* Store.open(directory, {}, Projection.count);
      const after = Date.now();
      const error = yield* openError(directory);
      const holder = error._tag === "Locked" ? error.holder : null;
      expect(holder).toMatchObject({ pid: process.pid, host: os.hostname() });
      expect(holder?.session).toMatch(/^[0-9a-f]{32}$/);
      expect(holder?.acquiredAt).toBeGreaterThanOrEqual(before);
      expect(holder?.acquiredAt).toBeLessThanOrEqual(after);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "another process cannot take LOCK while the store is open, nor open it while it holds LOCK",
    () =>
      Effect.gen(function* () {
        const directory = yield* populated(1);
        const lockPath = Layout.lockPath(directory);
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Store.open(directory, {}, Projection.count);
            const trying = yield* child(lockPath, false);
            expect(yield* firstLine(trying)).toBe("held");
          }),
        );
        const holder = yield* child(lockPath, true);
        expect(yield* firstLine(holder)).toBe("acquired");
        const error = yield* openError(directory);
        expect(error).toMatchObject({ _tag: "Locked", path: lockPath });
      }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("any damage", () => {
  const knownTags = new Set([
    "StoreNotFound",
    "UnsupportedStoreV1",
    "IncompleteInitialization",
    "MalformedFile",
    "Mismatch",
    "UnexpectedEntry",
    "MissingEntry",
    "SegmentGap",
    "InvalidSegment",
    "CorruptRecord",
    "BeyondSafeInteger",
    "IncompleteTail",
    "UndecodableEvent",
    "MissingBase",
    "DiskError",
  ]);

  it("gives the store or a typed refusal, never a defect, and changes no byte", async () => {
    const directory = "/data";
    const pristine = FaultDisk.make();
    pristine.seedDirectory(directory);
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* Init.init(directory);
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(
              directory,
              { rotationTargetBytes: 300 },
              Projection.count,
            );
            for (let jobId = 1; jobId <= 6; jobId++) yield* store.append([inserted(jobId, 20)]);
            yield* store.compact([inserted(1, 20), inserted(2, 20), inserted(3, 20)]);
            for (let jobId = 7; jobId <= 12; jobId++) yield* store.append([inserted(jobId, 20)]);
          }),
        );
      }).pipe(Effect.provide(FaultDisk.layer(pristine))),
    );
    pristine.settle();
    const files = [...pristine.snapshotFiles().entries()].filter(
      ([name]) => !name.endsWith("LOCK"),
    );
    const damage = fc.record({
      file: fc.nat({ max: files.length - 1 }),
      kind: fc.constantFrom("flip", "truncate", "extend", "overwrite"),
      position: fc.nat(),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 80 }),
    });
    await fc.assert(
      fc.asyncProperty(damage, async ({ file, kind, position, bytes }) => {
        const [name, original] = files[file] ?? ["", new Uint8Array()];
        const at = original.length === 0 ? 0 : position % original.length;
        let damaged: Uint8Array;
        if (kind === "flip") {
          damaged = new Uint8Array(original);
          damaged[at] = (damaged[at] ?? 0) ^ ((bytes[0] ?? 0) | 1);
        } else if (kind === "truncate") {
          damaged = original.subarray(0, at);
        } else if (kind === "extend") {
          damaged = new Uint8Array(original.length + bytes.length);
          damaged.set(original, 0);
          damaged.set(bytes, original.length);
        } else {
          damaged = new Uint8Array(original);
          damaged.set(bytes.subarray(0, Math.max(0, original.length - at)), at);
        }
        const disk = pristine.crash();
        disk.seedFile(name, damaged);
        const exit = await Effect.runPromiseExit(
          Effect.scoped(Store.open(directory, {}, Projection.count)).pipe(
            Effect.provide(FaultDisk.layer(disk)),
          ),
        );
        if (Exit.isFailure(exit)) {
          const failure = Cause.failureOption(exit.cause);
          expect(failure._tag, Cause.pretty(exit.cause)).toBe("Some");
          if (failure._tag === "Some") expect(knownTags).toContain(failure.value._tag);
          // A refusal leaves every file as it found it.
          for (const [path, bytesBefore] of files) {
            const after = disk.snapshotFiles().get(path);
            expect(after).toEqual(path === name ? damaged : bytesBefore);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});
