/**
 * The disk-backed terminal inspection index (issue 19; docs/store.md, "The
 * terminal inspection index"): the whole records of the completed jobs a
 * lean state keeps only as facts, in `DATA_DIR/terminal-index/`, beside the
 * store and never inside `epochs/`.
 *
 * A disposable projection, never a source of truth: no decision, no
 * activation and no fold reads it. Its HEAD names the store, the epoch and
 * the last log sequence it reflects; an index that is missing, of another
 * store or epoch, at another sequence, or whose bytes fail a check is
 * `Stale`, and `open` empties it so that the caller rebuilds it from the
 * log (a collecting lean fold's `Generation.takeLeft`) and reports why.
 * Deleting the directory loses nothing.
 *
 * Writes append entries and are not synced one by one: HEAD is removed
 * before the first append after an open and published again (entries
 * synced first) by `publish`, so an index that a crash interrupted has no
 * HEAD and is rebuilt; unless HEAD names a state image (2026-12-04): it
 * then stays, vouching for the entries it names at its sequence, and an
 * open that resumes from the image catches the index up from there
 * (`stagedAfter`, `openCaughtUp`), the entries past it being written again.
 */
import * as Path from "node:path";
import type { Generation, Job } from "@tay/core";
import * as Cause from "effect/Cause";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import * as Exit from "effect/Exit";
import * as Option from "effect/Option";
import * as Described from "../disk/Described.js";
import { Disk, DiskError, type FileHandle } from "../disk/Disk.js";
import * as Files from "../disk/Files.js";
import { nextLoopTurn } from "./internal/afterPoll.js";
import { appendBytes, crc32c, type RecordBuffer, recordBuffer } from "./internal/codec.js";
import { OffsetTable } from "./internal/offsetTable.js";
import { type DecodedImage, decodeImage, type ImageStream } from "./internal/stateImageFormat.js";

export {
  type DecodedImage,
  decodeImage,
  encodeImage,
  type ImageIdentity,
  type ImageStream,
  imageStream,
} from "./internal/stateImageFormat.js";
import {
  decodeEntry,
  decodeFrame,
  decodeFrameChecked,
  decodeHead,
  type Frame,
  appendEntries,
  encodeHead,
  type Head,
  type OffsetsFile,
  type Placed,
} from "./internal/terminalIndexFormat.js";

export type { Head, Placed } from "./internal/terminalIndexFormat.js";
export { appendEntries } from "./internal/terminalIndexFormat.js";

/** Where entries are encoded before a write (`appendEntries`, `writeEncoded`): a reused buffer. */
export type EntryBuffer = RecordBuffer;

/** An empty entry buffer. */
export const entryBuffer = (): EntryBuffer => recordBuffer();

/** The entry at `offset` of `bytes` (entries encoded in memory, as `appendEntries` lays them). */
export const entryAt = (bytes: Uint8Array, offset: number) => decodeEntry(bytes, offset);

/** `DATA_DIR/terminal-index`. */
export const directoryName = "terminal-index";
/** What the index reflects, `terminal-index/HEAD`. */
export const headName = "HEAD";
/** The entries, `terminal-index/entries`. */
export const entriesName = "entries";
/**
 * The name of a file HEAD names by its length and CRC, written before HEAD:
 * `KIND-EPOCH-SEQUENCE-CRC` (HEAD's epoch and sequence, the file's CRC-32C
 * in 8 hex digits). Since 2026-12-05 each such file has its own name, so
 * that a new one never replaces the one a published HEAD names: a crash
 * between the new file's rename and its HEAD's leaves the old HEAD and its
 * files whole (docs/store.md, "A file per image"). The kinds:
 */
const namedFile = (kind: string, identity: Identity, file: OffsetsFile): string =>
  `${kind}-${identity.epoch}-${identity.lastSequence}-${file.crc.toString(16).padStart(8, "0")}`;

/** Where each job's entries are (2026-12-02): `offsets-EPOCH-SEQUENCE-CRC`, `offsets` until 2026-12-05. */
export const offsetsFileName = (identity: Identity, offsets: OffsetsFile): string =>
  namedFile("offsets", identity, offsets);

/** The state image (2026-12-04): `image-EPOCH-SEQUENCE-CRC`, `image` until 2026-12-05. */
export const imageFileName = (identity: Identity, image: OffsetsFile): string =>
  namedFile("image", identity, image);

/** Where an image is written before it is renamed to its name (`imageFileName`). */
export const imageTemporaryName = "image.tmp";

/** Whether a name in the index directory is a state image's (`imageFileName`). */
export const isImageFile = (name: string): boolean => isNamedFile("image", name);

/** Whether a name in the index directory is an offsets file's (`offsetsFileName`). */
export const isOffsetsFile = (name: string): boolean => isNamedFile("offsets", name);

const isNamedFile = (kind: string, name: string): boolean =>
  ofKind(kind, name) && !name.endsWith(".tmp");

/** A file of `kind` or its temporary file (`KIND-….tmp`). */
const ofKind = (kind: string, name: string): boolean => name.startsWith(`${kind}-`);

/** The one offsets file and image of a build before 2026-12-05, removed by the first publish of this one. */
const olderNames: ReadonlyArray<string> = ["offsets", "image"];

/** Bytes read at a time while scanning the entries. */
export const scanChunkBytes = 4 * 1024 * 1024;

/** `DATA_DIR/terminal-index`. */
export const indexPath = (directory: string): string => Path.join(directory, directoryName);

/** Which store, generation and log position an index reflects. */
export interface Identity {
  /** The printed STORE_ID (`Log.View.storeId`). */
  readonly storeId: string;
  readonly epoch: number;
  readonly lastSequence: number;
}

/** Why an index found at open is not used (it is emptied, to be rebuilt). */
export type Staleness =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Unreadable"; readonly reason: string }
  | { readonly _tag: "OtherStore"; readonly found: string }
  | { readonly _tag: "OtherEpoch"; readonly found: number }
  | { readonly _tag: "OtherSequence"; readonly found: number }
  | { readonly _tag: "Corrupt"; readonly offset: number; readonly reason: string };

/** The one line a report gives for a stale index. */
export const describeStaleness = (staleness: Staleness): string => {
  switch (staleness._tag) {
    case "Missing":
      return "no HEAD (new, deleted, or not closed cleanly)";
    case "Unreadable":
      return `HEAD unreadable: ${staleness.reason}`;
    case "OtherStore":
      return `HEAD names store ${staleness.found}`;
    case "OtherEpoch":
      return `HEAD names epoch ${staleness.found}`;
    case "OtherSequence":
      return `HEAD reflects sequence ${staleness.found}`;
    case "Corrupt":
      return `entry at offset ${staleness.offset}: ${staleness.reason}`;
  }
};

