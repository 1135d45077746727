// Proves that events survive encode/decode unchanged, that canonical payload
// bytes re-encode to themselves, and that the encoder refuses exactly what
// the decoder refuses, so nothing unreadable is ever written. It runs
// round-trip and re-encode properties over every pair's arbitrary, the
// FORMAT.md record vector, hand-made refusals, mutations with bad inner
// events, and arbitrary or damaged bytes that must never throw or reach the
// Defect guard; and that decodeEventAt, reading a payload in place inside a
// larger buffer, gives decodeEvent's verdict on its copy.
import { Event, Value } from "@tay/core";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as Events from "../../testkit/src/Events.js";
import * as Values from "../../testkit/src/Values.js";
import {
  appendEventRecord,
  decodeEvent,
  decodeEventAt,
  type EncodedEvent,
  type EventDecodeError,
  type EventEncodeError,
  encodeEvent,
  eventPayloadBytesMax,
} from "../src/Event.js";
import { eventFromValue, payloadPairs } from "../src/Payload.js";
import { decodeRecord, encodeRecord, recordBuffer } from "../src/Record.js";
import { decodeValue, encodeValue } from "../src/Value.js";

type AnyValue = Value.Value;

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const fromHex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, "hex"));

const encoded = (event: Event.Event): EncodedEvent => {
  const result = encodeEvent(event);
  if (E.isLeft(result)) throw new Error(`refused: ${JSON.stringify(result.left, replacer)}`);
  return result.right;
};

const decoded = (type: number, schema: number, payload: Uint8Array): Event.Event => {
  const result = decodeEvent(type, schema, payload);
  if (E.isLeft(result)) throw new Error(`refused: ${JSON.stringify(result.left, replacer)}`);
  return result.right;
};

const encodeRefusal = (event: Event.Event): EventEncodeError => {
  const result = encodeEvent(event);
  if (E.isRight(result)) throw new Error(`accepted ${event._tag}`);
  return result.left;
};

const decodeRefusal = (type: number, schema: number, payload: Uint8Array): EventDecodeError => {
  const result = decodeEvent(type, schema, payload);
  if (E.isRight(result)) throw new Error(`accepted ${result.right._tag}`);
  return result.left;
};

const valueBytes = (value: AnyValue): Uint8Array => {
  const result = encodeValue(value);
  if (E.isLeft(result)) throw new Error(`unencodable: ${result.left._tag}`);
  return result.right;
};

// JSON for messages: bigints and bytes have no JSON form.
const replacer = (_key: string, item: unknown): unknown =>
  typeof item === "bigint" ? `${item}n` : item instanceof Uint8Array ? hex(item) : item;

const time = 1_764_460_800_000;

const inserted = Event.jobInserted({
  jobId: 1001,
  queue: "mailers",
  worker: "SendWelcomeEmail",
  args: new Map<string, AnyValue>([
    ["customer_id", 48_213],
    ["email", "ada@example.com"],
  ]),
  priority: 2,
  maxAttempts: 25,
  scheduledAt: time,
  insertedAt: time,
});

const checkpoint = Event.scheduleCheckpoint({
  scheduleId: "nightly-digest",
  definition: {
    queue: "reports",
    worker: "NightlyDigest",
    args: null,
    priority: 5,
    maxAttempts: 3,
    everyMs: 86_400_000,
    cron: null,
    overlap: "skip",
  },
  definitionRevision: 1,
  revision: 1,
  registeredAt: time,
  nextDueAt: time + 86_400_000,
  lastDueAt: null,
  cancelledAt: null,
  activeJobIds: [1001, 1004],
  membershipComplete: true,
});

const tags = Event.eventTags;
const plainTags = tags.filter(
  (tag): tag is Exclude<Event.EventTag, "Mutation"> => tag !== "Mutation",
);

