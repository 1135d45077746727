// Proves the committed event fixtures are intact and that the codec reads
// each one, a complete Record v1, to exactly the typed event (or refusal)
// written literally below. It checks SHA256SUMS first, then decodes every
// fixture with decodeRecord and decodeEvent and re-encodes the accepted
// ones byte for byte (the fixtures come from scripts/fixtures-events.mjs, an
// independent hand layout, and are never regenerated here).
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { Event, type Value } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { decodeEvent, type EventDecodeError, encodeEvent } from "../src/Event.js";
import { decodeRecord, encodeRecord } from "../src/Record.js";

type AnyValue = Value.Value;

const directory = new URL("./fixtures/events/", import.meta.url);
const read = (name: string): Uint8Array => Uint8Array.from(readFileSync(new URL(name, directory)));
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

const t = 1_764_460_800_000;
const day = 86_400_000;

const welcomeArgs = new Map<string, AnyValue>([
  ["customer_id", 48_213],
  ["email", "ada@example.com"],
  ["locale", "fr-FR"],
  ["plan", "trial"],
]);

const jobInserted = Event.jobInserted({
  jobId: 1001,
  queue: "mailers",
  worker: "SendWelcomeEmail",
  args: welcomeArgs,
  priority: 2,
  maxAttempts: 25,
  scheduledAt: t,
  insertedAt: t,
});

const cronDefinition: Event.ScheduleDefinition = {
  queue: "reports",
  worker: "NightlyDigest",
  args: new Map<string, AnyValue>([
    ["format", "pdf"],
    ["recipients", ["ops@example.com"]],
  ]),
  priority: 5,
  maxAttempts: 3,
  everyMs: null,
  cron: "0 3 * * *",
  overlap: "skip",
};

const everyDefinition: Event.ScheduleDefinition = {
  queue: "maintenance",
  worker: "PurgeSessions",
  args: null,
  priority: 9,
  maxAttempts: 1,
  everyMs: day,
  cron: null,
  overlap: "allow",
};