/** An entry that fails its checks after the index was opened (the file changed underneath). */
export class TerminalIndexCorrupt extends Data.TaggedError("TerminalIndexCorrupt")<{
  readonly path: string;
  readonly offset: number;
  readonly reason: string;
}> {
  get description(): Described.Description {
    return Described.describe("TerminalIndexCorrupt", this.path, this.reason, {
      offset: this.offset,
    });
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** What the index failed with: the disk, or bytes that no longer check. */
export type TerminalIndexError = DiskError | TerminalIndexCorrupt;

/** An open index: its entries file and where each job's entries are. */
export interface TerminalIndex {
  readonly path: string;
  /** The entries file, open for reading and appending. */
  readonly handle: FileHandle;
  readonly offsets: OffsetTable;
  /** Bytes of entries written. */
  end: number;
  /** Whether HEAD still vouches for the entries (false from the first append on). */
  headed: boolean;
  /**
   * Whether HEAD stays when entries are appended: it names a state image,
   * and vouches for the entries up to its length at its sequence, which an
   * open resuming from the image catches up from (`openCaughtUp`).
   */
  keepsHead: boolean;
  /**
   * Where `addAll` lays entries out, kept between calls (`Record.RecordBuffer`:
   * a fresh buffer per batch cost more in first-touch page faults than the
   * framing); taken while a call uses it, so a concurrent one makes its own.
   */
  spare?: RecordBuffer | undefined;
}

/** What `open` found: the index (empty when stale) and why it was stale. */
export interface Opened {
  readonly index: TerminalIndex;
  /** Undefined when the index is current for the identity given. */
  readonly stale: Staleness | undefined;
}

const entriesPath = (index: { readonly path: string }) => Path.join(index.path, entriesName);
const headPath = (index: { readonly path: string }) => Path.join(index.path, headName);

const readHead = (path: string): Effect.Effect<Head | Staleness, DiskError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const bytes = yield* Effect.either(disk.readFile(path));
    if (bytes._tag === "Left") {
      if (bytes.left.code === "ENOENT") return { _tag: "Missing" } as const;
      return yield* bytes.left;
    }
    const head = decodeHead(bytes.right);
    return typeof head === "string" ? { _tag: "Unreadable", reason: head } : head;
  });

const staleness = (head: Head, identity: Identity): Staleness | undefined => {
  if (head.storeId !== identity.storeId) return { _tag: "OtherStore", found: head.storeId };
  if (head.epoch !== identity.epoch) return { _tag: "OtherEpoch", found: head.epoch };
  if (head.lastSequence !== identity.lastSequence) {
    return { _tag: "OtherSequence", found: head.lastSequence };
  }
  return undefined;
};

/**
 * Reads the entries from `from` to `to`, handing each to `visit` with its
 * offset; the first bytes that are not an entry end the scan with where
 * and why (bytes past `to` are never read).
 *
 * The chunks go through one reused buffer where the handle reads into a
 * caller's buffer (`Read.into`), and the next chunk starts at the first
 * byte not yet decoded (an entry cut by the chunk's end is read again
 * whole), so a scan of a 200 MB index allocates no 4 MiB buffer per chunk
 * nor a joined copy of one: those were a third of a cold start's collector
 * time (docs/benchmarks.md, "Cold start"). Nothing decoded keeps a view of
 * the bytes (the codec copies what it keeps). An entry longer than a chunk
 * is read with a chunk twice as long, as often as it takes.
 */
const scanEntries = <T extends Frame | ReturnType<typeof decodeEntry>>(
  handle: FileHandle,
  from: number,
  to: number,
  decode: (bytes: Uint8Array, offset: number) => T,
  visit: (entry: T, offset: number) => void,
): Effect.Effect<{ readonly offset: number; readonly reason: string } | undefined, DiskError> =>
  Effect.gen(function* () {
    const chunks = new ChunkReader(handle, to - from);
    let position = from;
    let wanted = scanChunkBytes;
    while (position < to) {
      const asked = Math.min(wanted, to - position);
      const chunk = yield* chunks.read(position, asked);
      let offset = 0;
      for (;;) {
        if (offset === chunk.length) break;
        const entry = decode(chunk, offset);
        if (entry._tag === "Incomplete") break;
        if (entry._tag === "Corrupt") return { offset: position + offset, reason: entry.reason };
        visit(entry, position + offset);
        offset += entry.size;
      }
      // A short read is the file's end: what was not decoded never will be.
      if (chunk.length < asked)
        return { offset: position + chunk.length, reason: "the file ends early" };
      if (offset === 0 && position + chunk.length === to) {
        return { offset: position, reason: "a torn last entry" };
      }
      wanted = offset === 0 ? wanted * 2 : scanChunkBytes;
      position += offset;
    }
    return undefined;
  });

/** Reads chunks of a file into one reused buffer where the handle can, else a new one each. */
class ChunkReader {
  private reused = new Uint8Array(0);

  constructor(
    private readonly handle: FileHandle,
    /** The bytes the scan covers: no buffer bigger than them is made. */
    private readonly span: number,
  ) {}

  read(position: number, length: number): Effect.Effect<Uint8Array, DiskError> {
    const into = this.handle.read.into;
    if (into === undefined) return Files.readUpTo(this.handle, position, length);
    if (this.reused.length < length) {
      this.reused = new Uint8Array(Math.max(length, Math.min(scanChunkBytes, this.span)));
    }
    const target = this.reused;
    return Effect.map(into(position, target, length), (count) => target.subarray(0, count));
  }
}

/** A walk's note of an entry: its finish time is not read (the frame alone is decoded). */
const noteEntry = (offsets: OffsetTable, entry: Frame, at: number) => {
  if (entry._tag === "Job") offsets.setJob(entry.jobId, at);
  else if (entry._tag === "Result") offsets.setResult(entry.jobId, at);
};

/** Empties the index directory (creating it when missing) and opens an empty entries file. */
const emptied = (path: string): Effect.Effect<FileHandle, DiskError, Disk> =>
  Effect.gen(function* () {
    yield* Files.removeIfPresent(path, true);
    yield* Files.makeDirectoryDurable(path);
    return yield* Files.createFile(Path.join(path, entriesName), new Uint8Array(0));
  });

/**
 * Opens the index of the store in `directory` for the scope: current for
 * `identity` (every entry it vouches for checked, their offsets noted), or
 * stale, then emptied, with the reason. Fails only on the disk.
 */
