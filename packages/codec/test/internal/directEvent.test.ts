// Proves that the direct decoders of the frequent events can only speed a
// verdict up, never change it: whatever they accept, the general decoder (the
// value layer and the declarations of Payload.ts) accepts as the same event,
// and `decodeEvent`'s verdict always equals the general decoder's. It holds
// the two paths against each other over every pair's arbitrary, damaged and
// cut encodings, fields just outside their declared kinds and ranges, key-set
// changes, deep args and mutations, and checks the key lists the direct
// decoders read against the declarations.
import { Event, type Value } from "@tay/core";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as Events from "../../../testkit/src/Events.js";
import * as Values from "../../../testkit/src/Values.js";
import { decodeEvent, encodeEvent } from "../../src/Event.js";
import { decodeEventDirect, directKeys } from "../../src/internal/directEvent.js";
import { decodeEventByValue } from "../../src/internal/eventDecode.js";
import {
  eventPayloadKinds,
  eventToValue,
  jobErrorPayload,
  jobSnapshotPayload,
  jobSnapshotV3Payload,
  type PayloadKindDescriptor,
  payloadPairs,
} from "../../src/Payload.js";
import { encodeValue } from "../../src/Value.js";

type AnyValue = Value.Value;

const encoded = (event: Event.Event) => {
  const result = encodeEvent(event);
  if (E.isLeft(result)) throw new Error(`refused ${event._tag}: ${result.left._tag}`);
  return result.right;
};

const valueBytes = (value: AnyValue): Uint8Array => {
  const result = encodeValue(value);
  if (E.isLeft(result)) throw new Error(`unencodable: ${result.left._tag}`);
  return result.right;
};

const direct = (type: number, schema: number, payload: Uint8Array) =>
  decodeEventDirect(type, schema, payload, 0, payload.length);

/** The pairs the direct decoders read (a mutation: when all its events are among them). */
const directTags = new Set<string>([
  "SnapshotPart",
  "SnapshotPartV3",
  "JobInserted",
  "JobInsertedV3",
  "JobAvailable",
  "JobStarted",
  "JobFinished",
  "JobCancelled",
  "JobRetried",
  "ResultRecorded",
]);

const readDirectly = (event: Event.Event): boolean =>
  event._tag === "Mutation"
    ? event.events.every((inner) => directTags.has(inner._tag))
    : directTags.has(event._tag);

/** Keys of a decoded event, recursively in order: the general decoder's objects, field for field. */
const keyOrder = (item: unknown): unknown => {
  if (Array.isArray(item)) return item.map(keyOrder);
  if (typeof item !== "object" || item === null || item instanceof Map) return null;
  if (item instanceof Uint8Array) return null;
  return Object.entries(item).map(([key, inner]) => [key, keyOrder(inner)]);
};

/**
 * The property every input must have: when the direct decoder accepts, the
 * general decoder accepts the same event (equal, with the same keys in the
 * same order); and `decodeEvent` says exactly what the general decoder says.
 */
const agree = (type: number, schema: number, payload: Uint8Array): void => {
  const fast = direct(type, schema, payload);
  const general = decodeEventByValue(type, schema, payload);
  if (fast !== undefined) {
    expect(E.isRight(general)).toBe(true);
    if (E.isRight(general)) {
      expect(fast).toEqual(general.right);
      expect(keyOrder(fast)).toEqual(keyOrder(general.right));
    }
  }
  expect(decodeEvent(type, schema, payload)).toEqual(general);
};

