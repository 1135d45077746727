/**
 * Serving a store to other processes: the store stays single-writer, and
 * its owner answers everyone else over HTTP/1.1 with JSON bodies
 * (docs/protocol.md, docs/server.md). `serve(engine, options)` serves an
 * engine the caller opened, for the scope (the application that owns its
 * store keeps using it in-process); `start(opened, options)` does the
 * same for a program not written with Effect; `tay serve DIR` opens the
 * store and serves it.
 *
 * It listens on a Unix socket (inside the data directory, or in a private
 * fallback directory when that path would be too long for a socket
 * address; mode 0600) whose path it records in LOCK's holder description,
 * where clients and the CLI find it, and optionally on a TCP address,
 * which requires the bearer token of `DATA_DIR/server-token`.
 */
import { createServer, type IncomingMessage, type Server, ServerResponse } from "node:http";
import { Locate } from "@tay/client";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import * as Exit from "effect/Exit";
import type * as Layer from "effect/Layer";
import type * as Scope from "effect/Scope";
import * as ScopeModule from "effect/Scope";
import { Disk } from "../disk/Disk.js";
import * as Files from "../disk/Files.js";
import * as LockDescription from "../disk/LockDescription.js";
import * as NodeDisk from "../disk/NodeDisk.js";
import type * as Engine from "../engine/Engine.js";
import type * as EnginePromises from "../engine/EnginePromises.js";
import type * as Log from "../log/Log.js";
import { type Answer, type Call, type Route, routes, type Served } from "./internal/routes.js";
import { endings } from "./internal/endings.js";
import { gathered } from "./internal/gather.js";
import {
  malformedRequestAnswer,
  readBody,
  sendError,
  sendJson,
  takeBody,
} from "./internal/http.js";
import * as Lean from "./internal/lean.js";
import { Leases } from "./internal/leases.js";
import { listenSocket, listenTcp, parseListen, removeSocket } from "./internal/listeners.js";
import { Sessions } from "./internal/sessions.js";
import { WaitingClaims } from "./internal/waitingClaims.js";
import type { StoreFacts } from "./internal/storeFacts.js";
import { streams, tellEnds } from "./internal/streams.js";
import * as Dashboard from "./Dashboard.js";
import * as Metrics from "./Metrics.js";
import * as OpenApi from "./OpenApi.js";
import {
  type InvalidListen,
  type ListenFailed,
  MethodNotAllowed,
  Unauthorized,
  UnknownRoute,
} from "./ServerError.js";
import * as Token from "./Token.js";

/** Bytes a request body may have by default (a batch of a few thousand jobs). */
export const bodyBytesMaxDefault = 4 * 1024 * 1024;

/**
 * Bytes the body of `/v1/insert-many` may have by default: twice the
 * largest record (16 MiB), so that an atomic batch the engine takes
 * embedded is taken through the server too (2026-12-07; it was refused
 * past 4 MiB, and a client cannot split it without losing its atomicity).
 */
export const batchBodyBytesMaxDefault = 32 * 1024 * 1024;

/** The route whose body is one atomic batch of jobs (`batchBodyBytesMax`). */
const batchRoute = "/v1/insert-many";

/** How long an idle connection is kept open. */
const keepAliveMs = 5_000;

/** How long a client may take to send a whole request (headers and body). */
export const requestTimeoutMsDefault = 30_000;

/** How to serve. */
export interface ServeOptions {
  /** The data directory (where the socket, LOCK and the token file are). */
  readonly directory: string;
  /** The socket path (default: `Locate.socketPathFor(directory)`). */
  readonly socket?: string;
  /** Also listen on TCP: `PORT` (loopback) or `HOST:PORT` (as named); requires the token. */
  readonly listen?: string;
  /** Bytes a request body may have (default 4 MiB). */
  readonly bodyBytesMax?: number;
  /**
   * Bytes the body of `/v1/insert-many` may have (default 32 MiB, and never
   * less than `bodyBytesMax`): one atomic batch, as large as a record.
   */
  readonly batchBodyBytesMax?: number;
  /** How long a client may take to send a request (default 30 s). */
  readonly requestTimeoutMs?: number;
}

export type { StoreFacts } from "./internal/storeFacts.js";

