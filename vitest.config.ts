import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import the packages by name; alias them to their sources so the suite
// runs without a prior build and coverage maps to the TypeScript files.
const source = (name: string) =>
  fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url));

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
  },
});
