// Proves that the direct encoder of the frequent events can only speed a
// verdict up, never change it: whatever it accepts, the general encoder
// accepts as exactly the same bytes, `encodeEvent` always says what the
// general encoder says, and every valid job event or mutation of them takes
// the fast path. It holds the two paths against each other over every pair's
// arbitrary events, each field replaced by values around and outside its kind
// and range, mutations, payloads at the record limit and untyped inputs.
import { Event, type Value } from "@tay/core";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as Events from "../../../testkit/src/Events.js";
import * as Values from "../../../testkit/src/Values.js";
import { type EncodedEvent, eventPayloadBytesMax } from "../../src/Event.js";
import { encodeEvent } from "../../src/index.js";
import { encodeEventDirect } from "../../src/internal/directEncode.js";
import { encodeEventByValue, guardEncode } from "../../src/internal/eventEncode.js";

type AnyValue = Value.Value;

/** The general encoder, with `encodeEvent`'s guard around it. */
const byValue = (event: Event.Event) => guardEncode(event, encodeEventByValue);

/** The tags the direct encoder writes (a mutation: when all its events are among them). */
const directTags = new Set<string>([
  "JobInserted",
  "JobInsertedV3",
  "JobAvailable",
  "JobStarted",
  "JobFinished",
  "JobCancelled",
  "JobRetried",
  "ResultRecorded",
  "SnapshotPart",
  "SnapshotPartV3",
]);

const writtenDirectly = (event: Event.Event): boolean =>
  event._tag === "Mutation"
    ? event.events.every((inner) => directTags.has(inner._tag))
    : directTags.has(event._tag);

/**
 * An encoding as a short comparable description: its pair, length and the
 * first differing byte against a reference, so a mismatch in a 16 MiB payload
 * reports in a line rather than a diff of the whole array.
 */
const described = ({ type, schema, payload }: EncodedEvent) => ({
  type,
  schema,
  length: payload.length,
  bytes: payload.length <= 256 ? Array.from(payload) : digest(payload),
});

/** FNV-1a over all the bytes: equal payloads, equal digests. */
const digest = (bytes: Uint8Array): number => {
  let hash = 0x811c9dc5;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
};

/**
 * The property every input must have: when the direct encoder accepts, the
 * general encoder accepts with the same pair and bytes; and `encodeEvent`
 * says exactly what the general encoder says. Returns whether the direct
 * encoder accepted.
 */
const agree = (event: Event.Event): boolean => {
  const direct = encodeEventDirect(event);
  const general = byValue(event);
  if (direct !== undefined) {
    expect(E.isRight(general)).toBe(true);
    if (E.isRight(general)) expect(described(direct)).toEqual(described(general.right));
  }
  const result = encodeEvent(event);
  if (E.isRight(result) && E.isRight(general)) {
    expect(described(result.right)).toEqual(described(general.right));
  } else {
    expect(result).toEqual(general);
  }
  return direct !== undefined;
};

/** `agree`, for an event the general encoder refuses: so must the direct one. */
const refused = (event: Event.Event): void => {
  expect(E.isLeft(byValue(event))).toBe(true);
  // Not `toBeUndefined`: a failure would print a 16 MiB payload.
  expect(encodeEventDirect(event) === undefined).toBe(true);
  agree(event);
};

/**
 * Values around every field kind of the direct pairs: ranges' bounds and
 * one past them, other kinds, bigints, non-finite and fractional numbers,
 * names and texts at and past their byte bounds, lone surrogates, the
 * enumeration members and non-members, non-values.
 */
const aroundFields: ReadonlyArray<unknown> = [
  undefined,
  null,
  -1,
  -0,
  0,
  1,
  1.5,
  9,
  10,
  1000,
  1001,
  Number.MAX_SAFE_INTEGER,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  5n,
  2n ** 53n,
  -(2n ** 60n),
  2n ** 64n,
  true,
  "",
  "x",
  "7",
  `${"é".repeat(127)}x`,
  "é".repeat(128),
  "x".repeat(255),
  "x".repeat(256),
  "\u{1F600}".repeat(64),
  "x".repeat(65_535),
  "x".repeat(65_536),
  "é".repeat(32_768),
  "\ud800",
  "a\udc00b",
  "completed",
  "discarded",
  "nope",
  new Uint8Array(2),
  [],
  [1, "\ud800"],
  new Map<string, AnyValue>([["k", 1]]),
  new Map<string, AnyValue>([["\udc00", 1]]),
  {},
  () => 1,
  Symbol("s"),
];

