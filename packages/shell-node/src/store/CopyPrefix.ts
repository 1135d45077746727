/**
 * `copyPrefix`: the explicit repair for a torn tail or a corrupt record
 * (EVENTS.md "Repairs are explicit operator commands that write a new store
 * or generation and leave the source untouched").
 *
 * It finds the longest valid prefix of the source's current generation —
 * the records before the first fault validation reports, or before the
 * first record core's fold refuses — folds it with core's fold, and writes
 * a NEW store at the target whose one generation's canonical base is
 * `Snapshot.snapshot` of that state with a retention that drops nothing.
 * It verifies the target before publishing it (the import's read-only
 * inspection must fold, whole, to the same state) and reports exactly
 * what was left out: from which file,
 * offset and sequence, how many records and bytes, and why.
 *
 * The source is only read: segment files are opened read-only and nothing
 * is created, renamed or written there. Its LOCK, when present, is flock'd
 * for the duration of the copy (without rewriting its description), so a
 * copy never races a live writer: a held lock is `Locked`.
 */
import { type Event, Generation, type HistoryError, Snapshot, State } from "@tay/core";
import * as Clock from "effect/Clock";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { Disk, type DiskError } from "../disk/Disk.js";
import * as Described from "../disk/Described.js";
import * as Import from "./Import.js";
import * as Init from "./Init.js";
import { formatStoreId, segmentFooterBytes, segmentHeaderBytes } from "./internal/codec.js";
import {
  isSegmentOf,
  refoldBeforeRefusal,
  scanPrefix,
  type SegmentFile,
  segmentFiles,
} from "./internal/copyPrefixScan.js";
import { readHolder } from "../disk/Lock.js";
import * as Layout from "./Layout.js";
import type * as Recovery from "./Recovery.js";
import {
  CopyVerificationFailed,
  HistoryRejected,
  type InitError,
  Locked,
  NotEmpty,
  type RecoveryError,
  type StoreError,
} from "./StoreError.js";

/** The fault that ends the prefix: a validation fault, or the fold's refusal of a record. */
export type PrefixFault = RecoveryError | HistoryRejected<HistoryError.HistoryError>;

/** Why no prefix can be copied. */
export type UnavailableReason =
  /** The fault is in the marker, pointer, manifest or directory layout, not in a segment. */
  | "OutsideSegments"
  /** The prefix ends inside the canonical base: no prefix of it folds to a state. */
  | "InsideBase";

/** No valid prefix can be copied: the fault is outside the segments, or inside the base. */
export class PrefixUnavailable extends Data.TaggedError("PrefixUnavailable")<{
  readonly path: string;
  readonly reason: UnavailableReason;
  readonly fault: PrefixFault;
  /** Records of the base present before the fault (for `InsideBase`). */
  readonly baseRecords: number;
  readonly baseRecordCount: number;
}> {
  /** The fault's own line, saying why no prefix is copied (and never that one could be). */
  get description(): Described.Description {
    const inner = this.fault.description;
    const why =
      this.reason === "OutsideSegments"
        ? "copy-prefix repairs faults inside segment files only"
        : `the fault lies inside the canonical base (${this.baseRecords} of ${this.baseRecordCount} base records are valid), so no prefix folds to a state`;
    return { ...inner, explanation: `${inner.explanation}; ${why}`, advice: undefined };
  }
  override get message(): string {
    return Described.message(this);
  }
}

// Defined with the store's errors (the import raises it too); named here as before.
export { CopyVerificationFailed };

/** Everything `copyPrefix` can fail with. */
export type CopyPrefixError =
  | PrefixUnavailable
  | CopyVerificationFailed
  | RecoveryError
  | HistoryRejected<HistoryError.HistoryError>
  | InitError
  | Import.ImportError
  | StoreError;

/** What the copy left out of the source. */
export interface LeftOut {
  /** The fault that ended the prefix (its tag and reason name it). */
  readonly fault: PrefixFault;
  /** The file where the prefix ends. */
  readonly path: string;
  /** The offset in that file where the left-out bytes start (a record's or structure's first byte). */
  readonly offset: number;
  /** The first source sequence left out. */
  readonly sequence: number;
  /**
   * Records left out: exact when every byte after the fault is valid (a
   * refused record and what follows it, or a torn record: 1); null when
   * corrupt bytes make the rest uncountable.
   */
  readonly records: number | null;
  /** Bytes of the generation's segment files from `offset` on. */
  readonly bytes: number;
  /** Later segment files left out whole. */
  readonly files: ReadonlyArray<string>;
}

