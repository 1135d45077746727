// Checks, in the consumer app's directory, the point of peer dependencies:
// the @tay packages resolve effect and fast-check to the app's own copy, at
// the versions asked, and every @tay package is installed once.
// (effect itself depends on a fast-check 3 for effect/FastCheck: that copy
// is effect's own and is not one of ours.)
//   node consumer-peers.mjs EFFECT_VERSION FAST_CHECK_VERSION
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [effect, fastCheck] = process.argv.slice(2);
if (fastCheck === undefined) {
  console.error("consumer-peers: usage: consumer-peers.mjs EFFECT_VERSION FAST_CHECK_VERSION");
  process.exit(1);
}
const fail = (message) => {
  console.error(`consumer-peers: ${message}`);
  process.exit(1);
};

const expected = { effect, "fast-check": fastCheck };
const users = { effect: ["shell-node", "testkit", "cli"], "fast-check": ["testkit"] };
for (const [dependency, version] of Object.entries(expected)) {
  const own = realpathSync(`node_modules/${dependency}`);
  const installed = JSON.parse(readFileSync(`${own}/package.json`, "utf8")).version;
  if (installed !== version) fail(`${dependency} ${installed} installed, expected ${version}`);
  for (const user of users[dependency]) {
    const from = createRequire(realpathSync(`node_modules/@tay/${user}/package.json`));
    const resolved = realpathSync(from.resolve(dependency));
    if (!resolved.startsWith(`${own}/`)) {
      fail(`@tay/${user} resolves ${dependency} to ${resolved}, not the app's ${own}`);
    }
  }
}

// Every package.json of an @tay package anywhere in the tree.
const tayCopies = [];
const walk = (directory) => {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(directory, entry.name);
    if (entry.name === "@tay" && directory.endsWith("node_modules")) {
      for (const name of readdirSync(path)) tayCopies.push(join(path, name));
    }
    walk(path);
  }
};
walk("node_modules");
if (tayCopies.length !== 7)
  fail(`expected the 7 @tay packages once each, found: ${tayCopies.join(", ")}`);
console.log(`peers: one effect ${effect}, one fast-check ${fastCheck}, each @tay package once`);