export const open = (
  directory: string,
  identity: Identity,
): Effect.Effect<Opened, DiskError, Disk> =>
  Effect.gen(function* () {
    const path = indexPath(directory);
    const head = yield* readHead(headPath({ path }));
    const found = "_tag" in head ? head : staleness(head, identity);
    if (found === undefined && !("_tag" in head)) {
      const current = yield* openCurrent(path, head);
      if (!("_tag" in current)) return { index: current, stale: undefined };
      return { index: yield* openEmpty(path), stale: current };
    }
    return { index: yield* openEmpty(path), stale: found };
  });

const openEmpty = (path: string): Effect.Effect<TerminalIndex, DiskError, Disk> =>
  Effect.map(emptied(path), (handle) => ({
    path,
    handle,
    offsets: new OffsetTable(),
    end: 0,
    headed: false,
    keepsHead: false,
  }));

/**
 * The offsets file HEAD names, when its length and CRC are HEAD's and its
 * offsets fall inside the entries; undefined otherwise (missing, torn,
 * flipped, or HEAD names none), and the open walks the entries instead.
 */
const savedOffsets = (
  path: string,
  head: Head,
): Effect.Effect<OffsetTable | undefined, never, Disk> =>
  Effect.gen(function* () {
    const { offsets } = head;
    if (offsets === undefined) return undefined;
    const disk = yield* Disk;
    const file = Path.join(path, offsetsFileName(head, offsets));
    const bytes = yield* Effect.either(disk.readFile(file));
    if (bytes._tag === "Left" || bytes.right.length !== offsets.bytes) return undefined;
    if (crc32c(bytes.right) !== offsets.crc) return undefined;
    const table = OffsetTable.decode(bytes.right, head.entriesBytes);
    return typeof table === "string" ? undefined : table;
  });

/**
 * The offsets file HEAD names, read, checked and decoded as an open takes
 * it (`savedOffsets`), or undefined without a current HEAD. The engine's
 * open starts it beside its fold and hands it to `openCaughtUp`: the read
 * of a 24 MB file into fresh memory (about 65 ms here, all page faults) then
 * runs on the thread pool while the fold checks segments (2026-12-07,
 * docs/store.md "The offsets file read beside the fold").
 */
export type SavedOffsets = Effect.Effect<OffsetTable | undefined, never, Disk>;

export const readSavedOffsets = (directory: string, found: Found): SavedOffsets =>
  "_tag" in found ? Effect.succeed(undefined) : savedOffsets(indexPath(directory), found);

const openCurrent = (
  path: string,
  head: Head,
  mode: "read" | "readWrite" = "readWrite",
  saved: SavedOffsets = savedOffsets(path, head),
): Effect.Effect<TerminalIndex | Staleness, DiskError, Disk> =>
  Effect.gen(function* () {
    const { entriesBytes } = head;
    const disk = yield* Disk;
    const opened = yield* Effect.either(disk.open(entriesPath({ path }), mode));
    if (opened._tag === "Left") {
      if (opened.left.code === "ENOENT") return { _tag: "Missing" } as const;
      return yield* opened.left;
    }
    const handle = opened.right;
    const size = yield* handle.size();
    // The open takes the offsets saved with HEAD and walks nothing (the
    // engine's since 2026-12-02, a reader's since 2026-12-04): every lookup
    // checks its entry whole, and its job id; a failed one is the caller's
    // to answer (the engine rebuilds, the CLI folds the log whole).
    const table = size >= entriesBytes ? yield* saved : undefined;
    const keepsHead = head.image !== undefined;
    if (table !== undefined)
      return { path, handle, offsets: table, end: entriesBytes, headed: true, keepsHead };
    const offsets = new OffsetTable();
    const corrupt =
      size < entriesBytes
        ? { offset: size, reason: `the file ends early (HEAD vouches for ${entriesBytes} bytes)` }
        : yield* scanEntries(
            handle,
            0,
            entriesBytes,
            // Without usable offsets: the engine's open leaves payloads to its lookups,
            // which rebuild on a failure; a read-only reader checks them here.
            mode === "read" ? decodeFrameChecked : decodeFrame,
            (entry, at) => noteEntry(offsets, entry, at),
          );
    if (corrupt === undefined) {
      return { path, handle, offsets, end: entriesBytes, headed: true, keepsHead };
    }
    yield* Effect.ignore(handle.close());
    return { _tag: "Corrupt", ...corrupt } as const;
  });

/**
 * The index of the store in `directory` for reading only, when it is
 * current for `identity` (its offsets from the file HEAD names when that
 * checks, each entry then checked by its lookup; else every entry HEAD
 * vouches for checked by a walk, their offsets noted), else why not;
 * nothing is written, removed or emptied (`tay jobs`, `tay job` on a
 * store at rest, which fold the log whole when a lookup fails). Fails
 * only on the disk.
 */
export const openReadOnly = (
  directory: string,
  identity: Identity,
): Effect.Effect<TerminalIndex | Staleness, DiskError, Disk> =>
  Effect.gen(function* () {
    const path = indexPath(directory);
    const head = yield* readHead(headPath({ path }));
    if ("_tag" in head) return head;
    const found = staleness(head, identity);
    if (found !== undefined) return found;
    return yield* openCurrent(path, head, "read");
  });

/** True when `opened` is an index, not why there is none. */
export const isIndex = (opened: TerminalIndex | Staleness): opened is TerminalIndex =>
  !("_tag" in opened);

/** What the index directory holds before a fold: HEAD's fields, or why there is no usable HEAD. */
export type Found = Head | Staleness;

/**
 * Reads HEAD of the index of the store in `directory` (nothing else is
 * read or written). Never fails: it runs before the store is checked, so a
 * HEAD it cannot read is `Unreadable` (`open` meets the disk's error, if it
 * stays, once the store is known good).
 */
export const peek = (directory: string): Effect.Effect<Found, never, Disk> =>
  Effect.catchAll(
    readHead(headPath({ path: indexPath(directory) })),
    (error): Effect.Effect<Found> => Effect.succeed({ _tag: "Unreadable", reason: error.message }),
  );

/**
 * The state image HEAD names (found by `peek`), read, checked against
 * HEAD's length and CRC and decoded; else why there is none to resume
 * from (the open then folds the log). Never fails: an image is only ever
 * a shortcut.
 */
