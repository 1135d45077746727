// Proves the committed schema-3 event fixtures are intact and that the codec
// reads each one, a complete Record v1, to exactly the typed event (or
// refusal) written literally below, the two test vectors of EVENTS-V3.md
// included. It checks SHA256SUMS first, then decodes every fixture with
// decodeRecord and decodeEvent and re-encodes the accepted ones byte for byte
// (the fixtures come from scripts/fixtures-events-v3.mjs, an independent hand
// layout that reproduces both vectors, and are never regenerated here).
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { Event, type Value } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { decodeEvent, type EventDecodeError, encodeEvent } from "../src/Event.js";
import { decodeRecord, encodeRecord } from "../src/Record.js";

type AnyValue = Value.Value;

const directory = new URL("./fixtures/events-v3/", import.meta.url);
const read = (name: string): Uint8Array => Uint8Array.from(readFileSync(new URL(name, directory)));
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

const t = 1_764_460_800_000;
const day = 86_400_000;

/** EVENTS-V3.md's vectors, as the specification prints them. */
const queueVector =
  "5441590001180003000000000000000100000081649890e608000000050000000261740300000000000000000000000b636f6e63757272656e6379030000000000000004000000067061757365640200000005717565756505000000046d61696c0000000a726174655f6c696d6974080000000200000005636f756e7403000000000000000a000000067065725f6d730300000000000003e8a9862999";
const redriveVector =
  "544159000114000300000000000000020000004b2d50df000800000004000000026174030000000000000000000000066a6f625f69640300000000000000010000000c6d61785f617474656d70747303000000000000000500000006726561736f6e0072adb29c";

const invoiceArgs = new Map<string, AnyValue>([
  ["currency", "EUR"],
  ["invoice_id", 9_120],
]);

const invoiceInserted = Event.jobInsertedV3({
  jobId: 2001,
  queue: "billing",
  worker: "SendInvoice",
  args: invoiceArgs,
  priority: 3,
  maxAttempts: 5,
  scheduledAt: t,
  insertedAt: t,
  uniqueKey: "invoice:9120",
  uniquePeriodMs: day,
  timeoutMs: 30_000,
});

const berlinDefinition: Event.ScheduleDefinitionV3 = {
  queue: "reports",
  worker: "NightlyDigest",
  args: new Map<string, AnyValue>([["format", "pdf"]]),
  priority: 5,
  maxAttempts: 3,
  everyMs: null,
  cron: "30 2 * * *",
  overlap: "skip",
  timezone: "Europe/Berlin",
  catchUp: "all",
  catchUpWindowMs: 21_600_000,
};

const checkpointV3 = Event.scheduleCheckpointV3({
  scheduleId: "nightly-digest-berlin",
  definition: berlinDefinition,
  definitionRevision: 1,
  revision: 1,
  registeredAt: t,
  nextDueAt: t + 5_400_000,
  lastDueAt: null,
  cancelledAt: null,
  activeJobIds: [],
  membershipComplete: true,
});

