/**
 * Recovery's validation pass, shared by `open` (under the lock) and
 * `inspect` (without it): marker, pointer, manifest, the directory entries,
 * every segment and record, every event decoded and folded into the
 * caller's projection. Reads only.
 */
import type { Event } from "@tay/core";
import type * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import { Disk, type DiskError } from "../../disk/Disk.js";
import * as Layout from "../Layout.js";
import type { Projection, Resumed, SegmentDigest } from "../../log/Projection.js";
import {
  BudgetExceeded,
  HistoryRejected,
  IncompleteInitialization,
  Mismatch,
  MissingBase,
  MissingEntry,
  type RecoveryError,
  SegmentGap,
  StoreNotFound,
  UndecodableEvent,
  UnexpectedEntry,
  UnsupportedStoreV1,
} from "../StoreError.js";
import type { RecoveryBudgets } from "../StoreOptions.js";
import {
  decodeCurrentPointer,
  decodeEventAt,
  decodeManifest,
  decodeStoreMarker,
  type FixedLayoutError,
  formatStoreId,
  type Manifest,
  type StoreMarker,
} from "./codec.js";
import { withFile } from "../../disk/Files.js";
import { equalBytes } from "./bytes.js";
import { chunkBuffers } from "./chunkReader.js";
import { NeedleFinder } from "./needleFinder.js";
import {
  fixedLayoutFailure,
  type ScannedBatch,
  type ScannedSegment,
  scanSegment,
} from "./segmentScan.js";

/** A generation directory under `epochs/` other than CURRENT's. */
export interface OrphanedGeneration {
  readonly epoch: number;
  readonly path: string;
  /** `Staged`: newer than CURRENT's (a compaction that never published); `Superseded`: older. */
  readonly kind: "Staged" | "Superseded";
}

/** Everything validation learned: the caller activates a writer on it, or reports it. */
export interface Validated<S> {
  readonly directory: string;
  readonly marker: StoreMarker;
  readonly manifest: Manifest;
  readonly segments: ReadonlyArray<ScannedSegment>;
  /** Records of the generation. */
  readonly records: number;
  /** The last sequence present, `firstSequence - 1` when none. */
  readonly lastSequence: number;
  /** Bytes of the generation's segment files. */
  readonly bytes: number;
  readonly orphans: ReadonlyArray<OrphanedGeneration>;
  /** `epochs/EPOCH/SEGMENT.tmp` when present (ignored, reported), else null. */
  readonly stagedSegment: string | null;
  readonly state: S;
  /** Time spent validating (reading, checking), ms, folding excluded. */
  readonly validateMs: number;
  /** Time spent decoding events and in the projection, ms. */
  readonly foldMs: number;
}

/**
 * The checks that need no lock: the directory exists, is not a Store-v1
 * root, has a marker and a pointer. Open runs them before locking so it
 * never creates a LOCK in a directory that holds no Store-v2.
 */
export const classifyRoot = (
  directory: string,
): Effect.Effect<
  void,
  StoreNotFound | UnsupportedStoreV1 | IncompleteInitialization | DiskError,
  Disk
> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const stat = yield* disk.stat(directory).pipe(
      Effect.catchIf(
        (error) => error.code === "ENOENT",
        () => Effect.fail(new StoreNotFound({ path: directory, reason: "MissingDirectory" })),
      ),
    );
    if (stat.type !== "directory") {
      return yield* new StoreNotFound({ path: directory, reason: "NotADirectory" });
    }
    const entries = yield* disk.readDirectory(directory);
    if (entries.includes(Layout.storeV1MarkerName)) {
      return yield* new UnsupportedStoreV1({ path: directory, found: "STORE" });
    }
    if (entries.includes(Layout.storeV1SegmentsName)) {
      return yield* new UnsupportedStoreV1({ path: directory, found: "segments" });
    }
    if (!entries.includes(Layout.markerName)) {
      return yield* new StoreNotFound({ path: directory, reason: "MissingMarker" });
    }
    if (!entries.includes(Layout.currentName)) {
      return yield* new IncompleteInitialization({ path: directory });
    }
  });

