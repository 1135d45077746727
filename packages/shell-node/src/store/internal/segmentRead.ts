/**
 * Reading records back from a validated segment for `readFrom`: from the
 * nearest indexed offset, decode and skip to the wanted sequence, then
 * collect up to a limit. The bytes were validated at open or written by this
 * process; any disagreement now is reported, never skipped.
 */
import * as Effect from "effect/Effect";
import type { Disk, DiskError, FileHandle } from "../../disk/Disk.js";
import type { Entry } from "../../log/Projection.js";
import { BeyondSafeInteger, CorruptRecord, Mismatch, UndecodableEvent } from "../StoreError.js";
import { decodeEvent, decodeRecord, recordSize, segmentHeaderBytes } from "./codec.js";
import { readUpTo, withFile } from "../../disk/Files.js";
import * as SegmentIndex from "./segmentIndex.js";

/** Bytes read per call when reading records back (a larger record takes several). */
export const readChunkBytes = 256 * 1024;

/**
 * How many bytes the record at `cursor` needs beyond what `buffer` holds,
 * once its header is present (0 before): one read then completes it.
 */
export const recordBytesWanted = (buffer: Uint8Array, cursor: number): number => {
  if (buffer.length - cursor < 24) return 0;
  const length =
    (((buffer[cursor + 16] ?? 0) << 24) |
      ((buffer[cursor + 17] ?? 0) << 16) |
      ((buffer[cursor + 18] ?? 0) << 8) |
      (buffer[cursor + 19] ?? 0)) >>>
    0;
  return Math.max(0, recordSize(length) - (buffer.length - cursor));
};

/** A segment as a reader sees it at one instant. */
export interface SegmentView {
  readonly path: string;
  readonly firstSequence: number;
  /** Records visible to this read. */
  readonly recordCount: number;
  /** Where those records end. */
  readonly recordsEnd: number;
  readonly index: SegmentIndex.SegmentIndex;
  /** A sealed segment's CRC of every byte before its footer (the footer's); undefined while active. */
  readonly sealedCrc: number | undefined;
}

export type SegmentReadError =
  | CorruptRecord
  | BeyondSafeInteger
  | Mismatch
  | UndecodableEvent
  | DiskError;

/** Where a read of one segment stands: the bytes held and the next record's place. */
export interface ReadCursor {
  buffer: Uint8Array;
  /** File offset of `buffer[0]`. */
  bufferStart: number;
  cursor: number;
  /** The sequence the record at the cursor must have. */
  expected: number;
}

/**
 * Reads more of the segment behind what the cursor holds (keeping the
 * record it is inside); fails when the records the view counts end early
 * (the file changed under the read).
 */
const readMore = (handle: FileHandle, segment: SegmentView, at: ReadCursor) =>
  Effect.gen(function* () {
    const offset = at.bufferStart + at.cursor;
    const readPosition = at.bufferStart + at.buffer.length;
    const wanted = Math.max(readChunkBytes, recordBytesWanted(at.buffer, at.cursor));
    const length = Math.min(wanted, segment.recordsEnd - readPosition);
    const chunk = length > 0 ? yield* readUpTo(handle, readPosition, length) : new Uint8Array(0);
    if (chunk.length === 0) {
      return yield* new CorruptRecord({
        path: segment.path,
        offset,
        sequence: at.expected,
        reason: "BadMagic",
      });
    }
    const rest = at.buffer.subarray(at.cursor);
    const joined = new Uint8Array(rest.length + chunk.length);
    joined.set(rest, 0);
    joined.set(chunk, rest.length);
    at.buffer = joined;
    at.bufferStart = offset;
    at.cursor = 0;
  });

/** The error for a record read back that is not the one validation saw at `offset`. */
export const refused = (
  path: string,
  offset: number,
  expected: number,
  decoded: Exclude<ReturnType<typeof decodeRecord>, { readonly _tag: "Record" | "Incomplete" }>,
): SegmentReadError =>
  decoded._tag === "Corrupt"
    ? new CorruptRecord({ path, offset, sequence: expected, reason: decoded.reason })
    : new BeyondSafeInteger({ path, offset: offset + 8, field: decoded.field });

/** A cursor on the indexed record at or before `from` (the segment's first when none is). */
export const cursorAt = (segment: SegmentView, from: number): ReadCursor => {
  const lastSequence = segment.firstSequence + segment.recordCount - 1;
  const start = SegmentIndex.seek(segment.index, Math.min(from, lastSequence));
  return {
    buffer: new Uint8Array(0),
    bufferStart: start?.offset ?? segmentHeaderBytes,
    cursor: 0,
    expected: start?.sequence ?? segment.firstSequence,
  };
};

/**
 * Up to `limit` entries of `segment` from `from` (which it must hold), in
 * order. The file is opened for the call only.
 */
export const readSegment = (
  segment: SegmentView,
  from: number,
  limit: number,
): Effect.Effect<Array<Entry>, SegmentReadError, Disk> =>
  withFile(segment.path, "read", (handle) =>
    Effect.gen(function* () {
      const { path } = segment;
      const lastSequence = segment.firstSequence + segment.recordCount - 1;
      const entries: Array<Entry> = [];
      const at = cursorAt(segment, from);
      while (entries.length < limit && at.expected <= lastSequence) {
        const offset = at.bufferStart + at.cursor;
        const decoded =
          at.cursor < at.buffer.length ? decodeRecord(at.buffer, at.cursor) : undefined;
        if (decoded === undefined || decoded._tag === "Incomplete") {
          yield* readMore(handle, segment, at);
          continue;
        }
        if (decoded._tag !== "Record")
          return yield* Effect.fail(refused(path, offset, at.expected, decoded));
        const { record } = decoded;
        if (record.sequence !== at.expected) {
          return yield* new Mismatch({
            path,
            offset: offset + 8,
            field: "Sequence",
            expected: `${at.expected}`,
            found: `${record.sequence}`,
          });
        }
        if (record.sequence >= from) {
          const event = decodeEvent(record.type, record.schema, record.payload);
          if (event._tag === "Left") {
            return yield* new UndecodableEvent({
              path,
              offset,
              sequence: record.sequence,
              reason: event.left,
            });
          }
          entries.push({ sequence: record.sequence, event: event.right });
        }
        at.expected += 1;
        at.cursor += decoded.size;
      }
      return entries;
    }),
  );
