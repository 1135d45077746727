// Proves FaultDisk's crash model and faults: what survives a crash (synced data, synced entries,
// hard links, truncations, torn prefixes of unsynced writes), fsyncgate, Nth-operation faults, a full disk, short writes,
// power cuts and the operation log. Each test drives the service, crashes or faults it, and compares
// the surviving files with what the model in docs/disk.md says must be there.
import { describe, expect, it } from "@effect/vitest";
import { Disk } from "@tay/shell-node";
import { Effect } from "effect";
import * as fc from "fast-check";
import * as FaultDisk from "../../src/disk/FaultDisk.js";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (data: Uint8Array | undefined): string | undefined =>
  data === undefined ? undefined : new TextDecoder().decode(data);

/** A disk with a durable `/data` directory. */
const dataDisk = (options: FaultDisk.Options = {}): FaultDisk.FaultDisk => {
  const disk = FaultDisk.make(options);
  disk.seedDirectory("/data");
  return disk;
};

const codeOf = <A>(effect: Effect.Effect<A, Disk.DiskError>) =>
  Effect.map(Effect.flip(effect), (error) => error.code);

/** Writes `contents` to a new file, syncs it, closes it: the directory is NOT synced. */
const createSynced = (disk: Disk.DiskService, path: string, contents: string) =>
  Effect.gen(function* () {
    const handle = yield* disk.open(path, "createExclusive");
    yield* handle.write(0, bytes(contents));
    yield* handle.sync();
    yield* handle.close();
  });

