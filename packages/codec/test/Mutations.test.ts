// Proves that damage to a record is never mistaken for a record: every
// single-bit flip is Corrupt with the reason of the region it hits, every
// truncation is Incomplete, and a payload flip that is re-checksummed is
// either refused by the value layer or decodes to a value that re-encodes to
// exactly the flipped bytes. It walks every bit of a few records, the spec
// vector among them.
import { Value } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { crc32c } from "../src/Crc32c.js";
import {
  type CorruptReason,
  decodeRecord,
  encodeRecord,
  type RecordFields,
  recordHeaderBytes,
} from "../src/Record.js";
import { decodeValue, encodeValue } from "../src/Value.js";

const fromHex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, "hex"));
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

const valueBytes = (value: Value.Value): Uint8Array => {
  const result = encodeValue(value);
  if (E.isLeft(result)) throw new Error(result.left._tag);
  return result.right;
};

const framed = (record: RecordFields): Uint8Array => {
  const result = encodeRecord(record);
  if (E.isLeft(result)) throw new Error(result.left._tag);
  return result.right;
};

const specRecord = fromHex(
  "54415900010100010000000000000001000000a5d35091c108000000080000000461726773000000000b696e7365727465645f6174030000000000000000000000066a6f625f69640300000000000000010000000c6d61785f617474656d707473030000000000000001000000087072696f72697479030000000000000000000000057175657565050000000764656661756c740000000c7363686564756c65645f617403000000000000000000000006776f726b657205000000015794d8a272",
);

const richPayload = valueBytes(
  new Map<string, Value.Value>([
    ["at", 1_700_000_000_000],
    ["job_id", 2 ** 40 + 7],
    ["result", [-0.5, "é", Uint8Array.of(1, 2, 3), 2n ** 60n, true, false, null, 1e300]],
    [
      "nested",
      new Map<string, Value.Value>([
        ["__proto__", [[["deep"]]]],
        ["😀", "emoji"],
      ]),
    ],
    ["text", "a longer text, to take the string decoder past its short path: ✓✓✓✓✓✓✓✓✓✓"],
  ]),
);

const records: ReadonlyArray<readonly [string, Uint8Array]> = [
  ["the spec vector", specRecord],
  [
    "an empty payload",
    framed({ type: 254, schema: 255, sequence: 2 ** 53 - 1, payload: new Uint8Array() }),
  ],
  ["a one-byte payload", framed({ type: 2, schema: 1, sequence: 7, payload: Uint8Array.of(0) })],
  ["a rich value", framed({ type: 10, schema: 2, sequence: 123_456, payload: richPayload })],
];

const flipped = (bytes: Uint8Array, bit: number): Uint8Array => {
  const copy = Uint8Array.from(bytes);
  copy[bit >>> 3] = (copy[bit >>> 3] ?? 0) ^ (0x80 >>> (bit & 7));
  return copy;
};

/** The reason a flip in byte `index` must be reported with. */
const reasonFor = (index: number): CorruptReason => {
  if (index < 4) return "BadMagic";
  if (index === 4) return "UnsupportedVersion";
  if (index < recordHeaderBytes) return "HeaderChecksum";
  return "RecordChecksum";
};

/** Recomputes both CRCs after a change (the length field untouched). */
const resealed = (bytes: Uint8Array): Uint8Array => {
  const copy = Uint8Array.from(bytes);
  const view = new DataView(copy.buffer);
  const headerCrc = crc32c(copy.subarray(0, 20));
  view.setUint32(20, headerCrc);
  view.setUint32(copy.length - 4, crc32c(copy.subarray(recordHeaderBytes, -4), headerCrc));
  return copy;
};

describe.each(records)("%s", (_, bytes) => {
  it("is a valid record to begin with", () => {
    expect(decodeRecord(bytes, 0)._tag).toBe("Record");
  });

  it("is Corrupt, for the reason of the region hit, after any single-bit flip", () => {
    for (let bit = 0; bit < bytes.length * 8; bit++) {
      const verdict = decodeRecord(flipped(bytes, bit), 0);
      expect(verdict).toEqual({ _tag: "Corrupt", reason: reasonFor(bit >>> 3), offset: 0 });
    }
  });

  it("is Corrupt after a flip even with more bytes after it", () => {
    const buffer = new Uint8Array(bytes.length * 2);
    buffer.set(bytes);
    buffer.set(bytes, bytes.length);
    for (let bit = 0; bit < bytes.length * 8; bit++) {
      expect(decodeRecord(flipped(buffer, bit), 0)._tag).toBe("Corrupt");
    }
  });

  it("is Incomplete when cut anywhere", () => {
    for (let length = 0; length < bytes.length; length++) {
      expect(decodeRecord(bytes.subarray(0, length), 0)).toEqual({ _tag: "Incomplete", offset: 0 });
    }
  });

  it("yields, with a re-checksummed payload flip, a refusal or a canonical value", () => {
    let refused = 0;
    for (let bit = recordHeaderBytes * 8; bit < (bytes.length - 4) * 8; bit++) {
      const verdict = decodeRecord(resealed(flipped(bytes, bit)), 0);
      if (verdict._tag !== "Record") throw new Error(`bit ${bit}: ${JSON.stringify(verdict)}`);
      const payload = verdict.record.payload;
      const decoded = decodeValue(payload);
      if (E.isLeft(decoded)) {
        expect(decoded.left._tag).not.toBe("Defect");
        refused++;
      } else {
        expect(hex(valueBytes(decoded.right))).toBe(hex(payload));
      }
    }
    // The flips do exercise the refusals (unless there is no value at all).
    if (bytes.length > 29) expect(refused).toBeGreaterThan(0);
  });

  it("yields, with a re-checksummed type, flags or schema flip, a record or that field's reason", () => {
    for (let bit = 5 * 8; bit < 8 * 8; bit++) {
      const changed = resealed(flipped(bytes, bit));
      const verdict = decodeRecord(changed, 0);
      const index = bit >>> 3;
      const field = changed[index] ?? 0;
      if (index === 5 && (field === 0 || field === 255)) {
        expect(verdict).toEqual({ _tag: "Corrupt", reason: "ReservedType", offset: 0 });
      } else if (index === 6) {
        expect(verdict).toEqual({ _tag: "Corrupt", reason: "NonzeroFlags", offset: 0 });
      } else if (index === 7 && field === 0) {
        expect(verdict).toEqual({ _tag: "Corrupt", reason: "ZeroSchema", offset: 0 });
      } else {
        expect(verdict._tag).toBe("Record");
        if (verdict._tag === "Record") {
          expect(verdict.record.type).toBe(changed[5]);
          expect(verdict.record.schema).toBe(changed[7]);
        }
      }
    }
  });
});

describe("the spec vector's payload", () => {
  it("refuses most re-checksummed flips and never accepts a non-canonical value", () => {
    // A direct count over the value alone, as a reference for the test above.
    const payload = specRecord.subarray(recordHeaderBytes, -4);
    const original = decodeValue(payload);
    if (E.isLeft(original)) throw new Error(original.left._tag);
    let accepted = 0;
    for (let bit = 0; bit < payload.length * 8; bit++) {
      const decoded = decodeValue(flipped(payload, bit));
      if (E.isRight(decoded)) {
        accepted++;
        expect(hex(valueBytes(decoded.right))).toBe(hex(flipped(payload, bit)));
        expect(Value.equals(decoded.right, original.right)).toBe(false);
      }
    }
    expect(accepted).toBeGreaterThan(0);
    expect(accepted).toBeLessThan(payload.length * 8);
  });
});