describe("round trip", () => {
  it.each(tags)("%s: decode(encode(event)) is the event", (tag) => {
    fc.assert(
      fc.property(Events.byTag[tag](), (event) => {
        const { type, schema, payload } = encoded(event);
        expect({ type, schema }).toEqual(Event.pairs[tag]);
        expect(decoded(type, schema, payload)).toEqual(event);
      }),
      { numRuns: 40 },
    );
  });

  it("keeps big and tricky values in args and results", () => {
    const args = new Map<string, AnyValue>([
      ["__proto__", [2n ** 62n, -(2n ** 63n), 0.1, new Uint8Array([0, 255])]],
      ["", "😀"],
    ]);
    const event = { ...inserted, args };
    const { payload } = encoded(event);
    const back = decoded(1, 1, payload);
    expect(back).toEqual(event);
    expect(back._tag === "JobInserted" && Value.equals(back.args, args)).toBe(true);
  });
});

describe("canonical re-encode", () => {
  it.each(plainTags)("%s: canonical payload bytes decode and re-encode to themselves", (tag) => {
    const { type, schema } = Event.pairs[tag];
    fc.assert(
      fc.property(Events.payloadValue(tag), (value) => {
        const bytes = valueBytes(value);
        const event = decoded(type, schema, bytes);
        expect(hex(encoded(event).payload)).toBe(hex(bytes));
      }),
      { numRuns: 40 },
    );
  });

  it("Mutation: encoded bytes decode and re-encode to themselves", () => {
    fc.assert(
      fc.property(Events.mutation(), (mutation) => {
        const { payload } = encoded(mutation);
        expect(hex(encoded(decoded(8, 1, payload)).payload)).toBe(hex(payload));
      }),
      { numRuns: 40 },
    );
  });
});

describe("FORMAT.md record test vector", () => {
  const vector =
    "54415900010100010000000000000001000000a5d35091c108000000080000000461726773000000000b696e7365727465645f6174030000000000000000000000066a6f625f69640300000000000000010000000c6d61785f617474656d707473030000000000000001000000087072696f72697479030000000000000000000000057175657565050000000764656661756c740000000c7363686564756c65645f617403000000000000000000000006776f726b657205000000015794d8a272";
  const expected = Event.jobInserted({
    jobId: 1,
    queue: "default",
    worker: "W",
    args: null,
    priority: 0,
    maxAttempts: 1,
    scheduledAt: 0,
    insertedAt: 0,
  });

  it("decodes to the expected JobInserted and re-encodes byte for byte", () => {
    const record = decodeRecord(fromHex(vector), 0);
    if (record._tag !== "Record") throw new Error(record._tag);
    const { type, schema, sequence, payload } = record.record;
    expect(decoded(type, schema, payload)).toEqual(expected);
    const again = encoded(expected);
    expect(hex(again.payload)).toBe(hex(payload));
    const framed = encodeRecord({ ...again, sequence });
    expect(E.isRight(framed) && hex(framed.right)).toBe(vector);
  });
});

