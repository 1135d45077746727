import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import the packages by name; alias them to their sources so the suite
// runs without a prior build and coverage maps to the TypeScript files.
const source = (file: string) => fileURLToPath(new URL(`./packages/${file}`, import.meta.url));

// CI asks for a JSON report beside the usual output (TAY_TEST_REPORT=path)
// so that it can print the counts as one plain closing line.
const jsonReport = process.env.TAY_TEST_REPORT;

export default defineConfig({
  resolve: {
    // Most specific first: a subpath must not be caught by its package's alias.
    alias: [
      {
        find: "@tay/shell-node/testing/FaultDisk",
        replacement: source("shell-node/src/disk/FaultDisk.ts"),
      },
      {
        find: "@tay/shell-node/testing/Crash",
        replacement: source("shell-node/src/disk/Crash.ts"),
      },
      { find: "@tay/shell-node/testing", replacement: source("shell-node/src/testing.ts") },
      { find: /^@tay\/core$/, replacement: source("core/src/index.ts") },
      { find: /^@tay\/codec$/, replacement: source("codec/src/index.ts") },
      { find: /^@tay\/client$/, replacement: source("client/src/index.ts") },
      { find: /^@tay\/shell-node$/, replacement: source("shell-node/src/index.ts") },
      { find: /^@tay\/testkit$/, replacement: source("testkit/src/index.ts") },
      { find: /^@tay\/cli$/, replacement: source("cli/src/Cli.ts") },
      { find: /^@tay\/log-postgres$/, replacement: source("log-postgres/src/index.ts") },
    ],
  },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    // A hang guard, not a speed claim: the CLI tests spawn `tay` processes, each
    // seconds long on a loaded 2-core machine (several took 58-74 s at load 17-20).
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: "forks",
    reporters:
      jsonReport === undefined ? ["default"] : ["default", ["json", { outputFile: jsonReport }]],
  },
});
