/**
 * Plain JSON at the worker's edge, one way: a handler sees a job's args as
 * plain data (objects, arrays, strings, numbers, booleans, null). Core's
 * `Value` keeps maps as `Map` so that keys such as `__proto__` stay inert
 * data; here such keys become ordinary own properties (`Object.fromEntries`
 * defines them, it never sets a prototype). Big integers and byte strings
 * stay what they are.
 *
 * The other way, a handler's result, needs nothing here: core takes plain
 * objects wherever a command carries a value (`Value.Input`), and
 * `Value.canonical` turns one into the value the log keeps, or says where
 * inside it what is not a value sits (the attempt then fails with that).
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

/** A value as plain data: maps become objects with the same own keys, in the map's order. */
export const toPlain = (value: Value.Value): Plain => {
  // Scalars and bytes are the same in both.
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return value;
  if (isList(value)) return value.map(toPlain);
  return Object.fromEntries([...value].map(([key, member]) => [key, toPlain(member)]));
};

const isList = (value: Value.Value): value is ReadonlyArray<Value.Value> => Array.isArray(value);
