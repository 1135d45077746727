#!/usr/bin/env node
/**
 * Writes the byte fixtures of packages/codec/test/fixtures/bytes/ and their
 * SHA256SUMS, deterministically (fixed STORE_ID, times and contents).
 *
 * The layouts are written out here by hand from FORMAT.md, independently of
 * the codec's encoders, so the fixture test cross-checks two
 * implementations. The test reads the committed files and never runs this.
 *
 *   node packages/codec/scripts/fixtures-bytes.mjs          # (re)write
 *   node packages/codec/scripts/fixtures-bytes.mjs --check  # compare only
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fastCrc32c from "fast-crc32c";
import { emitFixtures } from "./lib/fixtureFiles.mjs";

const directory = join(dirname(fileURLToPath(import.meta.url)), "..", "test", "fixtures", "bytes");

const crc = (bytes, initial = 0) => fastCrc32c.calculate(bytes, initial) >>> 0;
const concat = (...parts) => Uint8Array.from(parts.flatMap((part) => Array.from(part)));
const u8 = (value) => Uint8Array.of(value);
const u32 = (value) => {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
};
const u64 = (value) => {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(value));
  return bytes;
};
const ascii = (text) => new TextEncoder().encode(text);
const withCrc = (bytes) => concat(bytes, u32(crc(bytes)));

// FORMAT.md's test STORE_ID: 00 01 02 ... 0f.
const storeId = Uint8Array.from({ length: 16 }, (_, index) => index);
const createdAt = 1_700_000_000_000;

// --- Values, by hand (FORMAT.md "Payload value encoding") ------------------

const value = {
  null: () => u8(0x00),
  integer: (number) => {
    const bytes = new Uint8Array(9);
    bytes[0] = 0x03;
    new DataView(bytes.buffer).setBigInt64(1, BigInt(number));
    return bytes;
  },
  float: (number) => {
    const bytes = new Uint8Array(9);
    bytes[0] = 0x04;
    new DataView(bytes.buffer).setFloat64(1, number);
    return bytes;
  },
  string: (text) => concat(u8(0x05), u32(ascii(text).length), ascii(text)),
  bytes: (content) => concat(u8(0x06), u32(content.length), content),
  list: (...items) => concat(u8(0x07), u32(items.length), ...items),
  /** Entries as given: callers list keys in canonical order (or not, on purpose). */
  map: (...entries) =>
    concat(
      u8(0x08),
      u32(entries.length),
      ...entries.flatMap(([key, item]) => [u32(ascii(key).length), ascii(key), item]),
    ),
};

// --- Records (FORMAT.md "Record v1") ---------------------------------------

const record = ({
  magic = [0x54, 0x41, 0x59, 0x00],
  version = 1,
  type,
  flags = 0,
  schema,
  sequence,
  length,
  payload,
  headerCrc,
  recordCrc,
}) => {
  const header = concat(
    Uint8Array.from(magic),
    u8(version),
    u8(type),
    u8(flags),
    u8(schema),
    u64(sequence),
    u32(length ?? payload.length),
  );
  const computed = crc(header);
  return concat(
    header,
    u32(headerCrc ?? computed),
    payload,
    u32(recordCrc ?? crc(payload, computed)),
  );
};

// The five payloads of the segments: events as EVENTS.md shapes them.
const inserted = value.map(
  ["args", value.null()],
  ["inserted_at", value.integer(0)],
  ["job_id", value.integer(1)],
  ["max_attempts", value.integer(1)],
  ["priority", value.integer(0)],
  ["queue", value.string("default")],
  ["scheduled_at", value.integer(0)],
  ["worker", value.string("W")],
);
const available = value.map(["at", value.integer(createdAt)], ["job_id", value.integer(1)]);
const started = value.map(
  ["at", value.integer(createdAt + 5)],
  ["attempt", value.integer(1)],
  ["job_id", value.integer(1)],
);
const finished = value.map(
  ["at", value.integer(createdAt + 9)],
  ["error", value.null()],
  ["job_id", value.integer(1)],
  ["outcome", value.string("completed")],
);
const specValue = value.list(value.float(-0.5), value.string("é"), value.bytes(new Uint8Array()));
const resultRecorded = value.map(
  ["at", value.integer(createdAt + 9)],
  ["job_id", value.integer(1)],
  ["result", specValue],
);

const specRecord = record({ type: 1, schema: 1, sequence: 1, payload: inserted });

// --- Segments (FORMAT.md "Segment files") ------------------------------------

const segmentHeader = (segmentId, firstSequence) =>
  withCrc(
    concat(ascii("TAYS"), u8(1), new Uint8Array(3), u64(segmentId), u64(firstSequence), storeId),
  );

