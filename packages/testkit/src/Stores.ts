/**
 * Whole stores on disk, written directly through the real codec, and
 * helpers that damage them on purpose.
 *
 * `writeStore` lays out a complete Store-v2 directory (FORMAT.md) for a
 * given history: STORE-V2, CURRENT, one generation with its MANIFEST and its
 * segments, with any STORE_ID, creation time, epoch and parent, canonical
 * base, segment size (in records or bytes) and the last segment sealed or
 * active. It is an Effect over the shell's `Disk` service, so the same call
 * writes to a real directory (`NodeDisk.layer`) or to a `FaultDisk`. The
 * bytes are exactly those the store's own writer would produce for the same
 * records and rotation (a test holds it to that).
 *
 * The damage helpers then make the refusals recovery must report: a torn
 * tail, a flipped bit, a missing segment, an unexpected entry, a segment of
 * another store, a Store-v1 root.
 *
 * @example
 * const written = yield* Stores.writeStore("/data", { events, recordsPerSegment: 4 });
 * yield* Stores.truncateTail(written.segments[1].path, 5); // IncompleteTail at open
 */
import * as Path from "node:path";
import {
  decodeSegmentHeader,
  encodeCurrentPointer,
  encodeEvent,
  encodeManifest,
  encodeRecord,
  encodeSegmentHeader,
  encodeStoreMarker,
  type Manifest,
  segmentFileBytesMax,
  segmentHeaderBytes,
  storeIdBytes,
} from "@tay/codec";
import type { Event } from "@tay/core";
import { Disk, Layout } from "@tay/shell-node";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as E from "fp-ts/lib/Either.js";
import { createFile, exists, overwriteAt, syncParent, withFile } from "./internal/storesFiles.js";
import { type PlannedSegment, planSegments, segmentBytes } from "./internal/storesPlan.js";

/** FORMAT.md's test STORE_ID, the bytes 00 01 02 ... 0f: the default of `writeStore`. */
export const testStoreId: Uint8Array = Uint8Array.from(
  { length: storeIdBytes },
  (_, index) => index,
);

/** The default creation time of `writeStore`: 2023-11-14T22:13:20Z, in ms. */
export const testCreatedAt = 1_700_000_000_000;

/**
 * A record given by its bytes rather than as an event: any pair (even one
 * no reader knows) with any payload, to make histories the codec would
 * refuse to encode (`UndecodableEvent` at open).
 */
export interface RawRecord {
  readonly _tag: "RawRecord";
  readonly type: number;
  readonly schema: number;
  readonly payload: Uint8Array;
}

/** A raw record of pair (`type`, `schema`) with `payload` as is. */
export const raw = (type: number, schema: number, payload: Uint8Array): RawRecord => ({
  _tag: "RawRecord",
  type,
  schema,
  payload,
});

/** A record of a written store: an event, or raw bytes. */
export type StoreRecord = Event.Event | RawRecord;

/** What `writeStore` writes. Every field is optional; the defaults give an empty first generation. */
export interface StoreSpec {
  /** The live tail, one record each, after the base. Default none. */
  readonly events?: ReadonlyArray<StoreRecord>;
  /** The canonical base: the first records, and MANIFEST's base record count. Default none. */
  readonly base?: ReadonlyArray<StoreRecord>;
  /** 16 bytes, in the marker, CURRENT, MANIFEST and every segment. Default `testStoreId`. */
  readonly storeId?: Uint8Array;
  /** The marker's and the manifest's created_at (ms). Default `testCreatedAt`. */
  readonly createdAt?: number;
  /** The current generation's epoch (>= 1). Default 1. */
  readonly epoch?: number;
  /** The manifest's parent epoch (below `epoch`). Default `epoch - 1`. */
  readonly parentEpoch?: number;
  /** The sequence of the first record (>= 1). Default 1. */
  readonly firstSequence?: number;
  /** A segment is sealed once it holds this many records. Exclusive with `bytesPerSegment`. */
  readonly recordsPerSegment?: number;
  /**
   * A segment is sealed once its header and records reach this many bytes
   * (the writer's rotation target: it overshoots by less than one record).
   * Without either option, every record goes into one segment (up to the
   * format's 1 GiB per file).
   */
  readonly bytesPerSegment?: number;
  /** The base ends a sealed segment of its own, the tail starts a new one (compaction's layout). Default false. */
  readonly sealBase?: boolean;
  /** Whether the segment holding the last record is sealed (footer) or active. Default false (active). */
  readonly sealLast?: boolean;
  /**
   * A header-only active segment after the last record's segment, as an
   * open leaves it after a rotation or a compaction. Only when that segment
   * is sealed (or there is no record). Default false: with no record, no
   * segment at all, as `init` leaves it.
   */
  readonly emptyActive?: boolean;
}

