/**
 * Test vocabulary for schema 3 (EVENTS-V3.md): event fixtures that read like
 * its table rows, beside `Given.ts`'s for schemas 1 and 2.
 */
import { Event } from "@tay/core";
import { checkpointDefaults, definition, insertDefaults } from "./Given.js";

export const insertedV3 = (
  jobId: number,
  overrides: Partial<Omit<Event.JobInsertedV3, "_tag" | "jobId">> = {},
): Event.JobInsertedV3 =>
  Event.jobInsertedV3({
    jobId,
    ...insertDefaults,
    uniqueKey: null,
    uniquePeriodMs: null,
    timeoutMs: null,
    ...overrides,
  });

export const unique = (
  jobId: number,
  uniqueKey: string,
  overrides: Partial<Omit<Event.JobInsertedV3, "_tag" | "jobId" | "uniqueKey">> = {},
): Event.JobInsertedV3 => insertedV3(jobId, { uniqueKey, ...overrides });

export const redriven = (
  jobId: number,
  maxAttempts = 5,
  at = 0,
  reason: string | null = null,
): Event.JobRedriven => Event.jobRedriven({ jobId, at, maxAttempts, reason });

export const queueState = (
  queue: string,
  overrides: Partial<Omit<Event.QueueStateSet, "_tag" | "queue">> = {},
): Event.QueueStateSet =>
  Event.queueStateSet({
    queue,
    at: 0,
    paused: false,
    concurrency: null,
    rateLimit: null,
    ...overrides,
  });

export const definitionV3 = (
  overrides: Partial<Event.ScheduleDefinitionV3> = {},
): Event.ScheduleDefinitionV3 => ({
  ...definition(),
  timezone: "Europe/Berlin",
  catchUp: "once",
  catchUpWindowMs: null,
  ...overrides,
});

export const checkpointV3 = (
  scheduleId: string,
  overrides: Partial<Omit<Event.ScheduleCheckpointV3, "_tag" | "scheduleId">> = {},
): Event.ScheduleCheckpointV3 =>
  Event.scheduleCheckpointV3({
    scheduleId,
    definition: definitionV3(),
    ...checkpointDefaults,
    ...overrides,
  });
