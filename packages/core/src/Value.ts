/**
 * The payload value model shared by events and the codec.
 *
 * A value is what the canonical payload encoding of FORMAT.md can carry:
 * null, booleans, numbers, big integers, strings, byte strings, lists and
 * string-keyed maps. Maps are `ReadonlyMap` rather than objects so that keys
 * such as `__proto__` stay inert data.
 *
 * Canonical domain: an integer of magnitude <= 2^53-1 is a `number`; an
 * integer outside that range (but inside int64) is a `bigint`; a `number`
 * that is not a safe integer is a finite float. `-0` is the integer 0.
 * Decoding also gives map keys in UTF-8 byte order and plain arrays, maps
 * and `Uint8Array`s; the deciders put values into events in exactly that
 * form (`canonical`, below), so the state equals its log.
 *
 * Commands take an `Input`: a value, or plain objects in place of maps (JSON
 * as `JSON.parse` gives it). The deciders turn it into a `Value` with
 * `canonical`; the state and the events hold only `Value`s.
 */
import { canonicalNumber, utf8Length } from "./internal/Fields.js";

/** A value as the state and the events hold it: maps as `Map`, in canonical form once decided. */
export type Value =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | ReadonlyArray<Value>
  | ValueMap;

/** A map value: keys are UTF-8 strings, compared by their UTF-8 bytes. */
export type ValueMap = ReadonlyMap<string, Value>;

/**
 * What a command may carry where the state keeps a `Value` (job args,
 * results, a definition's args): a value, or at any depth a plain object in
 * place of a map. A plain object is one whose prototype is `Object.prototype`
 * or `null`; its own enumerable string keys are the map's keys, whatever
 * they are (`__proto__`, `constructor` and `hasOwnProperty` included).
 * `canonical` turns an input into the `Value` the log gives back for it.
 *
 * @example
 * Commands.insertJobs({ now, jobs: [{ queue: "mail", worker: "Send", args: { user_id: 42 } }] })
 * // the job's args: Map { "user_id" => 42 }
 */
export type Input =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | ReadonlyArray<Input>
  | ReadonlyMap<string, Input>
  | InputObject;

/** A plain object of an `Input`: its own enumerable string keys are a map's keys. */
export type InputObject = { readonly [key: string]: Input };

/** Largest integer a `number` carries exactly (2^53-1). */
export const safeIntegerMax = Number.MAX_SAFE_INTEGER;

/** Smallest and largest int64, the range of the integer tag. */
export const int64Min = -(2n ** 63n);
export const int64Max = 2n ** 63n - 1n;

/** Deepest nesting the codec accepts: a scalar at top level has depth 1. */
export const valueDepthMax = 64;

/**
 * Deepest nesting of a job's args (an insert's, a schedule definition's,
 * whose occurrences are jobs): FORMAT.md bounds a record's whole payload at
 * 64 levels, and the deepest record that keeps args, a snapshot part
 * (`{jobs list<job map>}`, also the terminal index's entry and the state
 * image's active jobs), holds them 3 levels down. Deeper args fit an
 * insert's record but no compaction's base (docs/events.md, 2026-12-05).
 */
export const argsDepthMax = valueDepthMax - 3;

/** Deepest nesting of a job's result: a (10,2) record holds it 1 level down. */
export const resultDepthMax = valueDepthMax - 1;

/** The kind of a value, for error messages and dispatch. */
export type ValueKind =
  | "null"
  | "boolean"
  | "integer"
  | "float"
  | "string"
  | "bytes"
  | "list"
  | "map";

/** Classifies a value by the tag it encodes to. */
export const kindOf = (value: Value): ValueKind => {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return "boolean";
    case "bigint":
      return "integer";
    case "number":
      return Number.isSafeInteger(value) || Object.is(value, -0) ? "integer" : "float";
    case "string":
      return "string";
    default:
      if (value instanceof Uint8Array) return "bytes";
      if (isMap(value)) return "map";
      return "list";
  }
};

/** True for a list value. */
export const isList = (value: Value): value is ReadonlyArray<Value> => Array.isArray(value);

/** True for a map value. */
export const isMap = (value: Value): value is ValueMap => value instanceof Map;

/** Builds a map value from entries; a convenience for literals in tests and deciders. */
export const map = (entries: Iterable<readonly [string, Value]>): ValueMap => new Map(entries);

const compareBytes = (left: Uint8Array, right: Uint8Array): number => {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
};

const utf8 = new TextEncoder();

