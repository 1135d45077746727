// Proves Record v1 framing matches FORMAT.md byte for byte and that
// decodeRecord returns exactly one documented verdict for any bytes at any
// offset, with the precedence of checks that docs/codec.md fixes, and that
// scanRecordAt (the allocation-free form a segment scan uses) gives the
// same verdict with the fields in a reused frame. It uses
// the spec vector, round-trip properties inside larger buffers, records
// built field by field with correct or wrong CRCs, and every header prefix.
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { crc32c } from "../src/Crc32c.js";
import {
  appendBytes,
  appendRecord,
  type CorruptReason,
  checkRecord,
  type DecodedRecord,
  decodeRecord,
  encodeRecord,
  encodeRecordInto,
  payloadBytesMax,
  type RecordFields,
  type RecordFrame,
  recordBuffer,
  recordHeaderBytes,
  recordFrame,
  recordOverheadBytes,
  recordSize,
  scanRecordAt,
  scanRecordHeaderAt,
  scanRecordStructureAt,
  shortPayloadBytesMax,
} from "../src/Record.js";

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const fromHex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, "hex"));

const specRecord =
  "54415900010100010000000000000001000000a5d35091c108000000080000000461726773000000000b696e7365727465645f6174030000000000000000000000066a6f625f69640300000000000000010000000c6d61785f617474656d707473030000000000000001000000087072696f72697479030000000000000000000000057175657565050000000764656661756c740000000c7363686564756c65645f617403000000000000000000000006776f726b657205000000015794d8a272";

const encoded = (record: RecordFields): Uint8Array => {
  const result = encodeRecord(record);
  if (E.isLeft(result)) throw new Error(`unexpected ${JSON.stringify(result.left)}`);
  return result.right;
};

/** A record laid out field by field, valid or not, with CRCs computed unless overridden. */
interface RawRecord {
  readonly magic?: ReadonlyArray<number>;
  readonly version?: number;
  readonly type?: number;
  readonly flags?: number;
  readonly schema?: number;
  readonly sequence?: bigint;
  readonly length?: number;
  readonly payload?: Uint8Array;
  readonly headerCrc?: number;
  readonly recordCrc?: number;
}

const raw = (fields: RawRecord): Uint8Array => {
  const payload = fields.payload ?? Uint8Array.of(0);
  const bytes = new Uint8Array(recordOverheadBytes + payload.length);
  const view = new DataView(bytes.buffer);
  bytes.set(fields.magic ?? [0x54, 0x41, 0x59, 0x00]);
  bytes[4] = fields.version ?? 1;
  bytes[5] = fields.type ?? 1;
  bytes[6] = fields.flags ?? 0;
  bytes[7] = fields.schema ?? 1;
  view.setBigUint64(8, fields.sequence ?? 1n);
  view.setUint32(16, fields.length ?? payload.length);
  const headerCrc = crc32c(bytes.subarray(0, 20));
  view.setUint32(20, fields.headerCrc ?? headerCrc);
  bytes.set(payload, 24);
  view.setUint32(24 + payload.length, fields.recordCrc ?? crc32c(payload, headerCrc));
  return bytes;
};

const corrupt = (reason: CorruptReason, offset = 0): DecodedRecord => ({
  _tag: "Corrupt",
  reason,
  offset,
});
const incomplete = (offset = 0): DecodedRecord => ({ _tag: "Incomplete", offset });

const recordFields = fc.record({
  type: fc.integer({ min: 1, max: 254 }),
  schema: fc.integer({ min: 1, max: 255 }),
  sequence: fc.oneof(
    fc.integer({ min: 1, max: 1000 }),
    fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  ),
  payload: fc.uint8Array({ maxLength: 300 }),
});