const sealedBody = concat(
  segmentHeader(1, 1),
  specRecord,
  record({ type: 2, schema: 1, sequence: 2, payload: available }),
  record({ type: 3, schema: 1, sequence: 3, payload: started }),
);
const sealedSegment = concat(
  sealedBody,
  withCrc(
    concat(
      ascii("TAYF"),
      u8(1),
      new Uint8Array(3),
      u64(1),
      u64(1),
      storeId,
      u64(3),
      u64(3),
      u32(crc(sealedBody)),
    ),
  ),
);
const activeSegment = concat(
  segmentHeader(2, 4),
  record({ type: 4, schema: 1, sequence: 4, payload: finished }),
  record({ type: 10, schema: 2, sequence: 5, payload: resultRecorded }),
);

// --- Small files -------------------------------------------------------------

const smallFile = (magic, ...fields) =>
  withCrc(concat(ascii(magic), u8(1), new Uint8Array(3), storeId, ...fields));

// --- Everything, by file name --------------------------------------------------

const nested = (depth) =>
  concat(...Array.from({ length: depth - 1 }, () => concat(u8(0x07), u32(1))), value.null());

const fixtures = {
  "store-v2.bin": smallFile("TAYM", u64(createdAt)),
  "current-epoch-1.bin": smallFile("TAYC", u64(1)),
  "manifest-epoch-1.bin": smallFile("TAYN", u64(1), u64(0), u64(1), u64(0), u64(createdAt)),
  "manifest-epoch-2.bin": smallFile(
    "TAYN",
    u64(2),
    u64(1),
    u64(4),
    u64(2),
    u64(createdAt + 100_000),
  ),
  "segment-sealed.tay": sealedSegment,
  "segment-active.tay": activeSegment,
  "segment-active-empty.tay": segmentHeader(3, 6),
  "value-spec.bin": specValue,
  "value-key-order.bin": value.map(["b", value.null()], ["a", value.null()]),
  "value-duplicate-key.bin": value.map(["a", value.null()], ["a", value.null()]),
  "value-float-integer.bin": value.float(1),
  "value-float-nan.bin": value.float(Number.NaN),
  "value-float-infinity.bin": value.float(Number.POSITIVE_INFINITY),
  "value-float-negative-zero.bin": value.float(-0),
  "value-trailing-bytes.bin": concat(value.null(), value.null()),
  "value-depth-65.bin": nested(65),
  "value-utf8-overlong.bin": concat(u8(0x05), u32(2), Uint8Array.of(0xc0, 0xaf)),
  "value-utf8-surrogate.bin": concat(u8(0x05), u32(3), Uint8Array.of(0xed, 0xa0, 0x80)),
  "value-utf8-truncated.bin": concat(u8(0x05), u32(2), Uint8Array.of(0xe2, 0x82)),
  "value-huge-count.bin": concat(u8(0x07), u32(0xffff_ffff)),
  "record-spec.bin": specRecord,
  "record-torn.bin": specRecord.subarray(0, specRecord.length - 10),
  "record-beyond-safe-integer.bin": record({
    type: 1,
    schema: 1,
    sequence: 2n ** 53n,
    payload: inserted,
  }),
  "record-corrupt-bad-magic.bin": record({
    magic: [0, 0, 0, 0],
    type: 1,
    schema: 1,
    sequence: 1,
    payload: inserted,
  }),
  "record-corrupt-unsupported-version.bin": record({
    version: 2,
    type: 1,
    schema: 1,
    sequence: 1,
    payload: inserted,
  }),
  "record-corrupt-reserved-type.bin": record({
    type: 255,
    schema: 1,
    sequence: 1,
    payload: inserted,
  }),
  "record-corrupt-zero-schema.bin": record({ type: 1, schema: 0, sequence: 1, payload: inserted }),
  "record-corrupt-nonzero-flags.bin": record({
    type: 1,
    flags: 1,
    schema: 1,
    sequence: 1,
    payload: inserted,
  }),
  "record-corrupt-payload-too-large.bin": record({
    type: 1,
    schema: 1,
    sequence: 1,
    length: 16_777_217,
    payload: inserted,
  }),
  "record-corrupt-header-checksum.bin": record({
    type: 1,
    schema: 1,
    sequence: 1,
    payload: inserted,
    headerCrc: 0,
  }),
  "record-corrupt-record-checksum.bin": record({
    type: 1,
    schema: 1,
    sequence: 1,
    payload: inserted,
    recordCrc: 0,
  }),
};

emitFixtures(directory, fixtures, process.argv.includes("--check"));