/** A running server. */
export interface Serving {
  readonly socket: string;
  /** `host:port` when listening on TCP, else null. */
  readonly listen: string | null;
  /** The TCP listener's token (null without one). */
  readonly token: string | null;
  /** The leases of remote claims held now. */
  readonly leases: () => number;
  /** Claims waiting now that carry an id (`/v1/give-up` can give them up). */
  readonly claimsWaiting: () => number;
}

const allRoutes: ReadonlyArray<Route> = [...routes, ...endings, ...streams];
// Streams and documents are node:http's: the lean path answers one JSON body a request.
const leanLines = Lean.linesOf([...routes, ...endings]);
const openApi = OpenApi.document(allRoutes);

const noParams: ReadonlyArray<string> = [];

/** A route found for a request, and the request's parameters. */
interface Matched {
  readonly route: Route;
  readonly params: ReadonlyArray<string>;
}

/**
 * Routes without parameters, by path then method, each as its match (made
 * once, not per request): most requests are found in one lookup.
 */
const fixedRoutes = new Map<string, ReadonlyMap<string, Matched>>();
for (const route of allRoutes) {
  if (route.path.includes(":")) continue;
  const methods = new Map(fixedRoutes.get(route.path));
  if (!methods.has(route.method)) methods.set(route.method, { route, params: noParams });
  fixedRoutes.set(route.path, methods);
}

/** The route matching `path`, its parameters, or why none does. */
const match = (method: string, path: string): Matched => {
  const fixed = fixedRoutes.get(path)?.get(method);
  if (fixed !== undefined) return fixed;
  const segments = path.split("/");
  let allowed: Array<string> = [];
  for (const route of allRoutes) {
    const pattern = route.path.split("/");
    if (pattern.length !== segments.length) continue;
    const params: Array<string> = [];
    const fits = pattern.every((part, index) => {
      const segment = segments[index] ?? "";
      if (part.startsWith(":")) {
        params.push(segment);
        return segment.length > 0;
      }
      return part === segment;
    });
    if (!fits) continue;
    if (route.method === method) return { route, params };
    allowed = [...allowed, route.method];
  }
  if (allowed.length > 0) throw new MethodNotAllowed({ method, path, allowed: allowed.join(", ") });
  throw new UnknownRoute({ method, path });
};

/** Over TCP, the bearer token (a header, or `?token=` for browsers' event streams). */
const authorize = async (
  request: IncomingMessage,
  query: URLSearchParams,
  route: string,
  token: Token.Current,
): Promise<void> => {
  const header = request.headers.authorization;
  const offered =
    header?.startsWith("Bearer ") === true ? header.slice(7).trim() : query.get("token");
  if (offered === null || offered === undefined || offered.length === 0) {
    throw new Unauthorized({ route, reason: "MissingToken" });
  }
  const current = await token.get();
  if (current === null || !Token.matches(offered, current)) {
    throw new Unauthorized({ route, reason: "WrongToken" });
  }
};

/** The request's URL; a target that is no path (`//`, `http:`) is an unknown route. */
const urlOf = (method: string, target: string): URL => {
  try {
    return new URL(`http://tay${target.startsWith("/") ? target : `/${target}`}`);
  } catch {
    throw new UnknownRoute({ method, path: target.slice(0, 200) });
  }
};

// A target of these characters only is its own pathname (no dot segment,
// escape, query or fragment for the URL parser to rewrite): it skips the parser.
const plainTarget = /^\/[A-Za-z0-9_\-/]*$/;
const noQuery = new URLSearchParams();

/** A request's path and query. */
interface Target {
  readonly path: string;
  readonly query: URLSearchParams;
  readonly url: URL | undefined;
}

// The targets of the fixed routes, each its own path: made once, found in one lookup.
const fixedTargets = new Map<string, Target>(
  [...fixedRoutes.keys()].map((path) => [path, { path, query: noQuery, url: undefined }]),
);

/** The request's path and query. */
const targetOf = (method: string, target: string): Target => {
  const fixed = fixedTargets.get(target);
  if (fixed !== undefined) return fixed;
  if (plainTarget.test(target)) return { path: target, query: noQuery, url: undefined };
  const url = urlOf(method, target);
  return { path: url.pathname, query: url.searchParams, url };
};

const dashboard = Dashboard.page();

const sendText = (response: ServerResponse, type: string, text: string): void => {
  response.writeHead(200, { "content-type": type, "content-length": Buffer.byteLength(text) });
  response.end(text);
};

