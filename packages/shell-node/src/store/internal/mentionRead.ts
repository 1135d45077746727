/**
 * Reads of the records that mention something (`Log.View.readMentioning`):
 * one job's events found without decoding a whole store. A record whose
 * payload holds none of the needles is checked but not decoded.
 *
 * A sealed segment read whole is taken on trust of its segment CRC, as an
 * open takes it (docs/store.md): its bytes are read in large chunks, hashed
 * and searched natively (no walk from record to record), the CRC compared
 * with the footer's before anything is answered; then only the stretches
 * of 256 records (the segment index's stride) where a needle was found are
 * walked, each record checked, and decoded when its payload holds one.
 * Anything else (the active segment, a read from inside a segment) walks
 * every record with its CRCs, as `readFrom` does.
 */
import * as Effect from "effect/Effect";
import type { Disk } from "../../disk/Disk.js";
import { withFile } from "../../disk/Files.js";
import type { Mentioning } from "../../log/Log.js";
import type { Entry } from "../../log/Projection.js";
import { CorruptRecord, Mismatch, UndecodableEvent } from "../StoreError.js";
import { type ChunkBuffers, ChunkReader, earlyEnd } from "./chunkReader.js";
import { crc32c, decodeEventAt, type RecordFrame, recordFrame, scanRecordAt } from "./codec.js";
import { NeedleFinder } from "./needleFinder.js";
import * as SegmentIndex from "./segmentIndex.js";
import {
  cursorAt,
  type ReadCursor,
  recordBytesWanted,
  refused,
  type SegmentReadError,
  type SegmentView,
} from "./segmentRead.js";

/** Bytes read per call by a filtered read (two buffers of it, reused across its segments). */
export const mentionChunkBytes = 1024 * 1024;

/** Where a filtered read of one segment stands, beside its cursor. */
interface Filtering {
  readonly path: string;
  readonly from: number;
  /** The last sequence to look at. */
  readonly through: number;
  readonly frame: RecordFrame;
  readonly finder: NeedleFinder;
  readonly entries: Array<Entry>;
}

/**
 * Looks at the whole records the buffer holds from the cursor, up to
 * `through`: each is checked (CRCs included) and, when one of the needles
 * is in its payload, decoded into `entries`. A plain function, not a
 * generator's loop (whose locals live on the heap). "More": the buffer
 * ends before the records do.
 */
const filterBuffered = (
  at: ReadCursor,
  filtering: Filtering,
): "More" | "Done" | SegmentReadError => {
  const { path, from, through, frame, finder, entries } = filtering;
  while (at.expected <= through) {
    if (at.cursor >= at.buffer.length) return "More";
    const offset = at.bufferStart + at.cursor;
    const scanned = scanRecordAt(at.buffer, at.cursor, frame);
    if (typeof scanned !== "number") {
      return scanned._tag === "Incomplete" ? "More" : refused(path, offset, at.expected, scanned);
    }
    if (frame.sequence !== at.expected) {
      const [expected, found] = [`${at.expected}`, `${frame.sequence}`];
      return new Mismatch({ path, offset: offset + 8, field: "Sequence", expected, found });
    }
    if (frame.sequence >= from && finder.within(frame.payloadStart, frame.payloadEnd)) {
      const { type, schema, payloadStart, payloadEnd } = frame;
      const event = decodeEventAt(type, schema, at.buffer, payloadStart, payloadEnd);
      if (event._tag === "Left") {
        return new UndecodableEvent({ path, offset, sequence: frame.sequence, reason: event.left });
      }
      entries.push({ sequence: frame.sequence, event: event.right });
    }
    at.expected += 1;
    at.cursor += scanned;
  }
  return "Done";
};

/**
 * The records of `segment` among the `limit` from `from` whose payload
 * holds one of `needles`, decoded, and the first sequence not looked at.
 * Its chunks are read into `buffers` (one ahead): a new buffer per chunk,
 * as `readSegment` makes, cost more in collections than the whole scan.
 */
export const readSegmentMentioning = (
  segment: SegmentView,
  from: number,
  limit: number,
  needles: ReadonlyArray<Uint8Array>,
  buffers: ChunkBuffers,
  chunkBytes = mentionChunkBytes,
): Effect.Effect<Mentioning, SegmentReadError, Disk> =>
  withFile(segment.path, "read", (handle) => {
    const chunks = new ChunkReader(buffers, handle, segment.recordsEnd, chunkBytes, (position) =>
      earlyEnd(segment.path, position),
    );
    const lastSequence = segment.firstSequence + segment.recordCount - 1;
    const whole = from <= segment.firstSequence && from + limit - 1 >= lastSequence;
    const read =
      whole && segment.sealedCrc !== undefined
        ? onTrust(segment, segment.sealedCrc, needles, chunks)
        : walked(segment, from, limit, needles, chunks);
    return Effect.ensuring(read, chunks.settle());
  });

