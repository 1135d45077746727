/**
 * The real PostgreSQL server for the tests that need one: `TAY_PG_URL`
 * when set, else 127.0.0.1:5432 (user postgres, database test) if it
 * answers, else none, with the reason printed (scripts/postgres.sh starts
 * a private server and prints a URL for `TAY_PG_URL`). Each test gets a
 * database of its own, created from the server's URL and dropped after.
 */
import { PgSchema } from "@tay/log-postgres";
import { Effect } from "effect";
import pg from "pg";

const fallback = "postgres://postgres@127.0.0.1:5432/test";

/** Whether `url` answers a query within two seconds. */
const answers = async (url: string): Promise<string | undefined> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
};

/** The server's URL, or why there is none (printed once). */
export const locate = async (): Promise<{ url: string } | { skip: string }> => {
  const given = process.env.TAY_PG_URL;
  const url = given !== undefined && given !== "" ? given : fallback;
  const failed = await answers(url);
  if (failed === undefined) return { url };
  const skip = `PostgreSQL tests skipped: ${given === undefined ? `no TAY_PG_URL and ${fallback}` : "TAY_PG_URL"} does not answer (${failed}); scripts/postgres.sh starts one`;
  console.warn(skip);
  return { skip };
};

let databases = 0;

/** Admin statements of the tests (not the log's): on a connection of their own. */
export const admin = async <A>(
  url: string,
  body: (client: pg.Client) => Promise<A>,
): Promise<A> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end().catch(() => undefined);
  }
};

/** A new database on the server; `drop` removes it (forcing out what is still connected). */
export const freshDatabase = async (
  url: string,
): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const name = `tay_test_${process.pid}_${++databases}_${Math.floor(Math.random() * 1e6)}`;
  await admin(url, (client) => client.query(`CREATE DATABASE ${name}`));
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: () =>
      admin(url, (client) => client.query(`DROP DATABASE ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
};

/** A fresh database on the server holding an empty store, dropped with the scope. */
export const freshStore = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(() => freshDatabase(url)),
    (made) => Effect.promise(() => made.drop()),
  ).pipe(Effect.tap((made) => PgSchema.init(made.url)));
