/**
 * The bytes of the state image (docs/store.md, "The state image"): the
 * engine's folded state at a close, beside the terminal index, so that
 * the next open resumes the fold (`Generation.resume`) instead of decoding
 * and folding every record again. Pure: no disk here.
 *
 * A run of Record v1s of the codec (header CRC, record CRC), each with its
 * position (from 1) as its sequence:
 *
 * 1. the head, of type `imageHeadType`: a value map with `format`, `store`
 *    (the printed STORE_ID), `epoch`, `first` (the generation's first
 *    sequence), `sequence` (the last one the image folded), `base` (the
 *    manifest's base record count), `segments` (per segment `[id, records,
 *    end, crc]`: what the open's scan must find), `schema3`, `starts`
 *    (`[queue, [at, ...]]` per rate-limited queue), `queues` (the names the
 *    facts' slots count, then any more the overflow names), and how many
 *    `events`, `pages` and `overflow` facts follow;
 * 2. `events` records: the image's base (`Image.of(state).base`), each an
 *    event record as the log holds it;
 * 3. page records, of type `imagePagesType`: up to `pagesPerRecord` pages
 *    of a lean state's packed facts (docs/core.md, "Packed facts"), each
 *    its page number (unsigned LEB128) and its 256 slots (32-bit, little
 *    endian), ascending by page number: what a resume takes over whole;
 * 4. overflow records, of type `imageOverflowType`: the facts that do not
 *    pack, ascending by job id, each three unsigned LEB128 numbers (the id
 *    less the previous one's, 0 before the first; the queue's place in
 *    `queues`; `2·attempt + hasResult`).
 *
 * The whole file's length and CRC are in the index's HEAD, which is
 * written after it; the records' own CRCs catch a file read past a crash
 * that HEAD does not vouch for.
 */
import { type Event, Image, type State, type Terminal, type Value } from "@tay/core";
import { decodeValue, encodeValue } from "@tay/codec";
import { Either } from "effect";
import { decodeEvent, decodeRecord, encodeEvent, encodeRecordInto, recordSize } from "./codec.js";
import type { SegmentDigest } from "../../log/Projection.js";

/** The record type of the image's head: outside every event type, and the index's HEAD's. */
export const imageHeadType = 210;
/** The record type of a run of packed fact pages. */
export const imagePagesType = 211;
/** The record type of a run of facts that do not pack. */
export const imageOverflowType = 212;
/** The image format the head names; another one is not read. */
export const imageFormatVersion = 1;
/** Pages per record at most (~256 KiB: a record stays well under the payload bound). */
export const pagesPerRecord = 256;
/** Facts per overflow record at most. */
export const overflowPerRecord = 65_536;
/** Slots of a page (core's `pageSlots`), and its bytes. */
const pageSlots = 256;
const pageBytes = pageSlots * 4;

/** Which store, generation and records an image folded. */
export interface ImageIdentity {
  /** The printed STORE_ID. */
  readonly storeId: string;
  readonly epoch: number;
  /** The generation's first sequence. */
  readonly firstSequence: number;
  /** The last sequence folded. */
  readonly lastSequence: number;
  /** The manifest's base record count. */
  readonly baseRecordCount: number;
  /** The segments as the fold read them, in order. */
  readonly segments: ReadonlyArray<SegmentDigest>;
}

/** A decoded image: what it folded, and the image to resume from. */
export interface DecodedImage extends ImageIdentity {
  readonly image: Image.Image;
}

interface Framed {
  readonly type: number;
  readonly schema: number;
  readonly payload: Uint8Array;
}

/** Bytes, growing as they are written (a page's slots copied in whole). */
class Output {
  bytes = new Uint8Array(64 * 1024);
  length = 0;

  room(more: number): void {
    if (this.length + more <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + more));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  number(value: number): void {
    this.room(8);
    let rest = value;
    while (rest >= 128) {
      this.bytes[this.length++] = (rest % 128) + 128;
      rest = Math.floor(rest / 128);
    }
    this.bytes[this.length++] = rest;
  }

  slots(slots: Uint32Array): void {
    this.room(pageBytes);
    const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.length, pageBytes);
    for (let at = 0; at < pageSlots; at++) view.setUint32(at * 4, slots[at] ?? 0, true);
    this.length += pageBytes;
  }

  /** The bytes written, and a fresh start. */
  take(): Uint8Array {
    const taken = this.bytes.slice(0, this.length);
    this.length = 0;
    return taken;
  }
}

