/**
 * Payload values and Record v1 frames laid out by hand from FORMAT.md,
 * independently of the codec's encoders, for the event fixture scripts
 * (fixtures-events.mjs, fixtures-events-v3.mjs): the fixture tests then
 * cross-check two implementations. Importing this module first checks that
 * the layout reproduces FORMAT.md's record test vector, so no script can
 * write fixtures from a layout that drifted.
 */
import fastCrc32c from "fast-crc32c";

export const crc = (bytes) => fastCrc32c.calculate(bytes, 0) >>> 0;
export const concat = (...parts) => Uint8Array.from(parts.flatMap((part) => Array.from(part)));
export const utf8 = (text) => new TextEncoder().encode(text);
export const u8 = (value) => Uint8Array.of(value);
export const u32 = (value) => {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
};
export const u64 = (value) => {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(value));
  return bytes;
};

// --- Values (FORMAT.md "Payload value encoding") ---------------------------
// JavaScript stands for the value model: null, booleans, safe integers and
// bigints (integers), other numbers (floats), strings, Uint8Array (bytes),
// arrays (lists) and Maps (maps; keys sorted here by their UTF-8 bytes).

const compareKeys = (left, right) =>
  Buffer.compare(Buffer.from(utf8(left)), Buffer.from(utf8(right)));

const fixedWidth = (tag, write) => {
  const bytes = new Uint8Array(9);
  bytes[0] = tag;
  write(new DataView(bytes.buffer));
  return bytes;
};

export const encode = (value) => {
  if (value === null) return u8(0x00);
  if (value === false) return u8(0x01);
  if (value === true) return u8(0x02);
  if (typeof value === "bigint" || (typeof value === "number" && Number.isSafeInteger(value))) {
    return fixedWidth(0x03, (view) => view.setBigInt64(1, BigInt(value)));
  }
  if (typeof value === "number") return fixedWidth(0x04, (view) => view.setFloat64(1, value));
  if (typeof value === "string") return concat(u8(0x05), u32(utf8(value).length), utf8(value));
  if (value instanceof Uint8Array) return concat(u8(0x06), u32(value.length), value);
  if (Array.isArray(value)) return concat(u8(0x07), u32(value.length), ...value.map(encode));
  if (value instanceof Map) {
    const keys = [...value.keys()].sort(compareKeys);
    return concat(
      u8(0x08),
      u32(keys.length),
      ...keys.flatMap((key) => [u32(utf8(key).length), utf8(key), encode(value.get(key))]),
    );
  }
  throw new Error(`not a value: ${String(value)}`);
};

/** A map from a plain object literal (none of these keys is `__proto__`). */
export const map = (fields) => new Map(Object.entries(fields));

// --- Records (FORMAT.md "Record v1") ---------------------------------------

export const frame = (type, schema, sequence, payload) => {
  const header = concat(
    Uint8Array.of(0x54, 0x41, 0x59, 0x00, 1, type, 0, schema),
    u64(sequence),
    u32(payload.length),
  );
  return concat(header, u32(crc(header)), payload, u32(crc(concat(header, payload))));
};

export const hex = (bytes) => Buffer.from(bytes).toString("hex");

// The hand layout must reproduce FORMAT.md's record test vector first.
const specVector =
  "54415900010100010000000000000001000000a5d35091c108000000080000000461726773000000000b696e7365727465645f6174030000000000000000000000066a6f625f69640300000000000000010000000c6d61785f617474656d707473030000000000000001000000087072696f72697479030000000000000000000000057175657565050000000764656661756c740000000c7363686564756c65645f617403000000000000000000000006776f726b657205000000015794d8a272";
const specPayload = new Map([
  ["job_id", 1],
  ["queue", "default"],
  ["worker", "W"],
  ["args", null],
  ["priority", 0],
  ["max_attempts", 1],
  ["scheduled_at", 0],
  ["inserted_at", 0],
]);
if (hex(frame(1, 1, 1, encode(specPayload))) !== specVector) {
  throw new Error("the hand layout does not reproduce FORMAT.md's record vector");
}
