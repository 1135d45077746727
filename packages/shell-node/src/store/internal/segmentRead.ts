/**
 * Reading records back from a validated segment for `readFrom`: from the
 * nearest indexed offset, decode and skip to the wanted sequence, then
 * collect up to a limit. The bytes were validated at open or written by this
 * process; any disagreement now is reported, never skipped.
 */
import { Effect } from "effect";
import type { Disk, DiskError } from "../../disk/Disk.js";
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
}

export type SegmentReadError =
  | CorruptRecord
  | BeyondSafeInteger
  | Mismatch
  | UndecodableEvent
  | DiskError;

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
      const start = SegmentIndex.seek(segment.index, Math.min(from, lastSequence));
      let expected = start?.sequence ?? segment.firstSequence;
      let bufferStart = start?.offset ?? segmentHeaderBytes;
      let buffer: Uint8Array = new Uint8Array(0);
      let cursor = 0;
      while (entries.length < limit && expected <= lastSequence) {
        const offset = bufferStart + cursor;
        const decoded = cursor < buffer.length ? decodeRecord(buffer, cursor) : undefined;
        if (decoded === undefined || decoded._tag === "Incomplete") {
          const readPosition = bufferStart + buffer.length;
          const wanted = Math.max(readChunkBytes, recordBytesWanted(buffer, cursor));
          const length = Math.min(wanted, segment.recordsEnd - readPosition);
          const chunk =
            length > 0 ? yield* readUpTo(handle, readPosition, length) : new Uint8Array(0);
          if (chunk.length === 0) {
            // The records this view counts end early: the file changed under us.
            return yield* new CorruptRecord({
              path,
              offset,
              sequence: expected,
              reason: "BadMagic",
            });
          }
          const rest = buffer.subarray(cursor);
          const joined = new Uint8Array(rest.length + chunk.length);
          joined.set(rest, 0);
          joined.set(chunk, rest.length);
          buffer = joined;
          bufferStart = offset;
          cursor = 0;
          continue;
        }
        if (decoded._tag === "Corrupt") {
          return yield* new CorruptRecord({
            path,
            offset,
            sequence: expected,
            reason: decoded.reason,
          });
        }
        if (decoded._tag === "BeyondSafeInteger") {
          return yield* new BeyondSafeInteger({ path, offset: offset + 8, field: decoded.field });
        }
        const { record } = decoded;
        if (record.sequence !== expected) {
          return yield* new Mismatch({
            path,
            offset: offset + 8,
            field: "Sequence",
            expected: `${expected}`,
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
        expected += 1;
        cursor += decoded.size;
      }
      return entries;
    }),
  );
