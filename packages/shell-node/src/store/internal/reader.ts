/**
 * `readFrom`: a contiguous run of entries from a sequence, served from the
 * generation's files (up to what the writer has written) and then from
 * memory (what is being written or still pending), taken as one atomic
 * snapshot of the state so the two halves meet without a gap or overlap.
 */
import * as Effect from "effect/Effect";
import type { Disk } from "../../disk/Disk.js";
import type { Mentioning } from "../../log/Log.js";
import type { Entry } from "../../log/Projection.js";
import { Compacted, type StoreError } from "../StoreError.js";
import { chunkBuffers } from "./chunkReader.js";
import { segmentFooterBytes } from "./codec.js";
import { mentionChunkBytes, readSegmentMentioning } from "./mentionRead.js";
import { readSegment, type SegmentReadError, type SegmentView } from "./segmentRead.js";
import { lastAssigned, type StoreState } from "./storeState.js";

/** What one read sees, copied out of the state in one step. */
interface Snapshot {
  readonly epoch: number;
  readonly firstSequence: number;
  readonly lastSequence: number;
  readonly segments: ReadonlyArray<SegmentView>;
  /** Unwritten entries from the requested sequence, at most `limit`. */
  readonly memory: ReadonlyArray<Entry>;
}

const snapshot = (state: StoreState, from: number, limit: number): Snapshot => {
  const generation = state.generation;
  const segments: Array<SegmentView> = [];
  for (const segment of generation.segments) {
    if (segment.recordCount === 0) continue;
    if (segment.firstSequence + segment.recordCount <= from) continue;
    segments.push({
      path: segment.path,
      firstSequence: segment.firstSequence,
      recordCount: segment.recordCount,
      recordsEnd: segment.sealed ? segment.size - segmentFooterBytes : segment.size,
      index: segment.index,
      sealedCrc: segment.sealed ? segment.crc : undefined,
    });
  }
  const memory: Array<Entry> = [];
  for (const record of [state.inFlight, state.pending]) {
    for (const entry of record) {
      if (memory.length >= limit) break;
      if (entry.sequence >= from) memory.push({ sequence: entry.sequence, event: entry.event });
    }
  }
  return {
    epoch: generation.epoch,
    firstSequence: generation.manifest.firstSequence,
    lastSequence: lastAssigned(state),
    segments,
    memory,
  };
};

/** The snapshot a read from `from` works on; `Compacted` below the generation's first sequence. */
const snapshotFrom = (
  state: StoreState,
  from: number,
  limit: number,
): Effect.Effect<Snapshot, Compacted> =>
  Effect.suspend(() => {
    const view = snapshot(state, from, limit);
    return from < view.firstSequence
      ? Effect.fail(
          new Compacted({
            path: state.directory,
            sequence: from,
            firstAvailable: view.firstSequence,
          }),
        )
      : Effect.succeed(view);
  });

/**
 * A segment read that lost a race with compaction (its file was removed
 * under it, and the generation is another now) reports `Compacted`.
 */
const compactedIfGone = <A>(
  read: Effect.Effect<A, SegmentReadError, Disk>,
  state: StoreState,
  view: Snapshot,
  next: number,
): Effect.Effect<A, StoreError, Disk> =>
  Effect.catchIf(
    read,
    (error) =>
      error._tag === "DiskError" &&
      error.code === "ENOENT" &&
      state.generation.epoch !== view.epoch,
    () =>
      Effect.fail(
        new Compacted({
          path: state.directory,
          sequence: next,
          firstAvailable: state.generation.manifest.firstSequence,
        }),
      ),
  );

/**
 * Up to `limit` entries from `from`, in sequence order, contiguous. Below
 * the generation's first sequence: `Compacted`. Past the last: empty. A read
 * that loses a race with compaction (its files were removed under it)
 * reports `Compacted` too.
 */
export const readFrom = (
  state: StoreState,
  from: number,
  limit: number,
): Effect.Effect<ReadonlyArray<Entry>, StoreError, Disk> =>
  Effect.gen(function* () {
    const view = yield* snapshotFrom(state, from, limit);
    if (limit <= 0 || from > view.lastSequence) return [];
    const entries: Array<Entry> = [];
    let next = from;
    for (const segment of view.segments) {
      if (entries.length >= limit) break;
      const read = yield* compactedIfGone(
        readSegment(segment, next, limit - entries.length),
        state,
        view,
        next,
      );
      for (const entry of read) entries.push(entry);
      const last = entries[entries.length - 1];
      if (last !== undefined) next = last.sequence + 1;
    }
    for (const entry of view.memory) {
      if (entries.length >= limit) break;
      if (entry.sequence === next) {
        entries.push(entry);
        next += 1;
      }
    }
    return entries;
  });

/**
 * The records among the `limit` from `from` whose payload holds one of
 * `needles`, decoded, and the first sequence not looked at; the rest are
 * read and checked but not decoded. What is still in memory (being written,
 * pending) is handed over whole: the caller filters what it gets. Errors as
 * `readFrom`'s.
 */
export const readMentioning = (
  state: StoreState,
  from: number,
  limit: number,
  needles: ReadonlyArray<Uint8Array>,
  chunkBytes = mentionChunkBytes,
): Effect.Effect<Mentioning, StoreError, Disk> =>
  Effect.gen(function* () {
    const view = yield* snapshotFrom(state, from, limit);
    const entries: Array<Entry> = [];
    let next = from;
    // One pair for the call's segments, read one after the other.
    const buffers = chunkBuffers();
    for (const segment of view.segments) {
      const room = limit - (next - from);
      if (room <= 0) break;
      const read = yield* compactedIfGone(
        readSegmentMentioning(segment, next, room, needles, buffers, chunkBytes),
        state,
        view,
        next,
      );
      for (const entry of read.entries) entries.push(entry);
      next = read.next;
    }
    for (const entry of view.memory) {
      if (next - from >= limit) break;
      if (entry.sequence === next) {
        entries.push(entry);
        next += 1;
      }
    }
    return { entries, next };
  });
