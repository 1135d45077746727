/**
 * Which JavaScript runtime runs the shell. The disk differs only in its
 * lock (and in one `unlink` quirk of Deno's), so this is read once, where
 * the lock is chosen. Private to `NodeDisk`.
 */

/** The runtimes the shell supports. */
export type Runtime = "node" | "bun" | "deno";

/**
 * Bun and Deno both provide `node:process` and say who they are in
 * `process.versions` (`bun`, `deno`); Node has neither entry.
 */
export const detect = (versions: Readonly<Record<string, string | undefined>>): Runtime => {
  if (typeof versions.bun === "string") return "bun";
  if (typeof versions.deno === "string") return "deno";
  return "node";
};

/** The runtime of this process. */
export const current: Runtime = detect(process.versions);
