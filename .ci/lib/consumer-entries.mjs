// Writes the consumer app's src/entries.ts: one `import * as` of every subpath
// in every installed @tay package's exports map, so that the app's strict
// typecheck reads every declaration file a user can reach and the run loads
// every entry. Run in the app directory: node consumer-entries.mjs PACKAGE...
import { readFileSync, writeFileSync } from "node:fs";

const names = process.argv.slice(2);
if (names.length === 0) {
  console.error("consumer-entries: usage: consumer-entries.mjs PACKAGE...");
  process.exit(1);
}
const lines = [];
let index = 0;
for (const name of names) {
  const manifest = JSON.parse(readFileSync(`node_modules/@tay/${name}/package.json`, "utf8"));
  for (const subpath of Object.keys(manifest.exports)) {
    const specifier = `@tay/${name}${subpath.slice(1)}`;
    lines.push(`import * as entry${index} from "${specifier}";`);
    lines.push(
      `if (Object.keys(entry${index}).length === 0) throw new Error("${specifier} exports nothing");`,
    );
    index++;
  }
}
lines.push(`console.log("${index} entry points loaded");`);
writeFileSync("src/entries.ts", `${lines.join("\n")}\n`);
