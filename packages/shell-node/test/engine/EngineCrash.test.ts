// Proves the engine's crash consistency over four workloads that together run every engine
// command (inserts, claims and waiting claims, completes with results, fails, cancels, schedules
// registered, re-registered and cancelled, rescues, ticks, compactions, closes and reopens that
// rescue orphans) under Maximal and Segment durability with rotation targets small enough for a
// rotation, staged as SEGMENT.tmp and hard-linked, every few steps. Each is cut before every
// mutating disk operation and crashed with the unsynced data dropped, with the last writes torn
// anywhere (directory entries kept in part) and torn at sector boundaries; each reopen must equal
// core's fold of a prefix of the decided commands holding every acknowledged one and take new
// work, or refuse only with IncompleteTail in an unacknowledged record or footer at the active
// segment's tail. CI explores a seeded sample of the cut points; TAY_CRASH_FULL=1 explores all.
import { describe, expect, it } from "@effect/vitest";
import { State } from "@tay/core";
import { Effect } from "effect";
import { crashCheck, noOutcomes } from "../support/engineCrashCheck.js";
import { crashWorkload, directory, replay, workloads } from "../support/engineWorkloads.js";
import { exploreCrashModes } from "../support/store.js";

const full = process.env.TAY_CRASH_FULL === "1";
/** Cut points sampled per workload in CI (the last always among them). */
const sampledCutPoints = Number(process.env.TAY_CRASH_SAMPLE ?? 60);

const totals = { cutPoints: 0, explored: 0, crashes: 0 };

describe("engine crashes", () => {
  it("the replays decide the workloads' steps (the workloads are meaningful)", () => {
    for (const workload of workloads) {
      const { states, refused } = replay(workload.steps);
      expect(refused, workload.name).toBe(0);
      const reopens = workload.steps.filter((step) => step._tag === "Reopen").length;
      expect(states.length, workload.name).toBeGreaterThan(workload.steps.length - reopens);
    }
    // Commands of several records, whose prefixes a crash may leave, are among them.
    expect(workloads.some((workload) => replay(workload.steps).partials.length > 0)).toBe(true);
    const mail = replay(workloads[0]?.steps ?? []).states;
    const last = mail[mail.length - 1] ?? State.initialState;
    // The compaction dropped the finished jobs 1, 3 and 4 with their results.
    expect(State.job(last, 1)).toBeUndefined();
    expect(State.job(last, 2)?.result?.value).toBe("second try");
  });

  for (const workload of workloads) {
    it.effect(
      `${workload.name}: every explored cut point reopens to a decided prefix`,
      () =>
        Effect.gen(function* () {
          const expected = replay(workload.steps);
          const outcomes = noOutcomes();
          const report = yield* exploreCrashModes(
            crashWorkload(workload, expected),
            crashCheck(expected, outcomes),
            {
              setup: (disk) => Effect.sync(() => disk.seedDirectory(directory)),
              samplesPerCutPoint: full ? 2 : 1,
              ...(full ? {} : { cutPointsMax: sampledCutPoints }),
              seed: 17,
            },
          );
          expect(outcomes.tornHeader).toBe(0);
          expect(outcomes.opened).toBeGreaterThan(report.explored);
          totals.cutPoints += report.cutPoints;
          totals.explored += report.explored;
          totals.crashes += report.crashes;
          console.log(
            `engine crash exploration, ${workload.name}: ${report.explored} of ${report.cutPoints} cut points, ${report.crashes} crashed disks: ${outcomes.opened} opened to a decided prefix (${outcomes.stagedSegment} with a leftover SEGMENT.tmp, ignored), ${outcomes.incompleteTail} refused with IncompleteTail in a record or footer, ${outcomes.tornHeader} at offset 0 or in a header, ${outcomes.notInitialized} before init was acknowledged`,
          );
        }),
      // Every cut point of the five workloads takes about ten minutes on a quiet machine.
      full ? 30 * 60_000 : 60_000,
    );
  }

  it("the workloads have at least 1,000 distinct cut points", () => {
    console.log(
      `engine crash exploration: ${totals.cutPoints} distinct cut points in ${workloads.length} workloads, ${totals.explored} explored (${full ? "all: TAY_CRASH_FULL=1" : "a seeded sample; TAY_CRASH_FULL=1 explores all"}), ${totals.crashes} crashed disks checked`,
    );
    expect(totals.cutPoints).toBeGreaterThanOrEqual(1000);
    if (full) expect(totals.explored).toBe(totals.cutPoints);
  });
});
