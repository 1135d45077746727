/**
 * The read side of `copyPrefix`: find the longest valid prefix of a store's
 * current generation and fold it, without the lock's writer role and
 * without writing a byte.
 *
 * Recovery's validation stops at the first fault; records accepted before
 * it have already been handed to the projection (see `scanSegment`), so a
 * projection that keeps its builder outside the recovery call still holds
 * the folded prefix when validation fails. A refusal of the fold does not
 * stop this projection: it notes the refused record and goes on counting
 * the records after it, so the report can say exactly how many were left
 * out. A refusal poisons core's builder, so a second pass folds the
 * records before the refused one again into a fresh builder and stops at
 * it, which also yields its file and offset.
 */
import * as Path from "node:path";
import { Generation, type HistoryError } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { Disk } from "../../disk/Disk.js";
import * as Layout from "../Layout.js";
import type { Projection } from "../../log/Projection.js";
import * as Recovery from "../Recovery.js";
import { HistoryRejected, type RecoveryError } from "../StoreError.js";
import type { Manifest } from "./codec.js";

/** What the tolerant fold saw. Mutable: the projection fills it in place. */
export interface PrefixFold {
  manifest: Manifest | undefined;
  builder: Generation.Builder | undefined;
  /** Records folded into `builder` (the prefix); the builder is unusable after a refusal. */
  folded: number;
  /** The first record the fold refused, and why. */
  refusal: { readonly sequence: number; readonly error: HistoryError.HistoryError } | undefined;
  /** Records from the refused one on (itself included). */
  afterRefusal: number;
}

const emptyFold = (): PrefixFold => ({
  manifest: undefined,
  builder: undefined,
  folded: 0,
  refusal: undefined,
  afterRefusal: 0,
});

/** Folds while the history is legal, then only counts; never refuses. */
const tolerantProjection = (fold: PrefixFold): Projection<PrefixFold, never> => ({
  start: (manifest) => {
    Object.assign(fold, emptyFold());
    fold.manifest = manifest;
    fold.builder = Generation.start(manifest.baseRecordCount);
    return fold;
  },
  apply: (state, sequence, event) => {
    if (state.refusal !== undefined || state.builder === undefined) {
      state.afterRefusal += 1;
      return Either.right(state);
    }
    const applied = Generation.apply(state.builder, sequence, event);
    if (applied._tag === "Left") {
      state.refusal = { sequence, error: applied.left };
      state.afterRefusal = 1;
    } else {
      state.folded += 1;
    }
    return Either.right(state);
  },
});

/** Why the refolding pass stopped: at the refused record, or earlier because the store changed. */
type Stop =
  | { readonly _tag: "Stop" }
  | { readonly _tag: "Changed"; readonly error: HistoryError.HistoryError };

/**
 * Folds every record before `sequence` into `holder.builder` and stops at
 * `sequence` (a failed builder cannot be resumed, so the prefix before a
 * refusal is folded again by this second pass).
 */
const refoldUntil = (
  sequence: number,
  holder: { builder: Generation.Builder | undefined },
): Projection<null, Stop> => ({
  start: (manifest) => {
    holder.builder = Generation.start(manifest.baseRecordCount);
    return null;
  },
  apply: (state, at, event) => {
    if (at === sequence) return Either.left({ _tag: "Stop" });
    if (holder.builder === undefined) return Either.right(state);
    const applied = Generation.apply(holder.builder, at, event);
    return applied._tag === "Left"
      ? Either.left({ _tag: "Changed", error: applied.left })
      : Either.right(state);
  },
});

/** The outcome of the tolerant pass: the fold, and the validation's verdict. */
export interface PrefixScan {
  readonly fold: PrefixFold;
  /** Validation's first fault, or undefined when every byte is valid. */
  readonly fault: RecoveryError | undefined;
}

/** Runs the tolerant pass over `directory`'s current generation. */
export const scanPrefix = (directory: string): Effect.Effect<PrefixScan, never, Disk> =>
  Effect.gen(function* () {
    const fold = emptyFold();
    const inspected = yield* Effect.either(
      Recovery.inspect(directory, {}, tolerantProjection(fold)),
    );
    if (Either.isRight(inspected)) {
      return { fold, fault: undefined };
    }
    const fault = inspected.left;
    // This projection never refuses, so recovery cannot report its refusal.
    if (fault._tag === "HistoryRejected") return yield* Effect.dieMessage("tolerant fold refused");
    return { fold, fault };
  });

/**
 * The second pass after a refusal at `refusal.sequence`: folds the records
 * before it into a fresh builder, and finds the refused record's file and
 * offset (a `HistoryRejected` carrying the fold's own error). Fails with
 * the validation fault, or the refusal itself, if the store changed
 * between the passes.
 */
export const refoldBeforeRefusal = (
  directory: string,
  refusal: { readonly sequence: number; readonly error: HistoryError.HistoryError },
): Effect.Effect<
  {
    readonly located: HistoryRejected<HistoryError.HistoryError>;
    readonly builder: Generation.Builder;
  },
  RecoveryError | HistoryRejected<HistoryError.HistoryError>,
  Disk
> =>
  Effect.gen(function* () {
    const holder: { builder: Generation.Builder | undefined } = { builder: undefined };
    const located = yield* Effect.either(
      Recovery.inspect(directory, {}, refoldUntil(refusal.sequence, holder)),
    );
    const changed = new HistoryRejected<HistoryError.HistoryError>({
      path: directory,
      offset: 0,
      sequence: refusal.sequence,
      reason: refusal.error,
    });
    if (Either.isRight(located)) return yield* Effect.fail(changed);
    const error = located.left;
    if (error._tag !== "HistoryRejected") return yield* Effect.fail(error);
    if (error.reason._tag !== "Stop" || holder.builder === undefined) {
      return yield* Effect.fail(changed);
    }
    return {
      located: new HistoryRejected<HistoryError.HistoryError>({
        path: error.path,
        offset: error.offset,
        sequence: error.sequence,
        reason: refusal.error,
      }),
      builder: holder.builder,
    };
  });

/** A segment file of the generation and its size. */
export interface SegmentFile {
  readonly id: number;
  readonly path: string;
  readonly size: number;
}

/**
 * The segment files of `epoch` in ID order with their sizes (names that are
 * not segment names are skipped: validation already judged them).
 */
export const segmentFiles = (
  directory: string,
  epoch: number,
): Effect.Effect<ReadonlyArray<SegmentFile>, never, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const segmentsPath = Layout.segmentsPath(directory, epoch);
    const names = yield* disk
      .readDirectory(segmentsPath)
      .pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []));
    const files: Array<SegmentFile> = [];
    for (const name of names) {
      const id = Layout.parseSegmentName(name);
      if (id === undefined) continue;
      const path = Path.join(segmentsPath, name);
      const stat = yield* Effect.either(disk.stat(path));
      files.push({ id, path, size: Either.isRight(stat) ? stat.right.size : 0 });
    }
    return files.sort((left, right) => left.id - right.id);
  });

/** True when `path` names a segment file of `directory`'s generation `epoch`. */
export const isSegmentOf = (directory: string, epoch: number, path: string): boolean =>
  Path.dirname(path) === Layout.segmentsPath(directory, epoch) &&
  Layout.parseSegmentName(Path.basename(path)) !== undefined;
