/**
 * The field kinds of EVENTS.md (`id`, `time`, `name`, `text`, `value`,
 * `T|null`, `list<T>`, `bool`, enumerated strings, bounded integers, maps of
 * exactly declared keys) as io-ts codecs over `Value`.
 *
 * Each kind is an io-ts `Type<A, O, Value>`, so it composes and reports the
 * io-ts way (`decode`, `validate`, `is`, `encode`), and it also carries:
 *
 * - `read`, the hot path: the decoded `A` or a `PayloadFault`, without the
 *   `Either` and context allocations of io-ts's generic machinery (event
 *   decoding targets a million events per second, see docs/events-codec.md);
 *   io-ts's `validate` is `read` with the fault rendered as a message;
 * - `write`, the encoder, which never checks: callers check by reading back;
 * - `descriptor`, a plain description the testkit turns into fast-check
 *   arbitraries, so one declaration drives decoder, encoder and generator.
 */
import { Value as CoreValue } from "@tay/core";
import * as t from "io-ts";
import { utf8LengthOf } from "./utf8.js";

type Value = CoreValue.Value;
type ValueMap = CoreValue.ValueMap;

/**
 * The closed set of ways a payload can mismatch its pair's declaration:
 *
 * - `WrongKind`: a value of another kind (found: the kind);
 * - `MissingKey` / `ExtraKey`: the key set differs from the declared one;
 * - `OutOfRange`: an integer outside its range, a string outside its byte
 *   bounds (found: the number, or the byte length);
 * - `NotAMember`: a string outside an enumeration;
 * - `IllFormedString`: a string with a lone surrogate (only from typed
 *   events being encoded: decoded strings are always well-formed);
 * - `NotAscending`: `active_job_ids` not strictly ascending;
 * - `BothOrNeitherSet`: a definition with both or neither of `every_ms` and
 *   `cron`;
 * - `NestedRecord`: a (7,1) or (8,1) inside a mutation;
 * - `EmptyMutation`: a mutation with no event.
 */
export type EventSchemaMismatchReason =
  | "WrongKind"
  | "MissingKey"
  | "ExtraKey"
  | "OutOfRange"
  | "NotAMember"
  | "IllFormedString"
  | "NotAscending"
  | "BothOrNeitherSet"
  | "NestedRecord"
  | "EmptyMutation";

/** Every reason a `read` can give, including the two that are not schema mismatches. */
export type PayloadFaultReason = EventSchemaMismatchReason | "BeyondSafeInteger" | "UnknownEvent";

/** A (type, schema) pair found inside a payload. */
export interface PayloadPair {
  readonly type: number;
  readonly schema: number;
}

/** Longest rendering of untrusted text (a key, a string) inside a fault. */
const renderedTextMax = 64;

/** A bounded, escaped rendering of untrusted text for messages and paths. */
export const renderPayloadText = (text: string): string =>
  JSON.stringify(text.length > renderedTextMax ? `${text.slice(0, renderedTextMax)}...` : text);

const plainKey = /^[a-z_][a-z0-9_]*$/;

const renderSegment = (segment: string | number): string => {
  if (typeof segment === "number") return `[${segment}]`;
  return plainKey.test(segment) && segment.length <= renderedTextMax
    ? segment
    : `[${renderPayloadText(segment)}]`;
};

/**
 * The first thing wrong with a value, found by `read`. It is internal: the
 * public edge turns it into a tagged error with the pair it concerns. It is
 * a class so that `read` can return `A | PayloadFault` and tell them apart
 * with `instanceof` (no decoded value is ever a `PayloadFault`), which
 * spares an allocation per field on the success path.
 */
export class PayloadFault {
  /** Where, from the root of the payload: `definition.every_ms`, `jobs[3].errors[0].at`. */
  path = "";

  constructor(
    readonly reason: PayloadFaultReason,
    /** What was found: a kind, a number, a byte length, a key. */
    readonly found: string,
    /** For `UnknownEvent` and `NestedRecord`: the pair found inside a mutation. */
    readonly pair: PayloadPair | undefined = undefined,
  ) {}

