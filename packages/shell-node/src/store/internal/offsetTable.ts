/**
 * Where each job's index entries are: for a job id, the offset of its job
 * entry and of its latest result entry (-1 when none), and when the job
 * finished (NaN when not known: a table walked from the entries, or read
 * from an offsets file of before 2026-12-06). Job ids are dense and
 * increasing, so they live in typed-array pages of `pageIds` ids (24 bytes
 * per id of a touched page, against ~70 for a `Map` entry of two numbers),
 * created when a page's first id is set. The finish time lets a
 * compaction skip reading the entries of the jobs its retention drops
 * (docs/store.md, "Offsets").
 */

/** Ids per page. */
export const pageIds = 1024;

const absent = -1;
/** Numbers per id: job offset, result offset, finished at. */
const stride = 3;

/** Whether this host's typed arrays are little-endian, the offsets file's order. */
const littleEndian = new Uint8Array(Float64Array.of(1).buffer)[7] === 0x3f;

/** The offsets file's first bytes: `TAYIOFF2`, triples; an older build's `TAYIOFF1` held pairs. */
const magicOf = (text: string) => Uint8Array.from(text, (char) => char.charCodeAt(0));
const fileMagic = magicOf("TAYIOFF2");
const pairsMagic = magicOf("TAYIOFF1");

/** Magic, ids per page (u32), page count (u32). */
const fileHeaderBytes = 16;

/** A saved page: its index (f64) and its `pageIds` triples (f64); an older file's, pairs. */
const savedPageBytesOf = (numbers: number) => 8 + pageIds * numbers * 8;

/**
 * The jobs of a loaded page (slots with a job offset), or -1 when an offset
 * is neither -1 nor an integer in 0..entriesBytes-1, a result has no job,
 * or a finish time is neither NaN nor an integer.
 */
const checkedJobs = (page: Float64Array, entriesBytes: number): number => {
  let jobs = 0;
  for (let slot = 0; slot < page.length; slot += stride) {
    const job = page[slot] ?? Number.NaN;
    const result = page[slot + 1] ?? Number.NaN;
    const finished = page[slot + 2] ?? 0;
    const jobOk = job === absent || (Number.isSafeInteger(job) && job >= 0 && job < entriesBytes);
    const resultOk =
      result === absent ||
      (job !== absent && Number.isSafeInteger(result) && result >= 0 && result < entriesBytes);
    const finishedOk = Number.isNaN(finished) || Number.isSafeInteger(finished);
    if (!jobOk || !resultOk || !finishedOk) return -1;
    if (job !== absent) jobs++;
  }
  return jobs;
};

