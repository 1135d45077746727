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
 *    facts' slots count, then any more the overflow names);
 * 2. `events` records: the image's base (`Image.of(state).base`), each an
 *    event record as the log holds it;
 * 3. page records, of type `imagePagesType`: up to `pagesPerRecord` pages
 *    of a lean state's packed facts (docs/core.md, "Packed facts"), each
 *    its page number (unsigned LEB128) and its 256 slots (32-bit, little
 *    endian), ascending by page number: what a resume takes over whole;
 * 4. overflow records, of type `imageOverflowType`: the facts that do not
 *    pack, ascending by job id, each three unsigned LEB128 numbers (the id
 *    less the previous one's, 0 before the first; the queue's place in
 *    `queues`; `2·attempt + hasResult`);
 * 5. the end, of type `imageEndType`, with no payload (since 2026-12-04:
 *    an image cut at a record's end decoded as a shorter one).
 *
 * Records of each kind follow in that order; the whole file's length and
 * CRC are also in the index's HEAD, written after it, and the records' own
 * CRCs catch anything else. The encoder streams the
 * records one by one (`imageStream`), so the close never holds the whole
 * image (2026-12-04: a copy of every job held whole, twice, while it was
 * joined).
 */
import { type Event, Image, type State, type Terminal, type Value } from "@tay/core";
import { decodeValue, encodeValue } from "@tay/codec";
import * as Either from "effect/Either";
import { decodeEvent, decodeRecord, encodeEvent, encodeRecordInto, recordSize } from "./codec.js";
import type { SegmentDigest } from "../../log/Projection.js";

/** The record type of the image's head: outside every event type, and the index's HEAD's. */
export const imageHeadType = 210;
/** The record type of a run of packed fact pages. */
export const imagePagesType = 211;
/** The record type of a run of facts that do not pack. */
export const imageOverflowType = 212;
/** The record type of the image's last record: nothing after it, and no image without it. */
export const imageEndType = 213;
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

/** A record's bytes, framed with its position (from 1) as its sequence. */
const framedRecord = (type: number, payload: Uint8Array, position: number): Uint8Array => {
  const bytes = new Uint8Array(recordSize(payload.length));
  encodeRecordInto(bytes, 0, { type, schema: 1, sequence: position, payload });
  return bytes;
};

/** The queue names of the head: the packed slots' own, then any more the overflow names. */
const queueNames = (facts: Image.Facts): Array<string> => {
  const names = [...facts.queues];
  const known = new Set(names);
  for (const [, fact] of facts.overflow) {
    if (known.has(fact.queue)) continue;
    known.add(fact.queue);
    names.push(fact.queue);
  }
  return names;
};

/** The payloads of the page records, `pagesPerRecord` pages each; a string for pages out of order. */
function* pagePayloads(facts: Image.Facts): Generator<Uint8Array | string> {
  const out = new Output();
  let pages = 0;
  let previous = -1;
  for (const [number, slots] of facts.pages) {
    if (number <= previous) return yield `pages out of order at page ${number}`;
    out.number(number);
    out.slots(slots);
    previous = number;
    if (++pages % pagesPerRecord === 0) yield out.take();
  }
  if (out.length > 0) yield out.take();
}

/** The payloads of the overflow records; a string for ids out of order. */
function* overflowPayloads(
  facts: Image.Facts,
  queues: ReadonlyArray<string>,
): Generator<Uint8Array | string> {
  const places = new Map(queues.map((name, place) => [name, place]));
  const out = new Output();
  let count = 0;
  let lastId = 0;
  for (const [jobId, fact] of facts.overflow) {
    const place = places.get(fact.queue);
    if (!Number.isSafeInteger(jobId) || jobId <= lastId || place === undefined) {
      return yield `overflow out of order at job ${jobId}`;
    }
    out.number(jobId - lastId);
    out.number(place);
    out.number(fact.attempt * 2 + (fact.hasResult ? 1 : 0));
    lastId = jobId;
    if (++count % overflowPerRecord === 0) yield out.take();
  }
  if (out.length > 0) yield out.take();
}

const headValue = (
  identity: ImageIdentity,
  image: Image.Image,
  queues: ReadonlyArray<string>,
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
    ["queues", [...queues]],
  ]);

