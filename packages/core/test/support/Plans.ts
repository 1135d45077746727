/**
 * Random command plans for property tests: each plan is data that becomes a
 * concrete command against the jobs and schedules that exist at that step
 * (so a plan can name "the 3rd executing job"), including some commands the
 * deciders must reject.
 */
import { Commands, type Event } from "@tay/core";
import fc from "fast-check";

/** What a plan needs to know about the current jobs and schedules. */
export interface World {
  readonly jobs: ReadonlyArray<{ readonly jobId: number; readonly state: Event.JobState }>;
  readonly schedules: ReadonlyArray<{ readonly scheduleId: string; readonly revision: number }>;
}

export type Plan = (world: World, now: number) => Commands.Command;

export const queues = ["alpha", "beta"] as const;
export const scheduleIds = ["s1", "s2", "s3"] as const;

const pick = <T>(items: ReadonlyArray<T>, index: number): T | undefined =>
  items.length === 0 ? undefined : items[index % items.length];

const jobIn = (world: World, states: ReadonlyArray<Event.JobState>, index: number): number =>
  pick(
    world.jobs.filter((job) => states.includes(job.state)),
    index,
  )?.jobId ?? 9_999;

const definitionOf = (
  queue: string,
  recurrence: { readonly everyMs: number | null; readonly cron: string | null },
  overlap: Event.Overlap,
): Event.ScheduleDefinition => ({
  queue,
  worker: "Recurring",
  args: new Map([["kind", "report"]]),
  priority: 1,
  maxAttempts: 2,
  everyMs: recurrence.everyMs,
  cron: recurrence.cron,
  overlap,
});

const recurrence = fc.constantFrom(
  { everyMs: 30, cron: null },
  { everyMs: 45, cron: null },
  { everyMs: null, cron: "* * * * *" },
  { everyMs: 30, cron: "* * * * *" },
);

const index = fc.nat({ max: 50 });

/** An arbitrary plan; `weights` tilt the mix. */
export const plan: fc.Arbitrary<Plan> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(
        fc.record({
          queue: fc.constantFrom(...queues),
          priority: fc.oneof(
            { weight: 12, arbitrary: fc.integer({ min: 0, max: 3 }) },
            { weight: 1, arbitrary: fc.constant(11) },
          ),
          delay: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })),
          maxAttempts: fc.integer({ min: 1, max: 3 }),
          args: fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 4 })),
        }),
        { minLength: 1, maxLength: 3 },
      )
      .map(
        (jobs): Plan =>
          (_, now) =>
            Commands.insertJobs({
              now,
              jobs: jobs.map((job) => ({
                queue: job.queue,
                worker: "Worker",
                args: job.args,
                priority: job.priority,
                maxAttempts: job.maxAttempts,
                scheduledAt: now + job.delay,
              })),
            }),
      ),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({ queue: fc.constantFrom(...queues), limit: fc.integer({ min: 1, max: 3 }) })
      .map(
        ({ queue, limit }): Plan =>
          (_, now) =>
            Commands.claimJobs({ now, queue, limit }),
      ),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({ at: index, result: fc.option(fc.string({ maxLength: 3 })), stale: fc.boolean() })
      .map(
        ({ at, result, stale }): Plan =>
          (world, now) => {
            const jobId = jobIn(world, stale ? ["completed", "available"] : ["executing"], at);
            return result === null
              ? Commands.completeJob({ now, jobId })
              : Commands.completeJob({ now, jobId, result });
          },
      ),
  },
  {
    weight: 3,
    arbitrary: fc.record({ at: index, discard: fc.boolean() }).map(
      ({ at, discard }): Plan =>
        (world, now) =>
          Commands.failJob({ now, jobId: jobIn(world, ["executing"], at), error: "boom", discard }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({ at: index, reason: fc.option(fc.constant("stop")) }).map(
      ({ at, reason }): Plan =>
        (world, now) =>
          Commands.cancelJob({
            now,
            jobId: pick(world.jobs, at)?.jobId ?? 1,
            reason,
          }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 50 }).map(
      (age): Plan =>
        (_, now) =>
          Commands.rescueJobs({
            now,
            startedBefore: Math.max(0, now - age),
            error: "orphaned",
            limit: 5,
          }),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.option(fc.integer({ min: 1, max: 4 })).map(
      (limit): Plan =>
        (_, now) =>
          limit === null
            ? Commands.makeDueAvailable({ now })
            : Commands.makeDueAvailable({ now, limit }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        scheduleId: fc.constantFrom(...scheduleIds),
        queue: fc.constantFrom(...queues),
        recurrence,
        overlap: fc.constantFrom<Event.Overlap>("allow", "skip"),
        expectation: fc.constantFrom("none", "current", "stale"),
      })
      .map(
        ({ scheduleId, queue, recurrence, overlap, expectation }): Plan =>
          (world, now) => {
            const current =
              world.schedules.find((schedule) => schedule.scheduleId === scheduleId)?.revision ?? 0;
            const definition = definitionOf(queue, recurrence, overlap);
            return expectation === "none"
              ? Commands.registerSchedule({ now, scheduleId, definition })
              : Commands.registerSchedule({
                  now,
                  scheduleId,
                  definition,
                  expectedRevision: expectation === "current" ? current : current + 1,
                });
          },
      ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...scheduleIds).map(
      (scheduleId): Plan =>
        (_, now) =>
          Commands.cancelSchedule({ now, scheduleId }),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.option(fc.integer({ min: 1, max: 2 })).map(
      (limit): Plan =>
        (_, now) =>
          limit === null ? Commands.tick({ now }) : Commands.tick({ now, limit }),
    ),
  },
);

/** A plan and the time that passes before it. */
export const step = fc.record({
  plan,
  elapsedMs: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 120_000 })),
});

