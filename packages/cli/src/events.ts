/**
 * `tay events DIR [--from SEQ] [--limit N]`: follows what commits to a
 * served store, one JSON line per committed event, as it commits (the
 * server's `GET /v1/events`, through the client's subscription): what
 * `redis-cli monitor` or BullMQ's `QueueEvents` give an operator, for
 * `jq` and `grep`. From the next commit, or from `--from` (replaying the
 * current generation from that sequence first); until Ctrl-C, `--limit`
 * events, or the server's end of the stream, which is reported (exit 1)
 * with the last sequence printed, so a second run can go on from there.
 *
 * A line is `{sequence, member, type, schema, event, fields}`: the event's
 * index inside its record's mutation (0 for a record of one event), then
 * the event as `tay dump` shows a mutation's inner events.
 */
import { Locate } from "@tay/client";
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import { NotServed, ServedFailure } from "./CliError.js";
import { argument, type Command, exitCodes, parsed } from "./command.js";
import * as Json from "./json.js";
import { clientOf, failureOf } from "./served.js";
import { line, type Terminal } from "./Terminal.js";
import { parseInteger } from "./values.js";

/** Prints each committed event of `subscription` until `limit` of them; the last sequence printed. */
const follow = (
  socket: string,
  from: number | undefined,
  limit: number,
): Effect.Effect<number, ServedFailure, Terminal | Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* clientOf(socket);
    const subscription = client.subscribe(from === undefined ? {} : { from });
    yield* Effect.addFinalizer(() => Effect.sync(() => subscription.close()));
    let printed = 0;
    let last = 0;
    while (printed < limit) {
      // Where a second run goes on from, when the stream ends or fails here.
      const onFrom = `tay events --from ${last + 1} goes on from there`;
      const next = yield* Effect.tryPromise({
        try: () => subscription.next(),
        catch: (error) => {
          const failure = failureOf(socket)(error);
          return new ServedFailure({
            ...failure,
            detail: `${failure.detail}; the last event printed was of sequence ${last}; ${onFrom}`,
          });
        },
      });
      if (next.done === true) {
        return yield* new ServedFailure({
          reason: "StreamEnded",
          socket,
          detail: `the server ended the stream after sequence ${last}; ${onFrom}`,
        });
      }
      const { sequence, member, event } = next.value;
      yield* line(Json.line({ sequence, member, ...Json.event(event) }));
      printed += 1;
      last = sequence;
    }
    return last;
  });

export const events: Command = {
  name: "events",
  synopsis: "DIR [--from SEQ] [--limit N]",
  summary:
    "follow what commits to a served store: one JSON line per event as it commits, until Ctrl-C",
  arguments: ["DIR"],
  options: [
    {
      name: "from",
      type: "string",
      value: "SEQ",
      help: "replay the current generation from sequence SEQ first (default: from the next commit)",
    },
    { name: "limit", type: "string", value: "N", help: "stop after N events (default: never)" },
  ],
  run: (input) =>
    Effect.gen(function* () {
      const directory = argument(input, 0);
      const from = yield* parsed(input, "from", (text) =>
        parseInteger(text, 1, Number.MAX_SAFE_INTEGER),
      );
      const limit =
        (yield* parsed(input, "limit", (text) => parseInteger(text, 0, Number.MAX_SAFE_INTEGER))) ??
        Number.POSITIVE_INFINITY;
      const served = Locate.servedAt(directory);
      if (served === null) {
        return yield* new NotServed({
          path: directory,
          atRest: "tay dump shows its records at rest",
        });
      }
      yield* Effect.scoped(follow(served.socket, from, limit));
      return exitCodes.ok;
    }),
};