describe("FaultDisk crash model: directory entries", () => {
  it.effect("an unsynced rename is undone by a crash", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/CURRENT", bytes("old"));
      disk.seedFile("/data/CURRENT.tmp", bytes("new"));
      yield* disk.rename("/data/CURRENT.tmp", "/data/CURRENT");
      expect(text(disk.snapshotFiles().get("/data/CURRENT"))).toBe("new");
      const survivor = disk.crash();
      expect(text(survivor.snapshotFiles().get("/data/CURRENT"))).toBe("old");
      expect(text(survivor.snapshotFiles().get("/data/CURRENT.tmp"))).toBe("new");
    }),
  );

  it.effect("a rename followed by syncDirectory survives", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/CURRENT", bytes("old"));
      disk.seedFile("/data/CURRENT.tmp", bytes("new"));
      yield* disk.rename("/data/CURRENT.tmp", "/data/CURRENT");
      yield* disk.syncDirectory("/data");
      const survivor = disk.crash();
      expect(survivor.listing()).toEqual(["/data/", "/data/CURRENT"]);
      expect(text(survivor.snapshotFiles().get("/data/CURRENT"))).toBe("new");
    }),
  );

  // A sync makes the entries of that moment durable, not the directory's later ones:
  // a model whose sync shared the live entries would keep every later rename.
  it.effect("a rename after a syncDirectory is undone by a crash until the next sync", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/CURRENT", bytes("old"));
      disk.seedFile("/data/CURRENT.tmp", bytes("new"));
      yield* disk.syncDirectory("/data");
      yield* disk.rename("/data/CURRENT.tmp", "/data/CURRENT");
      const survivor = disk.crash();
      expect(survivor.listing()).toEqual(["/data/", "/data/CURRENT", "/data/CURRENT.tmp"]);
      expect(text(survivor.snapshotFiles().get("/data/CURRENT"))).toBe("old");
    }),
  );

  it.effect("a file created, written and fsynced is lost without a directory fsync", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      yield* createSynced(disk, "/data/segment", "records");
      expect(disk.durableFiles().has("/data/segment")).toBe(false);
      expect(disk.crash().listing()).toEqual(["/data/"]);
      const again = dataDisk();
      yield* createSynced(again, "/data/segment", "records");
      yield* again.syncDirectory("/data");
      expect(text(again.crash().snapshotFiles().get("/data/segment"))).toBe("records");
    }),
  );

  it.effect("a directory entry made durable before the data leaves an empty file", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      const handle = yield* disk.open("/data/file", "createExclusive");
      yield* disk.syncDirectory("/data");
      yield* handle.write(0, bytes("unsynced"));
      expect(text(disk.crash().snapshotFiles().get("/data/file"))).toBe("");
    }),
  );

  it.effect("a new directory needs its parent synced; a synced child in it is lost otherwise", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      yield* disk.makeDirectory("/data/epochs");
      yield* createSynced(disk, "/data/epochs/MANIFEST", "manifest");
      yield* disk.syncDirectory("/data/epochs");
      expect(disk.crash().listing()).toEqual(["/data/"]);
      const complete = dataDisk();
      yield* complete.makeDirectory("/data/epochs");
      yield* createSynced(complete, "/data/epochs/MANIFEST", "manifest");
      yield* complete.syncDirectory("/data/epochs");
      yield* complete.syncDirectory("/data");
      expect(complete.crash().listing()).toEqual([
        "/data/",
        "/data/epochs/",
        "/data/epochs/MANIFEST",
      ]);
    }),
  );

  it.effect("an unsynced remove (file or recursive) comes back after a crash", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/old/segment", bytes("kept"));
      disk.seedFile("/data/file", bytes("file"));
      yield* disk.remove("/data/old", { recursive: true });
      yield* disk.remove("/data/file");
      expect(disk.listing()).toEqual(["/data/"]);
      expect(disk.crash().listing()).toEqual([
        "/data/",
        "/data/file",
        "/data/old/",
        "/data/old/segment",
      ]);
    }),
  );

  it.effect(
    "unsyncedEntries 'prefix' may keep an unsynced rename whose file data was never synced",
    () =>
      Effect.gen(function* () {
        // The classic bug: write a temporary file, rename it over the target, never fsync the data.
        const disk = dataDisk();
        disk.seedFile("/data/CURRENT", bytes("old"));
        const handle = yield* disk.open("/data/CURRENT.tmp", "createExclusive");
        yield* handle.write(0, bytes("new"));
        yield* disk.rename("/data/CURRENT.tmp", "/data/CURRENT");
        const outcomes = new Set<string | undefined>();
        for (let seed = 0; seed < 40; seed += 1) {
          const survivor = disk.crash({ unsyncedEntries: "prefix", seed });
          outcomes.add(text(survivor.snapshotFiles().get("/data/CURRENT")));
        }
        // Lost (old), or the rename persisted without the data (empty): never "new".
        expect([...outcomes].sort()).toEqual(["", "old"]);
      }),
  );

  // A rename within one directory is one change: kept or dropped whole, never
  // the removal of the old name without the new one (the file would be lost).
  it.effect("with unsynced entries kept as a prefix, a rename in one directory is atomic", () =>
    Effect.gen(function* () {
      const outcomes = new Set<string>();
      for (let seed = 0; seed < 32; seed++) {
        const disk = dataDisk();
        disk.seedFile("/data/CURRENT.tmp", bytes("new"));
        yield* disk.rename("/data/CURRENT.tmp", "/data/CURRENT");
        const survivor = disk.crash({ unsyncedEntries: "prefix", seed });
        outcomes.add(survivor.listing().join(" "));
      }
      expect([...outcomes].sort()).toEqual(["/data/ /data/CURRENT", "/data/ /data/CURRENT.tmp"]);
    }),
  );
});

describe("FaultDisk crash model: hard links", () => {
  it.effect(
    "a link is a new entry naming the same inode, volatile until its directory is synced",
    () =>
      Effect.gen(function* () {
        const disk = dataDisk();
        disk.seedDirectory("/data/segments");
        yield* createSynced(disk, "/data/SEGMENT.tmp", "header");
        yield* disk.syncDirectory("/data");
        yield* disk.link("/data/SEGMENT.tmp", "/data/segments/1");
        expect(disk.operations().at(-1)).toMatchObject({
          kind: "link",
          path: "/data/SEGMENT.tmp",
          target: "/data/segments/1",
          outcome: "ok",
        });
        expect(disk.operations().at(-1)?.cutPoint).toBeDefined();
        // Unsynced: a crash drops the new name; the staged one stays.
        expect(disk.crash().listing()).toEqual(["/data/", "/data/SEGMENT.tmp", "/data/segments/"]);
      }),
  );

  it.effect("a synced link survives holding the file's durable bytes, under both names", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedDirectory("/data/segments");
      yield* createSynced(disk, "/data/SEGMENT.tmp", "header");
      yield* disk.syncDirectory("/data");
      yield* disk.link("/data/SEGMENT.tmp", "/data/segments/1");
      yield* disk.syncDirectory("/data/segments");
      const handle = yield* disk.open("/data/segments/1", "readWrite");
      yield* handle.write(6, bytes("+unsynced"));
      const survivor = disk.crash();
      expect(text(survivor.snapshotFiles().get("/data/segments/1"))).toBe("header");
      expect(text(survivor.snapshotFiles().get("/data/SEGMENT.tmp"))).toBe("header");
      // Still one inode after the crash: a write through one name shows through the other.
      const again = yield* survivor.open("/data/segments/1", "readWrite");
      yield* again.write(6, bytes("+after"));
      expect(text(survivor.snapshotFiles().get("/data/SEGMENT.tmp"))).toBe("header+after");
    }),
  );

  it.effect("with unsynced entries kept as a prefix, a crash keeps or drops the link", () =>
    Effect.gen(function* () {
      const kept = new Set<string>();
      for (let seed = 0; seed < 32; seed++) {
        const disk = dataDisk();
        disk.seedFile("/data/SEGMENT.tmp", bytes("header"));
        disk.seedDirectory("/data/segments");
        yield* disk.link("/data/SEGMENT.tmp", "/data/segments/1");
        const survivor = disk.crash({ unsyncedEntries: "prefix", seed });
        const linked = survivor.snapshotFiles().get("/data/segments/1");
        kept.add(linked === undefined ? "dropped" : `kept ${text(linked)}`);
      }
      expect([...kept].sort()).toEqual(["dropped", "kept header"]);
    }),
  );
});

