// Engines on fresh stores in temporary directories, removed after each test of the file that
// asks for them, and a wait for a condition: what the promise-face tests of the worker and the
// engine share.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";

/** Fresh stores named after `prefix`; call once at the top of a test file. */
export const tempStores = (prefix: string) => {
  const made: Array<string> = [];
  afterEach(() => {
    for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true });
  });
  const directory = (): string => {
    const root = mkdtempSync(join(tmpdir(), `tay-${prefix}-`));
    made.push(root);
    return join(root, "data");
  };
  return {
    directory,
    /** An engine on a new store (created), with `options`. */
    open: (options: EnginePromises.OpenOptions = {}) =>
      EnginePromises.open(directory(), { createIfMissing: true, ...options }),
  };
};

/** Waits (real time, at most 10 s) until `ready()` holds; throws if it never does. */
export const until = async (ready: () => boolean): Promise<void> => {
  for (let tries = 0; tries < 1_000 && !ready(); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (!ready()) throw new Error("the condition never held");
};
