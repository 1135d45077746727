/**
 * The golden fixture stores: complete Store-v2 directories, valid ones and
 * one of each refusal, written deterministically (fixed STORE_ID 00 01 ...
 * 0f, fixed times, hand-written histories) through `Stores.writeStore` and
 * the damage helpers.
 *
 * The committed copies under `packages/testkit/test/fixtures/stores/` are
 * the compatibility anchors: every later version must open the valid ones
 * to the same state and refuse the others with the same error. `writeAll`
 * regenerates them (`pnpm --filter @tay/testkit fixtures`), with a
 * `SHA256SUMS` of every file and a `DIRECTORIES` list of every directory
 * (git keeps no empty directory, so `copy` recreates them from it).
 *
 * @example
 * // A private copy of a committed fixture, then open it (open writes LOCK).
 * yield* Fixtures.copy("packages/testkit/test/fixtures/stores", "all-pairs", "/tmp/t/all-pairs");
 * const engine = yield* Engine.open("/tmp/t/all-pairs", { rescueOnOpen: false });
 */
import { createHash } from "node:crypto";
import * as Path from "node:path";
import { Disk, Layout } from "@tay/shell-node";
import * as Effect from "effect/Effect";
import {
  allPairs,
  compacted,
  fixtureEpochMs,
  multiSegment,
  small,
} from "./internal/fixtureHistories.js";
import { createFile, exists, syncParent } from "./internal/storesFiles.js";
import * as Stores from "./Stores.js";

/** The name of every fixture store, one directory each. */
export type FixtureName =
  | "empty"
  | "all-pairs"
  | "compacted"
  | "multi-segment"
  | "refused-torn-tail"
  | "refused-bit-flip"
  | "refused-segment-gap"
  | "refused-foreign-segment"
  | "refused-unexpected-entry"
  | "refused-store-v1";

/** A fixture: its name, what it is, and how to write it. */
export interface Fixture {
  readonly name: FixtureName;
  readonly description: string;
  readonly write: (
    directory: string,
  ) => Effect.Effect<void, Stores.WriteStoreError | Disk.DiskError, Disk.Disk>;
}

/** The STORE_ID of every fixture: FORMAT.md's test bytes 00 01 ... 0f. */
export const storeId: Uint8Array = Stores.testStoreId;

/** The creation time of every fixture (2023-11-14T22:13:20Z, ms). */
export const createdAt = fixtureEpochMs;

/** The STORE_ID the foreign segment of `refused-foreign-segment` carries: f0 f1 ... ff. */
export const foreignStoreId: Uint8Array = Uint8Array.from(
  { length: 16 },
  (_, index) => 0xf0 + index,
);

/** `SHA256SUMS`: one `sha256  path` line per file, paths relative to the fixtures root. */
export const sumsFileName = "SHA256SUMS";

/** `DIRECTORIES`: one line per directory (empty ones included), relative to the fixtures root. */
export const directoriesFileName = "DIRECTORIES";

const common = { storeId, createdAt } as const;

/** The small store every refusal starts from: segments of 3 (sealed), 3 (sealed), 2 (active) records. */
const writeSmall = (directory: string) =>
  Stores.writeStore(directory, { ...common, events: small, recordsPerSegment: 3 });

const segmentAt = (written: Stores.WrittenStore, index: number) =>
  Effect.suspend(() => {
    const segment = written.segments[index];
    return segment === undefined
      ? Effect.dieMessage(`fixture store has no segment ${index + 1}`)
      : Effect.succeed(segment);
  });

