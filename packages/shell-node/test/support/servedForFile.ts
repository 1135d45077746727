/**
 * One engine and its server for a whole test file, in a directory of its
 * own: opened before the file's tests and closed (the directory removed)
 * after them. The returned object's fields may be read once `beforeAll` ran.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Server from "../../src/server/Server.js";

export interface ServedForFile {
  readonly directory: string;
  readonly opened: EnginePromises.OpenedEngine;
  readonly served: Server.StartedServer;
}

export const servedForFile = (
  prefix: string,
  options: Omit<Server.ServeOptions, "directory"> = {},
  engineOptions: Omit<EnginePromises.OpenOptions, "createIfMissing"> = {},
): ServedForFile => {
  let current: ServedForFile | undefined;
  const held = (): ServedForFile => {
    if (current === undefined) throw new Error("servedForFile: read before beforeAll ran");
    return current;
  };
  beforeAll(async () => {
    const directory = join(mkdtempSync(join(tmpdir(), prefix)), "data");
    const opened = await EnginePromises.open(directory, {
      ...engineOptions,
      createIfMissing: true,
    });
    const served = await Server.start(opened, { directory, ...options });
    current = { directory, opened, served };
  });
  afterAll(async () => {
    const { directory, opened, served } = held();
    await served.close();
    await opened.close();
    rmSync(join(directory, ".."), { recursive: true, force: true });
  });
  return {
    get directory() {
      return held().directory;
    },
    get opened() {
      return held().opened;
    },
    get served() {
      return held().served;
    },
  };
};
