/**
 * Decoders for the fields of untrusted rows. A database hands back
 * whatever its client parsed (node-postgres gives a BIGINT as a string,
 * PGlite as a number or a bigint; a BYTEA as a Buffer or a Uint8Array), and
 * a damaged or foreign table can hold anything: every field is checked for
 * its kind and range before the log uses it, and a refusal says what was
 * found.
 */
import { parseStoreId } from "@tay/codec";

/** A field that is not what its column must hold: what was found, printed. */
export interface Refused {
  readonly _tag: "Refused";
  readonly found: string;
}

/** A decoded field or its refusal. */
export type Decoded<A> = A | Refused;

/** Whether a decoded field was refused. */
export const isRefused = <A>(value: Decoded<A>): value is Refused =>
  typeof value === "object" && value !== null && "_tag" in value && value._tag === "Refused";

/** At most this much of a refused value is printed. */
const foundCharactersMax = 40;

const refuse = (value: unknown): Refused => {
  const text =
    value instanceof Uint8Array
      ? `${value.length} bytes`
      : typeof value === "string"
        ? JSON.stringify(value)
        : `${typeof value} ${String(value)}`;
  return {
    _tag: "Refused",
    found: text.length > foundCharactersMax ? `${text.slice(0, foundCharactersMax)}...` : text,
  };
};

/** The named field of a row, or `undefined` when the row is no object or lacks it. */
export const field = (row: unknown, column: string): unknown => {
  if (typeof row !== "object" || row === null) return undefined;
  const descriptor = Object.getOwnPropertyDescriptor(row, column);
  return descriptor === undefined ? undefined : descriptor.value;
};

const decimal = /^-?(0|[1-9][0-9]{0,15})$/;

/**
 * An integer in `minimum..2^53-1`, from a number, a bigint or the decimal
 * text a BIGINT arrives as.
 */
export const integer = (value: unknown, minimum = 0): Decoded<number> => {
  let parsed: number | undefined;
  if (typeof value === "number") parsed = value;
  else if (typeof value === "bigint") parsed = Number(value);
  else if (typeof value === "string" && decimal.test(value)) parsed = Number(value);
  if (
    parsed === undefined ||
    !Number.isSafeInteger(parsed) ||
    parsed < minimum ||
    (typeof value === "bigint" && BigInt(parsed) !== value)
  ) {
    return refuse(value);
  }
  return parsed;
};

/** An integer or SQL NULL (an aggregate over no rows). */
export const optionalInteger = (value: unknown, minimum = 0): Decoded<number | null> =>
  value === null ? null : integer(value, minimum);

/** Bytes (a BYTEA: a Buffer is a Uint8Array). */
export const bytes = (value: unknown): Decoded<Uint8Array> =>
  value instanceof Uint8Array ? value : refuse(value);

/** A STORE_ID from a UUID column's canonical text. */
export const storeId = (value: unknown): Decoded<Uint8Array> => {
  if (typeof value !== "string") return refuse(value);
  const parsed = parseStoreId(value.toLowerCase());
  return parsed._tag === "Right" ? parsed.right : refuse(value);
};

/** A text value. */
export const text = (value: unknown): Decoded<string> =>
  typeof value === "string" ? value : refuse(value);

/**
 * The row a LEFT JOIN brought into `row` under `prefix`, with its columns
 * under their own names, as a list of one (what the table decoders take);
 * an empty list when its `key` column, NOT NULL in its table, is NULL or
 * absent: no row matched the join.
 */
export const joined = (
  row: unknown,
  prefix: string,
  key: string,
  columns: ReadonlyArray<string>,
): ReadonlyArray<unknown> => {
  const found = field(row, `${prefix}${key}`);
  if (found === null || found === undefined) return [];
  // fromEntries defines own properties: no column name can reach a prototype.
  return [Object.fromEntries(columns.map((column) => [column, field(row, `${prefix}${column}`)]))];
};
