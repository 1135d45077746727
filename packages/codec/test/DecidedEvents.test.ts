// Proves that state equals its log: every event the deciders produce is
// already what decoding its own bytes gives back, so the state a process
// folds from its decisions is the state a reopen reads. It drives core's
// deciders with random commands whose values and numbers are often not in
// canonical form (-0, bigints in and out of the safe range, floats, maps with
// keys out of order, Buffers and subclasses, nested lists and maps, bytes,
// plain objects in place of maps, with keys such as `__proto__` and keys
// whose UTF-16 order is not their UTF-8 order), encodes and decodes each
// decided record, and compares with an equality that tells -0 from 0, a
// bigint from a number, and one key order or prototype from another.
import { Commands, Decide, Evolve, type Event, HistoryError, State, Value } from "@tay/core";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as Values from "../../testkit/src/Values.js";
import { decodeEvent, encodeEvent } from "../src/Event.js";
import { decodeValue, encodeValue } from "../src/Value.js";

type AnyValue = Value.Value;
type AnyInput = Value.Input;

// ---- values an application may pass, canonical or not ----------------------

class Listing extends Array<AnyValue> {}
class Registry extends Map<string, AnyValue> {}

const anyNumber = (): fc.Arbitrary<number> =>
  fc.oneof(
    fc.constant(-0),
    Values.integer(),
    Values.float(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );

const safe = BigInt(Number.MAX_SAFE_INTEGER);

const anyBigint = (): fc.Arbitrary<bigint> =>
  fc.oneof(
    fc.bigInt({ min: -safe, max: safe }),
    fc.constantFrom(0n, -1n, safe, -safe, safe + 1n, -safe - 1n),
    Values.bigInteger(),
  );

const anyBytes = (): fc.Arbitrary<Uint8Array> =>
  fc
    .tuple(Values.bytes(16), fc.boolean())
    .map(([bytes, asBuffer]) => (asBuffer ? Buffer.from(bytes) : bytes));

const anyScalar = (): fc.Arbitrary<AnyValue> =>
  fc.oneof(fc.constant(null), fc.boolean(), anyNumber(), anyBigint(), Values.text(), anyBytes());

/** Lists and maps of `item`, plain or of a subclass; map entries in any order. */
const anyContainer = (item: fc.Arbitrary<AnyValue>): fc.Arbitrary<AnyValue> =>
  fc.oneof(
    fc
      .tuple(fc.array(item, { maxLength: 5 }), fc.boolean())
      .map(([items, subclass]) => (subclass ? Listing.from(items) : items)),
    fc
      .tuple(
        fc.uniqueArray(fc.tuple(Values.mapKey(), item), {
          selector: (entry) => entry[0],
          maxLength: 5,
        }),
        fc.boolean(),
      )
      .map(([entries, subclass]) => (subclass ? new Registry(entries) : new Map(entries))),
  );

const anyValueAtDepth = (depth: number): fc.Arbitrary<AnyValue> =>
  depth <= 1
    ? anyScalar()
    : fc.oneof(
        { weight: 2, arbitrary: anyScalar() },
        { weight: 3, arbitrary: anyContainer(anyValueAtDepth(depth - 1)) },
      );

const anyValue = (): fc.Arbitrary<AnyValue> => anyValueAtDepth(4);

/**
 * Keys a plain object makes tricky: the names of Object.prototype's members,
 * integer-like keys (which `Object.keys` lists first, as numbers), and
 * characters whose UTF-16 order is not their UTF-8 order (U+FF61 sorts
 * after the surrogates of U+1F600 in UTF-16, before it in UTF-8).
 */
const objectKey = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: Values.mapKey() },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "__proto__",
        "constructor",
        "hasOwnProperty",
        "toString",
        "valueOf",
        "10",
        "9",
        "\uFF61",
        "\u{1F600}",
        "\uFFFD",
        "\u{10000}",
      ),
    },
  );

/**
 * A plain object of `entries`, its prototype Object.prototype or null. Each
 * key is defined (as JSON.parse does), never assigned, so that `__proto__`
 * is an own key.
 */
