// `tay serve DIR --body-max B --batch-body-max B --request-timeout D`: the server's request
// limits from the command line. A body past its route's limit is refused with BodyTooLarge
// naming the limit and the flag, and nothing is appended; a batch within its own limit but past
// the body limit is taken whole. Sizes that are not sizes, a batch limit below the body limit,
// and a timeout out of range are usage errors before anything is opened.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { Client } from "@tay/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  outcome,
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

describe("tay serve --body-max, --batch-body-max", () => {
  it("serves with the limits given, and refuses past them with the flag named", async () => {
    const directory = path.join(root, "limits");
    const child = spawnTay([
      "serve",
      directory,
      "--create",
      "--body-max",
      "2KiB",
      "--batch-body-max",
      "16KiB",
      "--request-timeout",
      "5s",
    ]);
    const served = watch(child);
    await served.waitFor(/serving/);
    const client = new Client.Client({ socket: path.join(directory, "tay.sock") });
    try {
      const small = await client.insert({ queue: "q", worker: "W", args: "a".repeat(1_000) });
      expect(small.jobId).toBe(1);
      const big = await outcome(() =>
        client.insert({ queue: "q", worker: "W", args: "b".repeat(3_000) }),
      );
      expect(big).toMatch(/BodyTooLarge/);
      expect(big).toMatch(/over 2048 bytes/);
      expect(big).toMatch(/--body-max/);
      // Ten jobs of 1,000 bytes: past the body limit, within the batch's; one record.
      const batch = Array.from({ length: 10 }, () => ({
        queue: "q",
        worker: "W",
        args: "c".repeat(1_000),
      }));
      const taken = await client.insertMany(batch);
      expect(taken.map((job) => job.jobId)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const tooMany = await outcome(() => client.insertMany([...batch, ...batch]));
      expect(tooMany).toMatch(/BodyTooLarge/);
      expect(tooMany).toMatch(/over 16384 bytes/);
      expect(tooMany).toMatch(/--batch-body-max/);
      expect((await client.status()).jobs).toBe(11);
    } finally {
      await client.close();
      child.kill("SIGINT");
      expect((await served.exited).status).toBe(0);
    }
  }, 60_000);

  it("refuses a size that is not one, a batch limit below the body limit, a timeout out of range", async () => {
    const directory = path.join(root, "refused");
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
      [["--body-max", "4MB"], /^tay: UsageError: --body-max: "4MB" is not a size/],
      [["--body-max", "12"], /^tay: UsageError: --body-max: 12 is not in 1024\.\.1073741824 bytes/],
      [["--batch-body-max", "2GiB"], /^tay: UsageError: --batch-body-max: 2GiB is not in/],
      [
        ["--body-max", "1MiB", "--batch-body-max", "512KiB"],
        /^tay: UsageError: --batch-body-max 524288 is below the body limit 1048576 \(--body-max\)/,
      ],
      [
        ["--batch-body-max", "1MiB"],
        /^tay: UsageError: --batch-body-max 1048576 is below the body limit 4194304/,
      ],
      [
        ["--request-timeout", "500ms"],
        /^tay: UsageError: --request-timeout: 500ms is not between 1s and 1h/,
      ],
    ];
    for (const [flags, message] of cases) {
      const refused = await tay(["serve", directory, "--create", ...flags]);
      expect(refused.status, flags.join(" ")).toBe(2);
      expect(refused.stderr).toMatch(message);
    }
    await expect(fs.access(directory)).rejects.toThrow();
  }, 60_000);
});