/** A sequence of steps. */
export const steps = (maxLength: number) => fc.array(step, { maxLength, size: "max" });

/** The unique keys schema-3 plans use: few, so that they collide. */
export const uniqueKeys = ["u1", "u2"] as const;

/** The one rate limit plans set (a single value keeps the reference model naive). */
export const planRateLimit: Event.RateLimit = { count: 2, perMs: 100 };

/** Plans of the schema-3 commands (EVENTS-V3.md), some of them to be rejected. */
export const planV3: fc.Arbitrary<Plan> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .array(
        fc.record({
          queue: fc.constantFrom(...queues),
          uniqueKey: fc.option(fc.constantFrom(...uniqueKeys), { nil: undefined }),
          uniquePeriodMs: fc.option(fc.constantFrom(20, 200), { nil: undefined }),
          timeoutMs: fc.option(fc.constantFrom(10, 40), { nil: undefined }),
          maxAttempts: fc.integer({ min: 1, max: 3 }),
        }),
        { minLength: 1, maxLength: 3 },
      )
      .map(
        (jobs): Plan =>
          (_, now) =>
            Commands.insertJobs({
              now,
              jobs: jobs.map((job) => ({
                queue: job.queue,
                worker: "Unique",
                args: null,
                maxAttempts: job.maxAttempts,
                ...(job.uniqueKey === undefined ? {} : { uniqueKey: job.uniqueKey }),
                ...(job.uniqueKey === undefined || job.uniquePeriodMs === undefined
                  ? {}
                  : { uniquePeriodMs: job.uniquePeriodMs }),
                ...(job.timeoutMs === undefined ? {} : { timeoutMs: job.timeoutMs }),
              })),
            }),
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        at: index,
        maxAttempts: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
      })
      .map(
        ({ at, maxAttempts }): Plan =>
          (world, now) =>
            Commands.redriveJob({
              now,
              jobId: jobIn(world, ["discarded", "cancelled", "available"], at),
              reason: "again",
              ...(maxAttempts === undefined ? {} : { maxAttempts }),
            }),
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        queue: fc.constantFrom(...queues),
        paused: fc.option(fc.boolean(), { nil: undefined }),
        concurrency: fc.option(fc.constantFrom(null, 1, 2), { nil: undefined }),
        rateLimit: fc.option(fc.constantFrom(null, planRateLimit), { nil: undefined }),
      })
      .map(
        ({ queue, paused, concurrency, rateLimit }): Plan =>
          (_, now) =>
            Commands.setQueueState({
              now,
              queue,
              ...(paused === undefined ? {} : { paused }),
              ...(concurrency === undefined ? {} : { concurrency }),
              ...(rateLimit === undefined ? {} : { rateLimit }),
            }),
      ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 20 }).map(
      (graceMs): Plan =>
        (_, now) =>
          Commands.timeoutJobs({ now, graceMs, limit: 5 }),
    ),
  },
);

/** A step whose plan is of any command, schema 3 included. */
export const stepV3 = fc.record({
  plan: fc.oneof({ weight: 3, arbitrary: plan }, { weight: 1, arbitrary: planV3 }),
  elapsedMs: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 120_000 })),
});