/** Why `writeStore` refused. */
export type WriteStoreErrorReason =
  /** An option out of its range, or two that contradict each other. */
  | "InvalidOption"
  /** An event the codec refuses to encode, or a record it refuses to frame. */
  | "UnencodableEvent"
  /** The directory exists and is not empty. */
  | "DirectoryNotEmpty";

/** `writeStore` refused before writing anything: `where` names the option or record (`events[3]`). */
export class WriteStoreError extends Data.TaggedError("WriteStoreError")<{
  readonly reason: WriteStoreErrorReason;
  readonly where: string;
  readonly detail: string;
}> {
  override get message(): string {
    return `${this.reason} at ${this.where}: ${this.detail}`;
  }
}

/** A record as written: its sequence, its offset in its segment and its framed size. */
export interface WrittenRecord {
  readonly sequence: number;
  readonly offset: number;
  readonly size: number;
}

/** A segment file as written. */
export interface WrittenSegment {
  readonly segmentId: number;
  readonly path: string;
  readonly firstSequence: number;
  readonly records: ReadonlyArray<WrittenRecord>;
  readonly sealed: boolean;
  /** File size in bytes. */
  readonly size: number;
}

/** What `writeStore` wrote, with the coordinates a test needs to aim damage or expect an error. */
export interface WrittenStore {
  readonly directory: string;
  readonly storeId: Uint8Array;
  readonly manifest: Manifest.Manifest;
  /** Sequence of the last record; `firstSequence - 1` when there is none. */
  readonly lastSequence: number;
  readonly segments: ReadonlyArray<WrittenSegment>;
}

const isSafeCount = (value: number, min: number): boolean =>
  Number.isSafeInteger(value) && value >= min;

const invalid = (where: string, value: unknown): WriteStoreError =>
  new WriteStoreError({ reason: "InvalidOption", where, detail: `out of range: ${String(value)}` });

/** Resolved options, each checked so that no codec encoder can throw on them. */
interface Resolved {
  readonly storeId: Uint8Array;
  readonly createdAt: number;
  readonly epoch: number;
  readonly parentEpoch: number;
  readonly firstSequence: number;
}

const resolveSpec = (spec: StoreSpec, records: number): E.Either<WriteStoreError, Resolved> => {
  const storeId = spec.storeId ?? testStoreId;
  const createdAt = spec.createdAt ?? testCreatedAt;
  const epoch = spec.epoch ?? 1;
  const parentEpoch = spec.parentEpoch ?? epoch - 1;
  const firstSequence = spec.firstSequence ?? 1;
  if (storeId.length !== storeIdBytes) return E.left(invalid("storeId", storeId.length));
  if (!isSafeCount(createdAt, 0)) return E.left(invalid("createdAt", createdAt));
  if (!isSafeCount(epoch, 1)) return E.left(invalid("epoch", epoch));
  if (!isSafeCount(parentEpoch, 0) || parentEpoch >= epoch) {
    return E.left(invalid("parentEpoch", parentEpoch));
  }
  if (!isSafeCount(firstSequence, 1) || !isSafeCount(firstSequence + records, 1)) {
    return E.left(invalid("firstSequence", firstSequence));
  }
  const { recordsPerSegment, bytesPerSegment } = spec;
  if (recordsPerSegment !== undefined && bytesPerSegment !== undefined) {
    return E.left(
      new WriteStoreError({
        reason: "InvalidOption",
        where: "recordsPerSegment",
        detail: "give recordsPerSegment or bytesPerSegment, not both",
      }),
    );
  }
  if (recordsPerSegment !== undefined && !isSafeCount(recordsPerSegment, 1)) {
    return E.left(invalid("recordsPerSegment", recordsPerSegment));
  }
  if (
    bytesPerSegment !== undefined &&
    (!isSafeCount(bytesPerSegment, 1) || bytesPerSegment > segmentFileBytesMax)
  ) {
    return E.left(invalid("bytesPerSegment", bytesPerSegment));
  }
  const tailEmpty = (spec.events ?? []).length === 0;
  const lastSealed =
    records === 0 || spec.sealLast === true || (spec.sealBase === true && tailEmpty);
  if (spec.emptyActive === true && !lastSealed) {
    return E.left(
      new WriteStoreError({
        reason: "InvalidOption",
        where: "emptyActive",
        detail: "an empty active segment must follow a sealed one: set sealLast",
      }),
    );
  }
  return E.right({ storeId, createdAt, epoch, parentEpoch, firstSequence });
};

