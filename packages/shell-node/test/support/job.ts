/** A job just inserted (id 1, queue "q", worker "W", no args), for tests of one attempt's bookkeeping. */
import { Event, Job } from "@tay/core";

export const insertedJob = (): Job.Job =>
  Job.fromInserted(
    Event.jobInserted({
      jobId: 1,
      queue: "q",
      worker: "W",
      args: null,
      priority: 0,
      maxAttempts: 3,
      scheduledAt: 0,
      insertedAt: 0,
    }),
  );