describe("the encoder refuses what the decoder refuses", () => {
  it("refuses out-of-range fields with the decoder's error", () => {
    expect(encodeRefusal({ ...inserted, queue: "q".repeat(300) })).toEqual({
      _tag: "SchemaMismatch",
      type: 1,
      schema: 1,
      path: "queue",
      reason: "OutOfRange",
      found: "300 bytes",
    });
    expect(encodeRefusal({ ...inserted, priority: 12 })).toMatchObject({
      path: "priority",
      reason: "OutOfRange",
      found: "12",
    });
    expect(encodeRefusal({ ...inserted, jobId: 0 })).toMatchObject({ path: "job_id" });
    expect(encodeRefusal({ ...inserted, jobId: 2 ** 60 })).toMatchObject({
      path: "job_id",
      reason: "OutOfRange",
    });
    expect(encodeRefusal({ ...inserted, maxAttempts: 1.5 })).toMatchObject({
      path: "max_attempts",
      reason: "WrongKind",
      found: "float",
    });
    const smallBigint: unknown = { ...inserted, priority: 5n };
    expect(encodeRefusal(smallBigint as Event.Event)).toMatchObject({
      path: "priority",
      reason: "WrongKind",
      found: "bigint",
    });
    expect(encodeRefusal({ ...inserted, scheduledAt: Number.NaN })).toMatchObject({
      path: "scheduled_at",
      reason: "WrongKind",
    });
  });

  it("refuses unsorted or repeated active_job_ids", () => {
    expect(encodeRefusal({ ...checkpoint, activeJobIds: [1004, 1001] })).toMatchObject({
      _tag: "SchemaMismatch",
      type: 13,
      schema: 2,
      path: "active_job_ids[1]",
      reason: "NotAscending",
      found: "1004 then 1001",
    });
    expect(encodeRefusal({ ...checkpoint, activeJobIds: [5, 5] })).toMatchObject({
      reason: "NotAscending",
    });
  });

  it("refuses a definition with both or neither of every_ms and cron", () => {
    const both = { ...checkpoint.definition, cron: "0 3 * * *" };
    expect(encodeRefusal({ ...checkpoint, definition: both })).toMatchObject({
      path: "definition",
      reason: "BothOrNeitherSet",
      found: "both",
    });
    const neither = { ...checkpoint.definition, everyMs: null };
    expect(encodeRefusal({ ...checkpoint, definition: neither })).toMatchObject({
      path: "definition",
      reason: "BothOrNeitherSet",
      found: "neither",
    });
  });

  it("refuses a lone surrogate in a name, where the bytes would not read back", () => {
    expect(encodeRefusal({ ...inserted, worker: "W\ud800" })).toMatchObject({
      path: "worker",
      reason: "IllFormedString",
      found: "lone surrogate at 1",
    });
  });

  it("refuses args the value encoder refuses", () => {
    const error = encodeRefusal({
      ...inserted,
      args: new Map([["ratio", Number.POSITIVE_INFINITY]]),
    });
    expect(error).toMatchObject({
      _tag: "EventPayloadUnencodable",
      type: 1,
      schema: 1,
      path: "",
      error: { _tag: "NonFiniteNumber", path: ["args", "ratio"] },
    });
    expect(encodeRefusal({ ...inserted, args: 2n ** 64n })).toMatchObject({
      _tag: "EventPayloadUnencodable",
      error: { _tag: "IntegerOutOfRange" },
    });
  });

  it("refuses a payload no record can hold", () => {
    const big = new Uint8Array(eventPayloadBytesMax);
    expect(encodeRefusal(Event.resultRecorded({ jobId: 1, result: big, at: 0 }))).toMatchObject({
      _tag: "EventPayloadTooLarge",
      bytesMax: eventPayloadBytesMax,
    });
  });

  it("never writes an event that does not read back as itself", () => {
    // Typed events with one field replaced by any value, as untyped code
    // could pass: whatever the encoder accepts must decode to the same event.
    const damaged = fc
      .tuple(Events.domainEvent(), fc.nat(), Values.value({ maxDepth: 2 }))
      .map(([event, index, item]) => {
        const keys = Object.keys(event).filter((key) => key !== "_tag");
        const key = keys[index % keys.length] ?? "_tag";
        return { ...event, [key]: item };
      });
    let refused = 0;
    fc.assert(
      fc.property(damaged, (event) => {
        const result = encodeEvent(event);
        if (E.isLeft(result)) {
          refused += 1;
          expect(result.left._tag).not.toBe("Defect");
          return;
        }
        const { type, schema, payload } = result.right;
        expect(decoded(type, schema, payload)).toEqual(event);
      }),
      { numRuns: 300 },
    );
    expect(refused).toBeGreaterThan(0);
  });
});