describe("FaultDisk crash model: truncation", () => {
  it.effect("a truncation is volatile until sync, like a write", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      yield* createSynced(disk, "/data/log", "acknowledged+rejected");
      yield* disk.syncDirectory("/data");
      const handle = yield* disk.open("/data/log", "readWrite", { dataSync: true });
      yield* handle.truncate(12);
      expect(text(disk.snapshotFiles().get("/data/log"))).toBe("acknowledged");
      // O_DSYNC covers writes only: the truncation still needs a sync.
      expect(text(disk.crash().snapshotFiles().get("/data/log"))).toBe("acknowledged+rejected");
      const synced = dataDisk();
      yield* createSynced(synced, "/data/log", "acknowledged+rejected");
      yield* synced.syncDirectory("/data");
      const again = yield* synced.open("/data/log", "readWrite");
      yield* again.truncate(12);
      yield* again.sync();
      expect(text(synced.crash().snapshotFiles().get("/data/log"))).toBe("acknowledged");
    }),
  );

  it.effect("a torn crash keeps the writes before a truncation, or the truncation too", () =>
    Effect.gen(function* () {
      const outcomes = new Set<string>();
      for (let seed = 0; seed < 64; seed++) {
        const disk = dataDisk();
        disk.seedFile("/data/log", bytes("acknowledged"));
        const handle = yield* disk.open("/data/log", "readWrite");
        yield* handle.write(12, bytes("+rejected"));
        yield* handle.truncate(12);
        outcomes.add(
          text(disk.crash({ tear: "anywhere", seed }).snapshotFiles().get("/data/log")) ?? "",
        );
      }
      // A prefix of the changes: nothing, part or all of the write, or the write then the truncation.
      expect(outcomes.has("acknowledged")).toBe(true);
      expect(outcomes.has("acknowledged+rejected")).toBe(true);
      for (const outcome of outcomes)
        expect("acknowledged+rejected".startsWith(outcome)).toBe(true);
    }),
  );

  it.effect("a truncate fault fails it and changes nothing", () =>
    Effect.gen(function* () {
      const disk = dataDisk({ faults: [FaultDisk.fail("truncate", "EIO")] });
      disk.seedFile("/data/log", bytes("acknowledged+rejected"));
      const handle = yield* disk.open("/data/log", "readWrite");
      expect(yield* codeOf(handle.truncate(12))).toBe("EIO");
      expect(text(disk.snapshotFiles().get("/data/log"))).toBe("acknowledged+rejected");
    }),
  );
});

