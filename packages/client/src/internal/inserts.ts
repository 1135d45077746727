/**
 * Inserts issued together travel together (`batches.ts`): the inserts of
 * one turn go as one `/v1/insert-batch`, a lone one as `/v1/insert`.
 *
 * A job the server would refuse as a request (`InvalidRequest`: a field of
 * the wrong type, a priority out of range) would refuse the whole batch,
 * so such a job never joins one: it goes alone and gets the server's own
 * refusal.
 */
import { type Commands, Limits } from "@tay/core";

/** Jobs one batch request carries at most (the server takes 10,000). */
export { commandsPerBatchMax as jobsPerBatchMax } from "./batches.js";

export const integerIn = (value: unknown, min: number, max: number): boolean =>
  value === undefined ||
  (typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max);

/**
 * Whether `job` may share a batch: the server's request check passes it (its
 * args were checked when encoded), and it has no unique key (a batch's
 * answers carry plain jobs, not the `duplicate` marker).
 */
export const batchable = (job: Commands.NewJob): boolean =>
  job.uniqueKey === undefined &&
  typeof job.queue === "string" &&
  typeof job.worker === "string" &&
  integerIn(job.priority, Limits.priorityMin, Limits.priorityMax) &&
  integerIn(job.maxAttempts, Limits.maxAttemptsMin, Limits.maxAttemptsMax) &&
  integerIn(job.scheduledAt, 0, Number.MAX_SAFE_INTEGER);

/** An insert as a batch member and as its lone request. */
export const insertCommand = (text: string) => ({
  item: text,
  route: "/v1/insert",
  body: `{"job":${text}}`,
});
