/**
 * Where each job's index entries are: for a job id, the offset of its job
 * entry and of its latest result entry (-1 when none). Job ids are dense
 * and increasing, so offsets live in typed-array pages of `pageIds` ids
 * (16 bytes per id of a touched page, against ~70 for a `Map` entry of two
 * numbers), created when a page's first id is set.
 */

/** Ids per page. */
export const pageIds = 1024;

const absent = -1;

/** A job's entry offsets. */
export interface Offsets {
  readonly job: number;
  readonly result: number;
}

/** Job id -> entry offsets, in pages. */
export class OffsetTable {
  private readonly pages = new Map<number, Float64Array>();
  private count = 0;

  /** Jobs with a job entry. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the pages. */
  get bytes(): number {
    return this.pages.size * pageIds * 2 * Float64Array.BYTES_PER_ELEMENT;
  }

  /** The offsets of `jobId`'s entries, or undefined when it has no job entry. */
  get(jobId: number): Offsets | undefined {
    const page = this.pages.get(Math.floor(jobId / pageIds));
    if (page === undefined) return undefined;
    const slot = (jobId % pageIds) * 2;
    const job = page[slot] ?? absent;
    return job === absent ? undefined : { job, result: page[slot + 1] ?? absent };
  }

  /** Notes the job entry of `jobId` at `offset` (a later one replaces it, and forgets its result). */
  setJob(jobId: number, offset: number): void {
    const page = this.page(jobId);
    const slot = (jobId % pageIds) * 2;
    if (page[slot] === absent) this.count++;
    page[slot] = offset;
    page[slot + 1] = absent;
  }

  /** Notes a result entry of `jobId` at `offset`; false when the job has no entry. */
  setResult(jobId: number, offset: number): boolean {
    const page = this.pages.get(Math.floor(jobId / pageIds));
    const slot = (jobId % pageIds) * 2;
    if (page === undefined || page[slot] === absent) return false;
    page[slot + 1] = offset;
    return true;
  }

  /** Every job id with an entry, ascending. */
  *ids(): IterableIterator<number> {
    for (const index of [...this.pages.keys()].sort((left, right) => left - right)) {
      const page = this.pages.get(index);
      if (page === undefined) continue;
      for (let slot = 0; slot < pageIds; slot++) {
        if (page[slot * 2] !== absent) yield index * pageIds + slot;
      }
    }
  }

  private page(jobId: number): Float64Array {
    const index = Math.floor(jobId / pageIds);
    const found = this.pages.get(index);
    if (found !== undefined) return found;
    const page = new Float64Array(pageIds * 2).fill(absent);
    this.pages.set(index, page);
    return page;
  }
}
