// Proves the store's crash consistency: a workload of init, open, appends under Maximal with a
// 300-byte rotation target (a rotation every few appends), and a compaction is cut before every
// mutating disk operation, crashed (durable state only, torn unsynced writes, partially kept
// directory entries), and reopened. Each reopen must either succeed with a contiguous prefix
// holding every acknowledged append, or refuse with IncompleteTail inside a record or a footer
// outside a compaction — never at offset 0 or inside a header, since a segment is staged and
// hard-linked into place whole; a compaction cut anywhere must leave a store that opens. Under
// Segment, a power cut after rotations must keep every record the sealed segments hold.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Either } from "effect";
import type * as Crash from "../../src/disk/Crash.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Init from "../../src/store/Init.js";
import * as Projection from "../../src/log/Projection.js";
import * as Store from "../../src/store/Store.js";
import { exploreCrashModes, inserted } from "../support/store.js";

type Label =
  | { readonly _tag: "Initialized" }
  | { readonly _tag: "Appended"; readonly jobId: number }
  | { readonly _tag: "Compacting" }
  | { readonly _tag: "Compacted" };

const directory = "/data";
const appends = 8;

const workload: Crash.Workload<Label> = (disk, acknowledge) =>
  Effect.gen(function* () {
    yield* Init.init(directory);
    yield* acknowledge({ _tag: "Initialized" });
    yield* Effect.scoped(
      Effect.gen(function* () {
        const { store } = yield* Store.open(
          directory,
          { durability: "Maximal", rotationTargetBytes: 300 },
          Projection.count,
        );
        for (let jobId = 1; jobId <= appends; jobId++) {
          yield* store.append([inserted(jobId, 20)]);
          yield* acknowledge({ _tag: "Appended", jobId });
        }
        // The workload rotates: every cut point inside a rotation is explored.
        if ((yield* store.stats()).segments < 4) {
          return yield* Effect.dieMessage("the workload did not rotate");
        }
        // flush fails if the writer stopped (a rotation can fail after its batch resolved):
        // "Compacting" then means the compaction's own I/O is what the cut interrupts.
        yield* store.flush();
        yield* acknowledge({ _tag: "Compacting" });
        const base = Array.from({ length: appends }, (_, index) => inserted(index + 1, 20));
        yield* store.compact(base);
        yield* acknowledge({ _tag: "Compacted" });
        yield* store.append([inserted(appends + 1, 20)]);
        yield* acknowledge({ _tag: "Appended", jobId: appends + 1 });
      }),
    );
  }).pipe(Effect.provide(FaultDisk.layer(disk)));

const has = (acknowledged: ReadonlyArray<Label>, tag: Label["_tag"]): boolean =>
  acknowledged.some((label) => label._tag === tag);

/** What the crashes left, for the report. */
const outcomes = {
  opened: 0,
  notInitialized: 0,
  tornRecord: 0,
  tornFooter: 0,
  tornHeader: 0,
  stagedSegment: 0,
};

const check: Crash.Check<Label> = (disk, acknowledged) =>
  Effect.gen(function* () {
    const opened = yield* Effect.either(
      Effect.scoped(Store.open(directory, {}, Projection.collect)),
    );
    const compacting = has(acknowledged, "Compacting") && !has(acknowledged, "Compacted");
    if (Either.isLeft(opened)) {
      if (!has(acknowledged, "Initialized")) {
        expect(["StoreNotFound", "IncompleteInitialization"]).toContain(opened.left._tag);
        outcomes.notInitialized += 1;
        return;
      }
      // A torn tail of unacknowledged bytes is a refusal, never a silent repair; a compaction
      // writes nothing to the current generation's files, so it never leaves one.
      expect(compacting).toBe(false);
      const refusal = opened.left;
      expect(refusal._tag).toBe("IncompleteTail");
      if (refusal._tag !== "IncompleteTail") return;
      // Never an empty or header-prefix segment: segments appear under their name whole.
      expect(refusal.part).not.toBe("Header");
      expect(refusal.offset).toBeGreaterThan(0);
      if (refusal.part === "Header") outcomes.tornHeader += 1;
      else if (refusal.part === "Footer") outcomes.tornFooter += 1;
      else outcomes.tornRecord += 1;
      return;
    }
    outcomes.opened += 1;
    if (opened.right.report.stagedSegment !== null) outcomes.stagedSegment += 1;
    const jobIds = opened.right.state.map((entry) =>
      entry.event._tag === "JobInserted" ? entry.event.jobId : -1,
    );
    const acknowledgedIds = acknowledged.flatMap((label) =>
      label._tag === "Appended" ? [label.jobId] : [],
    );
    const recovered = jobIds.length;
    // A contiguous prefix of the workload, holding every acknowledged append.
    expect(jobIds).toEqual(Array.from({ length: recovered }, (_, index) => index + 1));
    expect(recovered).toBeGreaterThanOrEqual(Math.max(0, ...acknowledgedIds));
    if (has(acknowledged, "Compacted")) expect(opened.right.report.epoch).toBe(2);
    void disk;
  }).pipe(Effect.provide(FaultDisk.layer(disk)));

describe("crashes", () => {
  it.effect(
    "every cut point of init, appends, rotation and compaction recovers or refuses cleanly",
    () =>
      Effect.gen(function* () {
        const report = yield* exploreCrashModes(workload, check, {
          setup: (disk) => Effect.sync(() => disk.seedDirectory(directory)),
          samplesPerCutPoint: 2,
        });
        expect(outcomes.tornHeader).toBe(0);
        expect(outcomes.opened).toBeGreaterThan(report.cutPoints);
        console.log(
          `store crash exploration: ${report.cutPoints} cut points, ${report.crashes} crashed disks: ${outcomes.opened} opened (${outcomes.stagedSegment} with a leftover SEGMENT.tmp, ignored), ${outcomes.tornRecord} refused with IncompleteTail in a record, ${outcomes.tornFooter} in a footer, ${outcomes.tornHeader} at offset 0 or in a header, ${outcomes.notInitialized} before init was acknowledged`,
        );
      }),
  );
});

describe("Segment durability", () => {
  it.effect(
    "a crash without a close keeps every record of the sealed segments (their footer's fsync)",
    () =>
      Effect.gen(function* () {
        const disk = FaultDisk.make();
        disk.seedDirectory(directory);
        // The records that were in sealed segments when the power went.
        const sealedThrough = yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Init.init(directory);
            const { store } = yield* Store.open(
              directory,
              { durability: "Segment", rotationTargetBytes: 300 },
              Projection.count,
            );
            let sealed = 0;
            let segments = (yield* store.stats()).segments;
            for (let jobId = 1; jobId <= appends; jobId++) {
              yield* store.append([inserted(jobId, 20)]);
              const after = (yield* store.stats()).segments;
              // The append that reached the target rotated before it resolved.
              if (after > segments) sealed = jobId;
              segments = after;
            }
            expect(segments).toBeGreaterThanOrEqual(3);
            disk.cutPower();
            return sealed;
          }),
        ).pipe(Effect.provide(FaultDisk.layer(disk)));
        expect(sealedThrough).toBeGreaterThan(0);
        const rebooted = disk.crash();
        const opened = yield* Effect.scoped(Store.open(directory, {}, Projection.count)).pipe(
          Effect.provide(FaultDisk.layer(rebooted)),
        );
        expect(opened.state).toBeGreaterThanOrEqual(sealedThrough);
      }),
  );
});