/** Every accepted fixture: its record's pair and sequence, and the event it holds. */
const accepted: Record<string, { sequence: number; event: Event.Event }> = {
  "t01-s1-job-inserted.bin": { sequence: 1, event: jobInserted },
  "t02-s1-job-available.bin": {
    sequence: 2,
    event: Event.jobAvailable({ jobId: 1002, at: t + 60_000 }),
  },
  "t03-s1-job-started.bin": {
    sequence: 3,
    event: Event.jobStarted({ jobId: 1001, at: t + 5, attempt: 1 }),
  },
  "t04-s1-job-finished.bin": {
    sequence: 4,
    event: Event.jobFinished({
      jobId: 1001,
      at: t + 950,
      outcome: "discarded",
      error: "SMTP 550 — boîte aux lettres indisponible",
    }),
  },
  "t05-s1-job-cancelled.bin": {
    sequence: 5,
    event: Event.jobCancelled({ jobId: 1003, at: t + 10, reason: "cancelled by operator" }),
  },
  "t06-s1-job-retried.bin": {
    sequence: 6,
    event: Event.jobRetried({
      jobId: 1001,
      at: t + 900,
      retryAt: t + 30_900,
      error: "timeout after 30 s",
    }),
  },
  "t07-s1-snapshot-part.bin": {
    sequence: 7,
    event: Event.snapshotPart({
      part: 0,
      lastJobId: 1003,
      jobs: [
        {
          jobId: 1001,
          queue: "mailers",
          worker: "SendWelcomeEmail",
          args: welcomeArgs,
          priority: 2,
          maxAttempts: 25,
          attempt: 1,
          state: "retryable",
          insertedAt: t,
          scheduledAt: t + 30_900,
          attemptedAt: t + 5,
          finishedAt: null,
          errors: [{ attempt: 1, at: t + 900, error: "timeout after 30 s" }],
        },
        {
          jobId: 1003,
          queue: "default",
          worker: "ResizeImage",
          args: new Map<string, AnyValue>([
            ["id", 77],
            ["sizes", [64, 256]],
          ]),
          priority: 0,
          maxAttempts: 1,
          attempt: 0,
          state: "scheduled",
          insertedAt: t,
          scheduledAt: t + day,
          attemptedAt: null,
          finishedAt: null,
          errors: [],
        },
      ],
    }),
  },
  "t08-s1-mutation.bin": {
    sequence: 8,
    event: Event.mutation([
      Event.jobStarted({ jobId: 1002, at: t + 60_010, attempt: 1 }),
      Event.jobFinished({ jobId: 1002, at: t + 60_420, outcome: "completed", error: null }),
      Event.resultRecorded({ jobId: 1002, result: new Map([["pages", 3]]), at: t + 60_420 }),
    ]),
  },
  "t07-s2-schedule-registered.bin": {
    sequence: 9,
    event: Event.scheduleRegistered({
      scheduleId: "nightly-digest",
      revision: 1,
      definition: cronDefinition,
      registeredAt: t,
      nextDueAt: t + 10_800_000,
    }),
  },
  "t08-s2-schedule-advanced.bin": {
    sequence: 10,
    event: Event.scheduleAdvanced({
      scheduleId: "nightly-digest",
      revision: 2,
      dueAt: t + 10_800_000,
      nextDueAt: t + 10_800_000 + day,
    }),
  },
  "t09-s2-schedule-cancelled.bin": {
    sequence: 11,
    event: Event.scheduleCancelled({ scheduleId: "nightly-digest", revision: 3, at: t + 2 * day }),
  },
  "t10-s2-result-recorded.bin": {
    sequence: 12,
    event: Event.resultRecorded({
      jobId: 1002,
      result: new Map<string, AnyValue>([
        ["__proto__", new Map([["polluted", true]])],
        ["checksum", Uint8Array.of(0xde, 0xad, 0xbe, 0xef)],
        ["ratio", 0.25],
        ["rows", 9_007_199_254_740_993n],
      ]),
      at: t + 60_420,
    }),
  },
  "t11-s2-occurrence-advanced.bin": {
    sequence: 13,
    event: Event.occurrenceAdvanced({
      scheduleId: "purge-sessions",
      revision: 2,
      dueAt: t + day,
      nextDueAt: t + 2 * day,
      outcome: "delivered",
      activeJobId: 1004,
    }),
  },
  "t12-s2-schedule-historical-checkpoint.bin": {
    sequence: 14,
    event: Event.scheduleHistoricalCheckpoint({
      scheduleId: "nightly-digest",
      definition: cronDefinition,
      definitionRevision: 1,
      revision: 4,
      registeredAt: t,
      nextDueAt: t + 10_800_000 + day,
      lastDueAt: t + 10_800_000,
      cancelledAt: null,
      activeJobId: null,
    }),
  },
  "t13-s2-schedule-checkpoint.bin": {
    sequence: 15,
    event: Event.scheduleCheckpoint({
      scheduleId: "purge-sessions",
      definition: everyDefinition,
      definitionRevision: 1,
      revision: 3,
      registeredAt: t,
      nextDueAt: t + 3 * day,
      lastDueAt: t + 2 * day,
      cancelledAt: null,
      activeJobIds: [1004, 1007],
      membershipComplete: true,
    }),
  },
  "mutation-schedule-registration.bin": {
    sequence: 16,
    event: Event.mutation([
      Event.scheduleCheckpoint({
        scheduleId: "purge-sessions",
        definition: everyDefinition,
        definitionRevision: 1,
        revision: 1,
        registeredAt: t,
        nextDueAt: t,
        lastDueAt: null,
        cancelledAt: null,
        activeJobIds: [],
        membershipComplete: true,
      }),
      Event.jobInserted({
        jobId: 1004,
        queue: "maintenance",
        worker: "PurgeSessions",
        args: null,
        priority: 9,
        maxAttempts: 1,
        scheduledAt: t,
        insertedAt: t,
      }),
      Event.occurrenceAdvanced({
        scheduleId: "purge-sessions",
        revision: 2,
        dueAt: t,
        nextDueAt: t + day,
        outcome: "delivered",
        activeJobId: 1004,
      }),
    ]),
  },
  "job-inserted-tricky-names.bin": {
    sequence: 17,
    event: Event.jobInserted({
      jobId: 9_007_199_254_740_991,
      queue: "__proto__",
      worker: `${"é".repeat(127)}a`,
      args: new Map([["__proto__", "constructor"]]),
      priority: 9,
      maxAttempts: 1000,
      scheduledAt: t + day,
      insertedAt: t,
    }),
  },
};

