// Prints the versions of the peer dependencies (effect, fast-check) that the
// consumer check installs, as "EFFECT FAST_CHECK":
//   tested  the workspace's devDependencies (what the suite runs on);
//   lowest  the floor of the peerDependencies ranges (what the packages claim).
// The packages must agree with each other: one effect range and one tested
// effect version across shell-node, testkit and cli. A range of any other
// shape than ^X.Y.Z is refused, so a new shape is a decision, not a guess.
import { readFileSync } from "node:fs";

const fail = (message) => {
  console.error(`peer-versions: ${message}`);
  process.exit(1);
};

const manifest = (name) =>
  JSON.parse(readFileSync(new URL(`../../packages/${name}/package.json`, import.meta.url), "utf8"));

const peers = { effect: ["shell-node", "testkit", "cli"], "fast-check": ["testkit"] };

const only = (dependency, field) => {
  const found = new Set();
  for (const name of peers[dependency]) {
    const spec = manifest(name)[field]?.[dependency];
    if (spec === undefined) fail(`packages/${name} has no ${field}.${dependency}`);
    found.add(spec);
  }
  if (found.size !== 1)
    fail(`${field}.${dependency} differs between packages: ${[...found].join(", ")}`);
  return [...found][0];
};

const tested = (dependency) => {
  const spec = only(dependency, "devDependencies");
  if (!/^\d+\.\d+\.\d+$/.test(spec))
    fail(`devDependencies.${dependency} ${spec} is not an exact version`);
  return spec;
};

const lowest = (dependency) => {
  const range = only(dependency, "peerDependencies");
  const floor = /^\^(\d+\.\d+\.\d+)$/.exec(range);
  if (floor === null) fail(`peerDependencies.${dependency} ${range} is not of the form ^X.Y.Z`);
  return floor[1];
};

const mode = process.argv[2];
const pick = { tested, lowest }[mode];
if (pick === undefined) fail(`usage: peer-versions.mjs tested|lowest (got ${mode})`);
console.log(`${pick("effect")} ${pick("fast-check")}`);