export const peekImage = (
  directory: string,
  found: Found,
): Effect.Effect<DecodedImage | string, never, Disk> =>
  Effect.gen(function* () {
    if ("_tag" in found) return "no current HEAD";
    const named = found.image;
    if (named === undefined) return "HEAD names no image";
    const disk = yield* Disk;
    const file = Path.join(indexPath(directory), imageFileName(found, named));
    const bytes = yield* Effect.either(disk.readFile(file));
    if (Either.isLeft(bytes)) return `image unreadable: ${bytes.left.message}`;
    if (bytes.right.length !== named.bytes || crc32c(bytes.right) !== named.crc) {
      return "image is not the one HEAD names (length or CRC)";
    }
    const decoded = decodeImage(bytes.right);
    return Either.isLeft(decoded) ? `image: ${decoded.left}` : decoded.right;
  });

/**
 * Why what `peek` found cannot be current for a generation of store
 * `storeId` (printed) at `epoch`, whatever its last sequence turns out to
 * be; undefined when it may be (`open` then decides).
 */
export const staleBefore = (
  found: Found,
  storeId: string,
  epoch: number,
): Staleness | undefined => {
  if ("_tag" in found) return found;
  if (found.storeId !== storeId) return { _tag: "OtherStore", found: found.storeId };
  if (found.epoch !== epoch) return { _tag: "OtherEpoch", found: found.epoch };
  return undefined;
};

/**
 * Entries encoded in memory, to be written once the fold that hands them
 * over has ended (`stage`, `openStaged`): how the open's one fold rebuilds
 * an index that cannot be current, without folding the log a second time.
 * Encoded bytes, not job objects: a fraction of what the jobs weigh.
 */
export class Staged {
  readonly chunks: Array<Uint8Array> = [];
  readonly offsets = new OffsetTable();
  /** Bytes of entries staged. */
  end = 0;
  /** The first job that did not encode (no job a log held can), with where. */
  failure: { readonly offset: number; readonly reason: string } | undefined = undefined;
  /** The entries file once `spill` has emptied the directory and written to it. */
  handle: FileHandle | undefined = undefined;
  /** Bytes of entries already written by `spill` (the chunks left follow them). */
  written = 0;
  /** The error of a `spill`: `openStaged` fails with it, `openCaughtUp` rebuilds. */
  writeFailure: TerminalIndexError | undefined = undefined;
  /**
   * Set when the entries are a current index's tail (`stagedAfter`): the
   * length HEAD vouches for, after which they are written (the bytes past
   * it, appended after HEAD was published, cut off first).
   */
  appendTo: number | undefined = undefined;
}

/**
 * Entries to stage after those HEAD vouches for: what a fold that resumed
 * from HEAD's state image collects from the records after it, to catch the
 * index up (`openCaughtUp`).
 */
export const stagedAfter = (head: Head): Staged => {
  const staged = new Staged();
  staged.appendTo = head.entriesBytes;
  staged.end = head.entriesBytes;
  staged.written = head.entriesBytes;
  return staged;
};

/** Staged bytes past which `spill` writes them out. */
export const stagedBytesMax = 16 * 1024 * 1024;

/**
 * Writes what `staged` holds past `bytesMax` to the entries file (the
 * directory emptied on the first write) and releases it: what keeps the
 * open's rebuild of the index bounded (2026-12-02). Never fails: the
 * disk's error is kept for `openStaged`.
 */
export const spill = (
  directory: string,
  staged: Staged,
  bytesMax = stagedBytesMax,
): Effect.Effect<void, never, Disk> =>
  staged.end - staged.written <= bytesMax ||
  staged.failure !== undefined ||
  staged.writeFailure !== undefined
    ? Effect.void
    : Effect.catchAll(writeStaged(directory, staged), (error) =>
        Effect.sync(() => {
          staged.writeFailure = error;
          staged.chunks.length = 0;
        }),
      );

/**
 * Writes every chunk of `staged` after what is written (emptying the
 * directory first, once; or, for a tail, cutting the entries file to HEAD's
 * length first, once).
 */
const writeStaged = (
  directory: string,
  staged: Staged,
): Effect.Effect<void, TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const path = indexPath(directory);
    const { appendTo } = staged;
    staged.handle ??= appendTo === undefined ? yield* emptied(path) : yield* cutTo(path, appendTo);
    const handle = staged.handle;
    while (staged.chunks.length > 0) {
      const joined = joinChunks(staged.chunks, stagedWriteBytes);
      yield* Files.writeAll(handle, staged.written, joined);
      staged.written += joined.length;
    }
  });

/**
 * The entries file of the index at `path`, open for writing, cut to
 * `length` (what HEAD vouches for; a crash may have left entries past it,
 * never synced nor vouched for): corrupt when it is shorter.
 */
const cutTo = (path: string, length: number): Effect.Effect<FileHandle, TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const handle = yield* disk.open(entriesPath({ path }), "readWrite");
    const size = yield* Effect.tapError(handle.size(), () => Effect.ignore(handle.close()));
    if (size < length) {
      yield* Effect.ignore(handle.close());
      return yield* new TerminalIndexCorrupt({
        path: entriesPath({ path }),
        offset: size,
        reason: `the file ends early (HEAD vouches for ${length} bytes)`,
      });
    }
    yield* Effect.tapError(handle.truncate(length), () => Effect.ignore(handle.close()));
    return handle;
  });

/** Encodes what a collecting lean fold handed over at the end of `staged`. */
export const stage = (staged: Staged, left: Generation.Left): void => {
  if (staged.failure !== undefined || (left.jobs.length === 0 && left.results.length === 0)) {
    return;
  }
  // Synchronous from here to the copy: the scratch is free again after it.
  stageScratch.length = 0;
  const placed = appendEntries(stageScratch, [left]);
  if (Either.isLeft(placed)) {
    staged.failure = { offset: staged.end, reason: placed.left };
    return;
  }
  staged.chunks.push(stageScratch.bytes.slice(0, stageScratch.length));
  notePlaced(staged.offsets, placed.right, staged.end);
  staged.end += stageScratch.length;
  if (stageScratch.bytes.length > keptEntriesBytesMax) stageScratch = recordBuffer();
};

/** Where `stage` lays a fold's entries out before it copies them into a chunk. */
let stageScratch = recordBuffer();

/** An entries buffer grown past this (a huge batch) is dropped after use, not kept. */
export const keptEntriesBytesMax = 4 * 1024 * 1024;

/** Bytes of staged chunks written at a time. */
export const stagedWriteBytes = 4 * 1024 * 1024;

/**
 * Empties the index of the store in `directory` (unless `spill` did) and
 * writes what `staged` still holds as its entries (releasing the chunks as
 * they are written); `publish` makes it current.
 */