describe("FaultDisk crash model: file data and tearing", () => {
  it.effect("data written but not fsynced is gone after a crash without tearing", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/log", bytes("durable;"));
      const handle = yield* disk.open("/data/log", "readWrite");
      yield* handle.write(8, bytes("volatile"));
      expect(text(disk.snapshotFiles().get("/data/log"))).toBe("durable;volatile");
      expect(text(disk.durableFiles().get("/data/log"))).toBe("durable;");
      expect(text(disk.crash({ tear: "none" }).snapshotFiles().get("/data/log"))).toBe("durable;");
      // The crash cut the power of the old disk: its handles are dead.
      expect(FaultDisk.isPowerCut(yield* Effect.flip(handle.sync()))).toBe(true);
    }),
  );

  it.effect("sync makes the data and the size durable", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/log", bytes("12345678"));
      const handle = yield* disk.open("/data/log", "readWrite");
      yield* handle.write(8, bytes("9"));
      yield* handle.sync();
      yield* handle.write(9, bytes("unsynced"));
      expect(text(disk.crash().snapshotFiles().get("/data/log"))).toBe("123456789");
    }),
  );

  it.effect("a dataSync write is durable when it returns: a write and a sync in the log", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/log", bytes("durable;"));
      const handle = yield* disk.open("/data/log", "readWrite", { dataSync: true });
      const before = disk.operations().length;
      yield* handle.write(8, bytes("acked"));
      expect(
        disk
          .operations()
          .slice(before)
          .map((operation) => operation.kind),
      ).toEqual(["write", "sync"]);
      expect(text(disk.crash({ tear: "none" }).snapshotFiles().get("/data/log"))).toBe(
        "durable;acked",
      );
    }),
  );

  it.effect("a sync fault strikes a dataSync write, which then fails", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/log", bytes("durable;"));
      const handle = yield* disk.open("/data/log", "readWrite", { dataSync: true });
      disk.inject(FaultDisk.fail("sync", "EIO", { path: /log$/ }));
      expect(yield* codeOf(handle.write(8, bytes("lost")))).toBe("EIO");
      expect(text(disk.crash({ tear: "none" }).snapshotFiles().get("/data/log"))).toBe("durable;");
    }),
  );

  /** Every state a crash may legally leave after `writes` on top of `initial` (prefix model). */
  const legalOutcomes = (
    initial: Uint8Array,
    writes: ReadonlyArray<{ readonly position: number; readonly data: Uint8Array }>,
  ): ReadonlySet<string> => {
    const apply = (base: Uint8Array, position: number, data: Uint8Array): Uint8Array => {
      if (data.length === 0) return base;
      const out = new Uint8Array(Math.max(base.length, position + data.length));
      out.set(base);
      out.set(data, position);
      return out;
    };
    const legal = new Set<string>();
    let state = initial;
    for (const write of writes) {
      for (let cut = 0; cut <= write.data.length; cut += 1) {
        legal.add(
          Buffer.from(apply(state, write.position, write.data.subarray(0, cut))).toString("hex"),
        );
      }
      state = apply(state, write.position, write.data);
    }
    legal.add(Buffer.from(state).toString("hex"));
    return legal;
  };

  it("tear 'anywhere': every crash keeps a prefix of the unsynced writes, the last maybe partial", async () => {
    const writesArbitrary = fc.array(
      fc.record({
        position: fc.nat({ max: 24 }),
        data: fc.uint8Array({ minLength: 1, maxLength: 8 }),
      }),
      { minLength: 1, maxLength: 5 },
    );
    await fc.assert(
      fc.asyncProperty(writesArbitrary, fc.nat(), async (writes, seed) => {
        const disk = dataDisk();
        disk.seedFile("/data/file", bytes("initial"));
        await Effect.runPromise(
          Effect.gen(function* () {
            const handle = yield* disk.open("/data/file", "readWrite");
            for (const write of writes) yield* handle.write(write.position, write.data);
          }),
        );
        const survived = disk.crash({ tear: "anywhere", seed }).snapshotFiles().get("/data/file");
        expect(survived).toBeDefined();
        const legal = legalOutcomes(bytes("initial"), writes);
        expect(legal.has(Buffer.from(survived ?? new Uint8Array()).toString("hex"))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it.effect(
    "tear 'anywhere' does tear: over seeds it keeps nothing, whole writes and partial ones",
    () =>
      Effect.gen(function* () {
        const disk = dataDisk();
        disk.seedFile("/data/file", new Uint8Array());
        const handle = yield* disk.open("/data/file", "readWrite");
        yield* handle.write(0, bytes("abcdefgh"));
        const lengths = new Set<number>();
        for (let seed = 0; seed < 200; seed += 1) {
          const survived = disk.crash({ tear: "anywhere", seed }).snapshotFiles().get("/data/file");
          const length = survived?.length ?? -1;
          expect(text(survived)).toBe("abcdefgh".slice(0, length));
          lengths.add(length);
        }
        expect([...lengths].sort((left, right) => left - right)).toEqual([
          0, 1, 2, 3, 4, 5, 6, 7, 8,
        ]);
      }),
  );

  // The writer reuses its buffer once a write returns: what a torn crash
  // keeps must be the bytes as written, not the buffer's later contents.
  it.effect("a torn crash keeps the bytes a write was given, not its buffer's later contents", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/file", new Uint8Array());
      const handle = yield* disk.open("/data/file", "readWrite");
      const buffer = bytes("abcdefgh");
      yield* handle.write(0, buffer);
      buffer.fill(0x58);
      const lengths = new Set<number>();
      for (let seed = 0; seed < 64; seed += 1) {
        const survived = disk.crash({ tear: "anywhere", seed }).snapshotFiles().get("/data/file");
        const length = survived?.length ?? -1;
        expect(text(survived)).toBe("abcdefgh".slice(0, length));
        lengths.add(length);
      }
      expect(lengths.has(8)).toBe(true);
    }),
  );

  it.effect("tear 'sector': a partial write keeps whole 512-byte sectors of the file only", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/file", new Uint8Array(100).fill(1));
      const handle = yield* disk.open("/data/file", "readWrite");
      yield* handle.write(100, new Uint8Array(2000).fill(2));
      const sizes = new Set<number>();
      for (let seed = 0; seed < 200; seed += 1) {
        const survived = disk.crash({ tear: "sector", seed }).snapshotFiles().get("/data/file");
        sizes.add(survived?.length ?? -1);
      }
      // Nothing kept, cut at the sector boundaries 512, 1024, 1536, 2048, or the whole write.
      expect([...sizes].sort((left, right) => left - right)).toEqual([
        100, 512, 1024, 1536, 2048, 2100,
      ]);
    }),
  );

  it.effect("the same crash options give the same disk; the crashed disk is powered off", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      const handle = yield* disk.open("/data/file", "createExclusive");
      yield* handle.write(0, new Uint8Array(4096).fill(7));
      yield* disk.syncDirectory("/data");
      const first = disk.crash({ tear: "anywhere", seed: 42 }).snapshotFiles();
      const second = disk.crash({ tear: "anywhere", seed: 42 }).snapshotFiles();
      expect(second).toEqual(first);
      expect(disk.poweredOff()).toBe(true);
      const error = yield* Effect.flip(handle.read(0, 1));
      expect(FaultDisk.isPowerCut(error)).toBe(true);
    }),
  );

  it.effect("describe is ftruncate then pwrite: a torn crash may keep the truncation only", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/LOCK", bytes("previous holder"));
      const lock = yield* disk.lock("/data/LOCK");
      yield* lock.describe(bytes("pid 7"));
      const outcomes = new Set<string | undefined>();
      for (let seed = 0; seed < 100; seed += 1) {
        outcomes.add(
          text(disk.crash({ tear: "anywhere", seed }).snapshotFiles().get("/data/LOCK")),
        );
      }
      expect(outcomes.has("previous holder")).toBe(true);
      expect(outcomes.has("")).toBe(true);
      expect(outcomes.has("pid 7")).toBe(true);
    }),
  );
});

