// Proves that each pair's declaration reads exactly the payload values
// EVENTS.md allows and refuses every other one with the right tagged error
// and path. It checks that decoder, encoder and the testkit's descriptor-
// driven arbitraries agree over random values, then derives from each
// declaration every missing-key, extra-key, wrong-kind and out-of-range
// mutant of a realistic sample, and spells out the cases the issue names.
import { Event, Value } from "@tay/core";
import fc from "fast-check";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as Events from "../../testkit/src/Events.js";
import * as Values from "../../testkit/src/Values.js";
import {
  type EventSchemaMismatchReason,
  type EventShapeError,
  eventFromValue,
  eventPayloadKinds,
  eventToValue,
  type PayloadEvent,
  type PayloadEventTag,
  type PayloadKindDescriptor,
  payloadPairOf,
  payloadPairs,
  payloadTagOf,
} from "../src/Payload.js";

type AnyValue = Value.Value;
type PlainTag = Exclude<PayloadEventTag, "MutationPayload">;

const time = 1_764_460_800_000;
const args: AnyValue = new Map<string, AnyValue>([
  ["customer_id", 48_213],
  ["email", "ada@example.com"],
  ["locale", "fr-FR"],
  ["tags", ["welcome", "trial"]],
]);

const definition: Event.ScheduleDefinition = {
  queue: "reports",
  worker: "NightlyDigest",
  args,
  priority: 5,
  maxAttempts: 3,
  everyMs: null,
  cron: "0 3 * * *",
  overlap: "skip",
};

