/**
 * The bytes of the terminal inspection index (docs/store.md, "The terminal
 * inspection index"): its HEAD and its entries, each a Record v1 of the
 * codec (header CRC, record CRC), so a torn or flipped byte is caught by
 * the same checks as in a segment. Pure: no disk here.
 *
 * - An entry is an event the log itself could hold: a job as a one-job
 *   (7,3) snapshot part whose `last_job_id` and record sequence are the
 *   job's id, and a result as its (10,2).
 * - Since 2026-12-06, a job whose args a (7,3) cannot nest (62 or 63
 *   levels: an insert holds them 1 level down, a part 3, a record at most
 *   64) is a record of type `deepJobType` instead: a value map of `part`,
 *   the bytes of its one-job (7,3) payload with null args, and `args`, the
 *   bytes of its args encoded as a value of their own. An older build
 *   reads one as a corrupt entry and rebuilds, as it did for such a job.
 * - HEAD is one record of type `headType` whose payload is a value map:
 *   `format`, `store` (the printed STORE_ID), `epoch`, `sequence`
 *   (the last log sequence the index reflects) and `bytes` (the length of
 *   the entries file it vouches for); since 2026-12-02 also, when the
 *   offsets file was written beside it, `offsets` (its length) and
 *   `offsets_crc` (the CRC-32C of its bytes). A HEAD without them (an older
 *   build's) is read as before: the open walks the entries. Since
 *   2026-12-04 also `image` and `image_crc`, of the state image written
 *   beside it (`stateImageFormat.ts`); without them the open folds.
 */
import { Event, type Generation, Job, type Value } from "@tay/core";
import { decodeValue, encodeValue, explainEncodeError } from "@tay/codec";
import * as Either from "effect/Either";
import {
  appendEventRecord,
  appendRecord,
  decodeEvent,
  encodeEvent,
  decodeRecord,
  encodeRecordInto,
  type RecordBuffer,
  recordFrame,
  recordSize,
  scanRecordAt,
  scanRecordHeaderAt,
} from "./codec.js";

/** The record type of HEAD: outside every event type the log uses. */
export const headType = 200;
/** The record type of a job entry whose args a (7,3) part cannot nest (schema 1). */
export const deepJobType = 201;
/** The index format HEAD names; another one is rebuilt. */
export const formatVersion = 1;

/** What HEAD says the index reflects. */
export interface Head {
  /** The printed STORE_ID of the store. */
  readonly storeId: string;
  readonly epoch: number;
  readonly lastSequence: number;
  /** Bytes of the entries file HEAD vouches for; bytes past them are ignored. */
  readonly entriesBytes: number;
  /** The offsets file written with HEAD: its length and CRC-32C, when there is one. */
  readonly offsets?: OffsetsFile | undefined;
  /** The state image written with HEAD (since 2026-12-04): its length and CRC-32C. */
  readonly image?: OffsetsFile | undefined;
}

/** What HEAD says of a file beside it (the offsets, the state image): its length and CRC. */
export interface OffsetsFile {
  readonly bytes: number;
  readonly crc: number;
}

/** The bytes of HEAD (a Left only for fields no store has: a length past 2^53-1). */
export const encodeHead = (head: Head): Either.Either<Uint8Array, string> => {
  const value = new Map<string, Value.Value>([
    ["format", formatVersion],
    ["store", head.storeId],
    ["epoch", head.epoch],
    ["sequence", head.lastSequence],
    ["bytes", head.entriesBytes],
  ]);
  if (head.offsets !== undefined) {
    value.set("offsets", head.offsets.bytes);
    value.set("offsets_crc", head.offsets.crc);
  }
  if (head.image !== undefined) {
    value.set("image", head.image.bytes);
    value.set("image_crc", head.image.crc);
  }
  const payload = encodeValue(value);
  if (payload._tag === "Left") return Either.left(`HEAD does not encode: ${payload.left._tag}`);
  const bytes = new Uint8Array(recordSize(payload.right.length));
  encodeRecordInto(bytes, 0, { type: headType, schema: 1, sequence: 1, payload: payload.right });
  return Either.right(bytes);
};

const naturalIn = (value: Map<string, Value.Value>, key: string): number | undefined => {
  const found = value.get(key);
  return typeof found === "number" && Number.isSafeInteger(found) && found >= 0 ? found : undefined;
};

/** HEAD's fields, or the one-line reason its bytes are not a HEAD of this format. */
export const decodeHead = (bytes: Uint8Array): Head | string => {
  const decoded = decodeRecord(bytes, 0);
  if (decoded._tag !== "Record") return `not a record (${decoded._tag})`;
  if (decoded.record.type !== headType || decoded.size !== bytes.length) return "not a HEAD";
  const value = decodeValue(decoded.record.payload);
  if (value._tag === "Left" || !(value.right instanceof Map)) return "not a HEAD value";
  const map = value.right;
  const format = naturalIn(map, "format");
  if (format !== formatVersion) return `format ${String(format)}, expected ${formatVersion}`;
  const storeId = map.get("store");
  const epoch = naturalIn(map, "epoch");
  const lastSequence = naturalIn(map, "sequence");
  const entriesBytes = naturalIn(map, "bytes");
  if (typeof storeId !== "string" || epoch === undefined) return "no store or epoch";
  if (lastSequence === undefined || entriesBytes === undefined) return "no sequence or length";
  // Both or neither: a HEAD with one of them names no offsets file (the open
  // walks), or no image (the open folds).
  const offsets = fileIn(map, "offsets");
  const image = fileIn(map, "image");
  return { storeId, epoch, lastSequence, entriesBytes, offsets, image };
};

