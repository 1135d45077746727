/**
 * What errors and reports name a store by: its URL without the password,
 * with `#schema.store` for where in the database it lives. The password
 * never reaches a message, a report or a log line.
 */
import { InvalidUrl } from "../PgError.js";

const schemes: ReadonlySet<string> = new Set(["postgres:", "postgresql:"]);

/** Removes a password from the URL's userinfo and its query, or says why `url` is no postgres:// URL. */
export const redact = (url: string): string | InvalidUrl => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return new InvalidUrl({ url: "(unparsable URL)", reason: "not a URL: expected postgres://" });
  }
  parsed.password = "";
  parsed.searchParams.delete("password");
  parsed.hash = "";
  if (!schemes.has(parsed.protocol)) {
    return new InvalidUrl({
      url: parsed.toString(),
      reason: `the scheme ${parsed.protocol} is not postgres: or postgresql:`,
    });
  }
  return parsed.toString();
};

/** The store's path: the redacted URL, then `#schema.store`. */
export const storePath = (redactedUrl: string, schema: string, store: string): string =>
  `${redactedUrl}#${schema}.${store}`;
