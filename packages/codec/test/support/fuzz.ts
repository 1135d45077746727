/**
 * The codec's fuzzer: random and mutated inputs to every decoder (value,
 * record, segment header and footer, STORE-V2, MANIFEST, CURRENT, the
 * store id's text form, and the payload of every declared event pair).
 * Seeds are the committed fixtures; a mutation flips bits, sets bytes to
 * edge values, writes edge integers over length fields, truncates, extends,
 * splices, and sometimes re-seals the CRCs so the input reaches the checks
 * behind them. Each input must return (never throw) a typed result: a
 * tagged value, or an Either whose Left is tagged and never a `Defect`.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as E from "fp-ts/lib/Either.js";
import { crc32c } from "../../src/Crc32c.js";
import { decodeCurrentPointer } from "../../src/Current.js";
import { decodeEvent } from "../../src/Event.js";
import { decodeManifest } from "../../src/Manifest.js";
import { decodeStoreMarker } from "../../src/Marker.js";
import { payloadPairs } from "../../src/Payload.js";
import { decodeRecord, encodeRecord } from "../../src/Record.js";
import {
  decodeSegmentFooter,
  decodeSegmentHeader,
  segmentFooterBytes,
  segmentHeaderBytes,
} from "../../src/Segment.js";
import { formatStoreId, parseStoreId } from "../../src/StoreId.js";
import { decodeValue } from "../../src/Value.js";

/** A small, fast, seeded generator (mulberry32). */
export const makeRandom = (seed: number) => {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
  const below = (bound: number): number => Math.floor(next() * bound);
  return { next, below };
};
type Random = ReturnType<typeof makeRandom>;

/** What one decoder answered: a value, a typed refusal, or why it is neither. */
export type Verdict = "valid" | "refused" | "threw" | "untyped" | "defect";

const tagOf = (value: unknown): string | undefined =>
  typeof value === "object" && value !== null && "_tag" in value && typeof value._tag === "string"
    ? value._tag
    : undefined;

/** The verdict on an Either-returning decoder's answer. */
const ofEither = (result: E.Either<unknown, unknown>): Verdict => {
  if (E.isRight(result)) return "valid";
  const tag = tagOf(result.left);
  if (tag === undefined) return "untyped";
  return tag === "Defect" ? "defect" : "refused";
};

const recordTags = new Set(["Record", "Incomplete", "Corrupt", "BeyondSafeInteger"]);

/** One decoder under fuzz: its seeds and how to judge an input. */
export interface Target {
  readonly name: string;
  readonly seeds: ReadonlyArray<Uint8Array>;
  readonly decode: (bytes: Uint8Array) => Verdict;
  /** Re-seals a mutated input's checksums so it gets past them (or leaves it). */
  readonly reseal?: (bytes: Uint8Array) => Uint8Array;
  /** An event pair with no fixture of its own, seeded with every other pair's payloads. */
  readonly borrowedSeeds?: true;
}

const fixtures = new URL("../fixtures/", import.meta.url);
const readAll = (folder: string, keep: (name: string) => boolean): ReadonlyArray<Uint8Array> =>
  readdirSync(new URL(folder, fixtures))
    .filter(keep)
    .map((name) => Uint8Array.from(readFileSync(new URL(`${folder}${name}`, fixtures))));
const bytesFixtures = (prefix: string) =>
  readAll("bytes/", (name) => name.startsWith(prefix) && name !== "SHA256SUMS");

/** Rewrites the trailing CRC of a fixed-size structure. */
const resealTrailing = (bytes: Uint8Array): Uint8Array => {
  if (bytes.length < 4) return bytes;
  const sealed = Uint8Array.from(bytes);
  new DataView(sealed.buffer).setUint32(sealed.length - 4, crc32c(sealed.subarray(0, -4)));
  return sealed;
};

/** The event fixtures' files: Event v1/v2 and Event v3 (EVENTS-V3.md), each folder's own. */
const eventFiles = [
  ...readAll("events/", (name) => name.endsWith(".bin")),
  ...readAll("events-v3/", (name) => name.endsWith(".bin")),
];

/** The decoded records of the event fixtures: each pair's seed payloads. */
const eventRecords = eventFiles.flatMap((bytes) => {
  const decoded = decodeRecord(bytes, 0);
  return decoded._tag === "Record" ? [decoded.record] : [];
});

/** Re-encodes a record around a mutated payload: a valid frame with garbage inside. */
const reframe = (bytes: Uint8Array): Uint8Array => {
  const decoded = decodeRecord(bytes, 0);
  if (decoded._tag !== "Record") return bytes;
  const encoded = encodeRecord(decoded.record);
  return E.isRight(encoded) ? encoded.right : bytes;
};

const segments = bytesFixtures("segment-");
const fixedLayout = (
  name: string,
  seeds: ReadonlyArray<Uint8Array>,
  decode: (bytes: Uint8Array) => E.Either<unknown, unknown>,
): Target => ({ name, seeds, decode: (bytes) => ofEither(decode(bytes)), reseal: resealTrailing });

const text = new TextEncoder();
const untext = new TextDecoder();