  /** Prefixes a map key or list index to the path, as the fault bubbles up. */
  within(segment: string | number): PayloadFault {
    const head = renderSegment(segment);
    if (this.path === "") this.path = head;
    else this.path = this.path.startsWith("[") ? head + this.path : `${head}.${this.path}`;
    return this;
  }

  /** A one-line description, for io-ts messages and logs. */
  message(): string {
    return `${this.reason} at ${this.path === "" ? "(root)" : this.path}: found ${this.found}`;
  }
}

/** The kind of anything, as a fault reports it: a value kind or a JavaScript type. */
export const describePayloadFound = (input: unknown): string => {
  if (input === null) return "null";
  switch (typeof input) {
    case "boolean":
      return "boolean";
    case "bigint":
      return "integer";
    case "number":
      return Number.isInteger(input) ? "integer" : "float";
    case "string":
      return "string";
    case "object":
      if (input instanceof Uint8Array) return "bytes";
      if (Array.isArray(input)) return "list";
      if (input instanceof Map) return "map";
      return "object";
    default:
      return typeof input;
  }
};

const wrongKind = (input: unknown): PayloadFault =>
  new PayloadFault("WrongKind", describePayloadFound(input));

/** One declared key of a map kind, as the testkit sees it. */
export interface PayloadFieldDescriptor {
  readonly wire: string;
  readonly descriptor: PayloadKindDescriptor;
}

/**
 * A plain description of a kind: enough to generate every valid value of it
 * (the testkit's arbitraries) and to document it. `integer` bounds are
 * inclusive; `name` and `text` bounds are UTF-8 bytes.
 */
export type PayloadKindDescriptor =
  | { readonly kind: "integer"; readonly min: number; readonly max: number }
  | { readonly kind: "name"; readonly bytesMin: number; readonly bytesMax: number }
  | { readonly kind: "text"; readonly bytesMin: number; readonly bytesMax: number }
  | { readonly kind: "enum"; readonly members: ReadonlyArray<string> }
  | { readonly kind: "bool" }
  | { readonly kind: "value" }
  | { readonly kind: "bytes" }
  | { readonly kind: "nullable"; readonly of: PayloadKindDescriptor }
  | {
      readonly kind: "list";
      readonly of: PayloadKindDescriptor;
      readonly lengthMin: number;
      readonly strictlyAscending: boolean;
    }
  | {
      readonly kind: "map";
      readonly fields: ReadonlyArray<PayloadFieldDescriptor>;
      /** Two wire keys of nullable kinds of which exactly one is non-null. */
      readonly exactlyOneOf: readonly [string, string] | undefined;
    };

/**
 * A field kind: an io-ts codec from `Value` to `A` (and back to `O`), plus
 * the fast `read`, the unchecked `write` and the `descriptor`.
 */
export class PayloadKind<A, O extends Value = Value> extends t.Type<A, O, Value> {
  constructor(
    name: string,
    readonly descriptor: PayloadKindDescriptor,
    is: t.Is<A>,
    /** The decoded value, or the first fault (in declared field order). */
    readonly read: (input: Value) => A | PayloadFault,
    /** The value `A` is written as; checks nothing (read it back to check). */
    readonly write: (value: A) => O,
    /**
     * True when `write` can take `input` without throwing: a shallow check
     * of its JavaScript shape (an object for a map, an array for a list).
     * Only untyped callers can pass anything else.
     */
    readonly fits: (input: unknown) => boolean = () => true,
  ) {
    super(
      name,
      is,
      (input, context) => {
        const result = read(input);
        return result instanceof PayloadFault
          ? t.failure(input, context, result.message())
          : t.success(result);
      },
      write,
    );
  }
}

/**
 * A kind with its type parameter forgotten, for tables and generic walks.
 * The methods are declared as methods so that any `PayloadKind<A>` fits
 * (method parameters are compared bivariantly).
 */
export interface ErasedPayloadKind {
  readonly name: string;
  readonly descriptor: PayloadKindDescriptor;
  is(input: unknown): boolean;
  read(input: Value): unknown;
  write(value: unknown): Value;
  fits(input: unknown): boolean;
}

