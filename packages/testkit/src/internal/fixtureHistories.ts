/**
 * The histories of the golden fixture stores, written out by hand (never
 * generated): what they hold must not change when an arbitrary, a decider
 * or core's snapshot changes, because the committed stores are
 * compatibility anchors. Times count seconds from `fixtureEpochMs`.
 */
import { Event, type Value } from "@tay/core";

/** 2023-11-14T22:13:20Z: the creation time of every fixture store, and time 0 of its events. */
export const fixtureEpochMs = 1_700_000_000_000;

/** `seconds` after `fixtureEpochMs`, in ms. */
export const at = (seconds: number): number => fixtureEpochMs + seconds * 1000;

const minuteMs = 60_000;

/** A value of every kind the payload encoding has (big integer, float, bytes, nesting, a tricky key). */
export const richArgs: Value.Value = new Map<string, Value.Value>([
  ["__proto__", "inert key"],
  ["big", 2n ** 60n],
  ["bytes", Uint8Array.of(0, 1, 254, 255)],
  ["flag", true],
  ["list", [1, -0.5, "é", null, false]],
  ["nested", new Map<string, Value.Value>([["depth", [[["three"]]]]])],
  ["to", "ops@example.com"],
]);

interface JobFields {
  readonly jobId: number;
  readonly queue?: string;
  readonly worker?: string;
  readonly args?: Value.Value;
  readonly priority?: number;
  readonly maxAttempts?: number;
  readonly insertedAt: number;
  readonly scheduledAt?: number;
}

const inserted = (fields: JobFields): Event.JobInserted =>
  Event.jobInserted({
    jobId: fields.jobId,
    queue: fields.queue ?? "default",
    worker: fields.worker ?? "send-email",
    args: fields.args ?? null,
    priority: fields.priority ?? 0,
    maxAttempts: fields.maxAttempts ?? 3,
    scheduledAt: fields.scheduledAt ?? fields.insertedAt,
    insertedAt: fields.insertedAt,
  });

const snapshotJob = (
  fields: JobFields & {
    readonly state: Event.JobState;
    readonly attempt?: number;
    readonly attemptedAt?: number | null;
    readonly finishedAt?: number | null;
    readonly errors?: ReadonlyArray<Event.JobError>;
  },
): Event.JobSnapshot => ({
  jobId: fields.jobId,
  queue: fields.queue ?? "default",
  worker: fields.worker ?? "send-email",
  args: fields.args ?? null,
  priority: fields.priority ?? 0,
  maxAttempts: fields.maxAttempts ?? 3,
  attempt: fields.attempt ?? 0,
  state: fields.state,
  insertedAt: fields.insertedAt,
  scheduledAt: fields.scheduledAt ?? fields.insertedAt,
  attemptedAt: fields.attemptedAt ?? null,
  finishedAt: fields.finishedAt ?? null,
  errors: fields.errors ?? [],
});

const nightly: Event.ScheduleDefinition = {
  queue: "default",
  worker: "report",
  args: null,
  priority: 5,
  maxAttempts: 1,
  everyMs: minuteMs,
  cron: null,
  overlap: "allow",
};

const legacyCleanup: Event.ScheduleDefinition = {
  queue: "default",
  worker: "cleanup",
  args: new Map<string, Value.Value>([["older_than_days", 30]]),
  priority: 9,
  maxAttempts: 5,
  everyMs: null,
  cron: "*/5 * * * *",
  overlap: "allow",
};

const weekly: Event.ScheduleDefinition = {
  queue: "mail",
  worker: "digest",
  args: null,
  priority: 1,
  maxAttempts: 2,
  everyMs: null,
  cron: "0 9 * * 1",
  overlap: "skip",
};

/** 2023-11-20T09:00:00Z, the Monday 09:00 after `fixtureEpochMs`. */
const nextMondayNineMs = 1_700_470_800_000;

/**
 * Every one of the 15 pairs, the legacy (7,2), (8,2) and (12,2) included:
 * a canonical base (two parts, a result, a checkpoint) and a tail that
 * walks jobs through every state and schedules through every event.
 */
