/**
 * Whole rows of the log's tables, decoded and checked: the head row, a
 * generation row, a record row. A record row must hold exactly one valid
 * Record v1 (the codec's `decodeRecord`: magic, version, header CRC, the
 * fields, the record CRC), under the key the sequences call for, with the
 * same sequence inside its bytes as in its key.
 */
import { decodeRecord, type RecordFields } from "@tay/codec";
import { CorruptRecord, MalformedRow, Mismatch, MissingRow } from "../PgError.js";
import * as Rows from "./rows.js";

/** The head row: the current epoch and the last sequence committed to it. */
export interface Head {
  readonly epoch: number;
  readonly lastSequence: number;
}

/** A generation row: the manifest's fields. */
export interface GenerationRow {
  readonly epoch: number;
  readonly parentEpoch: number;
  readonly firstSequence: number;
  readonly baseRecordCount: number;
  readonly createdAt: number;
}

/** A checked record row: its fields (the payload a view of the row's bytes) and its bytes. */
export interface RecordRow {
  readonly record: RecordFields;
  readonly bytes: Uint8Array;
}

const malformed = (
  path: string,
  table: string,
  column: string,
  found: Rows.Refused,
  epoch: number | undefined,
  sequence?: number,
) => new MalformedRow({ path, table, column, found: found.found, epoch, sequence });

/** Decodes the integer columns of a row in order, or the first refusal. */
const integers = (
  path: string,
  table: string,
  row: unknown,
  columns: ReadonlyArray<readonly [string, number]>,
  epoch: number | undefined,
): ReadonlyArray<number> | MalformedRow => {
  const values: Array<number> = [];
  for (const [column, minimum] of columns) {
    const value = Rows.integer(Rows.field(row, column), minimum);
    if (Rows.isRefused(value)) return malformed(path, table, column, value, epoch);
    values.push(value);
  }
  return values;
};

/** The byte count `bytesBetween` read (its one row), or why it cannot be one. */
export const byteCount = (
  path: string,
  epoch: number,
  rows: ReadonlyArray<unknown>,
): number | MalformedRow => {
  const values = integers(path, "tay_record", rows[0], [["bytes", 0]], epoch);
  return values instanceof MalformedRow ? values : (values[0] ?? 0);
};

/** The head row (the first of `rows`), or why it is missing or malformed. */
export const head = (
  path: string,
  rows: ReadonlyArray<unknown>,
): Head | MissingRow | MalformedRow => {
  const row = rows[0];
  if (row === undefined) return new MissingRow({ path, table: "tay_current", epoch: undefined });
  const values = integers(
    path,
    "tay_current",
    row,
    [
      ["epoch", 1],
      ["last_sequence", 0],
    ],
    undefined,
  );
  if (values instanceof MalformedRow) return values;
  const [epoch = 0, lastSequence = 0] = values;
  return { epoch, lastSequence };
};

/** The generation row of `epoch` (the first of `rows`), checked against the manifest's rules. */
export const generation = (
  path: string,
  epoch: number,
  rows: ReadonlyArray<unknown>,
): GenerationRow | MissingRow | MalformedRow => {
  const row = rows[0];
  if (row === undefined) return new MissingRow({ path, table: "tay_generation", epoch });
  const values = integers(
    path,
    "tay_generation",
    row,
    [
      ["epoch", 1],
      ["parent_epoch", 0],
      ["first_sequence", 1],
      ["base_record_count", 0],
      ["created_at", 0],
    ],
    epoch,
  );
  if (values instanceof MalformedRow) return values;
  const [found = 0, parentEpoch = 0, firstSequence = 0, baseRecordCount = 0, createdAt = 0] =
    values;
  if (found !== epoch || parentEpoch >= epoch) {
    const column = found !== epoch ? "epoch" : "parent_epoch";
    const value = found !== epoch ? found : parentEpoch;
    return malformed(
      path,
      "tay_generation",
      column,
      { _tag: "Refused", found: String(value) },
      epoch,
    );
  }
  return { epoch, parentEpoch, firstSequence, baseRecordCount, createdAt };
};

/**
 * Checks the record row expected at `sequence`: its key, then its bytes
 * (exactly one valid record, nothing after it), then the sequence inside.
 */
export const record = (
  path: string,
  epoch: number,
  sequence: number,
  row: unknown,
): RecordRow | MalformedRow | Mismatch | CorruptRecord => {
  const key = Rows.integer(Rows.field(row, "sequence"), 1);
  if (Rows.isRefused(key)) return malformed(path, "tay_record", "sequence", key, epoch, sequence);
  if (key !== sequence) {
    return new Mismatch({
      path,
      epoch,
      sequence,
      field: "Sequence",
      expected: String(sequence),
      found: String(key),
    });
  }
  const bytes = Rows.bytes(Rows.field(row, "record"));
  if (Rows.isRefused(bytes)) return malformed(path, "tay_record", "record", bytes, epoch, sequence);
  const decoded = decodeRecord(bytes, 0);
  switch (decoded._tag) {
    case "Corrupt":
      return new CorruptRecord({ path, epoch, sequence, reason: decoded.reason });
    case "Incomplete":
      return new CorruptRecord({ path, epoch, sequence, reason: "Truncated" });
    case "BeyondSafeInteger":
      return new Mismatch({
        path,
        epoch,
        sequence,
        field: "RecordSequence",
        expected: String(sequence),
        found: "a sequence beyond 2^53-1",
      });
    case "Record":
      break;
    default: {
      const unknown: never = decoded;
      return unknown;
    }
  }
  if (decoded.size !== bytes.length) {
    return new CorruptRecord({ path, epoch, sequence, reason: "TrailingBytes" });
  }
  if (decoded.record.sequence !== sequence) {
    return new Mismatch({
      path,
      epoch,
      sequence,
      field: "RecordSequence",
      expected: String(sequence),
      found: String(decoded.record.sequence),
    });
  }
  return { record: decoded.record, bytes };
};
