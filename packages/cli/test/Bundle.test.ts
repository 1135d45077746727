// The published `tay` is one file (scripts/bundle.mjs, docs/cli.md "The
// published command is one file"): it must be the same command as the
// compiled modules the other suites run. Made here into a directory of the
// package (so its external imports resolve as an installed package's do).
import { readFileSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Run, runNode, tay, temporaryRoot } from "./support/cli.js";

const packageRoot = fileURLToPath(new URL("../", import.meta.url));
const outDirectory = path.join(packageRoot, `bundle-test-${process.pid}`);
const bundled = path.join(outDirectory, "tay.mjs");
const root = temporaryRoot({ built: true });

beforeAll(async () => {
  const made = await runNode(path.join(packageRoot, "scripts", "bundle.mjs"), ["--out", bundled]);
  expect(made, "the bundle is made").toMatchObject({ status: 0, stderr: "" });
});

afterAll(async () => {
  await fs.rm(outDirectory, { recursive: true, force: true });
});

describe("the published command (one file)", () => {
  it("imports nothing of the workspace at run time: only Node, the addons and the drivers", () => {
    const text = readFileSync(bundled, "utf8");
    const imported = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((found) => found[1]);
    const dynamic = [...text.matchAll(/\bimport\("([^"]+)"\)/g)].map((found) => found[1]);
    const allowed = /^(node:.*|fast-crc32c|fs-ext|pg|prom-client|bun:.*)$/;
    for (const specifier of [...imported, ...dynamic]) expect(specifier).toMatch(allowed);
  });

  it("answers as the modules do: writes, reads, verify, and refusals", async () => {
    // The same steps on two stores, one through each build.
    const steps = (store: string): ReadonlyArray<ReadonlyArray<string>> => [
      ["init", store],
      ["insert", store, "--queue", "q", "--worker", "W", "--args", '{"n":1}', "--json"],
      ["status", store, "--json"],
      ["jobs", store, "--json"],
      ["verify", store, "--json"],
      ["init", store],
      ["job", store, "99"],
      ["nosuch"],
    ];
    const bundleStore = path.join(root(), "through-bundle");
    const modulesStore = path.join(root(), "through-modules");
    // What differs between two stores: their paths, IDs and times.
    const stable = (answer: Run, store: string) => {
      const text = (value: string) =>
        value
          .replaceAll(store, "STORE")
          .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "ID")
          .replace(/"([a-zA-Z_]*(?:At|_at)|at)":\d+/g, '"$1":0')
          .replace(/"([a-zA-Z_]*(?:Ms|_ms))":[\d.]+/g, '"$1":0');
      return { status: answer.status, stdout: text(answer.stdout), stderr: text(answer.stderr) };
    };
    const bundleSteps = steps(bundleStore);
    const modulesSteps = steps(modulesStore);
    for (const [at, args] of bundleSteps.entries()) {
      const viaBundle = stable(await runNode(bundled, args), bundleStore);
      const viaModules = stable(await tay(modulesSteps[at] ?? []), modulesStore);
      expect(viaBundle, args.join(" ")).toEqual(viaModules);
    }
  });
});
