// Proves the offsets file's table reads back as written whatever the alignment of the bytes it is
// read from (the open's read buffer is its own, a test's subarray need not be), and that a table
// read from a file takes further offsets like one built in memory (its pages are views into the
// file's bytes since 2026-12-04: docs/store.md, "Offsets").
import { describe, expect, it } from "@effect/vitest";
import * as fc from "fast-check";
import { OffsetTable, pageIds } from "../../../src/store/internal/offsetTable.js";

/** Job ids with an entry offset each and sometimes a result, as an index notes them. */
const notes = fc.uniqueArray(
  fc.record({
    jobId: fc.integer({ min: 1, max: 5 * pageIds }),
    result: fc.boolean(),
    // A finish time, or none known (an entry an open walked).
    finishedAt: fc.option(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { nil: undefined }),
  }),
  { selector: (note) => note.jobId, minLength: 1, maxLength: 200 },
);

const built = (
  entries: ReadonlyArray<{ jobId: number; result: boolean; finishedAt: number | undefined }>,
) => {
  const table = new OffsetTable();
  let at = 0;
  for (const { jobId, result, finishedAt } of entries) {
    table.setJob(jobId, at, finishedAt);
    at += 100;
    if (result) {
      table.setResult(jobId, at);
      at += 30;
    }
  }
  return { table, end: at };
};

const sameOffsets = (left: OffsetTable, right: OffsetTable) => {
  expect([...left.ids()]).toEqual([...right.ids()]);
  for (const id of left.ids()) {
    expect(left.get(id)).toEqual(right.get(id));
    expect(left.finishedAt(id)).toBe(right.finishedAt(id));
  }
  expect(left.size).toBe(right.size);
};

