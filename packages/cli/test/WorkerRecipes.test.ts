// The recipes of docs/worker.md run as they are written: every code block of its "Recipes"
// section is extracted by the consumer check's extractor (.ci/lib/readme-blocks.mjs), typechecked
// as a strict application would against the built packages, and run as a module on a fresh
// store; each `console.log(...)` must print what the comment after it says, and the store must
// then be closed with no job executing. The shutdown recipe runs as a process of its own (on the
// built packages) that is sent SIGTERM while its job runs: the job completes and the process
// exits by itself.
import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { format } from "node:util";
import { Query } from "@tay/core";
import { EnginePromises } from "@tay/shell-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { requireBuild, watch } from "./support/cli.js";

const workspace = fileURLToPath(new URL("../../../", import.meta.url));
const page = path.join(workspace, "docs", "worker.md");
const shutdownRecipe = "Graceful shutdown in a container";

/**
 * Where the recipes are written: inside the CLI package, so that their imports resolve as a
 * user's would (its node_modules: effect, and the built @tay packages for the shutdown process)
 * and vitest transforms the others with the workspace's aliases.
 */
const scratch = fileURLToPath(new URL("../node_modules/.tay-recipes/", import.meta.url));
let root = "";
let recipes: ReadonlyArray<{ readonly heading: string; readonly file: string }> = [];

/** The `###` headings of the page's "Recipes" section, in order. */
const recipeHeadings = (markdown: string): Array<string> => {
  const section = /^## Recipes\n([\s\S]*?)^## /m.exec(markdown)?.[1] ?? "";
  return [...section.matchAll(/^### (.+)$/gm)].map((match) => match[1] ?? "");
};

/** What each `console.log(...); // expected` line of a recipe says it prints, in order. */
const expectedOutput = (source: string): Array<string> =>
  [...source.matchAll(/console\.log\(.*\);\s*\/\/ (.*)$/gm)].map((match) => match[1] ?? "");

beforeAll(async () => {
  requireBuild();
  await fs.mkdir(scratch, { recursive: true });
  root = await fs.mkdtemp(path.join(scratch, "run-"));
  // Each recipe's store is created in here (createIfMissing needs the parent).
  await fs.mkdir(path.join(root, "data"));
  const headings = recipeHeadings(await fs.readFile(page, "utf8"));
  const written = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [".ci/lib/readme-blocks.mjs", page, root, path.join(root, "data"), "recipe", ...headings],
      { cwd: workspace, encoding: "utf8" },
      (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(stderr))),
    );
  });
  const files = written.trim().split("\n");
  // One block per recipe: the extractor names each after its heading, in order.
  expect(files).toHaveLength(headings.length);
  recipes = headings.map((heading, index) => ({ heading, file: files[index] ?? "" }));
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** The recipe's own store ("./data" became `root/data/<its file's stem>`). */
const storeOf = (file: string): string => path.join(root, "data", path.basename(file, ".ts"));

/** Opening the store proves the recipe released it; no job of it may be left executing. */
const expectClosedWithNothingExecuting = async (file: string): Promise<void> => {
  const opened = await EnginePromises.open(storeOf(file), { timers: false });
  try {
    expect(opened.report.rescued).toBe(0);
    expect(Query.jobsIn(opened.state(), "executing")).toEqual([]);
  } finally {
    await opened.close();
  }
};

describe("docs/worker.md recipes", () => {
  it("has the recipes this suite knows how to run", () => {
    expect(recipes.map((recipe) => recipe.heading)).toContain(shutdownRecipe);
    expect(recipes.length).toBeGreaterThanOrEqual(10);
  });

  it("runs each in-process recipe, which prints what its comments say", async () => {
    for (const { heading, file } of recipes.filter((recipe) => recipe.heading !== shutdownRecipe)) {
      const expected = expectedOutput(await fs.readFile(file, "utf8"));
      expect(expected.length, heading).toBeGreaterThan(0);
      const log = vi.spyOn(console, "log").mockImplementation(() => {});
      try {
        await import(file);
        expect(
          log.mock.calls.map((call) => format(...call)),
          heading,
        ).toEqual(expected);
      } finally {
        log.mockRestore();
      }
      await expectClosedWithNothingExecuting(file);
    }
  });

  it("typechecks each as a strict application's module", async () => {
    // The consumer check's compiler options; the packages resolve from the CLI's node_modules.
    const config = {
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2023"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        types: ["node"],
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        verbatimModuleSyntax: true,
        // The packages' declarations are the consumer check's to verify; these are the recipes'.
        skipLibCheck: true,
        noEmit: true,
      },
      files: recipes.map((recipe) => recipe.file),
    };
    const project = path.join(root, "tsconfig.json");
    await fs.writeFile(project, JSON.stringify(config));
    const compiler = path.join(workspace, "node_modules", "typescript", "bin", "tsc");
    const checked = await new Promise<string>((resolve) => {
      execFile(process.execPath, [compiler, "-p", project], { encoding: "utf8" }, (_, stdout) =>
        resolve(stdout),
      );
    });
    expect(checked).toBe("");
  });

  it("the shutdown recipe, sent SIGTERM while its job runs, finishes it and exits", async () => {
    const recipe = recipes.find((candidate) => candidate.heading === shutdownRecipe);
    const file = recipe?.file ?? "";
    // Run as a plain module on the built packages, as a deployed program runs.
    const program = file.replace(/\.ts$/, ".mjs");
    await fs.copyFile(file, program);
    const child = spawn(process.execPath, [program], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const run = watch(child);
    await run.waitFor(/^sending$/m);
    child.kill("SIGTERM");
    const exited = await run.exited;
    expect(exited.stderr).toBe("");
    // It exited on its own, and not by the signal: nothing was left running.
    expect(exited.status).toBe(0);
    const printed = exited.stdout.trimEnd().split("\n");
    expect(printed).toEqual(expectedOutput(await fs.readFile(file, "utf8")));
    await expectClosedWithNothingExecuting(file);
    const opened = await EnginePromises.open(storeOf(file), { timers: false });
    const jobs = opened.jobs();
    await opened.close();
    expect(jobs.map((job) => [job.state, job.attempt, job.result?.value])).toEqual([
      ["completed", 1, "sent"],
    ]);
  });
});