/** A page of triples from an older file's page of pairs (finish times unknown). */
const fromPairs = (pairs: Float64Array): Float64Array => {
  const page = new Float64Array(pageIds * stride).fill(Number.NaN);
  for (let id = 0; id < pageIds; id++) {
    page[id * stride] = pairs[id * 2] ?? absent;
    page[id * stride + 1] = pairs[id * 2 + 1] ?? absent;
  }
  return page;
};

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
    return this.pages.size * pageIds * stride * Float64Array.BYTES_PER_ELEMENT;
  }

  /** The offsets of `jobId`'s entries, or undefined when it has no job entry. */
  get(jobId: number): Offsets | undefined {
    const page = this.pages.get(Math.floor(jobId / pageIds));
    if (page === undefined) return undefined;
    const slot = (jobId % pageIds) * stride;
    const job = page[slot] ?? absent;
    return job === absent ? undefined : { job, result: page[slot + 1] ?? absent };
  }

  /** When `jobId` finished, if the table knows (its job entry was noted with it). */
  finishedAt(jobId: number): number | undefined {
    const page = this.pages.get(Math.floor(jobId / pageIds));
    if (page === undefined) return undefined;
    const slot = (jobId % pageIds) * stride;
    const finished = page[slot + 2] ?? Number.NaN;
    return page[slot] === absent || Number.isNaN(finished) ? undefined : finished;
  }

  /**
   * Notes the job entry of `jobId` at `offset`, finished at `finishedAt`
   * when known (a later one replaces it, and forgets its result).
   */
  setJob(jobId: number, offset: number, finishedAt?: number | null): void {
    const page = this.page(jobId);
    const slot = (jobId % pageIds) * stride;
    if (page[slot] === absent) this.count++;
    page[slot] = offset;
    page[slot + 1] = absent;
    page[slot + 2] =
      finishedAt !== undefined && finishedAt !== null && Number.isSafeInteger(finishedAt)
        ? finishedAt
        : Number.NaN;
  }

  /** Notes when `jobId` finished, learnt after its entry (an open's walk learns none); false when it has no entry. */
  setFinishedAt(jobId: number, finishedAt: number): boolean {
    const page = this.pages.get(Math.floor(jobId / pageIds));
    const slot = (jobId % pageIds) * stride;
    if (page === undefined || page[slot] === absent || !Number.isSafeInteger(finishedAt)) {
      return false;
    }
    page[slot + 2] = finishedAt;
    return true;
  }

  /** Notes a result entry of `jobId` at `offset`; false when the job has no entry. */
  setResult(jobId: number, offset: number): boolean {
    const page = this.pages.get(Math.floor(jobId / pageIds));
    const slot = (jobId % pageIds) * stride;
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
        if (page[slot * stride] !== absent) yield index * pageIds + slot;
      }
    }
  }

  /**
   * The table as bytes (magic, ids per page, page count, then each page
   * with its index; docs/store.md, "Offsets"): what `publish` saves beside
   * HEAD so that the next open reads the offsets instead of walking the
   * entries. `undefined` on a big-endian host, whose `Float64Array` bytes
   * are not the file's (the open then walks, as without the file).
   */
  encode(): Uint8Array | undefined {
    if (!littleEndian) return undefined;
    const indexes = [...this.pages.keys()].sort((left, right) => left - right);
    const savedPageBytes = savedPageBytesOf(stride);
    const bytes = new Uint8Array(fileHeaderBytes + indexes.length * savedPageBytes);
    const view = new DataView(bytes.buffer);
    bytes.set(fileMagic, 0);
    view.setUint32(8, pageIds, true);
    view.setUint32(12, indexes.length, true);
    indexes.forEach((index, position) => {
      const page = this.pages.get(index);
      if (page === undefined) return;
      const at = fileHeaderBytes + position * savedPageBytes;
      view.setFloat64(at, index, true);
      bytes.set(new Uint8Array(page.buffer, page.byteOffset, page.byteLength), at + 8);
    });
    return bytes;
  }

  /**
   * The table `encode` wrote, every offset checked to be -1 or an entry's
   * possible start (an integer below `entriesBytes`), every result beside a
   * job, every page index once and ascending; or the one-line reason the
   * bytes are not such a table (the open then walks the entries instead).
   * The table's pages are views into `bytes` (when aligned): the caller
   * gives them up and writes them no more.
   */
  static decode(bytes: Uint8Array, entriesBytes: number): OffsetTable | string {
    if (!littleEndian) return "a big-endian host";
    const magic = (expected: Uint8Array) =>
      bytes.length >= fileHeaderBytes && expected.every((byte, at) => bytes[at] === byte);
    const pairs = magic(pairsMagic);
    if (!pairs && !magic(fileMagic)) return "not an offsets file";
    const numbers = pairs ? 2 : stride;
    const savedPageBytes = savedPageBytesOf(numbers);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const count = view.getUint32(12, true);
    if (
      view.getUint32(8, true) !== pageIds ||
      bytes.length !== fileHeaderBytes + count * savedPageBytes
    ) {
      return "another page size or length";
    }
    const table = new OffsetTable();
    // The pages are views into the file's bytes, which the table takes
    // over: a copy per page touched 16 MB of fresh memory at 1,000,000
    // jobs, ~45 ms of page faults in the open (measured 2026-12-04). Each
    // page's offsets start at a multiple of 8 in the file; bytes read at
    // an offset that is not are copied once, whole.
    const owned =
      bytes.byteOffset % Float64Array.BYTES_PER_ELEMENT === 0 ? bytes : new Uint8Array(bytes);
    let previous = -1;
    for (let position = 0; position < count; position++) {
      const at = fileHeaderBytes + position * savedPageBytes;
      const index = view.getFloat64(at, true);
      if (!Number.isSafeInteger(index) || index <= previous) return "page indexes out of order";
      previous = index;
      const saved = new Float64Array(owned.buffer, owned.byteOffset + at + 8, pageIds * numbers);
      const page = pairs ? fromPairs(saved) : saved;
      const jobs = checkedJobs(page, entriesBytes);
      if (jobs < 0)
        return `page ${index}: an offset outside the entries, or a finish time no integer`;
      table.pages.set(index, page);
      table.count += jobs;
    }
    return table;
  }

  private page(jobId: number): Float64Array {
    const index = Math.floor(jobId / pageIds);
    const found = this.pages.get(index);
    if (found !== undefined) return found;
    const page = new Float64Array(pageIds * stride).fill(absent);
    this.pages.set(index, page);
    return page;
  }
}