/**
 * Writes `item` with `kind`, or passes it through unchanged when it does
 * not have the shape `kind` writes from: a typed event from untyped code
 * may hold anything anywhere, and the read-back check (or the value
 * encoder) then refuses it with what was found, rather than `write`
 * throwing on it.
 */
const writeLoose = (kind: ErasedPayloadKind, item: unknown): Value =>
  // Passed through only to be refused by the read-back: never decoded data.
  kind.fits(item) ? kind.write(item) : (item as Value);

const identity = <A>(value: A): A => value;

// ---------------------------------------------------------------------------
// Scalars

const safeIntegerMax = CoreValue.safeIntegerMax;

/**
 * An integer in `min..max`. A `bigint` (a decoded integer beyond 2^53-1) is
 * `BeyondSafeInteger` when the range reaches the safe maximum (the field
 * could legally hold it in another implementation) and `OutOfRange`
 * otherwise (no implementation could: `priority` 2^60, any negative one).
 */
export const payloadInteger = (name: string, min: number, max: number): PayloadKind<number> => {
  const inRange = (input: number): boolean =>
    Number.isInteger(input) && input >= min && input <= max;
  return new PayloadKind<number>(
    name,
    { kind: "integer", min, max },
    (input): input is number => typeof input === "number" && inRange(input),
    (input) => {
      if (typeof input === "number") {
        if (inRange(input)) return input;
        return Number.isInteger(input)
          ? new PayloadFault("OutOfRange", String(input))
          : new PayloadFault("WrongKind", "float");
      }
      if (typeof input === "bigint") {
        // Decoded bigints are never safe integers; a safe one can only come
        // from a typed event, where the field's type is `number`.
        if (input >= -safeIntegerMax && input <= safeIntegerMax) {
          return new PayloadFault("WrongKind", "bigint");
        }
        return input > safeIntegerMax && max === safeIntegerMax
          ? new PayloadFault("BeyondSafeInteger", String(input))
          : new PayloadFault("OutOfRange", String(input));
      }
      return wrongKind(input);
    },
    identity,
  );
};

/** A string of `bytesMin..bytesMax` UTF-8 bytes: EVENTS.md's `name` or `text`. */
export const payloadString = (
  kind: "name" | "text",
  bytesMin: number,
  bytesMax: number,
): PayloadKind<string> => {
  const check = (input: string): PayloadFault | undefined => {
    const length = utf8LengthOf(input);
    if (length < 0) return new PayloadFault("IllFormedString", `lone surrogate at ${-length - 1}`);
    if (length < bytesMin || length > bytesMax) {
      return new PayloadFault("OutOfRange", `${length} bytes`);
    }
    return undefined;
  };
  return new PayloadKind<string>(
    kind,
    { kind, bytesMin, bytesMax },
    (input): input is string => typeof input === "string" && check(input) === undefined,
    (input) => {
      if (typeof input !== "string") return wrongKind(input);
      return check(input) ?? input;
    },
    identity,
  );
};

/** One of the quoted strings of EVENTS.md, e.g. `"completed" | "discarded"`. */
export const payloadEnum = <const M extends string>(
  name: string,
  members: ReadonlyArray<M>,
): PayloadKind<M> => {
  const names: ReadonlyArray<string> = members;
  const isMember = (input: unknown): input is M =>
    typeof input === "string" && names.includes(input);
  return new PayloadKind<M>(
    name,
    { kind: "enum", members },
    isMember,
    (input) => {
      if (isMember(input)) return input;
      return typeof input === "string"
        ? new PayloadFault("NotAMember", renderPayloadText(input))
        : wrongKind(input);
    },
    identity,
  );
};

/** `bool`. */
export const payloadBool: PayloadKind<boolean> = new PayloadKind<boolean>(
  "bool",
  { kind: "bool" },
  (input): input is boolean => typeof input === "boolean",
  (input) => (typeof input === "boolean" ? input : wrongKind(input)),
  identity,
);