/**
 * Orders map keys by their UTF-8 bytes, the canonical order of FORMAT.md.
 * (JavaScript's default string order compares UTF-16 units, which differs for
 * characters outside the Basic Multilingual Plane.)
 */
export const compareKeys = (left: string, right: string): number =>
  compareBytes(utf8.encode(left), utf8.encode(right));

/**
 * Structural equality of two values: maps compare as sets of entries, bytes
 * by content, numbers with `Object.is` except that `-0` equals `0` (both are
 * the integer 0 on the wire).
 */
export const equals = (left: Value, right: Value): boolean => {
  if (left === right) return true;
  if (left === null || right === null) return false;
  if (typeof left === "number" && typeof right === "number") {
    return (left === 0 && right === 0) || Object.is(left, right);
  }
  if (typeof left !== "object" || typeof right !== "object") return false;
  if (left instanceof Uint8Array) {
    return right instanceof Uint8Array && compareBytes(left, right) === 0;
  }
  if (isMap(left)) {
    if (!isMap(right) || left.size !== right.size) return false;
    for (const [key, item] of left) {
      if (!right.has(key)) return false;
      const other: Value = right.get(key) ?? null;
      if (!equals(item, other)) return false;
    }
    return true;
  }
  if (!isList(left) || !isList(right) || left.length !== right.length) return false;
  return left.every((item, index) => equals(item, right[index] ?? null));
};

// ---------------------------------------------------------------------------
// The canonical form

/*
 * Values in their canonical form: the form that decoding their encoding
 * gives (FORMAT.md "Payload value encoding", and the codec's decoder). The
 * deciders put only such values into events, so the state a process holds
 * after deciding (the fold of those events) is the state a reopen reads
 * back from their bytes: state is fold(events), before and after a restart.
 *
 * What the codec would change, and what `canonical` therefore changes:
 *
 * - `-0` becomes `0` (the encoding has one integer 0);
 * - a `bigint` of magnitude at most 2^53-1 becomes a `number` (the decoder
 *   returns such integers as numbers);
 * - a map's keys come in UTF-8 byte order, the order the encoding writes
 *   them in and the decoder builds the `Map` in;
 * - a subclass of `Uint8Array` (a Node `Buffer`), of `Array` or of `Map`
 *   becomes a plain one (the decoder builds plain ones);
 * - a plain object of an `Input` becomes a `Map` of its own enumerable
 *   string keys in UTF-8 byte order (the order the decoder gives a map, not
 *   the order `Object.keys` gives, which puts integer-like keys first).
 *
 * A value that is canonical already is returned as it is, not copied; a
 * container is copied only when something inside it changes, and then only
 * along the way to that change. The same walk measures the encoded size and
 * finds what the codec could not encode at all, with the path to it.
 */

/** A value in the form its decoding gives, with its exact encoded size in bytes. */
export interface Canonical {
  readonly _tag: "Canonical";
  readonly value: Value;
  readonly bytes: number;
}

/**
 * Why the codec could not encode a value: where inside it (`path` from its
 * root: "" for the value itself, `.user.id`, `[3]`, `["a b"]`) and what is
 * there, as a sentence (`a function is not a value`).
 */
export interface Unencodable {
  readonly _tag: "Unencodable";
  readonly path: string;
  readonly detail: string;
}

const safeMin = BigInt(-Number.MAX_SAFE_INTEGER);
const safeMax = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * One walk over a value: the bytes counted so far and, once it finds what
 * cannot be encoded, what that is and the path to it (innermost step first,
 * gathered as the walk returns). Each call has its own.
 */
interface Walk {
  /** The deepest nesting accepted here (`valueDepthMax` for a whole payload). */
  readonly depthMax: number;
  bytes: number;
  detail: string;
  /** Made only once something is refused: most walks never need it. */
  path: Array<string | number> | undefined;
}

/** What a step returns instead of a value once the walk has found something unencodable. */
const refused: unique symbol = Symbol("refused");

type Walked = Value | typeof refused;

const refuse = (walk: Walk, detail: string): typeof refused => {
  walk.detail = detail;
  return refused;
};

/** Records one more step (outwards) of the path to what was refused. */
const stepOut = (walk: Walk, step: string | number): typeof refused => {
  walk.path ??= [];
  walk.path.push(step);
  return refused;
};

