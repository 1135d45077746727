/**
 * The `tay` binary on a store named by a postgres:// URL, against a real
 * server (TAY_PG_URL, else 127.0.0.1:5432; skipped with the reason when
 * none answers): init, insert, jobs, verify, status, dump, compact, demo and
 * serve work on it, and `tay copy` moves a compacted store either way (DIR to URL, URL
 * to DIR) with every record's bytes identical to the source's, under the
 * same sequences, and refuses a destination that holds a store. The
 * commands around the ones under test (building a store, reading it back)
 * run in this process (`runInProcess`: the same program, no child each).
 */
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Client } from "@tay/client";
import { describe, expect, it } from "vitest";
import {
  outcome,
  requireBuild,
  runInProcess,
  segmentRecords,
  spawnTay,
  tay,
  watch,
} from "./support/cli.js";
import { admin, freshDatabase, answers } from "./support/postgres.js";

const reachable = await answers("CLI PostgreSQL tests");

/** A value as its JSON shows it: maps as objects. */
const plain = (value: unknown): unknown =>
  value instanceof Map
    ? Object.fromEntries([...value].map(([key, inner]) => [key, plain(inner)]))
    : Array.isArray(value)
      ? value.map(plain)
      : value;

describe.skipIf(!reachable)("tay on a postgres:// store", () => {
  requireBuild();

  it("init, insert, jobs, verify, status and dump take the URL", async () => {
    const url = await freshDatabase();
    expect((await tay(["init", url])).stdout).toMatch(/^initialized postgres:\/\//);
    const inserted = await tay([
      "insert",
      url,
      "--queue",
      "q",
      "--worker",
      "W",
      "--args",
      "[1]",
      "--json",
    ]);
    expect(inserted.stderr).toBe("");
    expect(JSON.parse(inserted.stdout)).toMatchObject({ job_id: 1, queue: "q" });
    const jobs = JSON.parse((await runInProcess(["jobs", url, "--json"])).stdout);
    expect(jobs.map((job: { job_id: number }) => job.job_id)).toEqual([1]);
    const verified = JSON.parse((await runInProcess(["verify", url, "--json"])).stdout);
    expect(verified).toMatchObject({ valid: true, epoch: 1, last_sequence: 1, jobs: 1 });
    expect((await tay(["status", url])).stdout).toContain("synchronous_commit  on");
    const dumped = (await runInProcess(["dump", url])).stdout.trim().split("\n");
    expect(dumped.map((line) => JSON.parse(line).event)).toEqual(["JobInserted"]);
  }, 240_000);

  it("status names the compaction holding the lease, and the generation it stages", async () => {
    const url = await freshDatabase();
    await runInProcess(["init", url]);
    await runInProcess(["insert", url, "--queue", "q", "--worker", "W", "--args", "1"]);
    // Another process's compaction, as its rows stand while it stages generation 2.
    const lease = (expiresAt: number) =>
      admin(url, async (client) => {
        const { rows } = await client.query("SELECT store_id FROM tay.tay_store");
        const storeId = rows[0]?.store_id;
        await client.query(
          "INSERT INTO tay.tay_generation (store_id, epoch, parent_epoch, first_sequence, base_record_count, created_at) SELECT $1, 2, 1, 2, 0, 0 WHERE NOT EXISTS (SELECT 1 FROM tay.tay_generation WHERE store_id = $1 AND epoch = 2)",
          [storeId],
        );
        await client.query("DELETE FROM tay.tay_compaction WHERE store_id = $1", [storeId]);
        await client.query(
          "INSERT INTO tay.tay_compaction (store_id, holder, label, expires_at) VALUES ($1, $2, $3, $4)",
          [storeId, "0b9a4c1e-9f53-4d5e-8a53-0d3b1c7f2a11", "host-a pid 7", expiresAt],
        );
      });
    const free = (await runInProcess(["status", url])).stdout;
    expect(free).toMatch(/^compaction +none running$/m);
    const until = Date.now() + 3_600_000;
    await lease(until);
    const running = (await runInProcess(["status", url])).stdout;
    expect(running).toMatch(
      new RegExp(
        `^compaction +running: host-a pid 7, lease until ${new Date(until).toISOString()}$`,
        "m",
      ),
    );
    expect(running).toMatch(/^generation 2 +Staged: being written by the running compaction$/m);
    expect(JSON.parse((await runInProcess(["status", url, "--json"])).stdout)).toMatchObject({
      compaction: { holder: "host-a pid 7", lease_expires_at: until, run_out: false },
      orphaned_generations: [{ epoch: 2, kind: "Staged" }],
    });
    await lease(1_000);
    const stopped = (await runInProcess(["status", url])).stdout;
    expect(stopped).toMatch(
      /^compaction +none running: host-a pid 7 held the lease until 1970-01-01T00:00:01.000Z and stopped renewing it/m,
    );
    expect(stopped).toMatch(/^generation 2 +Staged: removed by the next compaction$/m);
    expect(JSON.parse((await runInProcess(["status", url, "--json"])).stdout)).toMatchObject({
      compaction: { holder: "host-a pid 7", lease_expires_at: 1_000, run_out: true },
    });
  }, 240_000);

  it("compact takes the URL: a new epoch whose base holds the jobs kept", async () => {
    const url = await freshDatabase();
    await runInProcess(["init", url]);
    for (const args of ["1", "2"]) {
      await runInProcess(["insert", url, "--queue", "q", "--worker", "W", "--args", args]);
    }
    await runInProcess(["cancel", url, "1"]);
    const compacted = await tay(["compact", url, "--retention", "0", "--json"]);
    expect(compacted.stderr).toBe("");
    expect(JSON.parse(compacted.stdout)).toMatchObject({
      epoch: 2,
      parent_epoch: 1,
      first_sequence: 4,
      jobs_kept: 1,
      jobs_dropped: 1,
      removed_epochs: [1],
      not_removed: [],
    });
    const verified = JSON.parse((await runInProcess(["verify", url, "--json"])).stdout);
    expect(verified).toMatchObject({ valid: true, epoch: 2, first_sequence: 4, jobs: 1 });
    expect((await tay(["compact", url, "--retention", "0"])).stdout).toMatch(
      /^compacted into epoch 3 \(parent 2\)/,
    );
  }, 240_000);

  it("serve takes the URL with --socket: a client inserts, claims, compacts through it", async () => {
    const url = await freshDatabase();
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), "tay-cli-pg-serve-"));
    const socket = path.join(directory, "tay.sock");
    const missing = await tay(["serve", url]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(
      /^tay: UsageError: serve on a postgres:\/\/ URL needs --socket PATH/,
    );
    const child = spawnTay([
      "serve",
      url,
      "--socket",
      socket,
      "--create",
      "--body-max",
      "64KiB",
      "--json",
    ]);
    const served = watch(child);
    const client = new Client.Client({ socket });
    try {
      await served.waitFor(/"socket"/);
      expect(JSON.parse(served.stdout())).toMatchObject({ socket, listen: null });
      // The request limits given on the command line hold over a URL too; nothing is appended.
      const tooLarge = await outcome(() =>
        client.insert({ queue: "q", worker: "W", args: "x".repeat(70 * 1024) }),
      );
      expect(tooLarge).toMatch(/over 65536 bytes.*--body-max/);
      const job = await client.insert({ queue: "q", worker: "W", args: [1] });
      expect(job.jobId).toBe(1);
      await client.insert({ queue: "q", worker: "W", args: [2] });
      const [claimed] = await client.nextJobs([{ queue: "q", limit: 1 }]);
      expect(claimed?.jobId).toBe(job.jobId);
      await client.cancel(2);
      const compacted = await client.compact(0);
      expect(compacted).toMatchObject({
        epoch: 2,
        parentEpoch: 1,
        baseSegments: 0,
        jobsDropped: 1,
      });
      // What the server wrote is in the store, read directly.
      const verified = JSON.parse((await tay(["verify", url, "--json"])).stdout);
      expect(verified).toMatchObject({ valid: true, epoch: 2, jobs: 1 });
    } finally {
      await client.close();
      child.kill("SIGINT");
      const exited = await served.exited;
      await fs.rm(directory, { recursive: true, force: true });
      expect(exited.stderr).toBe("");
    }
  }, 240_000);

  // The route finds a job's records in SQL (`readMentioning`: rows holding the job's mention or a
  // checkpoint's list key); `tay job URL` folds every row with a tap: both must show one history.
  it("a job's history through a served URL is the one tay job URL shows, across a compaction", async () => {
    const url = await freshDatabase();
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), "tay-cli-pg-history-"));
    const socket = path.join(directory, "tay.sock");
    const child = spawnTay(["serve", url, "--socket", socket, "--create", "--json"]);
    const served = watch(child);
    const client = new Client.Client({ socket });
    const work = async () => {
      for (let round = 0; round < 3; round += 1) {
        await client.insert({ queue: "q", worker: "W", args: { round } });
        await client.insertMany([1, 2, 3].map((n) => ({ queue: "q", worker: "W", args: [n] })));
        const [first, second, third] = await client.claim("q", 3);
        if (first !== undefined) await client.complete(first.jobId, { done: round });
        if (second !== undefined) await client.fail(second.jobId, "again");
        if (third !== undefined) await client.cancel(third.jobId, "no");
      }
    };
    try {
      await served.waitFor(/"socket"/);
      await work();
      await client.registerSchedule("every", {
        queue: "s",
        worker: "W",
        args: null,
        priority: 0,
        maxAttempts: 1,
        everyMs: 30,
        cron: null,
        overlap: "allow",
      });
      const delivered = async (count: number) => {
        while (((await client.schedule("every"))?.activeJobIds.length ?? 0) < count) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      await delivered(2);
      await client.compact(24 * 3_600_000);
      // A delivery after the base too: its (11,2) is in this generation (those before are not).
      await delivered(((await client.schedule("every"))?.activeJobIds.length ?? 0) + 1);
      await client.cancelSchedule("every");
      await work();
      const lastJobId = Math.max(...(await client.jobs()).map((job) => job.jobId));
      const seen = new Set<string>();
      let compared = 0;
      // A failed job's retry comes due on the served engine's timer while the loop runs: a job
      // is compared only when the engine answered the same before and after tay job read it.
      const servedRead = async (jobId: number) => ({
        routed: (await client.history(jobId)).map(({ sequence, member, event }) => [
          sequence,
          member,
          event._tag,
        ]),
        held: await client.job(jobId),
      });
      for (let jobId = 1; jobId <= lastJobId; jobId += 1) {
        const before = await servedRead(jobId);
        const shown = JSON.parse(
          (await runInProcess(["job", url, String(jobId), "--json"])).stdout,
        );
        for (const [, , tag] of before.routed) seen.add(String(tag));
        if (JSON.stringify(await servedRead(jobId)) !== JSON.stringify(before)) continue;
        const { routed, held } = before;
        const folded = (
          shown as { history: Array<{ sequence: number; member: number | null; event: string }> }
        ).history.map(({ sequence, member, event }) => [sequence, member ?? 0, event]);
        expect(routed, `job ${jobId}`).toEqual(folded);
        expect(routed.length, `job ${jobId}`).toBeGreaterThan(0);
        // The job itself, from tay job's lean fold (a completed job's record kept as it leaves
        // the state), as the served engine's whole state holds it.
        expect(shown.job, `job ${jobId}`).toMatchObject({
          state: held?.state,
          attempt: held?.attempt,
          finished_at: held?.finishedAt,
          errors: held?.errors.map(({ attempt, at, error }) => ({ attempt, at, error })),
          result: held?.result === null ? null : { at: held?.result?.at },
          schedule_id: held?.scheduleId,
        });
        if (held?.result !== null) {
          expect(shown.job.result.value).toEqual(plain(held?.result?.value));
        }
        compared += 1;
      }
      expect([...seen]).toEqual(
        expect.arrayContaining(["OccurrenceAdvanced", "ScheduleCheckpoint", "SnapshotPart"]),
      );
      expect(compared).toBeGreaterThan(lastJobId / 2);
    } finally {
      await client.close();
      child.kill("SIGINT");
      const exited = await served.exited;
      await fs.rm(directory, { recursive: true, force: true });
      expect(exited.stderr).toBe("");
    }
  }, 240_000);

  it("demo takes the URL: creates the store, runs every job to its end, and resumes", async () => {
    const url = await freshDatabase();
    const run = await tay(["demo", url, "--jobs", "60", "--workers", "4", "--json"]);
    expect(run.stderr).toBe("");
    const report = JSON.parse(run.stdout);
    // Job 7 and 57 fail every attempt and are discarded; the rest complete.
    expect(report).toMatchObject({
      outcome: "finished",
      jobs_finished: 60,
      completed: 58,
      discarded: 2,
      unfinished: 0,
      status: { synchronous_commit: "on" },
    });
    const executing = JSON.parse(
      (await runInProcess(["jobs", url, "--state", "executing", "--json"])).stdout,
    );
    expect(executing).toEqual([]);
    expect(JSON.parse((await runInProcess(["verify", url, "--json"])).stdout)).toMatchObject({
      valid: true,
    });
    // A second run finds the store and inserts the next batch.
    const again = await tay(["demo", url, "--jobs", "5"]);
    expect(again.stdout).not.toMatch(/^initialized/m);
    expect(again.stdout).toMatch(/^opened postgres:\/\/.*#tay\.default/m);
    expect(again.stdout).toMatch(/inserted 5 job\(s\)/);
    const durability = await tay(["demo", url, "--durability", "maximal"]);
    expect(durability.status).toBe(2);
  }, 240_000);

  it("copy moves a compacted directory store: same sequences, same bytes, same state", async () => {
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), "tay-cli-pg-"));
    const data = path.join(directory, "data");
    try {
      await runInProcess(["init", data]);
      for (const args of ["1", "2", "3"]) {
        await runInProcess(["insert", data, "--queue", "q", "--worker", "W", "--args", args]);
      }
      await runInProcess(["compact", data, "--retention", "0"]);
      await runInProcess(["insert", data, "--queue", "q", "--worker", "W", "--args", "4"]);
      const url = await freshDatabase();
      const copied = await tay(["copy", data, url, "--json"]);
      expect(copied.stderr).toBe("");
      const report = JSON.parse(copied.stdout);
      expect(report).toMatchObject({
        first_sequence: 4,
        last_sequence: 5,
        base_record_count: 1,
        jobs: 4,
      });
      const rows = await admin(url, (client) =>
        client.query("SELECT sequence, record FROM tay.tay_record ORDER BY sequence"),
      );
      const source = await segmentRecords(data);
      expect(rows.rows.map((row) => Number(row.sequence))).toEqual([...source.keys()]);
      for (const row of rows.rows) {
        expect(
          Buffer.from(row.record).equals(source.get(Number(row.sequence)) ?? Buffer.alloc(0)),
        ).toBe(true);
      }
      // The same jobs, read through the CLI from both.
      expect((await runInProcess(["jobs", url, "--json"])).stdout).toBe(
        (await runInProcess(["jobs", data, "--json"])).stdout,
      );
      // A second copy into the same store is refused; nothing changes.
      const again = await tay(["copy", data, url]);
      expect(again.stderr).toMatch(/^tay: StoreExists postgres:\/\//);

      // And back: the PostgreSQL store into a fresh directory, the same bytes again.
      const back = path.join(directory, "back");
      const returned = await tay(["copy", url, back, "--json"]);
      expect(returned.stderr).toBe("");
      expect(JSON.parse(returned.stdout)).toMatchObject({
        target: back,
        first_sequence: 4,
        last_sequence: 5,
        base_record_count: 1,
        records: 2,
        jobs: 4,
      });
      const copiedBack = await segmentRecords(back);
      expect([...copiedBack.keys()]).toEqual([...source.keys()]);
      for (const [sequence, bytes] of source) {
        expect(copiedBack.get(sequence)?.equals(bytes)).toBe(true);
      }
      expect(JSON.parse((await runInProcess(["verify", back, "--json"])).stdout)).toMatchObject({
        valid: true,
        epoch: 1,
        first_sequence: 4,
        last_sequence: 5,
      });
      expect((await runInProcess(["jobs", back, "--json"])).stdout).toBe(
        (await runInProcess(["jobs", data, "--json"])).stdout,
      );
      // The copy opens as a store: it takes the next insert after the copied records.
      const next = JSON.parse(
        (
          await runInProcess([
            "insert",
            back,
            "--queue",
            "q",
            "--worker",
            "W",
            "--args",
            "5",
            "--json",
          ])
        ).stdout,
      );
      expect(next).toMatchObject({ job_id: 5 });
      // A destination that holds anything is refused before anything is read or written.
      const occupied = await tay(["copy", url, back]);
      expect(occupied.status).toBe(1);
      expect(occupied.stderr).toMatch(/^tay: NotEmpty /);
      expect((await runInProcess(["verify", back, "--json"])).stdout).toContain(
        '"last_sequence":6',
      );
    } finally {
      await fs.rm(directory, { recursive: true, force: true });
    }
  }, 240_000);
});