/** One realistic event per pair whose payload is a plain value. */
const samples: { readonly [Tag in PlainTag]: Extract<PayloadEvent, { _tag: Tag }> } = {
  JobInserted: Event.jobInserted({
    jobId: 1001,
    queue: "mailers",
    worker: "SendWelcomeEmail",
    args,
    priority: 2,
    maxAttempts: 25,
    scheduledAt: time,
    insertedAt: time,
  }),
  JobAvailable: Event.jobAvailable({ jobId: 1002, at: time + 60_000 }),
  JobStarted: Event.jobStarted({ jobId: 1001, at: time + 5, attempt: 1 }),
  JobFinished: Event.jobFinished({
    jobId: 1001,
    at: time + 950,
    outcome: "discarded",
    error: "SMTP 550: mailbox unavailable",
  }),
  JobCancelled: Event.jobCancelled({ jobId: 1003, at: time + 10, reason: null }),
  JobRetried: Event.jobRetried({
    jobId: 1001,
    at: time + 900,
    retryAt: time + 30_900,
    error: "timeout after 30 s",
  }),
  SnapshotPart: Event.snapshotPart({
    part: 0,
    lastJobId: 1003,
    jobs: [
      {
        jobId: 1001,
        queue: "mailers",
        worker: "SendWelcomeEmail",
        args,
        priority: 2,
        maxAttempts: 25,
        attempt: 1,
        state: "retryable",
        insertedAt: time,
        scheduledAt: time + 30_900,
        attemptedAt: time + 5,
        finishedAt: null,
        errors: [{ attempt: 1, at: time + 900, error: "timeout after 30 s" }],
      },
    ],
  }),
  ScheduleRegistered: Event.scheduleRegistered({
    scheduleId: "nightly-digest",
    revision: 1,
    definition,
    registeredAt: time,
    nextDueAt: time + 10_800_000,
  }),
  ScheduleAdvanced: Event.scheduleAdvanced({
    scheduleId: "nightly-digest",
    revision: 2,
    dueAt: time + 10_800_000,
    nextDueAt: time + 97_200_000,
  }),
  ScheduleCancelled: Event.scheduleCancelled({
    scheduleId: "nightly-digest",
    revision: 3,
    at: time + 100_000_000,
  }),
  ResultRecorded: Event.resultRecorded({
    jobId: 1001,
    result: new Map<string, AnyValue>([["sent", true]]),
    at: time + 951,
  }),
  OccurrenceAdvanced: Event.occurrenceAdvanced({
    scheduleId: "nightly-digest",
    revision: 2,
    dueAt: time + 10_800_000,
    nextDueAt: time + 97_200_000,
    outcome: "delivered",
    activeJobId: 1004,
  }),
  ScheduleHistoricalCheckpoint: Event.scheduleHistoricalCheckpoint({
    scheduleId: "nightly-digest",
    definition,
    definitionRevision: 1,
    revision: 4,
    registeredAt: time,
    nextDueAt: time + 97_200_000,
    lastDueAt: time + 10_800_000,
    cancelledAt: null,
    activeJobId: 1004,
  }),
  ScheduleCheckpoint: Event.scheduleCheckpoint({
    scheduleId: "nightly-digest",
    definition: { ...definition, everyMs: 86_400_000, cron: null },
    definitionRevision: 1,
    revision: 5,
    registeredAt: time,
    nextDueAt: time + 97_200_000,
    lastDueAt: time + 10_800_000,
    cancelledAt: null,
    activeJobIds: [1004, 1007],
    membershipComplete: true,
  }),
  JobInsertedV3: Event.jobInsertedV3({
    jobId: 2001,
    queue: "billing",
    worker: "SendInvoice",
    args,
    priority: 3,
    maxAttempts: 5,
    scheduledAt: time,
    insertedAt: time,
    uniqueKey: "invoice:9120",
    uniquePeriodMs: 86_400_000,
    timeoutMs: 30_000,
  }),
  JobRedriven: Event.jobRedriven({ jobId: 2001, at: time, maxAttempts: 10, reason: null }),
  QueueStateSet: Event.queueStateSet({
    queue: "billing",
    at: time,
    paused: true,
    concurrency: 4,
    rateLimit: { count: 10, perMs: 1000 },
  }),
  ScheduleCheckpointV3: Event.scheduleCheckpointV3({
    scheduleId: "nightly-digest-berlin",
    definition: {
      ...definition,
      timezone: "Europe/Berlin",
      catchUp: "skip",
      catchUpWindowMs: null,
    },
    definitionRevision: 1,
    revision: 1,
    registeredAt: time,
    nextDueAt: time + 5_400_000,
    lastDueAt: null,
    cancelledAt: null,
    activeJobIds: [],
    membershipComplete: true,
  }),
  SnapshotPartV3: Event.snapshotPartV3({ part: 0, lastJobId: 0, jobs: [] }),
};

const plainTags: ReadonlyArray<PlainTag> = [
  "JobInserted",
  "JobAvailable",
  "JobStarted",
  "JobFinished",
  "JobCancelled",
  "JobRetried",
  "SnapshotPart",
  "ScheduleRegistered",
  "ScheduleAdvanced",
  "ScheduleCancelled",
  "ResultRecorded",
  "OccurrenceAdvanced",
  "ScheduleHistoricalCheckpoint",
  "ScheduleCheckpoint",
  "JobInsertedV3",
  "JobRedriven",
  "QueueStateSet",
  "ScheduleCheckpointV3",
  "SnapshotPartV3",
];

const decodeAs = (tag: PayloadEventTag, value: AnyValue) =>
  eventFromValue(payloadPairs[tag].type, payloadPairs[tag].schema, value);

const refusal = (result: E.Either<EventShapeError, PayloadEvent>): EventShapeError => {
  if (E.isRight(result)) throw new Error(`accepted: ${result.right._tag}`);
  return result.left;
};

const accepted = (result: E.Either<EventShapeError, PayloadEvent>): PayloadEvent => {
  if (E.isLeft(result)) throw new Error(`refused: ${JSON.stringify(result.left)}`);
  return result.right;
};

/** The payload of `tag`'s sample with `key` (a top-level wire key) set to `item`. */
const withKey = (tag: PlainTag, key: string, item: AnyValue): AnyValue =>
  new Map(eventToValue(samples[tag])).set(key, item);

