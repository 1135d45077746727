/**
 * The commands over many jobs (`Bulk`, docs/engine.md "Commands over many
 * jobs"): `retry-all` runs again the discarded (or cancelled) jobs of a
 * queue, `cancel-all` cancels what waits in one. Each job is the ordinary
 * command (`tay retry`, `tay cancel`), so a job changed meanwhile is
 * refused alone and listed; the output names the jobs changed. They run
 * where the other write commands run (`withWriter`): the store's engine,
 * its server, or PostgreSQL.
 */
import { Limits } from "@tay/core";
import { Bulk } from "@tay/shell-node";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { type Command, exitCodes, type Input, parsed, text } from "./command.js";
import * as Json from "./json.js";
import { line, lines } from "./Terminal.js";
import * as Text from "./text.js";
import { parseInteger } from "./values.js";
import { withWriter } from "./write.js";

/** `--state`: a comma-separated list of states out of `allowed`. */
const statesOf =
  <S extends string>(allowed: ReadonlyArray<S>) =>
  (value: string): Either.Either<ReadonlyArray<S>, string> => {
    const states: Array<S> = [];
    for (const name of value.split(",")) {
      const state = allowed.find((candidate) => candidate === name.trim());
      if (state === undefined) {
        return Either.left(`${JSON.stringify(name)} is not one of ${allowed.join(", ")}`);
      }
      states.push(state);
    }
    return Either.right(states);
  };

/** `--queue`, `--state` and `--limit` as a command over many jobs takes them. */
const bulkFilterOf = <S extends string>(input: Input, allowed: ReadonlyArray<S>) =>
  Effect.gen(function* () {
    const queue = text(input, "queue");
    const states = yield* parsed(input, "state", statesOf(allowed));
    const limit = yield* parsed(input, "limit", (value) =>
      parseInteger(value, 1, Number.MAX_SAFE_INTEGER),
    );
    return {
      ...(queue === undefined ? {} : { queue }),
      ...(states === undefined ? {} : { states }),
      ...(limit === undefined ? {} : { limit }),
    };
  });

/** Prints what a command over many jobs did: counts, the refused ones each on a line. */
const printBulk = (input: Input, verb: string, outcome: Bulk.BulkOutcome) => {
  if (input.json) {
    return line(
      Json.line({
        job_ids: [...outcome.jobIds],
        refused: outcome.refused.map((refusal) => ({
          job_id: refusal.jobId,
          reason: refusal.reason,
          message: refusal.message,
        })),
      }),
    );
  }
  const ids =
    outcome.jobIds.length === 0 ? "" : `: ${Text.truncate(outcome.jobIds.join(", "), 200)}`;
  return lines([
    `${verb} ${outcome.jobIds.length} job(s)${ids}`,
    ...outcome.refused.map(
      // The message is the refusal's own line, its reason first.
      (refusal) => `refused: job ${refusal.jobId}: ${refusal.message}`,
    ),
  ]);
};

const filterOptions = (states: string, fallback: string): Command["options"] => [
  {
    name: "queue",
    type: "string",
    value: "Q",
    help: "only jobs of queue Q (default: every queue)",
  },
  {
    name: "state",
    type: "string",
    value: "S[,S...]",
    help: `only jobs in these states: ${states} (default ${fallback})`,
  },
  { name: "limit", type: "string", value: "N", help: "at most N jobs, lowest ids first" },
];

/** `tay retry-all DIR [--queue Q] [--state S,...] [--limit N] [--max-attempts N] [--reason TEXT]`. */
export const retryAll: Command = {
  name: "retry-all",
  synopsis:
    "DIR [--queue Q] [--state discarded,cancelled] [--limit N] [--max-attempts N] [--reason TEXT] [--json]",
  summary: "run again every discarded (or cancelled) job of a queue, each as tay retry",
  arguments: ["DIR"],
  options: [
    ...filterOptions("discarded, cancelled", "discarded"),
    {
      name: "max-attempts",
      type: "string",
      value: "N",
      help: "above each job's attempt (default: as tay retry)",
    },
    { name: "reason", type: "string", value: "TEXT", help: "why (kept with each event)" },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const filter = yield* bulkFilterOf(input, Bulk.endedStates);
      const maxAttempts = yield* parsed(input, "max-attempts", (value) =>
        parseInteger(value, Limits.maxAttemptsMin, Limits.maxAttemptsMax),
      );
      const reason = text(input, "reason");
      const options = {
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
        ...(reason === undefined ? {} : { reason }),
      };
      const outcome = yield* withWriter(input, (writer) => writer.redriveAll(filter, options));
      yield* printBulk(input, "retried", outcome);
      return exitCodes.ok;
    }),
};

/** `tay cancel-all DIR [--queue Q] [--state S,...] [--limit N] [--reason TEXT]`. */
export const cancelAll: Command = {
  name: "cancel-all",
  synopsis:
    "DIR [--queue Q] [--state scheduled,available,retryable,executing] [--limit N] [--reason TEXT] [--json]",
  summary:
    "cancel every job of a queue waiting to run (or in the states given), each as tay cancel",
  arguments: ["DIR"],
  options: [
    ...filterOptions("scheduled, available, executing, retryable", "scheduled,available,retryable"),
    { name: "reason", type: "string", value: "TEXT", help: "why (kept with each event)" },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const filter = yield* bulkFilterOf(input, Bulk.activeStates);
      const outcome = yield* withWriter(input, (writer) =>
        writer.cancelAll(filter, text(input, "reason")),
      );
      yield* printBulk(input, "cancelled", outcome);
      return exitCodes.ok;
    }),
};
