/**
 * The bearer token a TCP listener requires (a Unix socket is guarded by
 * its mode, 0600, and needs none): 32 random bytes in hex, generated at
 * the first serve that listens on TCP into `DATA_DIR/server-token` (mode
 * 0600, published by write-temp and rename so a reader never sees half of
 * one), and rotated by `rotate` (`tay serve --rotate-token`): a running
 * server's `Current` looks at the file (one `stat`) on every TCP request
 * and reads it again when it was replaced, so a rotation takes effect at
 * once, for the old token too.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Locate } from "@tay/client";

/** The token file of `directory`. */
export const tokenPath = (directory: string): string => join(directory, Locate.tokenName);

const fresh = (): string => randomBytes(32).toString("hex");

const publish = async (path: string, token: string): Promise<void> => {
  const staged = `${path}.tmp`;
  await writeFile(staged, `${token}\n`, { mode: 0o600 });
  await rename(staged, path);
};

/** The token in `directory`'s file, or null when there is none. */
export const read = async (directory: string): Promise<string | null> => {
  try {
    const text = (await readFile(tokenPath(directory), "utf8")).trim();
    return /^[0-9a-f]{64}$/.test(text) ? text : null;
  } catch {
    return null;
  }
};

/** The token of `directory`, generated into its file when there is none yet. */
export const ensure = async (directory: string): Promise<string> => {
  const existing = await read(directory);
  if (existing !== null) return existing;
  const token = fresh();
  await publish(tokenPath(directory), token);
  return token;
};

/** Replaces the token with a fresh one; the old one stops working at once. */
export const rotate = async (directory: string): Promise<string> => {
  const token = fresh();
  await publish(tokenPath(directory), token);
  return token;
};

/** Whether `offered` is `expected`, in time independent of where they differ. */
export const matches = (offered: string, expected: string): boolean => {
  const left = Buffer.from(offered);
  const right = Buffer.from(expected);
  return left.length === right.length && timingSafeEqual(left, right);
};

/** The token of a running server: the file's, re-read whenever the file was replaced. */
export class Current {
  private version = "";

  constructor(
    private readonly directory: string,
    private token: string,
  ) {}

  /** The token now; null when the file is gone or unreadable (then nothing matches). */
  async get(): Promise<string | null> {
    const info = await stat(tokenPath(this.directory)).catch(() => null);
    if (info === null) return null;
    const version = `${info.ino}:${info.mtimeMs}:${info.size}`;
    if (version !== this.version) {
      const stored = await read(this.directory);
      if (stored === null) return null;
      this.token = stored;
      this.version = version;
    }
    return this.token;
  }
}