/** Every refused fixture and the exact refusal. */
const refused: Record<string, EventDecodeError> = {
  "refused-schema-mismatch-priority.bin": {
    _tag: "SchemaMismatch",
    type: 1,
    schema: 1,
    path: "priority",
    reason: "OutOfRange",
    found: "12",
  },
  "refused-schema-mismatch-missing-key.bin": {
    _tag: "SchemaMismatch",
    type: 2,
    schema: 1,
    path: "at",
    reason: "MissingKey",
    found: "absent",
  },
  "refused-schema-mismatch-extra-key.bin": {
    _tag: "SchemaMismatch",
    type: 3,
    schema: 1,
    path: "worker",
    reason: "ExtraKey",
    found: "string",
  },
  "refused-schema-mismatch-name-too-long.bin": {
    _tag: "SchemaMismatch",
    type: 1,
    schema: 1,
    path: "queue",
    reason: "OutOfRange",
    found: "256 bytes",
  },
  "refused-schema-mismatch-both-set.bin": {
    _tag: "SchemaMismatch",
    type: 13,
    schema: 2,
    path: "definition",
    reason: "BothOrNeitherSet",
    found: "both",
  },
  "refused-schema-mismatch-not-ascending.bin": {
    _tag: "SchemaMismatch",
    type: 13,
    schema: 2,
    path: "active_job_ids[1]",
    reason: "NotAscending",
    found: "1007 then 1004",
  },
  "refused-schema-mismatch-empty-mutation.bin": {
    _tag: "SchemaMismatch",
    type: 8,
    schema: 1,
    path: "events",
    reason: "EmptyMutation",
    found: "0 items",
  },
  "refused-schema-mismatch-nested-record.bin": {
    _tag: "SchemaMismatch",
    type: 8,
    schema: 1,
    path: "events[0]",
    reason: "NestedRecord",
    found: "(7,1)",
  },
  "refused-schema-mismatch-inner-event.bin": {
    _tag: "SchemaMismatch",
    type: 2,
    schema: 1,
    path: "events[1].payload.job_id",
    reason: "OutOfRange",
    found: "0",
  },
  "refused-unknown-event-14-2.bin": { _tag: "UnknownEvent", type: 14, schema: 2, path: "" },
  "refused-unknown-event-1-2.bin": { _tag: "UnknownEvent", type: 1, schema: 2, path: "" },
  "refused-unknown-event-inner-9-1.bin": {
    _tag: "UnknownEvent",
    type: 9,
    schema: 1,
    path: "events[0]",
  },
  "refused-beyond-safe-integer.bin": {
    _tag: "BeyondSafeInteger",
    type: 1,
    schema: 1,
    path: "job_id",
    found: "1152921504606846976",
  },
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

describe("event fixtures", () => {
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

  it("hold one event of each of the 15 pairs of schemas 1 and 2", () => {
    // Schema 3's pairs have their own fixtures (Fixtures.events-v3.test.ts).
    const tags = new Set(Object.values(accepted).map(({ event }) => event._tag));
    const v1v2 = Event.eventTags.filter((tag) => !Event.schema3Tags.includes(tag));
    expect([...tags].sort()).toEqual([...v1v2].sort());
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
