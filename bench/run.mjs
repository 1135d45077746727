// Runs every package benchmark (packages/*/bench/*.bench.mjs) one after the
// other, each in its own Node process with --expose-gc, so one benchmark's
// heap and JIT state cannot colour the next. Benchmarks import the built
// dist/ of their package: `pnpm bench` builds first.
import { spawnSync } from "node:child_process";
import { readdirSync, existsSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const only = process.argv.slice(2);
const files = [];
for (const pkg of readdirSync(join(root, "packages")).sort()) {
  const dir = join(root, "packages", pkg, "bench");
  if (!existsSync(dir)) continue;
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".bench.mjs")) continue;
    if (only.length > 0 && !only.some((name) => file.includes(name) || pkg.includes(name)))
      continue;
    files.push(join(dir, file));
  }
}
let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file.slice(root.length)} ===`);
  const result = spawnSync(process.execPath, ["--expose-gc", file], { stdio: "inherit" });
  if (result.status !== 0) failed++;
}
if (failed > 0) {
  console.error(`${failed} benchmark(s) failed`);
  process.exit(1);
}