/** Every decoder the fuzzer drives. */
export const targets = (): ReadonlyArray<Target> => {
  const pairs = Object.entries(payloadPairs);
  const eventTargets = pairs.map(([tag, pair]): Target => {
    const own = eventRecords.filter(
      (record) => record.type === pair.type && record.schema === pair.schema,
    );
    const seeds = (own.length > 0 ? own : eventRecords).map((record) => record.payload);
    return {
      name: `event ${tag} (${pair.type},${pair.schema})`,
      seeds,
      decode: (payload) => ofEither(decodeEvent(pair.type, pair.schema, payload)),
      ...(own.length > 0 ? {} : { borrowedSeeds: true as const }),
    };
  });
  return [
    {
      name: "value",
      seeds: [...bytesFixtures("value-"), ...eventRecords.map((record) => record.payload)],
      decode: (bytes) => ofEither(decodeValue(bytes)),
    },
    {
      name: "record",
      seeds: [...bytesFixtures("record-"), ...eventFiles],
      decode: (bytes) => {
        const decoded = decodeRecord(bytes, 0);
        if (decoded._tag === "Record") return "valid";
        return recordTags.has(decoded._tag) ? "refused" : "untyped";
      },
      reseal: reframe,
    },
    fixedLayout(
      "segment header",
      segments.map((bytes) => bytes.subarray(0, segmentHeaderBytes)),
      decodeSegmentHeader,
    ),
    fixedLayout(
      "segment footer",
      segments
        .filter((bytes) => bytes.length >= segmentHeaderBytes + segmentFooterBytes)
        .map((bytes) => bytes.subarray(bytes.length - segmentFooterBytes)),
      decodeSegmentFooter,
    ),
    fixedLayout("STORE-V2 marker", bytesFixtures("store-v2"), decodeStoreMarker),
    fixedLayout("MANIFEST", bytesFixtures("manifest-"), decodeManifest),
    fixedLayout("CURRENT", bytesFixtures("current-"), decodeCurrentPointer),
    {
      name: "store id",
      seeds: [text.encode(formatStoreId(Uint8Array.from({ length: 16 }, (_, index) => index)))],
      decode: (bytes) => ofEither(parseStoreId(untext.decode(bytes))),
    },
    ...eventTargets,
  ];
};

const edgeBytes = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff];
const edgeWords = [0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x0100_0000, 0x00ff_ffff];

/** One mutation of `bytes` (a copy). */
const mutateOnce = (bytes: Uint8Array, random: Random): Uint8Array => {
  const at = bytes.length === 0 ? 0 : random.below(bytes.length);
  switch (random.below(8)) {
    case 0: {
      const flipped = Uint8Array.from(bytes);
      if (flipped.length > 0) flipped[at] = (flipped[at] ?? 0) ^ (1 << random.below(8));
      return flipped;
    }
    case 1: {
      const set = Uint8Array.from(bytes);
      if (set.length > 0) set[at] = edgeBytes[random.below(edgeBytes.length)] ?? 0;
      return set;
    }
    case 2: {
      const set = Uint8Array.from(bytes);
      if (set.length >= at + 4) {
        new DataView(set.buffer).setUint32(at, edgeWords[random.below(edgeWords.length)] ?? 0);
      }
      return set;
    }
    case 3:
      return bytes.slice(0, random.below(bytes.length + 1));
    case 4: {
      const extended = new Uint8Array(bytes.length + 1 + random.below(16));
      extended.set(bytes);
      for (let index = bytes.length; index < extended.length; index += 1) {
        extended[index] = random.below(256);
      }
      return extended;
    }
    case 5: {
      // Delete a slice.
      const end = Math.min(bytes.length, at + 1 + random.below(8));
      return Uint8Array.from([...bytes.subarray(0, at), ...bytes.subarray(end)]);
    }
    case 6: {
      // Duplicate a slice in place.
      const end = Math.min(bytes.length, at + 1 + random.below(8));
      return Uint8Array.from([...bytes.subarray(0, end), ...bytes.subarray(at)]);
    }
    default: {
      const set = Uint8Array.from(bytes);
      if (set.length > 0) set[at] = random.below(256);
      return set;
    }
  }
};

/** A random input: pure noise, or a seed with one to four mutations (re-sealed half the time). */
const inputFor = (target: Target, random: Random): Uint8Array => {
  const seed = target.seeds[random.below(target.seeds.length)];
  if (seed === undefined || random.below(8) === 0) {
    return Uint8Array.from({ length: random.below(96) }, () => random.below(256));
  }
  let input: Uint8Array = seed;
  const mutations = 1 + random.below(4);
  for (let index = 0; index < mutations; index += 1) input = mutateOnce(input, random);
  return target.reseal !== undefined && random.below(2) === 0 ? target.reseal(input) : input;
};

/** The counts of one target's run; `failures` holds the first few failing inputs as hex. */
export interface TargetReport {
  readonly name: string;
  readonly inputs: number;
  /** Inputs decoded to a value (the others were refused with a typed error). */
  readonly valid: number;
  readonly failures: ReadonlyArray<string>;
}

/** Inputs between two yields to the event loop (a long synchronous run starves vitest's RPC). */
const inputsPerSlice = 5_000;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs `inputsPerTarget` inputs through every target, from `seed`. */
export const fuzz = async (
  inputsPerTarget: number,
  seed: number,
): Promise<ReadonlyArray<TargetReport>> => {
  const reports: Array<TargetReport> = [];
  for (const [index, target] of targets().entries()) {
    const random = makeRandom(seed * 7919 + index);
    const failures: Array<string> = [];
    let valid = 0;
    for (let count = 0; count < inputsPerTarget; count += 1) {
      if (count % inputsPerSlice === inputsPerSlice - 1) await yieldToEventLoop();
      const input = inputFor(target, random);
      let verdict: Verdict;
      try {
        verdict = target.decode(input);
      } catch {
        verdict = "threw";
      }
      if (verdict === "valid") valid += 1;
      else if (verdict !== "refused" && failures.length < 5) {
        failures.push(`${verdict}: ${Buffer.from(input).toString("hex")}`);
      }
    }
    reports.push({ name: target.name, inputs: inputsPerTarget, valid, failures });
  }
  return reports;
};
