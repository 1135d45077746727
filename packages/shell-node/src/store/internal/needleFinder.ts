/**
 * A search for byte strings (needles, such as a job's mention) in the
 * payloads of the records a buffer holds, record after record.
 */
/**
 * Where each needle next occurs in a buffer at or after a place, found with
 * the native search once per occurrence, not once per record: most records
 * of a large store hold none, and one search then passes over thousands.
 */
export class NeedleFinder {
  private buffer: Buffer = Buffer.alloc(0);
  // Per needle: its next place at or after the last search's start; Infinity when none is
  // left in the buffer; -1 before the first search.
  private readonly at: Array<number>;

  constructor(private readonly needles: ReadonlyArray<Buffer>) {
    this.at = needles.map(() => -1);
  }

  /**
   * Searches `bytes` from now on (the buffer a read made), up to `end`: a
   * search that finds nothing goes there, so a caller that looks at part of
   * a large buffer bounds it (a batch of records in a 4 MiB chunk).
   */
  reset(bytes: Uint8Array, end = bytes.length): void {
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, end);
    this.at.fill(-1);
  }

  /** Whether a needle lies wholly inside [start, end) of the buffer; `start` only rises. */
  within(start: number, end: number): boolean {
    for (let i = 0; i < this.needles.length; i += 1) {
      const needle = this.needles[i];
      let next = this.at[i] ?? -1;
      if (needle === undefined) continue;
      if (next < start) {
        const found = this.buffer.indexOf(needle, start);
        next = found < 0 ? Number.POSITIVE_INFINITY : found;
        this.at[i] = next;
      }
      if (next + needle.length <= end) return true;
    }
    return false;
  }
}
