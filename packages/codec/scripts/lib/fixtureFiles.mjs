/**
 * Writing or checking a fixture directory: every fixture file and a
 * SHA256SUMS that lists them, shared by the fixture scripts so that the
 * three directories are written and checked alike.
 *
 *   emitFixtures(directory, fixtures, process.argv.includes("--check"))
 *
 * With `check`, nothing is written: it exits 0 when the directory holds
 * exactly these files with these bytes and this SHA256SUMS, 1 otherwise.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

/** `fixtures` maps a file name to its bytes. */
export const emitFixtures = (directory, fixtures, check) => {
  const names = Object.keys(fixtures).sort();
  const sums = names.map((name) => `${sha256(fixtures[name])}  ${name}\n`).join("");
  if (check) {
    const committed = readFileSync(join(directory, "SHA256SUMS"), "utf8");
    const files = readdirSync(directory)
      .filter((name) => name !== "SHA256SUMS")
      .sort();
    const same =
      committed === sums &&
      files.join("\n") === names.join("\n") &&
      names.every((name) => sha256(readFileSync(join(directory, name))) === sha256(fixtures[name]));
    console.log(same ? "fixtures match" : "fixtures differ from the generator");
    process.exit(same ? 0 : 1);
  }
  mkdirSync(directory, { recursive: true });
  for (const name of names) writeFileSync(join(directory, name), fixtures[name]);
  writeFileSync(join(directory, "SHA256SUMS"), sums);
  console.log(`wrote ${names.length} fixtures and SHA256SUMS to ${directory}`);
};