describe("the key lists", () => {
  const wireKeys = (descriptor: PayloadKindDescriptor): ReadonlyArray<string> =>
    descriptor.kind === "map" ? descriptor.fields.map((field) => field.wire) : [];
  // ASCII keys: code unit order is byte order.
  const sorted = (keys: ReadonlyArray<string>) => [...keys].sort();

  it("are each declaration's wire keys in canonical order", () => {
    const tags = [
      "JobInserted",
      "JobInsertedV3",
      "JobAvailable",
      "JobStarted",
      "JobFinished",
      "JobCancelled",
      "JobRetried",
      "ResultRecorded",
      "SnapshotPart",
      "MutationPayload",
    ] as const;
    for (const tag of tags) {
      expect(directKeys[tag]).toEqual(sorted(wireKeys(eventPayloadKinds[tag].descriptor)));
    }
    const mutation = eventPayloadKinds.MutationPayload.descriptor;
    const events = mutation.kind === "map" ? mutation.fields[0]?.descriptor : undefined;
    const entry = events?.kind === "list" ? events.of : undefined;
    expect(entry).toBeDefined();
    if (entry !== undefined) {
      expect(directKeys.MutationPayloadEntry).toEqual(sorted(wireKeys(entry)));
    }
    expect(directKeys.JobSnapshot).toEqual(sorted(wireKeys(jobSnapshotPayload.descriptor)));
    expect(directKeys.JobError).toEqual(sorted(wireKeys(jobErrorPayload.descriptor)));
    expect(directKeys.JobSnapshotV3).toEqual(sorted(wireKeys(jobSnapshotV3Payload.descriptor)));
  });
});

describe("valid events", () => {
  it("are read directly, as the general decoder reads them, for every direct pair", () => {
    fc.assert(
      fc.property(Events.event(), (event) => {
        const { type, schema, payload } = encoded(event);
        const fast = direct(type, schema, payload);
        // Coverage: the fast path takes every valid payload of its pairs.
        expect(fast !== undefined).toBe(readDirectly(event));
        agree(type, schema, payload);
      }),
      { numRuns: 400 },
    );
  });

  it("of schema 3 are read directly too: (1,3), (7,3), mutations holding (1,3)", () => {
    const events = fc.oneof(
      Events.jobInsertedV3(),
      Events.snapshotPartV3(),
      Events.mutationV3(),
      Events.schema3DomainEvent(),
    );
    fc.assert(
      fc.property(events, (event) => {
        const { type, schema, payload } = encoded(event);
        expect(direct(type, schema, payload) !== undefined).toBe(readDirectly(event));
        agree(type, schema, payload);
      }),
      { numRuns: 400 },
    );
  });

  it("keep tricky strings and values: names at their bounds, big integers, bytes in args", () => {
    const tricky = fc.record({
      queue: fc.constantFrom(...Values.namesAtBound, ...Values.trickyNames),
      args: Values.value({ maxDepth: 4 }),
    });
    fc.assert(
      fc.property(Events.jobInserted(), tricky, (event, { queue, args }) => {
        const { type, schema, payload } = encoded({ ...event, queue, args });
        expect(direct(type, schema, payload)).toBeDefined();
        agree(type, schema, payload);
      }),
      { numRuns: 200 },
    );
  });

  it("read integers at the bounds of each 32-bit half as the general decoder does", () => {
    // A high half of 0, 1, 2 and more: the direct reader handles 0 on its own.
    const bounds = [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 5, 2 ** 33 - 1, 2 ** 33, 2 ** 53 - 1];
    for (const bound of bounds) {
      const event = Event.jobAvailable({ jobId: Math.max(1, bound), at: bound });
      const { type, schema, payload } = encoded(event);
      expect(direct(type, schema, payload), String(bound)).toEqual(event);
      agree(type, schema, payload);
    }
  });

  it("read args nested to the depth limit counted from the payload's root", () => {
    // The payload map is depth 1, so args may nest 63 deep and not 64.
    fc.assert(
      fc.property(Events.jobInserted(), Values.deepValue(63), (event, args) => {
        const { type, schema, payload } = encoded({ ...event, args });
        expect(direct(type, schema, payload)).toBeDefined();
        agree(type, schema, payload);
      }),
      { numRuns: 20 },
    );
    fc.assert(
      fc.property(Events.jobInserted(), Values.deepValue(63), (event, args) => {
        // The encoder refuses depth 65, so the bytes are made by hand: `args`
        // sorts first, its value starts after the map header (5 bytes) and
        // its key (4 + 4), and one more single-item list goes around it.
        const inside = encoded({ ...event, args }).payload;
        const argsAt = 5 + 4 + 4;
        const payload = new Uint8Array(inside.length + 5);
        payload.set(inside.subarray(0, argsAt), 0);
        payload.set([0x07, 0, 0, 0, 1], argsAt);
        payload.set(inside.subarray(argsAt), argsAt + 5);
        expect(direct(1, 1, payload)).toBeUndefined();
        const general = decodeEventByValue(1, 1, payload);
        expect(E.isLeft(general) && general.left).toMatchObject({
          _tag: "EventPayloadInvalid",
          error: { _tag: "DepthExceeded" },
        });
        agree(1, 1, payload);
      }),
      { numRuns: 20 },
    );
  });
});