/** `event` with its property `key` replaced by `item`, as untyped code could pass it. */
const withField = <Some extends Event.Event>(event: Some, key: string, item: unknown): Some => ({
  ...event,
  [key]: item,
});

/** A mutation of anything, as a caller without types could build one. */
const untypedMutation = (events: ReadonlyArray<unknown>): Event.Mutation =>
  // Deliberately ill-typed input: what the encoders must survive.
  ({ _tag: "Mutation", events }) as Event.Mutation;

const fieldsOf = (event: Event.Event): ReadonlyArray<string> =>
  Object.keys(event).filter((key) => key !== "_tag");

const directEvents = fc.oneof(
  Events.jobInserted(),
  Events.jobInsertedV3(),
  Events.jobAvailable(),
  Events.jobStarted(),
  Events.jobFinished(),
  Events.jobCancelled(),
  Events.jobRetried(),
  Events.resultRecorded(),
);

describe("valid events", () => {
  it("are written directly, as the general encoder writes them, for every direct pair", () => {
    fc.assert(
      fc.property(Events.event(), (event) => {
        // Coverage: the fast path takes every valid event of its pairs.
        expect(agree(event)).toBe(writtenDirectly(event));
      }),
      { numRuns: 400 },
    );
  });

  it("are written directly for schema-3 inserts (1,3), alone and in mutations", () => {
    const v3 = fc.oneof(
      Events.jobInsertedV3(),
      fc.array(Events.jobInsertedV3(), { minLength: 1, maxLength: 3 }).map(Event.mutation),
    );
    fc.assert(
      fc.property(v3, (event) => {
        expect(agree(event)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("write a (1,3) whose timeout_ms or unique_period_ms is null (one constant run each) as the general encoder does", () => {
    // Each of the two nullable ids null or not, in every combination: the
    // direct writer takes a constant run of key, null, key for a null one.
    const nullableId = fc.option(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), {
      nil: null,
    });
    const v3 = fc
      .tuple(
        Events.jobInsertedV3(),
        nullableId,
        fc.option(Values.name(), { nil: null }),
        nullableId,
      )
      .map(([event, timeoutMs, uniqueKey, uniquePeriodMs]) =>
        Event.jobInsertedV3({ ...event, timeoutMs, uniqueKey, uniquePeriodMs }),
      );
    fc.assert(
      fc.property(v3, (event) => {
        expect(agree(event)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("keep tricky names and any args or result: bounds, surrogate pairs, big integers, bytes", () => {
    const tricky = fc.record({
      queue: fc.constantFrom(...Values.namesAtBound, ...Values.trickyNames),
      worker: Values.name(),
      args: Values.value({ maxDepth: 4 }),
    });
    fc.assert(
      fc.property(
        Events.jobInserted(),
        Events.resultRecorded(),
        tricky,
        (inserted, recorded, { queue, worker, args }) => {
          expect(agree({ ...inserted, queue, worker, args })).toBe(true);
          expect(agree({ ...recorded, result: args })).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("nest args to the depth limit counted from the payload's root, and not one deeper", () => {
    fc.assert(
      fc.property(Events.jobInserted(), Values.deepValue(63), (event, args) => {
        expect(agree({ ...event, args })).toBe(true);
        refused({ ...event, args: [args] });
      }),
      { numRuns: 10 },
    );
  });

  it("write a payload of exactly the record limit, and refuse one byte more", () => {
    const base = Event.resultRecorded({ jobId: 1, result: "", at: 0 });
    const empty = encodeEvent(base);
    if (E.isLeft(empty)) throw new Error("refused");
    const room = eventPayloadBytesMax - empty.right.payload.length;
    expect(agree({ ...base, result: "x".repeat(room) })).toBe(true);
    refused({ ...base, result: "x".repeat(room + 1) });
  });
});

/** `part` with every job's args `args`, of the part's own kind. */
const withArgs = (part: Event.AnySnapshotPart, args: AnyValue): Event.AnySnapshotPart =>
  part._tag === "SnapshotPart"
    ? { ...part, jobs: part.jobs.map((job) => ({ ...job, args })) }
    : { ...part, jobs: part.jobs.map((job) => ({ ...job, args })) };

describe.each([
  { pair: "(7,1)", arbitrary: (): fc.Arbitrary<Event.AnySnapshotPart> => Events.snapshotPart() },
  { pair: "(7,3)", arbitrary: (): fc.Arbitrary<Event.AnySnapshotPart> => Events.snapshotPartV3() },
])("$pair snapshot parts", ({ arbitrary }) => {
  /** A part of one job (as the terminal index writes it) or several. */
  const parts = fc.oneof(
    arbitrary(),
    fc
      .tuple(arbitrary(), Values.value({ maxDepth: 4 }))
      .map(([part, args]) => withArgs(part, args)),
  );

  it("are written directly, as the general encoder writes them", () => {
    fc.assert(
      fc.property(parts, (event) => {
        expect(agree(event)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("refuse a job's or an error's field outside its declaration as the general encoder does", () => {
    const withJobs = arbitrary().filter((part) => part.jobs.some((job) => job.errors.length > 0));
    fc.assert(
      fc.property(withJobs, fc.nat(), (part, pick) => {
        const at = pick % part.jobs.length;
        const job = part.jobs[at];
        if (job === undefined) throw new Error("a job");
        const replaced = (changed: unknown): Event.AnySnapshotPart => {
          const jobs: unknown[] = [...part.jobs];
          jobs[at] = changed;
          // Deliberately untyped: a job or error field of any kind.
          return { ...part, jobs: jobs as Event.SnapshotPartV3["jobs"] };
        };
        for (const item of aroundFields) {
          for (const key of Object.keys(job)) agree(replaced({ ...job, [key]: item }));
          const errors = job.errors.map((error) => ({ ...error, attempt: item }));
          agree(replaced({ ...job, errors }));
          agree(replaced(item));
        }
        for (const key of Object.keys(job)) refused(replaced({ ...job, [key]: undefined }));
        for (const key of ["part", "lastJobId", "jobs"]) refused({ ...part, [key]: undefined });
      }),
      { numRuns: 20 },
    );
  });

  it("nest a job's args to the depth limit counted from the payload's root, and not deeper", () => {
    fc.assert(
      fc.property(arbitrary(), Values.deepValue(61), (part, args) => {
        fc.pre(part.jobs.length > 0);
        expect(agree(withArgs(part, args))).toBe(true);
        refused(withArgs(part, [args]));
      }),
      { numRuns: 10 },
    );
  });
});

describe("fields outside their declaration", () => {
  it("are refused by the general encoder, never accepted by the direct one", () => {
    fc.assert(
      fc.property(directEvents, (event) => {
        let accepted = 0;
        for (const key of fieldsOf(event)) {
          for (const item of aroundFields) {
            if (agree(withField(event, key, item))) accepted++;
          }
          // An absent field is refused as missing.
          refused({ ...event, [key]: undefined });
        }
        // In-range items (0, 1, "x", ...) still take the fast path.
        expect(accepted).toBeGreaterThan(0);
      }),
      { numRuns: 40 },
    );
  });

  it("are refused with the general encoder's error inside a mutation", () => {
    const mutations = fc
      .tuple(
        fc.array(directEvents, { minLength: 1, maxLength: 3 }),
        fc.nat(),
        fc.nat(),
        fc.constantFrom(...aroundFields),
      )
      .map(([events, pick, field, item]) => {
        const at = pick % events.length;
        const inner = events[at];
        if (inner === undefined) throw new Error("an event");
        const keys = fieldsOf(inner);
        const members = [...events];
        members[at] = withField(inner, keys[field % keys.length] ?? "jobId", item);
        return Event.mutation(members);
      });
    fc.assert(
      fc.property(mutations, (mutation) => {
        agree(mutation);
      }),
      { numRuns: 300 },
    );
  });

  it("leave other tags, broken tags and non-objects to the general encoder", () => {
    const available = Event.jobAvailable({ jobId: 3, at: 5 });
    const throwing = Object.defineProperty({ ...available }, "at", {
      get: () => {
        throw new Error("a getter that throws");
      },
    });
    const untyped: ReadonlyArray<unknown> = [
      null,
      undefined,
      7,
      "JobAvailable",
      { _tag: "Nope", jobId: 1, at: 0 },
      { _tag: "toString", jobId: 1, at: 0 },
      { _tag: undefined, jobId: 1, at: 0 },
      { jobId: 1, at: 0 },
      throwing,
      { _tag: "Mutation", events: "nope" },
      { _tag: "Mutation", events: [available, null] },
      { _tag: "Mutation", events: { length: 1, 0: available } },
    ];
    for (const input of untyped) {
      // Deliberately untyped, as a caller without types could pass.
      const event = input as Event.Event;
      expect(encodeEventDirect(event)).toBeUndefined();
      agree(event);
    }
  });
});

describe("mutations", () => {
  it("are written directly only when every inner event is a direct pair", () => {
    const mixed = fc
      .tuple(
        fc.array(directEvents, { minLength: 1, maxLength: 3 }),
        fc.oneof(Events.scheduleEvent(), Events.occurrenceAdvanced()),
        fc.nat(),
      )
      .map(([events, other, at]) => {
        const members: Event.DomainEvent[] = [...events];
        members.splice(at % (members.length + 1), 0, other);
        return Event.mutation(members);
      });
    fc.assert(
      fc.property(mixed, (mutation) => {
        expect(agree(mutation)).toBe(false);
        expect(E.isRight(encodeEvent(mutation))).toBe(true);
      }),
      { numRuns: 50 },
    );
  });

  it("are written the same with a count past one byte's low seven bits (128 events and more)", () => {
    const events = fc.sample(directEvents, { numRuns: 300, seed: 11 });
    for (const count of [127, 128, 255, 256, 300]) {
      expect(agree(Event.mutation(events.slice(0, count))), `${count} events`).toBe(true);
    }
  });

  it("leave empty, nested, sparse and oversized mutations to the general encoder's refusal", () => {
    const available = Event.jobAvailable({ jobId: 3, at: 5 });
    const sparse: Event.DomainEvent[] = [available];
    sparse[2] = available;
    // Each inner payload fits a record; the two together do not.
    const half = Event.resultRecorded({
      jobId: 1,
      result: "x".repeat(eventPayloadBytesMax / 2),
      at: 0,
    });
    const cases: ReadonlyArray<Event.Mutation> = [
      Event.mutation([]),
      untypedMutation([Event.snapshotPart({ part: 0, lastJobId: 0, jobs: [] })]),
      untypedMutation([Event.mutation([available])]),
      untypedMutation([available, Event.mutation([available])]),
      Event.mutation([half, half]),
    ];
    for (const mutation of cases) refused(mutation);
    // A hole is skipped by the general encoder: accepted, but not directly.
    expect(encodeEventDirect(Event.mutation(sparse))).toBeUndefined();
    expect(E.isRight(encodeEvent(Event.mutation(sparse)))).toBe(true);
    agree(Event.mutation(sparse));
  });

  it("are written the same when an args map's iteration encodes another event", () => {
    const inner = Event.jobAvailable({ jobId: 9, at: 1 });
    class Reentrant extends Map<string, AnyValue> {
      override keys(): MapIterator<string> {
        encodeEvent(Event.mutation([inner, inner]));
        return super.keys();
      }
    }
    const args = new Reentrant([["b", 1]]).set("a", [1, 2]);
    const event = Event.jobInserted({
      jobId: 1,
      queue: "q",
      worker: "w",
      args,
      priority: 0,
      maxAttempts: 1,
      scheduledAt: 0,
      insertedAt: 0,
    });
    expect(agree(event)).toBe(true);
    expect(agree(Event.mutation([event, inner]))).toBe(true);
  });
});