export const openStaged = (
  directory: string,
  staged: Staged,
): Effect.Effect<TerminalIndex, TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const path = indexPath(directory);
    if (staged.failure !== undefined) {
      return yield* new TerminalIndexCorrupt({ path: entriesPath({ path }), ...staged.failure });
    }
    if (staged.writeFailure !== undefined) return yield* staged.writeFailure;
    yield* writeStaged(directory, staged);
    const handle = staged.handle ?? (yield* emptied(path));
    return {
      path,
      handle,
      offsets: staged.offsets,
      end: staged.end,
      headed: false,
      keepsHead: false,
    };
  });

/**
 * The index of the store in `directory` as HEAD (`head`) left it, caught up
 * with `staged` (`stagedAfter(head)`, what the records after HEAD's
 * sequence let go of): the entries HEAD vouches for, their offsets from
 * the saved file or a walk as `open` takes them, then the staged tail
 * written after them and walked to note its offsets (a result's entry
 * needs its job's, which may be HEAD's). HEAD is left as it is: it names
 * the state image that the next open after a crash resumes from again.
 * Why not, when HEAD's entries fail `open`'s checks or the tail could not
 * be written (the caller rebuilds the index); fails on the disk, and on a
 * job that did not encode.
 */
export const openCaughtUp = (
  directory: string,
  head: Head,
  staged: Staged,
  saved: SavedOffsets = readSavedOffsets(directory, head),
): Effect.Effect<TerminalIndex | Staleness, TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const path = indexPath(directory);
    if (staged.failure !== undefined) {
      return yield* new TerminalIndexCorrupt({ path: entriesPath({ path }), ...staged.failure });
    }
    const spilled = staged.handle;
    staged.handle = undefined;
    if (spilled !== undefined) yield* Effect.ignore(spilled.close());
    const current = yield* openCurrent(path, head, "readWrite", saved);
    if ("_tag" in current) return current;
    const caughtUp = Effect.gen(function* () {
      if (staged.writeFailure !== undefined) return yield* staged.writeFailure;
      // Nothing spilled yet: the bytes past HEAD's length go now.
      if (spilled === undefined) yield* current.handle.truncate(head.entriesBytes);
      staged.handle = current.handle;
      yield* writeStaged(directory, staged);
      return yield* scanEntries(
        current.handle,
        head.entriesBytes,
        staged.end,
        decodeFrame,
        (entry, at) => noteEntry(current.offsets, entry, at),
      );
    });
    const outcome = yield* Effect.either(caughtUp);
    staged.handle = undefined;
    const corrupt = Either.isLeft(outcome)
      ? { offset: head.entriesBytes, reason: `catching up: ${outcome.left.message}` }
      : outcome.right;
    if (corrupt !== undefined) {
      yield* Effect.ignore(current.handle.close());
      return { _tag: "Corrupt", ...corrupt } as const;
    }
    current.end = staged.end;
    return current;
  });

/** Takes chunks off the front of `chunks` into one array of about `bytesMax` (at least one). */
const joinChunks = (chunks: Array<Uint8Array>, bytesMax: number): Uint8Array => {
  let count = 0;
  let total = 0;
  for (const chunk of chunks) {
    if (count > 0 && total + chunk.length > bytesMax) break;
    count++;
    total += chunk.length;
  }
  const taken = chunks.splice(0, count);
  if (taken.length === 1 && taken[0] !== undefined) return taken[0];
  const joined = new Uint8Array(total);
  let at = 0;
  for (const chunk of taken) {
    joined.set(chunk, at);
    at += chunk.length;
  }
  return joined;
};

/**
 * Appends the entries of several commits' `lefts`, in their order, with one
 * write: the same bytes and offsets as adding them one by one. Each is
 * encoded before anything is written, so a failure to encode writes
 * nothing. The first addition after an open removes HEAD: from then on the
 * index is current only once `publish`ed.
 */
export const addAll = (
  index: TerminalIndex,
  lefts: ReadonlyArray<Generation.Left>,
): Effect.Effect<void, TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const buffer = index.spare ?? recordBuffer();
    index.spare = undefined;
    buffer.length = 0;
    const placed = appendEntries(buffer, lefts);
    if (Either.isLeft(placed)) {
      return yield* new TerminalIndexCorrupt({
        path: entriesPath(index),
        offset: index.end,
        reason: placed.left,
      });
    }
    yield* writeEncoded(index, buffer, placed.right);
    if (buffer.bytes.length <= keptEntriesBytesMax) index.spare = buffer;
  });

/**
 * Appends entries encoded before (`appendEntries` into `buffer`; `placed`
 * where each starts in it) with one write, and notes where each is. The
 * first addition after an open removes HEAD, as `addAll`'s.
 */
export const writeEncoded = (
  index: TerminalIndex,
  buffer: EntryBuffer,
  placed: ReadonlyArray<Placed>,
): Effect.Effect<void, TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const { length } = buffer;
    if (length === 0) return;
    if (index.headed && !index.keepsHead) {
      yield* Files.removeIfPresent(headPath(index), false);
      index.headed = false;
    }
    yield* Files.writeAll(index.handle, index.end, buffer.bytes.subarray(0, length));
    notePlaced(index.offsets, placed, index.end);
    index.end += length;
  });

/** Notes where each entry of an encoded run starts, the run written at `at`. */
const notePlaced = (offsets: OffsetTable, placed: ReadonlyArray<Placed>, at: number): void => {
  for (const { jobId, kind, offset, finishedAt } of placed) {
    if (kind === "job") offsets.setJob(jobId, at + offset, finishedAt);
    else offsets.setResult(jobId, at + offset);
  }
};

/** Appends the entries of what one commit let go of (`addAll` of one). */
export const add = (
  index: TerminalIndex,
  left: Generation.Left,
): Effect.Effect<void, TerminalIndexError, Disk> => addAll(index, [left]);

/** Bytes the image's records are gathered into before each write. */
export const imageWriteBytes = 1024 * 1024;

/**
 * Publishes the image's records in the index directory as they are made
 * (a temporary file written a chunk at a time and synced, renamed to its
 * name for `identity`, the directory synced): its length and CRC; or
 * undefined, with the temporary file removed, when the stream stopped
 * short or the disk refused it.
 */