/** Every accepted fixture: its record's sequence, and the event it holds. */
const accepted: Record<string, { sequence: number; event: Event.Event }> = {
  "vector-t24-s3-queue-state.bin": {
    sequence: 1,
    event: Event.queueStateSet({
      queue: "mail",
      at: 0,
      paused: true,
      concurrency: 4,
      rateLimit: { count: 10, perMs: 1000 },
    }),
  },
  "vector-t20-s3-redriven.bin": {
    sequence: 2,
    event: Event.jobRedriven({ jobId: 1, at: 0, maxAttempts: 5, reason: null }),
  },
  "t01-s3-job-inserted.bin": { sequence: 3, event: invoiceInserted },
  "t01-s3-job-inserted-plain.bin": {
    sequence: 4,
    event: Event.jobInsertedV3({
      jobId: 2002,
      queue: "__proto__",
      worker: "Resize",
      args: null,
      priority: 0,
      maxAttempts: 1,
      scheduledAt: t + day,
      insertedAt: t,
      uniqueKey: null,
      uniquePeriodMs: null,
      timeoutMs: 9_007_199_254_740_991,
    }),
  },
  "t20-s3-redriven.bin": {
    sequence: 5,
    event: Event.jobRedriven({
      jobId: 2001,
      at: t + day,
      maxAttempts: 10,
      reason: "SMTP relay fixed — réessayer",
    }),
  },
  "t24-s3-queue-state.bin": {
    sequence: 6,
    event: Event.queueStateSet({
      queue: "billing",
      at: t,
      paused: false,
      concurrency: null,
      rateLimit: null,
    }),
  },
  "t24-s3-queue-state-limits.bin": {
    sequence: 7,
    event: Event.queueStateSet({
      queue: "billing",
      at: t + 1,
      paused: true,
      concurrency: 9_007_199_254_740_991,
      rateLimit: { count: 10_000, perMs: 86_400_000 },
    }),
  },
  "t13-s3-schedule-checkpoint.bin": { sequence: 8, event: checkpointV3 },
  "t07-s3-snapshot-part.bin": {
    sequence: 9,
    event: Event.snapshotPartV3({
      part: 0,
      lastJobId: 2003,
      jobs: [
        {
          jobId: 2001,
          queue: "billing",
          worker: "SendInvoice",
          args: invoiceArgs,
          priority: 3,
          maxAttempts: 5,
          attempt: 1,
          state: "executing",
          insertedAt: t,
          scheduledAt: t,
          attemptedAt: t + 10,
          finishedAt: null,
          errors: [],
          uniqueKey: "invoice:9120",
          uniquePeriodMs: day,
          timeoutMs: 30_000,
        },
        {
          jobId: 2003,
          queue: "default",
          worker: "Resize",
          args: null,
          priority: 0,
          maxAttempts: 1,
          attempt: 0,
          state: "available",
          insertedAt: t,
          scheduledAt: t,
          attemptedAt: null,
          finishedAt: null,
          errors: [],
          uniqueKey: null,
          uniquePeriodMs: null,
          timeoutMs: null,
        },
      ],
    }),
  },
  "t08-s1-mutation-v3.bin": {
    sequence: 10,
    event: Event.mutation([
      Event.queueStateSet({
        queue: "billing",
        at: t,
        paused: true,
        concurrency: 2,
        rateLimit: null,
      }),
      invoiceInserted,
      Event.jobRedriven({ jobId: 1999, at: t, maxAttempts: 3, reason: null }),
      checkpointV3,
      Event.jobAvailable({ jobId: 1998, at: t }),
    ]),
  },
};

/** Every refused fixture and exactly how it is refused. */
const refused: Record<string, EventDecodeError> = {
  "refused-v3-rate-limit-count.bin": {
    _tag: "SchemaMismatch",
    type: 24,
    schema: 3,
    path: "rate_limit.count",
    reason: "OutOfRange",
    found: "10001",
  },
  "refused-v3-rate-limit-per-ms.bin": {
    _tag: "SchemaMismatch",
    type: 24,
    schema: 3,
    path: "rate_limit.per_ms",
    reason: "OutOfRange",
    found: "86400001",
  },
  "refused-v3-concurrency-zero.bin": {
    _tag: "SchemaMismatch",
    type: 24,
    schema: 3,
    path: "concurrency",
    reason: "OutOfRange",
    found: "0",
  },
  "refused-v3-unique-key-too-long.bin": {
    _tag: "SchemaMismatch",
    type: 1,
    schema: 3,
    path: "unique_key",
    reason: "OutOfRange",
    found: "256 bytes",
  },
  "refused-v3-missing-timeout.bin": {
    _tag: "SchemaMismatch",
    type: 1,
    schema: 3,
    path: "timeout_ms",
    reason: "MissingKey",
    found: "absent",
  },
  "refused-v3-catch-up-member.bin": {
    _tag: "SchemaMismatch",
    type: 13,
    schema: 3,
    path: "definition.catch_up",
    reason: "NotAMember",
    found: '"never"',
  },
  "refused-v3-v2-definition.bin": {
    _tag: "SchemaMismatch",
    type: 13,
    schema: 3,
    path: "definition.timezone",
    reason: "MissingKey",
    found: "absent",
  },
  "refused-v3-nested-snapshot.bin": {
    _tag: "SchemaMismatch",
    type: 8,
    schema: 1,
    path: "events[0]",
    reason: "NestedRecord",
    found: "(7,3)",
  },
  "refused-v3-redrive-max-attempts.bin": {
    _tag: "SchemaMismatch",
    type: 20,
    schema: 3,
    path: "max_attempts",
    reason: "OutOfRange",
    found: "1001",
  },
  "refused-v3-unknown-20-1.bin": { _tag: "UnknownEvent", type: 20, schema: 1, path: "" },
};