/** Every fixture, valid ones first. */
export const fixtures: ReadonlyArray<Fixture> = [
  {
    name: "empty",
    description: "just initialized: marker, pointer, epoch 1 manifest, an empty segments/",
    write: (directory) => Effect.asVoid(Stores.writeStore(directory, common)),
  },
  {
    name: "all-pairs",
    description:
      "epoch 2 with a canonical base and a tail holding every one of the 15 pairs, legacy (7,2), (8,2), (12,2) included",
    write: (directory) =>
      Effect.asVoid(
        Stores.writeStore(directory, {
          ...common,
          epoch: 2,
          firstSequence: 101,
          base: allPairs.base,
          events: allPairs.tail,
          sealBase: true,
          recordsPerSegment: 4,
        }),
      ),
  },
  {
    name: "compacted",
    description:
      "epoch 3 after compactions: three snapshot parts, two results, two checkpoints in sealed segments, a tail in the active one",
    write: (directory) =>
      Effect.asVoid(
        Stores.writeStore(directory, {
          ...common,
          epoch: 3,
          firstSequence: 5001,
          base: compacted.base,
          events: compacted.tail,
          sealBase: true,
          bytesPerSegment: 700,
        }),
      ),
  },
  {
    name: "multi-segment",
    description:
      "epoch 1, 40 records over several sealed segments of about 600 bytes and an active one",
    write: (directory) =>
      Effect.asVoid(
        Stores.writeStore(directory, { ...common, events: multiSegment, bytesPerSegment: 600 }),
      ),
  },
  {
    name: "refused-torn-tail",
    description: "the active segment's last record lost its last 5 bytes: IncompleteTail",
    write: (directory) =>
      Effect.gen(function* () {
        const active = yield* segmentAt(yield* writeSmall(directory), 2);
        yield* Stores.truncateTail(active.path, 5);
      }),
  },
  {
    name: "refused-bit-flip",
    description: "one bit flipped in the payload of record 2 (a sealed segment): CorruptRecord",
    write: (directory) =>
      Effect.gen(function* () {
        const first = yield* segmentAt(yield* writeSmall(directory), 0);
        const second = first.records[1];
        if (second === undefined) return yield* Effect.dieMessage("no record 2");
        yield* Stores.flipBit(first.path, second.offset + 40, 5);
      }),
  },
  {
    name: "refused-segment-gap",
    description: "segment 2 of 3 removed: SegmentGap",
    write: (directory) =>
      Effect.gen(function* () {
        const middle = yield* segmentAt(yield* writeSmall(directory), 1);
        yield* Stores.removeFile(middle.path);
      }),
  },
  {
    name: "refused-foreign-segment",
    description: "segment 2 carries another store's STORE_ID (valid header CRC): Mismatch StoreId",
    write: (directory) =>
      Effect.gen(function* () {
        const middle = yield* segmentAt(yield* writeSmall(directory), 1);
        yield* Stores.relabelSegment(middle.path, foreignStoreId);
      }),
  },
  {
    name: "refused-unexpected-entry",
    description: "a notes.txt in segments/: UnexpectedEntry",
    write: (directory) =>
      Effect.gen(function* () {
        yield* writeSmall(directory);
        yield* Stores.addFile(
          Path.join(Layout.segmentsPath(directory, 1), "notes.txt"),
          new TextEncoder().encode("left here by an operator\n"),
        );
      }),
  },
  {
    name: "refused-store-v1",
    description: "a Store-v1 root (STORE and an empty segments/): UnsupportedStoreV1",
    write: (directory) =>
      Effect.gen(function* () {
        yield* Stores.writeStoreV1Root(
          directory,
          "STORE",
          new TextEncoder().encode("tay store v1\n"),
        );
        yield* Stores.writeStoreV1Root(directory, "segments");
      }),
  },
];

/** Every fixture name, in catalogue order. */
export const names: ReadonlyArray<FixtureName> = fixtures.map((fixture) => fixture.name);

/** Writes fixture `name` into `directory` (created if missing; it must be empty). */
export const write = (
  name: FixtureName,
  directory: string,
): Effect.Effect<void, Stores.WriteStoreError | Disk.DiskError, Disk.Disk> => {
  const fixture = fixtures.find((candidate) => candidate.name === name);
  return fixture === undefined ? Effect.dieMessage(`no fixture ${name}`) : fixture.write(directory);
};

/** The files and directories under a root, relative to it, sorted; directories end with `/`. */
export interface Tree {
  readonly files: ReadonlyArray<string>;
  readonly directories: ReadonlyArray<string>;
}