/** Reads and decodes a fixed-layout small file, mapping codec errors to the store's. */
const readFixed = <A>(
  path: string,
  kind: "Marker" | "Current" | "Manifest",
  decode: (
    bytes: Uint8Array,
  ) =>
    | { readonly _tag: "Left"; readonly left: FixedLayoutError }
    | { readonly _tag: "Right"; readonly right: A },
) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const bytes = yield* disk.readFile(path).pipe(
      Effect.catchIf(
        (error) => error.code === "ENOENT",
        () => Effect.fail(new MissingEntry({ path })),
      ),
    );
    const decoded = decode(bytes);
    if (decoded._tag === "Left") return yield* fixedLayoutFailure(path, kind, 0, decoded.left);
    return decoded.right;
  });

/** Mutable tallies against the budgets. */
interface Spent {
  /** The store: what a `BudgetExceeded` names. */
  readonly directory: string;
  bytesDecoded: number;
  candidatePayloadBytes: number;
  directoryEntries: number;
  historyRecords: number;
}

/** Adds `amount` to a tally: the `BudgetExceeded` to fail with once past its limit. */
const overBudget = (
  spent: Spent,
  budgets: RecoveryBudgets,
  budget: keyof RecoveryBudgets,
  amount: number,
): BudgetExceeded | undefined => {
  spent[budget] += amount;
  return spent[budget] > budgets[budget]
    ? new BudgetExceeded({ path: spent.directory, budget, limit: budgets[budget] })
    : undefined;
};

const spend = (
  spent: Spent,
  budgets: RecoveryBudgets,
  budget: keyof RecoveryBudgets,
  amount: number,
): Effect.Effect<void, BudgetExceeded> => {
  const over = overBudget(spent, budgets, budget, amount);
  return over === undefined ? Effect.void : Effect.fail(over);
};

/**
 * Lists `epochs/`: CURRENT's epoch must be there; every other entry must be
 * an epoch name and is an orphaned generation (reported, never deleted).
 */
const listEpochs = (
  directory: string,
  currentEpoch: number,
  spent: Spent,
  budgets: RecoveryBudgets,
) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const epochsPath = Layout.epochsPath(directory);
    const entries = yield* disk.readDirectory(epochsPath).pipe(
      Effect.catchIf(
        (error) => error.code === "ENOENT",
        () => Effect.fail(new MissingEntry({ path: epochsPath })),
      ),
    );
    yield* spend(spent, budgets, "directoryEntries", entries.length);
    const orphans: Array<OrphanedGeneration> = [];
    let found = false;
    for (const name of entries) {
      const epoch = Layout.parseEpochName(name);
      if (epoch === undefined) {
        return yield* new UnexpectedEntry({ path: epochsPath, name });
      }
      if (epoch === currentEpoch) {
        found = true;
      } else {
        orphans.push({
          epoch,
          path: Layout.epochPath(directory, epoch),
          kind: epoch > currentEpoch ? "Staged" : "Superseded",
        });
      }
    }
    if (!found) return yield* new MissingEntry({ path: Layout.epochPath(directory, currentEpoch) });
    return orphans;
  });

/** Lists `segments/`: only segment names, IDs 1..n without gaps. */
const listSegments = (segmentsPath: string, spent: Spent, budgets: RecoveryBudgets) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const entries = yield* disk.readDirectory(segmentsPath).pipe(
      Effect.catchIf(
        (error) => error.code === "ENOENT",
        () => Effect.fail(new MissingEntry({ path: segmentsPath })),
      ),
    );
    yield* spend(spent, budgets, "directoryEntries", entries.length);
    const ids: Array<number> = [];
    for (const name of entries) {
      const id = Layout.parseSegmentName(name);
      if (id === undefined) return yield* new UnexpectedEntry({ path: segmentsPath, name });
      ids.push(id);
    }
    ids.sort((left, right) => left - right);
    for (let position = 0; position < ids.length; position++) {
      const id = ids[position] ?? 0;
      if (id !== position + 1) {
        return yield* new SegmentGap({ path: segmentsPath, expected: position + 1, found: id });
      }
    }
    return ids;
  });

/** A `Mismatch` when `found` (a STORE_ID read at `path`) is not the marker's. */
const checkStoreId = (
  path: string,
  found: Uint8Array,
  marker: StoreMarker,
): Effect.Effect<void, Mismatch> =>
  equalBytes(found, marker.storeId)
    ? Effect.void
    : Effect.fail(
        new Mismatch({
          path,
          offset: 8,
          field: "StoreId",
          expected: formatStoreId(marker.storeId),
          found: formatStoreId(found),
        }),
      );

