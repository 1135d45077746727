// Checks that every module a package lists in `sideEffects` is in its
// tarball: a listed path that was renamed or moved would leave the side
// effect unprotected from a bundler without a word.
//   node side-effects-shipped.mjs PACKAGE_JSON TARBALL_LISTING
import { readFileSync } from "node:fs";

const [manifestPath, listingPath] = process.argv.slice(2);
if (listingPath === undefined) {
  console.error(
    "side-effects-shipped: usage: side-effects-shipped.mjs PACKAGE_JSON TARBALL_LISTING",
  );
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
const shipped = new Set(readFileSync(listingPath, "utf8").split("\n"));
const listed = Array.isArray(manifest.sideEffects) ? manifest.sideEffects : [];
for (const path of listed) {
  if (!shipped.has(`package/${path.replace(/^\.\//, "")}`)) {
    console.error(
      `side-effects-shipped: ${manifest.name} lists ${path} in sideEffects; its tarball has no such file`,
    );
    process.exit(1);
  }
}
