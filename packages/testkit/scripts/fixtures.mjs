#!/usr/bin/env node
/**
 * Regenerates the golden fixture stores of packages/testkit/test/fixtures/stores/
 * (and their SHA256SUMS and DIRECTORIES) from src/Fixtures.ts, deterministically.
 *
 * It builds the testkit first (`tsc -b`, which builds core, codec and shell-node
 * too), so the bytes always come from the current sources. Never run it to make
 * a failing compatibility test pass: see docs/testing.md.
 *
 *   pnpm --filter @tay/testkit fixtures
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const packageDirectory = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(packageDirectory, "test", "fixtures", "stores");

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-b", packageDirectory], { stdio: "inherit" });

const { Fixtures } = await import(join(packageDirectory, "dist", "index.js"));
const { NodeDisk } = await import("@tay/shell-node");
const { Effect } = await import("effect");

rmSync(target, { recursive: true, force: true });
mkdirSync(dirname(target), { recursive: true });
const tree = await Effect.runPromise(Effect.provide(Fixtures.writeAll(target), NodeDisk.layer));
console.log(
  `wrote ${Fixtures.names.length} fixture stores (${tree.files.length} files, ${tree.directories.length} directories) to ${target}`,
);
