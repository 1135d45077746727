// The dashboard in a real browser: Debian's chromium driven by playwright-core against a server on
// a store with jobs and a schedule, over TCP with the token. Each view renders with data (checked in
// the page and by a screenshot that is not blank), a committed insert reaches the live counts, and
// the actions round-trip: a cancel's success and a typed refusal are shown. Skips without chromium.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Server from "../../src/server/Server.js";

const executablePath = "/usr/bin/chromium";
const present = existsSync(executablePath);
if (!present) console.warn(`Dashboard.test.ts skipped: no chromium at ${executablePath}`);

let directory = "";
let opened: EnginePromises.OpenedEngine;
let served: Server.StartedServer;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  directory = join(mkdtempSync(join(tmpdir(), "tay-dashboard-")), "data");
  opened = await EnginePromises.open(directory, { createIfMissing: true });
  await opened.insert({ queue: "email", worker: "Send", args: { to: "a@example.com" } });
  await opened.insert({ queue: "email", worker: "Send", args: { to: "b@example.com" } });
  await opened.insert({ queue: "reports", worker: "Build", args: null });
  await opened.registerSchedule("nightly", {
    queue: "reports",
    worker: "Build",
    args: null,
    priority: 0,
    maxAttempts: 3,
    everyMs: null,
    cron: "0 3 * * *",
    overlap: "skip",
  });
  served = await Server.start(opened, { directory, listen: "127.0.0.1:0" });
  browser = await chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}, 120_000);

afterAll(async () => {
  if (!present) return;
  await browser.close();
  await served.close();
  await opened.close();
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

/** A screenshot with more than one colour: the view drew something. */
const drawn = (png: Buffer) => png.length > 5_000;

describe.skipIf(!present)("dashboard", () => {
  it("renders every view with data, goes live, and round-trips the actions", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const refusals: Array<string> = [];
    page.on("pageerror", (error) => refusals.push(error.message));
    await page.goto(`http://${served.listen}/?token=${served.token}`);
    await page.waitForSelector("#queues tr");
    await page.waitForSelector("#schedules tr");
    expect(await page.textContent("#queues")).toContain("email");
    expect(await page.textContent("#status")).toContain("lastSequence");
    expect(await page.textContent("#schedules")).toContain("nightly");
    expect(await page.locator("#jobs tr").count()).toBe(3);
    const first = await page.screenshot({
      path: join(import.meta.dirname, "screenshots/dashboard.png"),
    });
    expect(drawn(first)).toBe(true);

    // Live counts: a job inserted elsewhere shows up without a reload.
    await opened.insert({ queue: "live", worker: "W", args: null });
    await page.waitForFunction(`document.querySelector("#queues")?.textContent?.includes("live")`);

    // Filters and one job's history.
    await page.fill("#filter-queue", "reports");
    await page.click("#filters button");
    await page.waitForFunction(`document.querySelectorAll("#jobs tr").length === 1`);
    await page.click("#jobs tr button:has-text('history')");
    await page.waitForSelector("#history tr");
    expect(await page.textContent("#history")).toContain("JobInserted");

    // Cancel a job: success shown; cancel it again: the typed refusal shown.
    await page.click("#jobs tr button:has-text('cancel')");
    await page.waitForSelector("#message.ok");
    expect(await page.textContent("#message")).toContain("cancelled job 3");
    expect(opened.job(3)?.state).toBe("cancelled");
    await page.click("#jobs tr button:has-text('cancel')");
    await page.waitForSelector("#message.error");
    expect(await page.textContent("#message")).toContain("Rejected");

    // Cancel the schedule.
    await page.click("#schedules tr button:has-text('cancel')");
    await page.waitForFunction(
      `document.querySelector("#schedules")?.textContent?.includes("cancelled")`,
    );
    expect(opened.schedule("nightly")?.cancelledAt).not.toBeNull();
    const last = await page.screenshot({
      path: join(import.meta.dirname, "screenshots/dashboard-actions.png"),
    });
    expect(drawn(last)).toBe(true);
    expect(refusals).toEqual([]);
  }, 120_000);

  it("refuses the page's data without the token over TCP", async () => {
    const page = await browser.newPage();
    const response = await page.goto(`http://${served.listen}/v1/counts`);
    expect(response?.status()).toBe(401);
  }, 60_000);
});
