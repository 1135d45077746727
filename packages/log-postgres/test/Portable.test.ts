/**
 * The package's SQL stays in the portable subset: every statement of
 * `internal/sql.ts` passes the checker, the checker refuses each construct
 * on its list (advisory locks, SKIP LOCKED, LISTEN/NOTIFY, sequences, ...),
 * and no other source file holds SQL of its own, so the checked module is
 * all the SQL there is.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { violations } from "../src/internal/portable.js";
import {
  channel,
  diagnostics,
  everyStatement,
  notifications,
  statements,
} from "../src/internal/sql.js";

const sources = path.join(import.meta.dirname, "..", "src");

const sourceFiles = (directory: string): Array<string> =>
  fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });

describe("the portable subset", () => {
  it("every statement the log sends passes", () => {
    const statements = everyStatement("tay");
    expect(statements.length).toBeGreaterThan(20);
    const refused = statements
      .map((text) => ({ text, why: violations(text) }))
      .filter((found) => found.why.length > 0);
    expect(refused).toEqual([]);
  });

  it("the diagnostics outside it are the ones listed, and the checker sees why", () => {
    expect(Object.values(diagnostics).map(violations)).toEqual([
      ['starts with "SHOW synchronous_commit", not a portable statement'],
    ]);
  });

  it("the notifications are outside it, and none of them is a statement of the log path", () => {
    const listen = notifications.listen(channel("6f9619ff-8b86-d011-b42d-00c04fc964ff"));
    expect(listen).toBe("LISTEN tay_6f9619ff8b86d011b42d00c04fc964ff");
    expect([listen, notifications.notify].map(violations)).toEqual([
      ['starts with "LISTEN tay_6f9619ff8b86d", not a portable statement', "LISTEN/NOTIFY"],
      ["LISTEN/NOTIFY"],
    ]);
    const path = everyStatement("tay");
    expect(path.filter((text) => /LISTEN|pg_notify/i.test(text))).toEqual([]);
  });

  it.each([
    ["SELECT pg_advisory_xact_lock(1)", "advisory locks"],
    ["SELECT id FROM jobs FOR UPDATE SKIP LOCKED", "SKIP LOCKED"],
    ["SELECT last_sequence FROM tay_current WHERE store_id = 'x' FOR UPDATE", "row locks"],
    // The turn's head read is the one row lock allowed, as it is and nowhere else.
    [
      'SELECT epoch, last_sequence FROM "tay".tay_record WHERE store_id = $1 FOR UPDATE',
      "row locks",
    ],
    [
      'SELECT epoch, last_sequence FROM "tay".tay_current WHERE store_id = $1 FOR SHARE',
      "row locks",
    ],
    ["LISTEN tay", "LISTEN/NOTIFY"],
    ["SELECT pg_notify('tay', '1')", "LISTEN/NOTIFY"],
    ["SELECT nextval('tay_seq')", "database sequences (they leave gaps)"],
    ["CREATE TABLE t (id BIGSERIAL PRIMARY KEY)", "generated keys (sequences)"],
    ["INSERT INTO t (a) VALUES (1) RETURNING a", "RETURNING"],
    ["INSERT INTO t (a) VALUES (1) ON CONFLICT DO NOTHING", "ON CONFLICT"],
    ["SELECT '1'::bigint", "PostgreSQL cast syntax (use CAST)"],
    ["INSERT INTO t SELECT * FROM unnest(ARRAY[1])", "arrays"],
    ["SELECT 1; SELECT 2", "several statements in one text"],
    ["CREATE TABLE t (a INT) PARTITION BY RANGE (a)", "partitioning"],
  ])("refuses %s", (text, why) => {
    expect(violations(text)).toContain(why);
  });

  it("the turn's head read is allowed its FOR UPDATE, and nothing added to it is", () => {
    const { lockHead } = statements("tay");
    expect(violations(lockHead)).toEqual([]);
    expect(violations(`${lockHead} NOWAIT`)).toEqual(["NOWAIT", "row locks"]);
  });

  it("no source file but internal/sql.ts holds a statement", () => {
    const statement =
      /`\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE|BEGIN|COMMIT|ROLLBACK|SET|SHOW)\b/;
    const elsewhere = sourceFiles(sources)
      .filter((file) => !file.endsWith(path.join("internal", "sql.ts")))
      .filter(
        (file) =>
          statement.test(fs.readFileSync(file, "utf8")) ||
          /"(BEGIN|COMMIT|ROLLBACK)"/.test(fs.readFileSync(file, "utf8")),
      )
      .map((file) => path.relative(sources, file));
    expect(elsewhere).toEqual([]);
  });
});
