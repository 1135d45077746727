/**
 * Commands issued together travel together. Every command of one kind
 * (inserts, ends of attempts) that a client's callers issue before the
 * event loop's next check phase goes in one batch request (each command
 * accepted or refused alone, one durable write), and each caller gets its
 * own job or its own error, as if it had sent its command alone: the
 * server would have decided them in one drain anyway (its requests of one
 * poll phase are gathered), so the answers are the same and only the HTTP
 * exchanges are fewer. A lone command still goes on its own route.
 */
import { setImmediate } from "node:timers";
import type { Job } from "@tay/core";
import * as Shape from "../Shape.js";
import { BadResponse, serverError, type Transport } from "../Transport.js";
import * as Wire from "../Wire.js";

/** Commands one batch request carries at most (the server takes 10,000). */
export const commandsPerBatchMax = 1_000;

/** Body bytes one batch request carries at most (the server takes 4 MiB). */
export const batchBytesMax = 1024 * 1024;

/** A command waiting for its turn's batch. */
export interface Command {
  /** Its JSON text as a member of the batch's list. */
  readonly item: string;
  /** Its own route and body, when it goes alone. */
  readonly route: string;
  readonly body: string;
}

interface Queued extends Command {
  readonly resolve: (job: Job.Job) => void;
  readonly reject: (error: unknown) => void;
}

/** Where a kind of command goes in batches: the route and the list's member name. */
export interface BatchRoute {
  readonly route: string;
  readonly member: string;
  /** Headers of every request (a worker session's id), read when it is sent; undefined: none. */
  readonly headers: () => Record<string, string> | undefined;
}

const noOptions = {};

const jobAnswer = Shape.struct({ job: Wire.job });

const outcome = Shape.struct({
  job: Shape.optional(Wire.job),
  error: Shape.optional(Shape.record),
});
const batchAnswer = Shape.struct({ results: Shape.array(outcome) });

/** The commands of one kind of one client, waiting for the next check phase. */
export class Batches {
  private queued: Array<Queued> = [];

  constructor(
    private readonly transport: Transport,
    private readonly batch: BatchRoute,
  ) {}

  /** Sends `command` with the others of this turn; settles with its own answer. */
  add(command: Command): Promise<Job.Job> {
    return new Promise((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(this.send);
      this.queued.push({ ...command, resolve, reject });
    });
  }

  private readonly send = (): void => {
    const queued = this.queued;
    this.queued = [];
    const headers = this.batch.headers();
    for (let start = 0; start < queued.length; ) {
      let bytes = 0;
      let end = start;
      while (end < queued.length && end - start < commandsPerBatchMax) {
        bytes += (queued[end]?.item.length ?? 0) + 1;
        if (end > start && bytes > batchBytesMax) break;
        end += 1;
      }
      const part = queued.slice(start, end);
      if (part.length === 1 && part[0] !== undefined) this.one(part[0], headers);
      else this.many(part, headers);
      start = end;
    }
  };

  private one(queued: Queued, headers: Record<string, string> | undefined): void {
    this.transport
      .jsonText(
        "POST",
        queued.route,
        queued.body,
        jobAnswer,
        headers === undefined ? noOptions : { headers },
      )
      .then((answer) => queued.resolve(answer.job), queued.reject);
  }

  private many(part: ReadonlyArray<Queued>, headers: Record<string, string> | undefined): void {
    const { route, member } = this.batch;
    const text = `{"${member}":[${part.map((queued) => queued.item).join(",")}]}`;
    this.transport
      .jsonText("POST", route, text, batchAnswer, headers === undefined ? noOptions : { headers })
      .then(
        ({ results }) => {
          if (results.length !== part.length) {
            const detail = `${results.length} results for ${part.length} commands`;
            for (const queued of part) queued.reject(new BadResponse(route, detail));
            return;
          }
          for (const [index, queued] of part.entries()) settle(route, queued, results[index]);
        },
        (error: unknown) => {
          for (const queued of part) queued.reject(error);
        },
      );
  }
}

/** One command's result of a batch: its job, or its own error as its lone route would say it. */
const settle = (
  route: string,
  queued: Queued,
  result: Shape.Decoded<typeof outcome> | undefined,
): void => {
  const error = result?.error;
  if (result?.job !== undefined) queued.resolve(result.job);
  else if (error === undefined)
    queued.reject(new BadResponse(route, "a result with neither job nor error"));
  else
    queued.reject(
      serverError({ error }, queued.route, typeof error.status === "number" ? error.status : 500),
    );
};
