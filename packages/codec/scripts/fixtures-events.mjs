#!/usr/bin/env node
/**
 * Writes the event fixtures of packages/codec/test/fixtures/events/ and
 * their SHA256SUMS, deterministically (fixed times, ids and contents).
 *
 * Each fixture is one complete Record v1 whose payload is an event of
 * EVENTS.md: one realistic event per (type, schema) pair, a few more
 * mutations and tricky names, and payloads the codec must refuse
 * (SchemaMismatch, UnknownEvent, BeyondSafeInteger). Payload values and
 * records are laid out here by hand from FORMAT.md, independently of the
 * codec's encoders, so the fixture test cross-checks two implementations.
 * The test reads the committed files and never runs this.
 *
 *   node packages/codec/scripts/fixtures-events.mjs          # (re)write
 *   node packages/codec/scripts/fixtures-events.mjs --check  # compare only
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { emitFixtures } from "./lib/fixtureFiles.mjs";
import { encode, frame, map } from "./lib/handLayout.mjs";

const directory = join(dirname(fileURLToPath(import.meta.url)), "..", "test", "fixtures", "events");

/** Records get sequences 1, 2, 3, ... in the order they are declared below. */
let sequence = 0;
const record = (type, schema, value) => {
  sequence += 1;
  return frame(type, schema, sequence, encode(value));
};

/** A mutation's inner event: its pair and its payload's canonical bytes. */
const inner = (type, schema, value) => map({ type, schema, payload: encode(value) });

// --- Events ----------------------------------------------------------------

const t = 1_764_460_800_000; // 2025-11-30T00:00:00Z
const day = 86_400_000;

const welcomeArgs = map({
  customer_id: 48_213,
  email: "ada@example.com",
  locale: "fr-FR",
  plan: "trial",
});

const jobInserted = map({
  job_id: 1001,
  queue: "mailers",
  worker: "SendWelcomeEmail",
  args: welcomeArgs,
  priority: 2,
  max_attempts: 25,
  scheduled_at: t,
  inserted_at: t,
});

const cronDefinition = map({
  queue: "reports",
  worker: "NightlyDigest",
  args: map({ format: "pdf", recipients: ["ops@example.com"] }),
  priority: 5,
  max_attempts: 3,
  every_ms: null,
  cron: "0 3 * * *",
  overlap: "skip",
});

const everyDefinition = map({
  queue: "maintenance",
  worker: "PurgeSessions",
  args: null,
  priority: 9,
  max_attempts: 1,
  every_ms: day,
  cron: null,
  overlap: "allow",
});

