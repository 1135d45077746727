/**
 * The routes that end a remotely claimed attempt: `/v1/complete`,
 * `/v1/fail`, and `/v1/end-batch`, which takes many completes and fails in
 * one request. The batch's ends are issued in one turn, so they share one
 * drain and one durable write, and each is answered on its own: a
 * `StaleAttempt` of one (its lease expired and the job moved on) refuses
 * that one and no other, by the same fencing as a lone complete.
 *
 * An end that names the session holding the attempt (`x-tay-session`)
 * marks its lease first, so the session's stream is not told an end its
 * holder asked for and learns from the answer (`Leases.markEnding`).
 */
import type { Job } from "@tay/core";
import { Wire } from "@tay/client";
import type { Lease } from "./leases.js";
import * as Requests from "./requests.js";
import * as Schemas from "./schemas.js";
import { checked, definedOnly, errorOf, type Route, type Served, sessionOf } from "./routes.js";

type End = Requests.End;

/** The job and attempt an end concerns. */
const target = (end: End): { readonly jobId: number; readonly attempt: number | undefined } =>
  "complete" in end ? end.complete : end.fail;

const issue = (served: Served, end: End): Promise<Job.Job> => {
  if ("complete" in end) {
    const { jobId, result, attempt } = end.complete;
    return served.engine.promises.complete(jobId, result, attempt === undefined ? {} : { attempt });
  }
  const { jobId, error, ...options } = end.fail;
  return served.engine.promises.fail(jobId, error, definedOnly(options));
};

/**
 * Ends one attempt: the lease marked when its holder asks, the command
 * issued, the lease released once the end committed (a refusal or a store
 * failure keeps it, unmarked: the lease still runs out as before).
 */
const endAttempt = async (
  served: Served,
  end: End,
  holder: string | undefined,
): Promise<Job.Job> => {
  const { jobId, attempt } = target(end);
  const marked: Lease | undefined =
    holder === undefined ? undefined : served.leases.markEnding(jobId, attempt, holder);
  try {
    const job = await issue(served, end);
    served.leases.release(jobId, attempt);
    return job;
  } catch (error) {
    served.leases.unmark(marked);
    throw error;
  }
};

/** Ends that one request may carry. */
export const endsPerRequestMax = Requests.jobsPerRequestMax;

export const endings: ReadonlyArray<Route> = [
  {
    method: "POST",
    path: "/v1/complete",
    summary: "complete an executing job (only that attempt, with attempt)",
    body: "{ jobId, result?, attempt? }",
    handle: async (call, served) => {
      const complete = checked(call, Requests.complete, call.body, "body");
      const job = await endAttempt(served, { complete }, sessionOf(call, served));
      return { job: Wire.jobJson(job) };
    },
  },
  {
    method: "POST",
    path: "/v1/fail",
    summary: "fail an executing job's attempt: retried after the backoff, or discarded",
    body: "{ jobId, error, attempt?, discard?, backoff? }",
    handle: async (call, served) => {
      const fail = checked(call, Requests.fail, call.body, "body");
      const job = await endAttempt(served, { fail }, sessionOf(call, served));
      return { job: Wire.jobJson(job) };
    },
  },
  {
    method: "POST",
    path: "/v1/end-batch",
    summary:
      "complete or fail many attempts, each answered on its own (a stale one refuses only itself), one durability wait",
    body: "{ ends: [{ complete: { jobId, result?, attempt? } } | { fail: { jobId, error, attempt?, discard?, backoff? } }] }",
    schema: Schemas.endBatch,
    handle: async (call, served) => {
      const { ends } = checked(call, Requests.endBatch, call.body, "body");
      const holder = sessionOf(call, served);
      // Issued in one turn, the ends share one drain: one batch, one write.
      const settled = await Promise.allSettled(ends.map((end) => endAttempt(served, end, holder)));
      return {
        results: settled.map((outcome) =>
          outcome.status === "fulfilled"
            ? { job: Wire.jobJson(outcome.value) }
            : { error: errorOf(outcome.reason) },
        ),
      };
    },
  },
];
