/**
 * `tay serve DIR --create` in a child process for a whole test file (the
 * built CLI: `pnpm build` first), on a directory of its own: started
 * before the file's tests, stopped (SIGTERM, its exit awaited) and the
 * directory removed after them. The returned object's `directory` may be
 * read once `beforeAll` ran.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Locate } from "@tay/client";
import { afterAll, beforeAll } from "vitest";

/** The built `tay` command. */
export const tayBin = new URL("../../../cli/bin/tay.mjs", import.meta.url).pathname;

/** Waits (every 50 ms, at most 60 s) until `ready()` holds; throws if it never does. */
export const untilReady = async (ready: () => boolean | Promise<boolean>): Promise<void> => {
  for (let tries = 0; tries < 1_200; tries++) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the condition never held");
};

export const servedChildForFile = (prefix: string): { directory: string } => {
  const served = { directory: "" };
  let server: ChildProcess | undefined;
  beforeAll(async () => {
    served.directory = join(mkdtempSync(join(tmpdir(), `tay-${prefix}-`)), "data");
    server = spawn(process.execPath, [tayBin, "serve", served.directory, "--create"], {
      stdio: "ignore",
    });
    const { directory } = served;
    await untilReady(
      () => Locate.servedAt(directory) !== null && existsSync(Locate.socketOf(directory)),
    );
  }, 60_000);
  afterAll(async () => {
    const running = server;
    if (running !== undefined && running.exitCode === null) {
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGTERM");
      await exited;
    }
    rmSync(join(served.directory, ".."), { recursive: true, force: true });
  });
  return served;
};
