/**
 * The `tay` binary on a store named by a postgres:// URL, against a real
 * server (TAY_PG_URL, else 127.0.0.1:5432; skipped with the reason when
 * none answers): init, insert, jobs, verify, status and dump work on it,
 * commands that take only a directory refuse a URL with a usage error, and
 * `tay copy DIR URL` moves a compacted store with every record's bytes
 * identical to the source's segments, under the same sequences.
 */
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { decodeRecord } from "@tay/codec";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { requireBuild, tay } from "./support/cli.js";

const serverUrl = process.env.TAY_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const admin = async <A>(url: string, body: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end().catch(() => undefined);
  }
};

const reachable = await admin(serverUrl, (client) => client.query("SELECT 1")).then(
  () => true,
  (error: unknown) => {
    console.warn(`CLI PostgreSQL tests skipped: ${serverUrl} does not answer (${String(error)})`);
    return false;
  },
);

const made: Array<string> = [];

/** A new database on the server (dropped after the file). */
const freshDatabase = async (): Promise<string> => {
  const name = `tay_cli_${process.pid}_${made.length}_${Math.floor(Math.random() * 1e6)}`;
  await admin(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  made.push(name);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

afterAll(async () => {
  for (const name of made) {
    await admin(serverUrl, (client) => client.query(`DROP DATABASE ${name} WITH (FORCE)`));
  }
});

/** Every record's bytes in a generation's segment files, by sequence (headers and footers left out). */
const segmentRecords = async (data: string): Promise<Map<number, Buffer>> => {
  const epochs = path.join(data, "epochs");
  const epoch = (await fs.readdir(epochs)).sort().at(-1) ?? "";
  const segments = path.join(epochs, epoch, "segments");
  const records = new Map<number, Buffer>();
  for (const name of (await fs.readdir(segments)).sort()) {
    const bytes = await fs.readFile(path.join(segments, name));
    // A segment: a 44-byte header, the records back to back, a footer once sealed.
    for (let offset = 44; offset < bytes.length; ) {
      const decoded = decodeRecord(bytes, offset);
      if (decoded._tag !== "Record") break;
      records.set(decoded.record.sequence, bytes.subarray(offset, offset + decoded.size));
      offset += decoded.size;
    }
  }
  return records;
};

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
    const jobs = JSON.parse((await tay(["jobs", url, "--json"])).stdout);
    expect(jobs.map((job: { job_id: number }) => job.job_id)).toEqual([1]);
    const verified = JSON.parse((await tay(["verify", url, "--json"])).stdout);
    expect(verified).toMatchObject({ valid: true, epoch: 1, last_sequence: 1, jobs: 1 });
    expect((await tay(["status", url])).stdout).toContain("synchronous_commit  on");
    const dumped = (await tay(["dump", url])).stdout.trim().split("\n");
    expect(dumped.map((line) => JSON.parse(line).event)).toEqual(["JobInserted"]);
  }, 240_000);

  it("a command that takes only a directory refuses a URL with a usage error", async () => {
    const run = await tay(["compact", "postgres://nobody@127.0.0.1:1/none", "--retention", "0"]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^tay: UsageError: compact takes a directory, not a PostgreSQL URL/);
  });

  it("copy moves a compacted directory store: same sequences, same bytes, same state", async () => {
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), "tay-cli-pg-"));
    const data = path.join(directory, "data");
    try {
      await tay(["init", data]);
      for (const args of ["1", "2", "3"]) {
        await tay(["insert", data, "--queue", "q", "--worker", "W", "--args", args]);
      }
      await tay(["compact", data, "--retention", "0"]);
      await tay(["insert", data, "--queue", "q", "--worker", "W", "--args", "4"]);
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
      expect((await tay(["jobs", url, "--json"])).stdout).toBe(
        (await tay(["jobs", data, "--json"])).stdout,
      );
      // A second copy into the same store is refused; nothing changes.
      const again = await tay(["copy", data, url]);
      expect(again.stderr).toMatch(/^tay: StoreExists postgres:\/\//);
    } finally {
      await fs.rm(directory, { recursive: true, force: true });
    }
  }, 240_000);
});
