// Proves "Creating a segment" (FORMAT.md, amended 2026-12-01): a new segment appears under its name
// whole or not at all, a leftover SEGMENT.tmp is removed and never written through, and a file
// system without hard links is a typed refusal. It drives createSegment on the fault disk directly,
// and cuts the power before every one of its operations, crashed every way the model allows.
import { describe, expect, it } from "@effect/vitest";
import { encodeSegmentHeader, segmentHeaderBytes } from "@tay/codec";
import { Effect } from "effect";
import type * as Crash from "../../../src/disk/Crash.js";
import type { Disk } from "../../../src/disk/Disk.js";
import * as FaultDisk from "../../../src/disk/FaultDisk.js";
import * as Layout from "../../../src/store/Layout.js";
import {
  createSegment,
  probeHardLinks,
  type SegmentCreation,
} from "../../../src/store/internal/segmentCreate.js";
import { exploreCrashModesAnd } from "../../support/store.js";

const directory = "/data";
const storeId = Uint8Array.from({ length: 16 }, (_, index) => index);
const header = encodeSegmentHeader({ segmentId: 2, firstSequence: 5, storeId });
const creation: SegmentCreation = {
  directory,
  epoch: 1,
  id: 2,
  header,
  sync: true,
  append: { dataSync: true },
  operation: "rotation",
};
const target = Layout.segmentPath(directory, 1, 2);
const staging = Layout.segmentStagingPath(directory, 1);
const live = Layout.segmentPath(directory, 1, 1);
const liveBytes = new TextEncoder().encode("segment 1: records acknowledged long ago");
const oldLeftover = new TextEncoder().encode("an interrupted creation");
const equal = (left: Uint8Array, right: Uint8Array): boolean =>
  left.length === right.length && left.every((byte, index) => byte === right[index]);

/** An epoch directory with a live segment 1, everything durable. */
const prepared = (): FaultDisk.FaultDisk => {
  const disk = FaultDisk.make();
  disk.seedDirectory(Layout.segmentsPath(directory, 1));
  disk.seedFile(live, liveBytes);
  return disk;
};

const run = <A, X>(disk: FaultDisk.FaultDisk, effect: Effect.Effect<A, X, Disk>) =>
  Effect.provide(effect, FaultDisk.layer(disk));