export const allPairs: {
  readonly base: ReadonlyArray<Event.Event>;
  readonly tail: ReadonlyArray<Event.Event>;
} = {
  base: [
    Event.snapshotPart({
      part: 0,
      lastJobId: 5,
      jobs: [
        snapshotJob({
          jobId: 1,
          insertedAt: at(1),
          state: "completed",
          attempt: 1,
          attemptedAt: at(2),
          finishedAt: at(3),
        }),
        snapshotJob({ jobId: 2, insertedAt: at(4), state: "available", args: "plain text" }),
        snapshotJob({
          jobId: 3,
          insertedAt: at(5),
          scheduledAt: at(600),
          state: "retryable",
          attempt: 1,
          attemptedAt: at(6),
          errors: [{ attempt: 1, at: at(7), error: "timeout after 30 s" }],
        }),
      ],
    }),
    Event.snapshotPart({
      part: 1,
      lastJobId: 5,
      jobs: [
        snapshotJob({
          jobId: 4,
          queue: "mail",
          insertedAt: at(8),
          state: "executing",
          attempt: 1,
          attemptedAt: at(9),
        }),
        snapshotJob({
          jobId: 5,
          worker: "report",
          priority: 5,
          maxAttempts: 1,
          insertedAt: at(61),
          scheduledAt: at(60),
          state: "available",
        }),
      ],
    }),
    Event.resultRecorded({
      jobId: 1,
      result: new Map<string, Value.Value>([["sent", true]]),
      at: at(3),
    }),
    Event.scheduleCheckpoint({
      scheduleId: "nightly",
      definition: nightly,
      definitionRevision: 1,
      revision: 2,
      registeredAt: at(0),
      nextDueAt: at(120),
      lastDueAt: at(60),
      cancelledAt: null,
      activeJobIds: [5],
      membershipComplete: true,
    }),
  ],
  tail: [
    inserted({ jobId: 6, queue: "mail", args: richArgs, insertedAt: at(70) }),
    inserted({ jobId: 7, insertedAt: at(71), scheduledAt: at(90) }),
    Event.jobStarted({ jobId: 6, at: at(72), attempt: 1 }),
    Event.jobRetried({ jobId: 6, at: at(73), retryAt: at(80), error: "smtp 451: try later" }),
    Event.jobAvailable({ jobId: 6, at: at(80) }),
    Event.mutation([
      Event.jobFinished({ jobId: 4, at: at(81), outcome: "completed", error: null }),
      Event.resultRecorded({ jobId: 4, result: [1.5, "ok", 2n ** 62n], at: at(81) }),
    ]),
    Event.jobStarted({ jobId: 2, at: at(82), attempt: 1 }),
    Event.jobFinished({ jobId: 2, at: at(83), outcome: "discarded", error: "bad input" }),
    inserted({ jobId: 8, insertedAt: at(84) }),
    Event.jobCancelled({ jobId: 8, at: at(85), reason: "obsolete" }),
    Event.jobAvailable({ jobId: 7, at: at(90) }),
    Event.scheduleRegistered({
      scheduleId: "legacy-cleanup",
      revision: 1,
      definition: legacyCleanup,
      registeredAt: at(91),
      nextDueAt: at(100),
    }),
    Event.scheduleAdvanced({
      scheduleId: "legacy-cleanup",
      revision: 2,
      dueAt: at(100),
      nextDueAt: at(400),
    }),
    Event.scheduleHistoricalCheckpoint({
      scheduleId: "legacy-cleanup",
      definition: legacyCleanup,
      definitionRevision: 1,
      revision: 3,
      registeredAt: at(91),
      nextDueAt: at(400),
      lastDueAt: at(100),
      cancelledAt: null,
      activeJobId: 7,
    }),
    Event.mutation([
      inserted({
        jobId: 9,
        worker: "report",
        priority: 5,
        maxAttempts: 1,
        insertedAt: at(121),
        scheduledAt: at(120),
      }),
      Event.occurrenceAdvanced({
        scheduleId: "nightly",
        revision: 3,
        dueAt: at(120),
        nextDueAt: at(180),
        outcome: "delivered",
        activeJobId: 9,
      }),
    ]),
    Event.occurrenceAdvanced({
      scheduleId: "legacy-cleanup",
      revision: 4,
      dueAt: at(400),
      nextDueAt: at(700),
      outcome: "skipped",
      activeJobId: null,
    }),
    Event.scheduleCheckpoint({
      scheduleId: "weekly-digest",
      definition: weekly,
      definitionRevision: 1,
      revision: 1,
      registeredAt: at(402),
      nextDueAt: nextMondayNineMs,
      lastDueAt: null,
      cancelledAt: null,
      activeJobIds: [],
      membershipComplete: true,
    }),
    Event.scheduleCancelled({ scheduleId: "weekly-digest", revision: 2, at: at(403) }),
    Event.jobStarted({ jobId: 5, at: at(404), attempt: 1 }),
    Event.jobFinished({ jobId: 5, at: at(405), outcome: "completed", error: null }),
    Event.resultRecorded({ jobId: 5, result: "report.pdf", at: at(405) }),
    inserted({ jobId: 10, insertedAt: at(406), scheduledAt: at(1000) }),
    Event.jobStarted({ jobId: 6, at: at(407), attempt: 2 }),
  ],
};

const hourly: Event.ScheduleDefinition = {
  queue: "default",
  worker: "sync",
  args: null,
  priority: 2,
  maxAttempts: 3,
  everyMs: 60 * minuteMs,
  cron: null,
  overlap: "skip",
};

const dailyReport: Event.ScheduleDefinition = {
  queue: "reports",
  worker: "daily",
  args: new Map<string, Value.Value>([["format", "csv"]]),
  priority: 4,
  maxAttempts: 1,
  everyMs: null,
  cron: "30 6 * * *",
  overlap: "allow",
};

/**
 * A third generation after compactions that dropped jobs 18, 19 and 21
 * (last_job_id stays 21): three snapshot parts, two results, two
 * checkpoints (one cancelled schedule), then a short tail.
 */
