/**
 * The PostgreSQL server the CLI suites run against (TAY_PG_URL, else
 * 127.0.0.1:5432): whether it answers (the suites skip with the reason
 * when it does not), a new database per test (dropped after the file), and
 * a client for the test's own checks.
 */
import pg from "pg";
import { afterAll } from "vitest";

export const serverUrl = process.env.TAY_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Runs `body` on a new client of `url`, closed afterwards. */
export const admin = async <A>(
  url: string,
  body: (client: pg.Client) => Promise<A>,
): Promise<A> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end().catch(() => undefined);
  }
};

/** Whether the server answers (false with a warning naming why). */
export const answers = (suite: string): Promise<boolean> =>
  admin(serverUrl, (client) => client.query("SELECT 1")).then(
    () => true,
    (error: unknown) => {
      console.warn(`${suite} skipped: ${serverUrl} does not answer (${String(error)})`);
      return false;
    },
  );

const made: Array<string> = [];

/** A new database on the server (dropped after the file). */
export const freshDatabase = async (): Promise<string> => {
  const name = `tay_cli_${process.pid}_${made.length}_${Math.floor(Math.random() * 1e6)}`;
  await admin(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  made.push(name);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

afterAll(async () => {
  for (const name of made.splice(0)) {
    await admin(serverUrl, (client) => client.query(`DROP DATABASE ${name} WITH (FORCE)`));
  }
});