/**
 * The image of a state folded through `identity`, as its records' bytes in
 * order, made as they are read. `failure` says, once the records are read,
 * why they stopped short: only what no fold of a log gives (a value the
 * codec refuses, facts out of order); the caller then publishes no image.
 */
export interface ImageStream {
  readonly records: Iterable<Uint8Array>;
  readonly failure: () => string | undefined;
}

/**
 * The stream of `image` (core's `Image.of` of a state nothing evolves
 * while it is read, as at a close; `Image.frozen` of one that goes on,
 * as at a checkpoint).
 */
export const imageStream = (identity: ImageIdentity, image: Image.Image): ImageStream => {
  let failure: string | undefined;
  function* records(): Generator<Uint8Array> {
    const queues = queueNames(image.facts);
    const head = encodeValue(headValue(identity, image, queues));
    if (head._tag === "Left") {
      failure = `head: ${head.left._tag}`;
      return;
    }
    let position = 1;
    yield framedRecord(imageHeadType, head.right, position++);
    for (const event of image.base) {
      const encoded = encodeEvent(event);
      if (encoded._tag === "Left") {
        failure = `${event._tag}: ${encoded.left._tag}`;
        return;
      }
      const { type, schema, payload } = encoded.right;
      const bytes = new Uint8Array(recordSize(payload.length));
      encodeRecordInto(bytes, 0, { type, schema, sequence: position++, payload });
      yield bytes;
    }
    for (const [type, payloads] of [
      [imagePagesType, pagePayloads(image.facts)],
      [imageOverflowType, overflowPayloads(image.facts, queues)],
    ] as const) {
      for (const payload of payloads) {
        if (typeof payload === "string") {
          failure = payload;
          return;
        }
        yield framedRecord(type, payload, position++);
      }
    }
    yield framedRecord(imageEndType, new Uint8Array(0), position);
  }
  return { records: { [Symbol.iterator]: records }, failure: () => failure };
};

/** The image's bytes whole (tests, tools): the stream joined, or why it stopped. */
export const encodeImage = (
  identity: ImageIdentity,
  state: State.State,
): Either.Either<Uint8Array, string> => {
  const stream = imageStream(identity, Image.of(state));
  const records = [...stream.records];
  const failure = stream.failure();
  if (failure !== undefined) return Either.left(failure);
  const bytes = new Uint8Array(records.reduce((sum, record) => sum + record.length, 0));
  let offset = 0;
  for (const record of records) {
    bytes.set(record, offset);
    offset += record.length;
  }
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
  const [epoch, firstSequence, lastSequence, baseRecordCount] = [
    "epoch",
    "first",
    "sequence",
    "base",
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
  const pagePayloads: Array<Uint8Array> = [];
  const overflowPayloads: Array<Uint8Array> = [];
  // Events, then pages, then overflow: a record of an earlier kind after a later one is out of place.
  for (;;) {
    if (at.offset >= bytes.length) return Either.left("the image ends before its end record");
    const record = nextRecord(bytes, at);
    if (typeof record === "string") return Either.left(record);
    if (record.type === imageEndType) {
      if (at.offset !== bytes.length) return Either.left("bytes after the end record");
      break;
    }
    if (record.type === imagePagesType && overflowPayloads.length === 0) {
      pagePayloads.push(record.payload);
    } else if (record.type === imageOverflowType) {
      overflowPayloads.push(record.payload);
    } else if (pagePayloads.length > 0 || overflowPayloads.length > 0) {
      return Either.left(`a record of type ${record.type} out of place`);
    } else {
      const event = decodeEvent(record.type, record.schema, record.payload);
      if (event._tag === "Left") return Either.left(`event ${base.length}: ${event.left._tag}`);
      base.push(event.right);
    }
  }
  const pages = pagesOf(pagePayloads);
  if (typeof pages === "string") return Either.left(pages);
  const overflow = overflowOf(overflowPayloads, head.queues);
  if (typeof overflow === "string") return Either.left(overflow);
  const { schema3, starts, queues } = head;
  const facts = { queues, pages, overflow };
  return Either.right({ ...head, image: { base, facts, starts, schema3 } });
};
