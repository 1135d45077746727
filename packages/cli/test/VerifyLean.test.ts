/**
 * `tay verify` folds the history lean (issue 19): every record is checked
 * and every event folded by core's rules, but a completed job leaves memory
 * as its facts, as in an engine with the terminal index. Checked where it
 * shows: the built binary, run with a heap too small for the completed
 * jobs' args, verifies a directory and the same store copied to PostgreSQL
 * with the whole fold's answer. Folding whole, it runs out of heap
 * (planted: the whole projection, each case fails).
 */
import * as path from "node:path";
import { EnginePromises } from "@tay/shell-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Run,
  removeTemporary,
  requireBuild,
  runInProcess,
  tay,
  temporaryDirectory,
} from "./support/cli.js";
import { answers, freshDatabase } from "./support/postgres.js";

const reachable = await answers("tay verify's lean fold on PostgreSQL");

/** Completed jobs, each with args of `argsChars` characters: 80 MB of strings in all. */
const completed = 80;
const argsChars = 1_000_000;
/**
 * The binary's heap: its modules and a job or two in flight (it verifies
 * in 32 MB, not in 24, 2026-12-07), never the 80 MB.
 */
const heapMb = 48;

let root = "";
let store = "";

/** Runs the built `tay args...` with the old generation capped at `heapMb`. */
const tayInSmallHeap = (args: ReadonlyArray<string>): Promise<Run> =>
  tay(args, undefined, [`--max-old-space-size=${heapMb}`]);

/** The verdict's counts, or the run's end (a heap exhausted prints no JSON). */
const verdict = (run: Run): unknown =>
  run.status === 0
    ? JSON.parse(run.stdout)
    : { status: run.status, stderr: run.stderr.slice(0, 300) };

const expectedCounts = { valid: true, jobs: completed + 1, schedules: 0 };

beforeAll(async () => {
  requireBuild();
  root = await temporaryDirectory();
  store = path.join(root, "data");
  const engine = await EnginePromises.open(store, { createIfMissing: true, timers: false });
  for (let index = 0; index < completed; index++) {
    // Each string of its own (no two share their characters), as decoded from the log.
    const args =
      String.fromCharCode(97 + (index % 26)).repeat(argsChars - 8) + `${index}`.padStart(8, "0");
    const job = await engine.insert({ queue: "q", worker: "W", args });
    const [claimed] = await engine.claim("q", 1);
    expect(claimed?.jobId).toBe(job.jobId);
    await engine.complete(job.jobId, null);
  }
  // One job still active: the lean state holds its record, args and all.
  await engine.insert({ queue: "q", worker: "W", args: "active" });
  await engine.close();
}, 120_000);

afterAll(async () => {
  await removeTemporary(root);
});

describe("tay verify folds lean", () => {
  it("a directory whose completed jobs' args outgrow the heap verifies, with the whole fold's counts", async () => {
    expect(verdict(await tayInSmallHeap(["verify", store, "--json"]))).toMatchObject(
      expectedCounts,
    );
  }, 60_000);

  it.skipIf(!reachable)(
    "the same store copied to PostgreSQL verifies by URL in the same heap",
    async () => {
      const url = await freshDatabase();
      const copied = await runInProcess(["copy", store, url]);
      expect(copied.stderr).toBe("");
      expect(copied.status).toBe(0);
      expect(verdict(await tayInSmallHeap(["verify", url, "--json"]))).toMatchObject(
        expectedCounts,
      );
    },
    120_000,
  );
});