/**
 * The current epoch's directory holds its MANIFEST and `segments/`, and at
 * most a leftover `SEGMENT.tmp` of an interrupted segment creation
 * (FORMAT.md, "Creating a segment"): reported, never read as part of the
 * generation. Returns that leftover's path, or null.
 */
const checkEpochEntries = (
  directory: string,
  epoch: number,
  spent: Spent,
  budgets: RecoveryBudgets,
) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const epochPath = Layout.epochPath(directory, epoch);
    const entries = yield* disk.readDirectory(epochPath);
    yield* spend(spent, budgets, "directoryEntries", entries.length);
    let stagedSegment: string | null = null;
    for (const name of entries) {
      if (name === Layout.segmentStagingName) {
        stagedSegment = Layout.segmentStagingPath(directory, epoch);
      } else if (name !== Layout.manifestName && name !== Layout.segmentsName) {
        return yield* new UnexpectedEntry({ path: epochPath, name });
      }
    }
    return stagedSegment;
  });

/**
 * The small files and the directory layout of the current generation:
 * marker, pointer, `epochs/` (orphans reported), the epoch's entries and
 * its manifest, each checked against the others.
 */
const readGeneration = (directory: string, spent: Spent, budgets: RecoveryBudgets) =>
  Effect.gen(function* () {
    yield* classifyRoot(directory);
    const marker = yield* readFixed(Layout.markerPath(directory), "Marker", decodeStoreMarker);
    const currentPath = Layout.currentPath(directory);
    const current = yield* readFixed(currentPath, "Current", decodeCurrentPointer);
    yield* checkStoreId(currentPath, current.storeId, marker);
    const orphans = yield* listEpochs(directory, current.epoch, spent, budgets);
    const stagedSegment = yield* checkEpochEntries(directory, current.epoch, spent, budgets);
    const manifestPath = Layout.manifestPath(directory, current.epoch);
    const manifest = yield* readFixed(manifestPath, "Manifest", decodeManifest);
    yield* checkStoreId(manifestPath, manifest.storeId, marker);
    if (manifest.epoch !== current.epoch) {
      return yield* new Mismatch({
        path: manifestPath,
        offset: 24,
        field: "Epoch",
        expected: `${current.epoch}`,
        found: `${manifest.epoch}`,
      });
    }
    return { marker, manifest, orphans, stagedSegment };
  });

/** True when the segments `resumed` names hold exactly the records through its `through`. */
const covers = <S>(resumed: Resumed<S>, manifest: Manifest): boolean => {
  let records = 0;
  resumed.segments.forEach((segment) => {
    records += segment.records;
  });
  return (
    resumed.segments.every((segment, position) => segment.id === position + 1) &&
    manifest.firstSequence + records - 1 === resumed.through &&
    resumed.through - manifest.firstSequence + 1 >= manifest.baseRecordCount
  );
};

const digestOf = (scanned: ScannedSegment): SegmentDigest => ({
  id: scanned.segmentId,
  records: scanned.recordCount,
  end: scanned.recordsEnd,
  crc: scanned.crc,
});

const describeDigest = (digest: SegmentDigest): string =>
  `segment ${digest.id}: ${digest.records} records ending at ${digest.end}, CRC ${digest.crc}`;

/**
 * Decodes records and folds them into the projection, counting them
 * against the budgets and timing the fold apart from validation.
 */
class Folder<S, E> {
  state: S;
  foldNanos = 0n;
  /** What the projection resumed from, when it did: its records are not decoded. */
  readonly resumed: Resumed<S> | undefined;
  // The last sequence not decoded (none when not resumed).
  private readonly through: number;

  constructor(
    private readonly projection: Projection<S, E>,
    manifest: Manifest,
    private readonly spent: Spent,
    private readonly budgets: RecoveryBudgets,
    private readonly clock: Clock.Clock,
    resume: boolean,
  ) {
    const resumed = resume ? projection.resume?.(manifest) : undefined;
    this.resumed = resumed !== undefined && covers(resumed, manifest) ? resumed : undefined;
    this.through = this.resumed?.through ?? manifest.firstSequence - 1;
    this.state = this.resumed === undefined ? projection.start(manifest) : this.resumed.state;
  }

