/**
 * What the store reports about itself while it runs: record and byte counts,
 * storage pressure and the distribution of segment sizes (the seed's
 * `stats`, `store_pressure`, `is_overloaded`, `segment_size_stats`).
 */

/** Counters of the current generation. */
export interface StoreStats {
  /** Segment files of the current generation, the active one included. */
  readonly segments: number;
  /** Records written to segment files (base and tail). */
  readonly records: number;
  /** Bytes of the generation's segment files as written. */
  readonly bytes: number;
  /** The generation's first sequence. */
  readonly firstSequence: number;
  /** The last sequence assigned (written or pending); `firstSequence - 1` when none. */
  readonly lastSequence: number;
  /** Records submitted and not yet written to a file. */
  readonly pendingRecords: number;
  /** Bytes (encoded) of those records. */
  readonly pendingBytes: number;
  /** The writes made on the event loop's thread by the writer's choice since the store opened. */
  readonly inlineWrites: InlineWriteStats;
}

/**
 * The writer's inline writes (`internal/inlineWrite.ts`): under `Maximal`
 * a lone small batch is written `O_DSYNC` on the event loop's thread, which
 * waits for the device meanwhile; under `Segment` (since 2026-12-04) a lone
 * batch of up to 64 KiB is copied into the page cache there, which waits
 * only when writeback holds a page. These say how often, and how long the
 * worst wait was; all 0 under `Throughput`, whose handle writes inline by
 * itself, unheld and uncounted (docs/store.md).
 */
export interface InlineWriteStats {
  /** Writes made inline. */
  readonly writes: number;
  /** Those that took longer than `inlineSlowMs` (2 ms): each spent its time from the slow-write budget. */
  readonly slow: number;
  /** The longest one, in milliseconds (0 for none). */
  readonly slowestMs: number;
}

/** Sizes of the segment files, in bytes (the seed's `SegmentSizeStats`). */
export interface SegmentSizeStats {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
}

/** `isOverloaded` fires above this pressure. */
export const overloadedPressure = 0.9;

/** `bytes / capacity`, clamped to [0, 1]; 1 when the capacity is not positive. */
export const pressure = (bytes: number, capacity: number): number => {
  if (!(capacity > 0)) return 1;
  return Math.min(1, Math.max(0, bytes / capacity));
};

/** True when `pressure` exceeds `overloadedPressure`. */
export const isOverloaded = (pressureValue: number): boolean => pressureValue > overloadedPressure;

/**
 * The nearest-rank percentile of ascending `sorted` values: the element at
 * 1-based rank `clamp(ceil(p/100 * n), 1, n)`, always an actual value; 0 for
 * no values.
 */
export const nearestRank = (sorted: ReadonlyArray<number>, percentile: number): number => {
  const count = sorted.length;
  if (count === 0) return 0;
  const rank = Math.min(count, Math.max(1, Math.ceil((percentile / 100) * count)));
  return sorted[rank - 1] ?? 0;
};

/** Count, min, max, mean, p50 and p90 of `sizes`; every field 0 for none. */
export const segmentSizeStats = (sizes: ReadonlyArray<number>): SegmentSizeStats => {
  if (sizes.length === 0) return { count: 0, min: 0, max: 0, mean: 0, p50: 0, p90: 0 };
  const sorted = [...sizes].sort((left, right) => left - right);
  const total = sorted.reduce((sum, size) => sum + size, 0);
  return {
    count: sorted.length,
    min: sorted[0] ?? 0,
    max: sorted[sorted.length - 1] ?? 0,
    mean: total / sorted.length,
    p50: nearestRank(sorted, 50),
    p90: nearestRank(sorted, 90),
  };
};
