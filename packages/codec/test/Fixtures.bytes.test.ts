// Proves the committed byte fixtures are intact and that the codec decodes
// each to exactly the typed value written literally below. It checks
// SHA256SUMS first, then reads every fixture (never regenerating it: the
// generator is scripts/fixtures-bytes.mjs, an independent hand layout).
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { Value } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { crc32c } from "../src/Crc32c.js";
import { decodeCurrentPointer } from "../src/Current.js";
import { decodeManifest } from "../src/Manifest.js";
import { decodeStoreMarker } from "../src/Marker.js";
import { type DecodedRecord, decodeRecord } from "../src/Record.js";
import {
  decodeSegmentFooter,
  decodeSegmentHeader,
  type SegmentHeader,
  segmentFooterBytes,
  segmentHeaderBytes,
} from "../src/Segment.js";
import { decodeValue, type ValueDecodeError } from "../src/Value.js";

const directory = new URL("./fixtures/bytes/", import.meta.url);
const read = (name: string): Uint8Array => Uint8Array.from(readFileSync(new URL(name, directory)));

const storeId = Uint8Array.from({ length: 16 }, (_, index) => index);
const createdAt = 1_700_000_000_000;

const sums = readFileSync(new URL("SHA256SUMS", directory), "utf8")
  .trimEnd()
  .split("\n")
  .map((line) => {
    const match = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
    if (match === null) throw new Error(`malformed SHA256SUMS line ${JSON.stringify(line)}`);
    return { sum: match[1], name: match[2] ?? "" };
  });

describe("SHA256SUMS", () => {
  it("lists exactly the fixture files", () => {
    const files = readdirSync(directory)
      .filter((name) => name !== "SHA256SUMS")
      .sort();
    expect(sums.map(({ name }) => name).sort()).toEqual(files);
    expect(files.length).toBeGreaterThanOrEqual(31);
  });

  it.each(sums)("matches $name", ({ sum, name }) => {
    expect(createHash("sha256").update(read(name)).digest("hex")).toBe(sum);
  });
});

describe("small files", () => {
  it("STORE-V2", () => {
    expect(decodeStoreMarker(read("store-v2.bin"))).toEqual(E.right({ storeId, createdAt }));
  });

  it("CURRENT (FORMAT.md's vector)", () => {
    expect(decodeCurrentPointer(read("current-epoch-1.bin"))).toEqual(
      E.right({ storeId, epoch: 1 }),
    );
  });

  it("MANIFEST of the first generation and of a compacted one", () => {
    expect(decodeManifest(read("manifest-epoch-1.bin"))).toEqual(
      E.right({
        storeId,
        epoch: 1,
        parentEpoch: 0,
        firstSequence: 1,
        baseRecordCount: 0,
        createdAt,
      }),
    );
    expect(decodeManifest(read("manifest-epoch-2.bin"))).toEqual(
      E.right({
        storeId,
        epoch: 2,
        parentEpoch: 1,
        firstSequence: 4,
        baseRecordCount: 2,
        createdAt: createdAt + 100_000,
      }),
    );
  });
});

interface ExpectedRecord {
  readonly type: number;
  readonly schema: number;
  readonly sequence: number;
  readonly payload: Value.Value;
}

const m = (entries: Record<string, Value.Value>): Value.ValueMap =>
  new Map(Object.entries(entries));

const specPayload = m({
  job_id: 1,
  queue: "default",
  worker: "W",
  args: null,
  priority: 0,
  max_attempts: 1,
  scheduled_at: 0,
  inserted_at: 0,
});

/** Reads a segment's records from `start` to `end` and checks them against `expected`. */
const expectRecords = (
  bytes: Uint8Array,
  start: number,
  end: number,
  expected: ReadonlyArray<ExpectedRecord>,
): void => {
  let offset = start;
  for (const record of expected) {
    const decoded = decodeRecord(bytes.subarray(0, end), offset);
    if (decoded._tag !== "Record") throw new Error(`at ${offset}: ${JSON.stringify(decoded)}`);
    expect(decoded.record.type).toBe(record.type);
    expect(decoded.record.schema).toBe(record.schema);
    expect(decoded.record.sequence).toBe(record.sequence);
    const payload = decodeValue(decoded.record.payload);
    expect(E.isRight(payload) && Value.equals(payload.right, record.payload)).toBe(true);
    offset += decoded.size;
  }
  expect(offset).toBe(end);
};

const header = (bytes: Uint8Array): E.Either<unknown, SegmentHeader> =>
  decodeSegmentHeader(bytes.subarray(0, segmentHeaderBytes));