const publishImage = (
  index: TerminalIndex,
  identity: Identity,
  image: ImageStream,
): Effect.Effect<OffsetsFile | undefined, never, Disk> => {
  const temporary = Path.join(index.path, imageTemporaryName);
  const written = Effect.gen(function* () {
    const disk = yield* Disk;
    yield* Files.removeIfPresent(temporary, false);
    const file = yield* Files.withFile(temporary, "createExclusive", (handle) =>
      writeImage(handle, image),
    );
    if (image.failure() !== undefined) return undefined;
    yield* disk.rename(temporary, Path.join(index.path, imageFileName(identity, file)));
    yield* disk.syncDirectory(index.path);
    return file;
  });
  return Effect.flatMap(
    Effect.orElseSucceed(written, () => undefined),
    (file) =>
      file === undefined
        ? Effect.as(Effect.ignore(Files.removeIfPresent(temporary, false)), undefined)
        : Effect.succeed(file),
  );
};

/** Writes the image's records to `handle`, gathered into chunks, and syncs: their length and CRC. */
const writeImage = (
  handle: FileHandle,
  image: ImageStream,
): Effect.Effect<OffsetsFile, DiskError> =>
  Effect.gen(function* () {
    let bytes = 0;
    let crc = 0;
    let gathered: Array<Uint8Array> = [];
    let gatheredBytes = 0;
    const write = Effect.suspend(() => {
      const chunk = joinChunks(gathered, gatheredBytes);
      const at = bytes;
      crc = crc32c(chunk, crc);
      bytes += chunk.length;
      gathered = [];
      gatheredBytes = 0;
      return Files.writeAll(handle, at, chunk);
    });
    for (const record of image.records) {
      gathered.push(record);
      gatheredBytes += record.length;
      if (gatheredBytes >= imageWriteBytes) yield* write;
      // Each record is encoded as it is read: between two, the loop turns,
      // so a checkpoint written while the engine runs stalls it for one
      // record's encoding at most (docs/store.md, "Checkpoints without a stall").
      yield* nextLoopTurn;
    }
    if (gatheredBytes > 0) yield* write;
    yield* handle.sync();
    return { bytes, crc };
  });

/**
 * Removes every image and offsets file in the index directory (their
 * temporary files and an older build's `image` and `offsets` too) but
 * those `kept` (HEAD's, just published). Not synced, and a failure is ignored: a file left behind is
 * never read (HEAD names its files by sequence and CRC) and the next
 * publish removes it.
 */
const removeUnnamed = (
  index: TerminalIndex,
  kept: ReadonlyArray<string>,
): Effect.Effect<void, never, Disk> =>
  Effect.ignore(
    Effect.gen(function* () {
      const disk = yield* Disk;
      for (const name of yield* disk.readDirectory(index.path)) {
        // A temporary file of either kind is a publish a crash cut short.
        const named = ofKind("image", name) || ofKind("offsets", name) || olderNames.includes(name);
        if (named && !kept.includes(name)) {
          yield* Files.removeIfPresent(Path.join(index.path, name), false);
        }
      }
    }),
  );

/**
 * Syncs the entries and publishes HEAD for `identity`: the index is current
 * for it. With `image` (the state image's records, at the engine's close or
 * a checkpoint), HEAD names that too, if the disk takes it; if it does not,
 * HEAD names none, or, when `imageRequired` (a checkpoint: the HEAD there
 * is still good for the image it names), nothing is published and the
 * answer is false.
 */
export const publish = (
  index: TerminalIndex,
  identity: Identity,
  image?: ImageStream,
  imageRequired = false,
): Effect.Effect<boolean, TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    yield* index.handle.sync();
    // The image and the offsets go first, durable before the HEAD that
    // names them by length and CRC. The image is only a shortcut: one the
    // disk refuses (no space for a copy of every active job) leaves HEAD
    // naming none.
    const imageFile = image === undefined ? undefined : yield* publishImage(index, identity, image);
    if (imageRequired && imageFile === undefined) return false;
    const table = index.offsets.encode();
    const offsets = table === undefined ? undefined : { bytes: table.length, crc: crc32c(table) };
    if (table !== undefined && offsets !== undefined) {
      yield* Files.publishSmallFile(
        Path.join(index.path, offsetsFileName(identity, offsets)),
        table,
      );
    }
    const head = encodeHead({ ...identity, entriesBytes: index.end, offsets, image: imageFile });
    if (Either.isLeft(head)) {
      return yield* new TerminalIndexCorrupt({
        path: headPath(index),
        offset: 0,
        reason: head.left,
      });
    }
    yield* Files.publishSmallFile(headPath(index), head.right);
    index.headed = true;
    index.keepsHead = imageFile !== undefined;
    yield* removeUnnamed(index, [
      ...(offsets === undefined ? [] : [offsetsFileName(identity, offsets)]),
      ...(imageFile === undefined ? [] : [imageFileName(identity, imageFile)]),
    ]);
    return true;
  });

/** Closes the entries file (HEAD is left as it is). */
export const close = (index: TerminalIndex): Effect.Effect<void, DiskError> => index.handle.close();

const readEntry = (
  index: TerminalIndex,
  offset: number,
): Effect.Effect<ReturnType<typeof decodeEntry>, TerminalIndexError> =>
  Effect.gen(function* () {
    // A job entry is at least a header; read a page and more if the record says so.
    let length = 4096;
    for (;;) {
      const bytes = yield* Files.readUpTo(
        index.handle,
        offset,
        Math.min(length, index.end - offset),
      );
      const entry = decodeEntry(bytes, 0);
      if (entry._tag !== "Incomplete") {
        if (entry._tag !== "Corrupt") return entry;
        return yield* new TerminalIndexCorrupt({
          path: entriesPath(index),
          offset,
          reason: entry.reason,
        });
      }
      if (offset + length >= index.end) {
        return yield* new TerminalIndexCorrupt({
          path: entriesPath(index),
          offset,
          reason: "a torn entry",
        });
      }
      length *= 4;
    }
  });

/** The whole record of a job the index holds (with its result), or undefined. */
export const lookup = (
  index: TerminalIndex,
  jobId: number,
): Effect.Effect<Job.Job | undefined, TerminalIndexError> =>
  Effect.gen(function* () {
    const offsets = index.offsets.get(jobId);
    if (offsets === undefined) return undefined;
    const entry = yield* readEntry(index, offsets.job);
    if (entry._tag !== "Job" || entry.job.jobId !== jobId) {
      return yield* mismatch(index, offsets.job, `job ${jobId}'s entry`);
    }
    if (offsets.result < 0) return entry.job;
    const result = yield* readEntry(index, offsets.result);
    if (result._tag !== "Result" || result.event.jobId !== jobId) {
      return yield* mismatch(index, offsets.result, `job ${jobId}'s result entry`);
    }
    return { ...entry.job, result: { value: result.event.result, at: result.event.at } };
  });

const mismatch = (index: TerminalIndex, offset: number, expected: string) =>
  new TerminalIndexCorrupt({ path: entriesPath(index), offset, reason: `expected ${expected}` });

