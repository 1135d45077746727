/**
 * The README's quickstarts, read from README.md itself: every TypeScript
 * block under "Library quickstart" and "Without Effect" is extracted by the
 * consumer check's own script (.ci/lib/readme-blocks.mjs) and run as a
 * module, twice on the same store, and the store is then read back; the
 * package README's "Example" blocks likewise, once. If this test breaks, a
 * README is lying. It also covers `createIfMissing`, which the quickstarts
 * rely on, on a missing, an initialised and a foreign directory.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "@effect/vitest";
import type { Job } from "@tay/core";
import { Effect } from "effect";
import { afterAll, beforeAll, vi } from "vitest";
import { Engine, EnginePromises, NodeDisk } from "../../src/index.js";
import { temporaryDirectory } from "../support/store.js";

const workspace = fileURLToPath(new URL("../../../../", import.meta.url));

/** A README and the headings whose blocks `.ci/consumer` runs, with the prefix it names them by. */
interface Readme {
  readonly file: string;
  readonly prefix: string;
  readonly headings: ReadonlyArray<string>;
}

const rootReadme: Readme = {
  file: "README.md",
  prefix: "readme",
  headings: ["Library quickstart", "Without Effect"],
};
const packageReadme: Readme = {
  file: "packages/shell-node/README.md",
  prefix: "shell-node",
  headings: ["Example"],
};

/**
 * Where extracted blocks are written: inside the package, so that their
 * `effect` import resolves as a user's would (the package's own
 * node_modules) and vitest transforms them with the workspace's aliases.
 */
const extractRoot = fileURLToPath(new URL("../../node_modules/.tay-readme/", import.meta.url));
let dataRoot = "";
const made: Array<string> = [];

beforeAll(async () => {
  await fs.mkdir(extractRoot, { recursive: true });
  dataRoot = await fs.mkdtemp(path.join(extractRoot, "data-"));
  made.push(dataRoot);
});

afterAll(async () => {
  for (const directory of made) await fs.rm(directory, { recursive: true, force: true });
});

/** Extracts a README's blocks into a fresh directory (one module each), as `.ci/consumer` does. */
const extract = (readme: Readme): Promise<ReadonlyArray<string>> =>
  fs.mkdtemp(path.join(extractRoot, "blocks-")).then(
    (out) =>
      new Promise((resolve, reject) => {
        made.push(out);
        execFile(
          process.execPath,
          [
            ".ci/lib/readme-blocks.mjs",
            readme.file,
            out,
            dataRoot,
            readme.prefix,
            ...readme.headings,
          ],
          { cwd: workspace, encoding: "utf8" },
          (error, stdout, stderr) =>
            error === null ? resolve(stdout.trim().split("\n")) : reject(new Error(stderr)),
        );
      }),
  );

/** Runs each extracted module once (a fresh extraction: modules are cached by path). */
const runAll = async (
  readme: Readme,
): Promise<{
  readonly modules: ReadonlyArray<string>;
  readonly logged: ReadonlyArray<unknown>;
  readonly errors: ReadonlyArray<unknown>;
}> => {
  const modules = await extract(readme);
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const error = vi.spyOn(console, "error").mockImplementation(() => {});
  try {
    for (const module of modules) await import(module);
    return {
      modules,
      logged: log.mock.calls.map((call) => call[0]),
      errors: error.mock.calls.map((call) => call[0]),
    };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
};

/**
 * The store a block wrote (its "./data" is `dataRoot/<module's stem>`), read
 * back; opening it proves the block released its lock.
 */
const jobsOf = (module: string): Promise<ReadonlyArray<Job.Job>> =>
  EnginePromises.open(path.join(dataRoot, path.basename(module, ".ts")), { timers: false }).then(
    async (opened) => {
      const jobs = opened.jobs();
      await opened.close();
      return jobs;
    },
  );

describe("README quickstarts, read from README.md", () => {
  it("run as modules and end, twice on their stores, which hold what they did", async () => {
    const first = await runAll(rootReadme);
    expect(first.modules.map((module) => path.basename(module))).toEqual([
      "readme-library-quickstart-1.ts",
      "readme-library-quickstart-2.ts",
      "readme-without-effect-1.ts",
    ]);
    const second = await runAll(rootReadme);
    expect(first.errors).toEqual([]);
    expect(second.errors).toEqual([]);
    const [worker = "", effect = "", promises = ""] = first.modules;
    // Once each: the worker's handler, then the promise face's completed job.
    expect(first.logged).toEqual(["welcome, user 42", "completed"]);
    expect(second.logged).toEqual(["welcome, user 42", "completed"]);

    // The worker: each run's job was completed by its handler on the first attempt, with its
    // result (recorded before the block closed the store: nothing left for a rescue).
    const welcomed = await jobsOf(worker);
    expect(welcomed.map((job) => [job.jobId, job.state, job.attempt, job.errors.length])).toEqual([
      [1, "completed", 1, 0],
      [2, "completed", 1, 0],
    ]);
    expect(welcomed[0]?.result?.value).toEqual(new Map([["sent", true]]));

    // With Effect: claimed and completed by hand; the second run continues the store.
    const claimed = await jobsOf(effect);
    expect(claimed.map((job) => [job.jobId, job.state, job.result?.value])).toEqual([
      [1, "completed", "sent"],
      [2, "completed", "sent"],
    ]);

    expect((await jobsOf(promises)).map((job) => job.state)).toEqual(["completed", "completed"]);
  });
});

describe("the package README's example, read from packages/shell-node/README.md", () => {
  it("runs as modules that log what their comments say and release their stores", async () => {
    const run = await runAll(packageReadme);
    expect(run.modules.map((module) => path.basename(module))).toEqual([
      "shell-node-example-1.ts",
      "shell-node-example-2.ts",
    ]);
    expect(run.errors).toEqual([]);
    expect(run.logged).toEqual(["sent to user-42", "completed"]);
    for (const module of run.modules) {
      expect((await jobsOf(module)).map((job) => job.state)).toEqual(["completed"]);
    }
  });
});

describe("createIfMissing", () => {
  it.scoped("refuses a non-empty directory that holds no store", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      yield* Effect.promise(() => fs.writeFile(path.join(directory, "notes.txt"), "mine"));
      const refused = yield* Effect.flip(
        Effect.scoped(Engine.open(directory, { createIfMissing: true })),
      );
      expect(refused._tag).toBe("NotEmpty");
      const entries = yield* Effect.promise(() => fs.readdir(directory));
      expect(entries).toEqual(["notes.txt"]);
    }).pipe(Effect.provide(NodeDisk.layer)),
  );

  it.scoped("without it, a missing store is refused", () =>
    Effect.gen(function* () {
      const directory = path.join(yield* temporaryDirectory, "absent");
      const refused = yield* Effect.flip(Effect.scoped(Engine.open(directory)));
      expect(refused._tag).toBe("StoreNotFound");
    }).pipe(Effect.provide(NodeDisk.layer)),
  );
});
