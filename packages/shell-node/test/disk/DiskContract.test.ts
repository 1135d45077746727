// Proves that NodeDisk and FaultDisk honour the same Disk contract: open modes, positional I/O,
// truncation, rename, hard links, directories, remove, stat, sync and locks, with the same error
// codes. The same suite runs
// against each (NodeDisk in a fresh directory under os.tmpdir()), and a differential property runs
// random operation sequences on both and requires identical outcomes and identical trees.
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { Disk, NodeDisk } from "@tay/shell-node";
import { Effect, Either, type Scope } from "effect";
import * as fc from "fast-check";
import * as FaultDisk from "../../src/disk/FaultDisk.js";

/** A disk under test and an empty directory on it to work in. */
interface Subject {
  readonly disk: Disk.DiskService;
  readonly root: string;
}

const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tay-disk-contract-"))),
  (directory) => Effect.promise(() => fs.rm(directory, { recursive: true, force: true })),
);

const subjects: ReadonlyArray<{
  readonly name: string;
  readonly acquire: Effect.Effect<Subject, never, Scope.Scope>;
}> = [
  {
    name: "NodeDisk",
    acquire: Effect.map(temporaryDirectory, (root) => ({ disk: NodeDisk.make, root })),
  },
  {
    name: "FaultDisk",
    acquire: Effect.sync(() => {
      const disk = FaultDisk.make();
      disk.seedDirectory("/work/contract");
      return { disk, root: "/work/contract" };
    }),
  },
];

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (data: Uint8Array): string => new TextDecoder().decode(data);

/** The code a failing disk operation reports (`LockHeld` for a refused lock). */
const codeOf = <A>(effect: Effect.Effect<A, Disk.DiskError | Disk.LockHeld>) =>
  Effect.map(Effect.flip(effect), (error) => (error._tag === "LockHeld" ? error._tag : error.code));

const writeFile = (disk: Disk.DiskService, file: string, contents: string) =>
  Effect.gen(function* () {
    const handle = yield* disk.open(file, "createExclusive");
    const written = yield* handle.write(0, bytes(contents));
    expect(written).toBe(bytes(contents).length);
    yield* handle.sync();
    yield* handle.close();
  });

