// Proves that the segment scan hands every valid record to its caller once, in
// order, in batches of at most `deliverRecordsMax`, with the right offsets,
// and that a fault anywhere (a batch boundary, a chunk boundary, a torn tail)
// is reported only after every record before it was delivered, and that a short
// or unsealed ending is a torn tail only where it may be (the highest segment). It scans
// segments built in memory through a FileHandle over a byte array, across
// several read chunks.
import { describe, expect, it } from "@effect/vitest";
import {
  crc32c,
  encodeRecord,
  encodeSegmentFooter,
  encodeSegmentHeader,
  segmentFileBytesMax,
  segmentHeaderBytes,
} from "@tay/codec";
import { Effect } from "effect";
import * as E from "fp-ts/lib/Either.js";
import { DiskError, type FileHandle } from "../../../src/disk/Disk.js";
import {
  deliverRecordsMax,
  type ScannedBatch,
  type ScanTarget,
  scanChunkBytes,
  scanSegment,
} from "../../../src/store/internal/segmentScan.js";

const storeId = Uint8Array.from({ length: 16 }, (_, index) => index);
const path = "/memory/00000000000000000001.tay";

/**
 * A read-only handle over `bytes`; with `into`, it also reads into the
 * caller's buffer (`Read.into`, what NodeDisk offers), and the scan then
 * reuses one buffer for every chunk.
 */
const handleOver = (bytes: Uint8Array, into = false): FileHandle => ({
  path,
  dataSync: false,
  read: Object.assign(
    (position: number, length: number) =>
      Effect.sync(() => bytes.slice(position, position + length)),
    into
      ? {
          into: (position: number, target: Uint8Array, length: number) =>
            Effect.sync(() => {
              const part = bytes.subarray(position, position + Math.min(length, target.length));
              target.set(part, 0);
              return part.length;
            }),
        }
      : {},
  ),
  write: () =>
    Effect.fail(new DiskError({ operation: "write", path, code: "Other", detail: "read-only" })),
  truncate: () =>
    Effect.fail(new DiskError({ operation: "truncate", path, code: "Other", detail: "read-only" })),
  sync: () => Effect.void,
  size: () => Effect.succeed(bytes.length),
  close: () => Effect.void,
});

/** Record `index` (0-based) of a test segment: its payload says which it is. */
const payloadOf = (index: number, payloadBytes: number): Uint8Array => {
  const payload = new Uint8Array(payloadBytes);
  for (let at = 0; at < payloadBytes; at++) payload[at] = (index * 31 + at) & 0xff;
  return payload;
};

interface Built {
  readonly bytes: Uint8Array;
  /** Offset of every record. */
  readonly offsets: ReadonlyArray<number>;
}

/** The footer of a test segment of `count` records whose bytes before the footer are `body`. */
const footerOver = (body: Uint8Array, count: number): Uint8Array =>
  encodeSegmentFooter({
    segmentId: 1,
    firstSequence: 1,
    storeId,
    lastSequence: count,
    recordCount: count,
    segmentCrc: crc32c(body),
  });

/**
 * A segment of `count` records from sequence 1; `sequenceOf` may lie about
 * some record's sequence; sealed with a correct footer when `sealed`.
 */
const segmentOf = (
  count: number,
  payloadBytes: number | ((index: number) => number),
  sealed: boolean,
  sequenceOf: (index: number) => number = (index) => index + 1,
): Built => {
  const parts: Array<Uint8Array> = [
    encodeSegmentHeader({ segmentId: 1, firstSequence: 1, storeId }),
  ];
  const offsets: Array<number> = [];
  let size = parts[0]?.length ?? 0;
  for (let index = 0; index < count; index++) {
    const record = encodeRecord({
      type: 1,
      schema: 1,
      sequence: sequenceOf(index),
      payload: payloadOf(
        index,
        typeof payloadBytes === "number" ? payloadBytes : payloadBytes(index),
      ),
    });
    if (E.isLeft(record)) throw new Error(record.left._tag);
    offsets.push(size);
    parts.push(record.right);
    size += record.right.length;
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    body.set(part, at);
    at += part.length;
  }
  if (!sealed) return { bytes: body, offsets };
  const footer = footerOver(body, count);
  const bytes = new Uint8Array(size + footer.length);
  bytes.set(body, 0);
  bytes.set(footer, size);
  return { bytes, offsets };
};