/** What a copy did. */
export interface CopyPrefixReport {
  readonly source: {
    readonly path: string;
    readonly storeId: string;
    readonly epoch: number;
    readonly firstSequence: number;
  };
  /** The source records copied: `firstSequence..lastSequence` (last = first - 1 when none). */
  readonly copied: {
    readonly records: number;
    readonly firstSequence: number;
    readonly lastSequence: number;
    readonly jobs: number;
    readonly schedules: number;
    readonly lastJobId: number;
  };
  /** Null when the whole generation was valid and copied. */
  readonly leftOut: LeftOut | null;
  /** The target as verified after writing (before its staging directory was renamed onto it). */
  readonly target: Recovery.RecoveryReport;
  /** Records of the target's canonical base. */
  readonly baseRecords: number;
}

/** Retention that drops nothing: every finished_at is >= 0 > now - this. */
const keepEverythingMs = Number.MAX_SAFE_INTEGER;

/**
 * Holds the source's LOCK (flock only: the file is neither created nor
 * rewritten) for the scope, so no writer starts or runs during the copy.
 */
const holdSourceLock = (source: string) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const path = Layout.lockPath(source);
    const present = yield* Effect.either(disk.stat(path));
    // No LOCK: no writer ever opened this store (init creates it); nothing to hold.
    if (Either.isLeft(present)) return;
    yield* Effect.acquireRelease(
      disk
        .lock(path)
        .pipe(
          Effect.catchTag("LockHeld", () =>
            Effect.flatMap(readHolder(path), (holder) => Effect.fail(new Locked({ path, holder }))),
          ),
        ),
      (lock) => Effect.ignore(lock.release()),
    );
  });

/**
 * Refuses a target that holds anything but a LOCK before the source is
 * scanned (init checks again, under its lock, when it creates the store).
 */
const checkTarget = (target: string) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const entries = yield* Effect.either(disk.readDirectory(target));
    if (Either.isLeft(entries)) return;
    const others = entries.right.filter((name) => name !== Layout.lockName);
    if (others.length > 0) {
      return yield* new NotEmpty({ path: target, entries: others.slice(0, Init.listedEntriesMax) });
    }
  });

/** Where a fault's left-out bytes start in its file of `size` bytes. */
const leftOutStart = (fault: PrefixFault, size: number): number => {
  switch (fault._tag) {
    case "Mismatch":
      if (fault.field === "Sequence") return fault.offset - 8;
      if (fault.offset < segmentHeaderBytes) return 0;
      return Math.min(fault.offset, Math.max(0, size - segmentFooterBytes));
    case "BeyondSafeInteger":
      // The record's sequence field sits 8 bytes into the record.
      return fault.offset < segmentHeaderBytes ? 0 : fault.offset - 8;
    case "MalformedFile":
      return fault.kind === "SegmentHeader" ? 0 : Math.max(0, size - segmentFooterBytes);
    case "CorruptRecord":
    case "IncompleteTail":
    case "UndecodableEvent":
    case "HistoryRejected":
    case "InvalidSegment":
      return fault.offset;
    default:
      return 0;
  }
};

/** The fault's file, when it names a segment of the scanned generation. */
const segmentPathOf = (source: string, epoch: number, fault: PrefixFault): string | undefined =>
  "path" in fault && isSegmentOf(source, epoch, fault.path) ? fault.path : undefined;

/** Records left out after a physical fault (no refusal before it). */
const recordsAfterFault = (fault: PrefixFault): number | null =>
  fault._tag === "IncompleteTail" ? (fault.part === "Record" ? 1 : 0) : null;

const describeLeftOut = (
  fault: PrefixFault,
  path: string,
  sequence: number,
  records: number | null,
  files: ReadonlyArray<SegmentFile>,
): LeftOut => {
  const index = files.findIndex((file) => file.path === path);
  const file = files[index];
  const offset = Math.max(0, leftOutStart(fault, file?.size ?? 0));
  const later = index < 0 ? [] : files.slice(index + 1);
  const bytes =
    Math.max(0, (file?.size ?? 0) - offset) + later.reduce((sum, next) => sum + next.size, 0);
  return { fault, path, offset, sequence, records, bytes, files: later.map((next) => next.path) };
};

/**
 * The prefix to copy: the fold's state and what was left out. Fails with
 * `PrefixUnavailable` when the fault is outside the segment files or the
 * prefix ends inside the canonical base.
 */