interface FactRecords {
  readonly records: Array<Framed>;
  readonly queues: Array<string>;
  readonly pages: number;
  readonly overflow: number;
}

/** The page and overflow records of `facts`; a Left for pages or ids out of order. */
const factRecords = (facts: Image.Facts): Either.Either<FactRecords, string> => {
  const queues = [...facts.queues];
  const places = new Map(queues.map((name, place) => [name, place]));
  const records: Array<Framed> = [];
  const out = new Output();
  let pages = 0;
  let previous = -1;
  for (const [number, slots] of facts.pages) {
    if (number <= previous) return Either.left(`pages out of order at page ${number}`);
    out.number(number);
    out.slots(slots);
    previous = number;
    if (++pages % pagesPerRecord === 0) {
      records.push({ type: imagePagesType, schema: 1, payload: out.take() });
    }
  }
  if (out.length > 0) records.push({ type: imagePagesType, schema: 1, payload: out.take() });
  let overflow = 0;
  let lastId = 0;
  for (const [jobId, fact] of facts.overflow) {
    if (!Number.isSafeInteger(jobId) || jobId <= lastId) {
      return Either.left(`overflow out of order at job ${jobId}`);
    }
    let place = places.get(fact.queue);
    if (place === undefined) {
      place = queues.length;
      queues.push(fact.queue);
      places.set(fact.queue, place);
    }
    out.number(jobId - lastId);
    out.number(place);
    out.number(fact.attempt * 2 + (fact.hasResult ? 1 : 0));
    lastId = jobId;
    if (++overflow % overflowPerRecord === 0) {
      records.push({ type: imageOverflowType, schema: 1, payload: out.take() });
    }
  }
  if (out.length > 0) records.push({ type: imageOverflowType, schema: 1, payload: out.take() });
  return Either.right({ records, queues, pages, overflow });
};

const headValue = (
  identity: ImageIdentity,
  image: Image.Image,
  events: number,
  facts: FactRecords,
): Value.Value =>
  new Map<string, Value.Value>([
    ["format", imageFormatVersion],
    ["store", identity.storeId],
    ["epoch", identity.epoch],
    ["first", identity.firstSequence],
    ["sequence", identity.lastSequence],
    ["base", identity.baseRecordCount],
    ["segments", identity.segments.map((s) => [s.id, s.records, s.end, s.crc])],
    ["schema3", image.schema3],
    ["starts", [...image.starts].map(([queue, times]) => [queue, [...times]])],
    ["queues", facts.queues],
    ["events", events],
    ["pages", facts.pages],
    ["overflow", facts.overflow],
  ]);

/**
 * The bytes of the image of `state` folded through `identity`. A Left
 * only for what no fold of a log gives (a value the codec refuses, facts
 * out of order): the caller then writes no image.
 */
export const encodeImage = (
  identity: ImageIdentity,
  state: State.State,
): Either.Either<Uint8Array, string> => {
  const image = Image.of(state);
  const framed: Array<Framed> = [];
  for (const event of image.base) {
    const encoded = encodeEvent(event);
    if (encoded._tag === "Left") return Either.left(`${event._tag}: ${encoded.left._tag}`);
    framed.push(encoded.right);
  }
  const facts = factRecords(image.facts);
  if (Either.isLeft(facts)) return Either.left(facts.left);
  const { records } = facts.right;
  const head = encodeValue(headValue(identity, image, framed.length, facts.right));
  if (head._tag === "Left") return Either.left(`head: ${head.left._tag}`);
  const all: Array<Framed> = [
    { type: imageHeadType, schema: 1, payload: head.right },
    ...framed,
    ...records,
  ];
  let total = 0;
  for (const record of all) total += recordSize(record.payload.length);
  const bytes = new Uint8Array(total);
  let offset = 0;
  all.forEach((record, position) => {
    offset += encodeRecordInto(bytes, offset, { ...record, sequence: position + 1 });
  });
  return Either.right(bytes);
};

interface Cursor {
  offset: number;
  position: number;
}

/** The next record of the image, as the position it must be; or why not. */
const nextRecord = (bytes: Uint8Array, at: Cursor): Framed | string => {
  const decoded = decodeRecord(bytes, at.offset);
  if (decoded._tag !== "Record")
    return `record ${at.position} at offset ${at.offset}: ${decoded._tag}`;
  if (decoded.record.sequence !== at.position) {
    return `record ${at.position} at offset ${at.offset}: numbered ${decoded.record.sequence}`;
  }
  at.offset += decoded.size;
  at.position += 1;
  return decoded.record;
};

