/**
 * `tay serve DIR`: opens the store and serves it to other processes until
 * SIGINT or SIGTERM (docs/server.md): a Unix socket (its path recorded in
 * LOCK, where clients and the CLI find it) and, with `--listen`, a TCP
 * address that requires the bearer token of `DIR/server-token`.
 *
 * `tay serve URL --socket PATH`: the same over a PostgreSQL store, whose
 * engine (timers on, no rescue at open: other engines may run its jobs)
 * may be one of several on the store; the socket's directory holds the
 * TCP token (`server-token`), since there is no DIR (docs/postgres.md,
 * "The CLI").
 */
import * as Path from "node:path";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type * as Scope from "effect/Scope";
import { PgLog, PgSchema } from "@tay/log-postgres";
import { type Disk, Engine, Server, ServerToken, StateProjection } from "@tay/shell-node";
import {
  argument,
  type Command,
  exitCodes,
  flag,
  type Input,
  parsed,
  text,
  usage,
} from "./command.js";
import type { Failure } from "./describe.js";
import * as Json from "./json.js";
import { isUrl } from "./postgres.js";
import { line } from "./Terminal.js";
import { Terminal } from "./Terminal.js";
import { parseBytes, parseDuration, parseInteger } from "./values.js";

/**
 * `--retention` (and `--compact-after`): the engine compacts on its own
 * (`autoCompact`) with that retention; without `--retention` it compacts
 * only when told (`tay compact`). `--compact-after` alone is a usage error.
 */
type AutoOption = { readonly autoCompact?: Engine.AutoCompact };

const autoCompactOf = (input: Input): Effect.Effect<AutoOption, Failure> =>
  Effect.gen(function* () {
    const retentionMs = yield* parsed(input, "retention", parseDuration);
    const minRecords = yield* parsed(input, "compact-after", (value) =>
      parseInteger(value, 1, Number.MAX_SAFE_INTEGER),
    );
    if (retentionMs === undefined) {
      if (minRecords === undefined) return {};
      return yield* usage(input, "--compact-after needs --retention (what a compaction keeps)");
    }
    return {
      autoCompact: { retentionMs, ...(minRecords === undefined ? {} : { minRecords }) },
    };
  });

/** What the request limits may be set to: a body of at least 1 KiB, at most 1 GiB. */
const bodyBytesMin = 1024;
const bodyBytesMaxLimit = 1024 * 1024 * 1024;

/** The server's request limits given on the command line (2026-12-07). */
type Limits = Pick<Server.ServeOptions, "bodyBytesMax" | "batchBodyBytesMax" | "requestTimeoutMs">;

/**
 * `--body-max`, `--batch-body-max` and `--request-timeout`. A batch limit
 * below the body limit is a usage error here, where the server itself would
 * quietly raise it to the body limit: a user who typed both meant both.
 */
const limitsOf = (input: Input): Effect.Effect<Limits, Failure> =>
  Effect.gen(function* () {
    const bytes = parseBytes(bodyBytesMin, bodyBytesMaxLimit);
    const body = yield* parsed(input, "body-max", bytes);
    const batch = yield* parsed(input, "batch-body-max", bytes);
    const timeout = yield* parsed(input, "request-timeout", (value) =>
      Either.flatMap(parseDuration(value), (ms) =>
        ms >= 1000 && ms <= 3_600_000
          ? Either.right(ms)
          : Either.left(`${value} is not between 1s and 1h`),
      ),
    );
    const bodyLimit = body ?? Server.bodyBytesMaxDefault;
    if (batch !== undefined && batch < bodyLimit) {
      return yield* usage(
        input,
        `--batch-body-max ${batch} is below the body limit ${bodyLimit} (--body-max): a batch may always be as large as any body`,
      );
    }
    return {
      ...(body === undefined ? {} : { bodyBytesMax: body }),
      ...(batch === undefined ? {} : { batchBodyBytesMax: batch }),
      ...(timeout === undefined ? {} : { requestTimeoutMs: timeout }),
    };
  });

/** What `serve` needs of a store: the engine served, and where the token lives. */
interface Opened {
  readonly serving: Server.Serving;
  /** The store as printed: DIR, or the URL without its password. */
  readonly path: string;
  /** Where the TCP token is (`DIR/server-token`). */
  readonly tokenPath: string;
}

/** A PostgreSQL store's facts for the server: no segments and no capacity; its compaction's report. */
const pgFacts = (engine: Engine.EngineService<PgLog.PgKind>): Server.StoreFacts => ({
  pressure: () => 0,
  segments: () => 0,
  orphanedGenerations: engine.report.orphanedGenerations,
  compact: async (retentionMs) => {
    const report = await engine.promises.compact(retentionMs);
    return {
      epoch: report.epoch,
      parentEpoch: report.epoch - 1,
      firstSequence: report.firstSequence,
      baseRecordCount: report.baseRecords,
      baseSegments: 0,
      removedEpochs: [...report.removed],
      notRemoved: report.notRemoved.map((epoch) => ({
        epoch,
        error: "its rows were not deleted; the next compaction deletes them",
      })),
      pauseMs: report.pauseMs,
      jobsKept: report.jobsKept,
      jobsDropped: report.jobsDropped,
    };
  },
});

