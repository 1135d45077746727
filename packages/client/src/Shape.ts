/**
 * Checking JSON that came over a wire: a decoder takes `unknown` (what
 * `JSON.parse` gave) and a path, and gives a typed value or names the
 * field path, what it expected and what it found. Both sides of the
 * protocol use it: the server for request bodies, the client for answers.
 *
 * Inside a decode a mismatch is thrown as a `ShapeFailure` and `decode`,
 * the one public entry, catches it and returns it as a value: nested
 * decoders then read as plain field accesses, and nothing thrown ever
 * leaves this module (a test plants a decoder that throws something else
 * and sees it reported, not escaped).
 */

/** Why a JSON document is not the shape asked for: where, what was expected, what was found. */
export interface ShapeError {
  readonly _tag: "ShapeError";
  /** The field path, e.g. `body.jobs[2].queue`. */
  readonly path: string;
  readonly expected: string;
  readonly found: string;
}

/** A decoded value, or why not. */
export type Result<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly error: ShapeError };

/** Checks `input` at `path`; throws `ShapeFailure` (caught by `decode`) when it does not fit. */
export type Decoder<A> = (input: unknown, path: string) => A;

/** What a decoder gives. */
export type Decoded<D> = D extends Decoder<infer A> ? A : never;

class ShapeFailure {
  constructor(readonly error: ShapeError) {}
}

/** How a found value is named in an error: its JSON type, and short scalars themselves. */
export const describeFound = (input: unknown): string => {
  if (input === null) return "null";
  if (input === undefined) return "nothing";
  if (Array.isArray(input)) return "an array";
  switch (typeof input) {
    case "string":
      return input.length <= 40 ? `the string ${JSON.stringify(input)}` : "a long string";
    case "number":
    case "boolean":
      return `${typeof input} ${String(input)}`;
    case "object":
      return "an object";
    default:
      return typeof input;
  }
};

/** Refuses `input` at `path`: inside a decoder only. */
export const mismatch = (path: string, expected: string, input: unknown): never => {
  throw new ShapeFailure({ _tag: "ShapeError", path, expected, found: describeFound(input) });
};

/**
 * Runs `decoder` on `input`: the value, or the first mismatch with its path.
 * Never throws: an exception of another kind (a bug in a decoder) is
 * reported as a mismatch at `path` naming it.
 */
export const decode = <A>(decoder: Decoder<A>, input: unknown, path: string): Result<A> => {
  try {
    return { ok: true, value: decoder(input, path) };
  } catch (caught) {
    if (caught instanceof ShapeFailure) return { ok: false, error: caught.error };
    const detail = caught instanceof Error ? caught.message : String(caught);
    return {
      ok: false,
      error: {
        _tag: "ShapeError",
        path,
        expected: "a decodable value",
        found: `a defect: ${detail}`,
      },
    };
  }
};

/** The error's one line: `body.jobs[0].queue: expected a string, found number 3`. */
export const explain = (error: ShapeError): string =>
  `${error.path}: expected ${error.expected}, found ${error.found}`;

export const string: Decoder<string> = (input, path) =>
  typeof input === "string" ? input : mismatch(path, "a string", input);

export const boolean: Decoder<boolean> = (input, path) =>
  typeof input === "boolean" ? input : mismatch(path, "a boolean", input);

export const number: Decoder<number> = (input, path) =>
  typeof input === "number" && Number.isFinite(input) ? input : mismatch(path, "a number", input);

/** An integer from `min` to `max` (default 0 to 2^53-1). */
export const integer =
  (min = 0, max = Number.MAX_SAFE_INTEGER): Decoder<number> =>
  (input, path) =>
    typeof input === "number" && Number.isSafeInteger(input) && input >= min && input <= max
      ? input
      : mismatch(path, `an integer from ${min} to ${max}`, input);

/** One of the given strings. */
export const literal =
  <const L extends string>(...options: ReadonlyArray<L>): Decoder<L> =>
  (input, path) => {
    for (const option of options) if (input === option) return option;
    return mismatch(
      path,
      `one of ${options.map((option) => JSON.stringify(option)).join(", ")}`,
      input,
    );
  };

export const nullable =
  <A>(decoder: Decoder<A>): Decoder<A | null> =>
  (input, path) =>
    input === null ? null : decoder(input, path);

/** A value, or `undefined` when the field is absent (or null: JSON has no undefined). */
export const optional =
  <A>(decoder: Decoder<A>): Decoder<A | undefined> =>
  (input, path) =>
    input === undefined || input === null ? undefined : decoder(input, path);

/** An array of at most `lengthMax` items, each checked. */
export const array =
  <A>(item: Decoder<A>, lengthMax = Number.MAX_SAFE_INTEGER): Decoder<ReadonlyArray<A>> =>
  (input, path) => {
    if (!Array.isArray(input)) return mismatch(path, "an array", input);
    if (input.length > lengthMax) {
      return mismatch(path, `an array of at most ${lengthMax} items`, `${input.length} items`);
    }
    return input.map((element: unknown, index) => item(element, `${path}[${index}]`));
  };

/** A JSON object (not an array, not null), its members as a record. */
export const record: Decoder<Readonly<Record<string, unknown>>> = (input, path) => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return mismatch(path, "an object", input);
  }
  const members: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) members[key] = value;
  return members;
};

type Fields = Readonly<Record<string, Decoder<unknown>>>;

/**
 * An object with these fields, each checked at `path.name` (other members
 * are ignored). Only own members are read, straight from the input (no copy
 * of it: every request body and answer goes through here).
 */
export const struct = <F extends Fields>(
  fields: F,
): Decoder<{ readonly [K in keyof F]: Decoded<F[K]> }> => {
  const entries = Object.entries(fields);
  return (input, path) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return mismatch(path, "an object", input);
    }
    const out: Record<string, unknown> = {};
    for (const [name, decoder] of entries) {
      const member: unknown = Object.hasOwn(input, name) ? Reflect.get(input, name) : undefined;
      out[name] = decoder(member, `${path}.${name}`);
    }
    // Every field of `F` was decoded by its own decoder just above.
    return out as { readonly [K in keyof F]: Decoded<F[K]> };
  };
};

/** The member `name` of an object, checked. */
export const field = <A>(
  members: Readonly<Record<string, unknown>>,
  name: string,
  decoder: Decoder<A>,
  path: string,
): A => decoder(Object.hasOwn(members, name) ? members[name] : undefined, `${path}.${name}`);