interface Handling {
  readonly metrics: Metrics.Metrics;
  readonly served: Served;
  readonly options: ServeOptions;
  readonly token: Token.Current | null;
}

/**
 * A response that carries what the metrics learn of its request (when it
 * arrived, its route's label, whose metrics count it), so the answer is
 * observed by one shared `finish` listener rather than a closure and an
 * object made per request. Node makes it as the request arrives.
 */
class TayResponse extends ServerResponse {
  readonly startedAt = performance.now();
  label: string | undefined = undefined;
  metrics: Metrics.Metrics | undefined = undefined;
}

type TayServer = Server<typeof IncomingMessage, typeof TayResponse>;

function observeFinished(this: TayResponse): void {
  const seconds = (performance.now() - this.startedAt) / 1000;
  this.metrics?.observeRequest(this.label ?? routeLabel(this.req), this.statusCode, seconds);
}

const answer = async (
  request: IncomingMessage,
  response: TayResponse,
  handling: Handling,
  tcp: boolean,
) => {
  const method = request.method ?? "GET";
  const { path: route, query } = targetOf(method, request.url ?? "/");
  if (tcp && handling.token !== null) {
    await authorize(request, query, route, handling.token);
  }
  if (method === "GET" && (route === "/openapi.json" || route === "/metrics" || route === "/")) {
    response.label = route;
    return answerDocument(response, handling, route);
  }
  const found = match(method, route);
  response.label = found.route.path;
  const body =
    method === "POST"
      ? await commandBody(request, route, bodyLimitOf(handling.options, route))
      : { ok: true as const, value: null };
  if (!body.ok) {
    response.setHeader("connection", "close");
    throw body.error;
  }
  const session = request.headers["x-tay-session"];
  const call: Call = {
    route,
    body: body.value,
    query,
    params: found.params,
    session: typeof session === "string" ? session : undefined,
    response,
    stream: response,
  };
  const result: Answer = await found.route.handle(call, handling.served);
  if (
    typeof result === "object" &&
    result !== null &&
    "streamed" in result &&
    result.streamed === true
  )
    return;
  sendJson(response, 200, result as Exclude<Answer, { readonly streamed: true }>);
};

/** The bytes a body of `route` may have. */
const bodyLimitOf = (options: ServeOptions, route: string): number => {
  const limit = options.bodyBytesMax ?? bodyBytesMaxDefault;
  return route === batchRoute
    ? Math.max(limit, options.batchBodyBytesMax ?? batchBodyBytesMaxDefault)
    : limit;
};

/**
 * A command's body, once the commands of this poll phase are gathered (they
 * join one drain, internal/gather.ts). By then a body that came with its
 * head (nearly every one) is parsed whole into the request and is taken in
 * one read; one still arriving is read as a stream, then gathered again.
 */
const commandBody = async (request: IncomingMessage, route: string, limit: number) => {
  await gathered();
  const arrived = takeBody(request, route, limit);
  if (arrived !== undefined) return arrived;
  const body = await readBody(request, route, limit);
  if (body.ok) await gathered();
  return body;
};

const answerDocument = async (response: ServerResponse, handling: Handling, route: string) => {
  if (route === "/openapi.json") return sendJson(response, 200, openApi);
  if (route === "/metrics")
    return sendText(response, handling.metrics.contentType, await handling.metrics.text());
  return sendText(response, "text/html; charset=utf-8", dashboard);
};

const handler =
  (handling: Handling, tcp: boolean) => (request: IncomingMessage, response: TayResponse) => {
    response.metrics = handling.metrics;
    response.on("finish", observeFinished);
    answer(request, response, handling, tcp).catch((error: unknown) => sendError(response, error));
  };

const patterns = allRoutes.map(
  (route) => [route.path, new RegExp(`^${route.path.replace(/:[A-Za-z]+/g, "[^/]+")}$`)] as const,
);

/** The label of a request no route took: a pattern its path fits, so ids do not multiply the series. */
const routeLabel = (request: IncomingMessage): string => {
  const path = (request.url ?? "/").split("?")[0] ?? "/";
  for (const [route, pattern] of patterns) if (pattern.test(path)) return route;
  return ["/", "/metrics", "/openapi.json"].includes(path) ? path : "other";
};

