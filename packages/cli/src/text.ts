/**
 * Human output: aligned tables, aligned key/value blocks, times, sizes and
 * durations. Pure functions from data to lines.
 */

/** Column alignment: numbers read best right-aligned. */
export type Align = "left" | "right";

/** Pads `text` to `width` on the side `align` says. */
const pad = (text: string, width: number, align: Align): string =>
  align === "right" ? text.padStart(width) : text.padEnd(width);

/** The width of each column: its header's, or its longest cell's. */
export const widths = (
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
): Array<number> =>
  headers.map((header, column) =>
    rows.reduce((width, row) => Math.max(width, (row[column] ?? "").length), header.length),
  );

/** One row of a table: its cells padded to `widths`, two spaces apart, trailing spaces trimmed. */
export const row = (
  cells: ReadonlyArray<string>,
  columnWidths: ReadonlyArray<number>,
  align: ReadonlyArray<Align> = [],
): string =>
  columnWidths
    .map((width, column) => pad(cells[column] ?? "", width, align[column] ?? "left"))
    .join("  ")
    .trimEnd();

/**
 * An aligned table: a header row and one row per entry, columns separated
 * by two spaces; trailing spaces are trimmed. `align` defaults to left.
 */
export const table = (
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  align: ReadonlyArray<Align> = [],
): Array<string> => {
  const columnWidths = widths(headers, rows);
  return [
    row(headers, columnWidths, align),
    ...rows.map((cells) => row(cells, columnWidths, align)),
  ];
};

/** `key  value` lines with the keys padded to one width. */
export const fields = (entries: ReadonlyArray<readonly [string, string]>): Array<string> => {
  const width = entries.reduce((max, [key]) => Math.max(max, key.length), 0);
  return entries.map(([key, value]) => `${key.padEnd(width)}  ${value}`.trimEnd());
};

/** A time in ms as ISO-8601 UTC; `-` for null; the raw number beyond the Date range. */
export const time = (ms: number | null): string => {
  if (ms === null) return "-";
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms}` : date.toISOString();
};

const units: ReadonlyArray<readonly [string, number]> = [
  ["GiB", 1024 ** 3],
  ["MiB", 1024 ** 2],
  ["KiB", 1024],
];

/** Bytes with a binary unit: `1.5 MiB`, `812 B`. */
export const bytes = (count: number): string => {
  for (const [unit, size] of units) {
    if (count >= size) return `${(count / size).toFixed(1)} ${unit}`;
  }
  return `${count} B`;
};

/** A duration in ms as `1.2s`, `350ms`, `2m05s`. */
export const duration = (ms: number): string => {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1000);
  return `${minutes}m${String(seconds).padStart(2, "0")}s`;
};

/** A value shortened to `max` characters with an ellipsis. */
export const truncate = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;

/** True for a C0 or C1 control character (they would break a line or a column). */
const isControl = (character: string): boolean => {
  const code = character.codePointAt(0) ?? 0;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
};

/**
 * A name (queue, worker, schedule id) safe to print in a table: as it is,
 * or JSON-quoted when it holds control characters (names are arbitrary
 * UTF-8, `\n` included).
 */
export const printable = (name: string): string =>
  [...name].some(isControl) ? JSON.stringify(name) : name;
