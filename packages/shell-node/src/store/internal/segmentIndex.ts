/**
 * A sparse index of one segment: the byte offset of every `strideRecords`-th
 * record, so a read can start near its sequence instead of at the header.
 */

/** One entry every this many records. */
export const strideRecords = 256;

export interface SegmentIndex {
  /** Sequences of indexed records, ascending. */
  readonly sequences: Array<number>;
  /** Their offsets in the file, ascending. */
  readonly offsets: Array<number>;
}

/** An empty index. */
export const empty = (): SegmentIndex => ({ sequences: [], offsets: [] });

/**
 * Notes record `sequence` at `offset`, the `ordinal`-th (0-based) of its
 * segment: kept when the ordinal is a multiple of the stride.
 */
export const note = (
  index: SegmentIndex,
  ordinal: number,
  sequence: number,
  offset: number,
): void => {
  if (ordinal % strideRecords === 0) {
    index.sequences.push(sequence);
    index.offsets.push(offset);
  }
};

/** The position of the last of `ascending` at or before `value`; -1 when none is. */
const lastAtOrBefore = (ascending: ReadonlyArray<number>, value: number): number => {
  let low = 0;
  let high = ascending.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    if ((ascending[middle] ?? Number.POSITIVE_INFINITY) <= value) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
};

/**
 * The indexed record at or before `sequence`: where a read for it starts.
 * `undefined` when the index is empty or `sequence` precedes every entry.
 */
export const seek = (
  index: SegmentIndex,
  sequence: number,
): { readonly sequence: number; readonly offset: number } | undefined => {
  const found = lastAtOrBefore(index.sequences, sequence);
  const foundSequence = index.sequences[found];
  const foundOffset = index.offsets[found];
  if (foundSequence === undefined || foundOffset === undefined) return undefined;
  return { sequence: foundSequence, offset: foundOffset };
};

/**
 * The ordinal of the entry at or before file offset `offset` (0 before the
 * first): the stretch of records a byte at `offset` belongs to.
 */
export const entryAtOffset = (index: SegmentIndex, offset: number): number =>
  Math.max(0, lastAtOrBefore(index.offsets, offset));
