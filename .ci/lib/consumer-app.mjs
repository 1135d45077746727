// Writes the consumer app's package.json: the @tay tarballs of TARBALL_DIR,
// effect and fast-check at the versions asked, TypeScript and the @types
// packages at the workspace's own ranges. The overrides pin every @tay package that
// another depends on to the same tarball, so npm never asks the registry
// for one (a name there could be anybody's).
//   node consumer-app.mjs TARBALL_DIR EFFECT_VERSION FAST_CHECK_VERSION OUT
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

const [tarballs, effect, fastCheck, out] = process.argv.slice(2);
if (out === undefined) {
  console.error("consumer-app: usage: consumer-app.mjs TARBALL_DIR EFFECT FAST_CHECK OUT");
  process.exit(1);
}
const workspace = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
const logPostgres = JSON.parse(
  readFileSync(new URL("../../packages/log-postgres/package.json", import.meta.url), "utf8"),
);
const tay = {};
for (const file of readdirSync(tarballs)) {
  const match = /^tay-(.+)-\d+\.\d+\.\d+\.tgz$/.exec(file);
  if (match === null) throw new Error(`consumer-app: unexpected file ${file} in ${tarballs}`);
  tay[`@tay/${match[1]}`] = `file:${tarballs}/${file}`;
}
const app = {
  name: "tay-consumer-check",
  private: true,
  type: "module",
  dependencies: {
    ...tay,
    effect,
    "fast-check": fastCheck,
    typescript: workspace.devDependencies.typescript,
    "@types/node": workspace.devDependencies["@types/node"],
    // Only for typechecking the packages' own sources (shell-node imports fs-ext,
    // log-postgres imports pg).
    "@types/fs-ext": workspace.devDependencies["@types/fs-ext"],
    "@types/pg": logPostgres.devDependencies["@types/pg"],
  },
  overrides: Object.fromEntries(Object.keys(tay).map((name) => [name, `$${name}`])),
};
writeFileSync(out, `${JSON.stringify(app, null, 2)}\n`);
