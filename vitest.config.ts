import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import the packages by name; alias them to their sources so the suite
// runs without a prior build and coverage maps to the TypeScript files.
const source = (name: string) =>
  fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url));

// CI asks for a JSON report beside the usual output (TAY_TEST_REPORT=path)
// so that it can print the counts as one plain closing line.
const jsonReport = process.env.TAY_TEST_REPORT;

export default defineConfig({
  resolve: {
    alias: {
      "@tay/core": source("core"),
      "@tay/codec": source("codec"),
      "@tay/shell-node": source("shell-node"),
      "@tay/testkit": source("testkit"),
    },
  },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters:
      jsonReport === undefined ? ["default"] : ["default", ["json", { outputFile: jsonReport }]],
  },
});
