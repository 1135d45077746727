/**
 * The one place the log meets a database client: a connection that takes
 * a statement with its parameters and gives back rows and a count of rows
 * changed, or a typed failure that says whether the connection itself is
 * gone. Nothing here rejects a promise: a thrown client error becomes a
 * `Failure`, so the log's programs only ever see values.
 *
 * `nodePg` is the driver for a PostgreSQL server (node-postgres, one
 * `pg.Client` per session). Tests pass an in-process PGlite behind the same
 * interface. Rows are untrusted `unknown`s: the log decodes every field.
 */
import type pg from "pg";
import { type Answered, ExtendedBatch, prepared, type Wire } from "./internal/extendedBatch.js";

/**
 * A statement parameter: text, a number, bytes (bytea) or null. Bytes are
 * lent, not given: they are valid until the call that took them settles
 * (the log's writer lays out its next transaction in the same memory), so
 * a driver that keeps them longer (a log, a queue) copies them.
 */
export type Parameter = string | number | Uint8Array | null;

/** What a statement gave back: its rows (untrusted) and how many rows it changed. */
export interface Result {
  readonly rows: ReadonlyArray<unknown>;
  readonly affected: number;
}

/**
 * A statement or a connection failed. `connection` is true when the
 * connection is gone (dropped, reset, timed out, the server shutting down):
 * the outcome of a transaction in flight on it is unknown. Otherwise the
 * server refused the statement (`code` is its SQLSTATE) and the connection
 * still works.
 */
export interface Failure {
  readonly _tag: "DriverFailure";
  readonly connection: boolean;
  /** The SQLSTATE (`23505`, `42P01`, ...) or the client's own code (`ECONNRESET`), when known. */
  readonly code: string | undefined;
  readonly detail: string;
}

/** A statement of a batch: its text (with numbered parameters) and their values. */
export interface Bound {
  readonly text: string;
  readonly parameters: ReadonlyArray<Parameter>;
  /**
   * The names of the columns its rows give, in order: a batch gives its
   * rows as objects of these names (their values as text). Without them
   * the statement's result has no rows, only its row count.
   */
  readonly columns?: ReadonlyArray<string>;
}

/** One connection: statements run one after another, in the order issued. */
export interface Session {
  readonly query: (text: string, parameters: ReadonlyArray<Parameter>) => Promise<Result | Failure>;
  /**
   * Runs several statements sent as one text (the simple query protocol,
   * no parameters: their values are literals), one round trip: one
   * implicit transaction that commits when the last statement ran, or
   * rolls back whole when one fails. One result per statement, in order.
   * Absent where the driver cannot (the log then sends one statement at a
   * time, inside BEGIN and COMMIT).
   */
  readonly script?: (text: string) => Promise<ReadonlyArray<Result> | Failure>;
  /**
   * Runs statements as one batch of the extended query protocol: each
   * parsed once per session (a prepared statement: its text is not parsed
   * or planned again), bound to its parameters and executed, then one Sync.
   * One round trip, one implicit transaction that commits at the Sync, or
   * rolls back whole when one statement fails. One result per statement,
   * in order: its row count, and its rows where the statement names its
   * `columns`. Absent where the driver cannot (the
   * log then sends a `script`, or one statement at a time).
   */
  readonly batch?: (statements: ReadonlyArray<Bound>) => Promise<ReadonlyArray<Result> | Failure>;
  /** Ends the connection. Never rejects; a second call does nothing. */
  readonly close: () => Promise<void>;
  /**
   * Tells `handler` each notification this session receives after a
   * `LISTEN` (PostgreSQL only; absent where the driver has none).
   */
  readonly onNotification?: (handler: (channel: string, payload: string) => void) => void;
  /**
   * Tells `handler` once the connection is lost while no statement runs
   * (the server terminated it, the socket broke), so a session that only
   * listens learns it at once rather than at its next statement. Absent
   * where the driver cannot tell.
   */
  readonly onLost?: (handler: () => void) => void;
}

/** Makes sessions to one database. */
export interface Driver {
  readonly connect: () => Promise<Session | Failure>;
}

/** Whether a value the driver returned is a failure. */
export const isFailure = (
  value: Result | Session | Failure | ReadonlyArray<Result>,
): value is Failure => "_tag" in value && value._tag === "DriverFailure";

/** SQLSTATEs that mean the connection, not the statement, failed. */
const connectionStates: ReadonlySet<string> = new Set([
  "57P01", // admin_shutdown (pg_terminate_backend, a fast shutdown)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, shutting down)
]);

const sqlState = /^[0-9A-Z]{5}$/;

/**
 * Classifies anything a client threw. A 5-character SQLSTATE is the
 * server's refusal of a statement, except class 08 (connection exception)
 * and the shutdown states above; anything else (a socket error, a client
 * timeout, "Connection terminated unexpectedly") is a lost connection.
 */
export const classify = (error: unknown): Failure => {
  const code =
    typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
      ? error.code
      : undefined;
  const detail = error instanceof Error ? error.message : String(error);
  const fromServer = code !== undefined && sqlState.test(code);
  const connection = !fromServer || code.startsWith("08") || connectionStates.has(code);
  return { _tag: "DriverFailure", connection, code, detail: detail.replace(/\s+/g, " ").trim() };
};

/**
 * A batch's results: each statement's row count, and its rows as objects
 * of the columns it names (`Bound.columns`), none where it names none.
 */
