/**
 * Where the last few writes of the running store ended: for each, the last
 * sequence written, the segment it went to, that segment's records, records
 * end and running CRC right after it. A state image names the bytes it
 * folded by those three per segment (docs/store.md, "The state image");
 * these marks let the engine take a busy store's state at a commit, whose
 * records were written while later ones were pending or being written
 * (docs/store.md, "Checkpoints under load"). Mutable slots, reused: a write
 * costs five stores, no allocation.
 */
import type { SegmentDigest } from "../../log/Projection.js";
import { segmentFooterBytes } from "./codec.js";

/** What a mark reads of a segment (`storeState.ts`'s `SegmentState`, which holds the marks). */
interface Segment {
  readonly id: number;
  readonly firstSequence: number;
  readonly recordCount: number;
  readonly size: number;
  readonly sealed: boolean;
  readonly crc: number;
}

/** How many writes back a mark is kept: a commit is taken within a few writes of its own. */
export const marksKept = 8;

interface Mark {
  epoch: number;
  sequence: number;
  segmentId: number;
  records: number;
  end: number;
  crc: number;
}

/** The last `marksKept` writes' ends, newest overwriting oldest. */
export class WrittenMarks {
  readonly #slots: ReadonlyArray<Mark> = Array.from({ length: marksKept }, () => ({
    epoch: -1,
    sequence: -1,
    segmentId: -1,
    records: 0,
    end: 0,
    crc: 0,
  }));
  #next = 0;

  /** Notes that a write to `segment` (the active one of generation `epoch`) ended with CRC `crc`. */
  note(epoch: number, segment: Segment, crc: number): void {
    const slot = this.#slots[this.#next];
    this.#next = (this.#next + 1) % marksKept;
    if (slot === undefined) return;
    slot.epoch = epoch;
    slot.sequence = segment.firstSequence + segment.recordCount - 1;
    slot.segmentId = segment.id;
    slot.records = segment.recordCount;
    slot.end = segment.size;
    slot.crc = crc;
  }

  /**
   * The digests of `generation`'s segments as they were right after the
   * write that ended at `sequence`, if it is among the marks kept: the
   * segments before its own, sealed since, by their footers; its own by
   * the mark (it may have grown or been sealed since: the open accepts the
   * image's last segment grown). Undefined when no mark is that write's.
   */
  digestsAt(
    generation: { readonly epoch: number; readonly segments: ReadonlyArray<Segment> },
    sequence: number,
  ): ReadonlyArray<SegmentDigest> | undefined {
    const { epoch, segments } = generation;
    const mark = this.#slots.find((slot) => slot.epoch === epoch && slot.sequence === sequence);
    if (mark === undefined) return undefined;
    const digests: Array<SegmentDigest> = [];
    for (const segment of segments) {
      if (segment.id === mark.segmentId) {
        digests.push({ id: mark.segmentId, records: mark.records, end: mark.end, crc: mark.crc });
        return digests;
      }
      // A segment before the mark's was sealed before that write began.
      if (!segment.sealed) return undefined;
      digests.push({
        id: segment.id,
        records: segment.recordCount,
        end: segment.size - segmentFooterBytes,
        crc: segment.crc,
      });
    }
    return undefined;
  }
}