describe("segments", () => {
  it("a sealed segment: header, three records, footer with the segment CRC", () => {
    const bytes = read("segment-sealed.tay");
    expect(header(bytes)).toEqual(E.right({ segmentId: 1, firstSequence: 1, storeId }));
    const footerStart = bytes.length - segmentFooterBytes;
    expect(decodeSegmentFooter(bytes.subarray(footerStart))).toEqual(
      E.right({
        segmentId: 1,
        firstSequence: 1,
        storeId,
        lastSequence: 3,
        recordCount: 3,
        segmentCrc: crc32c(bytes.subarray(0, footerStart)),
      }),
    );
    expectRecords(bytes, segmentHeaderBytes, footerStart, [
      { type: 1, schema: 1, sequence: 1, payload: specPayload },
      { type: 2, schema: 1, sequence: 2, payload: m({ at: createdAt, job_id: 1 }) },
      { type: 3, schema: 1, sequence: 3, payload: m({ at: createdAt + 5, attempt: 1, job_id: 1 }) },
    ]);
  });

  it("an active segment: header and two records, no footer", () => {
    const bytes = read("segment-active.tay");
    expect(header(bytes)).toEqual(E.right({ segmentId: 2, firstSequence: 4, storeId }));
    expectRecords(bytes, segmentHeaderBytes, bytes.length, [
      {
        type: 4,
        schema: 1,
        sequence: 4,
        payload: m({ at: createdAt + 9, error: null, job_id: 1, outcome: "completed" }),
      },
      {
        type: 10,
        schema: 2,
        sequence: 5,
        payload: m({ at: createdAt + 9, job_id: 1, result: [-0.5, "é", new Uint8Array()] }),
      },
    ]);
    // Its last bytes are a record, not a footer.
    expect(E.isLeft(decodeSegmentFooter(bytes.subarray(-segmentFooterBytes)))).toBe(true);
  });

  it("an active empty segment is exactly its header", () => {
    const bytes = read("segment-active-empty.tay");
    expect(bytes.length).toBe(segmentHeaderBytes);
    expect(decodeSegmentHeader(bytes)).toEqual(
      E.right({ segmentId: 3, firstSequence: 6, storeId }),
    );
  });
});

describe("values", () => {
  it('FORMAT.md\'s [-0.5, "é", bytes()]', () => {
    expect(decodeValue(read("value-spec.bin"))).toEqual(E.right([-0.5, "é", new Uint8Array()]));
  });

  it.each<[string, ValueDecodeError]>([
    ["value-key-order.bin", { _tag: "NonCanonical", offset: 11, reason: "KeyOrder" }],
    ["value-duplicate-key.bin", { _tag: "NonCanonical", offset: 11, reason: "DuplicateKey" }],
    ["value-float-integer.bin", { _tag: "NonCanonical", offset: 0, reason: "FloatIsInteger" }],
    ["value-float-nan.bin", { _tag: "NonCanonical", offset: 0, reason: "NonFiniteFloat" }],
    ["value-float-infinity.bin", { _tag: "NonCanonical", offset: 0, reason: "NonFiniteFloat" }],
    ["value-float-negative-zero.bin", { _tag: "NonCanonical", offset: 0, reason: "NegativeZero" }],
    ["value-trailing-bytes.bin", { _tag: "TrailingBytes", offset: 1, count: 1 }],
    ["value-depth-65.bin", { _tag: "DepthExceeded", offset: 320, depthMax: 64 }],
    ["value-utf8-overlong.bin", { _tag: "InvalidUtf8", offset: 5, reason: "Overlong" }],
    ["value-utf8-surrogate.bin", { _tag: "InvalidUtf8", offset: 5, reason: "Surrogate" }],
    ["value-utf8-truncated.bin", { _tag: "InvalidUtf8", offset: 5, reason: "Truncated" }],
    [
      "value-huge-count.bin",
      { _tag: "LengthBeyondInput", offset: 0, length: 0xffff_ffff, remaining: 0 },
    ],
  ])("%s is refused", (name, error) => {
    expect(decodeValue(read(name))).toEqual(E.left(error));
  });
});

describe("records", () => {
  it("FORMAT.md's record vector", () => {
    const bytes = read("record-spec.bin");
    const decoded = decodeRecord(bytes, 0);
    expect(decoded).toMatchObject({ _tag: "Record", size: bytes.length });
    expect(decoded._tag === "Record" && decoded.record).toMatchObject({
      type: 1,
      schema: 1,
      sequence: 1,
    });
  });

  it.each<[string, DecodedRecord]>([
    ["record-torn.bin", { _tag: "Incomplete", offset: 0 }],
    ["record-beyond-safe-integer.bin", { _tag: "BeyondSafeInteger", field: "sequence", offset: 0 }],
    ["record-corrupt-bad-magic.bin", { _tag: "Corrupt", reason: "BadMagic", offset: 0 }],
    [
      "record-corrupt-unsupported-version.bin",
      { _tag: "Corrupt", reason: "UnsupportedVersion", offset: 0 },
    ],
    ["record-corrupt-reserved-type.bin", { _tag: "Corrupt", reason: "ReservedType", offset: 0 }],
    ["record-corrupt-zero-schema.bin", { _tag: "Corrupt", reason: "ZeroSchema", offset: 0 }],
    ["record-corrupt-nonzero-flags.bin", { _tag: "Corrupt", reason: "NonzeroFlags", offset: 0 }],
    [
      "record-corrupt-payload-too-large.bin",
      { _tag: "Corrupt", reason: "PayloadTooLarge", offset: 0 },
    ],
    [
      "record-corrupt-header-checksum.bin",
      { _tag: "Corrupt", reason: "HeaderChecksum", offset: 0 },
    ],
    [
      "record-corrupt-record-checksum.bin",
      { _tag: "Corrupt", reason: "RecordChecksum", offset: 0 },
    ],
  ])("%s", (name, verdict) => {
    expect(decodeRecord(read(name), 0)).toEqual(verdict);
  });
});
