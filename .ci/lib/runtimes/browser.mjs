// The browser check of .ci/runtimes: bundles browser-entry.mjs (core and
// codec as installed in APP_DIR) with esbuild for the browser, loads it into
// a blank page of Debian's chromium (headless, driven by playwright-core,
// never a downloaded browser) and compares what it found with FORMAT.md.
//
//   node browser.mjs APP_DIR ESBUILD_BIN PLAYWRIGHT_CORE_DIR
import { execFileSync } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";

const [app, esbuild, playwrightDirectory] = process.argv.slice(2);
if (playwrightDirectory === undefined) {
  console.error("browser: usage: browser.mjs APP_DIR ESBUILD_BIN PLAYWRIGHT_CORE_DIR");
  process.exit(2);
}

const entry = join(app, "browser-entry.mjs");
const bundle = join(app, "browser-bundle.js");
copyFileSync(new URL("browser-entry.mjs", import.meta.url), entry);
// No alias, no define, no browser field: a bundle needs no configuration.
// Warnings fail the check (--log-level=warning prints them; stderr is read).
const log = execFileSync(
  esbuild,
  [
    entry,
    "--bundle",
    "--platform=browser",
    "--format=iife",
    "--minify",
    `--outfile=${bundle}`,
    "--log-level=warning",
  ],
  { cwd: app, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
);
if (log.trim() !== "") throw new Error(`browser: esbuild warned:\n${log}`);
const code = readFileSync(bundle, "utf8");
console.log(
  `browser: core and codec bundled for the browser, ${Math.round(code.length / 1024)} KB minified`,
);

const { chromium } = createRequire(join(playwrightDirectory, "package.json"))("playwright-core");
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
try {
  const page = await browser.newPage();
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  await page.setContent("<!doctype html><title>tay</title>");
  await page.addScriptTag({ content: code });
  const found = await page.evaluate(() => globalThis.tayBrowserCheck);
  const version = browser.version();
  if (pageErrors.length > 0) throw new Error(`browser: page errors: ${pageErrors.join("; ")}`);
  if (found?.ok !== true) throw new Error(`browser: the check failed in the page: ${found?.error}`);
  const expected = {
    crc32c: { implementation: "portable", check: 0xe306_9283 },
    current: { epoch: 1 },
    header: { segmentId: 1, firstSequence: 1 },
    value: [-0.5, "é", 0],
    inserted: { tag: "JobInserted", jobId: 1, queue: "default" },
    history: ["JobInserted", "JobStarted", "Mutation"],
    job: { state: "completed", attempt: 1 },
  };
  if (!isDeepStrictEqual(found.result, expected)) {
    throw new Error(
      `browser: found ${JSON.stringify(found.result)}, expected ${JSON.stringify(expected)}`,
    );
  }
  console.log(
    `browser: chromium ${version}: FORMAT.md's vectors decoded (portable CRC-32C), a history folded to a completed job`,
  );
} finally {
  await browser.close();
}
