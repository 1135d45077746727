/**
 * What a crash left beside a copy's target (`CopyStaging`): the staging
 * directories in its parent, each checked to be one by its name, whether
 * one holds CURRENT (a whole store, which the cleaning keeps), and whether
 * the copy was published at the target or left it as it was.
 */
import { expect } from "@effect/vitest";
import { Effect, Either } from "effect";
import type * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as CopyStaging from "../../src/store/CopyStaging.js";
import * as Layout from "../../src/store/Layout.js";

/** The staging directories beside `target` in `parent`; any other entry but `others` fails the check. */
export const stagingDirectories = (
  disk: FaultDisk.FaultDisk,
  parent: string,
  target: string,
  others: ReadonlyArray<string>,
) =>
  Effect.gen(function* () {
    const names = (yield* disk.readDirectory(parent)).filter((name) => !others.includes(name));
    for (const name of names) expect(CopyStaging.isStagingName(target, name)).toBe(true);
    return names;
  });

/** Whether the staging directory `name` in `parent` holds CURRENT (a whole store, kept by the cleaning). */
export const holdsCurrent = (disk: FaultDisk.FaultDisk, parent: string, name: string) =>
  Effect.map(disk.readDirectory(`${parent}/${name}`), (entries) =>
    entries.includes(Layout.currentName),
  );

/** What the crashes of a copy left, for a suite's report. */
export interface CopyOutcomes {
  /** Crashes after which the copy was published at the target. */
  store: number;
  /** Crashes after which the target was missing. */
  absent: number;
  /** Crashes after which the target was an empty directory (a LOCK at most). */
  empty: number;
  /** Crashes after which a staging directory was left beside the target. */
  stagingLeft: number;
}

/**
 * What a crash left of a copy into `target` (in `parent`, beside `others`):
 * counted in `outcomes`. The copy must be published at the target once it
 * was `acknowledged`; unpublished, the target must be as it was (missing,
 * or an empty directory: a LOCK at most). Returns whether it was
 * published, and the staging directories left that hold CURRENT.
 */
export const crashedCopy = (
  disk: FaultDisk.FaultDisk,
  where: {
    readonly parent: string;
    readonly target: string;
    readonly others: ReadonlyArray<string>;
  },
  acknowledged: boolean,
  outcomes: CopyOutcomes,
) =>
  Effect.gen(function* () {
    const { parent, target, others } = where;
    const left = yield* stagingDirectories(disk, parent, target, others);
    if (left.length > 0) outcomes.stagingLeft += 1;
    const whole: Array<string> = [];
    for (const name of left) if (yield* holdsCurrent(disk, parent, name)) whole.push(name);
    const entries = yield* Effect.either(disk.readDirectory(target));
    const published = Either.isRight(entries) && entries.right.includes(Layout.markerName);
    if (acknowledged) expect(published).toBe(true);
    if (published) outcomes.store += 1;
    else if (Either.isLeft(entries)) outcomes.absent += 1;
    else {
      // Nothing of the copy's at the target: an empty directory, a LOCK at most.
      expect(entries.right.filter((name) => name !== Layout.lockName)).toEqual([]);
      outcomes.empty += 1;
    }
    return { published, whole };
  });