describe("createSegment", () => {
  it.effect("makes the segment whole under its name and opens it there for appends", () =>
    Effect.gen(function* () {
      const disk = prepared();
      const handle = yield* run(disk, createSegment(creation));
      expect(handle.path).toBe(target);
      expect(handle.dataSync).toBe(true);
      yield* handle.write(segmentHeaderBytes, Uint8Array.of(9));
      yield* handle.close();
      expect(disk.snapshotFiles().get(target)).toEqual(Uint8Array.of(...header, 9));
      expect(disk.listing()).not.toContain(staging);
      // Synced as it went (the entry, the header, and the O_DSYNC append): a crash keeps it all.
      expect(disk.crash().snapshotFiles().get(target)).toEqual(Uint8Array.of(...header, 9));
    }),
  );

  it.effect(
    "removes a leftover SEGMENT.tmp that names a live segment, never writing through it",
    () =>
      Effect.gen(function* () {
        const disk = prepared();
        // A crash between steps 3 and 4 of an earlier creation.
        yield* disk.link(live, staging);
        disk.settle();
        const handle = yield* run(disk, createSegment(creation));
        yield* handle.close();
        expect(disk.snapshotFiles().get(live)).toEqual(liveBytes);
        expect(disk.snapshotFiles().get(target)).toEqual(header);
        expect(disk.listing()).not.toContain(staging);
      }),
  );

  it.effect("never replaces an existing segment: the link fails with EEXIST", () =>
    Effect.gen(function* () {
      const disk = prepared();
      const error = yield* Effect.flip(run(disk, createSegment({ ...creation, id: 1 })));
      expect(error).toMatchObject({ _tag: "DiskError", operation: "link", code: "EEXIST" });
      expect(disk.snapshotFiles().get(live)).toEqual(liveBytes);
    }),
  );

  it.effect("skips both syncs when asked (Throughput), and nothing else", () =>
    Effect.gen(function* () {
      const disk = prepared();
      const handle = yield* run(disk, createSegment({ ...creation, sync: false, append: {} }));
      expect(handle.dataSync).toBe(false);
      yield* handle.close();
      const kinds = disk.operations().map((operation) => operation.kind);
      expect(kinds.filter((kind) => kind === "sync" || kind === "syncDirectory")).toEqual([]);
      expect(kinds.filter((kind) => kind === "link" || kind === "remove")).toEqual([
        "remove",
        "link",
        "remove",
      ]);
      expect(disk.snapshotFiles().get(target)).toEqual(header);
    }),
  );

  it.effect(
    "a file system without hard links is HardLinksUnsupported; other link errors stay",
    () =>
      Effect.gen(function* () {
        for (const code of ["EPERM", "ENOTSUP", "EXDEV"] as const) {
          const disk = prepared();
          disk.inject(FaultDisk.fail("link", code));
          const error = yield* Effect.flip(run(disk, createSegment(creation)));
          expect(error).toMatchObject({
            _tag: "HardLinksUnsupported",
            path: target,
            operation: "rotation",
            cause: { code },
          });
          expect(error.message).toMatch(
            /^HardLinksUnsupported \/data\/.*: rotation needs a hard link/,
          );
          expect(disk.listing().some((name) => name.startsWith(`${target}`))).toBe(false);
          const probe = yield* Effect.flip(run(disk, probeHardLinks(directory, 1, live, "init")));
          expect(probe).toMatchObject({ _tag: "HardLinksUnsupported", operation: "init" });
        }
        const disk = prepared();
        disk.inject(FaultDisk.fail("link", "EIO"));
        expect(yield* Effect.flip(run(disk, createSegment(creation)))).toMatchObject({
          _tag: "DiskError",
          code: "EIO",
        });
      }),
  );

  it.effect("the probe leaves nothing behind and writes no byte of the file it links", () =>
    Effect.gen(function* () {
      const disk = prepared();
      yield* run(disk, probeHardLinks(directory, 1, live, "activation"));
      expect(disk.listing()).not.toContain(staging);
      expect(disk.snapshotFiles().get(live)).toEqual(liveBytes);
      expect(
        disk.operations().filter((operation) => operation.kind === "write" || operation.mode),
      ).toEqual([]);
    }),
  );
});

describe("createSegment under crashes", () => {
  type Label = "Created";
  const workload: Crash.Workload<Label> = (disk, acknowledge) =>
    Effect.gen(function* () {
      const handle = yield* createSegment(creation);
      yield* handle.close();
      yield* acknowledge("Created");
    }).pipe(Effect.provide(FaultDisk.layer(disk)));

  const outcomes = { absent: 0, whole: 0 };
  const check: Crash.Check<Label> = (disk, acknowledged) =>
    Effect.sync(() => {
      const files = disk.snapshotFiles();
      const created = files.get(target);
      // Never a segment shorter than its header: absent, or exactly the header.
      if (created === undefined) {
        expect(acknowledged).toEqual([]);
        outcomes.absent += 1;
      } else {
        expect(created).toEqual(header);
        outcomes.whole += 1;
      }
      // The live segment is never touched, whatever the staging name became.
      expect(files.get(live)).toEqual(liveBytes);
      // The staging name, if a crash kept it, is the old leftover or (a prefix of) the new header.
      const leftover = files.get(staging);
      if (leftover !== undefined && !equal(leftover, oldLeftover)) {
        expect(header.subarray(0, leftover.length)).toEqual(leftover);
      }
    });

  it.effect("at every cut point and crash mode the new segment is absent or whole", () =>
    Effect.gen(function* () {
      // The three modes of every crash suite, and a sector tear that keeps unsynced entries in part.
      yield* exploreCrashModesAnd(
        [{ tear: "sector", unsyncedEntries: "prefix" }],
        workload,
        check,
        {
          setup: (disk) =>
            Effect.sync(() => {
              disk.seedDirectory(Layout.segmentsPath(directory, 1));
              disk.seedFile(live, liveBytes);
              disk.seedFile(staging, oldLeftover);
            }),
          samplesPerCutPoint: 8,
        },
      );
      expect(outcomes.absent).toBeGreaterThan(0);
      expect(outcomes.whole).toBeGreaterThan(0);
    }),
  );
});