  /**
   * The `Mismatch` when `scanned`, the generation's segment at `position`,
   * is not the one the resumed state folded (or holds records it folded
   * without naming the segment); undefined otherwise.
   */
  checkSegment(position: number, scanned: ScannedSegment): Mismatch | undefined {
    if (this.resumed === undefined) return undefined;
    const named = this.resumed.segments[position];
    const found = digestOf(scanned);
    if (named === undefined && scanned.firstSequence > this.through) return undefined;
    if (
      named !== undefined &&
      named.id === found.id &&
      named.records === found.records &&
      named.end === found.end &&
      named.crc === found.crc
    ) {
      return undefined;
    }
    // The segment the image named last, grown since (the engine appended to
    // it after the open that resumed, then stopped without a close): its
    // bytes up to the image's end are the ones folded, the rest is folded now.
    if (
      named !== undefined &&
      position === this.resumed.segments.length - 1 &&
      named.id === found.id &&
      named.records < found.records &&
      named.end < found.end &&
      scanned.prefixCrc === named.crc
    ) {
      return undefined;
    }
    return new Mismatch({
      path: scanned.path,
      offset: 0,
      field: "StateImage",
      expected: named === undefined ? "no segment" : describeDigest(named),
      found: describeDigest(found),
    });
  }

  /**
   * Where the scan of the generation's segment at `position` notes the CRC
   * of the bytes before (`scanSegment`'s `prefixEnd`): the end the image
   * names for its last segment, which may have grown since.
   */
  prefixEndAt(position: number): number | undefined {
    const segments = this.resumed?.segments;
    if (segments === undefined || position !== segments.length - 1) return undefined;
    return segments[position]?.end;
  }

  /**
   * Folds one batch of records of the segment at `path`. One synchronous
   * step: the clock is read directly, since a generator with two clock
   * effects per batch kept whole batches alive across young-generation
   * collections (measured: ~5 MB copied per scavenge).
   */
  fold(path: string) {
    return (batch: ScannedBatch) =>
      Effect.suspend(() => {
        const before = this.clock.unsafeCurrentTimeNanos();
        const refused = this.foldRecords(path, batch);
        this.foldNanos += this.clock.unsafeCurrentTimeNanos() - before;
        if (refused !== undefined) return Effect.fail(refused);
        const between = this.projection.between;
        return between === undefined ? Effect.void : between(this.state);
      });
  }

  /**
   * Decodes and folds a batch of records, in order: the first refusal, or
   * undefined. A plain loop (the Effect around it runs once per batch);
   * each event is decoded in place from the scan's buffer.
   */
  private foldRecords(
    path: string,
    batch: ScannedBatch,
  ): BudgetExceeded | UndecodableEvent | HistoryRejected<E> | undefined {
    const { bytes, bytesStart, starts, types, schemas, payloadStarts, payloadEnds } = batch;
    let current = this.state;
    // Records the resumed state folded already: counted, not decoded.
    const folded = Math.min(batch.count, Math.max(0, this.through - batch.firstSequence + 1));
    for (let position = 0; position < folded; position++) {
      const over = this.overBudget((payloadEnds[position] ?? 0) - (payloadStarts[position] ?? 0));
      if (over !== undefined) return over;
    }
    const wanted = this.wanted(batch);
    try {
      for (let position = folded; position < batch.count; position++) {
        const payloadStart = payloadStarts[position] ?? 0;
        const payloadEnd = payloadEnds[position] ?? 0;
        const over = this.overBudget(payloadEnd - payloadStart);
        if (over !== undefined) return over;
        if (wanted !== undefined && !wanted.within(payloadStart, payloadEnd)) continue;
        const sequence = batch.firstSequence + position;
        const type = types[position] ?? 0;
        const schema = schemas[position] ?? 0;
        const event = decodeEventAt(type, schema, bytes, payloadStart, payloadEnd);
        if (event._tag === "Left") {
          const offset = bytesStart + (starts[position] ?? 0);
          return new UndecodableEvent({ path, offset, sequence, reason: event.left });
        }
        const next = this.projection.apply(current, sequence, event.right satisfies Event.Event);
        if (next._tag === "Left") {
          const offset = bytesStart + (starts[position] ?? 0);
          return new HistoryRejected<E>({ path, offset, sequence, reason: next.left });
        }
        current = next.right;
      }
      return undefined;
    } finally {
      this.state = current;
    }
  }

