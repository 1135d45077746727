/**
 * The dashboard at `GET /`: one self-contained page (no build step, no
 * framework, nothing fetched from elsewhere) over the protocol's own
 * routes: queues with live counts and their state (paused or running,
 * concurrency, rate limit; refetched when the committed event stream says
 * something committed) with pause and resume, the job list with filters (queue,
 * state, id), one job's history, schedules with their next due times, the
 * store's status, and the actions cancel job (one not terminal), retry
 * job (a discarded or cancelled one, EVENTS-V3.md's redrive), retry a
 * queue's discarded jobs (`/v1/redrive-all`), cancel schedule, pause and
 * resume a queue (also one named in a form, before it has jobs), and set a
 * queue's concurrency and rate limit (a form), whose typed refusals it
 * shows. Over TCP it sends the token given to it as `?token=` (as a bearer
 * header, and as `?token=` for its event stream).
 */

const style = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { background: #1d2330; color: #fff; padding: 10px 16px; display: flex; gap: 16px; align-items: baseline; }
header h1 { font-size: 16px; margin: 0; }
main { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; padding: 12px; }
section { background: #fff; border: 1px solid #d8dce3; border-radius: 6px; padding: 10px; overflow: auto; }
section.wide { grid-column: 1 / 3; }
h2 { font-size: 14px; margin: 0 0 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eceef2; white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
#message { min-height: 1.4em; padding: 4px 16px; }
#message.error { background: #fde8e8; color: #8a1c1c; }
#message.ok { background: #e6f6ea; color: #1c6b34; }
button { font-size: 12px; }
tr.paused td { background: #fff6dd; }
form { display: flex; gap: 6px; margin-bottom: 8px; flex-wrap: wrap; }
`;

const script = `
const token = new URLSearchParams(location.search).get("token");
const headers = token ? { authorization: "Bearer " + token } : {};
const $ = (id) => document.getElementById(id);
const text = (value) => document.createTextNode(value === null || value === undefined ? "-" : String(value));
const time = (ms) => (ms === null || ms === undefined ? "-" : new Date(ms).toISOString());
const row = (cells) => {
  const tr = document.createElement("tr");
  for (const cell of cells) {
    const td = document.createElement("td");
    if (cell instanceof Node) td.appendChild(cell);
    else { td.appendChild(text(cell)); if (typeof cell === "number") td.className = "n"; }
    tr.appendChild(td);
  }
  return tr;
};
const fill = (id, rows) => { const body = $(id); body.replaceChildren(...rows); };
const say = (kind, line) => { const m = $("message"); m.className = kind; m.textContent = line; };
async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw answer.error;
  return answer;
}
const button = (label, action) => {
  const b = document.createElement("button");
  b.textContent = label;
  b.addEventListener("click", action);
  return b;
};
// One action: the route called, what its answer says (a refusal shown typed), the views redrawn.
async function act(route, body, told) {
  try { say("ok", told(await call("POST", route, body))); }
  catch (error) { say("error", error._tag + ": " + error.message); }
  refresh();
}
const cancelJob = (jobId) =>
  act("/v1/cancel", { jobId, reason: "cancelled from the dashboard" }, () => "cancelled job " + jobId);
const retryJob = (jobId) =>
  act("/v1/redrive", { jobId, reason: "retried from the dashboard" }, () => "retried job " + jobId);
async function retryDiscarded(queue, count) {
  // A bulk action: one misplaced click would run every discarded job again.
  if (!confirm("Run again the " + count + " discarded job(s) of queue " + queue + "?")) return;
  try {
    const { jobIds, refused } = await call("POST", "/v1/redrive-all", { queue, reason: "retried from the dashboard" });
    say(refused.length === 0 ? "ok" : "error", "retried " + jobIds.length + " discarded job(s) of queue " + queue +
      (refused.length === 0 ? "" : "; refused " + refused.length + ": " + refused.map((r) => r.jobId + " " + r.reason).join(", ")));
  } catch (error) { say("error", error._tag + ": " + error.message); }
  refresh();
}
const cancelSchedule = (scheduleId) =>
  act("/v1/cancel-schedule", { scheduleId }, () => "cancelled schedule " + scheduleId);
async function showHistory(jobId) {
  try {
    const { events } = await call("GET", "/v1/jobs/" + jobId + "/history");
    $("history-title").textContent = "Job " + jobId + " history";
    fill("history", events.map((e) => row([e.sequence, e.member, e.event, JSON.stringify(e.fields)])));
  } catch (error) { say("error", error._tag + ": " + error.message); }
}
async function setPaused(queue, paused) {
  const route = paused ? "/v1/pause-queue" : "/v1/resume-queue";
  try {
    await call("POST", route, { queue });
    say("ok", (paused ? "paused queue " : "resumed queue ") + queue);
  } catch (error) { say("error", error._tag + ": " + error.message); }
  loadQueues();
}
// The limits form: a field left empty keeps that limit, "none" removes it,
// a rate is COUNT/MS; the server checks the numbers and its refusal is shown.
const limitField = (text, parse) => (text === "" ? undefined : text === "none" ? null : parse(text));
async function setLimits(queue, concurrencyText, rateText) {
  const body = { queue };
  const concurrency = limitField(concurrencyText.trim(), Number);
  const rateLimit = limitField(rateText.trim(), (text) => {
    const [count, perMs] = text.split("/");
    return { count: Number(count), perMs: Number(perMs) };
  });
  if (concurrency !== undefined) body.concurrency = concurrency;
  if (rateLimit !== undefined) body.rateLimit = rateLimit;
  try { await call("POST", "/v1/set-queue-limits", body); say("ok", "set the limits of queue " + queue); }
  catch (error) { say("error", error._tag + ": " + error.message); }
  loadQueues();
}
const rate = (limit) => (limit === null ? "-" : limit.count + " per " + limit.perMs + " ms");
async function loadQueues() {
  const [{ counts }, { queues }] = await Promise.all([call("GET", "/v1/counts"), call("GET", "/v1/queues")]);
  const states = new Map(queues.map((q) => [q.queue, q]));
  const names = [...new Set([...Object.keys(counts), ...states.keys()])].sort();
  const none = { available: 0, scheduled: 0, executing: 0, retryable: 0, completed: 0, discarded: 0, cancelled: 0 };
  fill("queues", names.map((queue) => {
    const c = counts[queue] ?? none;
    const q = states.get(queue) ?? { paused: false, concurrency: null, rateLimit: null };
    const tr = row([queue, c.available, c.scheduled, c.executing, c.retryable, c.completed, c.discarded, c.cancelled,
      q.paused ? "paused" : "running", q.concurrency, rate(q.rateLimit),
      q.paused ? button("resume", () => setPaused(queue, false)) : button("pause", () => setPaused(queue, true)),
      c.discarded > 0 ? button("retry discarded", () => retryDiscarded(queue, c.discarded)) : ""]);
    tr.dataset.queue = queue;
    if (q.paused) tr.className = "paused";
    return tr;
  }));
}
// What a job row offers: a job not yet terminal can be cancelled; a
// discarded or cancelled one run again (EVENTS-V3.md's redrive); a
// completed one neither.
// A report as a line: its value's JSON, cut to 80 characters (the whole value is the API's).
function progressText(report, attempt) {
  if (report === undefined || report.attempt !== attempt) return "";
  const text = JSON.stringify(report.value);
  return text.length > 80 ? text.slice(0, 79) + "…" : text;
}
const rerunnable = new Set(["discarded", "cancelled"]);
const finished = new Set(["completed"]);
// The jobs view lists newest first, 200 a page: the page shown starts
// below jobsBefore (undefined: the newest), and jobsNext is where the
// next older page starts (null: none older).
let jobsBefore;
let jobsNext = null;
async function loadJobs() {
  const id = $("filter-id").value.trim();
  let jobs;
  if (id !== "") {
    const { job } = await call("GET", "/v1/jobs/" + encodeURIComponent(id));
    jobs = job === null ? [] : [job];
    jobsNext = null;
  } else {
    const query = new URLSearchParams({ limit: "200", order: "desc" });
    if ($("filter-queue").value) query.set("queue", $("filter-queue").value);
    if ($("filter-state").value) query.set("state", $("filter-state").value);
    if (jobsBefore !== undefined) query.set("before", String(jobsBefore));
    const answer = await call("GET", "/v1/jobs?" + query);
    jobs = answer.jobs;
    // A full page may have older jobs below it; its last id is where they start.
    jobsNext = jobs.length === 200 ? jobs[jobs.length - 1].jobId : null;
  }
  $("jobs-older").disabled = jobsNext === null;
  $("jobs-newest").disabled = jobsBefore === undefined;
  // Progress is held for executing attempts only: asked for once, when the list has one.
  const reports = jobs.some((job) => job.state === "executing")
    ? (await call("GET", "/v1/progress")).progress : [];
  const progress = new Map(reports.map((report) => [report.jobId, report]));
  fill("jobs", jobs.map((job) => {
    const tr = row([
      job.jobId, job.state, job.queue, job.worker, job.attempt + "/" + job.maxAttempts, time(job.scheduledAt),
      progressText(progress.get(job.jobId), job.attempt),
      button("history", () => showHistory(job.jobId)),
      rerunnable.has(job.state) ? button("retry", () => retryJob(job.jobId))
        : finished.has(job.state) ? "" : button("cancel", () => cancelJob(job.jobId)),
    ]);
    tr.dataset.job = String(job.jobId);
    tr.dataset.attempt = String(job.attempt);
    return tr;
  }));
}
// A report as it is held: shown in its job's row, if listed at that attempt.
function showProgress(report) {
  const tr = document.querySelector('#jobs tr[data-job="' + report.jobId + '"]');
  if (tr === null || tr.dataset.attempt !== String(report.attempt)) return;
  tr.children[6].textContent = progressText(report, report.attempt);
}
async function loadSchedules() {
  const { schedules } = await call("GET", "/v1/schedules");
  fill("schedules", schedules.map((s) => row([
    s.scheduleId, s.definition.queue,
    (s.definition.cron ?? (s.definition.everyMs + " ms")) + (s.definition.timezone ? " (" + s.definition.timezone + ", catch-up " + s.definition.catchUp + ")" : ""),
    s.cancelledAt === null ? time(s.nextDueAt) : "cancelled",
    button("cancel", () => cancelSchedule(s.scheduleId)),
  ])));
}
async function loadStatus() {
  const status = await call("GET", "/v1/status");
  fill("status", ["storeId", "epoch", "segments", "firstSequence", "lastSequence", "records", "bytes",
    "pressure", "jobs", "schedules", "leases", "sessions"].map((key) => row([key, status[key]]))
    .concat([row(["orphanedGenerations", status.orphanedGenerations.map((o) => o.epoch).join(", ") || "-"])])
    .concat([row(["autoCompaction", autoCompactionText(status.autoCompaction)])]));
}
function autoCompactionText(auto) {
  if (auto === null || auto === undefined) return "off (compacted only when told)";
  const parts = ["retention " + auto.retentionMs + " ms", auto.runs + " run(s)", auto.failures + " failure(s)",
    auto.jobsDropped + " job(s) dropped", auto.running ? "running" : "next look at sequence " + auto.checkAt];
  if (auto.lastDurationMs !== null) parts.push("last took " + auto.lastDurationMs + " ms");
  if (auto.lastError !== null) parts.push("last error: " + auto.lastError);
  return parts.join(", ");
}
async function refresh() {
  try { await Promise.all([loadQueues(), loadJobs(), loadSchedules(), loadStatus()]); }
  catch (error) { say("error", (error._tag ?? "Error") + ": " + (error.message ?? String(error))); }
  document.body.dataset.loaded = String(Number(document.body.dataset.loaded ?? "0") + 1);
}
let pending = false;
let again = false;
// One reload at a time; a change told during it reloads once more after it.
function reloadLive() {
  if (pending) { again = true; return; }
  pending = true;
  Promise.all([loadQueues(), loadStatus()]).catch(() => undefined).finally(() => {
    pending = false;
    if (again) { again = false; reloadLive(); }
  });
}
function live() {
  const events = new EventSource("/v1/changes" + (token ? "?token=" + encodeURIComponent(token) : ""));
  const reports = new EventSource("/v1/progress/stream" + (token ? "?token=" + encodeURIComponent(token) : ""));
  reports.addEventListener("progress", (event) => showProgress(JSON.parse(event.data)));
  // The server tells a change at most every 100 ms (/v1/changes), not every event.
  events.addEventListener("changed", reloadLive);
}
$("filters").addEventListener("submit", (event) => { event.preventDefault(); jobsBefore = undefined; loadJobs(); });
$("jobs-older").addEventListener("click", () => { jobsBefore = jobsNext ?? undefined; loadJobs(); });
$("jobs-newest").addEventListener("click", () => { jobsBefore = undefined; loadJobs(); });
$("queue-form").addEventListener("submit", (event) => { event.preventDefault(); setPaused($("queue-name").value, true); });
$("limits-form").addEventListener("submit", (event) => {
  event.preventDefault();
  setLimits($("limits-queue").value, $("limits-concurrency").value, $("limits-rate").value);
});
refresh();
live();
`;

const states = [
  "",
  "scheduled",
  "available",
  "executing",
  "retryable",
  "completed",
  "discarded",
  "cancelled",
];

/** The page. */
export const page = (): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tay</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${style}</style></head>
<body>
<header><h1>Tay</h1><span>one store, served</span></header>
<div id="message"></div>
<main>
<section class="wide" id="queues-section"><h2>Queues (live)</h2>
<form id="queue-form"><input id="queue-name" placeholder="queue"><button type="submit">pause</button></form>
<form id="limits-form"><input id="limits-queue" placeholder="queue"><input id="limits-concurrency" placeholder="concurrency (or none)" size="18"><input id="limits-rate" placeholder="rate: count/ms (or none)" size="20"><button type="submit">set limits</button></form>
<table><thead><tr><th>queue</th><th>available</th><th>scheduled</th><th>executing</th><th>retryable</th><th>completed</th><th>discarded</th><th>cancelled</th><th>state</th><th>concurrency</th><th>rate limit</th><th></th><th></th></tr></thead><tbody id="queues"></tbody></table></section>
<section><h2>Store</h2><table><tbody id="status"></tbody></table></section>
<section><h2>Schedules</h2><table><thead><tr><th>id</th><th>queue</th><th>recurs</th><th>next due</th><th></th></tr></thead><tbody id="schedules"></tbody></table></section>
<section class="wide"><h2>Jobs (newest first)</h2>
<form id="filters"><input id="filter-queue" placeholder="queue"><select id="filter-state">${states
  .map((state) => `<option value="${state}">${state === "" ? "any state" : state}</option>`)
  .join(
    "",
  )}</select><input id="filter-id" placeholder="job id" size="8"><button type="submit">filter</button></form>
<table><thead><tr><th>id</th><th>state</th><th>queue</th><th>worker</th><th>attempt</th><th>scheduled at</th><th>progress</th><th></th><th></th></tr></thead><tbody id="jobs"></tbody></table>
<p><button id="jobs-newest" type="button" disabled>newest</button> <button id="jobs-older" type="button" disabled>older</button></p></section>
<section class="wide"><h2 id="history-title">Job history</h2><table><thead><tr><th>sequence</th><th>member</th><th>event</th><th>fields</th></tr></thead><tbody id="history"></tbody></table></section>
</main>
<script>${script}</script>
</body></html>
`;