const mismatch = (
  tag: PayloadEventTag,
  path: string,
  reason: EventSchemaMismatchReason,
  found?: string,
) => ({
  _tag: "SchemaMismatch",
  type: payloadPairs[tag].type,
  schema: payloadPairs[tag].schema,
  path,
  reason,
  ...(found === undefined ? {} : { found }),
});

const mapAt = (value: AnyValue | undefined): Value.ValueMap => {
  if (value === undefined || !Value.isMap(value)) throw new Error("not a map");
  return value;
};

const listAt = (map: Value.ValueMap, key: string): ReadonlyArray<AnyValue> => {
  const value = map.get(key);
  if (value === undefined || !Value.isList(value)) throw new Error(`${key} is not a list`);
  return value;
};

const snake = (camel: string): string =>
  camel.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`);

describe("declarations, encoder and arbitraries agree", () => {
  it.each(plainTags)("%s: every drawn payload value reads, and writes back to itself", (tag) => {
    const kind = eventPayloadKinds[tag];
    fc.assert(
      fc.property(Events.payloadValue(tag), (value) => {
        const event = accepted(decodeAs(tag, value));
        expect(event._tag).toBe(tag);
        expect(Value.equals(eventToValue(event), value)).toBe(true);
        // The io-ts face of the same declaration agrees.
        const codec: {
          is(input: unknown): boolean;
          decode(input: AnyValue): E.Either<unknown, PayloadEvent>;
          encode(event: PayloadEvent): AnyValue;
        } = kind;
        expect(codec.is(event)).toBe(true);
        expect(codec.decode(value)).toEqual(E.right(event));
        expect(Value.equals(codec.encode(event), value)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it.each(plainTags)("%s: wire keys are the snake_case of the typed fields", (tag) => {
    const event = samples[tag];
    const fields = Object.keys(event).filter((key) => key !== "_tag");
    expect([...eventToValue(event).keys()].sort()).toEqual(fields.map(snake).sort());
  });

  it("writes keys in canonical (UTF-8 byte) order", () => {
    for (const tag of plainTags) {
      const keys = [...eventToValue(samples[tag]).keys()];
      expect(keys).toEqual(keys.slice().sort());
    }
  });

  it("maps every declared pair to its tag and nothing else", () => {
    for (const tag of [...plainTags, "MutationPayload" as const]) {
      expect(payloadTagOf(payloadPairs[tag].type, payloadPairs[tag].schema)).toBe(tag);
    }
    let known = 0;
    for (let type = 0; type < 256; type++) {
      for (let schema = 0; schema < 256; schema++) {
        if (payloadTagOf(type, schema) !== undefined) known += 1;
      }
    }
    expect(known).toBe(20);
    // Tags are looked up as own keys only: no prototype member is a tag.
    expect(payloadPairOf("MutationPayload")).toEqual({ type: 8, schema: 1 });
    for (const tag of ["Mutation", "toString", "__proto__", "constructor"]) {
      expect(payloadPairOf(tag)).toBeUndefined();
    }
  });
});

// ---------------------------------------------------------------------------
// Mutants derived from the declarations

interface Mutant {
  readonly value: AnyValue;
  readonly path: string;
  readonly reason: EventSchemaMismatchReason | "BeyondSafeInteger";
}

const join = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`);

/** A value of another kind than any the descriptor accepts (undefined for `value`). */
const wrongKindFor = (descriptor: PayloadKindDescriptor): AnyValue | undefined => {
  switch (descriptor.kind) {
    case "integer":
      return "7";
    case "name":
    case "text":
    case "enum":
      return 7;
    case "bool":
      return 1;
    case "bytes":
      return "bytes";
    case "value":
      return undefined;
    case "nullable":
      return wrongKindFor(descriptor.of);
    case "list":
      return new Map();
    case "map":
      return [];
    default:
      return descriptor satisfies never;
  }
};