/** Opaque bytes (a mutation's inner payloads). */
export const payloadBytes: PayloadKind<Uint8Array> = new PayloadKind<Uint8Array>(
  "bytes",
  { kind: "bytes" },
  (input): input is Uint8Array => input instanceof Uint8Array,
  (input) => (input instanceof Uint8Array ? input : wrongKind(input)),
  identity,
);

/**
 * True when `input` is a `Value` all the way down: a type check only (depth,
 * int64 range and well-formed strings are the value encoder's to refuse).
 * Walks with an explicit stack, and visits each object once, so neither a
 * deep nor a cyclic input can blow the stack or loop.
 */
const isValue = (input: unknown): input is Value => {
  const pending: unknown[] = [input];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const item = pending.pop();
    if (item === null) continue;
    switch (typeof item) {
      case "boolean":
      case "number":
      case "bigint":
      case "string":
        continue;
      case "object":
        if (item instanceof Uint8Array || seen.has(item)) continue;
        seen.add(item);
        if (Array.isArray(item)) {
          for (const element of item) pending.push(element);
          continue;
        }
        if (item instanceof Map) {
          for (const [key, element] of item) {
            if (typeof key !== "string") return false;
            pending.push(element);
          }
          continue;
        }
        return false;
      default:
        return false;
    }
  }
  return true;
};

/**
 * `value`: any value. Decoded values are taken as they are (the value codec
 * has checked them); a typed one is checked by the value encoder.
 */
export const payloadValue: PayloadKind<Value> = new PayloadKind<Value>(
  "value",
  { kind: "value" },
  isValue,
  identity,
  identity,
);

// ---------------------------------------------------------------------------
// Combinators

/** `T|null`. */
export const payloadNullable = <A>(of: PayloadKind<A>): PayloadKind<A | null> =>
  new PayloadKind<A | null>(
    `${of.name}|null`,
    { kind: "nullable", of: of.descriptor },
    (input): input is A | null => input === null || of.is(input),
    (input) => (input === null ? null : of.read(input)),
    (value) => (value === null ? null : of.write(value)),
    (input) => input === null || of.fits(input),
  );

/** For an ordered list: true when `previous` may precede `current`. */
type PayloadOrder<A> = (previous: A, current: A) => boolean;

const readList = <A>(
  of: PayloadKind<A>,
  input: ReadonlyArray<Value>,
  order: PayloadOrder<A> | undefined,
): ReadonlyArray<A> | PayloadFault => {
  const output: A[] = [];
  for (let index = 0; index < input.length; index++) {
    const item = of.read(input[index] ?? null);
    if (item instanceof PayloadFault) return item.within(index);
    const previous = output[index - 1];
    if (order !== undefined && previous !== undefined && !order(previous, item)) {
      return new PayloadFault("NotAscending", `${String(previous)} then ${String(item)}`).within(
        index,
      );
    }
    output.push(item);
  }
  return output;
};

/** Options of a list kind. */
export interface PayloadListOptions {
  /** Fewest items; fewer is `emptyReason` (`OutOfRange` by default). */
  readonly lengthMin?: number;
  readonly emptyReason?: EventSchemaMismatchReason;
}

const listKind = <A>(
  name: string,
  of: PayloadKind<A>,
  order: PayloadOrder<A> | undefined,
  options: PayloadListOptions,
): PayloadKind<ReadonlyArray<A>> => {
  const lengthMin = options.lengthMin ?? 0;
  const isList = (input: unknown): input is ReadonlyArray<A> =>
    Array.isArray(input) && input.every((item) => of.is(item));
  const inOrder = (items: ReadonlyArray<A>): boolean =>
    order === undefined ||
    items.every((item, index) => {
      const previous = items[index - 1];
      return previous === undefined || order(previous, item);
    });
  return new PayloadKind<ReadonlyArray<A>>(
    name,
    { kind: "list", of: of.descriptor, lengthMin, strictlyAscending: order !== undefined },
    (input): input is ReadonlyArray<A> =>
      isList(input) && input.length >= lengthMin && inOrder(input),
    (input) => {
      if (!CoreValue.isList(input)) return wrongKind(input);
      if (input.length < lengthMin) {
        return new PayloadFault(options.emptyReason ?? "OutOfRange", `${input.length} items`);
      }
      return readList(of, input, order);
    },
    (value) => value.map((item) => writeLoose(of, item)),
    Array.isArray,
  );
};