/** Serves the PostgreSQL store at the URL on `--socket` (required: there is no DIR). */
const servePg = (
  input: Input,
  auto: AutoOption,
  limits: Limits,
): Effect.Effect<Opened, Failure, Disk.Disk | Scope.Scope> =>
  Effect.gen(function* () {
    const url = argument(input, 0);
    const socket = text(input, "socket");
    if (socket === undefined) {
      return yield* usage(
        input,
        "serve on a postgres:// URL needs --socket PATH (there is no DIR)",
      );
    }
    const directory = Path.dirname(Path.resolve(socket));
    if (flag(input, "create")) {
      const created = yield* Effect.either(PgSchema.init(url));
      if (created._tag === "Left" && created.left._tag !== "StoreExists") {
        return yield* Effect.fail(created.left);
      }
    }
    const recovered = yield* PgLog.open(url, {}, StateProjection.foldProjection);
    const engine = yield* Engine.fromLog(recovered, { rescueOnOpen: false, ...auto });
    if (flag(input, "rotate-token")) {
      yield* Effect.promise(() => ServerToken.rotate(directory));
    }
    const listen = text(input, "listen");
    const serving = yield* Server.serveLog(
      engine,
      { directory, socket, ...limits, ...(listen === undefined ? {} : { listen }) },
      pgFacts(engine),
    );
    return { serving, path: engine.log.path, tokenPath: ServerToken.tokenPath(directory) };
  });

/** Serves the store in DIR. */
const serveDirectory = (
  input: Input,
  auto: AutoOption,
  limits: Limits,
): Effect.Effect<Opened, Failure, Disk.Disk | Scope.Scope> =>
  Effect.gen(function* () {
    const directory = argument(input, 0);
    const engine = yield* Engine.open(directory, {
      createIfMissing: flag(input, "create"),
      ...auto,
    });
    if (flag(input, "rotate-token")) {
      yield* Effect.promise(() => ServerToken.rotate(directory));
    }
    const listen = text(input, "listen");
    const socket = text(input, "socket");
    const serving = yield* Server.serve(engine, {
      directory,
      ...limits,
      ...(listen === undefined ? {} : { listen }),
      ...(socket === undefined ? {} : { socket }),
    });
    return { serving, path: directory, tokenPath: ServerToken.tokenPath(directory) };
  });

/** `tay serve DIR|URL [--listen HOST:PORT] [--socket PATH] [--rotate-token] [--create] [--retention D [--compact-after N]] [--body-max B] [--batch-body-max B] [--request-timeout D]`. */
export const serve: Command = {
  name: "serve",
  synopsis:
    "DIR|URL [--listen [HOST:]PORT] [--socket PATH] [--rotate-token] [--create] [--retention DURATION [--compact-after RECORDS]] [--body-max BYTES] [--batch-body-max BYTES] [--request-timeout DURATION] [--json]",
  summary:
    "serve the store to other processes (Unix socket; TCP with a token) until SIGINT; a URL needs --socket",
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
      help: "the socket path (default DIR/tay.sock; required with a URL, its directory then holds the token)",
    },
    { name: "rotate-token", type: "boolean", help: "replace the TCP token before serving" },
    { name: "create", type: "boolean", help: "initialize the store first when there is none" },
    {
      name: "retention",
      type: "string",
      value: "DURATION",
      help: "compact on its own, keeping terminal jobs finished within DURATION (30s, 15m, 2h, 7d, or ms)",
    },
    {
      name: "compact-after",
      type: "string",
      value: "RECORDS",
      help: "with --retention: records appended since the base before a compaction (default 100000; and at least 4 times the jobs the base holds)",
    },
    {
      name: "body-max",
      type: "string",
      value: "BYTES",
      help: "the largest request body (default 4MiB; bytes, or with KiB, MiB, GiB)",
    },
    {
      name: "batch-body-max",
      type: "string",
      value: "BYTES",
      help: "the largest /v1/insert-many body, one atomic batch (default 32MiB; at least --body-max)",
    },
    {
      name: "request-timeout",
      type: "string",
      value: "DURATION",
      help: "how long a client may take to send a whole request (default 30s; 1s..1h)",
    },
  ],
  run: (input) =>
    Effect.scoped(
      Effect.gen(function* () {
        const target = argument(input, 0);
        const auto = yield* autoCompactOf(input);
        const limits = yield* limitsOf(input);
        const { serving, path, tokenPath } = yield* isUrl(target)
          ? servePg(input, auto, limits)
          : serveDirectory(input, auto, limits);
        const { autoCompact } = auto;
        const minRecords = autoCompact?.minRecords ?? Engine.autoCompactMinRecordsDefault;
        if (input.json) {
          const compacting =
            autoCompact === undefined
              ? null
              : { retention_ms: autoCompact.retentionMs, min_records: minRecords };
          yield* line(
            Json.line({
              socket: serving.socket,
              listen: serving.listen,
              pid: process.pid,
              auto_compact: compacting,
            }),
          );
        } else {
          yield* line(`serving ${path} on ${serving.socket}`);
          if (serving.listen !== null) {
            yield* line(`and on http://${serving.listen} (token in ${tokenPath})`);
          }
          if (autoCompact !== undefined) {
            yield* line(
              `compacting on its own: terminal jobs kept ${text(input, "retention") ?? ""} after they end, ` +
                `once ${minRecords} records (and at least 4 times the base's jobs) are appended since the base`,
            );
          }
        }
        const terminal = yield* Terminal;
        yield* terminal.interrupted;
        return exitCodes.ok;
      }),
    ),
};