const describe = (error: unknown): string =>
  JSON.stringify(error, (_, value) => (typeof value === "bigint" ? value.toString() : value));

/** Frames `record` at `sequence` through the codec; `where` names it in a refusal. */
const frame = (
  record: StoreRecord,
  sequence: number,
  where: string,
): E.Either<WriteStoreError, Uint8Array> => {
  const encoded = record._tag === "RawRecord" ? E.right(record) : encodeEvent(record);
  if (E.isLeft(encoded)) {
    return E.left(
      new WriteStoreError({ reason: "UnencodableEvent", where, detail: describe(encoded.left) }),
    );
  }
  const { type, schema, payload } = encoded.right;
  return E.mapLeft(
    (error) => new WriteStoreError({ reason: "UnencodableEvent", where, detail: describe(error) }),
  )(encodeRecord({ type, schema, sequence, payload }));
};

/** Every record framed in order, base first. */
const frameAll = (
  spec: StoreSpec,
  firstSequence: number,
): E.Either<WriteStoreError, ReadonlyArray<Uint8Array>> => {
  const named = [
    ...(spec.base ?? []).map((record, index) => ({ record, where: `base[${index}]` })),
    ...(spec.events ?? []).map((record, index) => ({ record, where: `events[${index}]` })),
  ];
  const framed: Array<Uint8Array> = [];
  for (const [index, { record, where }] of named.entries()) {
    const bytes = frame(record, firstSequence + index, where);
    if (E.isLeft(bytes)) return bytes;
    framed.push(bytes.right);
  }
  return E.right(framed);
};

/** Creates `directory` if missing (its parent must exist); an existing one must be empty. */
const prepareDirectory = (
  directory: string,
): Effect.Effect<void, WriteStoreError | Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk.Disk;
    if (!(yield* exists(directory))) {
      yield* disk.makeDirectory(directory);
      yield* syncParent(directory);
      return;
    }
    const entries = yield* disk.readDirectory(directory);
    if (entries.length > 0) {
      return yield* new WriteStoreError({
        reason: "DirectoryNotEmpty",
        where: directory,
        detail: entries.slice(0, 8).join(", "),
      });
    }
  });

const writtenSegment = (
  directory: string,
  epoch: number,
  segment: PlannedSegment,
  size: number,
): WrittenSegment => {
  const records: Array<WrittenRecord> = [];
  let offset = segmentHeaderBytes;
  for (const [index, record] of segment.records.entries()) {
    records.push({ sequence: segment.firstSequence + index, offset, size: record.length });
    offset += record.length;
  }
  return {
    segmentId: segment.segmentId,
    path: Layout.segmentPath(directory, epoch, segment.segmentId),
    firstSequence: segment.firstSequence,
    records,
    sealed: segment.sealed,
    size,
  };
};

