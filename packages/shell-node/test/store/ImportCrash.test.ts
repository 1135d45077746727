// Proves an import (`tay copy URL DIR`'s writing side) never leaves anything to repair: cut before
// every mutating disk operation of Import.importGeneration and crashed (durable state only, torn
// unsynced writes, partially kept directory entries), DIR is either as it was (missing, or an empty
// directory: at most a LOCK) or a whole store that opens with exactly the imported records, and it
// is the whole store whenever the import had returned; beside DIR there is at most a staging
// directory named `.data.tay-copy-<hex>`; and a retried import then succeeds, after which the only
// staging directories left are ones holding CURRENT (a whole store, never removed).
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import type * as Crash from "../../src/disk/Crash.js";
import * as Entropy from "../../src/disk/Entropy.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Projection from "../../src/log/Projection.js";
import * as CopyStaging from "../../src/store/CopyStaging.js";
import * as Import from "../../src/store/Import.js";
import * as Store from "../../src/store/Store.js";
import { Generation, Snapshot } from "@tay/core";
import * as Staging from "../support/staging.js";
import { exploreCrashModes, inserted } from "../support/store.js";

type Label = { readonly _tag: "Imported" };

const parent = "/srv";
const directory = `${parent}/data`;
const firstSequence = 41;

/** A canonical base of jobs 1..2, then jobs 3..6 inserted after it (args make segments rotate). */
const history = (() => {
  const builder = Generation.start(0);
  for (const jobId of [1, 2]) Generation.apply(builder, jobId, inserted(jobId));
  const state = Generation.finish(builder);
  if (state._tag === "Left") throw new Error("the fixture folds");
  const base = Snapshot.snapshot(state.right, { now: 0, retentionMs: Number.MAX_SAFE_INTEGER });
  return {
    firstSequence,
    baseRecordCount: base.length,
    events: [...base, ...[3, 4, 5, 6].map((jobId) => inserted(jobId, 40))],
  };
})();

const importing = (seed: number) =>
  Import.importGeneration(directory, history).pipe(
    Effect.provideService(Entropy.Entropy, Entropy.seeded(seed)),
  );

const workload: Crash.Workload<Label> = (disk, acknowledge) =>
  Effect.gen(function* () {
    yield* importing(1);
    yield* acknowledge({ _tag: "Imported" });
  }).pipe(Effect.provide(FaultDisk.layer(disk)));

/** What the crashes left, for the report. */
const outcomes = { absent: 0, empty: 0, store: 0, stagingLeft: 0, stagingKept: 0 };

/** DIR, alone in its parent: anything else there but a staging directory fails the check. */
const where = { parent, target: directory, others: ["data"] };

/** The store at DIR opens with exactly the imported records, under their sequences. */
const expectWholeStore = Effect.scoped(
  Effect.gen(function* () {
    const opened = yield* Store.open(directory, {}, Projection.collect);
    expect(opened.state.map((entry) => entry.sequence)).toEqual(
      history.events.map((_, index) => firstSequence + index),
    );
    expect(opened.state.map((entry) => entry.event)).toEqual(history.events);
    expect(opened.report.baseRecordCount).toBe(history.baseRecordCount);
  }),
);

/** The staging directories beside DIR. */
const stagingDirectories = (disk: FaultDisk.FaultDisk) =>
  Staging.stagingDirectories(disk, parent, directory, where.others);

const check: Crash.Check<Label> = (disk, acknowledged) =>
  Effect.gen(function* () {
    const { published, whole } = yield* Staging.crashedCopy(
      disk,
      where,
      acknowledged.length > 0,
      outcomes,
    );
    if (published) {
      yield* expectWholeStore;
      yield* CopyStaging.removeStale(directory);
    } else {
      // No repair: the same import again succeeds, and removes the staging directories left.
      yield* importing(2);
      yield* expectWholeStore;
    }
    // The cleaning removed every staging directory without CURRENT, and only those.
    const kept = yield* stagingDirectories(disk);
    expect(kept).toEqual(whole);
    outcomes.stagingKept += kept.length;
  }).pipe(Effect.provide(FaultDisk.layer(disk)));

describe("import crashes", () => {
  for (const [name, seed] of [
    ["DIR missing", (disk: FaultDisk.FaultDisk) => disk.seedDirectory(parent)],
    ["DIR an empty directory", (disk: FaultDisk.FaultDisk) => disk.seedDirectory(directory)],
  ] as const) {
    it.effect(`${name}: every cut point leaves DIR as it was or the whole store`, () =>
      Effect.gen(function* () {
        for (const key of Object.keys(outcomes) as Array<keyof typeof outcomes>) outcomes[key] = 0;
        const report = yield* exploreCrashModes(workload, check, {
          setup: (disk) => Effect.sync(() => seed(disk)),
          samplesPerCutPoint: 2,
        });
        expect(outcomes.store).toBeGreaterThan(0);
        expect(outcomes.stagingLeft).toBeGreaterThan(0);
        console.log(
          `import crash exploration (${name}): ${report.cutPoints} cut points, ${report.crashes} crashed disks: ${outcomes.store} with the whole store at DIR, ${outcomes.absent} DIR missing, ${outcomes.empty} DIR empty, ${outcomes.stagingLeft} with a staging directory left, ${outcomes.stagingKept} staging directories holding CURRENT kept by the cleaning`,
        );
      }),
    );
  }
});