const makeServer = (handling: Handling, tcp: boolean, options: ServeOptions): TayServer => {
  const server = createServer(
    {
      ServerResponse: TayResponse,
      requestTimeout: options.requestTimeoutMs ?? requestTimeoutMsDefault,
      headersTimeout: Math.min(10_000, options.requestTimeoutMs ?? requestTimeoutMsDefault),
      keepAliveTimeout: keepAliveMs,
    },
    handler(handling, tcp),
  );
  // A client that sends garbage instead of HTTP gets a 400 and its connection closed.
  server.on("clientError", (error, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(malformedRequestAnswer(error.message));
  });
  return server;
};

/** A listening server, and how to end the connections its lean path holds (none over TCP). */
interface Listening {
  readonly server: TayServer;
  readonly closeLean: () => void;
}

/**
 * The Unix socket's server: the lean path first (internal/lean.ts), node:http
 * for what it hands over. TCP is node:http's alone: its token check stays
 * in one place, and the target of the lean path is the local producer.
 */
const makeLocal = (handling: Handling, options: ServeOptions): Listening => {
  const server = makeServer(handling, false, options);
  const { closeAll } = Lean.install(server, {
    lines: leanLines,
    served: handling.served,
    bodyBytesMax: options.bodyBytesMax ?? bodyBytesMaxDefault,
    keepAliveMs,
    observe: handling.metrics.observeRequest,
  });
  return { server, closeLean: closeAll };
};

const closeServer = ({ server, closeLean }: Listening): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve());
    closeLean();
    server.closeAllConnections();
  });

/** Rewrites LOCK's holder description with (or without) `server`: in place, under our flock. */
const describeLock = (directory: string, server: LockDescription.LockServer | undefined) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const path = `${directory}/LOCK`;
    const current = LockDescription.decode(yield* disk.readFile(path));
    if (Either.isLeft(current) || current.right.pid !== process.pid) return;
    const { server: _old, ...holder } = current.right;
    const bytes = LockDescription.encode(server === undefined ? holder : { ...holder, server });
    yield* Files.withFile(path, "readWrite", (handle) =>
      Effect.zipRight(handle.truncate(0), Files.writeAll(handle, 0, bytes)),
    );
  });

/** The parts of a server, started. */
const started = async (
  engine: Engine.EngineService<Log.Kind>,
  options: ServeOptions,
  store: StoreFacts,
) => {
  const leases = new Leases((jobId, attempt, why) => {
    engine.promises.fail(jobId, why, { attempt }).catch(() => undefined);
  });
  const sessions = new Sessions((session) => leases.dropSession(session));
  const claims = new WaitingClaims();
  const tcpAddress = options.listen === undefined ? undefined : parseListen(options.listen);
  if (tcpAddress !== undefined && !("host" in tcpAddress)) throw tcpAddress;
  const token = tcpAddress === undefined ? null : await Token.ensure(options.directory);
  const metrics = await Metrics.make(engine, {
    pressure: store.pressure,
    segments: store.segments,
    leases: () => leases.size,
    sessions: () => sessions.size,
    leasesExpired: () => leases.expired,
  });
  const current = token === null ? null : new Token.Current(options.directory, token);
  const handling: Handling = {
    metrics,
    served: { engine, store, leases, sessions, claims },
    options,
    token: current,
  };
  const socket = options.socket ?? Locate.socketPathFor(options.directory);
  const servers: Array<Listening> = [];
  const unwatchEnds = engine.watch(tellEnds({ leases, sessions }));
  const stop = async () => {
    unwatchEnds();
    metrics.stop();
    sessions.closeAll();
    leases.stop();
    await Promise.all(servers.map(closeServer));
    await removeSocket(socket);
  };
  try {
    const local = makeLocal(handling, options);
    servers.push(local);
    await listenSocket(local.server, socket);
    let listen: string | null = null;
    if (tcpAddress !== undefined) {
      const remote = makeServer(handling, true, options);
      servers.push({ server: remote, closeLean: () => undefined });
      listen = `${tcpAddress.host}:${await listenTcp(remote, tcpAddress)}`;
    }
    const serving = {
      socket,
      listen,
      token,
      leases: () => leases.size,
      claimsWaiting: () => claims.size,
    };
    return { serving, stop };
  } catch (error) {
    await stop();
    throw error;
  }
};

/** Why serving could not start. */
export type ServeError = ListenFailed | InvalidListen;