for (const subject of subjects) {
  describe(`Disk contract: ${subject.name}`, () => {
    const within = (
      test: (disk: Disk.DiskService, at: (name: string) => string) => Effect.Effect<void, unknown>,
    ) =>
      Effect.gen(function* () {
        const { disk, root } = yield* subject.acquire;
        yield* test(disk, (name) => path.join(root, name));
      });

    it.scoped("open: a missing file is ENOENT, in read and readWrite modes", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          expect(yield* codeOf(disk.open(at("missing"), "read"))).toBe("ENOENT");
          expect(yield* codeOf(disk.open(at("missing"), "readWrite"))).toBe("ENOENT");
          expect(yield* codeOf(disk.open(at("no/such/file"), "createExclusive"))).toBe("ENOENT");
        }),
      ),
    );

    it.scoped("open with dataSync: the handle says so, writes land, read handles never do", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("log"), "head;");
          const plain = yield* disk.open(at("log"), "readWrite");
          expect(plain.dataSync).toBe(false);
          yield* plain.close();
          const synced = yield* disk.open(at("log"), "readWrite", { dataSync: true });
          expect(synced.dataSync).toBe(true);
          expect(yield* synced.write(5, bytes("tail"))).toBe(4);
          expect(text(yield* synced.read(0, 64))).toBe("head;tail");
          yield* synced.close();
          const reader = yield* disk.open(at("log"), "read", { dataSync: true });
          expect(reader.dataSync).toBe(false);
          yield* reader.close();
        }),
      ),
    );

    it.scoped("open: createExclusive makes an empty file and refuses an existing one", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          const handle = yield* disk.open(at("new"), "createExclusive");
          expect(yield* handle.size()).toBe(0);
          yield* handle.close();
          expect(yield* disk.stat(at("new"))).toEqual({ type: "file", size: 0 });
          expect(yield* codeOf(disk.open(at("new"), "createExclusive"))).toBe("EEXIST");
          yield* disk.makeDirectory(at("directory"));
          expect(yield* codeOf(disk.open(at("directory"), "createExclusive"))).toBe("EEXIST");
        }),
      ),
    );

    it.scoped(
      "create: a new file holding the bytes, open for more; EEXIST and ENOENT refused",
      () =>
        within((disk, at) =>
          Effect.gen(function* () {
            const handle = yield* disk.create(at("segment"), bytes("header"));
            expect(yield* handle.size()).toBe(6);
            expect(yield* handle.write(6, bytes("+tail"))).toBe(5);
            expect(text(yield* handle.read(0, 64))).toBe("header+tail");
            yield* handle.close();
            expect(text(yield* disk.readFile(at("segment")))).toBe("header+tail");
            expect(yield* codeOf(disk.create(at("segment"), bytes("again")))).toBe("EEXIST");
            expect(text(yield* disk.readFile(at("segment")))).toBe("header+tail");
            expect(yield* codeOf(disk.create(at("no/such/file"), bytes("x")))).toBe("ENOENT");
          }),
        ),
    );

    it.scoped("open: a directory is not a file (EISDIR)", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* disk.makeDirectory(at("directory"));
          expect(yield* codeOf(disk.open(at("directory"), "read"))).toBe("EISDIR");
          expect(yield* codeOf(disk.open(at("directory"), "readWrite"))).toBe("EISDIR");
        }),
      ),
    );

    it.scoped("positional writes and reads; a read past the end returns fewer bytes", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          const handle = yield* disk.open(at("file"), "createExclusive");
          expect(yield* handle.write(0, bytes("hello"))).toBe(5);
          expect(yield* handle.write(8, bytes("world"))).toBe(5);
          expect(yield* handle.write(1, bytes("E"))).toBe(1);
          expect(yield* handle.size()).toBe(13);
          expect(text(yield* handle.read(0, 13))).toBe("hEllo\0\0\0world");
          expect(text(yield* handle.read(8, 100))).toBe("world");
          expect((yield* handle.read(13, 4)).length).toBe(0);
          expect((yield* handle.read(1000, 4)).length).toBe(0);
          expect((yield* handle.read(0, 0)).length).toBe(0);
          yield* handle.sync();
          yield* handle.close();
          const again = yield* disk.open(at("file"), "readWrite");
          expect(yield* again.write(5, bytes("!!!"))).toBe(3);
          yield* again.close();
          expect(text(yield* disk.readFile(at("file")))).toBe("hEllo!!!world");
        }),
      ),
    );

    it.scoped("a read-only handle refuses writes; a closed handle refuses everything", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("file"), "abc");
          const reader = yield* disk.open(at("file"), "read");
          expect(text(yield* reader.read(0, 3))).toBe("abc");
          expect(yield* codeOf(reader.write(0, bytes("x")))).toBe("Other");
          yield* reader.close();
          yield* reader.close();
          expect(yield* codeOf(reader.read(0, 3))).toBe("Other");
          expect(yield* codeOf(reader.size())).toBe("Other");
          expect(yield* codeOf(reader.sync())).toBe("Other");
        }),
      ),
    );

    it.scoped("a negative position is a programmer error (a defect)", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          const handle = yield* disk.open(at("file"), "createExclusive");
          const exit = yield* Effect.exit(handle.write(-1, bytes("x")));
          expect(exit._tag === "Failure" && exit.cause._tag === "Die").toBe(true);
          yield* handle.close();
        }),
      ),
    );

    it.scoped("readFile reads a whole file; ENOENT when missing, EISDIR on a directory", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("file"), "contents");
          expect(text(yield* disk.readFile(at("file")))).toBe("contents");
          expect(yield* codeOf(disk.readFile(at("missing")))).toBe("ENOENT");
          yield* disk.makeDirectory(at("directory"));
          expect(yield* codeOf(disk.readFile(at("directory")))).toBe("EISDIR");
        }),
      ),
    );

    it.scoped("rename replaces the target and removes the source name", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("source"), "new");
          yield* writeFile(disk, at("target"), "old contents");
          yield* disk.rename(at("source"), at("target"));
          expect(text(yield* disk.readFile(at("target")))).toBe("new");
          expect(yield* codeOf(disk.stat(at("source")))).toBe("ENOENT");
          expect(yield* disk.readDirectory(at(""))).toEqual(["target"]);
          expect(yield* codeOf(disk.rename(at("source"), at("other")))).toBe("ENOENT");
          expect(yield* codeOf(disk.rename(at("target"), at("missing/target")))).toBe("ENOENT");
          yield* disk.makeDirectory(at("directory"));
          expect(yield* codeOf(disk.rename(at("target"), at("directory")))).toBe("EISDIR");
          yield* disk.rename(at("target"), at("target"));
          expect(text(yield* disk.readFile(at("target")))).toBe("new");
        }),
      ),
    );

    // What an import's publication relies on (tay copy URL DIR, store/CopyStaging.ts).
    it.scoped(
      "a directory renamed onto an empty directory replaces it; onto a non-empty one, ENOTEMPTY",
      () =>
        within((disk, at) =>
          Effect.gen(function* () {
            yield* disk.makeDirectory(at("staged"));
            yield* writeFile(disk, at("staged/STORE-V2"), "marker");
            yield* disk.makeDirectory(at("empty"));
            yield* disk.rename(at("staged"), at("empty"));
            expect(yield* disk.readDirectory(at(""))).toEqual(["empty"]);
            expect(text(yield* disk.readFile(at("empty/STORE-V2")))).toBe("marker");
            yield* disk.makeDirectory(at("other"));
            expect(yield* codeOf(disk.rename(at("other"), at("empty")))).toBe("ENOTEMPTY");
            expect(text(yield* disk.readFile(at("empty/STORE-V2")))).toBe("marker");
            yield* writeFile(disk, at("file"), "contents");
            expect(yield* codeOf(disk.rename(at("other"), at("file")))).toBe("ENOTDIR");
            yield* disk.rename(at("other"), at("missing"));
            expect(yield* disk.readDirectory(at(""))).toEqual(["empty", "file", "missing"]);
          }),
        ),
    );

    it.scoped("link gives a file a second name: both names see the same bytes", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("staged"), "header");
          yield* disk.makeDirectory(at("segments"));
          yield* disk.link(at("staged"), at("segments/1"));
          expect(text(yield* disk.readFile(at("segments/1")))).toBe("header");
          // A write through one name is read through the other: one file, two names.
          const handle = yield* disk.open(at("segments/1"), "readWrite");
          expect(yield* handle.write(6, bytes("+records"))).toBe(8);
          yield* handle.close();
          expect(text(yield* disk.readFile(at("staged")))).toBe("header+records");
          // Removing one name leaves the file under the other.
          yield* disk.remove(at("staged"));
          expect(text(yield* disk.readFile(at("segments/1")))).toBe("header+records");
          expect(yield* disk.readDirectory(at(""))).toEqual(["segments"]);
          expect(yield* disk.stat(at("segments/1"))).toEqual({ type: "file", size: 14 });
        }),
      ),
    );

    // rename(2): "if oldpath and newpath are existing hard links referring to
    // the same file, then rename() does nothing": both names stay.
    it.scoped("rename between two names of one file does nothing", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("staged"), "header");
          yield* disk.link(at("staged"), at("linked"));
          yield* disk.rename(at("staged"), at("linked"));
          expect(yield* disk.readDirectory(at(""))).toEqual(["linked", "staged"]);
          expect(text(yield* disk.readFile(at("staged")))).toBe("header");
        }),
      ),
    );

    it.scoped(
      "link refuses an existing name (EEXIST), a missing source or parent, a directory",
      () =>
        within((disk, at) =>
          Effect.gen(function* () {
            yield* writeFile(disk, at("source"), "new");
            yield* writeFile(disk, at("taken"), "old");
            expect(yield* codeOf(disk.link(at("source"), at("taken")))).toBe("EEXIST");
            // The existing name keeps its own file.
            expect(text(yield* disk.readFile(at("taken")))).toBe("old");
            expect(yield* codeOf(disk.link(at("source"), at("source")))).toBe("EEXIST");
            expect(yield* codeOf(disk.link(at("missing"), at("other")))).toBe("ENOENT");
            expect(yield* codeOf(disk.link(at("source"), at("no/such/name")))).toBe("ENOENT");
            yield* disk.makeDirectory(at("directory"));
            expect(yield* codeOf(disk.link(at("directory"), at("alias")))).toBe("EPERM");
            expect(yield* disk.readDirectory(at(""))).toEqual(["directory", "source", "taken"]);
          }),
        ),
    );

    it.scoped("truncate shrinks or zero-extends a file; a read-only or closed handle refuses", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("file"), "acknowledged+torn");
          const handle = yield* disk.open(at("file"), "readWrite", { dataSync: true });
          yield* handle.truncate(12);
          expect(yield* handle.size()).toBe(12);
          expect(text(yield* handle.read(0, 64))).toBe("acknowledged");
          yield* handle.truncate(14);
          expect(text(yield* handle.read(0, 64))).toBe("acknowledged\0\0");
          yield* handle.truncate(12);
          yield* handle.sync();
          yield* handle.close();
          expect(text(yield* disk.readFile(at("file")))).toBe("acknowledged");
          expect(yield* codeOf(handle.truncate(0))).toBe("Other");
          const reader = yield* disk.open(at("file"), "read");
          expect(yield* codeOf(reader.truncate(0))).toBe("Other");
          yield* reader.close();
          expect(text(yield* disk.readFile(at("file")))).toBe("acknowledged");
          const exit = yield* Effect.exit(
            Effect.flatMap(disk.open(at("file"), "readWrite"), (writer) => writer.truncate(-1)),
          );
          expect(exit._tag === "Failure" && exit.cause._tag === "Die").toBe(true);
        }),
      ),
    );

    // A write past the end leaves a hole that reads as zeros, even where the
    // file held other bytes before a truncation (the model keeps its buffer).
    it.scoped("a write past the end after a truncation reads zeros in the gap", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("file"), "abcdefgh");
          const handle = yield* disk.open(at("file"), "readWrite");
          yield* handle.truncate(2);
          expect(yield* handle.write(6, bytes("Z"))).toBe(1);
          expect(text(yield* handle.read(0, 64))).toBe("ab\0\0\0\0Z");
          yield* handle.close();
        }),
      ),
    );

    it.scoped("readDirectory lists entry names sorted by code unit", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          for (const name of ["b", "a", "B", "é", "10", "9", "a.tmp"]) {
            yield* writeFile(disk, at(name), name);
          }
          yield* disk.makeDirectory(at("sub"));
          expect(yield* disk.readDirectory(at(""))).toEqual([
            "10",
            "9",
            "B",
            "a",
            "a.tmp",
            "b",
            "sub",
            "é",
          ]);
          expect(yield* disk.readDirectory(at("sub"))).toEqual([]);
          expect(yield* codeOf(disk.readDirectory(at("a")))).toBe("ENOTDIR");
          expect(yield* codeOf(disk.readDirectory(at("missing")))).toBe("ENOENT");
        }),
      ),
    );

    it.scoped("remove deletes a file, or a directory tree only when recursive", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("file"), "x");
          yield* disk.remove(at("file"));
          expect(yield* codeOf(disk.stat(at("file")))).toBe("ENOENT");
          expect(yield* codeOf(disk.remove(at("file")))).toBe("ENOENT");
          yield* disk.makeDirectory(at("tree"));
          yield* disk.makeDirectory(at("tree/inner"));
          yield* writeFile(disk, at("tree/inner/leaf"), "leaf");
          expect(yield* codeOf(disk.remove(at("tree")))).toBe("EISDIR");
          yield* disk.remove(at("tree"), { recursive: true });
          expect(yield* disk.readDirectory(at(""))).toEqual([]);
          expect(yield* codeOf(disk.remove(at("tree"), { recursive: true }))).toBe("ENOENT");
        }),
      ),
    );

    it.scoped("stat gives the type and the size of a file", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* writeFile(disk, at("file"), "12345");
          expect(yield* disk.stat(at("file"))).toEqual({ type: "file", size: 5 });
          yield* disk.makeDirectory(at("directory"));
          expect((yield* disk.stat(at("directory"))).type).toBe("directory");
          expect(yield* codeOf(disk.stat(at("missing")))).toBe("ENOENT");
          expect(yield* codeOf(disk.stat(at("file/below")))).toBe("ENOTDIR");
        }),
      ),
    );

    it.scoped("makeDirectory creates one level: EEXIST if present, ENOENT without a parent", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* disk.makeDirectory(at("directory"));
          expect(yield* codeOf(disk.makeDirectory(at("directory")))).toBe("EEXIST");
          expect(yield* codeOf(disk.makeDirectory(at("missing/child")))).toBe("ENOENT");
          yield* writeFile(disk, at("file"), "x");
          expect(yield* codeOf(disk.makeDirectory(at("file")))).toBe("EEXIST");
          expect(yield* codeOf(disk.makeDirectory(at("file/child")))).toBe("ENOTDIR");
        }),
      ),
    );

    it.scoped("syncDirectory syncs a directory; ENOENT when missing, ENOTDIR on a file", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          yield* disk.makeDirectory(at("directory"));
          yield* disk.syncDirectory(at("directory"));
          yield* disk.syncDirectory(at(""));
          expect(yield* codeOf(disk.syncDirectory(at("missing")))).toBe("ENOENT");
          yield* writeFile(disk, at("file"), "x");
          expect(yield* codeOf(disk.syncDirectory(at("file")))).toBe("ENOTDIR");
        }),
      ),
    );

    it.scoped("lock: exclusive until released; describe rewrites the contents in place", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          const first = yield* disk.lock(at("LOCK"));
          expect(yield* disk.stat(at("LOCK"))).toEqual({ type: "file", size: 0 });
          const refused = yield* Effect.flip(disk.lock(at("LOCK")));
          expect(refused).toEqual(new Disk.LockHeld({ path: at("LOCK") }));
          yield* first.describe(bytes("pid 1, a long description"));
          expect(text(yield* disk.readFile(at("LOCK")))).toBe("pid 1, a long description");
          yield* first.describe(bytes("pid 2"));
          expect(text(yield* disk.readFile(at("LOCK")))).toBe("pid 2");
          yield* first.release();
          yield* first.release();
          expect(yield* codeOf(first.describe(bytes("late")))).toBe("Other");
          const second = yield* disk.lock(at("LOCK"));
          // Taking the lock never truncates: the contents are the last holder's description.
          expect(text(yield* disk.readFile(at("LOCK")))).toBe("pid 2");
          yield* second.release();
        }),
      ),
    );

    it.scoped("lock: ENOENT without a parent directory, EISDIR on a directory", () =>
      within((disk, at) =>
        Effect.gen(function* () {
          expect(yield* codeOf(disk.lock(at("missing/LOCK")))).toBe("ENOENT");
          yield* disk.makeDirectory(at("directory"));
          expect(yield* codeOf(disk.lock(at("directory")))).toBe("EISDIR");
        }),
      ),
    );
  });
}

