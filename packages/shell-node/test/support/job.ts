/** Jobs for tests: a (1,1) of queue "q", worker "W", no args; and the job it makes. */
import { Event, Job } from "@tay/core";

/** The (1,1) of job `jobId` (queue "q", worker "W", no args, at 0). */
export const insertedEvent = (jobId: number, maxAttempts = 1): Event.JobInserted =>
  Event.jobInserted({
    jobId,
    queue: "q",
    worker: "W",
    args: null,
    priority: 0,
    maxAttempts,
    scheduledAt: 0,
    insertedAt: 0,
  });

/** A job just inserted (id 1, 3 attempts), for tests of one attempt's bookkeeping. */
export const insertedJob = (): Job.Job => Job.fromInserted(insertedEvent(1, 3));