const natural = (map: Value.ValueMap, key: string): number | undefined => {
  const found = map.get(key);
  return typeof found === "number" && Number.isSafeInteger(found) && found >= 0 ? found : undefined;
};

const naturals = (value: Value.Value | undefined, length: number): Array<number> | undefined => {
  if (!Array.isArray(value) || value.length !== length) return undefined;
  const out: Array<number> = [];
  for (const item of value) {
    if (typeof item !== "number" || !Number.isSafeInteger(item) || item < 0) return undefined;
    out.push(item);
  }
  return out;
};

const segmentsOf = (value: Value.Value | undefined): Array<SegmentDigest> | undefined => {
  if (!Array.isArray(value)) return undefined;
  const segments: Array<SegmentDigest> = [];
  for (const item of value) {
    const fields = naturals(item, 4);
    if (fields === undefined) return undefined;
    const [id = 0, records = 0, end = 0, crc = 0] = fields;
    segments.push({ id, records, end, crc });
  }
  return segments;
};

const startsOf = (
  value: Value.Value | undefined,
): Array<readonly [string, ReadonlyArray<number>]> | undefined => {
  if (!Array.isArray(value)) return undefined;
  const starts: Array<readonly [string, ReadonlyArray<number>]> = [];
  for (const item of value) {
    if (!Array.isArray(item) || item.length !== 2) return undefined;
    const [queue, times] = item;
    if (typeof queue !== "string" || !Array.isArray(times)) return undefined;
    const ats: Array<number> = [];
    for (const at of times) {
      if (typeof at !== "number" || !Number.isSafeInteger(at)) return undefined;
      ats.push(at);
    }
    starts.push([queue, ats]);
  }
  return starts;
};

const stringsOf = (value: Value.Value | undefined): Array<string> | undefined => {
  if (!Array.isArray(value)) return undefined;
  const out: Array<string> = [];
  for (const item of value) {
    if (typeof item !== "string") return undefined;
    out.push(item);
  }
  return out;
};

interface Head extends ImageIdentity {
  readonly schema3: boolean;
  readonly starts: ReadonlyArray<readonly [string, ReadonlyArray<number>]>;
  readonly queues: ReadonlyArray<string>;
  readonly events: number;
  readonly pages: number;
  readonly overflow: number;
}

const headOf = (record: Framed): Head | string => {
  if (record.type !== imageHeadType) return `the first record is of type ${record.type}`;
  const value = decodeValue(record.payload);
  if (value._tag === "Left" || !(value.right instanceof Map)) return "the head is not a value map";
  const map = value.right;
  const format = natural(map, "format");
  if (format !== imageFormatVersion)
    return `format ${String(format)}, expected ${imageFormatVersion}`;
  const storeId = map.get("store");
  const [epoch, firstSequence, lastSequence, baseRecordCount, events, pages, overflow] = [
    "epoch",
    "first",
    "sequence",
    "base",
    "events",
    "pages",
    "overflow",
  ].map((key) => natural(map, key));
  const segments = segmentsOf(map.get("segments"));
  const schema3 = map.get("schema3");
  const starts = startsOf(map.get("starts"));
  const queues = stringsOf(map.get("queues"));
  if (
    typeof storeId !== "string" ||
    epoch === undefined ||
    firstSequence === undefined ||
    lastSequence === undefined ||
    baseRecordCount === undefined ||
    events === undefined ||
    pages === undefined ||
    overflow === undefined ||
    segments === undefined ||
    typeof schema3 !== "boolean" ||
    starts === undefined ||
    queues === undefined
  ) {
    return "the head lacks a field or has one of the wrong kind";
  }
  return {
    storeId,
    epoch,
    firstSequence,
    lastSequence,
    baseRecordCount,
    segments,
    schema3,
    starts,
    queues,
    events,
    pages,
    overflow,
  };
};