  /**
   * The search for the projection's needles in `batch`'s bytes (records
   * without one are neither decoded nor applied), or undefined: it wants
   * every record. A batch's payloads lie in its bytes in rising order.
   */
  private wanted(batch: ScannedBatch): NeedleFinder | undefined {
    const { needles } = this.projection;
    if (needles === undefined) return undefined;
    const finder = new NeedleFinder(needles.map((needle) => Buffer.from(needle)));
    // Up to the batch's last payload: the rest of the chunk is other batches'.
    finder.reset(batch.bytes, batch.payloadEnds[batch.count - 1] ?? 0);
    return finder;
  }

  // As `spend`: count, then compare; the first budget passed wins.
  private overBudget(payloadBytes: number): BudgetExceeded | undefined {
    const { spent, budgets } = this;
    spent.historyRecords += 1;
    if (spent.historyRecords > budgets.historyRecords) {
      return new BudgetExceeded({
        path: spent.directory,
        budget: "historyRecords",
        limit: budgets.historyRecords,
      });
    }
    spent.candidatePayloadBytes += payloadBytes;
    if (spent.candidatePayloadBytes > budgets.candidatePayloadBytes) {
      return new BudgetExceeded({
        path: spent.directory,
        budget: "candidatePayloadBytes",
        limit: budgets.candidatePayloadBytes,
      });
    }
    return undefined;
  }
}

/**
 * Scans every segment of the generation in order, folding its records and
 * running `afterBatch` after each batch folded.
 */
const scanSegments = <S, E, X, R>(
  generation: {
    readonly directory: string;
    readonly epoch: number;
    readonly ids: ReadonlyArray<number>;
  },
  marker: StoreMarker,
  firstSequence: number,
  spent: Spent,
  budgets: RecoveryBudgets,
  folder: Folder<S, E>,
  afterBatch: AfterBatch<X, R>,
  sealedOnTrust: boolean,
) =>
  Effect.gen(function* () {
    const { directory, epoch, ids } = generation;
    const segments: Array<ScannedSegment> = [];
    let nextSequence = firstSequence;
    let bytes = 0;
    // One pair of read buffers for every segment: scanned one after another.
    const buffers = chunkBuffers();
    for (const id of ids) {
      const path = Layout.segmentPath(directory, epoch, id);
      const target = {
        path,
        segmentId: id,
        firstSequence: nextSequence,
        storeId: marker.storeId,
        highest: id === ids.length,
      };
      const scanned = yield* withFile(path, "read", (handle) =>
        Effect.gen(function* () {
          const size = yield* handle.size();
          yield* spend(spent, budgets, "bytesDecoded", size);
          const fold = folder.fold(path);
          return yield* scanSegment(
            handle,
            size,
            target,
            afterBatch === undefined
              ? fold
              : (batch: ScannedBatch) => Effect.zipRight(fold(batch), afterBatch()),
            buffers,
            sealedOnTrust,
            folder.prefixEndAt(segments.length),
          );
        }),
      );
      const unlike = folder.checkSegment(segments.length, scanned);
      if (unlike !== undefined) return yield* unlike;
      segments.push(scanned);
      nextSequence += scanned.recordCount;
      bytes += scanned.size;
    }
    return { segments, nextSequence, bytes };
  });

/**
 * What runs after each batch of records is folded (at most
 * `deliverRecordsMax`), before the next is read: how `tay copy` writes a
 * page out while it reads. None for open.
 */
export type AfterBatch<X, R> = (() => Effect.Effect<void, X, R>) | undefined;

/**
 * What the scanned generation lacks, if anything: a segment the resumed
 * state image names, or records of the base its manifest counts.
 */
