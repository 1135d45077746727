/**
 * A remote worker's progress reports (core's `Progress`), sent to the
 * server as handlers make them. At most one request per job is on its
 * way; reports made meanwhile wait, and each replaces the one waiting
 * before it, since only the latest counts: a handler that reports in a
 * tight loop costs a request per round trip, not one per call. A
 * replaced report settles with the one that replaced it.
 */
import { type Client, Transport } from "@tay/client";
import { Progress, type Value } from "@tay/core";
import * as Either from "fp-ts/lib/Either.js";
import { Rejected } from "../../engine/Engine.js";

interface Waiting {
  attempt: number;
  value: Value.Value;
  readonly settled: Array<{
    readonly resolve: () => void;
    readonly reject: (error: unknown) => void;
  }>;
}

/**
 * Whether the server refused the report itself (a 4xx other than 408 and
 * 429, such as `StaleAttempt`): the handler is told. A server that could
 * not be reached or could not serve it now is not a reason to fail an
 * attempt: that report is lost, and the next one may pass.
 */
const refusedByServer = (error: unknown): boolean =>
  error instanceof Transport.ServerError && Transport.refusedForGood(error);

/**
 * `reportProgress` for a worker on `client`: resolves once the server
 * holds the report (or could not be reached), rejects with the server's
 * refusal, and at once, sending nothing, with `Rejected` for a value no
 * attempt could hold (what the engine would refuse of it).
 */
export const progressReports = (client: Pick<Client.Client, "reportProgress">) => {
  const inFlight = new Set<number>();
  const waiting = new Map<number, Waiting>();
  const send = (jobId: number, attempt: number, value: Value.Value): Promise<void> => {
    inFlight.add(jobId);
    const sent = client.reportProgress(jobId, attempt, value).then(
      () => undefined,
      (error: unknown) => {
        if (refusedByServer(error)) throw error;
      },
    );
    return sent.finally(() => {
      inFlight.delete(jobId);
      const next = waiting.get(jobId);
      if (next === undefined) return;
      waiting.delete(jobId);
      send(jobId, next.attempt, next.value).then(
        () => {
          for (const waiter of next.settled) waiter.resolve();
        },
        (error: unknown) => {
          for (const waiter of next.settled) waiter.reject(error);
        },
      );
    });
  };
  return (jobId: number, attempt: number, value: unknown): Promise<void> => {
    const checked = Progress.checkValue(value);
    if (Either.isLeft(checked)) {
      return Promise.reject(new Rejected({ command: "ReportProgress", rejection: checked.left }));
    }
    if (!inFlight.has(jobId)) return send(jobId, attempt, checked.right.value);
    return new Promise((resolve, reject) => {
      const next = waiting.get(jobId);
      if (next === undefined) {
        waiting.set(jobId, { attempt, value: checked.right.value, settled: [{ resolve, reject }] });
        return;
      }
      next.attempt = attempt;
      next.value = checked.right.value;
      next.settled.push({ resolve, reject });
    });
  };
};