/** How many entries `tree` visits at most (a runaway guard: fixture trees have a few dozen). */
export const treeEntriesMax = 10_000;

/** Lists everything under `root` (depth first, names sorted). */
export const tree = (root: string): Effect.Effect<Tree, Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk.Disk;
    const files: Array<string> = [];
    const directories: Array<string> = [];
    const pending: Array<string> = [""];
    while (pending.length > 0) {
      const relative = pending.pop() ?? "";
      for (const name of yield* disk.readDirectory(Path.join(root, relative))) {
        const child = relative === "" ? name : `${relative}/${name}`;
        const stat = yield* disk.stat(Path.join(root, child));
        if (stat.type === "directory") {
          directories.push(`${child}/`);
          pending.push(child);
        } else {
          files.push(child);
        }
        if (files.length + directories.length > treeEntriesMax) {
          return yield* Effect.dieMessage(`more than ${treeEntriesMax} entries under ${root}`);
        }
      }
    }
    return { files: files.sort(), directories: directories.sort() };
  });

/** SHA-256 of `bytes` as lowercase hex. */
export const sha256 = (bytes: Uint8Array): string =>
  createHash("sha256").update(bytes).digest("hex");

const lines = (items: ReadonlyArray<string>): Uint8Array =>
  new TextEncoder().encode(items.map((item) => `${item}\n`).join(""));

/**
 * Writes every fixture under `root/NAME` (root created if missing; it must
 * be empty), then `root/SHA256SUMS` (`sha256sum -c` reads it) and
 * `root/DIRECTORIES`. Returns the tree of the fixtures, those two files
 * excluded. Deterministic: the same bytes every run.
 */
export const writeAll = (
  root: string,
): Effect.Effect<Tree, Stores.WriteStoreError | Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk.Disk;
    if (!(yield* exists(root))) {
      yield* disk.makeDirectory(root);
      yield* syncParent(root);
    }
    for (const fixture of fixtures) yield* fixture.write(Path.join(root, fixture.name));
    const listed = yield* tree(root);
    const sums: Array<string> = [];
    for (const file of listed.files) {
      sums.push(`${sha256(yield* disk.readFile(Path.join(root, file)))}  ${file}`);
    }
    yield* createFile(Path.join(root, sumsFileName), lines(sums));
    yield* createFile(Path.join(root, directoriesFileName), lines(listed.directories));
    yield* disk.syncDirectory(root);
    return listed;
  });

const listedLines = (bytes: Uint8Array): ReadonlyArray<string> =>
  new TextDecoder()
    .decode(bytes)
    .split("\n")
    .filter((line) => line.length > 0);

/**
 * Copies fixture `name` from a fixtures root (the committed one, or one
 * `writeAll` made) to `target` (created; its parent must exist): every
 * directory `DIRECTORIES` lists under it, empty ones included, and every
 * file `SHA256SUMS` lists, each checked against its sum (a mismatch dies:
 * the fixture is damaged). Open the copy, never the fixture itself: open
 * writes LOCK and may create a segment.
 */
export const copy = (
  root: string,
  name: FixtureName,
  target: string,
): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk.Disk;
    const prefix = `${name}/`;
    const directories = listedLines(yield* disk.readFile(Path.join(root, directoriesFileName)));
    const sums = listedLines(yield* disk.readFile(Path.join(root, sumsFileName)));
    yield* disk.makeDirectory(target);
    // Sorted paths list every parent before its children.
    const below = directories.filter((entry) => entry.startsWith(prefix) && entry !== prefix);
    for (const directory of below) {
      yield* disk.makeDirectory(Path.join(target, directory.slice(prefix.length)));
    }
    for (const line of sums) {
      const separator = line.indexOf("  ");
      const file = line.slice(separator + 2);
      if (separator !== 64 || !file.startsWith(prefix)) continue;
      const bytes = yield* disk.readFile(Path.join(root, file));
      if (sha256(bytes) !== line.slice(0, separator)) {
        return yield* Effect.dieMessage(`${file} does not match ${sumsFileName}`);
      }
      yield* createFile(Path.join(target, file.slice(prefix.length)), bytes);
    }
  });
