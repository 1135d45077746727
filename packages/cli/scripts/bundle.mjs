#!/usr/bin/env node
/**
 * The published `tay` as one file (docs/cli.md, "The published command is
 * one file"): `bundle/tay.mjs`, esbuild's bundle of `dist/main.js` with
 * everything it imports but the native addons and the drivers loaded on
 * first use, which stay packages the bundle imports (`external`, below;
 * the package depends on each of them). Loading ~500 modules took most of
 * a command's 0.55 s; one file loads in a fraction of it.
 *
 * Made by `prepack` and removed by `postpack`, so a workspace never runs a
 * bundle older than its `dist/` (`bin/tay.mjs` prefers the bundle when it
 * exists). `--out FILE` writes it elsewhere (a test), `--remove` deletes it.
 * Run after `pnpm build`.
 */
import { rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const argument = (name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const out = resolve(argument("--out") ?? resolve(packageRoot, "bundle/tay.mjs"));

if (process.argv.includes("--remove")) {
  rmSync(dirname(out), { recursive: true, force: true });
} else {
  // Resolved from the workspace's root: a dev tool, not a dependency of the package.
  const { build } = await import(resolve(packageRoot, "../../node_modules/esbuild/lib/main.js"));
  await build({
    entryPoints: [resolve(packageRoot, "dist/main.js")],
    outfile: out,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Native addons (and their loaders) cannot be bundled; pg and prom-client
    // are imported on first use and stay so (each is one of the package's
    // dependencies); the runtimes' own modules are theirs.
    external: ["fast-crc32c", "fs-ext", "pg", "pg-native", "prom-client", "bun:*"],
    legalComments: "none",
    logLevel: "warning",
  });
}