/** Every job the index holds, ascending by id, with its result: what `jobs --state completed` lists. */
export const scan = (
  index: TerminalIndex,
): Effect.Effect<ReadonlyArray<Job.Job>, TerminalIndexError> =>
  Effect.gen(function* () {
    const jobs = new Map<number, Job.Job>();
    const corrupt = yield* scanEntries(index.handle, 0, index.end, decodeEntry, (entry) => {
      if (entry._tag === "Job") jobs.set(entry.job.jobId, entry.job);
      if (entry._tag !== "Result") return;
      const job = jobs.get(entry.event.jobId);
      const { result, at } = entry.event;
      if (job !== undefined) jobs.set(job.jobId, { ...job, result: { value: result, at } });
    });
    if (corrupt !== undefined) {
      return yield* new TerminalIndexCorrupt({ path: entriesPath(index), ...corrupt });
    }
    return [...jobs.values()].sort((left, right) => left.jobId - right.jobId);
  });

/**
 * `handle.read` answered on the caller's thread: `Read.now` where the disk
 * has it (NodeDisk's `pread`), else the disk's own read run at once (the
 * fault disk's is synchronous inside); a read that cannot be answered at
 * once is a `DiskError` naming why.
 */
const readNow = (
  handle: FileHandle,
  position: number,
  length: number,
): Either.Either<Uint8Array, DiskError> => {
  const now = handle.read.now;
  if (now !== undefined) return now(position, length);
  const exit = Effect.runSyncExit(handle.read(position, length));
  if (Exit.isSuccess(exit)) return Either.right(exit.value);
  const failure = Cause.failureOption(exit.cause);
  if (Option.isSome(failure)) return Either.left(failure.value);
  return Either.left(
    new DiskError({
      operation: "read",
      path: handle.path,
      code: "Other",
      detail: `no synchronous read on this disk: ${Cause.pretty(exit.cause)}`,
    }),
  );
};

/**
 * What `take` makes of the entry at `offset`, read on the caller's thread
 * as `readEntry` reads: a page, and four times more while `take` finds the
 * bytes cut short (undefined), up to the index's end.
 */
const readGrowingNow = <A>(
  index: TerminalIndex,
  offset: number,
  take: (bytes: Uint8Array) => Either.Either<A | undefined, TerminalIndexError>,
): Either.Either<A, TerminalIndexError> => {
  for (let length = 4096; ; length *= 4) {
    const bytes = readNow(index.handle, offset, Math.min(length, index.end - offset));
    if (Either.isLeft(bytes)) return Either.left(bytes.left);
    const taken = take(bytes.right);
    if (Either.isLeft(taken)) return Either.left(taken.left);
    if (taken.right !== undefined) return Either.right(taken.right);
    if (offset + length >= index.end) return Either.left(corruptAt(index, offset, "a torn entry"));
  }
};

type DecodedEntry = Exclude<
  ReturnType<typeof decodeEntry>,
  { readonly _tag: "Incomplete" } | { readonly _tag: "Corrupt" }
>;

const readEntryNow = (
  index: TerminalIndex,
  offset: number,
): Either.Either<DecodedEntry, TerminalIndexError> =>
  readGrowingNow(index, offset, (bytes) => {
    const entry = decodeEntry(bytes, 0);
    if (entry._tag === "Corrupt") return Either.left(corruptAt(index, offset, entry.reason));
    return Either.right(entry._tag === "Incomplete" ? undefined : entry);
  });

const corruptAt = (index: TerminalIndex, offset: number, reason: string) =>
  new TerminalIndexCorrupt({ path: entriesPath(index), offset, reason });

/**
 * `lookup` on the caller's thread, for the engine's synchronous queries
 * (`job`, `jobs`): one or two `pread`s of entries the offsets name.
 */
export const lookupNow = (
  index: TerminalIndex,
  jobId: number,
): Either.Either<Job.Job | undefined, TerminalIndexError> => {
  const offsets = index.offsets.get(jobId);
  if (offsets === undefined) return Either.right(undefined);
  const entry = readEntryNow(index, offsets.job);
  if (Either.isLeft(entry)) return Either.left(entry.left);
  if (entry.right._tag !== "Job" || entry.right.job.jobId !== jobId) {
    return Either.left(mismatch(index, offsets.job, `job ${jobId}'s entry`));
  }
  const job = entry.right.job;
  if (offsets.result < 0) return Either.right(job);
  const result = readEntryNow(index, offsets.result);
  if (Either.isLeft(result)) return Either.left(result.left);
  if (result.right._tag !== "Result" || result.right.event.jobId !== jobId) {
    return Either.left(mismatch(index, offsets.result, `job ${jobId}'s result entry`));
  }
  const { result: value, at } = result.right.event;
  return Either.right({ ...job, result: { value, at } });
};

/**
 * When `jobId` finished, if the index noted it with its entry (entries
 * written since 2026-12-06 and kept in an offsets file; not those an open
 * walked): a compaction skips reading the jobs its retention drops.
 */
export const finishedAtNow = (index: TerminalIndex, jobId: number): number | undefined =>
  index.offsets.finishedAt(jobId);

/** Notes when `jobId` finished, read from its entry by a reader (the compaction's base). */
export const noteFinishedNow = (index: TerminalIndex, jobId: number, finishedAt: number): void => {
  index.offsets.setFinishedAt(jobId, finishedAt);
};

/** An entry to copy: where it is, and whose and what it must be. */
interface Wanted {
  readonly offset: number;
  readonly jobId: number;
  readonly kind: Placed["kind"];
}

/** The entry at `at` of `bytes` checked whole as `wanted`'s: its bytes, or undefined when cut short. */
const checkedFrame = (
  index: TerminalIndex,
  bytes: Uint8Array,
  at: number,
  wanted: Wanted,
): Either.Either<Uint8Array | undefined, TerminalIndexError> => {
  const frame = decodeFrameChecked(bytes, at);
  if (frame._tag === "Incomplete") return Either.right(undefined);
  if (frame._tag === "Corrupt") return Either.left(corruptAt(index, wanted.offset, frame.reason));
  const kind = frame._tag === "Job" ? "job" : "result";
  if (frame.jobId !== wanted.jobId || kind !== wanted.kind) {
    return Either.left(
      mismatch(index, wanted.offset, `job ${wanted.jobId}'s ${wanted.kind} entry`),
    );
  }
  return Either.right(bytes.subarray(at, at + frame.size));
};