describe("mutations", () => {
  it("carries its events as encoded inner payloads", () => {
    const mutation = Event.mutation([inserted, checkpoint]);
    const { type, schema, payload } = encoded(mutation);
    expect({ type, schema }).toEqual({ type: 8, schema: 1 });
    const value = decodeValue(payload);
    const inner = E.isRight(value) ? eventFromValue(8, 1, value.right) : value;
    expect(inner).toMatchObject({
      _tag: "Right",
      right: {
        _tag: "MutationPayload",
        events: [
          { type: 1, schema: 1, payload: encoded(inserted).payload },
          { type: 13, schema: 2, payload: encoded(checkpoint).payload },
        ],
      },
    });
    expect(decoded(8, 1, payload)).toEqual(mutation);
  });

  it("refuses an empty mutation, and nested records, on both sides", () => {
    expect(encodeRefusal(Event.mutation([]))).toEqual({
      _tag: "SchemaMismatch",
      type: 8,
      schema: 1,
      path: "events",
      reason: "EmptyMutation",
      found: "0 items",
    });
    const part = Event.snapshotPart({ part: 0, lastJobId: 0, jobs: [] });
    const nested: ReadonlyArray<unknown> = [inserted, part];
    expect(encodeRefusal({ _tag: "Mutation", events: nested } as Event.Mutation)).toEqual({
      _tag: "SchemaMismatch",
      type: 8,
      schema: 1,
      path: "events[1]",
      reason: "NestedRecord",
      found: "(7,1)",
    });
    const inMutation: ReadonlyArray<unknown> = [Event.mutation([inserted])];
    expect(encodeRefusal({ _tag: "Mutation", events: inMutation } as Event.Mutation)).toMatchObject(
      { path: "events[0]", reason: "NestedRecord", found: "(8,1)" },
    );
    const emptyBytes = valueBytes(new Map([["events", []]]));
    expect(decodeRefusal(8, 1, emptyBytes)).toMatchObject({ reason: "EmptyMutation" });
  });

  it("locates a bad inner event by its index, with the inner pair", () => {
    const error = encodeRefusal(Event.mutation([inserted, { ...inserted, priority: 12 }]));
    expect(error).toEqual({
      _tag: "SchemaMismatch",
      type: 1,
      schema: 1,
      path: "events[1].payload.priority",
      reason: "OutOfRange",
      found: "12",
    });
    const bad = new Map<string, AnyValue>([
      [
        "events",
        [
          innerEntry(
            2,
            1,
            valueBytes(
              new Map<string, AnyValue>([
                ["at", 5],
                ["job_id", 0],
              ]),
            ),
          ),
        ],
      ],
    ]);
    expect(decodeRefusal(8, 1, valueBytes(bad))).toEqual({
      _tag: "SchemaMismatch",
      type: 2,
      schema: 1,
      path: "events[0].payload.job_id",
      reason: "OutOfRange",
      found: "0",
    });
  });

  it("reports inner payload bytes that are not one canonical value", () => {
    const bad = new Map([["events", [innerEntry(2, 1, Uint8Array.of(0x08, 0, 0))]]]);
    expect(decodeRefusal(8, 1, valueBytes(bad))).toMatchObject({
      _tag: "EventPayloadInvalid",
      type: 2,
      schema: 1,
      path: "events[0].payload",
      error: { _tag: "UnexpectedEnd" },
    });
  });

  it("reports an inner integer beyond 2^53-1 with its path", () => {
    const payload = valueBytes(
      new Map<string, AnyValue>([
        ["at", 2n ** 53n],
        ["job_id", 1],
      ]),
    );
    const bad = new Map([["events", [innerEntry(2, 1, payload)]]]);
    expect(decodeRefusal(8, 1, valueBytes(bad))).toEqual({
      _tag: "BeyondSafeInteger",
      type: 2,
      schema: 1,
      path: "events[0].payload.at",
      found: "9007199254740992",
    });
  });
});

function innerEntry(type: number, schema: number, payload: Uint8Array): AnyValue {
  return new Map<string, AnyValue>([
    ["payload", payload],
    ["schema", schema],
    ["type", type],
  ]);
}