const resultsOf = (statements: ReadonlyArray<Bound>, answered: Answered): Array<Result> =>
  answered.counts.map((affected, index) => {
    const columns = statements[index]?.columns;
    const rows = columns === undefined ? [] : (answered.rows[index] ?? []);
    return {
      affected,
      rows: rows.map((fields) =>
        Object.fromEntries(columns?.map((column, at) => [column, fields[at] ?? null]) ?? []),
      ),
    };
  });

/** A parameter as node-postgres' wire takes it: text, or bytes (sent in binary). */
const onWire = (parameter: Parameter): string | Buffer | null =>
  parameter === null
    ? null
    : typeof parameter === "string"
      ? parameter
      : typeof parameter === "number"
        ? String(parameter)
        : Buffer.from(parameter.buffer, parameter.byteOffset, parameter.byteLength);

/** Texts one session keeps prepared (the append's few forms); past it, a text is parsed each time. */
const preparedTextsMax = 64;

/** The `synchronous_commit` settings PostgreSQL accepts for a session. */
export type SynchronousCommit = "on" | "remote_apply" | "remote_write" | "local" | "off";

/** How `nodePg` sets up each session. */
export interface NodePgSettings {
  /** Sent as the session's `synchronous_commit` at connection start. Default "on". */
  readonly synchronousCommit?: SynchronousCommit;
  /** A statement without an answer after this long counts as a lost connection. Default 30,000. */
  readonly queryTimeoutMs?: number;
  /**
   * The server aborts one of these sessions left idle inside a transaction
   * this long (its client died mid-transaction), releasing its row locks.
   * Default 10,000.
   */
  readonly idleInTransactionTimeoutMs?: number;
  /** Shown in `pg_stat_activity`. Default "tay". */
  readonly applicationName?: string;
}

/**
 * node-postgres, loaded by the first connection rather than by every
 * program that imports this package (~45 ms of a process's start: the
 * CLI's commands on a directory never connect).
 */
let nodePgModule: Promise<typeof pg> | undefined;
const loadNodePg = (): Promise<typeof pg> => {
  nodePgModule ??= import("pg").then((loaded) => loaded.default);
  return nodePgModule;
};

/**
 * The node-postgres driver for the server at `url`: one `pg.Client` per
 * session, settings passed as startup parameters (not statements), every
 * client error caught and classified. A client whose connection drops while
 * idle emits an error event; it is kept as the session's failure and
 * returned by its next statement.
 */
export const nodePg = (url: string, settings: NodePgSettings = {}): Driver => ({
  connect: async () => {
    const options = [
      `-c synchronous_commit=${settings.synchronousCommit ?? "on"}`,
      `-c idle_in_transaction_session_timeout=${settings.idleInTransactionTimeoutMs ?? 10_000}`,
    ].join(" ");
    const { Client } = await loadNodePg();
    const client = new Client({
      connectionString: url,
      query_timeout: settings.queryTimeoutMs ?? 30_000,
      application_name: settings.applicationName ?? "tay",
      options,
    });
    let broken: Failure | undefined;
    const lostHandlers: Array<() => void> = [];
    // Without a listener an idle connection's error would crash the process.
    client.on("error", (error) => {
      const first = broken === undefined;
      broken = { ...classify(error), connection: true };
      if (first) for (const handler of lostHandlers) handler();
    });
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      return classify(error);
    }
    let closed = false;
    const cache = prepared(preparedTextsMax);
    return {
      query: async (text, parameters) => {
        if (broken !== undefined) return broken;
        try {
          const result = await client.query({ text, values: [...parameters] });
          return { rows: result.rows, affected: result.rowCount ?? 0 };
        } catch (error) {
          const failure = classify(error);
          if (failure.connection) broken = failure;
          return failure;
        }
      },
      script: async (text) => {
        if (broken !== undefined) return broken;
        try {
          // No values: node-postgres sends the text as a simple query and
          // resolves at ReadyForQuery, after the implicit COMMIT.
          const result: pg.QueryResult | ReadonlyArray<pg.QueryResult> = await client.query(text);
          const results = Array.isArray(result) ? result : [result];
          return results.map((one) => ({ rows: one.rows, affected: one.rowCount ?? 0 }));
        } catch (error) {
          const failure = classify(error);
          if (failure.connection) broken = failure;
          return failure;
        }
      },
      batch: async (statements) => {
        if (broken !== undefined) return broken;
        const wire: Array<Wire> = [];
        for (const statement of statements) {
          wire.push({ text: statement.text, values: statement.parameters.map(onWire) });
        }
        const ended = await new Promise<Failure | Answered>((resolve) => {
          const batch = new ExtendedBatch(wire, cache);
          batch.callback = (error, answered) =>
            resolve(error === undefined ? (answered ?? { counts: [], rows: [] }) : classify(error));
          client.query(batch);
        });
        if (!("_tag" in ended)) return resultsOf(statements, ended);
        if (ended.connection) broken = ended;
        return ended;
      },
      close: async () => {
        if (closed) return;
        closed = true;
        await client.end().catch(() => undefined);
      },
      onNotification: (handler) => {
        client.on("notification", (message) => handler(message.channel, message.payload ?? ""));
      },
      onLost: (handler) => {
        lostHandlers.push(handler);
      },
    };
  },
});