/** Orders strings by code point, which is the order of their UTF-8 bytes (as the codec's writer does). */
const compareCodePoints = (left: string, right: string): number => {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    let leftUnit = left.charCodeAt(index);
    let rightUnit = right.charCodeAt(index);
    if (leftUnit === rightUnit) continue;
    // UTF-16 order differs from code point order only where a surrogate
    // meets a unit of E000..FFFF: put surrogates last.
    if (leftUnit >= 0xd800 && rightUnit >= 0xd800) {
      leftUnit = leftUnit >= 0xe000 ? leftUnit - 0x800 : leftUnit + 0x2000;
      rightUnit = rightUnit >= 0xe000 ? rightUnit - 0x800 : rightUnit + 0x2000;
    }
    return leftUnit - rightUnit;
  }
  return left.length - right.length;
};

/** The name of an object's class, when it has one worth printing. */
const classNameOf = (value: object): string | undefined => {
  const prototype: unknown = Object.getPrototypeOf(value);
  const name = typeof prototype === "object" ? prototype?.constructor?.name : undefined;
  return typeof name === "string" && /^[A-Za-z_$][\w$]*$/.test(name) ? name : undefined;
};

/** What an object that is not a value is, as the subject of a sentence. */
const describeObject = (value: object): string => {
  const name = classNameOf(value);
  return name === undefined
    ? "an object with a prototype other than Object"
    : `an object of class ${name}`;
};

/** What to pass instead, for the objects that callers most often mean as a value. */
const hintFor = (value: unknown): string =>
  value instanceof Date ? " (pass its getTime() or toISOString())" : "";

/** What a JavaScript value of a kind that is never a value is. */
const describeKind = (value: unknown): string => {
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
    case "number":
      return "a number";
    case "object":
      return value === null ? "null" : describeObject(value);
    default:
      return `a ${typeof value}`;
  }
};

/** What a map key that is not a string is: its kind, as the subject of a sentence. */
const describeKey = (key: unknown): string =>
  key === null ? "null" : typeof key === "object" ? "an object" : describeKind(key);

const notAValue = (walk: Walk, value: unknown): typeof refused =>
  refuse(walk, `${describeKind(value)} is not a value${hintFor(value)}`);

const walkBigint = (walk: Walk, value: bigint): Walked => {
  if (value < int64Min || value > int64Max) {
    return refuse(walk, "a bigint outside int64 (-2^63..2^63-1) is not a value");
  }
  walk.bytes += 9;
  return value >= safeMin && value <= safeMax ? Number(value) : value;
};

const walkBytes = (walk: Walk, value: Uint8Array): Walked => {
  walk.bytes += 5 + value.length;
  // A Buffer (or another subclass) decodes as a plain Uint8Array.
  return Object.getPrototypeOf(value) === Uint8Array.prototype ? value : new Uint8Array(value);
};

/** A list's items, canonical; the list itself unless an item changed or it is a subclass. */
const walkList = (walk: Walk, list: ReadonlyArray<Value>, depth: number): Walked => {
  walk.bytes += 5;
  let copy: Value[] | undefined = Object.getPrototypeOf(list) === Array.prototype ? undefined : [];
  for (let index = 0; index < list.length; index++) {
    const item = list[index];
    if (item === undefined && !(index in list)) {
      refuse(walk, "an empty slot of a sparse list is not a value");
      return stepOut(walk, index);
    }
    const walked = walkValue(walk, item, depth + 1);
    if (walked === refused) return stepOut(walk, index);
    if (copy === undefined && !Object.is(walked, item)) copy = list.slice(0, index);
    copy?.push(walked);
  }
  return copy ?? list;
};

/**
 * The map rebuilt as a plain `Map`: its keys in canonical order (sorted
 * unless `sorted` says they are already), with `values` (walked, in the
 * map's own key order) when given, else its own values.
 */
const rebuiltMap = (
  map: ValueMap,
  values: ReadonlyArray<Value> | undefined,
  sorted: boolean,
): ValueMap => {
  const keys = [...map.keys()];
  const items = values ?? [...map.values()];
  const order = keys.map((_, index) => index);
  if (!sorted) order.sort((left, right) => compareCodePoints(keys[left] ?? "", keys[right] ?? ""));
  const rebuilt = new Map<string, Value>();
  for (const index of order) rebuilt.set(keys[index] ?? "", items[index] ?? null);
  return rebuilt;
};

/**
 * Sorts an object's keys in place in code point order. A few keys (most
 * args objects) by insertion: the built-in sort with a comparator makes a
 * work list of its own on every call (~0.7 KB an insert whose args keys are
 * out of order, 2026-12-02).
 */
const sortKeys = (keys: Array<string>): void => {
  if (keys.length > 16) {
    keys.sort(compareCodePoints);
    return;
  }
  for (let index = 1; index < keys.length; index++) {
    const key = keys[index] ?? "";
    let at = index;
    for (; at > 0 && compareCodePoints(keys[at - 1] ?? "", key) > 0; at--) {
      keys[at] = keys[at - 1] ?? "";
    }
    keys[at] = key;
  }
};