/** The bytes of the entry `wanted` names, from a span read at `from` or, longer, read alone. */
const frameBytesNow = (
  index: TerminalIndex,
  bytes: Uint8Array,
  from: number,
  wanted: Wanted,
): Either.Either<Uint8Array, TerminalIndexError> => {
  const inSpan = checkedFrame(index, bytes, wanted.offset - from, wanted);
  if (Either.isLeft(inSpan)) return Either.left(inSpan.left);
  if (inSpan.right !== undefined) return Either.right(inSpan.right);
  return readGrowingNow(index, wanted.offset, (alone) => checkedFrame(index, alone, 0, wanted));
};

/**
 * Copies the entries of `jobIds` (each job's entry and its result's) from
 * `from` to the end of `to` as they are, each checked whole (header and
 * record CRC) and as the job's, with their finish times: a compaction's
 * copy of the completed jobs its base keeps, which read, decoded and
 * encoded each again (2026-12-06). One read per span of entries, one
 * write for all.
 */
export const copyEntries = (
  from: TerminalIndex,
  to: TerminalIndex,
  jobIds: ReadonlyArray<number>,
): Effect.Effect<void, TerminalIndexError, Disk> =>
  Effect.gen(function* () {
    const wanted: Array<Wanted> = [];
    for (const jobId of jobIds) {
      const offsets = from.offsets.get(jobId);
      if (offsets === undefined) continue;
      wanted.push({ offset: offsets.job, jobId, kind: "job" });
      if (offsets.result >= 0) wanted.push({ offset: offsets.result, jobId, kind: "result" });
    }
    wanted.sort((left, right) => left.offset - right.offset);
    // The copies go into one buffer, grown as needed: a typed array per entry (and their join)
    // cost more than the checks (2026-12-07).
    const buffer = recordBuffer(256 * 1024);
    const placed: Array<Placed> = [];
    let at = 0;
    const spans = spansOf(
      wanted.map((entry) => entry.offset),
      from.end,
      pageReadBytes,
    );
    for (const { from: start, to: end } of spans) {
      const bytes = readNow(from.handle, start, end - start);
      if (Either.isLeft(bytes)) return yield* bytes.left;
      for (
        let entry = wanted[at];
        entry !== undefined && entry.offset < end;
        entry = wanted[++at]
      ) {
        const frame = frameBytesNow(from, bytes.right, start, entry);
        if (Either.isLeft(frame)) return yield* frame.left;
        // A copy: the span's bytes are the reader's, reused by its next read.
        const offset = appendBytes(buffer, frame.right);
        const finishedAt =
          entry.kind === "job" ? (from.offsets.finishedAt(entry.jobId) ?? null) : null;
        placed.push({ jobId: entry.jobId, kind: entry.kind, offset, finishedAt });
      }
    }
    yield* writeEncoded(to, buffer, placed);
  });

/** Bytes a page lookup reads at once at most (entries nearer than this share a read). */
export const pageReadBytes = 1024 * 1024;

/** The offsets `lookupPageNow` reads, ascending, cut into spans read by one `pread` each. */
const spansOf = (offsets: ReadonlyArray<number>, end: number, spanBytes: number) => {
  const spans: Array<{ readonly from: number; readonly to: number }> = [];
  let from = -1;
  let last = -1;
  const close = () => {
    // A page past the last entry's start: most entries are shorter (`readEntryNow` reads on).
    if (from >= 0) spans.push({ from, to: Math.min(end, last + 4096) });
  };
  for (const offset of offsets) {
    if (from >= 0 && offset + 4096 - from > spanBytes) {
      close();
      from = -1;
    }
    if (from < 0) from = offset;
    last = offset;
  }
  close();
  return spans;
};

/** The entries at `offsets` (ascending), read a span at a time, by offset. */
const entriesAt = (
  index: TerminalIndex,
  offsets: ReadonlyArray<number>,
  spanBytes: number,
): Either.Either<Map<number, ReturnType<typeof decodeEntry>>, TerminalIndexError> => {
  const entries = new Map<number, ReturnType<typeof decodeEntry>>();
  let at = 0;
  for (const { from, to } of spansOf(offsets, index.end, spanBytes)) {
    const bytes = readNow(index.handle, from, to - from);
    if (Either.isLeft(bytes)) return Either.left(bytes.left);
    for (let offset = offsets[at]; offset !== undefined && offset < to; offset = offsets[++at]) {
      let entry = decodeEntry(bytes.right, offset - from);
      if (entry._tag === "Incomplete") {
        // Longer than what the span read: read it alone.
        const alone = readEntryNow(index, offset);
        if (Either.isLeft(alone)) return Either.left(alone.left);
        entry = alone.right;
      }
      if (entry._tag === "Corrupt") return Either.left(corruptAt(index, offset, entry.reason));
      entries.set(offset, entry);
    }
  }
  return Either.right(entries);
};

/**
 * `lookupNow` for a page of ids at once (a compaction's base reads every
 * retained job): their entries sorted by offset and read in spans of at
 * most `pageReadBytes`, one `pread` each instead of one or two per job.
 * The records in the order of `jobIds`, undefined where the index has none.
 */
export const lookupPageNow = (
  index: TerminalIndex,
  jobIds: ReadonlyArray<number>,
  spanBytes = pageReadBytes,
): Either.Either<ReadonlyArray<Job.Job | undefined>, TerminalIndexError> => {
  const wanted: Array<number> = [];
  for (const jobId of jobIds) {
    const offsets = index.offsets.get(jobId);
    if (offsets === undefined) continue;
    wanted.push(offsets.job);
    if (offsets.result >= 0) wanted.push(offsets.result);
  }
  wanted.sort((left, right) => left - right);
  const entries = entriesAt(index, wanted, spanBytes);
  if (Either.isLeft(entries)) return Either.left(entries.left);
  const jobs: Array<Job.Job | undefined> = [];
  for (const jobId of jobIds) {
    const offsets = index.offsets.get(jobId);
    if (offsets === undefined) {
      jobs.push(undefined);
      continue;
    }
    const entry = entries.right.get(offsets.job);
    if (entry?._tag !== "Job" || entry.job.jobId !== jobId) {
      return Either.left(mismatch(index, offsets.job, `job ${jobId}'s entry`));
    }
    if (offsets.result < 0) {
      jobs.push(entry.job);
      continue;
    }
    const result = entries.right.get(offsets.result);
    if (result?._tag !== "Result" || result.event.jobId !== jobId) {
      return Either.left(mismatch(index, offsets.result, `job ${jobId}'s result entry`));
    }
    jobs.push({ ...entry.job, result: { value: result.event.result, at: result.event.at } });
  }
  return Either.right(jobs);
};
