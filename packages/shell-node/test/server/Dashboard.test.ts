// The dashboard in a real browser: Debian's chromium driven by playwright-core against a server on
// a store with jobs and a schedule, over TCP with the token. Each view renders with data (checked in
// the page and by a screenshot that is not blank), a committed insert reaches the live counts, and
// the actions round-trip: a cancel's and a retry's success and a typed refusal are shown, and a row
// offers cancel only while its job is not terminal, retry once it is discarded or cancelled, and a
// queue's row retries its discarded jobs, and a form sets a queue's limits; each queue's state (paused,
// limits) is live and pause/resume round-trips, checked in the engine and by screenshots of the view
// (different while paused, the same again once resumed); an executing job's row shows its progress,
// updated live.
// Skips without chromium.
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
    timezone: "Europe/Berlin",
    catchUp: "skip",
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

/** The dashboard opened with the token, and the page errors it throws as they come. */
const openDashboard = async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: Array<string> = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`http://${served.listen}/?token=${served.token}`);
  return { page, errors };
};

/** A screenshot with more than one colour: the view drew something. */
const drawn = (png: Buffer) => png.length > 5_000;

describe.skipIf(!present)("dashboard", () => {
  it("renders every view with data, goes live, and round-trips the actions", async () => {
    const { page, errors: refusals } = await openDashboard();
    await page.waitForSelector("#queues tr");
    await page.waitForSelector("#schedules tr");
    expect(await page.textContent("#queues")).toContain("email");
    expect(await page.textContent("#status")).toContain("lastSequence");
    expect(await page.textContent("#status")).toContain(
      "autoCompactionoff (compacted only when told)",
    );
    expect(await page.textContent("#schedules")).toContain("nightly");
    expect(await page.textContent("#schedules")).toContain("Europe/Berlin, catch-up skip");
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

    // Cancel a job: success shown, and the row offers retry instead.
    await page.click("#jobs tr button:has-text('cancel')");
    await page.waitForSelector("#message.ok");
    expect(await page.textContent("#message")).toContain("cancelled job 3");
    expect(opened.job(3)?.state).toBe("cancelled");
    await page.waitForSelector("#jobs tr button:has-text('retry')");
    expect(await page.locator("#jobs tr button:has-text('cancel')").count()).toBe(0);
    // Retry it: it runs again (EVENTS-V3.md's redrive), and offers cancel again.
    await page.click("#jobs tr button:has-text('retry')");
    await page.waitForFunction(
      `document.querySelector("#message.ok")?.textContent?.includes("retried job 3")`,
    );
    expect(opened.job(3)?.state).toBe("available");
    await page.waitForSelector("#jobs tr button:has-text('cancel')");
    // A row older than the job (cancelled elsewhere since it was drawn): the typed refusal shown.
    await opened.cancel(3, "elsewhere");
    await page.click("#jobs tr button:has-text('cancel')");
    await page.waitForSelector("#message.error");
    expect(await page.textContent("#message")).toContain("Rejected");
    // A completed job offers neither.
    const [claimed] = await opened.claim("email");
    if (claimed === undefined) throw new Error("no email job to claim");
    await opened.complete(claimed.jobId);
    await page.fill("#filter-queue", "email");
    await page.click("#filters button");
    await page.waitForFunction(
      `[...document.querySelectorAll("#jobs tr")].some((tr) => tr.textContent.includes("completed"))`,
    );
    const completedRow = page.locator("#jobs tr", { hasText: "completed" });
    expect(await completedRow.locator("button").allTextContents()).toEqual(["history"]);

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

  it("shows an executing job's progress in its row, live, and none once it ends", async () => {
    const { jobId } = await opened.insert({ queue: "imports", worker: "Import", args: null });
    await opened.claim("imports", 1);
    await opened.reportProgress(jobId, 1, { rows: 500, of: 1000 });
    const { page, errors } = await openDashboard();
    await page.fill("#filter-queue", "imports");
    await page.click("#filters button");
    await page.waitForFunction(
      `document.querySelector("#jobs tr")?.textContent?.includes('{"of":1000,"rows":500}')`,
    );
    // A report held later reaches the row without a reload (the progress stream).
    await opened.reportProgress(jobId, 1, { rows: 750, of: 1000 });
    await page.waitForFunction(
      `document.querySelector("#jobs tr")?.textContent?.includes('{"of":1000,"rows":750}')`,
    );
    await opened.complete(jobId, undefined, { attempt: 1 });
    await page.click("#filters button");
    await page.waitForFunction(
      `document.querySelector("#jobs tr")?.textContent?.includes("completed")`,
    );
    expect(await page.textContent("#jobs")).not.toContain("rows");
    expect(errors).toEqual([]);
  }, 120_000);

  it("lists jobs newest first, 200 a page, and pages to older ones and back", async () => {
    const jobs = await opened.insertMany(
      Array.from({ length: 250 }, (_, index) => ({ queue: "many", worker: "W", args: index })),
    );
    const ids = jobs.map((job) => job.jobId);
    const { page, errors } = await openDashboard();
    await page.fill("#filter-queue", "many");
    await page.click("#filters button");
    await page.waitForFunction(`document.querySelectorAll("#jobs tr").length === 200`);
    const shownIds = () =>
      page.$$eval("#jobs tr", (rows) => rows.map((row) => Number(row.getAttribute("data-job"))));
    expect(await shownIds()).toEqual([...ids].reverse().slice(0, 200));
    expect(await page.isDisabled("#jobs-newest")).toBe(true);
    await page.click("#jobs-older");
    await page.waitForFunction(`document.querySelectorAll("#jobs tr").length === 50`);
    expect(await shownIds()).toEqual([...ids].reverse().slice(200));
    expect(await page.isDisabled("#jobs-older")).toBe(true);
    await page.click("#jobs-newest");
    await page.waitForFunction(`document.querySelectorAll("#jobs tr").length === 200`);
    expect((await shownIds())[0]).toBe(ids.at(-1));
    expect(errors).toEqual([]);
    await Promise.all(jobs.map((job) => opened.cancel(job.jobId)));
  }, 120_000);

  it("retries a queue's discarded jobs from its row", async () => {
    const jobs = await opened.insertMany(
      [0, 1].map((index) => ({ queue: "flaky", worker: "W", args: index, maxAttempts: 1 })),
    );
    for (const job of await opened.claim("flaky", 2)) await opened.fail(job.jobId, "down");
    const { page, errors } = await openDashboard();
    const flaky = 'tr[data-queue="flaky"]';
    await page.waitForSelector(`${flaky} button:has-text('retry discarded')`);
    // A queue without discarded jobs offers no such button.
    expect(await page.locator("tr[data-queue='email'] button:has-text('retry')").count()).toBe(0);
    // It asks first: dismissed, nothing is run again.
    const asked: Array<string> = [];
    page.once("dialog", (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await page.click(`${flaky} button:has-text('retry discarded')`);
    expect(asked).toEqual(["Run again the 2 discarded job(s) of queue flaky?"]);
    for (const job of jobs) expect(opened.job(job.jobId)?.state).toBe("discarded");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.click(`${flaky} button:has-text('retry discarded')`);
    await page.waitForFunction(
      `document.querySelector("#message.ok")?.textContent?.includes("retried 2 discarded job(s) of queue flaky")`,
    );
    for (const job of jobs) expect(opened.job(job.jobId)?.state).toBe("available");
    await page.waitForFunction(
      `!document.querySelector('${flaky}')?.textContent?.includes("retry discarded")`,
    );
    expect(errors).toEqual([]);
  }, 120_000);

  it("sets a queue's limits from its form, keeping an empty field, removing none", async () => {
    const { page, errors } = await openDashboard();
    await page.waitForSelector("#queues tr");
    const setLimits = async (queue: string, concurrency: string, rate: string) => {
      await page.fill("#limits-queue", queue);
      await page.fill("#limits-concurrency", concurrency);
      await page.fill("#limits-rate", rate);
      await page.click("#limits-form button");
    };
    await setLimits("limited", "3", "20/1000");
    await page.waitForFunction(
      `document.querySelector("tr[data-queue='limited']")?.textContent?.includes("20 per 1000 ms")`,
    );
    expect(await page.textContent("#message")).toContain("set the limits of queue limited");
    expect(opened.queue("limited")).toMatchObject({
      concurrency: 3,
      rateLimit: { count: 20, perMs: 1_000 },
    });
    // An empty field keeps its limit; none removes one.
    await setLimits("limited", "", "none");
    await page.waitForFunction(
      `!document.querySelector("tr[data-queue='limited']")?.textContent?.includes("per 1000 ms")`,
    );
    expect(opened.queue("limited")).toMatchObject({ concurrency: 3, rateLimit: null });
    // Out of range: the server's refusal, naming the field, and nothing changed.
    await setLimits("limited", "0", "");
    await page.waitForSelector("#message.error");
    expect(await page.textContent("#message")).toContain("body.concurrency");
    expect(opened.queue("limited")?.concurrency).toBe(3);
    expect(errors).toEqual([]);
  }, 120_000);

  it("shows each queue's state live and round-trips pause and resume", async () => {
    const { page, errors } = await openDashboard();
    const email = 'tr[data-queue="email"]';
    await page.waitForSelector(email);
    expect(await page.textContent(email)).toContain("running");

    // Limits set elsewhere reach the view without a reload (the committed event stream).
    await opened.setQueueLimits("email", {
      concurrency: 2,
      rateLimit: { count: 10, perMs: 1_000 },
    });
    await page.waitForFunction(
      `document.querySelector('${email}')?.textContent?.includes("10 per 1000 ms")`,
    );
    expect(await page.textContent(email)).toContain("2");
    // The table, not its section: the section's rounded corners blend with what is behind them.
    const section = page.locator("#queues-section table");
    const before = await section.screenshot({
      path: join(import.meta.dirname, "screenshots/dashboard-queues.png"),
    });
    expect(drawn(before)).toBe(true);

    // Pause from the page: the engine's queue is paused, the row says so and offers resume.
    await page.click(`${email} button:has-text('pause')`);
    await page.waitForSelector(`${email}.paused`);
    expect(await page.textContent("#message")).toContain("paused queue email");
    expect(opened.queue("email")?.paused).toBe(true);
    const paused = await section.screenshot({
      path: join(import.meta.dirname, "screenshots/dashboard-queues-paused.png"),
    });
    expect(paused.equals(before)).toBe(false);

    // Resume: the limits are kept, and the view is drawn as before the pause.
    await page.click(`${email} button:has-text('resume')`);
    await page.waitForSelector(`${email}:not(.paused) button:has-text('pause')`);
    expect(opened.queue("email")).toMatchObject({ paused: false, concurrency: 2 });
    await page.mouse.move(0, 0);
    const resumed = await section.screenshot({
      path: join(import.meta.dirname, "screenshots/dashboard-queues-resumed.png"),
    });
    expect(resumed.equals(before)).toBe(true);

    // A pause made elsewhere shows live; a queue with no jobs can be paused by name.
    await opened.pauseQueue("reports");
    await page.waitForSelector('tr[data-queue="reports"].paused');
    await page.fill("#queue-name", "quiet");
    await page.click("#queue-form button");
    await page.waitForSelector('tr[data-queue="quiet"].paused');
    expect(opened.queue("quiet")?.paused).toBe(true);

    // A typed refusal is shown: a queue name the deciders refuse; nothing is paused.
    await page.fill("#queue-name", "");
    await page.click("#queue-form button");
    await page.waitForSelector("#message.error");
    expect(await page.textContent("#message")).toContain("Rejected");

    // Over TCP, no pause without the token.
    const refused = await page.request.post(`http://${served.listen}/v1/resume-queue`, {
      data: { queue: "quiet" },
    });
    expect(refused.status()).toBe(401);
    expect(opened.queue("quiet")?.paused).toBe(true);
    expect(errors).toEqual([]);
  }, 120_000);

  it("refuses the page's data without the token over TCP", async () => {
    const page = await browser.newPage();
    const response = await page.goto(`http://${served.listen}/v1/counts`);
    expect(response?.status()).toBe(401);
  }, 60_000);
});
