/**
 * The portable subset of SQL the log keeps to, as a checker over statement
 * texts: what a statement may start with, and what it may not contain. The
 * list is the union of what breaks on CockroachDB or YugabyteDB and what
 * would let a SQL feature stand in for the log's own rules (a database
 * sequence for the log's sequences, a lock for the guarded head row).
 */

/** How a portable statement may begin. */
const allowedStarts: ReadonlyArray<RegExp> = [
  /^SELECT\s/,
  /^INSERT INTO\s/,
  /^UPDATE\s/,
  /^DELETE FROM\s/,
  /^(BEGIN|COMMIT|ROLLBACK)$/,
  /^(SET|BEGIN) TRANSACTION ISOLATION LEVEL (REPEATABLE READ|SERIALIZABLE|READ COMMITTED)$/,
  /^CREATE SCHEMA IF NOT EXISTS\s/,
  /^CREATE TABLE\s/,
];

/**
 * The one row lock allowed: the writer's turn reads the head row `FOR
 * UPDATE` (docs/postgres.md, "A turn after a conflict", 2026-12-05). It
 * orders writers that keep losing the guard; it is not what keeps two
 * appends apart (the guards are). PostgreSQL, CockroachDB (an exclusive
 * lock that plain reads do not wait on) and YugabyteDB all take it.
 */
const turnLock =
  /^SELECT epoch, last_sequence FROM "[a-z_][a-z0-9_]*"\.tay_current WHERE store_id = \$1 FOR UPDATE$/;

/** What a portable statement never contains (but the one exception named), and why. */
const forbidden: ReadonlyArray<{
  readonly pattern: RegExp;
  readonly why: string;
  readonly unless?: RegExp;
}> = [
  { pattern: /\badvisory\b|pg_advisory|pg_try_advisory/i, why: "advisory locks" },
  { pattern: /\bskip\s+locked\b/i, why: "SKIP LOCKED" },
  { pattern: /\bnowait\b/i, why: "NOWAIT" },
  { pattern: /\bfor\s+(share|no\s+key\s+update|key\s+share)\b/i, why: "row locks" },
  { pattern: /\bfor\s+update\b/i, why: "row locks", unless: turnLock },
  { pattern: /\block\s+table\b/i, why: "table locks" },
  { pattern: /\b(un)?listen\b|\bnotify\b|pg_notify/i, why: "LISTEN/NOTIFY" },
  {
    pattern: /\bsequence\s*\(|\bcreate\s+sequence\b|\bnextval\b|\bcurrval\b|\bsetval\b/i,
    why: "database sequences (they leave gaps)",
  },
  { pattern: /\b(big|small)?serial\b|\bidentity\b/i, why: "generated keys (sequences)" },
  { pattern: /\breturning\b/i, why: "RETURNING" },
  { pattern: /\bon\s+conflict\b/i, why: "ON CONFLICT" },
  { pattern: /\bpartition\b/i, why: "partitioning" },
  { pattern: /\btrigger\b|\bfunction\b|\bprocedure\b|\bdo\s+\$/i, why: "server-side code" },
  { pattern: /::/, why: "PostgreSQL cast syntax (use CAST)" },
  { pattern: /\bunnest\b|\barray\s*\[/i, why: "arrays" },
  { pattern: /\bilike\b|\bjsonb?\b/i, why: "PostgreSQL-only operators and types" },
  { pattern: /;/, why: "several statements in one text" },
];

/** Why `text` is outside the portable subset: empty when it is inside. */
export const violations = (text: string): ReadonlyArray<string> => {
  const found: Array<string> = [];
  if (!allowedStarts.some((start) => start.test(text))) {
    found.push(`starts with ${JSON.stringify(text.slice(0, 24))}, not a portable statement`);
  }
  // `sequence` is a column name; only the constructs above are refused.
  for (const { pattern, why, unless } of forbidden) {
    if (pattern.test(text) && !unless?.test(text)) found.push(why);
  }
  return found;
};