const target = (highest: boolean): ScanTarget => ({
  path,
  segmentId: 1,
  firstSequence: 1,
  storeId,
  highest,
});

/** Scans `bytes`, keeping every delivered batch (copied: the payloads are views). */
const scan = (
  bytes: Uint8Array,
  highest: boolean,
  into = false,
  handle: FileHandle = handleOver(bytes, into),
  onBatch: (firstSequence: number) => void = () => {},
  sealedOnTrust = false,
) =>
  Effect.gen(function* () {
    const batches: Array<{ sequences: Array<number>; offsets: Array<number>; same: boolean }> = [];
    const onRecords = (batch: ScannedBatch) =>
      Effect.sync(() => {
        onBatch(batch.firstSequence);
        const sequences: Array<number> = [];
        const offsets: Array<number> = [];
        let same = true;
        for (let index = 0; index < batch.count; index++) {
          const sequence = batch.firstSequence + index;
          const start = batch.starts[index] ?? -1;
          const payloadStart = batch.payloadStarts[index] ?? -1;
          const payload = batch.bytes.subarray(payloadStart, batch.payloadEnds[index] ?? -1);
          const expected = payloadOf(sequence - 1, payload.length);
          sequences.push(sequence);
          offsets.push(batch.bytesStart + start);
          same &&=
            batch.types[index] === 1 &&
            batch.schemas[index] === 1 &&
            payloadStart === start + 24 &&
            payload.every((byte, at) => byte === expected[at]);
        }
        batches.push({ sequences, offsets, same });
      });
    const result = yield* Effect.either(
      scanSegment(handle, bytes.length, target(highest), onRecords, undefined, sealedOnTrust),
    );
    return { result, batches };
  });

const delivered = (batches: ReadonlyArray<{ sequences: Array<number> }>) =>
  batches.flatMap((batch) => batch.sequences);

// Records of ~1 KiB: 5,000 of them span two 4 MiB read chunks.
const payloadBytes = 1000;
const count = 5000;

describe("batches", () => {
  it.effect.each([false, true])(
    "deliver every record once, in order, at most deliverRecordsMax at a time (one reused buffer: %s)",
    (into) =>
      Effect.gen(function* () {
        const built = segmentOf(count, payloadBytes, true);
        expect(built.bytes.length).toBeGreaterThan(scanChunkBytes);
        const { result, batches } = yield* scan(built.bytes, false, into);
        expect(result._tag).toBe("Right");
        expect(delivered(batches)).toEqual(Array.from({ length: count }, (_, index) => index + 1));
        expect(batches.flatMap((batch) => batch.offsets)).toEqual(built.offsets);
        expect(batches.every((batch) => batch.same)).toBe(true);
        expect(batches.every((batch) => batch.sequences.length <= deliverRecordsMax)).toBe(true);
        expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(count / deliverRecordsMax));
        if (result._tag === "Right") {
          const footerAt = built.bytes.length - 64;
          expect(result.right).toMatchObject({
            recordCount: count,
            sealed: true,
            recordsEnd: footerAt,
            crc: crc32c(built.bytes.subarray(0, footerAt)),
            lastRecordOffset: built.offsets[count - 1],
            tailCrc: crc32c(built.bytes.subarray(built.offsets[count - 1], footerAt)),
          });
        }
      }),
  );
});