describe("snapshot parts", () => {
  it("read a job's args nested to the limit counted from the payload's root", () => {
    // payload map (1), jobs (2), the job (3): args may nest 61 deep, not 62.
    const parts = Events.jobSnapshot().map((job) =>
      Event.snapshotPart({ part: 0, lastJobId: job.jobId, jobs: [job] }),
    );
    fc.assert(
      fc.property(parts, Values.deepValue(61), (part, args) => {
        const job = part.jobs[0];
        if (job === undefined) throw new Error("one job");
        const deepest = { ...part, jobs: [{ ...job, args }] };
        const { payload } = encoded(deepest);
        expect(direct(7, 1, payload)).toBeDefined();
        agree(7, 1, payload);
        // One more list around args, by hand (the encoder refuses depth 65):
        // the payload's header (5), "jobs" (4 + 4), the list (5), the job's
        // map (5) and "args" (4 + 4) come first.
        const argsAt = 5 + 8 + 5 + 5 + 8;
        const deeper = new Uint8Array(payload.length + 5);
        deeper.set(payload.subarray(0, argsAt), 0);
        deeper.set([0x07, 0, 0, 0, 1], argsAt);
        deeper.set(payload.subarray(argsAt), argsAt + 5);
        expect(direct(7, 1, deeper)).toBeUndefined();
        const general = decodeEventByValue(7, 1, deeper);
        expect(E.isLeft(general) && general.left).toMatchObject({
          _tag: "EventPayloadInvalid",
          error: { _tag: "DepthExceeded" },
        });
      }),
      { numRuns: 20 },
    );
  });
});

describe("damaged bytes", () => {
  it("are accepted directly only when the general decoder accepts the same event", () => {
    const damaged = fc
      .tuple(
        Events.event(),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom("flip", "cut", "append", "insert"),
      )
      .map(([event, at, byte, how]) => {
        const { type, schema, payload } = encoded(event);
        const index = at % (payload.length + 1);
        const bytes = new Uint8Array(
          payload.length + (how === "append" || how === "insert" ? 1 : 0),
        );
        bytes.set(payload.subarray(0, index), 0);
        if (how === "insert") {
          bytes[index] = byte;
          bytes.set(payload.subarray(index), index + 1);
        } else {
          bytes.set(payload.subarray(index), index);
          if (how === "append") bytes[payload.length] = byte;
          if (how === "flip" && index < payload.length) bytes[index] = (bytes[index] ?? 0) ^ byte;
        }
        return { type, schema, bytes: how === "cut" ? bytes.subarray(0, index) : bytes };
      });
    fc.assert(
      fc.property(damaged, ({ type, schema, bytes }) => agree(type, schema, bytes)),
      { numRuns: 1500 },
    );
  });

  it("agree on any bytes under any direct pair", () => {
    const pair = fc.constantFrom(
      ...[...directTags, "Mutation" as const].map((tag) => {
        const found = Object.entries(payloadPairs).find(([name]) =>
          tag === "Mutation" ? name === "MutationPayload" : name === tag,
        );
        if (found === undefined) throw new Error(tag);
        return found[1];
      }),
    );
    fc.assert(
      fc.property(pair, fc.uint8Array({ maxLength: 120 }), ({ type, schema }, bytes) =>
        agree(type, schema, bytes),
      ),
      { numRuns: 300 },
    );
  });
});

