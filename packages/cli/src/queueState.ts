/**
 * The commands that change a queue's state (EVENTS-V3.md (24,3)): `pause`,
 * `resume` and `limit`. Like the other write commands they run on the
 * store's engine, on the server of the process that holds it, or on a
 * PostgreSQL store (`withWriter`), and print the queue's state as `tay
 * queues` shows it. A queue's state is independent of its jobs: a queue
 * with no job can be paused or limited ahead of its first one.
 */
import { Limits, type Queue } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { argument, type Command, exitCodes, type Input, parsed, usage } from "./command.js";
import * as Json from "./json.js";
import type { QueueLimits, Writer } from "./served.js";
import { queueStateText, shownQueueState, shownQueueStateJson } from "./status.js";
import { line } from "./Terminal.js";
import * as Text from "./text.js";
import { noneOr, parseDuration, parseInteger } from "./values.js";
import { withWriter } from "./write.js";

const queueArguments = ["DIR", "QUEUE"];

/** Prints the state a queue command answered (undefined: the default, running without limits). */
const printQueueState = (input: Input, queue: string, state: Queue.QueueState | undefined) => {
  if (input.json) return line(Json.line(shownQueueStateJson(queue, state)));
  return line(`queue ${Text.printable(queue)}: ${queueStateText(shownQueueState(queue, state))}`);
};

/** A command `tay NAME DIR QUEUE` that makes one change to the queue's state and prints it. */
const queueCommand = (
  name: string,
  summary: string,
  change: (writer: Writer, queue: string) => ReturnType<Writer["pauseQueue"]>,
): Command => ({
  name,
  synopsis: "DIR QUEUE [--json]",
  summary,
  arguments: queueArguments,
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const queue = argument(input, 1);
      const state = yield* withWriter(input, (writer) => change(writer, queue));
      yield* printQueueState(input, queue, state);
      return exitCodes.ok;
    }),
});

/** `tay pause DIR QUEUE`. */
export const pause = queueCommand(
  "pause",
  "pause a queue: claims start none of its jobs (running ones go on) until resume",
  (writer, queue) => writer.pauseQueue(queue),
);

/** `tay resume DIR QUEUE`. */
export const resume = queueCommand(
  "resume",
  "resume a paused queue, keeping its limits",
  (writer, queue) => writer.resumeQueue(queue),
);

/** `--concurrency`: N jobs executing at most, or `none`. */
const concurrencyOf = noneOr((value) => parseInteger(value, 1, Limits.idMax));

const ratePattern = /^(\d+)\/(.+)$/;

/**
 * A rate: COUNT/DURATION ("10/1s": at most 10 starts in any second),
 * within EVENTS-V3.md's bounds (count 1..10,000, window 1 ms..1 day).
 */
const parseRate = (
  value: string,
): Either.Either<{ readonly count: number; readonly perMs: number }, string> => {
  const match = ratePattern.exec(value.trim());
  const count = match?.[1];
  const window = match?.[2];
  if (count === undefined || window === undefined) {
    return Either.left(`${JSON.stringify(value)} is not COUNT/DURATION (like 10/1s) or none`);
  }
  return Either.flatMap(parseInteger(count, Limits.rateCountMin, Limits.rateCountMax), (starts) =>
    Either.flatMap(parseDuration(window), (perMs) =>
      perMs >= Limits.ratePerMsMin && perMs <= Limits.ratePerMsMax
        ? Either.right({ count: starts, perMs })
        : Either.left(`the window ${JSON.stringify(window)} is not between 1 ms and 1 day`),
    ),
  );
};

/** `--concurrency` and `--rate` as `setQueueLimits` takes them: at least one. */
const limitsOf = (input: Input) =>
  Effect.gen(function* () {
    const concurrency = yield* parsed(input, "concurrency", concurrencyOf);
    const rateLimit = yield* parsed(input, "rate", noneOr(parseRate));
    if (concurrency === undefined && rateLimit === undefined) {
      return yield* usage(input, "give --concurrency, --rate or both");
    }
    const limits: QueueLimits = {
      ...(concurrency === undefined ? {} : { concurrency }),
      ...(rateLimit === undefined ? {} : { rateLimit }),
    };
    return limits;
  });

/** `tay limit DIR QUEUE [--concurrency N|none] [--rate COUNT/DURATION|none]`. */
export const limit: Command = {
  name: "limit",
  synopsis: "DIR QUEUE [--concurrency N|none] [--rate COUNT/DURATION|none] [--json]",
  summary: "set a queue's concurrency and rate limit (a limit not given is kept)",
  arguments: queueArguments,
  options: [
    {
      name: "concurrency",
      type: "string",
      value: "N|none",
      help: "at most N of its jobs executing at once, or none",
    },
    {
      name: "rate",
      type: "string",
      value: "COUNT/DURATION|none",
      help: "at most COUNT starts in any DURATION (10/1s, 600/1m; 1..10000 in 1ms..1d), or none",
    },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const queue = argument(input, 1);
      const limits = yield* limitsOf(input);
      const state = yield* withWriter(input, (engine) => engine.setQueueLimits(queue, limits));
      yield* printQueueState(input, queue, state);
      return exitCodes.ok;
    }),
};