/** A map's keys and values, canonical; the map itself unless something changes. */
const walkMap = (walk: Walk, map: ValueMap, depth: number): Walked => {
  walk.bytes += 5;
  // The walked values, kept from the first one that differs from its original.
  let values: Value[] | undefined;
  let sorted = true;
  let previous: string | undefined;
  let index = 0;
  for (const [key, item] of map) {
    if (typeof key !== "string") {
      return refuse(walk, `a map key that is ${describeKey(key)} is not a value`);
    }
    const keyBytes = utf8Length(key);
    if (keyBytes < 0) return refuse(walk, "a map key with a lone surrogate is not a value");
    walk.bytes += 4 + keyBytes;
    if (previous !== undefined && compareCodePoints(previous, key) > 0) sorted = false;
    previous = key;
    const walked = walkValue(walk, item, depth + 1);
    if (walked === refused) return stepOut(walk, key);
    if (values === undefined && !Object.is(walked, item)) {
      values = Array.from(map.values()).slice(0, index);
    }
    values?.push(walked);
    index++;
  }
  const plain = Object.getPrototypeOf(map) === Map.prototype;
  return values === undefined && sorted && plain ? map : rebuiltMap(map, values, sorted);
};

/**
 * Whether an object is a plain one of an `Input`: its prototype is
 * `Object.prototype` or null (an object literal, `JSON.parse`'s objects,
 * `Object.create(null)`). Any object's string keys read as `unknown`.
 */