describe("FaultDisk faults", () => {
  it.effect("fsyncgate: a failed sync drops the dirty pages and a retried sync then succeeds", () =>
    Effect.gen(function* () {
      const disk = dataDisk({ faults: [FaultDisk.loseDirtyPages({ nth: 1 })] });
      disk.seedFile("/data/log", bytes("old"));
      const handle = yield* disk.open("/data/log", "readWrite");
      yield* handle.write(0, bytes("new"));
      const failed = yield* Effect.flip(handle.sync());
      expect(failed.code).toBe("EIO");
      expect(failed.operation).toBe("sync");
      // The page cache no longer has the write: reads and the retry see the old contents.
      expect(text(yield* handle.read(0, 3))).toBe("old");
      yield* handle.sync();
      expect(text(disk.crash({ tear: "anywhere", seed: 1 }).snapshotFiles().get("/data/log"))).toBe(
        "old",
      );
    }),
  );

  it.effect("fail the Nth write with EIO; the others succeed", () =>
    Effect.gen(function* () {
      const disk = dataDisk({ faults: [FaultDisk.fail("write", "EIO", { nth: 2 })] });
      const handle = yield* disk.open("/data/file", "createExclusive");
      yield* handle.write(0, bytes("a"));
      expect(yield* codeOf(handle.write(1, bytes("b")))).toBe("EIO");
      yield* handle.write(1, bytes("c"));
      expect(text(yield* handle.read(0, 10))).toBe("ac");
      expect(disk.operations().map((entry) => [entry.kind, entry.outcome])).toEqual([
        ["open", "ok"],
        ["write", "ok"],
        ["write", "EIO"],
        ["write", "ok"],
        ["read", "ok"],
      ]);
    }),
  );

  it.effect(
    "fail every operation matching a path: renames of *.tmp with EACCES, opens with ENOSPC",
    () =>
      Effect.gen(function* () {
        const disk = dataDisk();
        disk.seedFile("/data/a.tmp", bytes("a"));
        disk.seedFile("/data/b", bytes("b"));
        disk.inject(FaultDisk.fail("rename", "EACCES", { path: /\.tmp$/ }));
        disk.inject(FaultDisk.fail("open", "ENOSPC", { path: (path) => path.endsWith("/new") }));
        expect(yield* codeOf(disk.rename("/data/a.tmp", "/data/a"))).toBe("EACCES");
        expect(yield* codeOf(disk.rename("/data/b", "/data/b.tmp"))).toBe("EACCES");
        yield* disk.rename("/data/b", "/data/c");
        expect(yield* codeOf(disk.open("/data/new", "createExclusive"))).toBe("ENOSPC");
        expect(disk.listing()).toEqual(["/data/", "/data/a.tmp", "/data/c"]);
        disk.clearFaults();
        yield* disk.rename("/data/a.tmp", "/data/a");
        const failedSync = FaultDisk.fail("syncDirectory", "EIO", { path: "/data" });
        disk.inject(failedSync);
        expect(yield* codeOf(disk.syncDirectory("/data"))).toBe("EIO");
        expect(disk.durableFiles().has("/data/a")).toBe(false);
      }),
  );

  it.effect(
    "a full disk: writes are short when some space is left, then ENOSPC; freed space is reused",
    () =>
      Effect.gen(function* () {
        const disk = dataDisk({ capacityBytes: 100 });
        const first = yield* disk.open("/data/first", "createExclusive");
        expect(yield* first.write(0, new Uint8Array(80))).toBe(80);
        const second = yield* disk.open("/data/second", "createExclusive");
        expect(yield* second.write(0, new Uint8Array(40))).toBe(20);
        expect(yield* codeOf(second.write(20, new Uint8Array(1)))).toBe("ENOSPC");
        // Overwriting existing bytes needs no space.
        expect(yield* first.write(10, new Uint8Array(70).fill(9))).toBe(70);
        yield* first.close();
        yield* disk.remove("/data/first");
        expect(yield* second.write(20, new Uint8Array(50))).toBe(50);
      }),
  );

  it.effect("short writes return fewer bytes than asked and store only those", () =>
    Effect.gen(function* () {
      const disk = dataDisk({ faults: [FaultDisk.shortWrite(3, { path: "/data/file" })] });
      const handle = yield* disk.open("/data/file", "createExclusive");
      expect(yield* handle.write(0, bytes("abcdefgh"))).toBe(3);
      expect(yield* handle.write(3, bytes("defgh"))).toBe(3);
      expect(text(yield* handle.read(0, 100))).toBe("abcdef");
      expect(() => disk.inject(FaultDisk.shortWrite(0))).toThrow(RangeError);
    }),
  );

  it.effect(
    "faults combine and count their own kind: the shortest short write wins; a truncate is no write",
    () =>
      Effect.gen(function* () {
        const disk = dataDisk({
          faults: [
            FaultDisk.shortWrite(2),
            FaultDisk.shortWrite(5),
            FaultDisk.shortWrite(1, { nth: 3 }),
          ],
        });
        const handle = yield* disk.open("/data/file", "createExclusive");
        expect(yield* handle.write(0, bytes("abcdefgh"))).toBe(2);
        yield* handle.truncate(2);
        expect(yield* handle.write(2, bytes("cdefgh"))).toBe(2);
        // The third write, not the third write-or-truncate, is the nth.
        expect(yield* handle.write(4, bytes("efgh"))).toBe(1);
        expect(text(yield* handle.read(0, 100))).toBe("abcde");
      }),
  );

  it.effect("a fault's path is normalized as the operations' paths are", () =>
    Effect.gen(function* () {
      const disk = dataDisk({
        faults: [FaultDisk.fail("write", "EIO", { path: "/data//./file" })],
      });
      const handle = yield* disk.open("/data/file", "createExclusive");
      expect(yield* codeOf(handle.write(0, bytes("a")))).toBe("EIO");
    }),
  );

  it.effect(
    "space: an unlinked file still open keeps its bytes; a zero-byte write fits a full disk",
    () =>
      Effect.gen(function* () {
        const disk = dataDisk({ capacityBytes: 10 });
        const held = yield* disk.open("/data/held", "createExclusive");
        expect(yield* held.write(0, new Uint8Array(8))).toBe(8);
        yield* disk.remove("/data/held");
        const other = yield* disk.open("/data/other", "createExclusive");
        expect(yield* other.write(0, new Uint8Array(5))).toBe(2);
        expect(yield* other.write(2, new Uint8Array(0))).toBe(0);
        yield* held.close();
        expect(yield* other.write(2, new Uint8Array(5))).toBe(5);
      }),
  );

  it.effect("a file may grow to fileBytesMax exactly; one byte more is refused", () =>
    Effect.gen(function* () {
      const disk = dataDisk({ fileBytesMax: 16 });
      const handle = yield* disk.open("/data/file", "createExclusive");
      expect(yield* handle.write(0, new Uint8Array(16))).toBe(16);
      expect(yield* codeOf(handle.write(16, new Uint8Array(1)))).toBe("Other");
      expect(yield* codeOf(handle.truncate(17))).toBe("Other");
      yield* handle.truncate(16);
    }),
  );

  it.effect(
    "cutAt: the Nth mutating operation and everything after fail with the power-cut error",
    () =>
      Effect.gen(function* () {
        const disk = dataDisk({ cutAt: 2 });
        const handle = yield* disk.open("/data/file", "createExclusive");
        yield* handle.write(0, bytes("a"));
        const cut = yield* Effect.flip(handle.sync());
        expect(cut).toEqual(
          new Disk.DiskError({
            operation: "sync",
            path: "/data/file",
            code: "EIO",
            detail: FaultDisk.powerCutDetail,
          }),
        );
        expect(FaultDisk.isPowerCut(cut)).toBe(true);
        expect(FaultDisk.isPowerCut(yield* Effect.flip(disk.readDirectory("/data")))).toBe(true);
        yield* handle.close();
        expect(disk.poweredOff()).toBe(true);
        expect(disk.mutations()).toBe(3);
      }),
  );

  it.effect("the operation log records every operation, with cut points on mutating ones", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      disk.seedFile("/data/existing", bytes("x"));
      const handle = yield* disk.open("/data/new", "createExclusive");
      yield* handle.write(0, bytes("hello"));
      yield* handle.sync();
      yield* handle.read(0, 2);
      yield* handle.close();
      const reader = yield* disk.open("/data/existing", "read");
      yield* reader.close();
      yield* disk.rename("/data/new", "/data/renamed");
      yield* disk.syncDirectory("/data");
      yield* disk.stat("/data/missing").pipe(Effect.ignore);
      const lock = yield* disk.lock("/data/LOCK");
      yield* lock.describe(bytes("me"));
      yield* lock.release();
      yield* disk.makeDirectory("/data/sub");
      yield* disk.remove("/data/sub", { recursive: true });
      expect(disk.operations()).toEqual([
        {
          index: 0,
          kind: "open",
          path: "/data/new",
          mode: "createExclusive",
          cutPoint: 0,
          outcome: "ok",
          powerCut: false,
        },
        {
          index: 1,
          kind: "write",
          path: "/data/new",
          position: 0,
          length: 5,
          cutPoint: 1,
          outcome: "ok",
          powerCut: false,
          bytes: 5,
        },
        { index: 2, kind: "sync", path: "/data/new", cutPoint: 2, outcome: "ok", powerCut: false },
        {
          index: 3,
          kind: "read",
          path: "/data/new",
          position: 0,
          length: 2,
          outcome: "ok",
          powerCut: false,
          bytes: 2,
        },
        { index: 4, kind: "close", path: "/data/new", outcome: "ok", powerCut: false },
        {
          index: 5,
          kind: "open",
          path: "/data/existing",
          mode: "read",
          outcome: "ok",
          powerCut: false,
        },
        { index: 6, kind: "close", path: "/data/existing", outcome: "ok", powerCut: false },
        {
          index: 7,
          kind: "rename",
          path: "/data/new",
          target: "/data/renamed",
          cutPoint: 3,
          outcome: "ok",
          powerCut: false,
        },
        {
          index: 8,
          kind: "syncDirectory",
          path: "/data",
          cutPoint: 4,
          outcome: "ok",
          powerCut: false,
        },
        { index: 9, kind: "stat", path: "/data/missing", outcome: "ENOENT", powerCut: false },
        { index: 10, kind: "lock", path: "/data/LOCK", outcome: "ok", powerCut: false },
        {
          index: 11,
          kind: "describe",
          path: "/data/LOCK",
          length: 2,
          cutPoint: 5,
          outcome: "ok",
          powerCut: false,
        },
        { index: 12, kind: "release", path: "/data/LOCK", outcome: "ok", powerCut: false },
        {
          index: 13,
          kind: "makeDirectory",
          path: "/data/sub",
          cutPoint: 6,
          outcome: "ok",
          powerCut: false,
        },
        {
          index: 14,
          kind: "remove",
          path: "/data/sub",
          cutPoint: 7,
          outcome: "ok",
          powerCut: false,
        },
      ]);
      expect(disk.mutations()).toBe(8);
    }),
  );

  it.effect("the log keeps its newest entries when it reaches its limit", () =>
    Effect.gen(function* () {
      const disk = dataDisk({ operationLogEntriesMax: 10 });
      for (let count = 0; count < 25; count += 1) yield* disk.stat("/data");
      const indexes = disk.operations().map((entry) => entry.index);
      expect(indexes.length).toBeLessThanOrEqual(10);
      expect(indexes[indexes.length - 1]).toBe(24);
    }),
  );
});