export const compacted: {
  readonly base: ReadonlyArray<Event.Event>;
  readonly tail: ReadonlyArray<Event.Event>;
} = {
  base: [
    Event.snapshotPart({
      part: 0,
      lastJobId: 21,
      jobs: [
        snapshotJob({ jobId: 11, insertedAt: at(10), state: "available" }),
        snapshotJob({
          jobId: 12,
          insertedAt: at(11),
          state: "completed",
          attempt: 2,
          attemptedAt: at(20),
          finishedAt: at(21),
          errors: [{ attempt: 1, at: at(15), error: "connection reset" }],
        }),
        snapshotJob({ jobId: 13, insertedAt: at(12), scheduledAt: at(5000), state: "scheduled" }),
        snapshotJob({
          jobId: 14,
          queue: "reports",
          insertedAt: at(13),
          state: "cancelled",
          finishedAt: at(14),
        }),
      ],
    }),
    Event.snapshotPart({
      part: 1,
      lastJobId: 21,
      jobs: [
        snapshotJob({
          jobId: 15,
          insertedAt: at(16),
          state: "executing",
          attempt: 1,
          attemptedAt: at(17),
        }),
        snapshotJob({
          jobId: 16,
          args: richArgs,
          insertedAt: at(18),
          state: "completed",
          attempt: 1,
          attemptedAt: at(19),
          finishedAt: at(22),
        }),
        snapshotJob({
          jobId: 17,
          maxAttempts: 1,
          insertedAt: at(23),
          state: "discarded",
          attempt: 1,
          attemptedAt: at(24),
          finishedAt: at(25),
          errors: [{ attempt: 1, at: at(25), error: "invalid address" }],
        }),
      ],
    }),
    Event.snapshotPart({
      part: 2,
      lastJobId: 21,
      jobs: [
        snapshotJob({
          jobId: 20,
          worker: "sync",
          priority: 2,
          insertedAt: at(3601),
          scheduledAt: at(3600),
          state: "available",
        }),
      ],
    }),
    Event.resultRecorded({ jobId: 12, result: 42, at: at(21) }),
    Event.resultRecorded({ jobId: 16, result: Uint8Array.of(0xca, 0xfe), at: at(22) }),
    Event.scheduleCheckpoint({
      scheduleId: "daily-report",
      definition: dailyReport,
      definitionRevision: 1,
      revision: 2,
      registeredAt: at(0),
      nextDueAt: at(29_800),
      lastDueAt: null,
      cancelledAt: at(30),
      activeJobIds: [],
      membershipComplete: true,
    }),
    Event.scheduleCheckpoint({
      scheduleId: "hourly-sync",
      definition: hourly,
      definitionRevision: 3,
      revision: 7,
      registeredAt: at(0),
      nextDueAt: at(7200),
      lastDueAt: at(3600),
      cancelledAt: null,
      activeJobIds: [20],
      membershipComplete: true,
    }),
  ],
  tail: [
    inserted({ jobId: 22, queue: "reports", insertedAt: at(3700) }),
    Event.jobStarted({ jobId: 11, at: at(3701), attempt: 1 }),
    Event.mutation([
      Event.jobFinished({ jobId: 11, at: at(3702), outcome: "completed", error: null }),
      Event.resultRecorded({ jobId: 11, result: null, at: at(3702) }),
    ]),
    Event.jobStarted({ jobId: 20, at: at(3703), attempt: 1 }),
    Event.jobRetried({ jobId: 20, at: at(3704), retryAt: at(3764), error: "upstream 503" }),
  ],
};

/**
 * A first generation long enough for several segments: 16 jobs inserted,
 * 12 started, 8 completed, 2 retried, 1 discarded, 1 cancelled.
 */
export const multiSegment: ReadonlyArray<Event.Event> = [
  ...Array.from({ length: 16 }, (_, index) =>
    inserted({
      jobId: index + 1,
      queue: index % 2 === 0 ? "default" : "mail",
      args: new Map<string, Value.Value>([["n", index + 1]]),
      insertedAt: at(index),
    }),
  ),
  ...Array.from({ length: 12 }, (_, index) =>
    Event.jobStarted({ jobId: index + 1, at: at(100 + index), attempt: 1 }),
  ),
  ...Array.from({ length: 8 }, (_, index) =>
    Event.jobFinished({ jobId: index + 1, at: at(200 + index), outcome: "completed", error: null }),
  ),
  Event.jobRetried({ jobId: 9, at: at(300), retryAt: at(360), error: "rate limited" }),
  Event.jobRetried({ jobId: 10, at: at(301), retryAt: at(361), error: "rate limited" }),
  Event.jobFinished({ jobId: 11, at: at(302), outcome: "discarded", error: "permanent failure" }),
  Event.jobCancelled({ jobId: 13, at: at(303), reason: null }),
];

/** Eight inserts, the base of every refusal fixture (segments of 3, 3 and 2 records). */
export const small: ReadonlyArray<Event.Event> = Array.from({ length: 8 }, (_, index) =>
  inserted({ jobId: index + 1, args: `job ${index + 1}`, insertedAt: at(index) }),
);
