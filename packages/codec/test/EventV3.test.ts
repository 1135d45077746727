// Proves the codec carries the five schema-3 pairs of EVENTS-V3.md as it
// carries the others: round trip, canonical re-encode and totality for each
// pair's arbitrary, schema-3 members inside mutations, and the field rules
// the pairs add. The generic suites of Event.test.ts walk every pair too;
// this file holds what is particular to schema 3.
import { Event, type Value } from "@tay/core";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as Events from "../../testkit/src/Events.js";
import {
  decodeEvent,
  type EncodedEvent,
  type EventDecodeError,
  encodeEvent,
} from "../src/Event.js";
import { payloadTagOf } from "../src/Payload.js";
import { encodeValue } from "../src/Value.js";

type AnyValue = Value.Value;

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

const encoded = (event: Event.Event): EncodedEvent => {
  const result = encodeEvent(event);
  if (E.isLeft(result)) throw new Error(JSON.stringify(result.left));
  return result.right;
};

const decoded = (type: number, schema: number, payload: Uint8Array): Event.Event => {
  const result = decodeEvent(type, schema, payload);
  if (E.isLeft(result)) throw new Error(JSON.stringify(result.left));
  return result.right;
};

const valueBytes = (value: AnyValue): Uint8Array => {
  const result = encodeValue(value);
  if (E.isLeft(result)) throw new Error(JSON.stringify(result.left));
  return result.right;
};

const schema3 = Event.schema3Tags;

describe("the schema-3 pairs", () => {
  it("are the five pairs EVENTS-V3.md declares, each of schema 3", () => {
    expect(schema3.map((tag) => Event.pairs[tag])).toEqual([
      { type: 1, schema: 3 },
      { type: 20, schema: 3 },
      { type: 24, schema: 3 },
      { type: 13, schema: 3 },
      { type: 7, schema: 3 },
    ]);
    for (const tag of schema3) {
      expect(payloadTagOf(Event.pairs[tag].type, Event.pairs[tag].schema)).toBe(tag);
    }
  });

  it.each(schema3)("%s: decode(encode(event)) is the event, and its bytes re-encode", (tag) => {
    fc.assert(
      fc.property(Events.byTag[tag](), (event) => {
        const { type, schema, payload } = encoded(event);
        const back = decoded(type, schema, payload);
        expect(back).toEqual(event);
        expect(hex(encoded(back).payload)).toBe(hex(payload));
      }),
      { numRuns: 60 },
    );
  });

  it.each(schema3.filter((tag) => tag !== "SnapshotPartV3"))(
    "%s: canonical payload values decode and re-encode to their bytes",
    (tag) => {
      const { type, schema } = Event.pairs[tag];
      const plain = tag as Exclude<Event.EventTag, "Mutation">;
      fc.assert(
        fc.property(Events.payloadValue(plain), (value) => {
          const bytes = valueBytes(value);
          expect(hex(encoded(decoded(type, schema, bytes)).payload)).toBe(hex(bytes));
        }),
        { numRuns: 60 },
      );
    },
  );
});

describe("mutations holding schema-3 events", () => {
  it("round-trip and re-encode byte for byte", () => {
    fc.assert(
      fc.property(Events.mutationV3(), (mutation) => {
        const { payload } = encoded(mutation);
        const back = decoded(8, 1, payload);
        expect(back).toEqual(mutation);
        expect(hex(encoded(back).payload)).toBe(hex(payload));
      }),
      { numRuns: 80 },
    );
  });

  it("refuse a (7,3) snapshot part inside, as they refuse a (7,1)", () => {
    // A valid part, and one whose own fields are wrong: the nesting is the refusal either way.
    for (const part of [
      Event.snapshotPartV3({ part: 0, lastJobId: 0, jobs: [] }),
      Event.snapshotPartV3({ part: -1, lastJobId: 0, jobs: [] }),
    ]) {
      const nested = { _tag: "Mutation", events: [part] } as unknown as Event.Mutation;
      expect(encodeEvent(nested)).toEqual(
        E.left({
          _tag: "SchemaMismatch",
          type: 8,
          schema: 1,
          path: "events[0]",
          reason: "NestedRecord",
          found: "(7,3)",
        }),
      );
    }
  });
});

describe("totality over schema-3 pairs", () => {
  const notDefect = (result: E.Either<EventDecodeError, Event.Event>): boolean =>
    E.isRight(result) || result.left._tag !== "Defect";
  const pair = fc.constantFrom(...schema3.map((tag) => Event.pairs[tag]));

  it("gives a result, never a Defect, for any bytes", () => {
    fc.assert(
      fc.property(pair, fc.uint8Array({ maxLength: 200 }), ({ type, schema }, bytes) => {
        expect(notDefect(decodeEvent(type, schema, bytes))).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it("gives a result for damaged encodings, and whatever decodes is canonical", () => {
    const damaged = fc
      .tuple(
        fc.oneof(...schema3.map((tag) => Events.byTag[tag]())),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.nat(),
      )
      .map(([event, at, flip, cut]) => {
        const { type, schema, payload } = encoded(event);
        const bytes = payload.slice();
        const index = at % bytes.length;
        bytes[index] = (bytes[index] ?? 0) ^ flip;
        return { type, schema, bytes: cut % 4 === 0 ? bytes.subarray(0, index) : bytes };
      });
    fc.assert(
      fc.property(damaged, ({ type, schema, bytes }) => {
        const result = decodeEvent(type, schema, bytes);
        expect(notDefect(result)).toBe(true);
        if (E.isRight(result)) expect(hex(encoded(result.right).payload)).toBe(hex(bytes));
      }),
      { numRuns: 300 },
    );
  });
});

describe("the encoder refuses schema-3 fields outside their kinds", () => {
  const queueState = Event.queueStateSet({
    queue: "mail",
    at: 0,
    paused: false,
    concurrency: null,
    rateLimit: { count: 1, perMs: 1 },
  });
  const refusal = (event: Event.Event) => {
    const result = encodeEvent(event);
    if (E.isRight(result)) throw new Error("accepted");
    return result.left;
  };

  it("names the field of a rate limit out of range", () => {
    expect(refusal({ ...queueState, rateLimit: { count: 0, perMs: 1 } })).toMatchObject({
      type: 24,
      schema: 3,
      path: "rate_limit.count",
      reason: "OutOfRange",
    });
    expect(refusal({ ...queueState, rateLimit: { count: 1, perMs: 0 } })).toMatchObject({
      path: "rate_limit.per_ms",
      reason: "OutOfRange",
    });
  });

  it("names a timezone that is no name and a window of 0", () => {
    const definition: Event.ScheduleDefinitionV3 = {
      queue: "q",
      worker: "w",
      args: null,
      priority: 0,
      maxAttempts: 1,
      everyMs: 1000,
      cron: null,
      overlap: "allow",
      timezone: "",
      catchUp: "once",
      catchUpWindowMs: 0,
    };
    const checkpoint = Event.scheduleCheckpointV3({
      scheduleId: "s",
      definition,
      definitionRevision: 1,
      revision: 1,
      registeredAt: 0,
      nextDueAt: 0,
      lastDueAt: null,
      cancelledAt: null,
      activeJobIds: [],
      membershipComplete: true,
    });
    expect(refusal(checkpoint)).toMatchObject({ path: "definition.timezone" });
    expect(
      refusal({ ...checkpoint, definition: { ...definition, timezone: "UTC" } }),
    ).toMatchObject({ path: "definition.catch_up_window_ms", reason: "OutOfRange" });
  });
});