/** Values just outside the descriptor's range, each with the refusal it earns. */
const outOfRangeFor = (descriptor: PayloadKindDescriptor): Array<[AnyValue, Mutant["reason"]]> => {
  switch (descriptor.kind) {
    case "integer":
      return [
        [descriptor.min - 1, "OutOfRange"],
        descriptor.max === Value.safeIntegerMax
          ? [BigInt(descriptor.max) + 1n, "BeyondSafeInteger"]
          : [descriptor.max + 1, "OutOfRange"],
        [0.5, "WrongKind"],
      ];
    case "name":
      return [
        ["", "OutOfRange"],
        ["n".repeat(256), "OutOfRange"],
      ];
    case "text":
      return [["t".repeat(65_536), "OutOfRange"]];
    case "enum":
      return [["nope", "NotAMember"]];
    case "nullable":
      return outOfRangeFor(descriptor.of);
    default:
      return [];
  }
};

/** Every single-point mutant of `value` that its descriptor refuses. */
const mutantsOf = (value: AnyValue, descriptor: PayloadKindDescriptor, path: string): Mutant[] => {
  const mutants: Mutant[] = [];
  const wrong = wrongKindFor(descriptor);
  if (wrong !== undefined) mutants.push({ value: wrong, path, reason: "WrongKind" });
  for (const [item, reason] of outOfRangeFor(descriptor))
    mutants.push({ value: item, path, reason });
  if (descriptor.kind === "nullable" && value !== null) {
    return mutants.concat(
      mutantsOf(value, descriptor.of, path).filter((mutant) => mutant.path !== path),
    );
  }
  if (descriptor.kind === "list" && Value.isList(value) && value.length > 0) {
    for (const mutant of mutantsOf(value[0] ?? null, descriptor.of, `${path}[0]`)) {
      mutants.push({ ...mutant, value: [mutant.value, ...value.slice(1)] });
    }
  }
  if (descriptor.kind === "map" && Value.isMap(value)) {
    for (const field of descriptor.fields) {
      const without = new Map(value);
      without.delete(field.wire);
      mutants.push({ value: without, path: join(path, field.wire), reason: "MissingKey" });
      const item = value.get(field.wire) ?? null;
      for (const mutant of mutantsOf(item, field.descriptor, join(path, field.wire))) {
        mutants.push({ ...mutant, value: new Map(value).set(field.wire, mutant.value) });
      }
    }
    const extra = new Map(value).set("zzz_extra", 1);
    mutants.push({ value: extra, path: join(path, "zzz_extra"), reason: "ExtraKey" });
  }
  return mutants;
};

describe("every mutant of every declaration is refused where it is wrong", () => {
  it.each(plainTags)("%s", (tag) => {
    const { type, schema } = payloadPairs[tag];
    const mutants = mutantsOf(eventToValue(samples[tag]), eventPayloadKinds[tag].descriptor, "");
    expect(mutants.length).toBeGreaterThan(5);
    for (const mutant of mutants) {
      const error = refusal(decodeAs(tag, mutant.value));
      if (mutant.reason === "BeyondSafeInteger") {
        expect(error).toMatchObject({ _tag: "BeyondSafeInteger", type, schema, path: mutant.path });
      } else {
        expect(error).toMatchObject({
          _tag: "SchemaMismatch",
          type,
          schema,
          path: mutant.path,
          reason: mutant.reason,
        });
      }
    }
  });

  it("covers the nested maps: definition, jobs and their errors", () => {
    const paths = (tag: PlainTag) =>
      mutantsOf(eventToValue(samples[tag]), eventPayloadKinds[tag].descriptor, "").map(
        (mutant) => mutant.path,
      );
    expect(paths("ScheduleCheckpoint")).toContain("definition.every_ms");
    expect(paths("ScheduleCheckpoint")).toContain("active_job_ids[0]");
    expect(paths("SnapshotPart")).toContain("jobs[0].errors[0].attempt");
    expect(paths("SnapshotPart")).toContain("jobs[0].state");
  });
});

