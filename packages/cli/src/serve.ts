/**
 * `tay serve DIR`: opens the store and serves it to other processes until
 * SIGINT or SIGTERM (docs/server.md): a Unix socket (its path recorded in
 * LOCK, where clients and the CLI find it) and, with `--listen`, a TCP
 * address that requires the bearer token of `DIR/server-token`.
 */
import { Effect } from "effect";
import { Engine, Server, ServerToken } from "@tay/shell-node";
import { argument, type Command, exitCodes, flag, text } from "./command.js";
import * as Json from "./json.js";
import { line } from "./Terminal.js";
import { Terminal } from "./Terminal.js";

/** `tay serve DIR [--listen HOST:PORT] [--socket PATH] [--rotate-token] [--create]`. */
export const serve: Command = {
  name: "serve",
  synopsis: "DIR [--listen [HOST:]PORT] [--socket PATH] [--rotate-token] [--create] [--json]",
  summary: "serve the store to other processes (Unix socket; TCP with a token) until SIGINT",
  arguments: ["DIR"],
  options: [
    {
      name: "listen",
      type: "string",
      value: "[HOST:]PORT",
      help: "also listen on TCP (loopback unless HOST names another address); needs the token",
    },
    {
      name: "socket",
      type: "string",
      value: "PATH",
      help: "the socket path (default DIR/tay.sock)",
    },
    { name: "rotate-token", type: "boolean", help: "replace the TCP token before serving" },
    { name: "create", type: "boolean", help: "initialize the store first when DIR has none" },
  ],
  run: (input) =>
    Effect.scoped(
      Effect.gen(function* () {
        const directory = argument(input, 0);
        const engine = yield* Engine.open(directory, { createIfMissing: flag(input, "create") });
        if (flag(input, "rotate-token")) {
          yield* Effect.promise(() => ServerToken.rotate(directory));
        }
        const listen = text(input, "listen");
        const socket = text(input, "socket");
        const serving = yield* Server.serve(engine, {
          directory,
          ...(listen === undefined ? {} : { listen }),
          ...(socket === undefined ? {} : { socket }),
        });
        if (input.json) {
          yield* line(
            Json.line({ socket: serving.socket, listen: serving.listen, pid: process.pid }),
          );
        } else {
          yield* line(`serving ${directory} on ${serving.socket}`);
          if (serving.listen !== null) {
            yield* line(
              `and on http://${serving.listen} (token in ${ServerToken.tokenPath(directory)})`,
            );
          }
        }
        const terminal = yield* Terminal;
        yield* terminal.interrupted;
        return exitCodes.ok;
      }),
    ),
};