describe("pairs", () => {
  it("refuses an unknown pair before reading its bytes", () => {
    const { payload } = encoded(inserted);
    for (const [type, schema] of [
      [0, 1],
      [14, 2],
      [1, 2],
      [9, 1],
      [255, 1],
      [7, 0],
    ] as const) {
      expect(decodeRefusal(type, schema, payload)).toEqual({
        _tag: "UnknownEvent",
        type,
        schema,
        path: "",
      });
      // Even bytes that are no value at all: the pair is judged first.
      expect(decodeRefusal(type, schema, Uint8Array.of(0xff))).toMatchObject({
        _tag: "UnknownEvent",
      });
    }
  });

  it("refuses a payload of a known pair that is not one canonical value", () => {
    const { payload } = encoded(inserted);
    expect(decodeRefusal(1, 1, Uint8Array.of(...payload, 0))).toMatchObject({
      _tag: "EventPayloadInvalid",
      type: 1,
      schema: 1,
      path: "",
      error: { _tag: "TrailingBytes" },
    });
    expect(decodeRefusal(1, 1, new Uint8Array())).toMatchObject({
      _tag: "EventPayloadInvalid",
      error: { _tag: "UnexpectedEnd" },
    });
  });

  it("decodes the payload of one pair as another only if the keys match", () => {
    const { payload } = encoded(Event.jobAvailable({ jobId: 1, at: 2 }));
    expect(decodeRefusal(1, 1, payload)).toMatchObject({ reason: "MissingKey" });
    expect(decodeRefusal(5, 1, payload)).toMatchObject({ reason: "MissingKey", path: "reason" });
  });
});