const isServeError = (error: unknown): error is ServeError =>
  typeof error === "object" &&
  error !== null &&
  "_tag" in error &&
  (error._tag === "ListenFailed" || error._tag === "InvalidListen");

/** The file store's facts, read from its engine. */
const fileFacts = (engine: Engine.EngineService): StoreFacts => ({
  pressure: () => Effect.runSync(engine.log.storePressure()),
  segments: () => Effect.runSync(engine.log.segmentSizeStats()).count,
  orphanedGenerations: engine.report.orphanedGenerations,
  compact: async (retentionMs) => {
    const report = await engine.promises.compact(retentionMs);
    return {
      epoch: report.epoch,
      parentEpoch: report.parentEpoch,
      firstSequence: report.firstSequence,
      baseRecordCount: report.baseRecordCount,
      baseSegments: report.baseSegments,
      removedEpochs: [...report.removedEpochs],
      notRemoved: report.notRemoved.map((failure) => ({
        epoch: failure.epoch,
        error: failure.error.message,
      })),
      pauseMs: report.pauseMs,
      jobsKept: report.jobsKept,
      jobsDropped: report.jobsDropped,
    };
  },
});

/**
 * Serves `engine` for the scope: listens, records the socket in LOCK, and
 * at the scope's end stops listening, ends open streams and leases (their
 * jobs stay executing until the engine's next open rescues them, or the
 * engine fails them itself), takes the record out of LOCK and removes the
 * socket. Fails with `ListenFailed` or `InvalidListen` before serving.
 */
export const serve = (
  engine: Engine.EngineService,
  options: ServeOptions,
): Effect.Effect<Serving, ServeError, Disk | Scope.Scope> =>
  serveLog(engine, options, fileFacts(engine));

/**
 * Serves an engine over any log (`Engine.fromLog`: PostgreSQL's), as
 * `serve` serves the file store's, with `store` saying what the status,
 * the metrics and compaction show of it. `options.directory` holds the
 * token file for TCP (and the default socket); a LOCK there is described
 * when it is this process's, as `serve` does, and left alone otherwise.
 */
export const serveLog = <K extends Log.Kind>(
  engine: Engine.EngineService<K>,
  options: ServeOptions,
  store: StoreFacts,
): Effect.Effect<Serving, ServeError, Disk | Scope.Scope> =>
  Effect.gen(function* () {
    const starting = Effect.tryPromise({
      try: () => started(engine, options, store),
      catch: (error) => error,
    }).pipe(
      Effect.catchAll((error) => (isServeError(error) ? Effect.fail(error) : Effect.die(error))),
    );
    const { serving } = yield* Effect.acquireRelease(starting, ({ stop }) =>
      Effect.zipRight(
        Effect.ignore(describeLock(options.directory, undefined)),
        Effect.promise(stop),
      ),
    );
    const server: LockDescription.LockServer =
      serving.listen === null
        ? { socket: serving.socket }
        : { socket: serving.socket, listen: serving.listen };
    yield* Effect.ignore(describeLock(options.directory, server));
    return serving;
  });

/** A server started from a program not written with Effect. */
export interface StartedServer extends Serving {
  /** Stops serving (the engine stays open). Idempotent. */
  readonly close: () => Promise<void>;
}

/**
 * Serves an engine opened with `EnginePromises.open` (`serve`, for a
 * program not written with Effect). Rejects with `ListenFailed` or
 * `InvalidListen`.
 */
export const start = async (
  opened: Pick<EnginePromises.OpenedEngine, "engine">,
  options: ServeOptions & { readonly disk?: Layer.Layer<Disk> },
): Promise<StartedServer> => {
  const { disk, ...serveOptions } = options;
  const scope = Effect.runSync(ScopeModule.make());
  const layer = disk ?? NodeDisk.layer;
  const exit = await Effect.runPromiseExit(
    Effect.provide(ScopeModule.extend(serve(opened.engine, serveOptions), scope), layer),
  );
  if (Exit.isFailure(exit)) {
    await Effect.runPromise(ScopeModule.close(scope, Exit.void));
    throw exit.cause._tag === "Fail" ? exit.cause.error : new Error("the server did not start");
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= Effect.runPromise(ScopeModule.close(scope, Exit.void));
    return closing;
  };
  return { ...exit.value, close };
};
