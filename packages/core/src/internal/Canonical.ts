/**
 * Values in their canonical form: the form that decoding their encoding
 * gives (FORMAT.md "Payload value encoding", and the codec's decoder). The
 * deciders put only such values into events, so the state a process holds
 * after deciding (the fold of those events) is the state a reopen reads
 * back from their bytes: state is fold(events), before and after a restart.
 *
 * What the codec would change, and what `canonicalValue` therefore changes:
 *
 * - `-0` becomes `0` (the encoding has one integer 0);
 * - a `bigint` of magnitude at most 2^53-1 becomes a `number` (the decoder
 *   returns such integers as numbers);
 * - a map's keys come in UTF-8 byte order, the order the encoding writes
 *   them in and the decoder builds the `Map` in;
 * - a subclass of `Uint8Array` (a Node `Buffer`), of `Array` or of `Map`
 *   becomes a plain one (the decoder builds plain ones).
 *
 * A value that is canonical already is returned as it is, not copied; a
 * container is copied only when something inside it changes, and then only
 * along the way to that change. The same walk measures the encoded size and
 * finds what the codec could not encode at all, with the path to it.
 */
import * as Value from "../Value.js";
import { utf8Length } from "./Fields.js";

/** A value in the form its decoding gives, with its exact encoded size in bytes. */
export interface Canonical {
  readonly _tag: "Canonical";
  readonly value: Value.Value;
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

/** The number as the encoding carries it: `-0` is the integer 0, every other number itself. */
export const canonicalNumber = (value: number): number => (value === 0 ? 0 : value);

const int64Min = Value.int64Min;
const int64Max = Value.int64Max;
const safeMin = BigInt(-Number.MAX_SAFE_INTEGER);
const safeMax = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * One walk over a value: the bytes counted so far and, once it finds what
 * cannot be encoded, what that is and the path to it (innermost step first,
 * gathered as the walk returns). Each call has its own.
 */
interface Walk {
  bytes: number;
  detail: string;
  /** Made only once something is refused: most walks never need it. */
  path: Array<string | number> | undefined;
}

/** What a step returns instead of a value once the walk has found something unencodable. */
const refused: unique symbol = Symbol("refused");

type Walked = Value.Value | typeof refused;

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

/** What an object that is not a value is, as the subject of a sentence. */
const describeObject = (value: object): string => {
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === null || prototype === Object.prototype) return "a plain object (use a Map)";
  const name = typeof prototype === "object" ? prototype?.constructor?.name : undefined;
  const known = typeof name === "string" && /^[A-Za-z_$][\w$]*$/.test(name) ? ` (${name})` : "";
  return `an object with a prototype other than Object${known}`;
};

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
  refuse(walk, `${describeKind(value)} is not a value`);

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
const walkList = (walk: Walk, list: ReadonlyArray<Value.Value>, depth: number): Walked => {
  walk.bytes += 5;
  let copy: Value.Value[] | undefined =
    Object.getPrototypeOf(list) === Array.prototype ? undefined : [];
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
  map: Value.ValueMap,
  values: ReadonlyArray<Value.Value> | undefined,
  sorted: boolean,
): Value.ValueMap => {
  const keys = [...map.keys()];
  const items = values ?? [...map.values()];
  const order = keys.map((_, index) => index);
  if (!sorted) order.sort((left, right) => compareCodePoints(keys[left] ?? "", keys[right] ?? ""));
  const rebuilt = new Map<string, Value.Value>();
  for (const index of order) rebuilt.set(keys[index] ?? "", items[index] ?? null);
  return rebuilt;
};

/** A map's keys and values, canonical; the map itself unless something changes. */
const walkMap = (walk: Walk, map: Value.ValueMap, depth: number): Walked => {
  walk.bytes += 5;
  // The walked values, kept from the first one that differs from its original.
  let values: Value.Value[] | undefined;
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

const walkObject = (walk: Walk, value: object, depth: number): Walked => {
  if (value instanceof Uint8Array) return walkBytes(walk, value);
  if (Array.isArray(value)) return walkList(walk, value, depth);
  if (value instanceof Map) return walkMap(walk, value, depth);
  return notAValue(walk, value);
};

/**
 * The canonical form of `value` at nesting `depth` (1 for the root).
 * Recursion is bounded: the depth is checked before descending, so a
 * cyclic or absurdly deep value stops at 65 frames.
 */
const walkValue = (walk: Walk, value: unknown, depth: number): Walked => {
  if (depth > Value.valueDepthMax) {
    return refuse(
      walk,
      `a value nested deeper than ${Value.valueDepthMax} levels is not encodable`,
    );
  }
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

/**
 * The canonical form of `value` and its exact encoded size, or where and why
 * the codec could not encode it. Never throws for what an untyped caller can
 * pass (`undefined`, functions, plain objects, `Date`s, sparse lists, cycles,
 * non-string map keys).
 *
 * @example
 * canonicalValue(new Map([["b", -0], ["a", 5n]]))
 * // { _tag: "Canonical", value: Map { "a" => 5, "b" => 0 }, bytes: 33 }
 */
export const canonicalValue = (value: Value.Value): Canonical | Unencodable => {
  // Scalars (most args and results) need no walk state.
  if (typeof value === "string") {
    const length = utf8Length(value);
    if (length >= 0) return { _tag: "Canonical", value, bytes: 5 + length };
  }
  const walk: Walk = { bytes: 0, detail: "", path: undefined };
  const walked = walkValue(walk, value, 1);
  if (walked === refused) {
    return { _tag: "Unencodable", path: formatPath(walk.path ?? []), detail: walk.detail };
  }
  if (walk.bytes > Number.MAX_SAFE_INTEGER / 2) {
    return { _tag: "Unencodable", path: "", detail: "a value this large is not encodable" };
  }
  return { _tag: "Canonical", value: walked, bytes: walk.bytes };
};