/** Reads one LEB128 number at `at.offset` of `bytes`, or -1 past the end or 2^53. */
const readNumber = (bytes: Uint8Array, at: { offset: number }): number => {
  let value = 0;
  let weight = 1;
  for (;;) {
    const byte = bytes[at.offset];
    if (byte === undefined || weight > Number.MAX_SAFE_INTEGER) return -1;
    at.offset += 1;
    value += (byte % 128) * weight;
    if (byte < 128) return value <= Number.MAX_SAFE_INTEGER ? value : -1;
    weight *= 128;
  }
};

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The 256 slots at `at` of `payload`, as a fresh array the resume takes over. */
const slotsAt = (payload: Uint8Array, at: number): Uint32Array => {
  // A copy of its own (a Buffer's `slice` would be a view into the file's pool).
  const copy = new Uint8Array(pageBytes);
  copy.set(payload.subarray(at, at + pageBytes));
  if (littleEndian) return new Uint32Array(copy.buffer);
  const view = new DataView(copy.buffer);
  const slots = new Uint32Array(pageSlots);
  for (let slot = 0; slot < pageSlots; slot++) slots[slot] = view.getUint32(slot * 4, true);
  return slots;
};

/** The pages of page records, or why they are not pages. */
const pagesOf = (
  payloads: ReadonlyArray<Uint8Array>,
): Array<readonly [number, Uint32Array]> | string => {
  const pages: Array<readonly [number, Uint32Array]> = [];
  for (const payload of payloads) {
    const at = { offset: 0 };
    while (at.offset < payload.length) {
      const number = readNumber(payload, at);
      if (number < 0 || at.offset + pageBytes > payload.length) {
        return `page ${pages.length}: cut`;
      }
      pages.push([number, slotsAt(payload, at.offset)]);
      at.offset += pageBytes;
    }
  }
  return pages;
};

/** The facts of overflow records, or why they are not facts. */
const overflowOf = (
  payloads: ReadonlyArray<Uint8Array>,
  queues: ReadonlyArray<string>,
): Array<readonly [number, Terminal.Fact]> | string => {
  const facts: Array<readonly [number, Terminal.Fact]> = [];
  let jobId = 0;
  for (const payload of payloads) {
    const at = { offset: 0 };
    while (at.offset < payload.length) {
      const delta = readNumber(payload, at);
      const place = readNumber(payload, at);
      const packed = readNumber(payload, at);
      const queue = queues[place];
      if (delta <= 0 || packed < 0 || queue === undefined) {
        return `overflow fact ${facts.length}: a number is cut, out of order or out of range`;
      }
      jobId += delta;
      facts.push([jobId, { queue, attempt: Math.floor(packed / 2), hasResult: packed % 2 === 1 }]);
    }
  }
  return facts;
};

/**
 * The image in `bytes`, every record's CRCs, number and kind checked and
 * every event decoded; or the one-line reason it is not an image of this
 * format (the caller then folds the log instead).
 */
export const decodeImage = (bytes: Uint8Array): Either.Either<DecodedImage, string> => {
  const at: Cursor = { offset: 0, position: 1 };
  const first = nextRecord(bytes, at);
  if (typeof first === "string") return Either.left(first);
  const head = headOf(first);
  if (typeof head === "string") return Either.left(head);
  const base: Array<Event.Event> = [];
  for (let index = 0; index < head.events; index++) {
    const record = nextRecord(bytes, at);
    if (typeof record === "string") return Either.left(record);
    const event = decodeEvent(record.type, record.schema, record.payload);
    if (event._tag === "Left") return Either.left(`event ${index}: ${event.left._tag}`);
    base.push(event.right);
  }
  const pagePayloads: Array<Uint8Array> = [];
  const overflowPayloads: Array<Uint8Array> = [];
  while (at.offset < bytes.length) {
    const record = nextRecord(bytes, at);
    if (typeof record === "string") return Either.left(record);
    if (record.type === imagePagesType && overflowPayloads.length === 0) {
      pagePayloads.push(record.payload);
    } else if (record.type === imageOverflowType) {
      overflowPayloads.push(record.payload);
    } else {
      return Either.left(`a record of type ${record.type} out of place`);
    }
  }
  const pages = pagesOf(pagePayloads);
  if (typeof pages === "string") return Either.left(pages);
  const overflow = overflowOf(overflowPayloads, head.queues);
  if (typeof overflow === "string") return Either.left(overflow);
  if (pages.length !== head.pages || overflow.length !== head.overflow) {
    return Either.left(
      `${pages.length} pages and ${overflow.length} overflow facts, the head says ${head.pages} and ${head.overflow}`,
    );
  }
  const { schema3, starts, queues } = head;
  const facts = { queues, pages, overflow };
  return Either.right({ ...head, image: { base, facts, starts, schema3 } });
};
