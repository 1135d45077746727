// Proves the store's crash consistency: a workload of init, open, appends under Maximal, a
// rotation and a compaction is cut before every mutating disk operation, crashed (durable state
// only, torn unsynced writes, partially kept directory entries), and reopened. Each reopen must
// either succeed with a contiguous prefix holding every acknowledged append, or refuse with
// IncompleteTail outside a compaction; a compaction cut anywhere must leave a store that opens.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Either } from "effect";
import * as Crash from "../../src/disk/Crash.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Init from "../../src/store/Init.js";
import * as Projection from "../../src/log/Projection.js";
import * as Store from "../../src/store/Store.js";
import { inserted } from "../support/store.js";

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

const check: Crash.Check<Label> = (disk, acknowledged) =>
  Effect.gen(function* () {
    const opened = yield* Effect.either(
      Effect.scoped(Store.open(directory, {}, Projection.collect)),
    );
    const compacting = has(acknowledged, "Compacting") && !has(acknowledged, "Compacted");
    if (Either.isLeft(opened)) {
      if (!has(acknowledged, "Initialized")) {
        expect(["StoreNotFound", "IncompleteInitialization"]).toContain(opened.left._tag);
        return;
      }
      // A torn tail of unacknowledged bytes is a refusal, never a silent repair; a compaction
      // writes nothing to the current generation's files, so it never leaves one.
      expect(compacting).toBe(false);
      expect(opened.left._tag).toBe("IncompleteTail");
      return;
    }
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
        const report = yield* Crash.exploreCrashes(workload, check, {
          setup: (disk) => Effect.sync(() => disk.seedDirectory(directory)),
          modes: [
            { tear: "none" },
            { tear: "anywhere", unsyncedEntries: "prefix" },
            { tear: "sector", unsyncedEntries: "lost" },
          ],
          samplesPerCutPoint: 2,
        });
        expect(report.failures.slice(0, 3).map(Crash.describeFailure)).toEqual([]);
        expect(report.explored).toBe(report.cutPoints);
        console.log(
          `crash exploration: ${report.cutPoints} cut points, ${report.crashes} crashed disks checked`,
        );
      }),
  );
});
