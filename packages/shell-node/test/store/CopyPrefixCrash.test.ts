// Proves `tay copy-prefix` never leaves anything to repair at its target: cut before every
// mutating disk operation of CopyPrefix.copyPrefix (a source of five jobs, copied whole) and crashed (durable state only, torn unsynced writes, partially kept directory
// entries), the target is either as it was (missing, or an empty directory: at most a LOCK) or a
// whole store that folds to the source's state, and it is the whole store whenever the copy had
// returned; the source is never changed; beside the target there is at most a staging directory
// (`.data.tay-copy-<hex>`); and the same copy again then succeeds. Before 2026-12-03 the copy was
// written in place (init, then a compaction): a crash left an empty store at the target, which
// a retry refused as NotEmpty until the operator removed it.
import { describe, expect, it } from "@effect/vitest";
import { Generation, State } from "@tay/core";
import { Effect } from "effect";
import type * as Crash from "../../src/disk/Crash.js";
import * as Entropy from "../../src/disk/Entropy.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Projection from "../../src/log/Projection.js";
import * as CopyPrefix from "../../src/store/CopyPrefix.js";
import * as CopyStaging from "../../src/store/CopyStaging.js";
import * as Init from "../../src/store/Init.js";
import * as Recovery from "../../src/store/Recovery.js";
import { foldProjection } from "../../src/store/StateProjection.js";
import * as Store from "../../src/store/Store.js";
import * as Staging from "../support/staging.js";
import { exploreCrashModes, inserted } from "../support/store.js";

type Label = { readonly _tag: "Copied" };

const parent = "/srv";
const source = `${parent}/src`;
const target = `${parent}/data`;

/** The source: five jobs, written through the store. */
const makeSource = Effect.gen(function* () {
  yield* Init.init(source);
  yield* Effect.scoped(
    Effect.gen(function* () {
      const { store } = yield* Store.open(source, { durability: "Maximal" }, Projection.count);
      for (const jobId of [1, 2, 3, 4, 5]) yield* store.append([inserted(jobId, 30)]);
      yield* store.close();
    }),
  );
});

/** The state a read-only inspection of `directory` folds to. */
const stateOf = (directory: string) =>
  Effect.gen(function* () {
    const inspection = yield* Recovery.inspect(directory, {}, foldProjection);
    const state = Generation.finish(inspection.state);
    if (state._tag === "Left") return yield* Effect.dieMessage(`${directory} does not fold`);
    return state.right;
  });

const copying = (seed: number) =>
  CopyPrefix.copyPrefix(source, target).pipe(
    Effect.provideService(Entropy.Entropy, Entropy.seeded(seed)),
  );

const workload: Crash.Workload<Label> = (disk, acknowledge) =>
  Effect.gen(function* () {
    const report = yield* copying(1);
    expect(report.leftOut).toBeNull();
    yield* acknowledge({ _tag: "Copied" });
  }).pipe(Effect.provide(FaultDisk.layer(disk)));

/** What the crashes left, for the report. */
const outcomes: Staging.CopyOutcomes = { absent: 0, empty: 0, store: 0, stagingLeft: 0 };

/** The target, beside the source: anything else there but a staging directory fails the check. */
const where = { parent, target, others: ["data", "src"] };

/** The staging directories beside the target. */
const stagingDirectories = (disk: FaultDisk.FaultDisk) =>
  Staging.stagingDirectories(disk, parent, target, where.others);

const checkWith =
  (expected: { state: State.State | undefined }): Crash.Check<Label> =>
  (disk, acknowledged) =>
    Effect.gen(function* () {
      const sourceState = yield* stateOf(source);
      expected.state ??= sourceState;
      expect(State.equals(sourceState, expected.state)).toBe(true);
      const { published, whole } = yield* Staging.crashedCopy(
        disk,
        where,
        acknowledged.length > 0,
        outcomes,
      );
      // No repair: the same copy again succeeds.
      if (!published) yield* copying(2);
      expect(State.equals(yield* stateOf(target), sourceState)).toBe(true);
      yield* CopyStaging.removeStale(target);
      expect(yield* stagingDirectories(disk)).toEqual(whole);
    }).pipe(Effect.provide(FaultDisk.layer(disk)));

describe("copy-prefix crashes", () => {
  for (const [name, seedTarget] of [
    ["the target missing", (_disk: FaultDisk.FaultDisk) => undefined],
    ["the target an empty directory", (disk: FaultDisk.FaultDisk) => disk.seedDirectory(target)],
  ] as const) {
    it.effect(`${name}: every cut point leaves it as it was or the whole copy`, () =>
      Effect.gen(function* () {
        for (const key of Object.keys(outcomes) as Array<keyof typeof outcomes>) outcomes[key] = 0;
        const report = yield* exploreCrashModes(workload, checkWith({ state: undefined }), {
          setup: (disk) =>
            Effect.gen(function* () {
              disk.seedDirectory(parent);
              yield* Effect.provide(makeSource, FaultDisk.layer(disk));
              seedTarget(disk);
            }),
          samplesPerCutPoint: 2,
        });
        expect(outcomes.store).toBeGreaterThan(0);
        expect(outcomes.stagingLeft).toBeGreaterThan(0);
        console.log(
          `copy-prefix crash exploration (${name}): ${report.cutPoints} cut points, ${report.crashes} crashed disks: ${outcomes.store} with the whole copy at the target, ${outcomes.absent} target missing, ${outcomes.empty} target empty, ${outcomes.stagingLeft} with a staging directory left`,
        );
      }),
    );
  }
});
