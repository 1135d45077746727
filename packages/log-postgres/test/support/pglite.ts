/**
 * PGlite (PostgreSQL compiled to WebAssembly, in process) behind the log's
 * `Driver`: one database, many sessions. A real server gives each session
 * its own transaction; here every session shares one connection, so a
 * session that runs BEGIN holds a mutex until its COMMIT or ROLLBACK and
 * the other sessions' statements wait for it, which is what separate
 * connections would see. `counting` wraps a driver and counts statements
 * by their first word, for the group-commit tests. `perFile` starts one
 * PGlite for a test file and names a schema per store.
 */
import { PGlite } from "@electric-sql/pglite";
import { Driver, type PgOptions } from "@tay/log-postgres";
import { afterAll, beforeAll } from "vitest";

/** A started PGlite (slow to start under load: make one per test file). */
export const start = (): Promise<PGlite> => PGlite.create();

/** A driver whose sessions share `database`, with transactions kept apart. */
export const driver = (database: PGlite): Driver.Driver => {
  let holder: object | undefined;
  let waiters: Array<() => void> = [];
  const acquire = async (owner: object) => {
    while (holder !== undefined && holder !== owner) {
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
    holder = owner;
  };
  const release = (owner: object) => {
    if (holder !== owner) return;
    holder = undefined;
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };
  return {
    connect: async () => {
      const owner = {};
      let open = false;
      return {
        query: async (text, parameters) => {
          await acquire(owner);
          try {
            const result = await database.query(text, [...parameters]);
            return { rows: result.rows, affected: result.affectedRows ?? 0 };
          } catch (error) {
            return Driver.classify(error);
          } finally {
            if (text === "BEGIN") open = true;
            if (text === "COMMIT" || text === "ROLLBACK") open = false;
            if (!open) release(owner);
          }
        },
        // Several statements in one text: PGlite's exec, one implicit transaction.
        script: async (text) => {
          await acquire(owner);
          try {
            const results = await database.exec(text);
            // PGlite counts rows changed across the text: each statement's is the difference.
            let before = 0;
            return results.map((result) => {
              const total = result.affectedRows ?? before;
              const affected = total - before;
              before = total;
              return { rows: result.rows, affected };
            });
          } catch (error) {
            return Driver.classify(error);
          } finally {
            if (!open) release(owner);
          }
        },
        close: async () => release(owner),
      };
    },
  };
};

/** `inner` without `script`: the log sends one statement at a time (the fallback path). */
export const stepwise = (inner: Driver.Driver): Driver.Driver => ({
  connect: async () => {
    const session = await inner.connect();
    if (Driver.isFailure(session)) return session;
    return { query: session.query, close: session.close };
  },
});

/** Statements run through `counted`, by first word. */
export interface Counts {
  readonly byVerb: Map<string, number>;
}

/** Wraps `inner`, counting every statement by its first word (`BEGIN`, `UPDATE`, `INSERT`, ...). */
export const counting = (inner: Driver.Driver): { driver: Driver.Driver; counts: Counts } => {
  const counts: Counts = { byVerb: new Map() };
  return {
    counts,
    driver: {
      connect: async () => {
        const session = await inner.connect();
        if (Driver.isFailure(session)) return session;
        const script = session.script;
        return {
          query: (text, parameters) => {
            const verb = text.split(" ")[0] ?? "";
            counts.byVerb.set(verb, (counts.byVerb.get(verb) ?? 0) + 1);
            return session.query(text, parameters);
          },
          // A script is one round trip: counted as SCRIPT.
          ...(script === undefined
            ? {}
            : {
                script: (text: string) => {
                  counts.byVerb.set("SCRIPT", (counts.byVerb.get("SCRIPT") ?? 0) + 1);
                  return script(text);
                },
              }),
          close: session.close,
        };
      },
    },
  };
};

/** A test file's PGlite, and stores on it each in a schema of its own. */
export interface PerFile {
  /** The file's PGlite: started before its first test, closed after its last. */
  readonly database: () => PGlite;
  /** Options of a new store on the file's PGlite, in schema PREFIX + a number. */
  readonly fresh: (extra?: PgOptions.PgLogOptions) => PgOptions.PgLogOptions;
}

/** Starts a PGlite before the calling file's tests and closes it after them. */
export const perFile = (prefix: string): PerFile => {
  let started: PGlite | undefined;
  beforeAll(async () => {
    started = await start();
  }, 180_000);
  afterAll(async () => {
    await started?.close();
  });
  const database = (): PGlite => {
    if (started === undefined) throw new Error("the file's PGlite is used before it started");
    return started;
  };
  let schemas = 0;
  return {
    database,
    fresh: (extra = {}) => ({
      schema: `${prefix}${++schemas}`,
      driver: () => driver(database()),
      ...extra,
    }),
  };
};

/** A driver holding one statement, and the handles a test steers it by. */
export interface Holding {
  readonly driver: Driver.Driver;
  /** Resolves once the held statement waits. */
  readonly holding: Promise<void>;
  /** Lets the held statement go on. */
  readonly release: () => void;
}

/**
 * `inner` whose first statement `matches` picks (across all its sessions;
 * `first` tells whether it is its session's first) waits until `release`,
 * then is answered by `after`: by default it runs as sent.
 */
export const holdingOnce = (
  inner: Driver.Driver,
  matches: (text: string, first: boolean) => boolean,
  after?: () => Driver.Failure,
): Holding => {
  let release = () => {};
  let held = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holding = new Promise<void>((resolve) => {
    held = resolve;
  });
  let planted = false;
  const driver: Driver.Driver = {
    connect: async () => {
      const session = await inner.connect();
      if (Driver.isFailure(session)) return session;
      let first = true;
      return {
        ...session,
        query: async (text, parameters) => {
          const picked = !planted && matches(text, first);
          first = false;
          if (!picked) return session.query(text, parameters);
          planted = true;
          held();
          await released;
          return after === undefined ? session.query(text, parameters) : after();
        },
      };
    },
  };
  return { driver, holding, release };
};