// ---------------------------------------------------------------------------
// The cases the issue names, spelled out

describe("field kinds", () => {
  it("refuses a name of 0 or 256 bytes and accepts 255 bytes of multi-byte characters", () => {
    expect(refusal(decodeAs("JobInserted", withKey("JobInserted", "queue", "")))).toEqual(
      mismatch("JobInserted", "queue", "OutOfRange", "0 bytes"),
    );
    // 128 two-byte characters: 128 UTF-16 units but 256 bytes.
    const long = "é".repeat(128);
    expect(refusal(decodeAs("JobInserted", withKey("JobInserted", "worker", long)))).toEqual(
      mismatch("JobInserted", "worker", "OutOfRange", "256 bytes"),
    );
    for (const name of Values.namesAtBound) {
      const event = accepted(decodeAs("JobInserted", withKey("JobInserted", "queue", name)));
      expect(event).toMatchObject({ queue: name });
    }
  });

  it("refuses a text of 65,536 bytes and accepts 65,535", () => {
    const tooLong = `${"€".repeat(21_845)}x`;
    expect(refusal(decodeAs("JobRetried", withKey("JobRetried", "error", tooLong)))).toEqual(
      mismatch("JobRetried", "error", "OutOfRange", "65536 bytes"),
    );
    const longest = "€".repeat(21_845);
    expect(accepted(decodeAs("JobRetried", withKey("JobRetried", "error", longest)))).toMatchObject(
      { error: longest },
    );
    expect(accepted(decodeAs("JobRetried", withKey("JobRetried", "error", "")))).toMatchObject({
      error: "",
    });
  });

  it("refuses priority 10, max_attempts 0 and 1001, id 0 and a negative time", () => {
    const cases: Array<[string, AnyValue, string]> = [
      ["priority", 10, "10"],
      ["priority", -1, "-1"],
      ["max_attempts", 0, "0"],
      ["max_attempts", 1001, "1001"],
      ["job_id", 0, "0"],
      ["inserted_at", -1, "-1"],
    ];
    for (const [key, item, found] of cases) {
      expect(refusal(decodeAs("JobInserted", withKey("JobInserted", key, item)))).toEqual(
        mismatch("JobInserted", key, "OutOfRange", found),
      );
    }
    for (const [key, item] of [
      ["priority", 9],
      ["max_attempts", 1],
      ["max_attempts", 1000],
      ["job_id", Value.safeIntegerMax],
      ["scheduled_at", 0],
    ] as const) {
      expect(E.isRight(decodeAs("JobInserted", withKey("JobInserted", key, item)))).toBe(true);
    }
  });

  it("refuses a float where an integer is declared", () => {
    expect(refusal(decodeAs("JobAvailable", withKey("JobAvailable", "at", 1.5)))).toEqual(
      mismatch("JobAvailable", "at", "WrongKind", "float"),
    );
  });

  it("refuses a bigint id or time as BeyondSafeInteger, a bigint priority as OutOfRange", () => {
    const big = 2n ** 60n;
    expect(refusal(decodeAs("JobInserted", withKey("JobInserted", "job_id", big)))).toEqual({
      _tag: "BeyondSafeInteger",
      type: 1,
      schema: 1,
      path: "job_id",
      found: "1152921504606846976",
    });
    expect(refusal(decodeAs("JobAvailable", withKey("JobAvailable", "at", big)))).toMatchObject({
      _tag: "BeyondSafeInteger",
      path: "at",
    });
    expect(refusal(decodeAs("JobInserted", withKey("JobInserted", "priority", big)))).toEqual(
      mismatch("JobInserted", "priority", "OutOfRange", "1152921504606846976"),
    );
    // A negative one is below every range, not beyond an implementation limit.
    expect(refusal(decodeAs("JobAvailable", withKey("JobAvailable", "at", -big)))).toMatchObject(
      mismatch("JobAvailable", "at", "OutOfRange"),
    );
  });

  it("refuses a string outside its enumeration, with what was found", () => {
    expect(refusal(decodeAs("JobFinished", withKey("JobFinished", "outcome", "failed")))).toEqual(
      mismatch("JobFinished", "outcome", "NotAMember", '"failed"'),
    );
    expect(
      refusal(decodeAs("OccurrenceAdvanced", withKey("OccurrenceAdvanced", "outcome", "Skipped"))),
    ).toMatchObject(mismatch("OccurrenceAdvanced", "outcome", "NotAMember"));
  });

  it("accepts null where T|null is declared and refuses it elsewhere", () => {
    expect(accepted(decodeAs("JobFinished", withKey("JobFinished", "error", null)))).toMatchObject({
      error: null,
    });
    expect(refusal(decodeAs("JobRetried", withKey("JobRetried", "error", null)))).toEqual(
      mismatch("JobRetried", "error", "WrongKind", "null"),
    );
  });

  it("takes any value as args or result, __proto__ keys included", () => {
    const tricky = new Map<string, AnyValue>([["__proto__", new Map([["polluted", true]])]]);
    const event = accepted(decodeAs("ResultRecorded", withKey("ResultRecorded", "result", tricky)));
    expect(event).toMatchObject({ result: tricky });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("key sets", () => {
  it("refuses a missing key rather than defaulting it", () => {
    const value = new Map(eventToValue(samples.JobCancelled));
    value.delete("reason");
    expect(refusal(decodeAs("JobCancelled", value))).toEqual(
      mismatch("JobCancelled", "reason", "MissingKey", "absent"),
    );
  });

  it("refuses an extra key, naming it (escaped when it is not a plain word)", () => {
    expect(refusal(decodeAs("JobAvailable", withKey("JobAvailable", "queue", "x")))).toEqual(
      mismatch("JobAvailable", "queue", "ExtraKey", "string"),
    );
    expect(refusal(decodeAs("JobAvailable", withKey("JobAvailable", "__proto__", 1)))).toEqual(
      mismatch("JobAvailable", "__proto__", "ExtraKey", "integer"),
    );
    expect(refusal(decodeAs("JobAvailable", withKey("JobAvailable", "a.b\n", 1)))).toEqual(
      mismatch("JobAvailable", '["a.b\\n"]', "ExtraKey", "integer"),
    );
  });

  it("reports a key set problem before a value problem", () => {
    const value = new Map(eventToValue(samples.JobAvailable)).set("job_id", "x").set("extra", 1);
    expect(refusal(decodeAs("JobAvailable", value))).toMatchObject({
      reason: "ExtraKey",
      path: "extra",
    });
  });

  it("refuses a payload that is not a map", () => {
    for (const value of [null, [], "job", 1, new Uint8Array(2)]) {
      expect(refusal(decodeAs("JobAvailable", value))).toMatchObject({
        _tag: "SchemaMismatch",
        path: "",
        reason: "WrongKind",
      });
    }
  });

  it("reads __proto__ as an ordinary queue name, into an ordinary object", () => {
    const event = accepted(decodeAs("JobInserted", withKey("JobInserted", "queue", "__proto__")));
    expect(event).toMatchObject({ _tag: "JobInserted", queue: "__proto__" });
    expect(Object.getPrototypeOf(event)).toBe(Object.prototype);
    expect(Object.keys(event)).toContain("queue");
    expect(Value.equals(eventToValue(event), withKey("JobInserted", "queue", "__proto__"))).toBe(
      true,
    );
  });
});

describe("structural rules", () => {
  const definitionWith = (everyMs: AnyValue, cron: AnyValue): AnyValue =>
    withKey(
      "ScheduleCheckpoint",
      "definition",
      new Map(mapAt(eventToValue(samples.ScheduleRegistered).get("definition")))
        .set("every_ms", everyMs)
        .set("cron", cron),
    );

  it("needs exactly one of every_ms and cron", () => {
    expect(refusal(decodeAs("ScheduleCheckpoint", definitionWith(60_000, "* * * * *")))).toEqual(
      mismatch("ScheduleCheckpoint", "definition", "BothOrNeitherSet", "both"),
    );
    expect(refusal(decodeAs("ScheduleCheckpoint", definitionWith(null, null)))).toEqual(
      mismatch("ScheduleCheckpoint", "definition", "BothOrNeitherSet", "neither"),
    );
    expect(E.isRight(decodeAs("ScheduleCheckpoint", definitionWith(60_000, null)))).toBe(true);
    expect(E.isRight(decodeAs("ScheduleCheckpoint", definitionWith(null, "0 3 * * *")))).toBe(true);
    // every_ms is an id: 0 is out of range, whatever cron says.
    expect(refusal(decodeAs("ScheduleCheckpoint", definitionWith(0, null)))).toMatchObject(
      mismatch("ScheduleCheckpoint", "definition.every_ms", "OutOfRange"),
    );
    expect(refusal(decodeAs("ScheduleCheckpoint", definitionWith(null, 5)))).toMatchObject(
      mismatch("ScheduleCheckpoint", "definition.cron", "WrongKind"),
    );
  });

  it("checks the definition of the legacy pairs too", () => {
    const legacy = new Map(eventToValue(samples.ScheduleRegistered));
    const both = new Map(mapAt(legacy.get("definition"))).set("every_ms", 1);
    expect(refusal(decodeAs("ScheduleRegistered", legacy.set("definition", both)))).toEqual(
      mismatch("ScheduleRegistered", "definition", "BothOrNeitherSet", "both"),
    );
  });

  it("needs active_job_ids strictly ascending", () => {
    for (const ids of [
      [7, 3],
      [3, 3],
      [1, 5, 4],
    ]) {
      const error = refusal(
        decodeAs("ScheduleCheckpoint", withKey("ScheduleCheckpoint", "active_job_ids", ids)),
      );
      expect(error).toMatchObject(
        mismatch("ScheduleCheckpoint", `active_job_ids[${ids.length - 1}]`, "NotAscending"),
      );
    }
    for (const ids of [[], [1], [1, 2, Value.safeIntegerMax]]) {
      const event = accepted(
        decodeAs("ScheduleCheckpoint", withKey("ScheduleCheckpoint", "active_job_ids", ids)),
      );
      expect(event).toMatchObject({ activeJobIds: ids });
    }
  });

  it("allows attempt 0 and last_job_id 0 in a snapshot, but not an error of attempt 0", () => {
    const part = eventToValue(samples.SnapshotPart);
    const first = mapAt(listAt(part, "jobs")[0] ?? null);
    const fresh = new Map(first).set("attempt", 0).set("errors", []).set("attempted_at", null);
    expect(
      accepted(decodeAs("SnapshotPart", new Map(part).set("jobs", [fresh]).set("last_job_id", 0))),
    ).toMatchObject({ lastJobId: 0, jobs: [{ attempt: 0 }] });
    const error = new Map<string, AnyValue>([
      ["attempt", 0],
      ["at", time],
      ["error", "x"],
    ]);
    const failed = new Map(first).set("errors", [error]);
    expect(refusal(decodeAs("SnapshotPart", new Map(part).set("jobs", [first, failed])))).toEqual(
      mismatch("SnapshotPart", "jobs[1].errors[0].attempt", "OutOfRange", "0"),
    );
  });
});

describe("mutations at the value level", () => {
  const entry = (type: AnyValue, schema: AnyValue, payload: AnyValue = new Uint8Array(1)) =>
    new Map<string, AnyValue>([
      ["payload", payload],
      ["schema", schema],
      ["type", type],
    ]);
  const mutationOf = (...entries: AnyValue[]) => new Map([["events", entries]]);

  it("keeps inner payloads encoded, checking only their pairs", () => {
    const payload = Uint8Array.of(1, 2, 3);
    expect(accepted(decodeAs("MutationPayload", mutationOf(entry(1, 1, payload))))).toEqual({
      _tag: "MutationPayload",
      events: [{ type: 1, schema: 1, payload }],
    });
  });

  it("refuses an empty mutation", () => {
    expect(refusal(decodeAs("MutationPayload", mutationOf()))).toEqual(
      mismatch("MutationPayload", "events", "EmptyMutation", "0 items"),
    );
  });

  it("refuses a snapshot part or a mutation inside a mutation", () => {
    expect(refusal(decodeAs("MutationPayload", mutationOf(entry(2, 1), entry(7, 1))))).toEqual(
      mismatch("MutationPayload", "events[1]", "NestedRecord", "(7,1)"),
    );
    expect(refusal(decodeAs("MutationPayload", mutationOf(entry(8, 1))))).toEqual(
      mismatch("MutationPayload", "events[0]", "NestedRecord", "(8,1)"),
    );
    // The schema-3 snapshot part too (EVENTS-V3.md).
    expect(refusal(decodeAs("MutationPayload", mutationOf(entry(2, 1), entry(7, 3))))).toEqual(
      mismatch("MutationPayload", "events[1]", "NestedRecord", "(7,3)"),
    );
    // Schema 2 types 7 and 8 are ordinary schedule events.
    expect(E.isRight(decodeAs("MutationPayload", mutationOf(entry(7, 2), entry(8, 2))))).toBe(true);
  });

  it("refuses an unknown inner pair as UnknownEvent, naming the inner pair", () => {
    expect(refusal(decodeAs("MutationPayload", mutationOf(entry(14, 2))))).toEqual({
      _tag: "UnknownEvent",
      type: 14,
      schema: 2,
      path: "events[0]",
    });
  });

  it("refuses inner pairs outside a byte and payloads that are not bytes", () => {
    expect(refusal(decodeAs("MutationPayload", mutationOf(entry(300, 1))))).toEqual(
      mismatch("MutationPayload", "events[0].type", "OutOfRange", "300"),
    );
    expect(refusal(decodeAs("MutationPayload", mutationOf(entry(1, 1, "x"))))).toEqual(
      mismatch("MutationPayload", "events[0].payload", "WrongKind", "string"),
    );
  });
});

describe("pairs", () => {
  it("refuses every pair EVENTS.md does not declare as UnknownEvent", () => {
    const unknown: Array<[number, number]> = [
      [0, 1],
      [14, 2],
      [1, 2],
      [9, 1],
      [7, 4],
      [2, 3],
      [14, 3],
      [24, 2],
      [20, 1],
      [255, 255],
      [1, 0],
      [-1, 1],
      [1.5, 1],
      [Number.NaN, 1],
      [257, 1],
    ];
    for (const [type, schema] of unknown) {
      expect(refusal(eventFromValue(type, schema, eventToValue(samples.JobInserted)))).toEqual({
        _tag: "UnknownEvent",
        type,
        schema,
        path: "",
      });
    }
  });
});

describe("totality", () => {
  it("gives a result, never an exception or a Defect, for any value and pair", () => {
    const pair = fc.oneof(
      fc.constantFrom(...Object.values(payloadPairs)),
      fc.record({
        type: fc.integer({ min: -1, max: 256 }),
        schema: fc.integer({ min: -1, max: 256 }),
      }),
    );
    fc.assert(
      fc.property(pair, Values.value(), ({ type, schema }, value) => {
        const result = eventFromValue(type, schema, value);
        expect(E.isLeft(result) && result.left._tag === "Defect").toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("renders refusals as io-ts messages too", () => {
    const result = eventPayloadKinds.JobInserted.decode(withKey("JobInserted", "priority", 12));
    expect(E.isLeft(result) && result.left[0]?.message).toBe("OutOfRange at priority: found 12");
  });
});
