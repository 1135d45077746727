// Extracts the TypeScript code blocks of named sections of a Markdown file,
// one file per block, so that the consumer check compiles and runs exactly
// the code a reader copies.
//
//   node readme-blocks.mjs README OUT_DIR DATA_ROOT PREFIX "Heading" ["Heading"...]
//
// A section is the text between its heading (any level, matched on its
// whole text) and the next heading; headings inside code fences do not
// count. Each block's "./data" string literal becomes DATA_ROOT/<file stem>,
// a fresh directory per block. Prints the written paths, one a line.
//
// Fails, rather than skipping, when a heading is missing or appears twice,
// when a section has no ```ts block, or when a fence is left open: a
// renamed heading must break the check, not silently shrink it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const fail = (message) => {
  console.error(`readme-blocks: ${message}`);
  process.exit(1);
};

const [readme, outDir, dataRoot, prefix, ...headings] = process.argv.slice(2);
if (
  readme === undefined ||
  outDir === undefined ||
  dataRoot === undefined ||
  prefix === undefined ||
  headings.length === 0
) {
  fail("usage: readme-blocks.mjs README OUT_DIR DATA_ROOT PREFIX HEADING...");
}

const lines = readFileSync(readme, "utf8").split("\n");
const fenceOf = (line) => /^(`{3,}|~{3,})\s*([\w-]*)/.exec(line);

// One pass: every heading outside fences, and every fenced block, with line numbers.
const sections = [];
const blocks = [];
let open = null;
lines.forEach((line, index) => {
  const fence = fenceOf(line);
  if (open !== null) {
    if (
      fence !== null &&
      fence[1][0] === open.marker[0] &&
      fence[1].length >= open.marker.length &&
      fence[2] === ""
    ) {
      blocks.push({ ...open, end: index });
      open = null;
    } else {
      open.body.push(line);
    }
    return;
  }
  if (fence !== null) {
    open = { marker: fence[1], language: fence[2], start: index, body: [] };
    return;
  }
  const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading !== null) sections.push({ text: heading[2], line: index });
});
if (open !== null) fail(`${readme}:${open.start + 1}: a code fence is never closed`);

const written = [];
for (const heading of headings) {
  const matches = sections.filter((section) => section.text === heading);
  if (matches.length !== 1) {
    fail(
      `${readme}: expected one heading "${heading}", found ${matches.length} (renamed? update .ci/consumer)`,
    );
  }
  const start = matches[0].line;
  const next = sections.find((section) => section.line > start);
  const end = next === undefined ? lines.length : next.line;
  const code = blocks.filter(
    (block) =>
      block.start > start && block.start < end && ["ts", "typescript"].includes(block.language),
  );
  if (code.length === 0) fail(`${readme}: the section "${heading}" has no \`\`\`ts block`);
  const slug = heading
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
  code.forEach((block, index) => {
    const stem = `${prefix}-${slug}-${index + 1}`;
    const dataDir = join(dataRoot, stem);
    const source = block.body.join("\n").replace(/(["'`])\.\/data\1/g, JSON.stringify(dataDir));
    mkdirSync(outDir, { recursive: true });
    const path = join(outDir, `${stem}.ts`);
    writeFileSync(
      path,
      `// Extracted from ${readme}:${block.start + 2} ("${heading}").\n${source}\n`,
    );
    written.push(path);
  });
}
console.log(written.join("\n"));