describe("fields outside their declaration", () => {
  /** Values a field of this kind must refuse (for a nullable: its inner kind's, null excepted). */
  const outside = (descriptor: PayloadKindDescriptor): ReadonlyArray<AnyValue> => {
    switch (descriptor.kind) {
      case "integer":
        return [
          descriptor.min - 1,
          descriptor.max === Number.MAX_SAFE_INTEGER ? 2n ** 53n : descriptor.max + 1,
          -(2n ** 60n),
          1.5,
          "1",
          true,
        ];
      case "name":
        return ["", "é".repeat(128), 7, null];
      case "text":
        return ["x".repeat(65_536), 7, new Uint8Array(1)];
      case "enum":
        return ["nope", "", 1, null];
      case "nullable":
        return outside(descriptor.of).filter((item) => item !== null);
      default:
        return [];
    }
  };

  it("are refused by both decoders, field by field, for every direct pair", () => {
    const events = fc.oneof(
      Events.jobInserted(),
      Events.jobAvailable(),
      Events.jobStarted(),
      Events.jobFinished(),
      Events.jobCancelled(),
      Events.jobRetried(),
      Events.resultRecorded(),
      Events.snapshotPart(),
      Events.jobInsertedV3(),
      Events.snapshotPartV3(),
    );
    fc.assert(
      fc.property(events, (event) => {
        const { type, schema } = payloadPairs[event._tag];
        const descriptor = eventPayloadKinds[event._tag].descriptor;
        if (descriptor.kind !== "map") throw new Error("a pair's payload is a map");
        const value = eventToValue(event);
        for (const field of descriptor.fields) {
          for (const wrong of outside(field.descriptor)) {
            const changed = new Map(value);
            changed.set(field.wire, wrong);
            const payload = valueBytes(changed);
            expect(direct(type, schema, payload)).toBeUndefined();
            expect(E.isLeft(decodeEventByValue(type, schema, payload))).toBe(true);
            agree(type, schema, payload);
          }
          const missing = new Map(value);
          missing.delete(field.wire);
          expect(direct(type, schema, valueBytes(missing))).toBeUndefined();
          agree(type, schema, valueBytes(missing));
        }
        const extra = new Map(value);
        extra.set("zz_extra", 1);
        expect(direct(type, schema, valueBytes(extra))).toBeUndefined();
        agree(type, schema, valueBytes(extra));
        // A key that sorts first, before `args` and `at`.
        const first = new Map(value);
        first.set("a", 1);
        expect(direct(type, schema, valueBytes(first))).toBeUndefined();
        agree(type, schema, valueBytes(first));
      }),
      { numRuns: 60 },
    );
  });

  it("are refused by both decoders inside a snapshot part's jobs and their errors, (7,1) and (7,3)", () => {
    const errorDescriptor = jobErrorPayload.descriptor;
    if (errorDescriptor.kind !== "map") throw new Error("maps");
    const withErrors = <P extends Event.AnySnapshotPart>(parts: fc.Arbitrary<P>) =>
      parts.filter((part) => part.jobs.some((job) => job.errors.length > 0));
    const parts = fc.oneof(
      withErrors(Events.snapshotPart()).map((part) => ({
        part,
        schema: 1,
        of: jobSnapshotPayload,
      })),
      withErrors(Events.snapshotPartV3()).map((part) => ({
        part,
        schema: 3,
        of: jobSnapshotV3Payload,
      })),
    );
    fc.assert(
      fc.property(parts, fc.nat(), ({ part, schema, of }, pick) => {
        const jobDescriptor = of.descriptor;
        if (jobDescriptor.kind !== "map") throw new Error("a job is a map");
        const value = eventToValue(part);
        const jobs = value.get("jobs");
        if (!Array.isArray(jobs)) throw new Error("jobs is a list");
        const at = part.jobs.findIndex((job) => job.errors.length > 0);
        const job = jobs[at];
        if (!(job instanceof Map)) throw new Error("a job is a map");
        const withJob = (changed: Map<string, AnyValue>): Uint8Array => {
          const list = [...jobs];
          list[at] = changed;
          return valueBytes(new Map(value).set("jobs", list));
        };
        const refused = (payload: Uint8Array): void => {
          expect(direct(7, schema, payload)).toBeUndefined();
          expect(E.isLeft(decodeEventByValue(7, schema, payload))).toBe(true);
          agree(7, schema, payload);
        };
        const field = jobDescriptor.fields[pick % jobDescriptor.fields.length];
        if (field === undefined) throw new Error("a field");
        for (const wrong of outside(field.descriptor)) {
          refused(withJob(new Map(job).set(field.wire, wrong)));
        }
        const missing = new Map(job);
        missing.delete(field.wire);
        refused(withJob(missing));
        refused(withJob(new Map(job).set("zz_extra", null)));
        const errors = job.get("errors");
        const first = Array.isArray(errors) ? errors[0] : undefined;
        if (!(first instanceof Map)) throw new Error("an error is a map");
        for (const errorField of errorDescriptor.fields) {
          for (const wrong of outside(errorField.descriptor)) {
            const error = new Map(first).set(errorField.wire, wrong);
            refused(withJob(new Map(job).set("errors", [error])));
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it("are read by the general decoder when a pair's value is not a map at all", () => {
    for (const value of [null, 1, "x", [], new Map()] satisfies ReadonlyArray<AnyValue>) {
      const payload = valueBytes(value);
      for (const { type, schema } of Object.values(payloadPairs)) {
        expect(direct(type, schema, payload)).toBeUndefined();
        agree(type, schema, payload);
      }
    }
  });
});

describe("mutations", () => {
  it("are read directly only when every inner event is a direct pair", () => {
    const mixed = fc
      .tuple(
        fc.array(Events.jobEvent(), { minLength: 1, maxLength: 3 }),
        Events.occurrenceAdvanced(),
        fc.nat(),
      )
      .map(([events, other, at]) => {
        const members: Event.DomainEvent[] = [...events];
        members.splice(at % (members.length + 1), 0, other);
        return Event.mutation(members);
      });
    fc.assert(
      fc.property(mixed, (mutation) => {
        const { type, schema, payload } = encoded(mutation);
        expect(direct(type, schema, payload)).toBeUndefined();
        expect(E.isRight(decodeEventByValue(type, schema, payload))).toBe(true);
        agree(type, schema, payload);
      }),
      { numRuns: 50 },
    );
  });

  it("leave empty, nested and unknown inner events to the general decoder's refusal", () => {
    const inner = encoded(Event.jobAvailable({ jobId: 3, at: 5 }));
    const envelope = (entries: ReadonlyArray<AnyValue>): Uint8Array =>
      valueBytes(new Map([["events", entries]]));
    const entry = (type: number, schema: number, payload: Uint8Array): AnyValue =>
      new Map<string, AnyValue>([
        ["payload", payload],
        ["schema", schema],
        ["type", type],
      ]);
    for (const payload of [
      envelope([]),
      envelope([entry(8, 1, inner.payload)]),
      envelope([entry(7, 1, inner.payload)]),
      envelope([entry(9, 1, inner.payload)]),
      envelope([entry(2, 1, inner.payload), entry(3, 1, inner.payload)]),
      envelope([entry(2, 1, new Uint8Array([...inner.payload, 0]))]),
    ]) {
      expect(direct(8, 1, payload)).toBeUndefined();
      expect(E.isLeft(decodeEventByValue(8, 1, payload))).toBe(true);
      agree(8, 1, payload);
    }
    const good = envelope([entry(2, 1, inner.payload), entry(2, 1, inner.payload)]);
    expect(direct(8, 1, good)).toEqual(
      Event.mutation([
        Event.jobAvailable({ jobId: 3, at: 5 }),
        Event.jobAvailable({ jobId: 3, at: 5 }),
      ]),
    );
    agree(8, 1, good);
  });
});