/**
 * Writes a complete store for `spec` into `directory` (created if missing,
 * its parent must exist; an existing one must be empty) and returns where
 * everything went.
 *
 * Order: STORE-V2, `epochs/EPOCH/` with MANIFEST, `segments/` and every
 * segment file, then CURRENT; every file and directory is fsynced, so a
 * `FaultDisk` crash afterwards keeps it all. Files are written in place
 * (no `.tmp`): this is a fixture writer, not the store's publication
 * protocol, so in a crash exploration it belongs in `setup`, not in the
 * workload. Fails with `WriteStoreError` (before writing anything) on an
 * option out of range or an unencodable event, or with the disk's
 * `DiskError`.
 *
 * @example
 * // Epoch 2 after a compaction: base in sealed segments, tail in the active one.
 * yield* Stores.writeStore(dir, {
 *   epoch: 2, firstSequence: 101, base, events: tail, sealBase: true, bytesPerSegment: 4096,
 * });
 */
export const writeStore = (
  directory: string,
  spec: StoreSpec = {},
): Effect.Effect<WrittenStore, WriteStoreError | Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk.Disk;
    const baseRecordCount = (spec.base ?? []).length;
    const recordCount = baseRecordCount + (spec.events ?? []).length;
    const resolved = resolveSpec(spec, recordCount);
    if (E.isLeft(resolved)) return yield* resolved.left;
    const { storeId, createdAt, epoch, parentEpoch, firstSequence } = resolved.right;
    const framed = frameAll(spec, firstSequence);
    if (E.isLeft(framed)) return yield* framed.left;
    const planned = planSegments(framed.right, firstSequence, {
      ...(spec.recordsPerSegment === undefined
        ? {}
        : { recordsPerSegment: spec.recordsPerSegment }),
      ...(spec.bytesPerSegment === undefined ? {} : { bytesPerSegment: spec.bytesPerSegment }),
      sealAfter: spec.sealBase === true ? baseRecordCount : 0,
      sealLast: spec.sealLast === true,
      emptyActive: spec.emptyActive === true,
    });
    const manifest: Manifest.Manifest = {
      storeId,
      epoch,
      parentEpoch,
      firstSequence,
      baseRecordCount,
      createdAt,
    };

    yield* prepareDirectory(directory);
    yield* createFile(Layout.markerPath(directory), encodeStoreMarker({ storeId, createdAt }));
    yield* disk.makeDirectory(Layout.epochsPath(directory));
    yield* disk.makeDirectory(Layout.epochPath(directory, epoch));
    yield* createFile(Layout.manifestPath(directory, epoch), encodeManifest(manifest));
    yield* disk.makeDirectory(Layout.segmentsPath(directory, epoch));
    const segments: Array<WrittenSegment> = [];
    for (const segment of planned) {
      const bytes = segmentBytes(segment, storeId);
      const path = Layout.segmentPath(directory, epoch, segment.segmentId);
      yield* createFile(path, bytes);
      segments.push(writtenSegment(directory, epoch, segment, bytes.length));
    }
    yield* disk.syncDirectory(Layout.segmentsPath(directory, epoch));
    yield* disk.syncDirectory(Layout.epochPath(directory, epoch));
    yield* disk.syncDirectory(Layout.epochsPath(directory));
    yield* disk.syncDirectory(directory);
    yield* createFile(Layout.currentPath(directory), encodeCurrentPointer({ storeId, epoch }));
    yield* disk.syncDirectory(directory);
    return {
      directory,
      storeId,
      manifest,
      lastSequence: firstSequence + recordCount - 1,
      segments,
    };
  });

// ---- damage ------------------------------------------------------------------

const checkByteCount = (what: string, value: number, max: number): Effect.Effect<void> =>
  Number.isSafeInteger(value) && value >= 0 && value <= max
    ? Effect.void
    : Effect.dieMessage(`${what} ${value} is outside 0..${max}`);

/**
 * Cuts the last `bytes` bytes off `file`, as a crash in the middle of an
 * append leaves the active segment: open then refuses with `IncompleteTail`
 * (or, cutting into a sealed segment's footer, a footer error). The file is
 * rewritten (the `Disk` service has no truncate) and fsynced. More bytes
 * than the file holds is a programmer error (the effect dies).
 */
