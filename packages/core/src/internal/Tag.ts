/**
 * Reads the `_tag` of a value the type system says cannot exist (the
 * exhaustive `never` branch of a switch), so that a malformed input from
 * untyped code becomes a typed refusal instead of an exception.
 */
export const tagName = (value: unknown): string =>
  typeof value === "object" && value !== null && "_tag" in value
    ? String(value._tag)
    : typeof value;