describe("totality", () => {
  const pair = fc.oneof(
    fc.constantFrom(...Object.values(payloadPairs)),
    fc.record({ type: fc.integer({ min: 0, max: 255 }), schema: fc.integer({ min: 0, max: 255 }) }),
  );
  const notDefect = (result: E.Either<EventDecodeError, Event.Event>): boolean =>
    E.isRight(result) || result.left._tag !== "Defect";

  it("gives a result, never an exception or a Defect, for any bytes and pair", () => {
    fc.assert(
      fc.property(pair, fc.uint8Array({ maxLength: 200 }), ({ type, schema }, bytes) => {
        expect(notDefect(decodeEvent(type, schema, bytes))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("gives a result for any canonical value under any pair", () => {
    fc.assert(
      fc.property(pair, Values.value(), ({ type, schema }, value) => {
        expect(notDefect(decodeEvent(type, schema, valueBytes(value)))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("gives a result for damaged encodings of real events", () => {
    const damaged = fc
      .tuple(Events.event(), fc.nat(), fc.integer({ min: 1, max: 255 }), fc.nat())
      .map(([event, at, flip, cut]) => {
        const { type, schema, payload } = encoded(event);
        const bytes = payload.slice();
        const index = at % bytes.length;
        bytes[index] = (bytes[index] ?? 0) ^ flip;
        return {
          type,
          schema,
          bytes: cut % 4 === 0 ? bytes.subarray(0, at % bytes.length) : bytes,
        };
      });
    fc.assert(
      fc.property(damaged, ({ type, schema, bytes }) => {
        const result = decodeEvent(type, schema, bytes);
        expect(notDefect(result)).toBe(true);
        // Whatever still decodes is canonical: it re-encodes to the same bytes.
        if (E.isRight(result)) expect(hex(encoded(result.right).payload)).toBe(hex(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it("decodes a payload in place inside a larger buffer as decodeEvent decodes its copy", () => {
    const placed = fc
      .tuple(Events.event(), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(), fc.nat(16))
      .map(([event, at, flip, cut, margin]) => {
        const { type, schema, payload } = encoded(event);
        const bytes = payload.slice();
        // A third of the cases damaged (flipped or cut), the rest intact.
        if (cut % 3 === 1) bytes[at % bytes.length] = (bytes[at % bytes.length] ?? 0) ^ flip;
        const kept = cut % 3 === 2 ? bytes.subarray(0, at % (bytes.length + 1)) : bytes;
        const buffer = new Uint8Array(margin + kept.length + margin).fill(0xa5);
        buffer.set(kept, margin);
        return { type, schema, kept, buffer, margin };
      });
    fc.assert(
      fc.property(placed, ({ type, schema, kept, buffer, margin }) => {
        const inPlace = decodeEventAt(type, schema, buffer, margin, margin + kept.length);
        expect(inPlace).toEqual(decodeEvent(type, schema, kept.slice()));
      }),
      { numRuns: 400 },
    );
    expect(() => decodeEventAt(1, 1, new Uint8Array(4), 2, 5)).toThrow(RangeError);
    expect(() => decodeEventAt(1, 1, new Uint8Array(4), 3, 2)).toThrow(RangeError);
  });

  it("turns an exception from a caller's broken event into a Defect, not a throw", () => {
    // Untyped callers only: the type forbids these, and the guard catches them.
    const throwing: unknown = {
      ...inserted,
      get queue(): string {
        throw new Error("boom");
      },
    };
    expect(encodeRefusal(throwing as Event.Event)).toEqual({
      _tag: "Defect",
      type: 1,
      schema: 1,
      message: "Error: boom",
    });
    expect(encodeRefusal(null as unknown as Event.Event)).toMatchObject({ _tag: "Defect" });
    // Shapes that merely break the type are refused as what they are.
    const misshapen: unknown = { ...checkpoint, definition: 5, activeJobIds: "1" };
    expect(encodeRefusal(misshapen as Event.Event)).toMatchObject({
      _tag: "SchemaMismatch",
      path: "definition",
      reason: "WrongKind",
      found: "integer",
    });
    const missing: unknown = { ...inserted, queue: undefined };
    expect(encodeRefusal(missing as Event.Event)).toMatchObject({
      path: "queue",
      reason: "MissingKey",
    });
    const untagged: unknown = { ...inserted, _tag: "toString" };
    expect(encodeRefusal(untagged as Event.Event)).toMatchObject({ _tag: "UnknownEvent" });
  });
});

describe("appendEventRecord", () => {
  it("frames the bytes encodeEvent then encodeRecord give, one after another in a reused buffer", () => {
    // A small first buffer: appends grow it and keep what it held.
    const buffer = recordBuffer(16);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(Events.event(), fc.integer({ min: 1, max: 2 ** 40 })), {
          maxLength: 6,
        }),
        fc.boolean(),
        (events, reuse) => {
          if (!reuse) buffer.length = 0;
          const start = buffer.length;
          const expected: Array<Uint8Array> = [];
          for (const [event, sequence] of events) {
            const at = appendEventRecord(buffer, event, sequence);
            const { type, schema, payload } = encoded(event);
            const framed = encodeRecord({ type, schema, sequence, payload });
            if (E.isLeft(at) || E.isLeft(framed)) throw new Error("refused");
            expect(at.right).toBe(start + expected.reduce((sum, bytes) => sum + bytes.length, 0));
            expected.push(framed.right);
          }
          const all = Buffer.concat(expected);
          expect(hex(buffer.bytes.subarray(start, buffer.length))).toBe(hex(all));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("appends nothing for an event or a sequence it refuses, with encodeEvent's or the record's reason", () => {
    const buffer = recordBuffer();
    const good = appendEventRecord(buffer, Event.jobAvailable({ jobId: 1, at: 0 }), 1);
    expect(E.isRight(good)).toBe(true);
    const length = buffer.length;
    const before = hex(buffer.bytes.subarray(0, length));
    const bad = Event.jobAvailable({ jobId: -1, at: 0 });
    const refusal = encodeEvent(bad);
    expect(E.isLeft(refusal)).toBe(true);
    expect(appendEventRecord(buffer, bad, 2)).toEqual(refusal);
    const badSequence = appendEventRecord(buffer, Event.jobAvailable({ jobId: 2, at: 0 }), 0);
    expect(badSequence).toEqual(
      E.left({ _tag: "InvalidRecordField", field: "sequence", found: 0, allowed: "1..2^53-1" }),
    );
    expect(buffer.length).toBe(length);
    expect(hex(buffer.bytes.subarray(0, length))).toBe(before);
  });
});