/** `list<T>`. */
export const payloadList = <A>(
  of: PayloadKind<A>,
  options: PayloadListOptions = {},
): PayloadKind<ReadonlyArray<A>> => listKind(`list<${of.name}>`, of, undefined, options);

/** `list<T>` of integers in strictly ascending order (so without duplicates). */
export const payloadAscendingList = (of: PayloadKind<number>): PayloadKind<ReadonlyArray<number>> =>
  listKind(`ascending list<${of.name}>`, of, (previous, current) => previous < current, {});

/** The declared keys of a map kind: for each property of `S`, its wire key and kind. */
export type PayloadFields<S> = {
  readonly [Key in keyof S]-?: readonly [wire: string, kind: PayloadKind<S[Key]>];
};

/** Options of a map kind. */
export interface PayloadMapOptions<S> {
  /** Two nullable properties of which exactly one must be non-null. */
  readonly exactlyOneOf?: readonly [keyof S & string, keyof S & string];
  /** A further check of the decoded value, after every field passed. */
  readonly refine?: (value: S) => PayloadFault | undefined;
}

interface ErasedField {
  readonly property: string;
  readonly wire: string;
  readonly kind: ErasedPayloadKind;
}

const eraseFields = <S>(fields: PayloadFields<S>): ReadonlyArray<ErasedField> => {
  const erased: ErasedField[] = [];
  // The keys of our own (static) declaration: `keyof S` by construction.
  for (const property of Object.keys(fields) as Array<keyof S & string>) {
    const [wire, kind] = fields[property];
    erased.push({ property, wire, kind });
  }
  const wires = new Set(erased.map((field) => field.wire));
  if (wires.size !== erased.length) throw new Error("payload map declares a wire key twice");
  return erased;
};

/** A plain object (what a map kind is written from), not a value container. */
const isObjectLike = (input: unknown): input is object =>
  typeof input === "object" &&
  input !== null &&
  !Array.isArray(input) &&
  !(input instanceof Map) &&
  !(input instanceof Uint8Array);

/** Sorts wire keys by their UTF-8 bytes (they are ASCII: code unit order). */
const byWire = (left: ErasedField, right: ErasedField): number =>
  left.wire < right.wire ? -1 : left.wire > right.wire ? 1 : 0;

/** Why `value` has both or neither of the two properties of `exactlyOne` set. */
const exactlyOneFault = (
  exactlyOne: readonly [string, string] | undefined,
  value: object,
): PayloadFault | undefined => {
  if (exactlyOne === undefined) return undefined;
  const first = Reflect.get(value, exactlyOne[0]) !== null;
  const second = Reflect.get(value, exactlyOne[1]) !== null;
  if (first !== second) return undefined;
  return new PayloadFault("BothOrNeitherSet", first ? "both" : "neither");
};

/** True for an object with the tag (if any) and every field of its kind (io-ts's `is`). */
const hasMapShape = <S extends object>(
  tag: string | undefined,
  fields: ReadonlyArray<ErasedField>,
  input: unknown,
): input is S =>
  isObjectLike(input) &&
  (tag === undefined || Reflect.get(input, "_tag") === tag) &&
  fields.every((field) => field.kind.is(Reflect.get(input, field.property)));

/**
 * The declared fields of a map read into an object (with `_tag` first when
 * given): the first missing key (in declared order), else the first extra
 * key, else the first field value at fault.
 */
