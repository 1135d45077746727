// The latest progress report of each job (the engine's board, a progress stream's stalled reader):
// oldest job first, and, once the set has doubled, none of an attempt that is no longer current.
import type { Progress } from "@tay/core";
import { describe, expect, it } from "vitest";
import { LatestReports } from "../../src/engine/LatestReports.js";

const report = (jobId: number, value: number, attempt = 1): Progress.Progress => ({
  jobId,
  attempt,
  value,
  at: 0,
  bytes: 9,
});

describe("LatestReports", () => {
  it("keeps the latest report of each job, and gives them oldest job first", () => {
    const latest = new LatestReports();
    const always = () => true;
    latest.add(report(1, 1), always);
    latest.add(report(2, 1), always);
    latest.add(report(1, 2), always);
    expect(latest.size).toBe(2);
    expect(latest.take()).toEqual(report(1, 2));
    expect(latest.take()).toEqual(report(2, 1));
    expect(latest.take()).toBeUndefined();
  });

  it("lets go of reports whose attempts ended once it has doubled", () => {
    const ended = new Set<number>();
    const latest = new LatestReports();
    const current = (held: Progress.Progress) => !ended.has(held.jobId);
    for (let jobId = 1; jobId <= 63; jobId++) latest.add(report(jobId, 0), current);
    for (let jobId = 1; jobId <= 60; jobId++) ended.add(jobId);
    expect(latest.size).toBe(63);
    latest.add(report(64, 0), current);
    expect(latest.size).toBe(4);
    expect(
      [latest.take(), latest.take(), latest.take(), latest.take()].map((r) => r?.jobId),
    ).toEqual([61, 62, 63, 64]);
  });
});
