/**
 * Ends of attempts issued together travel together (`batches.ts`): the
 * completes and fails of one turn (a worker's handlers that finished
 * together) go as one `/v1/end-batch`, a lone one as `/v1/complete` or
 * `/v1/fail`. Each is answered on its own: a `StaleAttempt` of one refuses
 * that one only.
 *
 * An end the server would refuse as a request (`InvalidRequest`: a job id
 * or attempt that is no positive integer, a backoff of the wrong shape)
 * would refuse the whole batch, so it never joins one: it goes alone and
 * gets the server's own refusal.
 */
import { Limits } from "@tay/core";
import type { Command } from "./batches.js";
import { integerIn } from "./inserts.js";

/** The route of an end alone, and its member name in a batch. */
export type EndKind = "complete" | "fail";

const isNumber = (value: unknown): boolean => typeof value === "number" && Number.isFinite(value);

/** Whether the server's request check passes an end's fields (its result was checked when encoded). */
export const endable = (fields: {
  readonly jobId: unknown;
  readonly attempt?: unknown;
  readonly error?: unknown;
  readonly discard?: unknown;
  readonly backoff?: unknown;
}): boolean =>
  integerIn(fields.jobId, Limits.idMin, Limits.idMax) &&
  fields.jobId !== undefined &&
  integerIn(fields.attempt, 1, Number.MAX_SAFE_INTEGER) &&
  (fields.error === undefined || typeof fields.error === "string") &&
  (fields.discard === undefined || typeof fields.discard === "boolean") &&
  (fields.backoff === undefined ||
    (typeof fields.backoff === "object" &&
      fields.backoff !== null &&
      "baseMs" in fields.backoff &&
      "factor" in fields.backoff &&
      "capMs" in fields.backoff &&
      integerIn(fields.backoff.baseMs, 0, Number.MAX_SAFE_INTEGER) &&
      fields.backoff.baseMs !== undefined &&
      isNumber(fields.backoff.factor) &&
      integerIn(fields.backoff.capMs, 0, Number.MAX_SAFE_INTEGER) &&
      fields.backoff.capMs !== undefined));

/** An end (`text`: its body as `/v1/complete` or `/v1/fail` takes it) as a batch member. */
export const endCommand = (kind: EndKind, text: string): Command => ({
  item: `{"${kind}":${text}}`,
  route: `/v1/${kind}`,
  body: text,
});
