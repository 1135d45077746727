// `tay serve DIR --retention D [--compact-after N]`: the served engine compacts on its own
// (`autoCompact`) once N records are appended since the base, keeping terminal jobs finished
// within D; `/v1/status` tells what it did. `--compact-after` without `--retention` is a usage
// error, and without `--retention` the store is compacted only when told.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { Client } from "@tay/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  json,
  removeTemporary,
  requireBuild,
  spawnTay,
  tay,
  temporaryDirectory,
  watch,
} from "./support/cli.js";

let root = "";

beforeAll(async () => {
  requireBuild();
  root = await temporaryDirectory();
});

afterAll(() => removeTemporary(root));

const until = async (done: () => Promise<boolean>): Promise<void> => {
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 50));
};

/** `/v1/status`'s autoCompaction and epoch. */
const compactionOf = async (client: Client.Client) => {
  const status = await client.status();
  return { epoch: status.epoch, auto: status.autoCompaction };
};

describe("tay serve --retention", () => {
  it("compacts on its own once --compact-after records are appended, and says so", async () => {
    const directory = path.join(root, "auto");
    const child = spawnTay([
      "serve",
      directory,
      "--create",
      "--retention",
      "0ms",
      "--compact-after",
      "20",
      "--json",
    ]);
    const served = watch(child);
    await served.waitFor(/"socket"/);
    expect(JSON.parse(served.stdout())).toMatchObject({
      auto_compact: { retention_ms: 0, min_records: 20 },
    });
    const client = new Client.Client({ socket: path.join(directory, "tay.sock") });
    try {
      expect(await compactionOf(client)).toMatchObject({
        epoch: 1,
        auto: { runs: 0, checkAt: 20 },
      });
      await client.insert({ queue: "kept", worker: "W", args: null });
      // An insert and a cancel each: 1 + 2 × 10 records.
      for (let index = 0; index < 10; index++) {
        const job = await client.insert({ queue: "q", worker: "W", args: index });
        await client.cancel(job.jobId);
      }
      // The new epoch is current before the compaction ends (the terminal index's copy runs
      // beside commands since 2026-12-07): its run is counted when it ends.
      await until(async () => {
        const compaction = await compactionOf(client);
        const { auto } = compaction;
        const running = typeof auto === "object" && auto !== null && "running" in auto;
        return compaction.epoch === 2 && running && auto.running === false;
      });
      expect(await compactionOf(client)).toMatchObject({
        epoch: 2,
        auto: { runs: 1, failures: 0, lastError: null, retentionMs: 0 },
      });
      expect(await client.job(2)).toBeUndefined();
      expect((await client.job(1))?.state).toBe("available");
    } finally {
      await client.close();
      child.kill("SIGINT");
      expect((await served.exited).status).toBe(0);
    }
    expect(await json(["verify", directory, "--json"])).toMatchObject({ valid: true, epoch: 2 });
  }, 60_000);

  it("refuses --compact-after without --retention; without either it never compacts alone", async () => {
    const directory = path.join(root, "plain");
    const refused = await tay(["serve", directory, "--create", "--compact-after", "5"]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/^tay: UsageError: --compact-after needs --retention/);
    await expect(fs.access(directory)).rejects.toThrow();
    const child = spawnTay(["serve", directory, "--create"]);
    const served = watch(child);
    await served.waitFor(/serving/);
    expect(served.stdout()).not.toMatch(/compacting on its own/);
    const client = new Client.Client({ socket: path.join(directory, "tay.sock") });
    try {
      expect(await compactionOf(client)).toEqual({ epoch: 1, auto: null });
    } finally {
      await client.close();
      child.kill("SIGINT");
      await served.exited;
    }
    const text = spawnTay(["serve", directory, "--retention", "7d"]);
    const again = watch(text);
    await again.waitFor(/compacting on its own/);
    expect(again.stdout()).toMatch(
      /compacting on its own: terminal jobs kept 7d after they end, once 100000 records/,
    );
    text.kill("SIGINT");
    await again.exited;
  }, 60_000);
});