/** One step of the differential property. */
type Step =
  | { readonly _tag: "create"; readonly name: string }
  | {
      readonly _tag: "write";
      readonly name: string;
      readonly position: number;
      readonly data: Uint8Array;
    }
  | { readonly _tag: "rename"; readonly source: string; readonly target: string }
  | { readonly _tag: "link"; readonly source: string; readonly target: string }
  | { readonly _tag: "truncate"; readonly name: string; readonly size: number }
  | { readonly _tag: "remove"; readonly name: string; readonly recursive: boolean }
  | { readonly _tag: "makeDirectory"; readonly name: string }
  | { readonly _tag: "readDirectory"; readonly name: string };

const names = fc.constantFrom("a", "b", "d", "d/a", "d/b", "d/e", "d/e/a", "e");

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ _tag: fc.constant("create" as const), name: names }),
  fc.record({
    _tag: fc.constant("write" as const),
    name: names,
    position: fc.nat({ max: 40 }),
    data: fc.uint8Array({ maxLength: 12 }),
  }),
  fc.record({ _tag: fc.constant("rename" as const), source: names, target: names }),
  fc.record({ _tag: fc.constant("link" as const), source: names, target: names }),
  fc.record({ _tag: fc.constant("truncate" as const), name: names, size: fc.nat({ max: 40 }) }),
  fc.record({ _tag: fc.constant("remove" as const), name: names, recursive: fc.boolean() }),
  fc.record({ _tag: fc.constant("makeDirectory" as const), name: names }),
  fc.record({ _tag: fc.constant("readDirectory" as const), name: names }),
);

