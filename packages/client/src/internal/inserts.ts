/**
 * Inserts issued together travel together. Every `insert` a client's
 * callers issue before the event loop's next check phase goes in one
 * `/v1/insert-batch` request (each job accepted or refused alone, one
 * durable write), and each caller gets its own job or its own error, as
 * if it had sent `/v1/insert`: the server would have decided them in one
 * drain anyway (its requests of one poll phase are gathered), so the
 * answers are the same and only the HTTP exchanges are fewer. A lone
 * insert still goes as `/v1/insert`.
 *
 * A job the server would refuse as a request (`InvalidRequest`: a field of
 * the wrong type, a priority out of range) would refuse the whole batch,
 * so such a job never joins one: it goes alone and gets the server's own
 * refusal.
 */
import { setImmediate } from "node:timers";
import { type Commands, type Job, Limits } from "@tay/core";
import * as Shape from "../Shape.js";
import { BadResponse, serverError, type Transport } from "../Transport.js";
import * as Wire from "../Wire.js";

/** Jobs one batch request carries at most (the server takes 10,000). */
export const jobsPerBatchMax = 1_000;

/** Body bytes one batch request carries at most (the server takes 4 MiB). */
export const batchBytesMax = 1024 * 1024;

interface Queued {
  /** The job's JSON text (`{"queue": ...}`). */
  readonly text: string;
  readonly resolve: (job: Job.Job) => void;
  readonly reject: (error: unknown) => void;
}

const jobAnswer = Shape.struct({ job: Wire.job });

const outcome = Shape.struct({
  job: Shape.optional(Wire.job),
  error: Shape.optional(Shape.record),
});
const batchAnswer = Shape.struct({ results: Shape.array(outcome) });

const integerIn = (value: unknown, min: number, max: number): boolean =>
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

/** The inserts of one client waiting for the next check phase. */
export class Inserts {
  private queued: Array<Queued> = [];

  constructor(private readonly transport: Transport) {}

  /** Sends `text` (a job's JSON) with the others of this turn; settles with its own answer. */
  add(text: string): Promise<Job.Job> {
    return new Promise((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(this.send);
      this.queued.push({ text, resolve, reject });
    });
  }

  private readonly send = (): void => {
    const queued = this.queued;
    this.queued = [];
    for (let start = 0; start < queued.length; ) {
      let bytes = 0;
      let end = start;
      while (end < queued.length && end - start < jobsPerBatchMax) {
        bytes += (queued[end]?.text.length ?? 0) + 1;
        if (end > start && bytes > batchBytesMax) break;
        end += 1;
      }
      const part = queued.slice(start, end);
      if (part.length === 1 && part[0] !== undefined) this.one(part[0]);
      else this.many(part);
      start = end;
    }
  };

  private one(queued: Queued): void {
    this.transport
      .jsonText("POST", "/v1/insert", `{"job":${queued.text}}`, jobAnswer)
      .then((answer) => queued.resolve(answer.job), queued.reject);
  }

  private many(part: ReadonlyArray<Queued>): void {
    const text = `{"jobs":[${part.map((queued) => queued.text).join(",")}]}`;
    this.transport.jsonText("POST", "/v1/insert-batch", text, batchAnswer).then(
      ({ results }) => {
        if (results.length !== part.length) {
          const detail = `${results.length} results for ${part.length} jobs`;
          for (const queued of part) queued.reject(new BadResponse("/v1/insert-batch", detail));
          return;
        }
        for (const [index, queued] of part.entries()) settle(queued, results[index]);
      },
      (error: unknown) => {
        for (const queued of part) queued.reject(error);
      },
    );
  }
}

/** One job's result of a batch: its job, or its own error as `/v1/insert` would have said it. */
const settle = (queued: Queued, result: Shape.Decoded<typeof outcome> | undefined): void => {
  const error = result?.error;
  if (result?.job !== undefined) queued.resolve(result.job);
  else if (error === undefined)
    queued.reject(new BadResponse("/v1/insert-batch", "a result with neither job nor error"));
  else
    queued.reject(
      serverError({ error }, "/v1/insert", typeof error.status === "number" ? error.status : 500),
    );
};