/**
 * Every record from `from` (at most `limit`) walked, checked, and decoded
 * where a needle is. `end`: where the records it is to look at end, which
 * bounds its reads (a stretch of the index is read alone, not a chunk).
 */
const walked = (
  segment: SegmentView,
  from: number,
  limit: number,
  needles: ReadonlyArray<Uint8Array>,
  chunks: ChunkReader,
  end = segment.recordsEnd,
): Effect.Effect<Mentioning, SegmentReadError> =>
  Effect.gen(function* () {
    const lastSequence = segment.firstSequence + segment.recordCount - 1;
    const at = cursorAt(segment, from);
    const finder = new NeedleFinder(needles.map((needle) => Buffer.from(needle)));
    const filtering: Filtering = {
      path: segment.path,
      from,
      through: Math.min(lastSequence, from + limit - 1),
      frame: recordFrame(),
      finder,
      entries: [],
    };
    for (;;) {
      const stop = filterBuffered(at, filtering);
      if (stop === "Done") return { entries: filtering.entries, next: at.expected };
      if (stop !== "More") return yield* Effect.fail(stop);
      const offset = at.bufferStart + at.cursor;
      const held = at.buffer.length - at.cursor;
      if (offset + held >= end) {
        // The records the view counts end inside the last one: the file changed under the read.
        const sequence = at.expected;
        return yield* new CorruptRecord({
          path: segment.path,
          offset,
          sequence,
          reason: "BadMagic",
        });
      }
      const wanted = Math.max(chunks.chunkBytes, held + recordBytesWanted(at.buffer, at.cursor));
      const length = Math.min(wanted, end - offset);
      const carried = at.buffer.subarray(at.cursor);
      at.buffer = yield* chunks.next(offset, carried, length, end);
      at.bufferStart = offset;
      at.cursor = 0;
      finder.reset(at.buffer);
    }
  });

/**
 * A sealed segment read whole: hashed and searched chunk by chunk, its CRC
 * compared with the footer's, then the stretches of the index where a
 * needle was found walked (`walked`, each record checked again).
 */
const onTrust = (
  segment: SegmentView,
  sealedCrc: number,
  needles: ReadonlyArray<Uint8Array>,
  chunks: ChunkReader,
): Effect.Effect<Mentioning, SegmentReadError> =>
  Effect.gen(function* () {
    const stretches = yield* stretchesMentioning(segment, sealedCrc, needles, chunks);
    const { index } = segment;
    const lastSequence = segment.firstSequence + segment.recordCount - 1;
    const entries: Array<Entry> = [];
    for (const stretch of stretches) {
      // To the next entry, however far: the index's spacing is not relied on.
      const first = index.sequences[stretch] ?? segment.firstSequence;
      const count = (index.sequences[stretch + 1] ?? lastSequence + 1) - first;
      const end = index.offsets[stretch + 1] ?? segment.recordsEnd;
      const read = yield* walked(segment, first, count, needles, chunks, end);
      for (const entry of read.entries) entries.push(entry);
    }
    return { entries, next: lastSequence + 1 };
  });

/**
 * The stretches of the segment index (their ordinals, ascending) whose bytes
 * hold a needle, once every byte before the footer hashed to `sealedCrc`.
 * A needle cut by the end of a chunk is found in the next: the chunk is read
 * behind the bytes the last one ended with (a needle's length less one).
 */
const stretchesMentioning = (
  segment: SegmentView,
  sealedCrc: number,
  needles: ReadonlyArray<Uint8Array>,
  chunks: ChunkReader,
): Effect.Effect<ReadonlyArray<number>, SegmentReadError> =>
  Effect.gen(function* () {
    const searched = needles.map((needle) => Buffer.from(needle));
    const overlap = Math.max(0, ...searched.map((needle) => needle.length - 1));
    const stretches = new Set<number>();
    let crc = 0;
    let carried: Uint8Array = new Uint8Array(0);
    for (let position = 0; position < segment.recordsEnd; ) {
      const length = Math.min(chunks.chunkBytes, segment.recordsEnd - position);
      const start = position - carried.length;
      const bytes = yield* chunks.next(start, carried, carried.length + length, segment.recordsEnd);
      crc = crc32c(bytes.subarray(carried.length), crc);
      const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
      for (const needle of searched) {
        // Those wholly inside the carried bytes were found with the chunk before.
        for (let at = view.indexOf(needle); at >= 0; at = view.indexOf(needle, at + 1)) {
          if (at + needle.length > carried.length)
            stretches.add(SegmentIndex.entryAtOffset(segment.index, start + at));
        }
      }
      position += length;
      carried = bytes.subarray(Math.max(0, bytes.length - overlap));
    }
    if (crc !== sealedCrc) {
      return yield* new Mismatch({
        path: segment.path,
        offset: segment.recordsEnd + 56,
        field: "SegmentChecksum",
        expected: `${sealedCrc}`,
        found: `${crc}`,
      });
    }
    return [...stretches].sort((a, b) => a - b);
  });