describe("FaultDisk locks and helpers", () => {
  it.effect("locks are per disk and a crash releases them", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      yield* disk.lock("/data/LOCK");
      const refused = yield* Effect.flip(disk.lock("/data/LOCK"));
      expect(refused._tag).toBe("LockHeld");
      yield* disk.syncDirectory("/data");
      const survivor = disk.crash();
      const again = yield* survivor.lock("/data/LOCK");
      yield* again.release();
    }),
  );

  it.effect(
    "a release or close that fails still frees the lock and the handle, as close(2) does",
    () =>
      Effect.gen(function* () {
        const disk = dataDisk({
          faults: [FaultDisk.fail("release", "EIO"), FaultDisk.fail("close", "EIO")],
        });
        const held = yield* disk.lock("/data/LOCK");
        expect(yield* codeOf(held.release())).toBe("EIO");
        const handle = yield* disk.open("/data/file", "createExclusive");
        expect(yield* codeOf(handle.close())).toBe("EIO");
        expect(yield* codeOf(handle.write(0, bytes("x")))).toBe("Other");
        // The lock is free again: a reopen in the same process takes it.
        disk.clearFaults();
        const again = yield* disk.lock("/data/LOCK");
        yield* again.release();
      }),
  );

  it.effect("the layer provides the disk as the Disk service", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      const names = yield* Effect.flatMap(Disk.Disk, (service) => service.readDirectory("/")).pipe(
        Effect.provide(FaultDisk.layer(disk)),
      );
      expect(names).toEqual(["data"]);
    }),
  );

  it.effect("settle makes everything durable; seeding refuses a file in the way", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      const handle = yield* disk.open("/data/file", "createExclusive");
      yield* handle.write(0, bytes("settled"));
      yield* disk.makeDirectory("/data/sub");
      disk.settle();
      expect(disk.crash().listing()).toEqual(["/data/", "/data/file", "/data/sub/"]);
      expect(text(disk.crash().snapshotFiles().get("/data/file"))).toBe("settled");
      expect(() => disk.seedDirectory("/data/file/below")).toThrow();
      expect(() => disk.seedFile("/data/sub", bytes("x"))).toThrow();
    }),
  );

  it.effect("relative paths are taken from the root", () =>
    Effect.gen(function* () {
      const disk = dataDisk();
      yield* createSynced(disk, "data/relative", "r");
      expect(disk.listing()).toEqual(["/data/", "/data/relative"]);
    }),
  );
});
