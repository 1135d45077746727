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
 *    facts use), `events` and `facts` (how many of each follow);
 * 2. `events` records: the image's base (`Image.of(state).base`), each an
 *    event record as the log holds it;
 * 3. fact records, of type `imageFactsType`: up to `factsPerRecord` facts
 *    each, ascending by job id, each three unsigned LEB128 numbers: the id
 *    less the previous one's (0 before the first), the queue's place in
 *    `queues`, and `2·attempt + hasResult`.
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
/** The record type of a run of facts. */
export const imageFactsType = 211;
/** The image format the head names; another one is not read. */
export const imageFormatVersion = 1;
/** Facts per record at most (a record stays well under the payload bound). */
export const factsPerRecord = 65_536;

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

const pushNumber = (out: Array<number>, value: number): void => {
  let rest = value;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
};

/** The fact records of `facts` (ascending ids), and the queue names they use; a Left past order. */
const factRecords = (
  facts: Iterable<readonly [number, Terminal.Fact]>,
): Either.Either<{ records: Array<Framed>; queues: Array<string>; count: number }, string> => {
  const queues: Array<string> = [];
  const places = new Map<string, number>();
  const records: Array<Framed> = [];
  let bytes: Array<number> = [];
  let inRecord = 0;
  let count = 0;
  let previous = 0;
  const cut = () => {
    records.push({ type: imageFactsType, schema: 1, payload: Uint8Array.from(bytes) });
    bytes = [];
    inRecord = 0;
  };
  for (const [jobId, fact] of facts) {
    if (jobId <= previous && count > 0) return Either.left(`facts out of order at job ${jobId}`);
    let place = places.get(fact.queue);
    if (place === undefined) {
      place = queues.length;
      queues.push(fact.queue);
      places.set(fact.queue, place);
    }
    pushNumber(bytes, jobId - (count === 0 ? 0 : previous));
    pushNumber(bytes, place);
    pushNumber(bytes, fact.attempt * 2 + (fact.hasResult ? 1 : 0));
    previous = jobId;
    count++;
    if (++inRecord === factsPerRecord) cut();
  }
  if (inRecord > 0) cut();
  return Either.right({ records, queues, count });
};

const headValue = (
  identity: ImageIdentity,
  image: Image.Image,
  queues: ReadonlyArray<string>,
  events: number,
  facts: number,
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
    ["events", events],
    ["facts", facts],
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
  const { records, queues, count } = facts.right;
  const head = encodeValue(headValue(identity, image, queues, framed.length, count));
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
  readonly facts: number;
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
  const [epoch, firstSequence, lastSequence, baseRecordCount, events, facts] = [
    "epoch",
    "first",
    "sequence",
    "base",
    "events",
    "facts",
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
    facts === undefined ||
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
    facts,
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

/** Checks the fact records' numbers; how many facts they hold, or why they are not facts. */
const countFacts = (payloads: ReadonlyArray<Uint8Array>, queues: number): number | string => {
  let count = 0;
  for (const payload of payloads) {
    const at = { offset: 0 };
    while (at.offset < payload.length) {
      const delta = readNumber(payload, at);
      const place = readNumber(payload, at);
      const packed = readNumber(payload, at);
      if (delta < 0 || place < 0 || packed < 0)
        return `fact ${count}: a number is cut or too large`;
      if (delta === 0 && count > 0) return `fact ${count}: its id repeats the previous one`;
      if (place >= queues) return `fact ${count}: queue ${place} of ${queues}`;
      count++;
    }
  }
  return count;
};

/** The facts of checked fact records, decoded as they are iterated. */
function* factsOf(
  payloads: ReadonlyArray<Uint8Array>,
  queues: ReadonlyArray<string>,
): Generator<readonly [number, Terminal.Fact]> {
  let jobId = 0;
  for (const payload of payloads) {
    const at = { offset: 0 };
    while (at.offset < payload.length) {
      jobId += readNumber(payload, at);
      const queue = queues[readNumber(payload, at)] ?? "";
      const packed = readNumber(payload, at);
      yield [jobId, { queue, attempt: Math.floor(packed / 2), hasResult: packed % 2 === 1 }];
    }
  }
}

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
  const payloads: Array<Uint8Array> = [];
  while (at.offset < bytes.length) {
    const record = nextRecord(bytes, at);
    if (typeof record === "string") return Either.left(record);
    if (record.type !== imageFactsType) return Either.left(`a record of type ${record.type}`);
    payloads.push(record.payload);
  }
  const counted = countFacts(payloads, head.queues.length);
  if (typeof counted === "string") return Either.left(counted);
  if (counted !== head.facts) return Either.left(`${counted} facts, the head says ${head.facts}`);
  const { schema3, starts, queues } = head;
  const facts = { [Symbol.iterator]: () => factsOf(payloads, queues) };
  return Either.right({ ...head, image: { base, facts, starts, schema3 } });
};