const isPlainObject = (value: object): value is { readonly [key: string]: unknown } => {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/** What an exception thrown while reading a value (a getter, a proxy) says, briefly. */
const thrownDetail = (error: unknown): string => {
  const said = error instanceof Error ? error.message : typeof error;
  const cut = said.length > pathKeyCharsMax ? `${said.slice(0, pathKeyCharsMax)}…` : said;
  return `reading it threw (${cut})`;
};

/**
 * An own property of a plain object, read once; a getter that throws is a
 * refusal at that key rather than an exception out of the decider.
 */
const readProperty = (
  walk: Walk,
  object: { readonly [key: string]: unknown },
  key: string,
): unknown => {
  try {
    return object[key];
  } catch (error) {
    return refuse(walk, thrownDetail(error));
  }
};

/**
 * A plain object as a new `Map`: its own enumerable string keys (as
 * `Object.keys` lists them; symbol keys and non-enumerable ones are not
 * part of it, as in `JSON.stringify`), in canonical order, each with its
 * value walked. The object is only read: a key such as `__proto__` reads
 * the object's own property and becomes an ordinary map key. One pass, in
 * the object's own order (as `walkMap` goes); only keys out of order cost
 * a second map.
 */
const walkPlainObject = (
  walk: Walk,
  object: { readonly [key: string]: unknown },
  depth: number,
): Walked => {
  walk.bytes += 5;
  const keys = Object.keys(object);
  const map = new Map<string, Value>();
  let sorted = true;
  let previous: string | undefined;
  for (const key of keys) {
    const keyBytes = utf8Length(key);
    if (keyBytes < 0) return refuse(walk, "a map key with a lone surrogate is not a value");
    walk.bytes += 4 + keyBytes;
    if (previous !== undefined && compareCodePoints(previous, key) > 0) sorted = false;
    previous = key;
    const item = readProperty(walk, object, key);
    if (item === refused) return stepOut(walk, key);
    const walked = walkValue(walk, item, depth + 1);
    if (walked === refused) return stepOut(walk, key);
    map.set(key, walked);
  }
  if (sorted) return map;
  sortKeys(keys);
  const ordered = new Map<string, Value>();
  for (const key of keys) ordered.set(key, map.get(key) ?? null);
  return ordered;
};

const walkObject = (walk: Walk, value: object, depth: number): Walked => {
  if (value instanceof Uint8Array) return walkBytes(walk, value);
  if (Array.isArray(value)) return walkList(walk, value, depth);
  if (value instanceof Map) return walkMap(walk, value, depth);
  if (isPlainObject(value)) return walkPlainObject(walk, value, depth);
  return notAValue(walk, value);
};

/**
 * The canonical form of `value` at nesting `depth` (1 for the root).
 * Recursion is bounded: the depth is checked before descending, so a
 * cyclic or absurdly deep value stops at 65 frames.
 */
const walkValue = (walk: Walk, value: unknown, depth: number): Walked => {
  if (depth > walk.depthMax) return refuse(walk, depthDetail(walk.depthMax));
  switch (typeof value) {
    case "string": {
      const length = utf8Length(value);
      if (length < 0) return refuse(walk, "a string with a lone surrogate is not a value");
      walk.bytes += 5 + length;
      return value;
    }
    case "number":
      if (!Number.isFinite(value))
        return refuse(walk, "a number that is not finite is not a value");
      walk.bytes += 9;
      return canonicalNumber(value);
    case "boolean":
      walk.bytes += 1;
      return value;
    case "bigint":
      return walkBigint(walk, value);
    case "object":
      if (value === null) {
        walk.bytes += 1;
        return null;
      }
      return walkObject(walk, value, depth);
    default:
      return notAValue(walk, value);
  }
};

/** Up to this many characters of a key are quoted in a path. */
const pathKeyCharsMax = 64;

const identifierLike = /^[A-Za-z_$][\w$]*$/;

/**
 * A path from the root, written as in JavaScript: `.user.id`, `[3]`,
 * `["a b"]`. A key longer than `pathKeyCharsMax` is cut and quoted
 * (`["kkk…"]`), so a refusal stays one short line whatever the keys.
 */
const formatPath = (innermostFirst: ReadonlyArray<string | number>): string => {
  let path = "";
  for (let index = innermostFirst.length - 1; index >= 0; index--) {
    const step = innermostFirst[index] ?? "";
    if (typeof step === "number") path += `[${step}]`;
    else if (step.length > pathKeyCharsMax) {
      path += `[${JSON.stringify(`${step.slice(0, pathKeyCharsMax)}…`)}]`;
    } else if (identifierLike.test(step)) path += `.${step}`;
    else path += `[${JSON.stringify(step)}]`;
  }
  return path;
};

/** Why a value deeper than `depthMax` is refused (and, under a record's root, why there). */
const depthDetail = (depthMax: number): string =>
  depthMax === valueDepthMax
    ? `a value nested deeper than ${valueDepthMax} levels is not encodable`
    : `a value nested deeper than ${depthMax} levels is not encodable here: the records that keep it hold it ${valueDepthMax - depthMax} level(s) down, and a record nests at most ${valueDepthMax}`;

/** The walk of a whole value; a getter or proxy that throws is a refusal, not an exception. */
const walkRoot = (walk: Walk, value: unknown): Walked => {
  try {
    return walkValue(walk, value, 1);
  } catch (error) {
    walk.path = undefined;
    return refuse(walk, thrownDetail(error));
  }
};

/**
 * The value the log gives back for this one: the canonical form of `value`
 * (what decoding its encoding gives, so a state folded from events holding
 * it equals the state a reopen reads) and its exact encoded size, or where
 * and why the codec could not encode it. The deciders put every value a
 * command carries into its events through this, and refuse with its path.
 *
 * Takes an `Input` (plain objects become maps) or anything an untyped
 * caller passes, and never throws: `undefined`, functions, symbols, class
 * instances (`Date`, `Set`), sparse lists, cycles, non-string map keys and
 * getters that throw are each an `Unencodable`. `depthMax` bounds its
 * nesting where the value is kept deeper than a record's root
 * (`argsDepthMax`, `resultDepthMax`).
 *
 * @example
 * canonical(new Map([["b", -0], ["a", 5n]]))
 * // { _tag: "Canonical", value: Map { "a" => 5, "b" => 0 }, bytes: 33 }
 * canonical({ user: { at: new Date() } })
 * // { _tag: "Unencodable", path: ".user.at",
 * //   detail: "an object of class Date is not a value (pass its getTime() or toISOString())" }
 */
export const canonical = (
  value: unknown,
  depthMax: number = valueDepthMax,
): Canonical | Unencodable => {
  // Scalars (most args and results) need no walk state.
  if (typeof value === "string") {
    const length = utf8Length(value);
    if (length >= 0) return { _tag: "Canonical", value, bytes: 5 + length };
  }
  const walk: Walk = { depthMax, bytes: 0, detail: "", path: undefined };
  const walked = walkRoot(walk, value);
  if (walked === refused) {
    return { _tag: "Unencodable", path: formatPath(walk.path ?? []), detail: walk.detail };
  }
  if (walk.bytes > Number.MAX_SAFE_INTEGER / 2) {
    return { _tag: "Unencodable", path: "", detail: "a value this large is not encodable" };
  }
  return { _tag: "Canonical", value: walked, bytes: walk.bytes };
};