describe("FORMAT.md test vector", () => {
  it("encodes the record vector byte for byte", () => {
    const payload = fromHex(specRecord).subarray(24, -4);
    expect(hex(encoded({ type: 1, schema: 1, sequence: 1, payload }))).toBe(specRecord);
  });

  it("decodes it to its fields, the payload a view into the input", () => {
    const bytes = fromHex(specRecord);
    const decoded = decodeRecord(bytes, 0);
    expect(decoded._tag).toBe("Record");
    if (decoded._tag !== "Record") return;
    expect(decoded.size).toBe(bytes.length);
    expect(decoded.size).toBe(recordSize(165));
    expect(decoded.record.type).toBe(1);
    expect(decoded.record.schema).toBe(1);
    expect(decoded.record.sequence).toBe(1);
    expect(hex(decoded.record.payload)).toBe(specRecord.slice(48, -8));
    expect(decoded.record.payload.buffer).toBe(bytes.buffer);
    expect(decoded.record.payload.byteOffset).toBe(recordHeaderBytes);
  });
});

describe("round trip", () => {
  it("decodes what it encodes, inside a larger buffer, at its offset", () => {
    fc.assert(
      fc.property(
        recordFields,
        fc.uint8Array({ maxLength: 40 }),
        fc.uint8Array({ maxLength: 40 }),
        (record, before, after) => {
          const bytes = encoded(record);
          expect(bytes.length).toBe(recordSize(record.payload.length));
          const buffer = new Uint8Array(before.length + bytes.length + after.length + 8);
          buffer.set(before, 8);
          buffer.set(bytes, 8 + before.length);
          buffer.set(after, 8 + before.length + bytes.length);
          // A view over the larger buffer with its own byteOffset.
          const view = buffer.subarray(8);
          const decoded = decodeRecord(view, before.length);
          expect(decoded._tag).toBe("Record");
          if (decoded._tag !== "Record") return;
          expect(decoded.size).toBe(bytes.length);
          expect(decoded.record.type).toBe(record.type);
          expect(decoded.record.schema).toBe(record.schema);
          expect(decoded.record.sequence).toBe(record.sequence);
          expect(hex(decoded.record.payload)).toBe(hex(record.payload));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("encodeRecordInto writes the same bytes at an offset and returns their count", () => {
    fc.assert(
      fc.property(recordFields, fc.nat(50), (record, offset) => {
        const size = recordSize(record.payload.length);
        const target = new Uint8Array(offset + size + 3).fill(0xee);
        expect(encodeRecordInto(target, offset, record)).toBe(size);
        expect(hex(target.subarray(offset, offset + size))).toBe(hex(encoded(record)));
        expect(target[offset - 1] ?? 0xee).toBe(0xee);
        expect(target[offset + size]).toBe(0xee);
      }),
      { numRuns: 300 },
    );
  });

  it("appendRecord grows its buffer at the exact byte, keeping the records it holds", () => {
    // 29 and 28 bytes: each start size leaves the room short by one, exactly enough, or more.
    const first = { type: 1, schema: 1, sequence: 1, payload: Uint8Array.of(7) };
    const second = { type: 2, schema: 1, sequence: 2, payload: new Uint8Array(0) };
    const expected = hex(encoded(first)) + hex(encoded(second));
    for (const size of [0, 1, 28, 29, 56, 57, 58]) {
      const buffer = recordBuffer(size);
      expect(appendRecord(buffer, first)).toEqual(E.right(0));
      expect(appendRecord(buffer, second)).toEqual(E.right(29));
      expect(buffer.length, `${size}`).toBe(57);
      expect(hex(buffer.bytes.subarray(0, buffer.length)), `${size}`).toBe(expected);
    }
  });

  it("appendBytes copies framed records to the end, growing the buffer as appendRecord does", () => {
    const first = { type: 1, schema: 1, sequence: 1, payload: Uint8Array.of(7) };
    const second = { type: 2, schema: 1, sequence: 2, payload: new Uint8Array(0) };
    const expected = hex(encoded(first)) + hex(encoded(second));
    for (const size of [0, 1, 28, 29, 56, 57, 58]) {
      const buffer = recordBuffer(size);
      expect(appendBytes(buffer, encoded(first))).toBe(0);
      expect(appendBytes(buffer, encoded(second))).toBe(29);
      expect(buffer.length, `${size}`).toBe(57);
      expect(hex(buffer.bytes.subarray(0, buffer.length)), `${size}`).toBe(expected);
    }
  });

  it("decodes records laid back to back, one after the other", () => {
    const records = [1, 2, 3].map((sequence) => ({
      type: sequence,
      schema: 1,
      sequence,
      payload: new Uint8Array(sequence * 10).fill(sequence),
    }));
    const total = records.reduce((sum, record) => sum + recordSize(record.payload.length), 0);
    const buffer = new Uint8Array(total);
    let offset = 0;
    for (const record of records) offset += encodeRecordInto(buffer, offset, record);
    offset = 0;
    for (const record of records) {
      const decoded = decodeRecord(buffer, offset);
      expect(decoded._tag === "Record" && decoded.record.sequence).toBe(record.sequence);
      offset += decoded._tag === "Record" ? decoded.size : buffer.length;
    }
    expect(offset).toBe(buffer.length);
    expect(decodeRecord(buffer, offset)).toEqual(incomplete(offset));
  });
});

describe("encoding refusals", () => {
  const valid: RecordFields = { type: 1, schema: 1, sequence: 1, payload: new Uint8Array(1) };

  it.each<[string, Partial<RecordFields>, string, number]>([
    ["type 0", { type: 0 }, "type", 0],
    ["type 255", { type: 255 }, "type", 255],
    ["a fractional type", { type: 1.5 }, "type", 1.5],
    ["schema 0", { schema: 0 }, "schema", 0],
    ["schema 256", { schema: 256 }, "schema", 256],
    ["sequence 0", { sequence: 0 }, "sequence", 0],
    ["a negative sequence", { sequence: -1 }, "sequence", -1],
    ["sequence 2^53", { sequence: 2 ** 53 }, "sequence", 2 ** 53],
  ])("refuses %s", (_, change, field, found) => {
    const record = { ...valid, ...change };
    expect(encodeRecord(record)).toEqual(
      E.left(expect.objectContaining({ _tag: "InvalidRecordField", field, found })),
    );
    expect(checkRecord(record)._tag).toBe("Left");
    expect(() => encodeRecordInto(new Uint8Array(100), 0, record)).toThrow(RangeError);
  });

  it("refuses a payload over 16 MiB and accepts one of exactly 16 MiB", () => {
    const largest = new Uint8Array(payloadBytesMax);
    expect(checkRecord({ ...valid, payload: largest })._tag).toBe("Right");
    const tooLarge = new Uint8Array(payloadBytesMax + 1);
    expect(encodeRecord({ ...valid, payload: tooLarge })).toEqual(
      E.left(expect.objectContaining({ field: "payload", found: payloadBytesMax + 1 })),
    );
  });

  it("refuses to write past the target (a programmer error) and writes nothing", () => {
    const target = new Uint8Array(recordSize(1) - 1);
    expect(() => encodeRecordInto(target, 0, valid)).toThrow(RangeError);
    expect(() => encodeRecordInto(new Uint8Array(100), -1, valid)).toThrow(RangeError);
    expect(target.every((byte) => byte === 0)).toBe(true);
  });
});

describe("verdicts and their precedence", () => {
  it.each<[string, Uint8Array, DecodedRecord]>([
    ["bad magic", raw({ magic: [0x54, 0x41, 0x59, 0x01] }), corrupt("BadMagic")],
    ["zeros (preallocated space)", new Uint8Array(64), corrupt("BadMagic")],
    ["a segment footer's magic", raw({ magic: [0x54, 0x41, 0x59, 0x46] }), corrupt("BadMagic")],
    ["version 2", raw({ version: 2 }), corrupt("UnsupportedVersion")],
    ["version 0", raw({ version: 0 }), corrupt("UnsupportedVersion")],
    ["type 0", raw({ type: 0 }), corrupt("ReservedType")],
    ["type 255", raw({ type: 255 }), corrupt("ReservedType")],
    ["schema 0", raw({ schema: 0 }), corrupt("ZeroSchema")],
    ["flags 1", raw({ flags: 1 }), corrupt("NonzeroFlags")],
    ["flags 0x80", raw({ flags: 0x80 }), corrupt("NonzeroFlags")],
    ["a length over 16 MiB", raw({ length: payloadBytesMax + 1 }), corrupt("PayloadTooLarge")],
    ["a wrong header CRC", raw({ headerCrc: 0 }), corrupt("HeaderChecksum")],
    ["a wrong record CRC", raw({ recordCrc: 0 }), corrupt("RecordChecksum")],
    // Precedence: magic and version before the header CRC...
    [
      "bad magic and bad CRCs",
      raw({ magic: [0, 0, 0, 0], headerCrc: 0, recordCrc: 0 }),
      corrupt("BadMagic"),
    ],
    [
      "version 2 and a bad header CRC",
      raw({ version: 2, headerCrc: 0 }),
      corrupt("UnsupportedVersion"),
    ],
    // ...the header CRC before the fields it vouches for...
    ["type 0 under a bad header CRC", raw({ type: 0, headerCrc: 0 }), corrupt("HeaderChecksum")],
    [
      "a huge length under a bad header CRC",
      raw({ length: 0xffff_ffff, headerCrc: 0 }),
      corrupt("HeaderChecksum"),
    ],
    // ...fields in header order...
    ["type 0 and schema 0", raw({ type: 0, schema: 0 }), corrupt("ReservedType")],
    ["flags and schema 0", raw({ flags: 1, schema: 0 }), corrupt("NonzeroFlags")],
    ["schema 0 and a huge length", raw({ schema: 0, length: 0xffff_ffff }), corrupt("ZeroSchema")],
    // ...and PayloadTooLarge before Incomplete, although the range is short.
    ["a huge length with a short range", raw({ length: 0xffff_ffff }), corrupt("PayloadTooLarge")],
    // A length longer than the range, with a valid header: a torn tail.
    ["a length past the range", raw({ length: 100 }), incomplete()],
    ["a wrong record CRC with a short payload", raw({ length: 2, recordCrc: 0 }), incomplete()],
    [
      "sequence 2^53",
      raw({ sequence: 2n ** 53n }),
      { _tag: "BeyondSafeInteger", field: "sequence", offset: 0 },
    ],
    [
      "sequence 2^64-1",
      raw({ sequence: 2n ** 64n - 1n }),
      { _tag: "BeyondSafeInteger", field: "sequence", offset: 0 },
    ],
  ])("%s", (_, bytes, verdict) => {
    expect(decodeRecord(bytes, 0)).toEqual(verdict);
  });

  it("reports corruption of a beyond-safe record before its sequence", () => {
    expect(decodeRecord(raw({ sequence: 2n ** 60n, recordCrc: 0 }), 0)).toEqual(
      corrupt("RecordChecksum"),
    );
    expect(decodeRecord(raw({ sequence: 2n ** 60n, length: 5 }), 0)).toEqual(incomplete());
  });

  it("accepts sequence 0 physically (the segment's contiguity rule refuses it)", () => {
    const decoded = decodeRecord(raw({ sequence: 0n }), 0);
    expect(decoded._tag === "Record" && decoded.record.sequence).toBe(0);
  });

  it("accepts the largest safe sequence, empty payloads and the largest type and schema", () => {
    const decoded = decodeRecord(
      raw({ sequence: 2n ** 53n - 1n, type: 254, schema: 255, payload: new Uint8Array() }),
      0,
    );
    expect(decoded).toEqual({
      _tag: "Record",
      record: {
        type: 254,
        schema: 255,
        sequence: Number.MAX_SAFE_INTEGER,
        payload: new Uint8Array(),
      },
      size: recordOverheadBytes,
    });
  });

  it("reports the offset of the record's first byte", () => {
    const buffer = new Uint8Array(10 + 30);
    buffer.set(raw({ recordCrc: 0 }), 10);
    expect(decodeRecord(buffer, 10)).toEqual(corrupt("RecordChecksum", 10));
    expect(decodeRecord(buffer, 10 + 3)).toEqual(corrupt("BadMagic", 13));
  });

  it("judges a header cut short by the bytes present only", () => {
    const valid = raw({});
    // Every prefix of a valid header is Incomplete.
    for (let length = 0; length < recordHeaderBytes; length++) {
      expect(decodeRecord(valid.subarray(0, length), 0)).toEqual(incomplete());
    }
    const cut = (bytes: Uint8Array, length: number) => decodeRecord(bytes.subarray(0, length), 0);
    expect(cut(raw({ magic: [0x54, 0x41, 0x58, 0] }), 3)).toEqual(corrupt("BadMagic"));
    expect(cut(raw({ magic: [0x54, 0x41, 0x58, 0] }), 2)).toEqual(incomplete());
    expect(cut(raw({ version: 2 }), 5)).toEqual(corrupt("UnsupportedVersion"));
    expect(cut(raw({ type: 0 }), 6)).toEqual(corrupt("ReservedType"));
    expect(cut(raw({ flags: 1 }), 7)).toEqual(corrupt("NonzeroFlags"));
    expect(cut(raw({ schema: 0 }), 8)).toEqual(corrupt("ZeroSchema"));
    expect(cut(raw({ schema: 0 }), 7)).toEqual(incomplete());
    // The header CRC is missing, yet no completion of these length bytes is
    // at most 16 MiB (0x01000000).
    expect(cut(raw({ length: 0x0200_0000 }), 17)).toEqual(corrupt("PayloadTooLarge"));
    expect(cut(raw({ length: 0x0101_0000 }), 18)).toEqual(corrupt("PayloadTooLarge"));
    expect(cut(raw({ length: 0x0100_0000 }), 19)).toEqual(incomplete());
    expect(cut(raw({ length: 0x0100_0001 }), 20)).toEqual(corrupt("PayloadTooLarge"));
    expect(cut(raw({ length: 0x0100_0001 }), 19)).toEqual(incomplete());
    // A wrong header CRC is invisible until all of it is present.
    expect(cut(raw({ headerCrc: 0 }), 23)).toEqual(incomplete());
    expect(cut(raw({ headerCrc: 0 }), 24)).toEqual(corrupt("HeaderChecksum"));
  });

  it("refuses offsets outside the bytes as a programmer error", () => {
    const bytes = raw({});
    expect(() => decodeRecord(bytes, -1)).toThrow(RangeError);
    expect(() => decodeRecord(bytes, bytes.length + 1)).toThrow(RangeError);
    expect(() => decodeRecord(bytes, 0.5)).toThrow(RangeError);
    expect(decodeRecord(bytes, bytes.length)).toEqual(incomplete(bytes.length));
  });
});

describe("any bytes at any offset", () => {
  /** Checks the verdict is well-formed and, for a record, canonical. */
  const checkVerdict = (bytes: Uint8Array, offset: number) => {
    const verdict = decodeRecord(bytes, offset);
    switch (verdict._tag) {
      case "Record":
        expect(hex(encoded(verdict.record))).toBe(
          hex(bytes.subarray(offset, offset + verdict.size)),
        );
        break;
      case "Incomplete":
      case "Corrupt":
      case "BeyondSafeInteger":
        expect(verdict.offset).toBe(offset);
        break;
      default:
        throw new Error(`unexpected verdict ${JSON.stringify(verdict)}`);
    }
    // The same bytes copied out decode the same way (no byteOffset mix-up).
    const copy = Uint8Array.from(bytes.subarray(offset));
    const again = decodeRecord(copy, 0);
    expect({ ...again, offset: 0 }).toEqual({ ...verdict, offset: 0 });
  };

  it("give exactly one verdict, never an exception", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.nat(), (bytes, start) => {
        checkVerdict(bytes, start % (bytes.length + 1));
      }),
      { numRuns: 1000 },
    );
  });

  it("that start with a valid header prefix, too, and views over larger buffers", () => {
    fc.assert(
      fc.property(
        recordFields,
        fc.nat(),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
        fc.nat(8),
        (record, cutAt, changes, shift) => {
          const bytes = encoded(record);
          for (const [where, byte] of changes) bytes[where % bytes.length] = byte;
          const cutBytes = bytes.subarray(0, cutAt % (bytes.length + 1));
          const buffer = new Uint8Array(shift + cutBytes.length);
          buffer.set(cutBytes, shift);
          checkVerdict(buffer.subarray(shift), 0);
          checkVerdict(buffer, shift);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("scanRecordAt", () => {
  /**
   * decodeRecord's verdict rebuilt from scanRecordAt's, through a frame the
   * caller reuses (as segment scans do): decodeRecord makes a fresh frame per
   * record, so equal verdicts mean no field of an earlier record survives in
   * the frame into a later one.
   */
  const viaScan = (bytes: Uint8Array, offset: number, frame: RecordFrame): DecodedRecord => {
    const scanned = scanRecordAt(bytes, offset, frame);
    if (typeof scanned !== "number") return scanned;
    return {
      _tag: "Record",
      record: {
        type: frame.type,
        schema: frame.schema,
        sequence: frame.sequence,
        payload: bytes.subarray(frame.payloadStart, frame.payloadEnd),
      },
      size: scanned,
    };
  };

  it("gives decodeRecord's verdict for damaged records at any offset, one frame reused (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            recordFields,
            fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 2 }),
          ),
          { minLength: 1, maxLength: 4 },
        ),
        fc.nat(),
        (records, cutAt) => {
          const parts = records.map(([record, changes]) => {
            const bytes = encoded(record);
            for (const [where, byte] of changes) bytes[where % bytes.length] = byte;
            return bytes;
          });
          const whole = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
          let at = 0;
          const offsets: Array<number> = [];
          for (const part of parts) {
            offsets.push(at);
            whole.set(part, at);
            at += part.length;
          }
          const bytes = whole.subarray(0, cutAt % (whole.length + 1));
          const frame = recordFrame();
          for (const offset of offsets) {
            if (offset > bytes.length) continue;
            expect(viaScan(bytes, offset, frame)).toEqual(decodeRecord(bytes, offset));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("checks the record CRC of payloads on both sides of the short-payload path", () => {
    for (const length of [
      0,
      1,
      shortPayloadBytesMax - 1,
      shortPayloadBytesMax,
      shortPayloadBytesMax + 1,
      300,
    ]) {
      const payload = Uint8Array.from({ length }, (_, index) => (index * 7) & 0xff);
      const bytes = encoded({ type: 3, schema: 1, sequence: 9, payload });
      const frame = recordFrame();
      expect(scanRecordAt(bytes, 0, frame)).toBe(bytes.length);
      expect(frame).toEqual({
        type: 3,
        schema: 1,
        sequence: 9,
        payloadStart: recordHeaderBytes,
        payloadEnd: recordHeaderBytes + length,
      });
      for (const at of [recordHeaderBytes, bytes.length - 5, bytes.length - 1]) {
        if (at < recordHeaderBytes) continue;
        const damaged = new Uint8Array(bytes);
        damaged[at] = (damaged[at] ?? 0) ^ 0x10;
        expect(scanRecordAt(damaged, 0, recordFrame())).toEqual(corrupt("RecordChecksum"));
      }
    }
  });
});

/** A record's bytes with up to two bytes changed, cut anywhere (the partial scans' input). */
const damagedAndCut = fc
  .tuple(
    recordFields,
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 2 }),
    fc.nat(),
  )
  .map(([record, changes, cutAt]) => {
    const bytes = encoded(record);
    for (const [where, byte] of changes) bytes[where % bytes.length] = byte;
    return bytes.subarray(0, cutAt % (bytes.length + 1));
  });

describe("a whole record over the payload limit", () => {
  // Every byte present and both CRCs right: only the length check refuses
  // it (the short-range cases above are refused for want of bytes too).
  const whole = raw({ payload: new Uint8Array(payloadBytesMax + 1) });

  // A verdict as a short string: a failure must not print 16 MiB of payload.
  const verdict = (found: number | DecodedRecord): string =>
    typeof found === "number"
      ? `a record of ${found} bytes`
      : found._tag === "Corrupt"
        ? `Corrupt ${found.reason} at ${found.offset}`
        : found._tag;

  it("is PayloadTooLarge to every scan, with or without CRCs", () => {
    const refused = "Corrupt PayloadTooLarge at 0";
    expect(verdict(decodeRecord(whole, 0))).toBe(refused);
    expect(verdict(scanRecordAt(whole, 0, recordFrame()))).toBe(refused);
    expect(verdict(scanRecordHeaderAt(whole, 0, recordFrame()))).toBe(refused);
    expect(verdict(scanRecordStructureAt(whole, 0, recordFrame()))).toBe(refused);
  });
});

describe("scanRecordHeaderAt", () => {
  it("gives scanRecordAt's verdict except that a record CRC fault passes (property)", () => {
    fc.assert(
      fc.property(damagedAndCut, (cut) => {
        const whole = recordFrame();
        const headerOnly = recordFrame();
        const full = scanRecordAt(cut, 0, whole);
        const header = scanRecordHeaderAt(cut, 0, headerOnly);
        if (
          typeof full === "object" &&
          full._tag === "Corrupt" &&
          full.reason === "RecordChecksum"
        ) {
          // Everything before the payload's CRC held: the size and fields are the record's.
          expect(header).toBe(cut.length);
          expect(headerOnly.payloadEnd).toBe(cut.length - 4);
        } else {
          expect(header).toEqual(full);
          if (typeof full === "number") expect(headerOnly).toEqual(whole);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe("scanRecordStructureAt", () => {
  it("gives scanRecordAt's verdict except that a header or record CRC fault passes (property)", () => {
    fc.assert(
      fc.property(damagedAndCut, (cut) => {
        // The record as its CRCs would have it: what a scan that checks them sees.
        const rehashed = new Uint8Array(cut);
        if (rehashed.length >= recordHeaderBytes) {
          const length = new DataView(rehashed.buffer).getUint32(16);
          const end = recordHeaderBytes + length;
          const headerCrc = crc32c(rehashed.subarray(0, 20));
          new DataView(rehashed.buffer).setUint32(20, headerCrc);
          if (end + 4 <= rehashed.length) {
            const recordCrc = crc32c(rehashed.subarray(24, end), headerCrc);
            new DataView(rehashed.buffer).setUint32(end, recordCrc);
          }
        }
        const checked = recordFrame();
        const structure = recordFrame();
        const full = scanRecordAt(rehashed, 0, checked);
        const found = scanRecordStructureAt(cut, 0, structure);
        // Same verdict as on the bytes with their CRCs made right, for any CRCs.
        expect(typeof found === "number" ? found : found._tag).toEqual(
          typeof full === "number" ? full : full._tag,
        );
        if (typeof full === "number") expect(structure).toEqual(checked);
      }),
      { numRuns: 1000 },
    );
  });
});