const fixtures = {
  "t01-s1-job-inserted.bin": record(1, 1, jobInserted),
  "t02-s1-job-available.bin": record(2, 1, map({ job_id: 1002, at: t + 60_000 })),
  "t03-s1-job-started.bin": record(3, 1, map({ job_id: 1001, at: t + 5, attempt: 1 })),
  "t04-s1-job-finished.bin": record(
    4,
    1,
    map({
      job_id: 1001,
      at: t + 950,
      outcome: "discarded",
      error: "SMTP 550 — boîte aux lettres indisponible",
    }),
  ),
  "t05-s1-job-cancelled.bin": record(
    5,
    1,
    map({ job_id: 1003, at: t + 10, reason: "cancelled by operator" }),
  ),
  "t06-s1-job-retried.bin": record(
    6,
    1,
    map({ job_id: 1001, at: t + 900, retry_at: t + 30_900, error: "timeout after 30 s" }),
  ),
  "t07-s1-snapshot-part.bin": record(
    7,
    1,
    map({
      part: 0,
      last_job_id: 1003,
      jobs: [
        map({
          job_id: 1001,
          queue: "mailers",
          worker: "SendWelcomeEmail",
          args: welcomeArgs,
          priority: 2,
          max_attempts: 25,
          attempt: 1,
          state: "retryable",
          inserted_at: t,
          scheduled_at: t + 30_900,
          attempted_at: t + 5,
          finished_at: null,
          errors: [map({ attempt: 1, at: t + 900, error: "timeout after 30 s" })],
        }),
        map({
          job_id: 1003,
          queue: "default",
          worker: "ResizeImage",
          args: map({ id: 77, sizes: [64, 256] }),
          priority: 0,
          max_attempts: 1,
          attempt: 0,
          state: "scheduled",
          inserted_at: t,
          scheduled_at: t + day,
          attempted_at: null,
          finished_at: null,
          errors: [],
        }),
      ],
    }),
  ),
  "t08-s1-mutation.bin": record(
    8,
    1,
    map({
      events: [
        inner(3, 1, map({ job_id: 1002, at: t + 60_010, attempt: 1 })),
        inner(4, 1, map({ job_id: 1002, at: t + 60_420, outcome: "completed", error: null })),
        inner(10, 2, map({ job_id: 1002, result: map({ pages: 3 }), at: t + 60_420 })),
      ],
    }),
  ),
  "t07-s2-schedule-registered.bin": record(
    7,
    2,
    map({
      schedule_id: "nightly-digest",
      revision: 1,
      definition: cronDefinition,
      registered_at: t,
      next_due_at: t + 10_800_000,
    }),
  ),
  "t08-s2-schedule-advanced.bin": record(
    8,
    2,
    map({
      schedule_id: "nightly-digest",
      revision: 2,
      due_at: t + 10_800_000,
      next_due_at: t + 10_800_000 + day,
    }),
  ),
  "t09-s2-schedule-cancelled.bin": record(
    9,
    2,
    map({ schedule_id: "nightly-digest", revision: 3, at: t + 2 * day }),
  ),
  "t10-s2-result-recorded.bin": record(
    10,
    2,
    map({
      job_id: 1002,
      result: new Map([
        ["__proto__", map({ polluted: true })],
        ["checksum", Uint8Array.of(0xde, 0xad, 0xbe, 0xef)],
        ["ratio", 0.25],
        ["rows", 9_007_199_254_740_993n],
      ]),
      at: t + 60_420,
    }),
  ),
  "t11-s2-occurrence-advanced.bin": record(
    11,
    2,
    map({
      schedule_id: "purge-sessions",
      revision: 2,
      due_at: t + day,
      next_due_at: t + 2 * day,
      outcome: "delivered",
      active_job_id: 1004,
    }),
  ),
  "t12-s2-schedule-historical-checkpoint.bin": record(
    12,
    2,
    map({
      schedule_id: "nightly-digest",
      definition: cronDefinition,
      definition_revision: 1,
      revision: 4,
      registered_at: t,
      next_due_at: t + 10_800_000 + day,
      last_due_at: t + 10_800_000,
      cancelled_at: null,
      active_job_id: null,
    }),
  ),
  "t13-s2-schedule-checkpoint.bin": record(
    13,
    2,
    map({
      schedule_id: "purge-sessions",
      definition: everyDefinition,
      definition_revision: 1,
      revision: 3,
      registered_at: t,
      next_due_at: t + 3 * day,
      last_due_at: t + 2 * day,
      cancelled_at: null,
      active_job_ids: [1004, 1007],
      membership_complete: true,
    }),
  ),
  "mutation-schedule-registration.bin": record(
    8,
    1,
    map({
      events: [
        inner(
          13,
          2,
          map({
            schedule_id: "purge-sessions",
            definition: everyDefinition,
            definition_revision: 1,
            revision: 1,
            registered_at: t,
            next_due_at: t,
            last_due_at: null,
            cancelled_at: null,
            active_job_ids: [],
            membership_complete: true,
          }),
        ),
        inner(
          1,
          1,
          map({
            job_id: 1004,
            queue: "maintenance",
            worker: "PurgeSessions",
            args: null,
            priority: 9,
            max_attempts: 1,
            scheduled_at: t,
            inserted_at: t,
          }),
        ),
        inner(
          11,
          2,
          map({
            schedule_id: "purge-sessions",
            revision: 2,
            due_at: t,
            next_due_at: t + day,
            outcome: "delivered",
            active_job_id: 1004,
          }),
        ),
      ],
    }),
  ),
  "job-inserted-tricky-names.bin": record(
    1,
    1,
    map({
      job_id: 9_007_199_254_740_991,
      queue: "__proto__",
      worker: `${"é".repeat(127)}a`,
      args: new Map([["__proto__", "constructor"]]),
      priority: 9,
      max_attempts: 1000,
      scheduled_at: t + day,
      inserted_at: t,
    }),
  ),
  "refused-schema-mismatch-priority.bin": record(1, 1, new Map(jobInserted).set("priority", 12)),
  "refused-schema-mismatch-missing-key.bin": record(2, 1, map({ job_id: 1002 })),
  "refused-schema-mismatch-extra-key.bin": record(
    3,
    1,
    map({ job_id: 1001, at: t + 5, attempt: 1, worker: "SendWelcomeEmail" }),
  ),
  "refused-schema-mismatch-name-too-long.bin": record(
    1,
    1,
    new Map(jobInserted).set("queue", "é".repeat(128)),
  ),
  "refused-schema-mismatch-both-set.bin": record(
    13,
    2,
    map({
      schedule_id: "purge-sessions",
      definition: new Map(everyDefinition).set("cron", "0 * * * *"),
      definition_revision: 1,
      revision: 1,
      registered_at: t,
      next_due_at: t,
      last_due_at: null,
      cancelled_at: null,
      active_job_ids: [],
      membership_complete: true,
    }),
  ),
  "refused-schema-mismatch-not-ascending.bin": record(
    13,
    2,
    map({
      schedule_id: "purge-sessions",
      definition: everyDefinition,
      definition_revision: 1,
      revision: 3,
      registered_at: t,
      next_due_at: t + 3 * day,
      last_due_at: t + 2 * day,
      cancelled_at: null,
      active_job_ids: [1007, 1004],
      membership_complete: true,
    }),
  ),
  "refused-schema-mismatch-empty-mutation.bin": record(8, 1, map({ events: [] })),
  "refused-schema-mismatch-nested-record.bin": record(
    8,
    1,
    map({ events: [inner(7, 1, map({ part: 0, last_job_id: 0, jobs: [] }))] }),
  ),
  "refused-schema-mismatch-inner-event.bin": record(
    8,
    1,
    map({
      events: [inner(2, 1, map({ job_id: 1002, at: t })), inner(2, 1, map({ job_id: 0, at: t }))],
    }),
  ),
  "refused-unknown-event-14-2.bin": record(14, 2, map({ job_id: 1001, at: t })),
  "refused-unknown-event-1-2.bin": record(1, 2, jobInserted),
  "refused-unknown-event-inner-9-1.bin": record(
    8,
    1,
    map({ events: [inner(9, 1, map({ schedule_id: "x", revision: 1, at: t }))] }),
  ),
  "refused-beyond-safe-integer.bin": record(1, 1, new Map(jobInserted).set("job_id", 2n ** 60n)),
};

emitFixtures(directory, fixtures, process.argv.includes("--check"));