describe("a fault", () => {
  it.effect.each([false, true])(
    "in a record's bytes comes after every record before it (one reused buffer: %s)",
    (into) =>
      Effect.gen(function* () {
        for (const bad of [0, deliverRecordsMax, 3000, count - 1]) {
          const built = segmentOf(count, payloadBytes, true);
          const offset = built.offsets[bad] ?? 0;
          const damaged = new Uint8Array(built.bytes);
          damaged[offset + 24 + 10] = (damaged[offset + 24 + 10] ?? 0) ^ 1;
          const { result, batches } = yield* scan(damaged, false, into);
          expect(delivered(batches)).toEqual(Array.from({ length: bad }, (_, index) => index + 1));
          expect(result._tag === "Left" && result.left).toMatchObject({
            _tag: "CorruptRecord",
            offset,
            sequence: bad + 1,
            reason: "RecordChecksum",
          });
        }
      }),
  );

  it.effect("in the sequence chain, at a batch boundary, comes after the batch", () =>
    Effect.gen(function* () {
      const bad = 2 * deliverRecordsMax;
      const built = segmentOf(count, 40, true, (index) => (index === bad ? 7 : index + 1));
      const { result, batches } = yield* scan(built.bytes, false);
      expect(delivered(batches)).toEqual(Array.from({ length: bad }, (_, index) => index + 1));
      expect(result._tag === "Left" && result.left).toMatchObject({
        _tag: "Mismatch",
        field: "Sequence",
        offset: (built.offsets[bad] ?? 0) + 8,
        expected: `${bad + 1}`,
        found: "7",
      });
    }),
  );

  it.effect("of the caller stops the scan: no later batch is delivered", () =>
    Effect.gen(function* () {
      const built = segmentOf(count, 40, true);
      let batches = 0;
      const result = yield* Effect.either(
        scanSegment(handleOver(built.bytes), built.bytes.length, target(false), () => {
          batches += 1;
          return batches === 2 ? Effect.fail("refused" as const) : Effect.void;
        }),
      );
      expect(result).toMatchObject({ _tag: "Left", left: "refused" });
      expect(batches).toBe(2);
    }),
  );

  it.effect("a torn last record of the active segment is a tail, after every whole record", () =>
    Effect.gen(function* () {
      const built = segmentOf(count, payloadBytes, false);
      const last = built.offsets[count - 1] ?? 0;
      const torn = built.bytes.subarray(0, last + 100);
      const { result, batches } = yield* scan(torn, true);
      expect(delivered(batches)).toEqual(
        Array.from({ length: count - 1 }, (_, index) => index + 1),
      );
      expect(result._tag === "Left" && result.left).toMatchObject({
        _tag: "IncompleteTail",
        offset: last,
        sequence: count,
        part: "Record",
      });
    }),
  );
});

/** What a handle with `into` saw: reads issued (by position) and still under way. */
interface ReadLog {
  readonly events: Array<string>;
  inFlight: number;
}

/**
 * A handle over `bytes` whose `into` answers a macrotask later (as the
 * thread pool does), logging each read as it is issued; reads at or past
 * `shortFrom` give half what was asked (a file cut after its size was taken).
 */
const laterHandle = (bytes: Uint8Array, log: ReadLog, shortFrom = Number.POSITIVE_INFINITY) => {
  const handle = handleOver(bytes);
  const into = (position: number, target: Uint8Array, length: number) =>
    Effect.async<number>((resume) => {
      log.events.push(`read ${position}`);
      log.inFlight += 1;
      setTimeout(() => {
        log.inFlight -= 1;
        const wanted = position >= shortFrom ? Math.floor(length / 2) : length;
        const part = bytes.subarray(position, position + Math.min(wanted, target.length));
        target.set(part, 0);
        resume(Effect.succeed(part.length));
      }, 1);
    });
  return { ...handle, read: Object.assign(handle.read, { into }) };
};

const everyRecord = (total: number) => Array.from({ length: total }, (_, index) => index + 1);

/** Scans a sealed segment read a macrotask later: every record, once, in order, intact. */
const scanWhole = (built: Built, total: number) =>
  Effect.gen(function* () {
    const log: ReadLog = { events: [], inFlight: 0 };
    const { result, batches } = yield* scan(
      built.bytes,
      false,
      true,
      laterHandle(built.bytes, log),
      (first) => log.events.push(`deliver ${first}`),
    );
    expect(result._tag).toBe("Right");
    expect(delivered(batches)).toEqual(everyRecord(total));
    expect(batches.every((batch) => batch.same)).toBe(true);
    return log;
  });

