/**
 * The invariant every crash of an engine workload must keep: the store
 * reopens to the fold of a prefix of the decided transitions that holds
 * every acknowledged one, and takes new work; or it refuses with
 * `IncompleteTail` inside a record or footer of the active segment's
 * unacknowledged tail (a torn last write, which is refused, never
 * repaired), never at offset 0 or in a header, and never after a
 * compaction began; or init was never acknowledged.
 */
import { decodeCurrentPointer } from "@tay/codec";
import { Effect, Either } from "effect";
import * as E from "fp-ts/lib/Either.js";
import { expect } from "vitest";
import type * as Crash from "../../src/disk/Crash.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Layout from "../../src/store/Layout.js";
import {
  at,
  deterministic,
  directory,
  isDecidedPrefix,
  job,
  type Label,
  lastDone,
  type Replay,
  setTime,
} from "./engineWorkloads.js";

/** The highest segment file of the generation CURRENT names. */
const activeSegmentPath = (disk: FaultDisk.FaultDisk) =>
  Effect.gen(function* () {
    const current = decodeCurrentPointer(yield* disk.readFile(Layout.currentPath(directory)));
    if (E.isLeft(current)) return yield* Effect.dieMessage("CURRENT does not decode");
    const segments = Layout.segmentsPath(directory, current.right.epoch);
    const names = yield* disk.readDirectory(segments);
    const highest = names[names.length - 1];
    return highest === undefined ? undefined : `${segments}/${highest}`;
  });

/** What the crashes left, for the report. */
export interface Outcomes {
  opened: number;
  incompleteTail: number;
  tornHeader: number;
  notInitialized: number;
  stagedSegment: number;
}

export const noOutcomes = (): Outcomes => ({
  opened: 0,
  incompleteTail: 0,
  tornHeader: 0,
  notInitialized: 0,
  stagedSegment: 0,
});

/** Reopens the crashed store, reads its state and inserts one job. */
const reopen = Effect.scoped(
  Effect.gen(function* () {
    const engine = yield* Engine.open(directory, { rescueOnOpen: false, timers: false });
    const state = yield* engine.state();
    // The recovered store takes new work.
    yield* setTime(at(100_000));
    yield* engine.insert(job("after-crash"));
    return { state, report: engine.report };
  }),
);

/** The check of the crash harness for a workload replayed as `expected`. */
export const crashCheck =
  (expected: Replay, outcomes: Outcomes): Crash.Check<Label> =>
  (disk, acknowledged) =>
    deterministic(
      Effect.gen(function* () {
        // A macrotask turn per crash: a long exploration must not starve vitest's own messages.
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));
        const initialized = acknowledged.some((label) => label._tag === "Initialized");
        const compacting = acknowledged[acknowledged.length - 1]?._tag === "Compacting";
        const done = lastDone(acknowledged);
        const opened = yield* Effect.either(reopen);
        if (Either.isLeft(opened)) {
          const refusal = opened.left;
          if (
            !initialized &&
            ["StoreNotFound", "IncompleteInitialization"].includes(refusal._tag)
          ) {
            outcomes.notInitialized += 1;
            return;
          }
          // A torn tail is refused, never repaired; a compaction never tears the current generation.
          expect(refusal._tag, String(refusal)).toBe("IncompleteTail");
          expect(compacting).toBe(false);
          if (refusal._tag !== "IncompleteTail") return;
          expect(refusal.path).toBe(yield* activeSegmentPath(disk));
          if (refusal.part === "Header" || refusal.offset === 0) outcomes.tornHeader += 1;
          expect(refusal.part).not.toBe("Header");
          expect(refusal.offset).toBeGreaterThan(0);
          // Only unacknowledged bytes can be torn.
          expect(refusal.sequence).toBeGreaterThan(done.lastSequence);
          outcomes.incompleteTail += 1;
          return;
        }
        const { state, report } = opened.right;
        expect(report.lastSequence).toBeGreaterThanOrEqual(done.lastSequence);
        expect(isDecidedPrefix(expected, state, done.transitions)).toBe(true);
        outcomes.opened += 1;
        if (report.stagedSegment !== null) outcomes.stagedSegment += 1;
      }).pipe(Effect.provide(FaultDisk.layer(disk))),
    );