const findPrefix = (source: string) =>
  Effect.gen(function* () {
    const scan = yield* scanPrefix(source);
    const { fold } = scan;
    const { manifest } = fold;
    let builder = fold.builder;
    if (manifest === undefined || builder === undefined) {
      if (scan.fault === undefined) {
        return yield* Effect.dieMessage("validation passed without starting the fold");
      }
      // Validation failed before it reached the records: nothing to salvage.
      return yield* new PrefixUnavailable({
        path: source,
        reason: "OutsideSegments",
        fault: scan.fault,
        baseRecords: 0,
        baseRecordCount: 0,
      });
    }
    const files = yield* segmentFiles(source, manifest.epoch);
    let leftOut: LeftOut | null = null;
    if (fold.refusal !== undefined) {
      const refolded = yield* refoldBeforeRefusal(source, fold.refusal);
      const located = refolded.located;
      builder = refolded.builder;
      leftOut = describeLeftOut(
        located,
        located.path,
        fold.refusal.sequence,
        scan.fault === undefined ? fold.afterRefusal : null,
        files,
      );
    } else if (scan.fault !== undefined) {
      const path = segmentPathOf(source, manifest.epoch, scan.fault);
      if (path === undefined) {
        return yield* new PrefixUnavailable({
          path: source,
          reason: "OutsideSegments",
          fault: scan.fault,
          baseRecords: Math.min(fold.folded, manifest.baseRecordCount),
          baseRecordCount: manifest.baseRecordCount,
        });
      }
      const sequence = manifest.firstSequence + fold.folded;
      leftOut = describeLeftOut(scan.fault, path, sequence, recordsAfterFault(scan.fault), files);
    }
    const finished = Generation.finish(builder);
    if (finished._tag === "Left") {
      return yield* new PrefixUnavailable({
        path: source,
        reason: "InsideBase",
        fault:
          leftOut?.fault ??
          new HistoryRejected<HistoryError.HistoryError>({
            path: source,
            offset: 0,
            sequence: manifest.firstSequence + fold.folded,
            reason: finished.left,
          }),
        baseRecords: Math.min(fold.folded, manifest.baseRecordCount),
        baseRecordCount: manifest.baseRecordCount,
      });
    }
    return { state: finished.right, manifest, fold, leftOut };
  });

/** Whether `base` folds to `state` (checked before anything is written). */
const foldsTo = (base: ReadonlyArray<Event.Event>, state: State.State): boolean => {
  const builder = Generation.start(base.length);
  for (const [index, event] of base.entries()) {
    if (Generation.apply(builder, index + 1, event)._tag === "Left") return false;
  }
  const folded = Generation.finish(builder);
  return folded._tag === "Right" && State.equals(folded.right, state);
};

/**
 * Writes `state` as the canonical base of a new store at `target`
 * (generation 1, sequences from 1): staged beside the target, verified and
 * published by one rename (`Import`, docs/cli.md "copy-prefix"), so a crash
 * leaves the target as it was or the whole copy. The import's one read
 * back of the copy checks it ends at the base's last record and folds,
 * whole, to `state` (a copy that does not is never published). Returns the
 * base size and the inspection of the copy.
 */
const writeCopy = (target: string, state: State.State) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis;
    const base = Snapshot.snapshot(state, { now, retentionMs: keepEverythingMs });
    if (!foldsTo(base, state)) {
      return yield* new CopyVerificationFailed({
        path: target,
        detail: "the snapshot of the prefix does not fold back to it (nothing was written)",
      });
    }
    const imported = yield* Import.importGeneration(
      target,
      { firstSequence: 1, baseRecordCount: base.length, events: base },
      { lastSequence: base.length, state, names: { copy: "the copy", source: "the prefix" } },
    );
    return { baseRecords: base.length, report: imported.inspection };
  });

/**
 * Copies the longest valid prefix of the store at `source` into a new store
 * at `target` (missing, or empty but for a LOCK), verifies the copy and
 * reports what was left out.
 *
 * Fails with `Locked` when a writer holds the source, `NotEmpty` (or
 * another init refusal) for the target, `PrefixUnavailable` when no prefix
 * can be salvaged, a `DiskError` or store error while writing, or
 * `CopyVerificationFailed`. Never writes to the source.
 *
 * @example
 *   const report = yield* CopyPrefix.copyPrefix("/var/lib/tay", "/var/lib/tay.repaired");
 *   report.leftOut // { path: ".../00000000000000000003.tay", offset: 81920, records: 1, ... }
 */
export const copyPrefix = (
  source: string,
  target: string,
): Effect.Effect<CopyPrefixReport, CopyPrefixError | DiskError, Disk> =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* checkTarget(target);
      yield* holdSourceLock(source);
      const prefix = yield* findPrefix(source);
      const { baseRecords, report } = yield* writeCopy(target, prefix.state);
      const { manifest, fold, state } = prefix;
      return {
        source: {
          path: source,
          storeId: formatStoreId(manifest.storeId),
          epoch: manifest.epoch,
          firstSequence: manifest.firstSequence,
        },
        copied: {
          records: fold.folded,
          firstSequence: manifest.firstSequence,
          lastSequence: manifest.firstSequence + fold.folded - 1,
          jobs: State.jobCount(state),
          schedules: state.schedules.size,
          lastJobId: state.lastJobId,
        },
        leftOut: prefix.leftOut,
        target: report,
        baseRecords,
      } satisfies CopyPrefixReport;
    }),
  );
