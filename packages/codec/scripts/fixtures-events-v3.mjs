#!/usr/bin/env node
/**
 * Writes the schema-3 event fixtures of packages/codec/test/fixtures/events-v3/
 * and their SHA256SUMS, deterministically (fixed times, ids and contents).
 *
 * Each fixture is one complete Record v1 whose payload is an event of
 * EVENTS-V3.md: realistic events of every schema-3 pair, a mutation of them,
 * the two test vectors of the specification, and payloads the codec must
 * refuse. As for the v1/v2 fixtures (fixtures-events.mjs), payload values and
 * records are laid out here by hand from FORMAT.md, independently of the
 * codec's encoders, and the layout first reproduces FORMAT.md's record vector
 * and both EVENTS-V3.md vectors. The test reads the committed files and never
 * runs this.
 *
 *   node packages/codec/scripts/fixtures-events-v3.mjs          # (re)write
 *   node packages/codec/scripts/fixtures-events-v3.mjs --check  # compare only
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { emitFixtures } from "./lib/fixtureFiles.mjs";
import { encode, frame, hex, map } from "./lib/handLayout.mjs";

const directory = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "test",
  "fixtures",
  "events-v3",
);

// EVENTS-V3.md's two test vectors, reproduced by the same hand layout.
const queueVector =
  "5441590001180003000000000000000100000081649890e608000000050000000261740300000000000000000000000b636f6e63757272656e6379030000000000000004000000067061757365640200000005717565756505000000046d61696c0000000a726174655f6c696d6974080000000200000005636f756e7403000000000000000a000000067065725f6d730300000000000003e8a9862999";
const redriveVector =
  "544159000114000300000000000000020000004b2d50df000800000004000000026174030000000000000000000000066a6f625f69640300000000000000010000000c6d61785f617474656d70747303000000000000000500000006726561736f6e0072adb29c";
const queueVectorPayload = new Map([
  ["queue", "mail"],
  ["at", 0],
  ["paused", true],
  ["concurrency", 4],
  [
    "rate_limit",
    new Map([
      ["count", 10],
      ["per_ms", 1000],
    ]),
  ],
]);
const redriveVectorPayload = new Map([
  ["job_id", 1],
  ["at", 0],
  ["max_attempts", 5],
  ["reason", null],
]);
if (hex(frame(24, 3, 1, encode(queueVectorPayload))) !== queueVector) {
  throw new Error("the hand layout does not reproduce EVENTS-V3.md's (24,3) vector");
}
if (hex(frame(20, 3, 2, encode(redriveVectorPayload))) !== redriveVector) {
  throw new Error("the hand layout does not reproduce EVENTS-V3.md's (20,3) vector");
}

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

const invoiceInserted = map({
  job_id: 2001,
  queue: "billing",
  worker: "SendInvoice",
  args: map({ invoice_id: 9_120, currency: "EUR" }),
  priority: 3,
  max_attempts: 5,
  scheduled_at: t,
  inserted_at: t,
  unique_key: "invoice:9120",
  unique_period_ms: day,
  timeout_ms: 30_000,
});

const berlinDefinition = map({
  queue: "reports",
  worker: "NightlyDigest",
  args: map({ format: "pdf" }),
  priority: 5,
  max_attempts: 3,
  every_ms: null,
  cron: "30 2 * * *",
  overlap: "skip",
  timezone: "Europe/Berlin",
  catch_up: "all",
  catch_up_window_ms: 6 * 3_600_000,
});

const checkpointV3 = map({
  schedule_id: "nightly-digest-berlin",
  definition: berlinDefinition,
  definition_revision: 1,
  revision: 1,
  registered_at: t,
  next_due_at: t + 5_400_000,
  last_due_at: null,
  cancelled_at: null,
  active_job_ids: [],
  membership_complete: true,
});

const snapshotJob = (fields) =>
  map({
    job_id: 2001,
    queue: "billing",
    worker: "SendInvoice",
    args: map({ invoice_id: 9_120, currency: "EUR" }),
    priority: 3,
    max_attempts: 5,
    attempt: 1,
    state: "executing",
    inserted_at: t,
    scheduled_at: t,
    attempted_at: t + 10,
    finished_at: null,
    errors: [],
    unique_key: "invoice:9120",
    unique_period_ms: day,
    timeout_ms: 30_000,
    ...fields,
  });

const fixtures = {
  "vector-t24-s3-queue-state.bin": Uint8Array.from(Buffer.from(queueVector, "hex")),
  "vector-t20-s3-redriven.bin": Uint8Array.from(Buffer.from(redriveVector, "hex")),
};
// The vectors carry sequences 1 and 2; the others follow.
sequence = 2;
Object.assign(fixtures, {
  "t01-s3-job-inserted.bin": record(1, 3, invoiceInserted),
  "t01-s3-job-inserted-plain.bin": record(
    1,
    3,
    map({
      job_id: 2002,
      queue: "__proto__",
      worker: "Resize",
      args: null,
      priority: 0,
      max_attempts: 1,
      scheduled_at: t + day,
      inserted_at: t,
      unique_key: null,
      unique_period_ms: null,
      timeout_ms: 9_007_199_254_740_991,
    }),
  ),
  "t20-s3-redriven.bin": record(
    20,
    3,
    map({ job_id: 2001, at: t + day, max_attempts: 10, reason: "SMTP relay fixed — réessayer" }),
  ),
  "t24-s3-queue-state.bin": record(
    24,
    3,
    map({ queue: "billing", at: t, paused: false, concurrency: null, rate_limit: null }),
  ),
  "t24-s3-queue-state-limits.bin": record(
    24,
    3,
    map({
      queue: "billing",
      at: t + 1,
      paused: true,
      concurrency: 9_007_199_254_740_991,
      rate_limit: map({ count: 10_000, per_ms: 86_400_000 }),
    }),
  ),
  "t13-s3-schedule-checkpoint.bin": record(13, 3, checkpointV3),
  "t07-s3-snapshot-part.bin": record(
    7,
    3,
    map({
      part: 0,
      last_job_id: 2003,
      jobs: [
        snapshotJob({}),
        snapshotJob({
          job_id: 2003,
          queue: "default",
          worker: "Resize",
          args: null,
          priority: 0,
          max_attempts: 1,
          attempt: 0,
          state: "available",
          attempted_at: null,
          unique_key: null,
          unique_period_ms: null,
          timeout_ms: null,
        }),
      ],
    }),
  ),
  "t08-s1-mutation-v3.bin": record(
    8,
    1,
    map({
      events: [
        inner(
          24,
          3,
          map({ queue: "billing", at: t, paused: true, concurrency: 2, rate_limit: null }),
        ),
        inner(1, 3, invoiceInserted),
        inner(20, 3, map({ job_id: 1999, at: t, max_attempts: 3, reason: null })),
        inner(13, 3, checkpointV3),
        inner(2, 1, map({ job_id: 1998, at: t })),
      ],
    }),
  ),
  "refused-v3-rate-limit-count.bin": record(
    24,
    3,
    map({
      queue: "billing",
      at: t,
      paused: false,
      concurrency: null,
      rate_limit: map({ count: 10_001, per_ms: 1_000 }),
    }),
  ),
  "refused-v3-rate-limit-per-ms.bin": record(
    24,
    3,
    map({
      queue: "billing",
      at: t,
      paused: false,
      concurrency: null,
      rate_limit: map({ count: 1, per_ms: 86_400_001 }),
    }),
  ),
  "refused-v3-concurrency-zero.bin": record(
    24,
    3,
    map({ queue: "billing", at: t, paused: false, concurrency: 0, rate_limit: null }),
  ),
  "refused-v3-unique-key-too-long.bin": record(
    1,
    3,
    new Map(invoiceInserted).set("unique_key", "é".repeat(128)),
  ),
  "refused-v3-missing-timeout.bin": record(
    1,
    3,
    new Map([...invoiceInserted].filter(([key]) => key !== "timeout_ms")),
  ),
  "refused-v3-catch-up-member.bin": record(
    13,
    3,
    new Map(checkpointV3).set("definition", new Map(berlinDefinition).set("catch_up", "never")),
  ),
  "refused-v3-v2-definition.bin": record(
    13,
    3,
    new Map(checkpointV3).set(
      "definition",
      new Map(
        [...berlinDefinition].filter(
          ([key]) => !["timezone", "catch_up", "catch_up_window_ms"].includes(key),
        ),
      ),
    ),
  ),
  "refused-v3-nested-snapshot.bin": record(
    8,
    1,
    map({ events: [inner(7, 3, map({ part: 0, last_job_id: 0, jobs: [] }))] }),
  ),
  "refused-v3-redrive-max-attempts.bin": record(
    20,
    3,
    map({ job_id: 1, at: 0, max_attempts: 1001, reason: null }),
  ),
  "refused-v3-unknown-20-1.bin": record(
    20,
    1,
    map({ job_id: 1, at: 0, max_attempts: 5, reason: null }),
  ),
});

emitFixtures(directory, fixtures, process.argv.includes("--check"));
