/**
 * Plain JSON at the worker's edge: a handler sees a job's args as plain
 * data (objects, arrays, strings, numbers, booleans, null), and returns its
 * result the same way. Core's `Value` keeps maps as `Map` so that keys such
 * as `__proto__` stay inert data; here such keys become ordinary own
 * properties (`Object.fromEntries` defines them, it never sets a
 * prototype), and back. Big integers and byte strings stay what they are.
 */
import type { Value } from "@tay/core";

/** What a handler sees and may return: JSON, plus the bigint and bytes values the log carries. */
export type Plain =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | ReadonlyArray<Plain>
  | { readonly [key: string]: Plain };

/** Deepest nesting converted (the codec's own bound). */
const depthMax = 64;

/** A value as plain data: maps become objects with the same own keys. */
export const toPlain = (value: Value.Value): Plain => {
  // Scalars and bytes are the same in both.
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return value;
  if (isList(value)) return value.map(toPlain);
  return Object.fromEntries([...value].map(([key, member]) => [key, toPlain(member)]));
};

const isList = (value: Value.Value): value is ReadonlyArray<Value.Value> => Array.isArray(value);

/** Why a returned value is not one the log can carry, and where. */
export interface NotPlain {
  readonly _tag: "NotPlain";
  /** Where inside the value, e.g. `result.items[2].at`. */
  readonly path: string;
  readonly detail: string;
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `base.key`, or `base["key"]` for a key that is not an identifier. */
const member = (base: string, key: string): string =>
  identifier.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;

const notPlain = (path: string, detail: string): NotPlain => ({ _tag: "NotPlain", path, detail });

/** Whether `value` is a plain object: its prototype is `Object.prototype` or null. */
const isPlainObject = (value: object): boolean => {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/**
 * Plain data as a value (objects become maps), or why not, with the path
 * inside it (`path` names the whole: `result`).
 */
export const fromPlain = (input: unknown, path: string, depth = 1): Value.Value | NotPlain => {
  if (depth > depthMax) return notPlain(path, `nested deeper than ${depthMax} levels`);
  if (input === null || typeof input === "boolean" || typeof input === "string") return input;
  if (typeof input === "number") {
    if (!Number.isFinite(input)) return notPlain(path, `the number ${input} is not a value`);
    return Object.is(input, -0) ? 0 : input;
  }
  if (typeof input === "bigint") return input;
  if (input instanceof Uint8Array) return input;
  if (Array.isArray(input)) {
    const items: Array<Value.Value> = [];
    for (let index = 0; index < input.length; index++) {
      const item = fromPlain(input[index], `${path}[${index}]`, depth + 1);
      if (isNotPlain(item)) return item;
      items.push(item);
    }
    return items;
  }
  const fields =
    input instanceof Map
      ? [...input]
      : typeof input === "object" && isPlainObject(input)
        ? Object.entries(input)
        : undefined;
  if (fields !== undefined) {
    const entries = new Map<string, Value.Value>();
    for (const [key, field] of fields) {
      if (typeof key !== "string") return notPlain(path, `a map key that is ${describe(key)}`);
      const converted = fromPlain(field, member(path, key), depth + 1);
      if (isNotPlain(converted)) return converted;
      entries.set(key, converted);
    }
    return entries;
  }
  return notPlain(path, `${describe(input)} is not a value`);
};

/** Whether a conversion failed. */
export const isNotPlain = (value: Value.Value | NotPlain): value is NotPlain =>
  typeof value === "object" &&
  value !== null &&
  !(value instanceof Map) &&
  !(value instanceof Uint8Array) &&
  !Array.isArray(value) &&
  "_tag" in value &&
  value._tag === "NotPlain";

const describe = (value: unknown): string => {
  if (value === undefined) return "undefined";
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  if (value instanceof Date) return "a Date (pass its getTime() or toISOString())";
  if (typeof value === "object") {
    const name = Object.getPrototypeOf(value)?.constructor?.name;
    return typeof name === "string" && name !== ""
      ? `an object of class ${name}`
      : "an object with a prototype other than Object";
  }
  return `a ${typeof value}`;
};