/** Runs one step and reduces its result to a comparable string. */
const perform = (disk: Disk.DiskService, root: string, current: Step) => {
  const at = (name: string) => path.join(root, name);
  const outcome = (effect: Effect.Effect<unknown, Disk.DiskError>) =>
    Effect.map(Effect.either(effect), (result) =>
      Either.isLeft(result) ? result.left.code : JSON.stringify(result.right),
    );
  switch (current._tag) {
    case "create":
      return outcome(
        Effect.flatMap(disk.open(at(current.name), "createExclusive"), (handle) => handle.close()),
      );
    case "write":
      return outcome(
        Effect.acquireUseRelease(
          disk.open(at(current.name), "readWrite"),
          (handle) => handle.write(current.position, current.data),
          (handle) => Effect.orDie(handle.close()),
        ),
      );
    case "rename":
      return outcome(disk.rename(at(current.source), at(current.target)));
    case "link":
      return outcome(disk.link(at(current.source), at(current.target)));
    case "truncate":
      return outcome(
        Effect.acquireUseRelease(
          disk.open(at(current.name), "readWrite"),
          (handle) => handle.truncate(current.size),
          (handle) => Effect.orDie(handle.close()),
        ),
      );
    case "remove":
      return outcome(disk.remove(at(current.name), { recursive: current.recursive }));
    case "makeDirectory":
      return outcome(disk.makeDirectory(at(current.name)));
    case "readDirectory":
      return outcome(disk.readDirectory(at(current.name)));
    default: {
      const unreachable: never = current;
      return unreachable;
    }
  }
};

