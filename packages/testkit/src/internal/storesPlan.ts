/**
 * The pure half of `Stores.writeStore`: which framed record goes into which
 * segment, and the exact bytes of each segment file (header, records,
 * footer when sealed). Nothing here touches a disk.
 */
import {
  crc32c,
  encodeSegmentFooter,
  encodeSegmentHeader,
  segmentFileBytesMax,
  segmentFooterBytes,
  segmentHeaderBytes,
} from "@tay/codec";

/** When a segment is full and gets sealed (the writer's rotation, in records or bytes). */
export interface Fill {
  /** Records per segment at most; unbounded when absent. */
  readonly recordsPerSegment?: number;
  /** A segment is sealed once its header and records reach this size (the rotation target). */
  readonly bytesPerSegment?: number;
}

/** How the records are laid out over segments. */
export interface Plan extends Fill {
  /**
   * The segment holding record number `sealAfter` (1-based) is sealed after
   * it, so the base ends a segment of its own as compaction lays it out; 0
   * for none.
   */
  readonly sealAfter: number;
  /** Whether the segment holding the last record gets a footer. */
  readonly sealLast: boolean;
  /** Whether a header-only active segment follows. */
  readonly emptyActive: boolean;
}

/** One segment of the plan: its ID, first sequence, framed records and whether it is sealed. */
export interface PlannedSegment {
  readonly segmentId: number;
  readonly firstSequence: number;
  readonly records: ReadonlyArray<Uint8Array>;
  readonly sealed: boolean;
}

const full = (fill: Fill, records: number, bytes: number): boolean =>
  (fill.recordsPerSegment !== undefined && records >= fill.recordsPerSegment) ||
  (fill.bytesPerSegment !== undefined && bytes >= fill.bytesPerSegment);

/**
 * Cuts `records` (framed, in sequence order from `firstSequence`) into
 * segments: a segment is sealed as soon as it is full, at `sealAfter`, or
 * before a record that would push it past the format's 1 GiB bound; the
 * last one per `sealLast`; then an empty active segment when asked.
 */
export const planSegments = (
  records: ReadonlyArray<Uint8Array>,
  firstSequence: number,
  plan: Plan,
): ReadonlyArray<PlannedSegment> => {
  const segments: Array<PlannedSegment> = [];
  let current: Array<Uint8Array> = [];
  let currentBytes = segmentHeaderBytes;
  let currentFirst = firstSequence;
  const seal = () => {
    segments.push({
      segmentId: segments.length + 1,
      firstSequence: currentFirst,
      records: current,
      sealed: true,
    });
    currentFirst += current.length;
    current = [];
    currentBytes = segmentHeaderBytes;
  };
  for (const [index, record] of records.entries()) {
    if (
      current.length > 0 &&
      currentBytes + record.length + segmentFooterBytes > segmentFileBytesMax
    ) {
      seal();
    }
    current.push(record);
    currentBytes += record.length;
    const last = index === records.length - 1;
    const sealed =
      index + 1 === plan.sealAfter ||
      (last ? plan.sealLast : full(plan, current.length, currentBytes));
    if (sealed) seal();
  }
  if (current.length > 0) {
    segments.push({
      segmentId: segments.length + 1,
      firstSequence: currentFirst,
      records: current,
      sealed: false,
    });
  } else if (plan.emptyActive) {
    segments.push({
      segmentId: segments.length + 1,
      firstSequence: currentFirst,
      records: [],
      sealed: false,
    });
  }
  return segments;
};

/** The bytes of one planned segment file for the store `storeId`. */
export const segmentBytes = (segment: PlannedSegment, storeId: Uint8Array): Uint8Array => {
  const header = encodeSegmentHeader({
    segmentId: segment.segmentId,
    firstSequence: segment.firstSequence,
    storeId,
  });
  const recordBytes = segment.records.reduce((sum, record) => sum + record.length, 0);
  const size = header.length + recordBytes + (segment.sealed ? segmentFooterBytes : 0);
  const bytes = new Uint8Array(size);
  bytes.set(header, 0);
  let offset = header.length;
  for (const record of segment.records) {
    bytes.set(record, offset);
    offset += record.length;
  }
  if (segment.sealed) {
    const footer = encodeSegmentFooter({
      segmentId: segment.segmentId,
      firstSequence: segment.firstSequence,
      storeId,
      lastSequence: segment.firstSequence + segment.records.length - 1,
      recordCount: segment.records.length,
      segmentCrc: crc32c(bytes.subarray(0, offset)),
    });
    bytes.set(footer, offset);
  }
  return bytes;
};