const readMapFields = (
  tag: string | undefined,
  fields: ReadonlyArray<ErasedField>,
  declared: ReadonlySet<string>,
  input: ValueMap,
): Record<string, unknown> | PayloadFault => {
  const output: Record<string, unknown> = tag === undefined ? {} : { _tag: tag };
  let fault: PayloadFault | undefined;
  for (const field of fields) {
    const item = input.get(field.wire);
    // A key set problem outranks a value problem already seen.
    if (item === undefined) return new PayloadFault("MissingKey", "absent").within(field.wire);
    if (fault !== undefined) continue;
    const decoded = field.kind.read(item);
    if (decoded instanceof PayloadFault) fault = decoded.within(field.wire);
    else output[field.property] = decoded;
  }
  if (input.size !== fields.length) {
    for (const [key, item] of input) {
      if (!declared.has(key)) {
        return new PayloadFault("ExtraKey", describePayloadFound(item)).within(String(key));
      }
    }
  }
  return fault ?? output;
};

/** The map of `value`'s fields, its keys in canonical order (`written` is sorted by wire key). */
const writeMapFields = (written: ReadonlyArray<ErasedField>, value: object): ValueMap =>
  new Map(
    written.map((field): [string, Value] => [
      field.wire,
      writeLoose(field.kind, Reflect.get(value, field.property)),
    ]),
  );

/** The plain description of a map kind, with wire keys where the declaration has properties. */
const mapDescriptor = (
  fields: ReadonlyArray<ErasedField>,
  exactlyOne: readonly [string, string] | undefined,
): PayloadKindDescriptor => {
  const wireOf = (property: string): string =>
    fields.find((field) => field.property === property)?.wire ?? property;
  return {
    kind: "map",
    fields: fields.map((field) => ({ wire: field.wire, descriptor: field.kind.descriptor })),
    exactlyOneOf:
      exactlyOne === undefined ? undefined : [wireOf(exactlyOne[0]), wireOf(exactlyOne[1])],
  };
};

/**
 * A map of exactly the declared keys, decoded into an object of type `S`
 * (with `_tag` first when `tag` is given). Checks, in order: the input is a
 * map; every declared key is present (`MissingKey`, in declared order); no
 * other key (`ExtraKey`); then the first field value at fault; then
 * `exactlyOneOf` and `refine`. Written maps list their keys in canonical
 * order, so the value encoder never has to sort them.
 */
const mapKind = <S extends object>(
  name: string,
  tag: string | undefined,
  fields: ReadonlyArray<ErasedField>,
  options: PayloadMapOptions<S>,
): PayloadKind<S, ValueMap> => {
  const declared = new Set(fields.map((field) => field.wire));
  const written = fields.slice().sort(byWire);
  const exactlyOne = options.exactlyOneOf;
  const refine = options.refine;
  const read = (input: Value): S | PayloadFault => {
    if (!CoreValue.isMap(input)) return wrongKind(input);
    const output = readMapFields(tag, fields, declared, input);
    if (output instanceof PayloadFault) return output;
    const checked = exactlyOneFault(exactlyOne, output);
    if (checked !== undefined) return checked;
    // Every declared property of `S` was assigned a value its kind decoded.
    const value = output as S;
    return refine?.(value) ?? value;
  };
  return new PayloadKind<S, ValueMap>(
    name,
    mapDescriptor(fields, exactlyOne),
    (input): input is S =>
      hasMapShape<S>(tag, fields, input) &&
      exactlyOneFault(exactlyOne, input) === undefined &&
      refine?.(input) === undefined,
    read,
    (value) => writeMapFields(written, value),
    isObjectLike,
  );
};

/** A map of exactly the declared keys, decoded into a plain object. */
export const payloadMap = <S extends object>(
  name: string,
  fields: PayloadFields<S>,
  options: PayloadMapOptions<S> = {},
): PayloadKind<S, ValueMap> => mapKind(name, undefined, eraseFields(fields), options);

/** A map of exactly the declared keys, decoded into a tagged event. */
export const payloadTagged = <E extends { readonly _tag: string }>(
  tag: E["_tag"],
  fields: PayloadFields<Omit<E, "_tag">>,
  options: PayloadMapOptions<E> = {},
): PayloadKind<E, ValueMap> => mapKind(tag, tag, eraseFields(fields), options);