describe("reading ahead (a handle with `into`)", () => {
  it.live("the next chunk is read while this one's records are delivered", () =>
    Effect.gen(function* () {
      // ~13 MB: four chunks.
      const total = 13_000;
      const log = yield* scanWhole(segmentOf(total, payloadBytes, true), total);
      const reads = log.events.filter((event) => event.startsWith("read"));
      expect(reads.length).toBeGreaterThanOrEqual(4);
      // The second chunk was asked for before the first chunk's first batch
      // was delivered: its read overlaps that chunk's fold.
      const firstDelivery = log.events.indexOf("deliver 1");
      expect(log.events.indexOf(reads[1] ?? "")).toBeLessThan(firstDelivery);
    }),
  );

  it.live("records longer than the room kept in front of a chunk are read again, whole", () =>
    Effect.gen(function* () {
      // 300 KiB records: every chunk ends inside one, more than the room.
      const total = 60;
      // The footer's CRC of every byte matches (the scan succeeds): nothing
      // skipped or hashed twice.
      yield* scanWhole(
        segmentOf(total, (index) => (index % 7 === 3 ? 900 : 300 * 1024), true),
        total,
      );
    }),
  );

  it.live(
    "a file that ends early inside a chunk read ahead is a read error, after the records before",
    () =>
      Effect.gen(function* () {
        const built = segmentOf(count, payloadBytes, true);
        const log: ReadLog = { events: [], inFlight: 0 };
        const shortFrom = scanChunkBytes / 2;
        const { result, batches } = yield* scan(
          built.bytes,
          false,
          true,
          laterHandle(built.bytes, log, shortFrom),
        );
        expect(result._tag === "Left" && result.left).toMatchObject({
          _tag: "DiskError",
          code: "EIO",
        });
        expect(result._tag === "Left" && String(result.left.message)).toContain(
          "file ended before",
        );
        const firstChunkRecords = built.offsets.filter(
          (offset) => offset + 1024 <= scanChunkBytes,
        ).length;
        expect(delivered(batches).length).toBeGreaterThanOrEqual(firstChunkRecords - 1);
        expect(delivered(batches)).toEqual(everyRecord(delivered(batches).length));
      }),
  );

  it.live("a read ahead still under way when a fault ends the scan is waited for", () =>
    Effect.gen(function* () {
      const built = segmentOf(count, payloadBytes, true);
      const damaged = new Uint8Array(built.bytes);
      const bad = built.offsets[10] ?? 0;
      damaged[bad + 30] = (damaged[bad + 30] ?? 0) ^ 1;
      const log: ReadLog = { events: [], inFlight: 0 };
      const { result } = yield* scan(damaged, false, true, laterHandle(damaged, log));
      expect(result._tag === "Left" && result.left).toMatchObject({
        _tag: "CorruptRecord",
        offset: bad,
      });
      expect(log.events.filter((event) => event.startsWith("read")).length).toBe(2);
      expect(log.inFlight).toBe(0);
    }),
  );
});

/** `bytes` (a sealed test segment) with its footer's segment CRC made again over what it now holds. */
const resealed = (bytes: Uint8Array, count: number): Uint8Array => {
  const footerAt = bytes.length - 64;
  const footer = footerOver(bytes.subarray(0, footerAt), count);
  const copy = bytes.slice();
  copy.set(footer, footerAt);
  return copy;
};