export const truncateTail = (
  file: string,
  bytes: number,
): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk.Disk;
    const contents = yield* disk.readFile(file);
    yield* checkByteCount("bytes to cut", bytes, contents.length);
    yield* disk.remove(file);
    yield* createFile(file, contents.subarray(0, contents.length - bytes));
    yield* syncParent(file);
  });

/**
 * Flips bit `bit` (0 = least significant) of the byte at `offset` in
 * `file`, in place, fsynced: inside a record's payload that is
 * `CorruptRecord RecordChecksum` at open, inside its header
 * `HeaderChecksum`, inside a header or footer a `MalformedFile`. An offset
 * past the end is a programmer error (the effect dies).
 */
export const flipBit = (
  file: string,
  offset: number,
  bit = 0,
): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    if (!(Number.isInteger(bit) && bit >= 0 && bit <= 7)) {
      return yield* Effect.dieMessage(`bit ${bit} is outside 0..7`);
    }
    const byte = yield* withFile(file, "read", (handle) => handle.read(offset, 1));
    const found = byte[0];
    if (found === undefined) return yield* Effect.dieMessage(`${file} has no byte at ${offset}`);
    yield* overwriteAt(file, offset, Uint8Array.of(found ^ (1 << bit)));
  });

/** Writes `bytes` over `file` at `offset`, in place, fsynced (any other damage by hand). */
export const overwrite = (
  file: string,
  offset: number,
  bytes: Uint8Array,
): Effect.Effect<void, Disk.DiskError, Disk.Disk> => overwriteAt(file, offset, bytes);

/**
 * Removes `file` (e.g. a middle segment: `SegmentGap` at open; the highest:
 * the store simply ends earlier) and fsyncs its directory.
 */
export const removeFile = (file: string): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk.Disk;
    yield* disk.remove(file);
    yield* syncParent(file);
  });

/**
 * Adds a file the layout does not allow (e.g. `segments/notes.txt`:
 * `UnexpectedEntry` at open), durably. Its parent must exist.
 */
export const addFile = (
  file: string,
  bytes: Uint8Array = new Uint8Array(),
): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  Effect.zipRight(createFile(file, bytes), syncParent(file));

/**
 * Rewrites a segment's header to name the store `storeId` (with a valid
 * header CRC): a segment file copied from another store. Open refuses it
 * with `Mismatch StoreId` at offset 24, checked before anything else in the
 * file. Dies if the file does not start with a valid header.
 */
export const relabelSegment = (
  file: string,
  storeId: Uint8Array,
): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    const bytes = yield* withFile(file, "read", (handle) => handle.read(0, segmentHeaderBytes));
    const header = decodeSegmentHeader(bytes);
    if (E.isLeft(header)) {
      return yield* Effect.dieMessage(`${file} does not start with a segment header`);
    }
    if (storeId.length !== storeIdBytes) {
      return yield* Effect.dieMessage(
        `a STORE_ID has ${storeIdBytes} bytes, not ${storeId.length}`,
      );
    }
    yield* overwriteAt(file, 0, encodeSegmentHeader({ ...header.right, storeId }));
  });

/** Which entry marks a Store-v1 root (FORMAT.md). */
export type StoreV1Entry = "STORE" | "segments";

/**
 * Makes `directory` (created if missing) look like a Store-v1 root: a
 * `STORE` file (holding `contents`, default empty: the v1 layout is not
 * modelled, only recognised) or a `segments/` directory. Open and init
 * refuse it with `UnsupportedStoreV1 { found }` and create nothing.
 */
export const writeStoreV1Root = (
  directory: string,
  entry: StoreV1Entry = "STORE",
  contents: Uint8Array = new Uint8Array(),
): Effect.Effect<void, Disk.DiskError, Disk.Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk.Disk;
    if (!(yield* exists(directory))) {
      yield* disk.makeDirectory(directory);
      yield* syncParent(directory);
    }
    const target = Path.join(directory, entry);
    if (entry === "STORE") {
      yield* createFile(target, contents);
    } else {
      yield* disk.makeDirectory(target);
    }
    yield* disk.syncDirectory(directory);
  });
