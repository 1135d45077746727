/**
 * The terminal index's offsets file is read beside the open's fold
 * (2026-12-07, docs/store.md "The offsets file read beside the fold"): the
 * engine's open starts reading it right after HEAD, before the fold reads
 * its first segment, and the index's open takes what that read gave rather
 * than reading the file again. The open's answers are the same either way;
 * what this guards is the order and the count of the reads, which decide
 * whether its thread-pool read (a 24 MB file at 1,000,000 jobs) overlaps
 * the segments' checks.
 */
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import type { DiskService } from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";

/** `disk` with every `readFile` and `open` noted, in the order they are asked for. */
const noting = (disk: DiskService, asked: Array<string>): DiskService => ({
  ...disk,
  readFile: (path) =>
    Effect.suspend(() => {
      asked.push(`readFile ${path}`);
      return disk.readFile(path);
    }),
  open: (path, mode, options) =>
    Effect.suspend(() => {
      asked.push(`open ${path}`);
      return disk.open(path, mode, options);
    }),
});

describe("the offsets file at open", () => {
  it("is read once, after HEAD and before the fold's first segment, and the index takes it", async () => {
    const disk = FaultDisk.make();
    disk.seedDirectory("/data");
    const engine = await EnginePromises.open("/data", {
      createIfMissing: true,
      disk: FaultDisk.layer(disk),
    });
    for (let index = 0; index < 40; index++) {
      await engine.insert({ queue: "a", worker: "W", args: { index } });
    }
    for (const job of await engine.claim("a", 30)) await engine.complete(job.jobId, job.jobId);
    const expected = engine.jobs();
    await engine.close();
    const asked: Array<string> = [];
    const again = await EnginePromises.open("/data", {
      disk: FaultDisk.layer(noting(disk, asked)),
    });
    try {
      expect(again.report.terminalIndex).toEqual({ rebuilt: null, imageRefused: null });
      expect(again.jobs()).toEqual(expected);
      expect(again.job(7)?.state).toBe("completed");
      const offsets = asked.flatMap((entry, at) =>
        /^readFile .*\/terminal-index\/offsets-[^/]*$/.test(entry) ? [at] : [],
      );
      const firstSegment = asked.findIndex((entry) =>
        /^open .*\/segments\/[^/]*\.tay$/.test(entry),
      );
      const head = asked.findIndex((entry) => /^readFile .*\/terminal-index\/HEAD$/.test(entry));
      expect(offsets).toHaveLength(1);
      expect(head).toBeGreaterThanOrEqual(0);
      expect(firstSegment).toBeGreaterThan(0);
      expect(offsets[0]).toBeGreaterThan(head);
      expect(offsets[0]).toBeLessThan(firstSegment);
    } finally {
      await again.close();
    }
  });
});