/** The file HEAD names by `key` (its length) and `key_crc`, when it names both. */
const fileIn = (map: Map<string, Value.Value>, key: string): OffsetsFile | undefined => {
  const bytes = naturalIn(map, key);
  const crc = naturalIn(map, `${key}_crc`);
  return bytes === undefined || crc === undefined || crc > 0xffff_ffff ? undefined : { bytes, crc };
};

/** Where an entry of `appendEntries` starts, relative to the buffer it was laid in. */
export interface Placed {
  readonly jobId: number;
  readonly kind: "job" | "result";
  readonly offset: number;
  /** A job entry's job's finish time (the offset table keeps it for compactions). */
  readonly finishedAt?: number | null;
}

/**
 * Appends the entries of what a lean fold handed over (one commit's or
 * several commits', in order) to `buffer`, one after another, and returns
 * where each starts. On a failure nothing is appended: it fails only on a
 * value the log itself could not hold (every job here was folded from
 * decoded or decided records).
 */
export const appendEntries = (
  buffer: RecordBuffer,
  lefts: ReadonlyArray<Generation.Left>,
): Either.Either<ReadonlyArray<Placed>, string> => {
  const start = buffer.length;
  const placed: Array<Placed> = [];
  const append = (
    event: Event.Event,
    jobId: number,
    kind: Placed["kind"],
    finishedAt: number | null = null,
  ): string | undefined => {
    const at = appendEventRecord(buffer, event, jobId);
    if (at._tag === "Left") return `job ${jobId}: ${explainEncodeError(at.left)}`;
    placed.push({ jobId, kind, offset: at.right, finishedAt });
    return undefined;
  };
  const appendJob = (job: Job.Job): string | undefined => {
    // The job itself, not `Job.toSnapshotV3(job)`'s copy: both encoders
    // read only the declared fields of (7,3), and this runs for every job let go.
    const part = Event.snapshotPartV3({ part: 0, lastJobId: job.jobId, jobs: [job] });
    const failure = append(part, job.jobId, "job", job.finishedAt);
    if (failure === undefined) return undefined;
    const deep = appendDeepJob(buffer, job);
    // Refused too: the (7,3)'s refusal says why.
    if (deep === undefined) return failure;
    placed.push({ jobId: job.jobId, kind: "job", offset: deep, finishedAt: job.finishedAt });
    return undefined;
  };
  for (const left of lefts) {
    for (const job of left.jobs) {
      const failure =
        appendJob(job) ??
        (job.result === null
          ? undefined
          : append(
              Event.resultRecorded({
                jobId: job.jobId,
                result: job.result.value,
                at: job.result.at,
              }),
              job.jobId,
              "result",
            ));
      if (failure !== undefined) return refused(buffer, start, failure);
    }
    for (const result of left.results) {
      const failure = append(result, result.jobId, "result");
      if (failure !== undefined) return refused(buffer, start, failure);
    }
  }
  return Either.right(placed);
};

/**
 * A job entry of type `deepJobType` (see the module's comment) appended to
 * `buffer`: where it starts, or undefined when it cannot be (then nothing
 * is appended).
 */
const appendDeepJob = (buffer: RecordBuffer, job: Job.Job): number | undefined => {
  const part = encodeEvent(
    Event.snapshotPartV3({ part: 0, lastJobId: job.jobId, jobs: [{ ...job, args: null }] }),
  );
  const args = encodeValue(job.args);
  if (part._tag === "Left" || args._tag === "Left") return undefined;
  const payload = encodeValue(
    new Map<string, Value.Value>([
      ["args", args.right],
      ["part", part.right.payload],
    ]),
  );
  if (payload._tag === "Left") return undefined;
  const at = appendRecord(buffer, {
    type: deepJobType,
    schema: 1,
    sequence: job.jobId,
    payload: payload.right,
  });
  return at._tag === "Left" ? undefined : at.right;
};

/** What `appendEntries` appended taken back, and why. */
const refused = (buffer: RecordBuffer, start: number, reason: string) => {
  buffer.length = start;
  return Either.left(reason);
};

/** One decoded entry, or why the bytes at an offset are not one. */
export type Entry =
  | { readonly _tag: "Job"; readonly job: Job.Job; readonly size: number }
  | { readonly _tag: "Result"; readonly event: Event.ResultRecorded; readonly size: number }
  | { readonly _tag: "Incomplete" }
  | { readonly _tag: "Corrupt"; readonly reason: string };