const plainObject = (
  entries: ReadonlyArray<readonly [string, AnyInput]>,
  bare: boolean,
): AnyInput => {
  const object: { [key: string]: AnyInput } = bare ? Object.create(null) : {};
  for (const [key, item] of entries) {
    Object.defineProperty(object, key, {
      value: item,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return object;
};

/** Inputs: values, and plain objects wherever a map may be. */
const anyInputAtDepth = (depth: number): fc.Arbitrary<AnyInput> => {
  if (depth <= 1) return anyScalar();
  const item = anyInputAtDepth(depth - 1);
  return fc.oneof(
    { weight: 2, arbitrary: anyScalar() },
    { weight: 1, arbitrary: fc.array(item, { maxLength: 4 }) },
    {
      weight: 1,
      arbitrary: fc
        .uniqueArray(fc.tuple(Values.mapKey(), item), {
          selector: (entry) => entry[0],
          maxLength: 4,
        })
        .map((entries) => new Map(entries)),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.uniqueArray(fc.tuple(objectKey(), item), {
            selector: (entry) => entry[0],
            maxLength: 5,
          }),
          fc.boolean(),
        )
        .map(([entries, bare]) => plainObject(entries, bare)),
    },
  );
};

/** What commands carry: half the time values, half the time inputs with plain objects. */
const anyInput = (): fc.Arbitrary<AnyInput> => fc.oneof(anyValue(), anyInputAtDepth(4));

/** A number a command may carry in a field of `0..max`, -0 included. */
const smallNumber = (max: number): fc.Arbitrary<number> =>
  fc.oneof(fc.constant(-0), fc.integer({ min: 0, max }));

// ---- comparing exactly -------------------------------------------------------

/**
 * The first place where `left` and `right` differ, or undefined: numbers by
 * `Object.is`, the kind of every value, prototypes, map key order, the own
 * keys of plain objects.
 */
const difference = (left: unknown, right: unknown, path = "event"): string | undefined => {
  if (typeof left !== typeof right) return `${path}: ${typeof left} against ${typeof right}`;
  if (typeof left === "number")
    return Object.is(left, right) ? undefined : `${path}: ${left} against ${right}`;
  if (typeof left !== "object" || left === null || right === null) {
    return left === right ? undefined : `${path}: ${String(left)} against ${String(right)}`;
  }
  const other = right as object;
  if (Object.getPrototypeOf(left) !== Object.getPrototypeOf(other))
    return `${path}: prototypes differ`;
  if (left instanceof Uint8Array && other instanceof Uint8Array) {
    return left.length === other.length && left.every((byte, index) => byte === other[index])
      ? undefined
      : `${path}: bytes differ`;
  }
  if (left instanceof Map && other instanceof Map) {
    const leftKeys = [...left.keys()];
    const rightKeys = [...other.keys()];
    if (
      leftKeys.join("\u0000") !== rightKeys.join("\u0000") ||
      leftKeys.length !== rightKeys.length
    ) {
      return `${path}: map keys ${JSON.stringify(leftKeys)} against ${JSON.stringify(rightKeys)}`;
    }
    for (const key of leftKeys) {
      const found = difference(
        left.get(key),
        other.get(key),
        `${path}.get(${JSON.stringify(key)})`,
      );
      if (found !== undefined) return found;
    }
    return undefined;
  }
  const leftKeys = Object.keys(left).sort();
  const rightKeys = Object.keys(other).sort();
  if (leftKeys.join() !== rightKeys.join()) return `${path}: keys ${leftKeys} against ${rightKeys}`;
  for (const key of leftKeys) {
    const found = difference(Reflect.get(left, key), Reflect.get(other, key), `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
};

/** The record as a reopen reads it: encoded, then decoded. */
const readBack = (record: Event.Event): Event.Event => {
  const encoded = encodeEvent(record);
  if (E.isLeft(encoded)) throw new Error(`a decided record does not encode: ${encoded.left._tag}`);
  const { type, schema, payload } = encoded.right;
  const decoded = decodeEvent(type, schema, payload);
  if (E.isLeft(decoded)) throw new Error(`a decided record does not decode: ${decoded.left._tag}`);
  return decoded.right;
};

// ---- random commands ---------------------------------------------------------

type Step =
  | {
      readonly kind: "insert";
      readonly jobs: ReadonlyArray<{
        readonly args: AnyInput;
        readonly priority: number | undefined;
        readonly delay: number | undefined;
      }>;
    }
  | { readonly kind: "claim" }
  | { readonly kind: "complete"; readonly result: AnyInput | undefined }
  | { readonly kind: "fail" }
  | { readonly kind: "register"; readonly args: AnyInput; readonly priority: number }
  | { readonly kind: "tick" };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(
        fc.record({
          args: anyInput(),
          priority: fc.option(smallNumber(9), { nil: undefined }),
          delay: fc.option(smallNumber(100), { nil: undefined }),
        }),
        { minLength: 1, maxLength: 3 },
      )
      .map((jobs): Step => ({ kind: "insert", jobs })),
  },
  { weight: 2, arbitrary: fc.constant<Step>({ kind: "claim" }) },
  {
    weight: 3,
    arbitrary: fc
      .option(anyInput(), { nil: undefined })
      .map((result): Step => ({ kind: "complete", result })),
  },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: "fail" }) },
  {
    weight: 2,
    arbitrary: fc
      .record({ args: anyInput(), priority: smallNumber(9) })
      .map(({ args, priority }): Step => ({ kind: "register", args, priority })),
  },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: "tick" }) },
);

/** How far the clock moves after a step: mostly not at all, so that several commands run at -0. */
const advance = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }) },
);

const firstExecuting = (state: State.State): number =>
  state.indexes.executing.first()?.[0].jobId ?? 1;

/** The command of `step` at `now` (-0 for the first step) against `state`. */
const commandOf = (current: Step, state: State.State, now: number): Commands.Command => {
  switch (current.kind) {
    case "insert":
      return Commands.insertJobs({
        now,
        jobs: current.jobs.map((job) => ({
          queue: "values",
          worker: "Worker",
          args: job.args,
          ...(job.priority === undefined ? {} : { priority: job.priority }),
          // A delay of 0 or -0 schedules the job at that very time, the epoch.
          ...(job.delay === undefined
            ? {}
            : { scheduledAt: job.delay === 0 ? job.delay : now + job.delay }),
        })),
      });
    case "claim":
      return Commands.claimJobs({ now, queue: "values", limit: 2 });
    case "complete":
      return current.result === undefined
        ? Commands.completeJob({ now, jobId: firstExecuting(state) })
        : Commands.completeJob({ now, jobId: firstExecuting(state), result: current.result });
    case "fail":
      return Commands.failJob({ now, jobId: firstExecuting(state), error: "boom" });
    case "register":
      return Commands.registerSchedule({
        now,
        scheduleId: `s${state.schedules.size % 2}`,
        definition: {
          queue: "values",
          worker: "Recurring",
          args: current.args,
          priority: current.priority,
          maxAttempts: 2,
          everyMs: 10,
          cron: null,
          overlap: "allow",
        },
      });
    case "tick":
      return Commands.tick({ now });
  }
};

describe("the events the deciders produce", () => {
  it("are what decoding their bytes gives back, exactly, for any values in the commands", () => {
    let compared = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(step, advance), { minLength: 1, maxLength: 12 }), (steps) => {
        let state = State.initialState;
        let clock = 0;
        for (const [current, advance] of steps) {
          // Commands run at -0 until the clock first moves (often after
          // several of them), then at later times.
          const now = clock === 0 ? -0 : clock;
          clock += 7 * advance;
          const decision = Decide.decide(state, commandOf(current, state, now));
          if (E.isLeft(decision)) continue;
          for (const record of decision.right) {
            expect(difference(record, readBack(record))).toBeUndefined();
            compared++;
          }
          const evolved = Evolve.evolveAll(state, decision.right);
          if (E.isLeft(evolved)) throw new Error(HistoryError.describe(evolved.left));
          state = evolved.right;
        }
      }),
      { numRuns: 300 },
    );
    // The property must have compared records, not only refusals.
    expect(compared).toBeGreaterThan(1_000);
  });
});

describe("core's canonical form of a value", () => {
  it("is the value its encoding decodes to, and its size the encoding's length", () => {
    fc.assert(
      fc.property(anyValue(), (value) => {
        const canonical = Value.canonical(value);
        const encoded = encodeValue(value);
        if (E.isLeft(encoded)) {
          expect(canonical._tag).toBe("Unencodable");
          return;
        }
        const decoded = decodeValue(encoded.right);
        if (E.isLeft(decoded)) throw new Error(decoded.left._tag);
        if (canonical._tag !== "Canonical") throw new Error(canonical.detail);
        expect(difference(canonical.value, decoded.right, "value")).toBeUndefined();
        expect(canonical.bytes).toBe(encoded.right.length);
      }),
      { numRuns: 2_000 },
    );
  });

  it("is a value the encoder refuses exactly when the codec refuses it", () => {
    const notValues = fc.oneof(
      fc.constantFrom<unknown>(
        undefined,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        2n ** 63n,
        "\ud800",
      ),
      fc.constantFrom<unknown>(
        () => 1,
        Symbol("s"),
        new Set([1]),
        new Date(0),
        new Float64Array(1),
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(anyScalar(), notValues), { maxLength: 4 }), (items) => {
        const value = items as AnyValue;
        const canonical = Value.canonical(value);
        expect(canonical._tag === "Canonical").toBe(E.isRight(encodeValue(value)));
      }),
      { numRuns: 500 },
    );
  });

  it("of an input with plain objects is a value the codec gives back exactly, at its size", () => {
    fc.assert(
      fc.property(anyInputAtDepth(4), (input) => {
        const canonical = Value.canonical(input);
        if (canonical._tag !== "Canonical") throw new Error(canonical.detail);
        const encoded = encodeValue(canonical.value);
        if (E.isLeft(encoded)) throw new Error(encoded.left._tag);
        const decoded = decodeValue(encoded.right);
        if (E.isLeft(decoded)) throw new Error(decoded.left._tag);
        expect(difference(canonical.value, decoded.right, "value")).toBeUndefined();
        expect(canonical.bytes).toBe(encoded.right.length);
      }),
      { numRuns: 2_000 },
    );
  });
});
