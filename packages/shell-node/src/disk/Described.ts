/**
 * Errors that describe themselves. Every typed error of the shell has a
 * `description` (the reason's name, the path, offset and sequence it
 * concerns, one line of explanation) and a `message` that is that whole
 * line:
 *
 *   <Reason> <path>[ at offset N][ sequence N]: <explanation>
 *
 * so a program that only logs `error.message`, or lets Node print the
 * error, reads everything the CLI would print; the CLI and the server add
 * nothing to it. This module sits in the lowest layer because every layer
 * above defines such errors.
 */
/** An error taken apart: for the one-line form and for JSON output. */
export interface Description {
  /** The most specific name of the reason (`RecordChecksum`, `Locked`, `ENOSPC`, ...). */
  readonly reason: string;
  /** The file, directory or store it concerns, when there is one. */
  readonly path: string | undefined;
  readonly offset: number | undefined;
  readonly sequence: number | undefined;
  /** One line, no trailing period. */
  readonly explanation: string;
  /** What the operator can do about it, when there is something (appended after `; `). */
  readonly advice: string | undefined;
}

/**
 * What a caught value says: its own string `message` (an `Error`, a tagged
 * error, an object that carries one), else the value as text.
 */
export const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && typeof Reflect.get(error, "message") === "string"
    ? String(Reflect.get(error, "message"))
    : String(error);

/** Keeps an explanation on one line, whatever a detail string carried. */
export const oneLine = (text: string): string => text.replace(/\s*[\r\n]+\s*/g, " ").trim();

/** Best-effort text for a value of unknown shape (its tag when it has one). */
export const describeUnknown = (value: unknown): string => {
  if (typeof value === "object" && value !== null && "_tag" in value) return String(value._tag);
  if (value instanceof Error) return value.message;
  return String(value);
};

/** A description; `position` gives the offset and sequence when the error has them. */
export const describe = (
  reason: string,
  path: string | undefined,
  explanation: string,
  position: { readonly offset?: number | undefined; readonly sequence?: number | undefined } = {},
): Description => ({
  reason,
  path,
  offset: position.offset,
  sequence: position.sequence,
  explanation: oneLine(explanation),
  advice: undefined,
});

/** `description` with `advice` (what the operator can do) added. */
export const advise = (description: Description, advice: string): Description => ({
  ...description,
  advice,
});

/** `<Reason> <path>[ at offset N][ sequence N]: <explanation>`. */
export const line = (description: Description): string => {
  const path = description.path === undefined ? "" : ` ${description.path}`;
  const offset = description.offset === undefined ? "" : ` at offset ${description.offset}`;
  const sequence = description.sequence === undefined ? "" : ` sequence ${description.sequence}`;
  const advice = description.advice === undefined ? "" : `; ${description.advice}`;
  return `${description.reason}${path}${offset}${sequence}: ${description.explanation}${advice}`;
};

/** Anything with a description (every error class made by `TaggedError`). */
export interface Describes {
  readonly _tag: string;
  readonly description: Description;
}

/** Whether `value` describes itself (for code that meets errors of unknown kind). */
export const describes = (value: unknown): value is Describes =>
  typeof value === "object" &&
  value !== null &&
  "_tag" in value &&
  "description" in value &&
  typeof value.description === "object" &&
  value.description !== null &&
  "explanation" in value.description;

/**
 * The `message` of an error that describes itself: its description's line.
 * Every such error class says `override get message() { return
 * Described.message(this); }` beside its `description`.
 *
 * @example
 * class Locked extends Data.TaggedError("Locked")<{ readonly path: string }> {
 *   get description() {
 *     return Described.describe("Locked", this.path, "another process holds the lock");
 *   }
 *   override get message() {
 *     return Described.message(this);
 *   }
 * }
 */
export const message = (error: Describes): string => {
  // A getter must never throw: an error built with fields its description
  // does not expect still says what it is.
  try {
    return line(error.description);
  } catch {
    return error._tag;
  }
};