/** Every path under `root` with its contents (files) or `/` (directories), read through the service. */
const treeOf = (
  disk: Disk.DiskService,
  root: string,
): Effect.Effect<ReadonlyArray<string>, Disk.DiskError> =>
  Effect.gen(function* () {
    const found: Array<string> = [];
    const pending = [""];
    for (let relative = pending.pop(); relative !== undefined; relative = pending.pop()) {
      for (const name of yield* disk.readDirectory(path.join(root, relative))) {
        const child = relative === "" ? name : `${relative}/${name}`;
        const info = yield* disk.stat(path.join(root, child));
        if (info.type === "directory") {
          found.push(`${child}/`);
          pending.push(child);
        } else {
          found.push(
            `${child}=${Buffer.from(yield* disk.readFile(path.join(root, child))).toString("hex")}`,
          );
        }
      }
    }
    return found.sort();
  });

describe("Disk contract: NodeDisk and FaultDisk agree on random operation sequences", () => {
  it.scoped("same outcome for every step, same tree at the end", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      let run = 0;
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
            run += 1;
            const nodeRoot = path.join(directory, `run-${run}`);
            await fs.mkdir(nodeRoot);
            const faultDisk = FaultDisk.make();
            faultDisk.seedDirectory("/root");
            const program = Effect.gen(function* () {
              for (const current of steps) {
                const onNode = yield* perform(NodeDisk.make, nodeRoot, current);
                const onFault = yield* perform(faultDisk, "/root", current);
                const shown = JSON.stringify({ ...current, data: undefined });
                expect(`${onFault} <- ${shown}`).toBe(`${onNode} <- ${shown}`);
              }
              expect(yield* treeOf(faultDisk, "/root")).toEqual(
                yield* treeOf(NodeDisk.make, nodeRoot),
              );
            });
            await Effect.runPromise(program);
          }),
          { numRuns: 100 },
        ),
      );
    }),
  );
});