describe("a sealed segment on trust of its segment CRC (open's first scan, docs/store.md)", () => {
  const records = 3000;
  const bad = 2100;
  it.effect.each([false, true])(
    "a record CRC the writer got wrong but the segment CRC covers: accepted on trust, refused record by record (into: %s)",
    (into) =>
      Effect.gen(function* () {
        const built = segmentOf(records, 200, true);
        const bytes = built.bytes.slice();
        const recordEnd = (built.offsets[bad + 1] ?? 0) - 1;
        bytes[recordEnd] = (bytes[recordEnd] ?? 0) ^ 0x01;
        const consistent = resealed(bytes, records);
        const trusted = yield* scan(consistent, false, into, undefined, undefined, true);
        expect(trusted.result._tag).toBe("Right");
        expect(delivered(trusted.batches)).toEqual(everyRecord(records));
        expect(trusted.batches.every((batch) => batch.same)).toBe(true);
        const each = yield* scan(consistent, false, into);
        expect(each.result).toMatchObject({
          _tag: "Left",
          left: { _tag: "CorruptRecord", reason: "RecordChecksum", offset: built.offsets[bad] },
        });
      }),
  );

  it.effect.each([false, true])(
    "a payload byte flipped after sealing: on trust the segment CRC fails at the end, record by record the record is named (into: %s)",
    (into) =>
      Effect.gen(function* () {
        const built = segmentOf(records, 200, true);
        const bytes = built.bytes.slice();
        const inPayload = (built.offsets[bad] ?? 0) + 30;
        bytes[inPayload] = (bytes[inPayload] ?? 0) ^ 0x40;
        const trusted = yield* scan(bytes, false, into, undefined, undefined, true);
        expect(trusted.result).toMatchObject({
          _tag: "Left",
          left: { _tag: "Mismatch", field: "SegmentChecksum" },
        });
        const each = yield* scan(bytes, false, into);
        expect(each.result).toMatchObject({
          _tag: "Left",
          left: {
            _tag: "CorruptRecord",
            reason: "RecordChecksum",
            offset: built.offsets[bad],
            sequence: bad + 1,
          },
        });
        expect(delivered(each.batches)).toEqual(everyRecord(bad));
      }),
  );

  it.effect(
    "the active segment (no footer to vouch) is checked record by record all the same",
    () =>
      Effect.gen(function* () {
        const built = segmentOf(records, 200, false);
        const bytes = built.bytes.slice();
        const recordEnd = (built.offsets[bad + 1] ?? 0) - 1;
        bytes[recordEnd] = (bytes[recordEnd] ?? 0) ^ 0x01;
        const scanned = yield* scan(bytes, true, true, undefined, undefined, true);
        expect(scanned.result).toMatchObject({
          _tag: "Left",
          left: { _tag: "CorruptRecord", reason: "RecordChecksum", offset: built.offsets[bad] },
        });
      }),
  );
});

describe("a short or unsealed ending", () => {
  const header = encodeSegmentHeader({ segmentId: 1, firstSequence: 1, storeId });
  const refusal = (bytes: Uint8Array, highest: boolean) =>
    Effect.map(scan(bytes, highest), ({ result }) => (result._tag === "Left" ? result.left : null));

  it.effect("a torn header is a tail only in the highest segment", () =>
    Effect.gen(function* () {
      const torn = header.subarray(0, 10);
      expect(yield* refusal(torn, true)).toMatchObject({
        _tag: "IncompleteTail",
        offset: 0,
        part: "Header",
      });
      expect(yield* refusal(torn, false)).not.toMatchObject({ _tag: "IncompleteTail" });
    }),
  );

  it.effect("a header without records or footer is the active segment only if highest", () =>
    Effect.gen(function* () {
      expect(yield* refusal(header, true)).toBeNull();
      expect(yield* refusal(header, false)).toMatchObject({
        _tag: "InvalidSegment",
        offset: header.length,
        reason: "MissingFooter",
      });
    }),
  );

  it.effect(
    "in the highest segment, a torn footer is a tail and a whole broken one is no record",
    () =>
      Effect.gen(function* () {
        const sealed = segmentOf(3, 100, true).bytes;
        expect(yield* refusal(sealed.subarray(0, sealed.length - 1), true)).toMatchObject({
          _tag: "IncompleteTail",
          part: "Footer",
        });
        const broken = new Uint8Array(sealed);
        const last = broken.length - 1;
        broken[last] = (broken[last] ?? 0) ^ 1;
        expect(yield* refusal(broken, true)).toMatchObject({
          _tag: "MalformedFile",
          kind: "SegmentFooter",
          // The footer's CRC: its last 4 bytes.
          offset: sealed.length - 4,
          reason: { _tag: "ChecksumMismatch" },
        });
      }),
  );
});