const shortGeneration = <S>(
  segmentsPath: string,
  resumed: Resumed<S> | undefined,
  segmentCount: number,
  manifest: Manifest,
  records: number,
): Mismatch | MissingBase | undefined => {
  if (resumed !== undefined && resumed.segments.length > segmentCount) {
    return new Mismatch({
      path: segmentsPath,
      offset: 0,
      field: "StateImage",
      expected: `${resumed.segments.length} segments`,
      found: `${segmentCount}`,
    });
  }
  if (records < manifest.baseRecordCount) {
    return new MissingBase({
      path: segmentsPath,
      baseRecordCount: manifest.baseRecordCount,
      records,
    });
  }
  return undefined;
};

/**
 * Validates the store in `directory` and folds its current generation into
 * `projection` (running `afterBatch` after each batch). Fails with the
 * first fault, naming its path, offset and sequence, or `afterBatch`'s
 * error; writes nothing.
 */
export const validate = <S, E, X = never, R = never>(
  directory: string,
  budgets: RecoveryBudgets,
  projection: Projection<S, E>,
  afterBatch?: AfterBatch<X, R>,
  /**
   * Sealed segments' records without their own CRCs (their segment CRC
   * vouches for them at each segment's end): a failure then says only
   * that something failed, and the caller validates again without this to
   * learn what (`validateOnTrust`). Default false.
   */
  sealedOnTrust = false,
  /**
   * Offer the projection to resume (`Projection.resume`): the records it
   * folded already are checked, not decoded. Default false.
   */
  resume = false,
): Effect.Effect<Validated<S>, RecoveryError | HistoryRejected<E> | X, Disk | R> =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock;
    const startedNanos = clock.unsafeCurrentTimeNanos();
    const spent: Spent = {
      directory,
      bytesDecoded: 0,
      candidatePayloadBytes: 0,
      directoryEntries: 0,
      historyRecords: 0,
    };
    const { marker, manifest, orphans, stagedSegment } = yield* readGeneration(
      directory,
      spent,
      budgets,
    );
    const segmentsPath = Layout.segmentsPath(directory, manifest.epoch);
    const ids = yield* listSegments(segmentsPath, spent, budgets);
    const folder = new Folder(projection, manifest, spent, budgets, clock, resume);
    const { segments, nextSequence, bytes } = yield* scanSegments(
      { directory, epoch: manifest.epoch, ids },
      marker,
      manifest.firstSequence,
      spent,
      budgets,
      folder,
      afterBatch,
      sealedOnTrust,
    );
    const records = nextSequence - manifest.firstSequence;
    const short = shortGeneration(segmentsPath, folder.resumed, segments.length, manifest, records);
    if (short !== undefined) return yield* short;
    const totalNanos = clock.unsafeCurrentTimeNanos() - startedNanos;
    return {
      directory,
      marker,
      manifest,
      segments,
      records,
      lastSequence: nextSequence - 1,
      bytes,
      orphans,
      stagedSegment,
      state: folder.state,
      validateMs: Number(totalNanos - folder.foldNanos) / 1e6,
      foldMs: Number(folder.foldNanos) / 1e6,
    };
  });

/**
 * `validate` with sealed segments' records on trust of their segment CRC
 * (~0.25 s of a 1,000,000-record open is the records' own CRCs), and, if
 * that fails in any way, `validate` again with every record's CRCs, whose
 * outcome is the answer: a fault is then named by its record, and nothing
 * the first fold made is kept (the projection starts again). Open's
 * validation (docs/store.md, "Record CRCs at open"). A projection that
 * can resume (`Projection.resume`) is offered to in a pass before those.
 */
export const validateOnTrust = <S, E, X = never, R = never>(
  directory: string,
  budgets: RecoveryBudgets,
  projection: Projection<S, E>,
  afterBatch?: AfterBatch<X, R>,
): Effect.Effect<Validated<S>, RecoveryError | HistoryRejected<E> | X, Disk | R> => {
  const checked = validate(directory, budgets, projection, afterBatch);
  const trusting = Effect.catchAll(
    validate(directory, budgets, projection, afterBatch, true),
    () => checked,
  );
  if (projection.resume === undefined) return trusting;
  // Resumed first (docs/store.md, "The state image"): a segment unlike the
  // image's is no fault of the log, so the pass on trust comes next as it
  // would have without an image; any other failure goes to the checked pass.
  return Effect.catchAll(
    validate(directory, budgets, projection, afterBatch, true, true),
    (error) => (error instanceof Mismatch && error.field === "StateImage" ? trusting : checked),
  );
};
