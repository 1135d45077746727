/**
 * `tay health DIR`: asks the server that holds the store whether the store
 * takes appends (`GET /v1/health`), for a container's health check that
 * has no curl (`HEALTHCHECK CMD tay health /data`). Exit 0 when healthy;
 * 1 when the store refuses appends for good (`Unhealthy`), when the server
 * LOCK names does not answer, or when no server holds the store
 * (`NotServed`): a store nobody serves takes no job through a server.
 */
import { Locate } from "@tay/client";
import * as Effect from "effect/Effect";
import { NotServed } from "./CliError.js";
import { argument, type Command, exitCodes } from "./command.js";
import * as Json from "./json.js";
import { clientOf, failureOf } from "./served.js";
import { line } from "./Terminal.js";

/** The server's health answer, through a client closed after it. */
const askHealth = (socket: string) =>
  Effect.scoped(
    Effect.flatMap(clientOf(socket), (client) =>
      Effect.tryPromise({ try: () => client.health(), catch: failureOf(socket) }),
    ),
  );

export const health: Command = {
  name: "health",
  synopsis: "DIR [--json]",
  summary: "ask the store's server whether the store takes appends (exit 0) or not (exit 1)",
  arguments: ["DIR"],
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const directory = argument(input, 0);
      const served = Locate.servedAt(directory);
      if (served === null) return yield* new NotServed({ path: directory });
      const answer = yield* askHealth(served.socket);
      if (input.json) {
        yield* line(Json.line({ ok: answer.ok, log: answer.log, pressure: answer.pressure }));
      } else {
        yield* line(
          `healthy: the store takes appends (log ${answer.log}, pressure ${answer.pressure.toFixed(3)}; server pid ${served.pid})`,
        );
      }
      return exitCodes.ok;
    }),
};