describe("identity (FORMAT.md, segment rules)", () => {
  const records = segmentOf(3, 100, false).bytes;
  const body = records.subarray(segmentHeaderBytes);
  const foreign = new Uint8Array(16).fill(7);
  const footerFields = {
    segmentId: 1,
    firstSequence: 1,
    storeId,
    lastSequence: 3,
    recordCount: 3,
    segmentCrc: crc32c(records),
  };
  const withFooter = (footer: Uint8Array): Uint8Array => {
    const bytes = new Uint8Array(records.length + footer.length);
    bytes.set(records, 0);
    bytes.set(footer, records.length);
    return bytes;
  };
  const withHeader = (header: Uint8Array): Uint8Array => {
    const bytes = new Uint8Array(header.length + body.length);
    bytes.set(header, 0);
    bytes.set(body, header.length);
    return bytes;
  };
  const refusal = (bytes: Uint8Array) =>
    Effect.map(scan(bytes, true), ({ result }) => (result._tag === "Left" ? result.left : null));

  it.effect("a header naming another segment or another first sequence is a Mismatch", () =>
    Effect.gen(function* () {
      expect(
        yield* refusal(
          withHeader(encodeSegmentHeader({ segmentId: 2, firstSequence: 1, storeId })),
        ),
      ).toMatchObject({ _tag: "Mismatch", path, offset: 8, field: "SegmentId", found: "2" });
      expect(
        yield* refusal(
          withHeader(encodeSegmentHeader({ segmentId: 1, firstSequence: 2, storeId })),
        ),
      ).toMatchObject({ _tag: "Mismatch", path, offset: 16, field: "FirstSequence", found: "2" });
    }),
  );

  it.effect("a footer that disagrees with the header or the records is a Mismatch", () =>
    Effect.gen(function* () {
      const at = records.length;
      expect(yield* refusal(withFooter(encodeSegmentFooter(footerFields)))).toBeNull();
      const cases = [
        [{ ...footerFields, segmentId: 2 }, "SegmentId", 8],
        [{ ...footerFields, firstSequence: 2, lastSequence: 4 }, "FirstSequence", 16],
        [{ ...footerFields, storeId: foreign }, "StoreId", 24],
        [{ ...footerFields, recordCount: 2, lastSequence: 2 }, "RecordCount", 48],
      ] as const;
      for (const [fields, field, offset] of cases) {
        expect(yield* refusal(withFooter(encodeSegmentFooter(fields)))).toMatchObject({
          _tag: "Mismatch",
          path,
          offset: at + offset,
          field,
        });
      }
    }),
  );

  it.effect("a footer after no record is an empty sealed segment, whatever count it claims", () =>
    Effect.gen(function* () {
      const header = encodeSegmentHeader({ segmentId: 1, firstSequence: 1, storeId });
      const footer = encodeSegmentFooter({
        ...footerFields,
        lastSequence: 1,
        recordCount: 1,
        segmentCrc: crc32c(header),
      });
      const bytes = new Uint8Array(header.length + footer.length);
      bytes.set(header, 0);
      bytes.set(footer, header.length);
      expect(yield* refusal(bytes)).toMatchObject({
        _tag: "InvalidSegment",
        path,
        offset: header.length,
        reason: "EmptySealed",
      });
    }),
  );
});

describe("the size bound (FORMAT.md: at most 1 GiB, footer included)", () => {
  it.effect("a file of exactly 1 GiB is no TooLarge; one byte more is", () =>
    Effect.gen(function* () {
      const bytes = segmentOf(3, 100, true).bytes;
      const scanAt = (size: number) =>
        Effect.flip(scanSegment(handleOver(bytes), size, target(true), () => Effect.void));
      // The handle's bytes end long before the size it is scanned at: the read that
      // meets their end fails, and only the size check may speak of TooLarge.
      expect(yield* scanAt(segmentFileBytesMax)).not.toMatchObject({ reason: "TooLarge" });
      expect(yield* scanAt(segmentFileBytesMax + 1)).toMatchObject({
        _tag: "InvalidSegment",
        path,
        offset: segmentFileBytesMax,
        reason: "TooLarge",
      });
    }),
  );
});