describe("OffsetTable.decode", () => {
  it("reads back the table from bytes at any offset of their buffer", () => {
    fc.assert(
      fc.property(notes, fc.integer({ min: 0, max: 15 }), (entries, shift) => {
        const { table, end } = built(entries);
        const encoded = table.encode();
        if (encoded === undefined) return; // a big-endian host writes no offsets file
        const carrier = new Uint8Array(encoded.length + shift);
        carrier.set(encoded, shift);
        const decoded = OffsetTable.decode(carrier.subarray(shift), end);
        if (typeof decoded === "string") return expect.unreachable(decoded);
        sameOffsets(decoded, table);
      }),
    );
  });

  it("takes new offsets on a table read from bytes as on one built in memory", () => {
    fc.assert(
      fc.property(notes, notes, (before, after) => {
        const { table, end } = built(before);
        const encoded = table.encode();
        if (encoded === undefined) return;
        const decoded = OffsetTable.decode(encoded, end);
        if (typeof decoded === "string") return expect.unreachable(decoded);
        for (const target of [table, decoded]) {
          let at = end;
          for (const { jobId, result, finishedAt } of after) {
            target.setJob(jobId, at, finishedAt);
            if (result) expect(target.setResult(jobId, at + 1)).toBe(true);
            at += 2;
          }
        }
        sameOffsets(decoded, table);
        expect(
          OffsetTable.decode(decoded.encode() ?? new Uint8Array(), end + 2 * after.length),
        ).toEqual(OffsetTable.decode(table.encode() ?? new Uint8Array(), end + 2 * after.length));
      }),
      { numRuns: 40 },
    );
  });
  it("refuses bytes that are not such a table, so that the open walks the entries instead", () => {
    // Jobs 1 (with a result) and 2 in page 0, job 1025 in page 1, in entries of 300 bytes.
    const table = new OffsetTable();
    table.setJob(1, 0);
    table.setResult(1, 100);
    table.setJob(2, 200);
    table.setJob(pageIds + 1, 250);
    const encoded = table.encode();
    if (encoded === undefined) return; // a big-endian host writes no offsets file
    const end = 300;
    expect(typeof OffsetTable.decode(encoded, end)).toBe("object");
    // docs/store.md, "Offsets": a 16-byte header, then per page its index and its triples of f64
    // (job offset, result offset, finish time).
    const pageAt = (position: number) => 16 + position * (8 + pageIds * 24);
    const slotAt = (position: number, jobId: number, result: boolean) =>
      pageAt(position) + 8 + ((jobId % pageIds) * 3 + (result ? 1 : 0)) * 8;
    const changed = (change: (view: DataView) => void) => {
      const bytes = Uint8Array.from(encoded);
      change(new DataView(bytes.buffer));
      return bytes;
    };
    const longer = new Uint8Array(encoded.length + 8);
    longer.set(encoded);
    const refused: Record<string, Uint8Array> = {
      "another magic": changed((view) => view.setUint8(7, 0x33)),
      "another page size": changed((view) => view.setUint32(8, pageIds / 2, true)),
      "bytes past the pages": longer,
      "a page fewer than counted": encoded.subarray(0, pageAt(1)),
      "a job's offset at the entries' end": changed((view) =>
        view.setFloat64(slotAt(0, 2, false), end, true),
      ),
      "a result's offset at the entries' end": changed((view) =>
        view.setFloat64(slotAt(0, 1, true), end, true),
      ),
      "a negative offset": changed((view) => view.setFloat64(slotAt(0, 2, false), -2, true)),
      "an offset between two bytes": changed((view) =>
        view.setFloat64(slotAt(0, 2, false), 200.5, true),
      ),
      "a finish time between two": changed((view) =>
        view.setFloat64(slotAt(0, 2, false) + 16, 1.5, true),
      ),
      "a result without its job": changed((view) => view.setFloat64(slotAt(0, 3, true), 100, true)),
      "a page index between two": changed((view) => view.setFloat64(pageAt(1), 1.5, true)),
      "a page twice": changed((view) => view.setFloat64(pageAt(1), 0, true)),
      "pages descending": changed((view) => {
        view.setFloat64(pageAt(0), 1, true);
        view.setFloat64(pageAt(1), 0, true);
      }),
    };
    for (const [what, bytes] of Object.entries(refused)) {
      expect(typeof OffsetTable.decode(bytes, end), what).toBe("string");
    }
  });
  it("keeps each job's finish time with its offsets, saved; an older file of pairs reads with none", () => {
    const table = new OffsetTable();
    table.setJob(1, 0, 1_000);
    table.setJob(2, 100);
    table.setJob(3, 200, null);
    table.setResult(1, 300);
    table.setJob(1_500, 400, 2_000);
    expect([1, 2, 3, 1_500, 4].map((jobId) => table.finishedAt(jobId))).toEqual([
      1_000,
      undefined,
      undefined,
      2_000,
      undefined,
    ]);
    const bytes = table.encode();
    if (bytes === undefined) return expect.unreachable("a little-endian host");
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe("TAYIOFF2");
    const decoded = OffsetTable.decode(bytes, 1_000);
    if (typeof decoded === "string") return expect.unreachable(decoded);
    for (const jobId of [1, 2, 3, 1_500, 4]) {
      expect(decoded.get(jobId)).toEqual(table.get(jobId));
      expect(decoded.finishedAt(jobId)).toBe(table.finishedAt(jobId));
    }
    // A finish time that is no integer: not a table (the open walks the entries).
    const fractional = Uint8Array.from(bytes);
    new DataView(fractional.buffer).setFloat64(16 + 8 + 2 * 8, 1.5, true);
    expect(OffsetTable.decode(fractional, 1_000)).toBe(
      "page 0: an offset outside the entries, or a finish time no integer",
    );
    // An older build's file: the same header as TAYIOFF1, each page's ids as pairs.
    const pageBytes = 8 + 1024 * 2 * 8;
    const pairs = new Uint8Array(16 + 2 * pageBytes);
    const view = new DataView(pairs.buffer);
    pairs.set(new TextEncoder().encode("TAYIOFF1"), 0);
    view.setUint32(8, 1024, true);
    view.setUint32(12, 2, true);
    for (const [position, index] of [0, 1].entries()) {
      const at = 16 + position * pageBytes;
      view.setFloat64(at, index, true);
      for (let slot = 0; slot < 2048; slot++) view.setFloat64(at + 8 + slot * 8, -1, true);
    }
    const slotOf = (jobId: number) =>
      16 + Math.floor(jobId / 1024) * pageBytes + 8 + (jobId % 1024) * 16;
    view.setFloat64(slotOf(1), 0, true);
    view.setFloat64(slotOf(1) + 8, 300, true);
    view.setFloat64(slotOf(1_500), 400, true);
    const older = OffsetTable.decode(pairs, 1_000);
    if (typeof older === "string") return expect.unreachable(older);
    expect(older.size).toBe(2);
    expect(older.get(1)).toEqual({ job: 0, result: 300 });
    expect(older.get(1_500)).toEqual({ job: 400, result: -1 });
    expect(older.finishedAt(1)).toBeUndefined();
    expect(older.finishedAt(1_500)).toBeUndefined();
  });
});