/** The entry at `offset` of `bytes`. */
export const decodeEntry = (bytes: Uint8Array, offset: number): Entry => {
  const decoded = decodeRecord(bytes, offset);
  if (decoded._tag === "Incomplete") return { _tag: "Incomplete" };
  if (decoded._tag !== "Record") return { _tag: "Corrupt", reason: decoded._tag };
  const { type, schema, payload, sequence } = decoded.record;
  if (type === deepJobType && schema === 1) return decodeDeepJob(payload, sequence, decoded.size);
  const event = decodeEvent(type, schema, payload);
  if (event._tag === "Left") return { _tag: "Corrupt", reason: event.left._tag };
  const value = event.right;
  if (value._tag === "ResultRecorded" && value.jobId === sequence) {
    return { _tag: "Result", event: value, size: decoded.size };
  }
  const snapshot = value._tag === "SnapshotPartV3" ? value.jobs[0] : undefined;
  if (
    snapshot === undefined ||
    snapshot.jobId !== sequence ||
    Job.checkSnapshot(snapshot, sequence) !== undefined
  ) {
    return { _tag: "Corrupt", reason: `not an entry (${value._tag})` };
  }
  return { _tag: "Job", job: Job.fromSnapshot(snapshot), size: decoded.size };
};

/**
 * The job of a `deepJobType` entry: its part must be a one-job (7,3) of
 * this job with null args, and its args one canonical value.
 */
const notDeep: Entry = { _tag: "Corrupt", reason: "not a deep job entry" };

const decodeDeepJob = (payload: Uint8Array, sequence: number, size: number): Entry => {
  const value = decodeValue(payload);
  const map = value._tag === "Right" && value.right instanceof Map ? value.right : undefined;
  const part = map?.get("part");
  const args = map?.get("args");
  if (map?.size !== 2 || !(part instanceof Uint8Array) || !(args instanceof Uint8Array)) {
    return notDeep;
  }
  const event = decodeEvent(jobPair.type, jobPair.schema, part);
  const snapshot =
    event._tag === "Right" && event.right._tag === "SnapshotPartV3" ? event.right.jobs : undefined;
  const argsValue = decodeValue(args);
  const job = snapshot?.length === 1 ? snapshot[0] : undefined;
  if (job === undefined || job.args !== null || argsValue._tag === "Left") {
    return notDeep;
  }
  const whole = { ...job, args: argsValue.right };
  if (whole.jobId !== sequence || Job.checkSnapshot(whole, sequence) !== undefined) {
    return notDeep;
  }
  return { _tag: "Job", job: Job.fromSnapshot(whole), size };
};

/** The record type and schema of a job entry, a one-job (7,3) snapshot part. */
const jobPair = { type: 7, schema: 3 } as const;
/** The record type and schema of a result entry, a (10,2). */
const resultPair = { type: 10, schema: 2 } as const;

/** One entry's frame: its kind and job id (the record's sequence), or why the bytes are none. */
export type Frame =
  | { readonly _tag: "Job" | "Result"; readonly jobId: number; readonly size: number }
  | { readonly _tag: "Incomplete" }
  | { readonly _tag: "Corrupt"; readonly reason: string };

/**
 * The frame of the entry at `offset` of `bytes`: its header checked by the
 * header CRC (so its length, job id and kind are sure), its payload neither
 * decoded nor checked by the record CRC, which a lookup checks (with the
 * decode) before it answers (2026-12-02: the payload CRC at open was half
 * the index's share of a cold start; a flipped payload byte now fails the
 * lookup of that entry with `TerminalIndexCorrupt`, which rebuilds the
 * index, as bytes changed underneath always did). What the open's scan of
 * a current index notes offsets from.
 */
// One frame for every `decodeFrame`: the open scans a current index's
// entries (hundreds of thousands) without a record object and payload view
// each, as the segment scan does (docs/benchmarks.md, "Cold start").
const frameOfScan = recordFrame();

export const decodeFrame = (bytes: Uint8Array, offset: number): Frame =>
  frameOf(scanRecordHeaderAt(bytes, offset, frameOfScan));

/**
 * `decodeFrame` with the payload's record CRC checked too: what a reader
 * with no rebuild to fall back on (`openReadOnly`, the CLI at rest, which
 * folds whole instead when the index fails) walks the entries with.
 */
export const decodeFrameChecked = (bytes: Uint8Array, offset: number): Frame =>
  frameOf(scanRecordAt(bytes, offset, frameOfScan));

const frameOf = (scanned: ReturnType<typeof scanRecordAt>): Frame => {
  if (typeof scanned !== "number") {
    return scanned._tag === "Incomplete"
      ? { _tag: "Incomplete" }
      : { _tag: "Corrupt", reason: scanned._tag };
  }
  // Read out of the shared frame at once: the next scan overwrites it.
  const { type, schema, sequence } = frameOfScan;
  const size = scanned;
  const deep = type === deepJobType && schema === 1;
  if ((type === jobPair.type && schema === jobPair.schema) || deep) {
    return { _tag: "Job", jobId: sequence, size };
  }
  if (type === resultPair.type && schema === resultPair.schema) {
    return { _tag: "Result", jobId: sequence, size };
  }
  return { _tag: "Corrupt", reason: `not an entry (type ${type}, schema ${schema})` };
};
