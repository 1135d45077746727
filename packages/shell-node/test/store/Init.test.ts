// Proves init publishes FORMAT.md's layout in its order, each step durable before the next, and
// refuses every directory it must not touch (non-empty, Store-v1, interrupted init). It runs on
// real temporary directories through NodeDisk, and on the fault disk to crash init at every cut.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { decodeCurrentPointer, decodeManifest, decodeStoreMarker, formatStoreId } from "@tay/codec";
import { describe, expect, it } from "@effect/vitest";
import { Effect, Either, Layer } from "effect";
import type * as Crash from "../../src/disk/Crash.js";
import { Disk } from "../../src/disk/Disk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Entropy from "../../src/disk/Entropy.js";
import * as Init from "../../src/store/Init.js";
import * as Layout from "../../src/store/Layout.js";
import * as Projection from "../../src/log/Projection.js";
import * as Store from "../../src/store/Store.js";
import {
  dataDirectory,
  exploreCrashModes,
  nodeDisk,
  temporaryDirectory,
} from "../support/store.js";

const listing = (directory: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(async () => {
    const entries = await fs.readdir(directory, { recursive: true });
    return entries.map((entry) => entry.toString()).sort();
  });

const bytesOf = (file: string) =>
  Effect.promise(async () => new Uint8Array(await fs.readFile(file)));

describe("init", () => {
  it.scopedLive("creates a missing directory and publishes marker, generation 1 and CURRENT", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      const made = yield* Init.init(directory);
      expect(yield* listing(directory)).toEqual([
        "CURRENT",
        "LOCK",
        "STORE-V2",
        "epochs",
        "epochs/00000000000000000001",
        "epochs/00000000000000000001/MANIFEST",
        "epochs/00000000000000000001/segments",
      ]);
      const marker = decodeStoreMarker(yield* bytesOf(Layout.markerPath(directory)));
      const current = decodeCurrentPointer(yield* bytesOf(Layout.currentPath(directory)));
      const manifest = decodeManifest(yield* bytesOf(Layout.manifestPath(directory, 1)));
      if (marker._tag === "Left" || current._tag === "Left" || manifest._tag === "Left") {
        return expect.unreachable("small files must decode");
      }
      expect(formatStoreId(marker.right.storeId)).toBe(made.storeId);
      expect(marker.right.createdAt).toBe(made.createdAt);
      expect(current.right.epoch).toBe(1);
      expect(formatStoreId(current.right.storeId)).toBe(made.storeId);
      expect(manifest.right).toMatchObject({
        epoch: 1,
        parentEpoch: 0,
        firstSequence: 1,
        baseRecordCount: 0,
        createdAt: made.createdAt,
      });
      // A UUID v4: version nibble 4, variant 10xx.
      expect(made.storeId).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("accepts an existing empty directory, or one holding only a stale LOCK", () =>
    Effect.gen(function* () {
      const empty = yield* temporaryDirectory;
      yield* Init.init(empty);
      const withLock = yield* temporaryDirectory;
      yield* Effect.promise(() => fs.writeFile(path.join(withLock, "LOCK"), "stale"));
      yield* Init.init(withLock);
      const opened = yield* Store.open(withLock, {}, Projection.count);
      expect(opened.state).toBe(0);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("is deterministic under a seeded Entropy", () =>
    Effect.gen(function* () {
      const seeded = (directory: string) =>
        Effect.provideService(Init.init(directory), Entropy.Entropy, Entropy.seeded(42));
      const first = yield* seeded(yield* dataDirectory);
      const second = yield* seeded(yield* dataDirectory);
      const other = yield* Init.init(yield* dataDirectory);
      expect(first.storeId).toBe(second.storeId);
      expect(other.storeId).not.toBe(first.storeId);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("refuses a missing parent, a file, a non-empty directory and a second init", () =>
    Effect.gen(function* () {
      const root = yield* temporaryDirectory;
      const missingParent = yield* Effect.flip(Init.init(path.join(root, "a", "b")));
      expect(missingParent).toMatchObject({ _tag: "StoreNotFound", reason: "MissingDirectory" });

      const file = path.join(root, "file");
      yield* Effect.promise(() => fs.writeFile(file, "x"));
      expect(yield* Effect.flip(Init.init(file))).toMatchObject({
        _tag: "StoreNotFound",
        reason: "NotADirectory",
      });

      const busy = path.join(root, "busy");
      yield* Effect.promise(() => fs.mkdir(busy));
      yield* Effect.promise(() => fs.writeFile(path.join(busy, "notes.txt"), "x"));
      expect(yield* Effect.flip(Init.init(busy))).toMatchObject({
        _tag: "NotEmpty",
        path: busy,
        entries: ["notes.txt"],
      });

      const store = path.join(root, "store");
      yield* Init.init(store);
      const before = yield* listing(store);
      expect(yield* Effect.flip(Init.init(store))).toMatchObject({ _tag: "NotEmpty" });
      expect(yield* listing(store)).toEqual(before);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "refuses, under the lock, a store another init published while it waited for the lock",
    () =>
      Effect.gen(function* () {
        const directory = yield* dataDirectory;
        // This init's lock of DIR is taken only after another init of DIR has run whole.
        const lock = Layout.lockPath(directory);
        let first: Init.Initialized | undefined;
        const racing = Layer.succeed(Disk, {
          ...NodeDisk.make,
          lock: (file: string) =>
            Effect.suspend(() => {
              if (first !== undefined || file !== lock) return NodeDisk.make.lock(file);
              return Effect.zipRight(
                Effect.tap(Effect.orDie(Effect.provide(Init.init(directory), nodeDisk)), (made) => {
                  first = made;
                }),
                NodeDisk.make.lock(file),
              );
            }),
        });
        const refused = yield* Effect.flip(Effect.provide(Init.init(directory), racing));
        expect(refused).toMatchObject({ _tag: "NotEmpty" });
        // The store the winner published is whole: its marker still names its STORE_ID.
        if (first === undefined) return expect.unreachable("the other init ran");
        const marker = decodeStoreMarker(yield* bytesOf(Layout.markerPath(directory)));
        if (marker._tag === "Left") return expect.unreachable("STORE-V2 decodes");
        expect(formatStoreId(marker.right.storeId)).toBe(first.storeId);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("refuses a Store-v1 root and never creates STORE or segments", () =>
    Effect.gen(function* () {
      for (const [entry, isDirectory] of [
        ["STORE", false],
        ["segments", true],
      ] as const) {
        const directory = yield* temporaryDirectory;
        const target = path.join(directory, entry);
        yield* Effect.promise(() => (isDirectory ? fs.mkdir(target) : fs.writeFile(target, "v1")));
        const error = yield* Effect.flip(Init.init(directory));
        expect(error).toMatchObject({ _tag: "UnsupportedStoreV1", path: directory, found: entry });
        expect(yield* listing(directory)).toEqual([entry]);
        const opening = yield* Effect.flip(Store.open(directory, {}, Projection.count));
        expect(opening).toMatchObject({ _tag: "UnsupportedStoreV1", found: entry });
        // Open checks before it locks: no LOCK appears in a v1 root.
        expect(yield* listing(directory)).toEqual([entry]);
      }
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("refuses an interrupted init (STORE-V2 without CURRENT), in init and in open", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      yield* Init.init(directory);
      yield* Effect.promise(() => fs.rm(Layout.currentPath(directory)));
      expect(yield* Effect.flip(Init.init(directory))).toMatchObject({
        _tag: "IncompleteInitialization",
        path: directory,
      });
      expect(yield* Effect.flip(Store.open(directory, {}, Projection.count))).toMatchObject({
        _tag: "IncompleteInitialization",
      });
    }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("init under crashes", () => {
  const directory = "/data";
  const workload: Crash.Workload<"initialized"> = (disk, acknowledge) =>
    Effect.gen(function* () {
      yield* Init.init(directory);
      yield* acknowledge("initialized");
    }).pipe(Effect.provide(FaultDisk.layer(disk)));

  const outcomes = { opened: 0, absent: 0, interrupted: 0 };
  const check: Crash.Check<"initialized"> = (disk, acknowledged) =>
    Effect.gen(function* () {
      const opened = yield* Effect.either(
        Effect.scoped(Store.open(directory, {}, Projection.count)),
      );
      if (Either.isRight(opened)) {
        outcomes.opened += 1;
        return;
      }
      // Before success was reported, a crash may leave no marker (or only LOCK), or a marker
      // without CURRENT; after it, the store must open.
      expect(acknowledged).toEqual([]);
      expect(["StoreNotFound", "IncompleteInitialization"]).toContain(opened.left._tag);
      // Without a marker the init can simply run again; with one it is refused as interrupted.
      const again = yield* Effect.either(Init.init(directory));
      if (opened.left._tag === "StoreNotFound") {
        outcomes.absent += 1;
        expect(again._tag).toBe("Right");
        const reopened = yield* Effect.scoped(Store.open(directory, {}, Projection.count));
        expect(reopened.state).toBe(0);
      } else {
        outcomes.interrupted += 1;
        expect(again).toMatchObject({ left: { _tag: "IncompleteInitialization" } });
      }
    }).pipe(Effect.provide(FaultDisk.layer(disk)));

  it.effect("leaves nothing, an interrupted init, or a complete store at every cut point", () =>
    Effect.gen(function* () {
      // The three modes of every crash suite: its two before 2026-12-04 and a sector tear.
      const report = yield* exploreCrashModes(workload, check, {
        setup: (disk) => Effect.sync(() => disk.seedDirectory(directory)),
        samplesPerCutPoint: 3,
      });
      expect(report.cutPoints).toBeGreaterThan(10);
      expect(report.crashes).toBeGreaterThan(report.cutPoints);
      // Each of the three outcomes reached: the check's every branch ran.
      expect(outcomes.opened).toBeGreaterThan(0);
      expect(outcomes.absent).toBeGreaterThan(0);
      expect(outcomes.interrupted).toBeGreaterThan(0);
    }),
  );
});