const sums = readFileSync(new URL("SHA256SUMS", directory), "utf8")
  .trim()
  .split("\n")
  .map((line) => {
    const [sum = "", name = ""] = line.split(/\s+/);
    return { sum, name };
  });

const recordOf = (name: string) => {
  const bytes = read(name);
  const decoded = decodeRecord(bytes, 0);
  if (decoded._tag !== "Record") throw new Error(`${name}: ${decoded._tag}`);
  expect(decoded.size).toBe(bytes.length);
  return { bytes, record: decoded.record };
};

describe("schema-3 event fixtures", () => {
  it("match their SHA256SUMS, and every fixture is listed and expected", () => {
    for (const { sum, name } of sums) {
      expect(createHash("sha256").update(read(name)).digest("hex"), name).toBe(sum);
    }
    const files = readdirSync(directory)
      .filter((name) => name !== "SHA256SUMS")
      .sort();
    expect(sums.map(({ name }) => name).sort()).toEqual(files);
    expect([...Object.keys(accepted), ...Object.keys(refused)].sort()).toEqual(files);
  });

  it("hold one event of each of the five schema-3 pairs", () => {
    const tags = new Set<string>(
      Object.values(accepted).flatMap(
        ({ event }): ReadonlyArray<string> =>
          event._tag === "Mutation" ? event.events.map((member) => member._tag) : [event._tag],
      ),
    );
    for (const tag of Event.schema3Tags) expect(tags.has(tag), tag).toBe(true);
  });

  it("hold EVENTS-V3.md's two test vectors byte for byte", () => {
    expect(hex(read("vector-t24-s3-queue-state.bin"))).toBe(queueVector);
    expect(hex(read("vector-t20-s3-redriven.bin"))).toBe(redriveVector);
  });

  it.each(Object.keys(accepted))("%s decodes to its event and re-encodes byte for byte", (name) => {
    const expected = accepted[name];
    if (expected === undefined) throw new Error(name);
    const { bytes, record } = recordOf(name);
    expect(record.sequence).toBe(expected.sequence);
    expect({ type: record.type, schema: record.schema }).toEqual(Event.pairs[expected.event._tag]);
    const event = decodeEvent(record.type, record.schema, record.payload);
    expect(event).toEqual(E.right(expected.event));
    const again = encodeEvent(expected.event);
    if (E.isLeft(again)) throw new Error(JSON.stringify(again.left));
    const framed = encodeRecord({ ...again.right, sequence: record.sequence });
    expect(E.isRight(framed) && hex(framed.right)).toBe(hex(bytes));
  });

  it.each(Object.keys(refused))("%s is refused exactly", (name) => {
    const { record } = recordOf(name);
    expect(decodeEvent(record.type, record.schema, record.payload)).toEqual(E.left(refused[name]));
  });
});
