/**
 * Values written into a statement's text instead of sent as parameters: the
 * append's one-trip script (`sql.ts` `appendScript`) goes by the simple
 * query protocol, which takes several statements in one text but no
 * parameters. Three kinds only, each formatted so that the text holds the
 * value and nothing else, whatever the value and whatever the session's
 * settings:
 *
 * - integers: safe integers, in decimal (a sign and digits);
 * - text: between single quotes with each quote doubled; a text holding a
 *   backslash is an escape string (`E'...'`) with each backslash doubled,
 *   so that its meaning does not depend on `standard_conforming_strings`;
 *   a NUL (which no PostgreSQL text holds) is refused;
 * - bytes: hex digits decoded by the server, `decode('0aff', 'hex')`, so
 *   no byte of the value is ever a character of the text.
 *
 * A value outside these is a bug of the caller (the log's own sequences,
 * epochs, UUIDs and record bytes): `LiteralRefused`, thrown, which the
 * writer's Effect turns into a defect.
 */

/** A value that cannot be written as a literal (a bug of the caller, never user input). */
export class LiteralRefused extends Error {
  override readonly name = "LiteralRefused";
}

/** A safe integer in decimal. */
export const integer = (value: number): string => {
  if (!Number.isSafeInteger(value)) throw new LiteralRefused(`not a safe integer: ${value}`);
  return String(value);
};

/** A text literal (see the module's comment). */
export const text = (value: string): string => {
  if (value.includes("\u0000")) throw new LiteralRefused("a text literal cannot hold NUL");
  const quoted = value.replaceAll("'", "''");
  return value.includes("\\") ? `E'${quoted.replaceAll("\\", "\\\\")}'` : `'${quoted}'`;
};

/** A bytea value: its bytes as hex digits, decoded by the server. */
export const bytes = (value: Uint8Array): string =>
  `decode('${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex")}', 'hex')`;
